//! Mixed rigid/soft scenes (issue 19): soft nodes against rigid shapes and soft nodes attached
//! to rigid links, in one NCP with the rigid rows. Every expectation comes from a balance of
//! forces or a conservation law, never from an earlier run.

use std::path::Path;

use diffsoro::math::Vec3;
use diffsoro::scene::{RigidDynamics, RigidRow, Scene, SceneFile, State, Stepper};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn scene(text: &str) -> Scene {
    let file = SceneFile::parse("test.toml", text, &[]).unwrap();
    file.validate().unwrap();
    Scene::build(&file, &root().join("scenes")).unwrap()
}

fn load(name: &str) -> Scene {
    Scene::load(&root().join("scenes").join(name), &[]).unwrap()
}

/// Σ over the rigid stage's soft–rigid rows of the force the soft nodes exert on the rigid
/// body (N, world): each row's rigid part is −frameᵀ v(p), so its impulse on the body is
/// −frame λ.
fn force_on_rigid(stepper: &Stepper) -> Vec3 {
    let rigid = stepper.rigid();
    let mut f = Vec3::zeros();
    for (c, l) in rigid.contacts().iter().zip(rigid.lambda().chunks_exact(3)) {
        if let RigidRow::Point { frame, sign, .. } = c.row {
            f += sign * frame * Vec3::new(l[0], l[1], l[2]);
        }
    }
    f
}

fn free_mass(scene: &Scene, s: usize) -> f64 {
    match &scene.rigid.systems[s].dynamics {
        RigidDynamics::Free(body) => body.mass,
        RigidDynamics::Robot(_) => panic!("a free body"),
    }
}

#[test]
fn a_rigid_cube_resting_on_a_soft_block_is_carried_by_it() {
    let s = load("cube_on_block.toml");
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    let mut report = None;
    for _ in 0..400 {
        report = Some(stepper.step(&s, &mut state).unwrap());
        assert!(report.as_ref().unwrap().contact_converged);
    }
    let report = report.unwrap();
    let g = 9.81;
    let m_cube = free_mass(&s, 0);
    assert!((m_cube - 0.025f64.powi(3) * 1000.0).abs() < 1e-15);
    // At rest (v⁺ = v = 0 in M v⁺ = M v_free + h Jᵀλ), the block's push balances the weight.
    let v = &state.rigid[0].v;
    assert!(
        v.iter().all(|x| x.abs() < 1e-8),
        "the cube still moves: {v:?}"
    );
    let f = force_on_rigid(&stepper);
    assert!(
        (f.z - m_cube * g).abs() < 1e-6 * m_cube * g,
        "the block carries {} N of the cube's {} N",
        f.z,
        m_cube * g
    );
    assert!(f.x.abs() < 1e-6 * m_cube * g && f.y.abs() < 1e-6 * m_cube * g);
    // And the floor carries the block and the cube.
    let m_block: f64 = s.bodies[0].node_masses().iter().sum();
    let floor = report.contact[0].obstacle_forces[0];
    let weight = (m_block + m_cube) * g;
    assert!(
        (floor.z - weight).abs() < 1e-6 * weight,
        "the floor carries {} N of {weight} N",
        floor.z
    );
    // The cube rests on the block's compressed top face: sunk, but by less than a millimetre.
    let z = state.rigid[0].q[2];
    assert!(z < 0.0325 && z > 0.0315, "cube centre at {z} m");
}

/// Total linear momentum (kg·m/s): the soft nodes' lumped masses and the free bodies'.
fn momentum(scene: &Scene, state: &State) -> Vec3 {
    let mut p = Vec3::zeros();
    for (body, bs) in scene.bodies.iter().zip(&state.bodies) {
        for (m, v) in body.node_masses().iter().zip(&bs.velocities) {
            p += *m * v;
        }
    }
    for s in 0..scene.rigid.systems.len() {
        let v = &state.rigid[s].v;
        p += free_mass(scene, s) * Vec3::new(v[0], v[1], v[2]);
    }
    p
}

#[test]
fn a_rigid_cube_striking_a_free_soft_block_keeps_the_momentum_and_never_passes_through() {
    // Zero gravity, no mass-proportional damping (αM v would take momentum away): the only
    // external force is none, so Σ m v is constant; the contact impulses are equal and
    // opposite, and 1ᵀA = 1ᵀM for the soft step (1ᵀK = 0).
    let s = scene(
        r#"
[simulation]
dt = 0.002
gravity = [0.0, 0.0, 0.0]

[contact]
friction = 0.3

[[soft_body]]
name = "block"
mesh = "../meshes/soft_block.msh"
law = "neo_hookean"
young_modulus = 1.0e5
poisson_ratio = 0.3
density = 1000.0
rayleigh_stiffness = 0.005

[[rigid_body]]
name = "cube"
shape = "box"
half_extents = [0.015, 0.015, 0.015]
density = 500.0
position = [-0.04, 0.001, 0.011]
velocity = [0.5, 0.0, 0.0]
angular_velocity = [0.0, 0.0, 0.0]
"#,
    );
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    let p0 = momentum(&s, &state);
    assert!((p0.x - 0.5 * free_mass(&s, 0)).abs() < 1e-15);
    let mut touched = 0;
    for step in 0..100 {
        let report = stepper.step(&s, &mut state).unwrap();
        assert!(report.contact_converged, "step {step}");
        touched += usize::from(report.active_contacts > 0);
        let p = momentum(&s, &state);
        assert!(
            (p - p0).norm() <= 1e-9 * p0.norm(),
            "step {step}: momentum {p:?} vs {p0:?}"
        );
        // No block node inside the cube by more than the correction's tolerance (0.1 mm).
        let q = &state.rigid[0].q;
        let (c, face) = (Vec3::new(q[0], q[1], q[2]), q[0] + 0.015);
        for x in &state.bodies[0].positions {
            let inside = (x - c).abs().max() < 0.015;
            assert!(
                !inside || x.x > face - 1e-4,
                "step {step}: node {x:?} in the cube at {c:?}"
            );
        }
    }
    assert!(touched > 0, "the cube never hit the block");
    // The impact passed momentum to the block.
    assert!(
        state.rigid[0].v[0] < 0.4,
        "the cube kept {} m/s",
        state.rigid[0].v[0]
    );
    // After the impact the cube is slower than the block's centre of mass (they separated or
    // move together), and it moved forward less than the block.
    let m_block: f64 = s.bodies[0].node_masses().iter().sum();
    let block_p =
        momentum(&s, &state) - free_mass(&s, 0) * Vec3::new(state.rigid[0].v[0], 0.0, 0.0);
    assert!(state.rigid[0].v[0] <= block_p.x / m_block + 1e-9);
}

#[test]
fn a_pad_attached_to_a_lifted_palm_follows_it_and_the_palm_carries_its_weight() {
    let s = load("lift_pad.toml");
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    for step in 0..400 {
        let report = stepper.step(&s, &mut state).unwrap();
        assert!(report.contact_converged, "step {step}");
    }
    let g = 9.81;
    let m_pad: f64 = s.bodies[0].node_masses().iter().sum();
    assert!((m_pad - 0.04 * 0.04 * 0.02 * 1000.0).abs() < 1e-12);
    // At rest the PD force kp (0 − q) holds palm and pad: q = −(m_palm + m_pad) g / kp.
    let (q, v) = (state.rigid[0].q[0], state.rigid[0].v[0]);
    let expected = -(0.1 + m_pad) * g / 200.0;
    assert!(v.abs() < 1e-8, "the palm still moves at {v} m/s");
    assert!(
        (q - expected).abs() < 1e-6 * expected.abs(),
        "palm at {q} m, expected {expected} m"
    );
    // The attached nodes sit where the palm carries them: rest position + q along z.
    let x0 = s.bodies[0].rest_positions();
    for (n, (x, r)) in state.bodies[0].positions.iter().zip(x0).enumerate() {
        if r.z > 0.019 {
            let target = r + Vec3::new(0.0, 0.0, q);
            assert!(
                (x - target).norm() < 1e-9,
                "node {n} at {x:?}, anchor {target:?}"
            );
        }
    }
    // And the pad's weight reaches the palm through the attachment rows.
    let f = force_on_rigid(&stepper);
    assert!(
        (f.z + m_pad * g).abs() < 1e-6 * m_pad * g,
        "the pad pulls the palm with {} N, its weight is {} N",
        f.z,
        m_pad * g
    );
}

#[test]
fn attachment_errors_name_the_entry_and_key() {
    let base = r#"
[simulation]
dt = 0.005

[[soft_body]]
name = "pad"
mesh = "../meshes/soft_block.msh"
law = "neo_hookean"
young_modulus = 1.0e5
poisson_ratio = 0.3
density = 1000.0

[[robot]]
name = "lift"
urdf = "../urdf/lift.urdf"
base = "fixed"
position = [0.0, 0.0, 0.025]
"#;
    let err = |attachment: &str| {
        let text = format!("{base}\n[[attachment]]\n{attachment}");
        match SceneFile::parse("test.toml", &text, &[]) {
            Err(e) => e.to_string(),
            Ok(file) => match file.validate() {
                Err(e) => e.to_string(),
                Ok(()) => Scene::build(&file, &root().join("scenes"))
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_default(),
            },
        }
    };
    let e = err(
        "soft_body = \"pad\"\nbox = [[-1, -1, 0.019], [1, 1, 1]]\nrobot = \"lift\"\nlink = \"hand\"",
    );
    assert!(
        e.contains("attachment[0].link") && e.contains("hand"),
        "{e}"
    );
    let e = err(
        "soft_body = \"pads\"\nbox = [[-1, -1, 0.019], [1, 1, 1]]\nrobot = \"lift\"\nlink = \"palm\"",
    );
    assert!(
        e.contains("attachment[0].soft_body") && e.contains("pads"),
        "{e}"
    );
    let e = err("soft_body = \"pad\"\nrobot = \"lift\"\nlink = \"palm\"");
    assert!(e.contains("attachment[0].group"), "{e}");
    let e = err(
        "soft_body = \"pad\"\nbox = [[-1, -1, 0.5], [1, 1, 1]]\nrobot = \"lift\"\nlink = \"palm\"",
    );
    assert!(
        e.contains("attachment[0].box") && e.contains("no node"),
        "{e}"
    );
    let e = err("soft_body = \"pad\"\nbox = [[-1, -1, 0.019], [1, 1, 1]]\nrobot = \"lift\"");
    assert!(e.contains("attachment[0].link"), "{e}");
    let e = err("soft_body = \"pad\"\nbox = [[-1, -1, 0.019], [1, 1, 1]]\nrigid_body = \"cube\"");
    assert!(
        e.contains("attachment[0].rigid_body") && e.contains("cube"),
        "{e}"
    );
    let e = err(
        "soft_body = \"pad\"\nbox = [[-1, -1, 0.019], [1, 1, 1]]\nrobot = \"lift\"\nlink = \"palm\"\nspring = 3",
    );
    assert!(e.contains("spring"), "{e}");
}
