//! Contact between two soft bodies (`[contact] between_bodies = true`): the surface nodes of
//! each body against the other's surface triangles, both bodies in one NCP whose Delassus
//! matrix sums each body's term from its own factorisation.
//!
//! - A soft cube resting on a larger soft cube on the floor: the lower cube pushes the upper
//!   one up with exactly its weight (1e-6), the floor carries both weights, and no node of
//!   the upper cube is inside the lower one (checked by a second method: the signed distance to
//!   the lower cube's deformed boundary as a closed mesh obstacle).
//! - A cube thrown at a resting one in zero gravity: the total linear momentum Σ m v is
//!   conserved through the collision to round-off (the contact impulses on the node and on the
//!   triangle's barycentric point are equal and opposite; the elastic forces sum to zero), the
//!   resting cube is set moving and neither passes into the other; without contact between the
//!   bodies the thrown cube passes into the other one (so the checks can fail).
//! - The servo gripper as two bodies (scenes/gripper_closing.toml) against the same run as one
//!   body with self-contact (scenes/gripper_touching.toml, whose mesh holds both fingers in
//!   the same node order): a second method with one factorisation instead of two; the two
//!   trajectories agree to the NCP tolerance.

use std::path::Path;

use diffsoro::contact::Obstacle;
use diffsoro::fem::{MassKind, SoftBody, SoftBodyOptions};
use diffsoro::material::{Law, Material};
use diffsoro::math::Vec3;
use diffsoro::mesh::{Mesh, TriangleSurface, box_mesh};
use diffsoro::scene::{ContactSection, Scene, SceneContact, SimulationSection, State, Stepper};

const G: f64 = 9.81;

fn cube(name: &str, cells: usize, min: [f64; 3], side: f64, rayleigh_mass: f64) -> SoftBody {
    let mesh = box_mesh(
        [cells; 3],
        min,
        [min[0] + side, min[1] + side, min[2] + side],
    )
    .unwrap();
    let n = mesh.node_count();
    let options = SoftBodyOptions {
        material: Material::new(Law::NeoHookean, 1e5, 0.3).unwrap(),
        density: 1000.0,
        mass: MassKind::Lumped,
        rayleigh_mass,
        rayleigh_stiffness: 0.0,
        fixed: vec![false; n],
    };
    SoftBody::new(name, mesh, options).unwrap()
}

fn scene(bodies: Vec<SoftBody>, obstacles: Vec<Obstacle>, gravity: f64, between: bool) -> Scene {
    let friction = vec![0.5; obstacles.len()];
    Scene {
        rigid: Default::default(),
        contact: SceneContact {
            names: Vec::new(),
            obstacles,
            friction,
            settings: ContactSection {
                between_bodies: between,
                tolerance: 1e-11,
                max_iterations: 20_000,
                ..ContactSection::default()
            },
            ..SceneContact::default()
        },
        ..Scene::new(
            SimulationSection {
                dt: 0.01,
                steps: 0,
                gravity: [0.0, 0.0, -gravity],
                newton_iterations: 1,
            },
            bodies,
        )
    }
}

/// The smallest signed distance (m, negative inside) of the nodes of body `a` to the deformed
/// boundary of body `b` of `scene` at `state`, by parry's point projection on the closed
/// surface (not the node-against-triangle detector that produced the forces).
fn deepest_into(scene: &Scene, state: &State, a: usize, b: usize) -> f64 {
    let mesh: &Mesh = scene.bodies[b].mesh();
    let surface = TriangleSurface::new(
        "other",
        state.bodies[b].positions.clone(),
        mesh.boundary_triangles(),
    )
    .unwrap();
    let obstacle = Obstacle::mesh("other", surface).unwrap();
    state.bodies[a]
        .positions
        .iter()
        .map(|p| obstacle.closest(p).gap)
        .fold(f64::INFINITY, f64::min)
}

fn momentum(scene: &Scene, state: &State) -> Vec3 {
    scene
        .bodies
        .iter()
        .zip(&state.bodies)
        .map(|(b, s)| {
            b.node_masses()
                .iter()
                .zip(&s.velocities)
                .map(|(m, v)| *m * v)
                .sum::<Vec3>()
        })
        .sum()
}

/// A 20 mm cube (2³ cells) resting on a cube of `cells`³ 10 mm cells on the floor z = 0, its
/// lower corner at (dx, dy): returns the two bodies' contact outcomes after 300 steps, the
/// number of contacts between them, and the deepest penetration of the upper cube's nodes
/// into the lower cube over the run.
fn stacked(cells: usize, dx: f64, dy: f64) -> ([diffsoro::scene::ContactOutcome; 2], usize, f64) {
    let side = 0.01 * cells as f64;
    let lower = cube("lower", cells, [0.0, 0.0, 0.0], side, 20.0);
    let upper = cube("upper", 2, [dx, dy, side], 0.02, 20.0);
    let floor = Obstacle::plane(Vec3::zeros(), Vec3::z()).unwrap();
    let scene = scene(vec![lower, upper], vec![floor], G, true);
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    let mut deepest = f64::INFINITY;
    let mut report = None;
    for s in 0..300 {
        let r = stepper.step(&scene, &mut state).unwrap();
        assert!(r.contact_converged, "step {s}: {:?}", r.contact);
        deepest = deepest.min(deepest_into(&scene, &state, 1, 0));
        report = Some(r);
    }
    let report = report.unwrap();
    assert_eq!(state.contacts, report.active_contacts);
    let [a, b]: [_; 2] = report.contact.try_into().unwrap();
    // Candidates between the bodies: those solved and those that carried nothing (left out of
    // the NCP and checked, scene::step::contact::screen).
    let between =
        stepper.contact().body_contacts().len() + stepper.contact().deferred_between_bodies();
    ([a, b], between, deepest)
}

/// The lower cube pushes the upper one up with exactly its weight, the floor carries both,
/// and no node of the upper cube enters the lower one: for a 30 mm lower cube with the upper
/// one offset so that its bottom nodes project inside the lower cube's top triangles and the
/// other way round (offsets of 5.3 and 4.1 mm stay off every edge and diagonal: 9 + 4
/// contacts), and for two identical 20 mm meshes stacked node on node (every contact point
/// on a vertex: 9 + 9 contacts).
#[test]
fn a_cube_resting_on_another_is_held_up_by_exactly_its_weight() {
    for (cells, dx, dy, expected) in [(3, 0.0053, 0.0041, 13), (2, 0.0, 0.0, 18)] {
        let ([on_lower, on_upper], between, deepest) = stacked(cells, dx, dy);
        eprintln!("{on_lower:?}\n{on_upper:?}\ndeepest {deepest:e} m");
        assert_eq!(between, expected);
        let m_lower = 1000.0 * (0.01 * cells as f64).powi(3);
        let m_upper = 1000.0 * 0.02f64.powi(3);
        let weight_upper = Vec3::new(0.0, 0.0, m_upper * G);
        let tol = 1e-6 * m_upper * G;
        assert!(
            (on_upper.body_forces[0] - weight_upper).norm() < tol,
            "lower on upper {:?}",
            on_upper.body_forces[0]
        );
        // Action and reaction, and the floor carries both cubes.
        assert!((on_lower.body_forces[1] + weight_upper).norm() < tol);
        let total = Vec3::new(0.0, 0.0, (m_lower + m_upper) * G);
        assert!((on_lower.obstacle_forces[0] - total).norm() < 1e-6 * total.z);
        assert!(on_upper.obstacle_forces[0].norm() == 0.0);
        assert!(on_upper.body_forces[1].norm() == 0.0);
        // Penetrations stay of the order h·tol/(1 − K_p) (flat faces): 1e-9 m is 5e-8 of the
        // cube.
        assert!(
            deepest > -1e-9,
            "a node is {deepest} m inside the lower cube"
        );
    }
}

/// Two 20 mm cubes in zero gravity, the left one thrown at 0.5 m/s along +x at the right one,
/// offset in y and z so that nodes project inside the facing triangles.
fn collision(between: bool) -> (Scene, Vec<State>) {
    let left = cube("left", 2, [0.0, 0.0, 0.0], 0.02, 0.0);
    let right = cube("right", 2, [0.0205, 0.0041, 0.0053], 0.02, 0.0);
    let scene = scene(vec![left, right], Vec::new(), 0.0, between);
    let mut state = scene.initial_state();
    for v in &mut state.bodies[0].velocities {
        *v = Vec3::new(0.5, 0.0, 0.0);
    }
    let mut stepper = Stepper::new(&scene).unwrap();
    let mut states = vec![state.clone()];
    for s in 0..12 {
        let r = stepper.step(&scene, &mut state).unwrap();
        assert!(r.contact_converged, "step {s}: {:?}", r.contact);
        states.push(state.clone());
    }
    (scene, states)
}

#[test]
fn colliding_cubes_conserve_momentum_and_do_not_pass_through_each_other() {
    let (scene, states) = collision(true);
    let p0 = momentum(&scene, &states[0]);
    assert!((p0.x - 0.5 * 1000.0 * 0.02f64.powi(3)).abs() < 1e-15);
    let mut touched = 0;
    let mut deepest = f64::INFINITY;
    for (s, state) in states.iter().enumerate() {
        let p = momentum(&scene, state);
        assert!(
            (p - p0).norm() < 1e-12 * p0.norm(),
            "step {s}: {p:?} vs {p0:?}"
        );
        touched += state.contacts;
        deepest = deepest
            .min(deepest_into(&scene, state, 0, 1))
            .min(deepest_into(&scene, state, 1, 0));
    }
    let last = states.last().unwrap();
    let v_right: Vec3 = last.bodies[1].velocities.iter().sum::<Vec3>() / 27.0;
    eprintln!("contacts {touched}, deepest {deepest:e} m, right cube's mean velocity {v_right:?}");
    assert!(touched > 0, "the cubes never touched");
    // The resting cube is pushed along +x (a fully inelastic contact would give 0.25 m/s).
    assert!(v_right.x > 0.1, "{v_right:?}");
    // 0.5 m/s over a 10 ms step moves 5 mm; penetration stays below 1e-6 of that.
    assert!(
        deepest > -5e-9,
        "a node is {deepest} m inside the other cube"
    );

    // Without contact the thrown cube flies through the other one (60 mm in 12 steps).
    let (scene, states) = collision(false);
    let deepest = states
        .iter()
        .map(|s| deepest_into(&scene, s, 0, 1))
        .fold(f64::INFINITY, f64::min);
    assert!(
        states.iter().all(|s| s.contacts == 0) && deepest < -3e-3,
        "{deepest}"
    );
}

fn run(path: &str, overrides: &[String]) -> (Scene, Vec<State>) {
    let scene = Scene::load(Path::new(path), overrides).unwrap();
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    let mut states = Vec::new();
    for s in 0..scene.simulation.steps {
        let r = stepper.step(&scene, &mut state).unwrap();
        assert!(r.contact_converged, "{path} step {s}");
        states.push(state.clone());
    }
    (scene, states)
}

#[test]
fn two_finger_bodies_move_as_the_one_body_with_self_contact() {
    let (two, by_bodies) = run("scenes/gripper_closing.toml", &[]);
    let (_, by_self) = run("scenes/gripper_touching.toml", &[]);
    let n = two.bodies[0].node_count();
    assert_eq!(two.bodies.len(), 2);
    assert_eq!(by_self[0].bodies[0].positions.len(), 2 * n);
    let mut worst: f64 = 0.0;
    let mut touched = 0;
    for (a, b) in by_bodies.iter().zip(&by_self) {
        assert_eq!(a.contacts, b.contacts, "step {}", a.steps);
        touched += a.contacts;
        let x: Vec<Vec3> = a.bodies[0]
            .positions
            .iter()
            .chain(&a.bodies[1].positions)
            .copied()
            .collect();
        for (p, q) in x.iter().zip(&b.bodies[0].positions) {
            worst = worst.max((p - q).norm());
        }
    }
    eprintln!("{touched} contacts over the run, largest position difference {worst:e} m");
    assert!(touched > 0);
    // Each wall travels about 10 mm; the NCPs are solved to 1e-10 (m/s, N) and the two
    // methods differ in the order of their floating-point operations only.
    assert!(worst < 1e-9, "{worst}");
    // Without contact between the bodies the walls pass into each other.
    let (two, free) = run(
        "scenes/gripper_closing.toml",
        &["contact.between_bodies=false".to_string()],
    );
    let last = free.last().unwrap();
    assert_eq!(last.contacts, 0);
    assert!(deepest_into(&two, last, 0, 1) < -1e-3);
}
