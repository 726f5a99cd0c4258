//! Derivatives of steps with frictional contact against central finite differences of the
//! forward simulator (1e-6 relative, docs/derivatives.md), in configurations whose contact modes do
//! not switch inside the difference interval: sticking on a plane and on a sphere, sliding
//! with breaking contacts, over one and several steps; JVP/VJP adjointness with contact.
//!
//! Every block starts with its bottom nodes 0.1 mm into the obstacle, so their gaps stay
//! negative through the finite-difference perturbations (≤ 1e-6 m): the penetration
//! correction's kink at Φ = 0 is not crossed.

use crate::diff_support;

use diff_support::{
    check_adjoint_against_forward, check_adjointness, check_jvp_against_fd_from, finite_difference,
    parameters,
};
use diffsoro::contact::Obstacle;
use diffsoro::diff::{InputTangent, Recorder, StateTangent, StepDerivative};
use diffsoro::fem::{MassKind, SoftBody, SoftBodyOptions};
use diffsoro::material::{Law, Material};
use diffsoro::math::Vec3;
use diffsoro::mesh::{TriangleSurface, box_mesh};
use diffsoro::scene::{ContactSection, Scene, SceneContact, SimulationSection, State, Stepper};

const SIDE: f64 = 0.02;
const SINK: f64 = 1e-4;

/// A 20 mm soft cube (2×2×2 cells) above `obstacles` with friction `mu`, NCP solved to 1e-13.
fn block(law: Law, obstacles: Vec<Obstacle>, mu: f64) -> Scene {
    let mesh = box_mesh([2, 2, 2], [0.0; 3], [SIDE; 3]).unwrap();
    let n = mesh.node_count();
    let body = SoftBody::new(
        "block",
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
    .unwrap();
    let friction = vec![mu; obstacles.len()];
    Scene {
        rigid: Default::default(),
        contact: SceneContact {
            names: Vec::new(),
            obstacles,
            friction,
            settings: ContactSection {
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
            vec![body],
        )
    }
}

/// The block's rest state shifted down by `SINK` and moving with `velocity`.
fn sunk(scene: &Scene, velocity: Vec3) -> State {
    let mut state = scene.initial_state();
    let body = &mut state.bodies[0];
    for x in &mut body.positions {
        x.z -= SINK;
    }
    body.velocities.fill(velocity);
    state
}

/// (detected, active) contacts of one step from `state`.
fn contact_counts(scene: &Scene, state: &State) -> (usize, usize) {
    let mut s = state.clone();
    let report = Stepper::new(scene).unwrap().step(scene, &mut s).unwrap();
    assert!(report.contact_converged, "NCP did not converge");
    (report.contact[0].detected, report.contact[0].active)
}

const PARAMS: [&str; 2] = ["young_modulus:block", "poisson_ratio:block"];

fn floor() -> Obstacle {
    Obstacle::plane(Vec3::zeros(), Vec3::z()).unwrap()
}

#[test]
fn sticking_on_a_plane() {
    for law in [Law::Corotational, Law::NeoHookean] {
        let scene = block(law, vec![floor()], 0.9);
        let start = sunk(&scene, Vec3::zeros());
        assert_eq!(contact_counts(&scene, &start), (9, 9));
        check_jvp_against_fd_from(&scene, &PARAMS, &start, 1, 1e-3);
        check_jvp_against_fd_from(&scene, &PARAMS, &start, 5, 1e-3);
    }
}

/// Bottom nodes slide on the floor (lateral 0.1 m/s, μ = 0.2); a ceiling 0.5 mm above the
/// top face detects the top nodes, which carry no force (breaking).
#[test]
fn sliding_with_breaking_contacts() {
    let ceiling = Obstacle::plane(Vec3::new(0.0, 0.0, SIDE - SINK + 5e-4), -Vec3::z()).unwrap();
    let mut scene = block(Law::StVK, vec![floor(), ceiling], 0.2);
    // The breaking contacts stay in the NCP (screening would leave them out, λ = 0 either way).
    scene.contact.settings.screen = false;
    let start = sunk(&scene, Vec3::new(0.1, 0.0, 0.0));
    assert_eq!(contact_counts(&scene, &start), (18, 9));
    check_jvp_against_fd_from(&scene, &PARAMS, &start, 1, 1e-3);
    check_jvp_against_fd_from(&scene, &PARAMS, &start, 3, 1e-3);
}

/// Sticking on a sphere (radius 0.1 m) under the block's centre: curved contact normals.
#[test]
fn sticking_on_a_sphere() {
    let r = 0.1;
    let sphere = Obstacle::sphere(Vec3::new(SIDE / 2.0, SIDE / 2.0, -r), r).unwrap();
    let scene = block(Law::Corotational, vec![sphere], 0.9);
    let start = sunk(&scene, Vec3::zeros());
    let (detected, active) = contact_counts(&scene, &start);
    assert!(detected > 0 && active > 0, "{detected} {active}");
    check_jvp_against_fd_from(&scene, &PARAMS, &start, 1, 1e-3);
}

/// ⟨w, J u⟩ = ⟨Jᵀ w, u⟩ with sticking, sliding and breaking contacts.
#[test]
fn jvp_and_vjp_are_adjoint_with_contact() {
    let ceiling = Obstacle::plane(Vec3::new(0.0, 0.0, SIDE - SINK + 5e-4), -Vec3::z()).unwrap();
    let mut scene = block(Law::NeoHookean, vec![floor(), ceiling], 0.2);
    scene.contact.settings.screen = false;
    let params = parameters(&scene, &PARAMS);
    let mut state = sunk(&scene, Vec3::new(0.1, 0.0, 0.0));
    let mut recorder = Recorder::new(&scene).unwrap();
    let (_, record) = recorder.step(&scene, &mut state).unwrap();
    assert_eq!(record.bodies[0].contacts(), 18);
    check_adjointness(&scene, &record, &params, 5);
}

/// The adjoint gradient of a scalar loss after 8 sliding steps equals the forward-mode one.
#[test]
fn adjoint_equals_forward_mode_with_contact() {
    let scene = block(Law::Corotational, vec![floor()], 0.2);
    let params = parameters(&scene, &PARAMS);
    let start = sunk(&scene, Vec3::new(0.2, 0.0, 0.0));
    check_adjoint_against_forward(&scene, &start, 8, &params, 13);
}

/// Node-vs-triangle: sticking on a closed triangle-mesh slab (the boundary of a box mesh,
/// 0.1 m wide), then on a capsule lying under the block (curved normals).
#[test]
fn sticking_on_a_triangle_mesh_and_a_capsule() {
    let slab = box_mesh([1, 1, 1], [-0.05, -0.05, -0.02], [0.07, 0.07, 0.0]).unwrap();
    let surface =
        TriangleSurface::new("slab", slab.positions().to_vec(), slab.boundary_triangles()).unwrap();
    let scene = block(
        Law::NeoHookean,
        vec![Obstacle::mesh("slab", surface).unwrap()],
        0.9,
    );
    let start = sunk(&scene, Vec3::zeros());
    assert_eq!(contact_counts(&scene, &start), (9, 9));
    check_jvp_against_fd_from(&scene, &PARAMS, &start, 3, 1e-3);

    let r = 0.05;
    let capsule = Obstacle::capsule(
        Vec3::new(-0.05, SIDE / 2.0, -r),
        Vec3::new(0.07, SIDE / 2.0, -r),
        r,
    )
    .unwrap();
    let scene = block(Law::StVK, vec![capsule], 0.9);
    let start = sunk(&scene, Vec3::zeros());
    let (detected, active) = contact_counts(&scene, &start);
    assert!(detected > 0 && active > 0, "{detected} {active}");
    check_jvp_against_fd_from(&scene, &PARAMS, &start, 1, 1e-3);
}

/// The Finger of scenes/finger_obstacle.toml, its cable pulled, pressing on the STL block:
/// after 60 steps of pressing, one step's derivatives (x, v, E, ν, the cable) against finite
/// differences, with the NCP solved to 1e-13. After 60 steps the finger rests on the block
/// with its contacts exactly at Φ = 0 (to 1e-16 m), the kink of the penetration correction,
/// where the derivative is one-sided and a central difference averages both sides; so, as
/// the other tests here sink their blocks, the free nodes are moved 0.2 mm further into the
/// block (toward +y) before the checked step. The finite differences step E by ±0.15 %
/// (ε = 3e-4): on this coarse finger the step is not smooth over ±1.5 % (ε = 3e-3: JVP vs FD
/// 4e-2, as across a change of the contact set), ε = 1e-3 gives 1.06e-6, on the 1e-6 bound,
/// and ε = 1e-4 passes as 3e-4 does.
#[test]
fn finger_pressing_an_obstacle() {
    let mut scene = Scene::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/finger_obstacle.toml"),
        &[],
    )
    .unwrap();
    scene.contact.settings.tolerance = 1e-13;
    scene.contact.settings.max_iterations = 100_000;
    let mut start = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    for _ in 0..60 {
        stepper.step(&scene, &mut start).unwrap();
    }
    for (n, x) in start.bodies[0].positions.iter_mut().enumerate() {
        if !scene.bodies[0].is_fixed(n) {
            x.y += 2e-4;
        }
    }
    let (detected, active) = contact_counts(&scene, &start);
    assert!(active > 0, "{detected} detected, {active} active");
    check_jvp_against_fd_from(
        &scene,
        &[
            "young_modulus:finger",
            "poisson_ratio:finger",
            "actuator:cable",
        ],
        &start,
        1,
        3e-4,
    );
}
/// Eight steps of a block sliding on the floor at 0.2 m/s (μ = 0.2: it decelerates by
/// ≈ 2 m/s² and still slides at ≈ 0.04 m/s at the end), sunk 2 mm at the start so the decaying
/// penetration (a fifth removed per step) stays far from Φ = 0 relative to the perturbations.
#[test]
fn several_sliding_steps() {
    let mut scene = block(Law::NeoHookean, vec![floor()], 0.2);
    // Several NCP solves accumulate their residual noise: solve to round-off.
    scene.contact.settings.tolerance = 1e-15;
    scene.contact.settings.max_iterations = 200_000;
    let mut start = sunk(&scene, Vec3::new(0.2, 0.0, 0.0));
    for x in &mut start.bodies[0].positions {
        x.z -= 2e-3 - SINK;
    }
    check_jvp_against_fd_from(&scene, &PARAMS, &start, 8, 1e-3);
}

/// The derivatives with respect to the obstacles' friction coefficients: the floor's
/// (`friction:obstacle0`), on which the bottom nodes slide (μ moves their forces along the
/// cone), against central differences over one and three steps, with E; adjointness; the
/// adjoint over eight sliding steps against forward mode. The ceiling's
/// (`friction:obstacle1`), whose contacts break, and the floor's under a block sticking to
/// it (inside its cones) move nothing to first order: their JVP is exactly zero and the
/// finite difference is the NCP's residual noise, below 1e-6 of the sliding case's.
#[test]
fn friction_coefficient_derivatives() {
    let ceiling = Obstacle::plane(Vec3::new(0.0, 0.0, SIDE - SINK + 5e-4), -Vec3::z()).unwrap();
    let mut scene = block(Law::NeoHookean, vec![floor(), ceiling], 0.2);
    scene.contact.settings.screen = false;
    let start = sunk(&scene, Vec3::new(0.1, 0.0, 0.0));
    let names = ["young_modulus:block", "friction:obstacle0"];
    check_jvp_against_fd_from(&scene, &names, &start, 1, 1e-3);
    check_jvp_against_fd_from(&scene, &names, &start, 3, 1e-3);
    let all = [
        "young_modulus:block",
        "friction:obstacle0",
        "friction:obstacle1",
    ];
    let params = parameters(&scene, &all);
    let mut state = start.clone();
    let mut recorder = Recorder::new(&scene).unwrap();
    let (_, record) = recorder.step(&scene, &mut state).unwrap();
    check_adjointness(&scene, &record, &params, 9);
    let single = block(Law::Corotational, vec![floor()], 0.2);
    let floor_mu = parameters(&single, &["friction:obstacle0"]);
    check_adjoint_against_forward(
        &single,
        &sunk(&single, Vec3::new(0.2, 0.0, 0.0)),
        8,
        &floor_mu,
        3,
    );
    // One step's derivative along a unit change of μ: (JVP, finite difference).
    let along_mu = |scene: &Scene, start: &State, name: &str| {
        let params = parameters(scene, &[name]);
        let dir = InputTangent {
            state: StateTangent::zeros(scene),
            parameters: vec![1.0],
        };
        let mut state = start.clone();
        let mut recorder = Recorder::new(scene).unwrap();
        let (_, record) = recorder.step(scene, &mut state).unwrap();
        let jvp = StepDerivative::new(scene)
            .jvp(scene, &record, &params, std::slice::from_ref(&dir))
            .unwrap()
            .remove(0)
            .to_vec();
        let fd = finite_difference(scene, start, 1, &params, &dir, 1e-3);
        (jvp, fd)
    };
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let (sliding, _) = along_mu(&scene, &start, "friction:obstacle0");
    let sticking = block(Law::Corotational, vec![floor()], 0.9);
    for (what, (jvp, fd)) in [
        ("breaking", along_mu(&scene, &start, "friction:obstacle1")),
        (
            "sticking",
            along_mu(
                &sticking,
                &sunk(&sticking, Vec3::zeros()),
                "friction:obstacle0",
            ),
        ),
    ] {
        assert!(
            jvp.iter().all(|x| *x == 0.0),
            "{what}: |jvp| = {:e}",
            norm(&jvp)
        );
        assert!(
            norm(&fd) < 1e-6 * norm(&sliding),
            "{what}: |fd| = {:e}, sliding |jvp| = {:e}",
            norm(&fd),
            norm(&sliding)
        );
    }
}
