//! Mixed rigid/soft scenes: soft nodes against rigid shapes and soft nodes attached
//! to rigid links, in one NCP with the rigid rows. Every expectation comes from a balance of
//! forces or a conservation law, never from an earlier run.

use crate::scene_support;

use diffsoro::math::Vec3;
use diffsoro::scene::{RigidDynamics, RigidRow, Scene, SceneFile, State, Stepper};
use scene_support::{force_on_rigid, root, scene};

fn load(name: &str) -> Scene {
    Scene::load(&root().join("scenes").join(name), &[]).unwrap()
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
    // To round-off: 1e-12 m/s (rad/s) is 2e-11 of g·h, the speed one step of gravity gives;
    // each NCP is solved exactly (a warm start within the tolerance is polished), so no
    // error of the tolerance's size is carried from step to step.
    let v = &state.rigid[0].v;
    assert!(
        v.iter().all(|x| x.abs() < 1e-12),
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

/// Runs `gripper_lift.toml` (with `overrides`) and returns the cube's rise (m) at the end, the
/// palm's lift (m), the sum of the normal forces (N) the pads press on it and the sum of the
/// jaws' PD forces (N), both averaged over the last 50 steps (held up after the lift, or
/// slipped back). Every step's NCP converges.
fn grasp_and_lift(overrides: &[&str]) -> (f64, f64, f64, f64) {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let s = Scene::load(&root().join("scenes/gripper_lift.toml"), &overrides).unwrap();
    let cube = s.rigid.system("cube").unwrap();
    let mut state = s.initial_state();
    let z0 = state.rigid[cube].q[2];
    let mut stepper = Stepper::new(&s).unwrap();
    let steps = s.simulation.steps;
    let mut normal = 0.0;
    let mut squeeze = 0.0;
    let gripper = s.rigid.system("gripper").unwrap();
    for step in 0..steps {
        let report = stepper.step(&s, &mut state).unwrap();
        assert!(report.contact_converged, "step {step}");
        if step >= steps - 50 {
            // Each jaw's PD force kp (0.008 − q) − kd v (N): at rest it is what its pad
            // passes on to the cube.
            let (q, v) = (&state.rigid[gripper].q, &state.rigid[gripper].v);
            for j in [1, 2] {
                squeeze += (100.0 * (0.008 - q[j]) - 5.0 * v[j]) / 50.0;
            }
            let rigid = stepper.rigid();
            for (c, l) in rigid.contacts().iter().zip(rigid.lambda().chunks_exact(3)) {
                if let RigidRow::Point { side, .. } = c.row
                    && side.system == cube
                {
                    normal += l[2] / 50.0;
                }
            }
        }
    }
    let lift = state.rigid[gripper].q[0];
    (state.rigid[cube].q[2] - z0, lift, normal, squeeze)
}

#[test]
fn a_gripper_lifts_a_cube_when_friction_beats_its_weight_and_drops_it_below() {
    let s = load("gripper_lift.toml");
    let weight = free_mass(&s, s.rigid.system("cube").unwrap()) * 9.81;
    // μ = 0.5: the cube rises with the palm (the pads deform a little under its weight).
    let (rise, lift, normal, squeeze) = grasp_and_lift(&[]);
    assert!(lift > 0.045, "the palm rose {lift} m");
    // The pads pass the jaws' PD forces on to the cube (each jaw and pad at rest sideways),
    // and each jaw presses at most kp × (8 − 5) mm: the pads touch the cube at q = 5 mm.
    assert!(
        (normal - squeeze).abs() < 1e-3 * squeeze,
        "ΣN = {normal} N, the jaws push {squeeze} N"
    );
    assert!(normal < 2.0 * 100.0 * 0.003);
    assert!(
        (rise - lift).abs() < 1e-3,
        "the cube rose {rise} m with the palm's {lift} m"
    );
    // Held by friction alone (the normals are horizontal): μ must exceed W / ΣN.
    let threshold = weight / normal;
    eprintln!("W = {weight} N, ΣN = {normal} N, μ* = W/ΣN = {threshold}");
    assert!(threshold < 0.5, "ΣN = {normal} N, threshold {threshold}");
    // The bound docs/rigid.md and README state: each jaw presses at most kp × 3 mm, so
    // μ* ≥ W / (2 kp · 3 mm) = 0.132 / 0.6 ≈ 0.22.
    assert!(
        threshold >= weight / (2.0 * 100.0 * 0.003),
        "μ* = {threshold}"
    );
    // Just above the threshold it still rises; below it the cube slips out of the grasp.
    let above = format!("rigid_body.cube.friction={}", 1.3 * threshold);
    let (rise, lift, _, _) = grasp_and_lift(&[&above]);
    assert!(
        (rise - lift).abs() < 2e-3,
        "μ = 1.3 μ*: rose {rise} m of {lift} m"
    );
    let below = format!("rigid_body.cube.friction={}", 0.7 * threshold);
    let (rise, _, _, _) = grasp_and_lift(&[&below]);
    assert!(
        rise < 5e-3,
        "μ = 0.7 μ*: the cube rose {rise} m instead of slipping out"
    );
}

/// A forward run eliminates the attachment rows through the pads' factors without forming G
/// (`contact::AttachedReduction`); a run that keeps what derivatives read forms G and
/// eliminates them from it (`contact::BilateralElimination`). Two methods for one NCP, each
/// solved to 1e-12: the cube, the jaws and every pad node follow the same path within 1e-9 m
/// over the grasp and the lift, and the formed G is exactly symmetric at every step (the
/// solvers take it without a check: soft blocks and rigid term each computed in one triangle
/// and mirrored).
#[test]
fn attachments_eliminated_through_the_factors_or_from_g_give_the_same_lift() {
    let overrides = [
        "contact.tolerance=1e-12".to_string(),
        "contact.max_iterations=100000".to_string(),
    ];
    let s = Scene::load(&root().join("scenes/gripper_lift.toml"), &overrides).unwrap();
    let (mut a, mut b) = (s.initial_state(), s.initial_state());
    let mut forward = Stepper::new(&s).unwrap();
    let mut formed = Stepper::new(&s).unwrap();
    for i in 0..s.bodies.len() {
        formed.body_mut(i).keep_for_derivatives(true);
    }
    let mut reduced_groups = 0;
    for step in 0..400 {
        assert!(
            forward.step(&s, &mut a).unwrap().contact_converged,
            "step {step}"
        );
        assert!(
            formed.step(&s, &mut b).unwrap().contact_converged,
            "step {step}"
        );
        for g in forward.contact().groups() {
            assert!(
                !g.is_assembled() || !g.bilateral().iter().any(|&x| x),
                "step {step}"
            );
            reduced_groups += g.bilateral().iter().any(|&x| x) as usize;
        }
        for g in formed.contact().groups() {
            assert!(g.is_assembled());
            assert_eq!(g.delassus(), &g.delassus().transpose(), "step {step}");
        }
        for (ra, rb) in a.rigid.iter().zip(&b.rigid) {
            for (qa, qb) in ra.q.iter().zip(&rb.q) {
                assert!((qa - qb).abs() < 1e-9, "step {step}: q {qa} against {qb}");
            }
        }
        for (ba, bb) in a.bodies.iter().zip(&b.bodies) {
            for (xa, xb) in ba.positions.iter().zip(&bb.positions) {
                assert!(
                    (xa - xb).norm() < 1e-9,
                    "step {step}: node {xa} against {xb}"
                );
            }
        }
    }
    assert!(
        reduced_groups > 300,
        "{reduced_groups} steps with attachments"
    );
}

#[test]
fn the_lift_with_the_cube_as_a_stiff_soft_body_follows_the_same_path() {
    // A second method: the same cube as a soft body of E = 1 GPa (its deformation under
    // 0.6 N is of order 1e-8 m), touching the pads through soft–soft contacts (node against
    // triangle, both ways) and the floor as an obstacle, instead of rigid rows.
    let text = std::fs::read_to_string(root().join("scenes/gripper_lift.toml")).unwrap();
    let rigid_part = text.find("[[rigid_body]]").unwrap();
    let soft_cube = format!(
        "{}\n[[soft_body]]\nname = \"cube\"\nmesh = \"../meshes/cube30.msh\"\ntranslation = [0.0, 0.0, 0.015]\nlaw = \"corotational\"\nyoung_modulus = 1.0e9\npoisson_ratio = 0.3\ndensity = 500.0\n",
        &text[..rigid_part]
    )
    .replace("[contact]\n", "[contact]\nbetween_bodies = true\nmax_iterations = 20000\n");
    let rigid = load("gripper_lift.toml");
    let soft = scene(&soft_cube);
    let cube = soft.bodies.iter().position(|b| b.name() == "cube").unwrap();
    let masses = soft.bodies[cube].node_masses();
    let total: f64 = masses.iter().sum();
    assert!((total - free_mass(&rigid, 0)).abs() < 1e-12);
    let (mut a, mut b) = (rigid.initial_state(), soft.initial_state());
    let (mut sa, mut sb) = (Stepper::new(&rigid).unwrap(), Stepper::new(&soft).unwrap());
    let mut worst: f64 = 0.0;
    for step in 0..rigid.simulation.steps {
        assert!(
            sa.step(&rigid, &mut a).unwrap().contact_converged,
            "rigid, step {step}"
        );
        assert!(
            sb.step(&soft, &mut b).unwrap().contact_converged,
            "soft, step {step}"
        );
        let z_soft: f64 = b.bodies[cube]
            .positions
            .iter()
            .zip(masses)
            .map(|(x, m)| m * x.z)
            .sum::<f64>()
            / total;
        worst = worst.max((a.rigid[0].q[2] - z_soft).abs());
    }
    eprintln!("rigid vs stiff soft cube: heights differ by at most {worst} m");
    // Within 1 % of the 50 mm lift at every step.
    assert!(
        worst < 0.01 * 0.05,
        "the two cubes' heights differ by up to {worst} m"
    );
    assert!(a.rigid[0].q[2] > 0.06, "the rigid cube was not lifted");
}

#[test]
fn a_pad_pressed_on_a_table_by_the_arms_pd_carries_the_pd_force() {
    let s = load("soft_pad_on_arm.toml");
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    let mut report = None;
    for step in 0..s.simulation.steps {
        let r = stepper.step(&s, &mut state).unwrap();
        assert!(r.contact_converged, "step {step}");
        report = Some(r);
    }
    let (q, v) = (state.rigid[0].q[0], state.rigid[0].v[0]);
    assert!(v.abs() < 1e-8, "the arm still moves at {v} m/s");
    // Palm and pad at rest: the table's push balances their weights and the PD force.
    let m_pad: f64 = s.bodies[0].node_masses().iter().sum();
    let expected = (0.1 + m_pad) * 9.81 + 200.0 * (q - (-0.012));
    let table = report.unwrap().contact[0].obstacle_forces[0];
    assert!(
        (table.z - expected).abs() < 1e-6 * expected,
        "the table carries {} N, expected {expected} N",
        table.z
    );
    // Pressed: more than the weights, and the pad squeezed between 5 and 12 mm of travel.
    assert!(table.z > 1.5 * (0.1 + m_pad) * 9.81);
    assert!(q < -0.005 && q > -0.012, "arm at {q} m");
}

#[test]
fn the_pianists_finger_presses_the_key_until_spring_weight_and_push_balance() {
    let s = load("pianist.toml");
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    for step in 0..s.simulation.steps {
        let r = stepper.step(&s, &mut state).unwrap();
        assert!(r.contact_converged, "step {step}");
    }
    let (theta, omega) = (state.rigid[0].q[0], state.rigid[0].v[0]);
    // At rest to the contact solver's accuracy: the NCP is solved to 1e-10 m/s, so the
    // finger's contact point, ~40 mm from the hinge, may creep at 10 × that, ω ≲ 2.5e-8 rad/s
    // (a bound of 1e-9 rad/s was below that noise and passed on one solver's path only).
    let tolerance = s.contact.settings.tolerance;
    assert!(
        omega.abs() * 0.04 < 10.0 * tolerance,
        "the key still turns at {omega} rad/s"
    );
    // Moments about the hinge axis z through (−30, 21, 7.5) mm: the spring-damper, the key's
    // weight (20 g at 40 mm along the key) and the finger's push through the contact rows.
    let hinge = Vec3::new(-0.03, 0.021, 0.0075);
    let spring = 0.2 * (0.0 - theta) - 0.002 * omega;
    let weight = 0.04 * theta.cos() * 0.02 * 9.81;
    let rigid = stepper.rigid();
    let mut push = 0.0;
    for (c, l) in rigid.contacts().iter().zip(rigid.lambda().chunks_exact(3)) {
        if let RigidRow::Point {
            point, frame, sign, ..
        } = c.row
        {
            push += (point - hinge)
                .cross(&(sign * frame * Vec3::new(l[0], l[1], l[2])))
                .z;
        }
    }
    assert!(
        push < 0.0,
        "the finger does not push the key up (moment {push} N·m)"
    );
    assert!(
        (spring + weight + push).abs() < 1e-6 * spring.abs(),
        "spring {spring} + weight {weight} + push {push} N·m do not balance"
    );
    // Pressed: the key turned up, past where its weight alone holds it (θ = m g d / kp > 0).
    assert!(theta < 0.0, "the key is at {theta} rad");
}

#[test]
fn a_rigid_corner_pressing_between_soft_nodes_is_held_by_the_face() {
    // A 20 mm cube turned corner-down (its diagonal (1, 1, 1) along −z) moving down at
    // 0.3 m/s, in zero gravity, onto the block's top face, whose nodes lie on a 10 mm grid:
    // the corner arrives at (5, 5) mm, in the middle of a cell, touching no node. The face's
    // triangles under it must hold it (a corner row), so it never sinks below the lowest of
    // the four nodes around it by more than the contacts' tolerance.
    let axis = Vec3::new(-1.0, 1.0, 0.0).normalize() * (-1.0f64 / 3.0f64.sqrt()).acos();
    let s = scene(&format!(
        r#"
[simulation]
dt = 0.001
gravity = [0.0, 0.0, 0.0]

[[soft_body]]
name = "block"
mesh = "../meshes/soft_block.msh"
law = "neo_hookean"
young_modulus = 1.0e5
poisson_ratio = 0.3
density = 1000.0
fixed_box = [[-1.0, -1.0, -0.001], [1.0, 1.0, 0.001]]

[[rigid_body]]
name = "cube"
shape = "box"
half_extents = [0.01, 0.01, 0.01]
density = 1000.0
position = [0.005, 0.005, {z}]
rotation = [{ax}, {ay}, 0.0]
velocity = [0.0, 0.0, -0.3]
"#,
        z = 0.02 + 0.01 * 3.0f64.sqrt() + 0.0005,
        ax = axis.x,
        ay = axis.y,
    ));
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    let around: Vec<usize> = s.bodies[0]
        .rest_positions()
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            p.z > 0.019 && (0.0..=0.0101).contains(&p.x) && (0.0..=0.0101).contains(&p.y)
        })
        .map(|(n, _)| n)
        .collect();
    assert_eq!(around.len(), 4);
    let mut lowest_gap = f64::INFINITY;
    let mut pressed = false;
    for step in 0..60 {
        let report = stepper.step(&s, &mut state).unwrap();
        assert!(report.contact_converged, "step {step}");
        let q = &state.rigid[0].q;
        let r = nalgebra::UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(
            q[6], q[3], q[4], q[5],
        ));
        let corner = Vec3::new(q[0], q[1], q[2]) + r * Vec3::new(0.01, 0.01, 0.01);
        let floor = around
            .iter()
            .map(|&n| state.bodies[0].positions[n].z)
            .fold(f64::INFINITY, f64::min);
        lowest_gap = lowest_gap.min(corner.z - floor);
        pressed |= floor < 0.02 - 1e-4;
    }
    assert!(pressed, "the corner never pressed the face");
    assert!(
        lowest_gap > -1e-4,
        "the corner sank {} m below the face's nodes",
        -lowest_gap
    );
}

/// Runs `scene` to rest (its own steps) and returns (horn angle, horn torque, tip x).
fn servo_rest(s: &Scene) -> (f64, f64, f64) {
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(s).unwrap();
    for step in 0..s.simulation.steps {
        assert!(
            stepper.step(s, &mut state).unwrap().contact_converged,
            "step {step}"
        );
    }
    // At rest to the NCP's tolerance (1e-10 m/s on the attachment rows, 10 mm from the axis).
    let v = state.rigid[0].v[0];
    assert!(v.abs() < 1e-7, "the horn still turns at {v} rad/s");
    let tip = s.body_actuation(0).effectors[0]
        .point
        .position(&state.bodies[0].positions);
    (state.rigid[0].q[0], state.rigid[0].tau[0], tip.x)
}

#[test]
fn a_servo_as_a_joint_agrees_by_torque_and_by_angle_and_with_the_pinned_horn() {
    let text = std::fs::read_to_string(root().join("scenes/servo_joint_finger.toml"))
        .unwrap()
        .replace("steps = 200", "steps = 500");
    // Angle drive: a PD towards −0.02 rad (its torque stays below the 0.18 N·m limit).
    let by_angle = scene(&text.replace("target = [-0.2]", "target = [-0.02]"));
    let (theta, tau, tip) = servo_rest(&by_angle);
    assert!(
        theta < 0.0 && tau < 0.0 && tau.abs() < 0.18,
        "θ {theta} rad, τ {tau} N·m"
    );
    // The PD's torque at rest is its law at the final angle.
    assert!((tau - 2.0 * (-0.02 - theta)).abs() < 1e-9);
    // Torque drive with that torque: the same equilibrium, the horn turned the same way.
    let pd_lines = "kp = [2.0]                        # N·m/rad\nkd = [0.02]                       # N·m·s/rad\ntarget = [-0.2]                   # rad: closes the finger, as gripper.toml's angle −0.2\n";
    assert!(text.contains(pd_lines));
    let by_torque = scene(&text.replace(pd_lines, &format!("torque = [{tau:e}]\n")));
    let (theta_t, tau_t, tip_t) = servo_rest(&by_torque);
    assert_eq!(tau_t, tau);
    assert!(
        (theta_t - theta).abs() < 1e-6 * theta.abs(),
        "by torque {theta_t} rad, by angle {theta} rad"
    );
    assert!((tip_t - tip).abs() < 1e-9);
    // A second method: the SoftRobots servo of gripper.toml, its horn nodes pinned to the
    // horn's rigid rotation at that angle, holds it with the same reaction torque.
    let pinned = Scene::load(
        &root().join("scenes/gripper.toml"),
        &[
            format!("soft_body.finger.servo.servo.angle={theta:e}"),
            "soft_body.finger.rayleigh_mass=1.0".into(),
            "simulation.steps=500".into(),
        ],
    )
    .unwrap();
    let mut state = pinned.initial_state();
    let mut stepper = Stepper::new(&pinned).unwrap();
    for _ in 0..pinned.simulation.steps {
        stepper.step(&pinned, &mut state).unwrap();
    }
    let reaction = state.actuator_forces[0][0];
    assert!(
        (reaction - tau).abs() < 1e-3 * tau.abs(),
        "pinned horn: {reaction} N·m, joint: {tau} N·m"
    );
}
