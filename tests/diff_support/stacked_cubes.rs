//! Two soft cubes stacked on the floor, shared by the contact derivative tests: a 30 mm cube
//! (3³ cells) on the floor z = 0 and a 20 mm cube (2³ cells) resting on it, offset by
//! (5.3, 4.1) mm so that nodes of each project inside the other's facing triangles away from
//! every edge and diagonal, both sunk `SINK` so that no gap crosses the penetration
//! correction's kink under finite-difference perturbations. As two bodies
//! ([`two_bodies`], contact between bodies) or as ONE body of both meshes ([`one_body`],
//! self-contact).

use diffsoro::contact::Obstacle;
use diffsoro::fem::{MassKind, SoftBody, SoftBodyOptions};
use diffsoro::material::{Law, Material};
use diffsoro::math::Vec3;
use diffsoro::mesh::{Mesh, box_mesh};
use diffsoro::scene::{ContactSection, Scene, SceneContact, SimulationSection, State};

/// How far (m) the upper cube starts inside the lower one, and both inside the floor.
pub const SINK: f64 = 1e-4;
/// Side of the lower cube (m).
pub const LOWER: f64 = 0.03;
/// Side of the upper cube (m).
pub const UPPER: f64 = 0.02;

/// The lower and the upper cube's meshes.
pub fn meshes() -> (Mesh, Mesh) {
    let lower = box_mesh([3, 3, 3], [0.0; 3], [LOWER; 3]).unwrap();
    let lo = Vec3::new(0.0053, 0.0041, LOWER - SINK);
    let upper = box_mesh([2, 2, 2], lo.into(), (lo + Vec3::repeat(UPPER)).into()).unwrap();
    (lower, upper)
}

/// A soft body of `mesh` (E = 100 kPa, ν = 0.3, 1000 kg/m³, lumped, Rayleigh α = 1).
pub fn body(name: &str, mesh: Mesh, law: Law) -> SoftBody {
    let n = mesh.node_count();
    SoftBody::new(
        name,
        mesh,
        SoftBodyOptions {
            material: Material::new(law, 1e5, 0.3).unwrap(),
            density: 1000.0,
            mass: MassKind::Lumped,
            rayleigh_mass: 1.0,
            rayleigh_stiffness: 0.0,
            fixed: vec![false; n],
        },
    )
    .unwrap()
}

/// `bodies` on the floor z = 0 (friction `mu_floor`); the bodies touch each other (and
/// themselves, with `self_contact`) with friction `mu`; NCP solved to 1e-13.
pub fn scene(bodies: Vec<SoftBody>, mu_floor: f64, mu: f64, self_contact: bool) -> Scene {
    Scene {
        rigid: Default::default(),
        contact: SceneContact {
            names: Vec::new(),
            obstacles: vec![Obstacle::plane(Vec3::zeros(), Vec3::z()).unwrap()],
            friction: vec![mu_floor],
            settings: ContactSection {
                friction: mu,
                self_contact,
                between_bodies: !self_contact,
                tolerance: 1e-13,
                max_iterations: 50_000,
                ..ContactSection::default()
            },
            ..SceneContact::default()
        },
        ..Scene::new(
            SimulationSection {
                dt: 0.01,
                steps: 0,
                gravity: [0.0, 0.0, -9.81],
                newton_iterations: 1,
            },
            bodies,
        )
    }
}

/// The two cubes as two bodies.
pub fn two_bodies(law: Law, mu_floor: f64, mu: f64) -> Scene {
    let (lower, upper) = meshes();
    scene(
        vec![body("lower", lower, law), body("upper", upper, law)],
        mu_floor,
        mu,
        false,
    )
}

/// The two cubes as one body (one mesh, lower cube's nodes first) with self-contact.
pub fn one_body(law: Law, mu_floor: f64, mu: f64) -> Scene {
    let (a, b) = meshes();
    let n = a.node_count();
    let mut x = a.positions().to_vec();
    x.extend_from_slice(b.positions());
    let mut tets = a.tetrahedra().to_vec();
    tets.extend(b.tetrahedra().iter().map(|t| t.map(|i| i + n)));
    let mesh = Mesh::new(x, tets, Vec::new(), Default::default()).unwrap();
    scene(vec![body("stack", mesh, law)], mu_floor, mu, true)
}

/// The rest state sunk `SINK` into the floor, the last body's last `moving` nodes moving with
/// `velocity`.
pub fn start(scene: &Scene, moving: usize, velocity: Vec3) -> State {
    let mut state = scene.initial_state();
    for b in &mut state.bodies {
        for x in &mut b.positions {
            x.z -= SINK;
        }
    }
    let last = state.bodies.last_mut().unwrap();
    let n = last.velocities.len();
    last.velocities[n - moving..].fill(velocity);
    state
}

/// Nodes of the upper cube (2³ cells): the last nodes of the one-body mesh.
pub const UPPER_NODES: usize = 27;
