//! Contact-force control (paper 004 Eq. 17) against the constant-maximum-actuation heuristic
//! (the direction of the paper's Table I): with a rigid object in the scene, the cable Finger
//! pressing the hinged piano key of `scenes/pianist.toml` (soft and rigid in one NCP, through
//! the mixed step derivatives; the Gripper's and the cable Finger's grasps are the examples
//! `gripper_grasp` and `grasp_forces`, run by `tests/examples_run.rs`), the optimised strategy ends with a
//! smaller weighted loss and lower contact forces than the heuristic, keeping every input
//! within its bounds and every change within the per-step maximum.

use std::path::Path;

use diffsoro::control::{
    ControlOptions, ForceLimiting, GraspReport, QpSettings, default_qp_solver, grasp,
};
use diffsoro::math::Vec3;
use diffsoro::scene::Scene;

/// Runs the optimised strategy (`weights`) and the heuristic (constant inputs) on `scene`
/// for `steps` steps toward `targets`, and checks what every comparison of this file checks:
/// the optimised run ends with a smaller weighted loss and a smaller contact force than the
/// heuristic, and its every input stays in `[lo, hi]` (the bounds with the caller's
/// round-off allowance) and changes by at most
/// `options.max_change` per step. Returns (optimised, heuristic).
fn compare_with_heuristic(
    scene: &Scene,
    targets: &[(&str, Vec3)],
    steps: usize,
    options: ControlOptions,
    weights: ForceLimiting,
    [lo, hi]: [f64; 2],
) -> (GraspReport, GraspReport) {
    let mut solver = default_qp_solver(QpSettings::default());
    let opt = grasp(
        scene,
        targets,
        steps,
        options,
        Some(weights),
        solver.as_mut(),
    )
    .unwrap();
    let heur = grasp(scene, targets, steps, options, None, solver.as_mut()).unwrap();
    let (lo_loss, heur_loss) = (
        opt.final_loss(weights.alpha, weights.beta),
        heur.final_loss(weights.alpha, weights.beta),
    );
    assert!(
        lo_loss < heur_loss,
        "optimised loss {lo_loss:e} ≥ heuristic {heur_loss:e}"
    );
    assert!(
        opt.contact_force.last().unwrap() < heur.contact_force.last().unwrap(),
        "contact forces: optimised {:?} vs heuristic {:?}",
        opt.contact_force.last(),
        heur.contact_force.last()
    );
    for (s, a) in opt.actuation.iter().enumerate() {
        for (i, t) in a.iter().enumerate() {
            assert!((lo..=hi).contains(t), "step {s}: {t}");
            if s > 0 {
                let d = t - opt.actuation[s - 1][i];
                assert!(d.abs() <= options.max_change + 1e-9, "step {s}: change {d}");
            }
        }
    }
    (opt, heur)
}

/// The cable Finger of `file` (a scene of `scenes/`) with its tip driven 10 mm past the
/// object (+y) and its contact forces limited, against a constant 3 N (the cable's bound,
/// stated: control takes bounds from the scene only), over `steps` steps: the comparison of
/// [`compare_with_heuristic`], the heuristic's contact force above `pressing` (N) at the end
/// and its tension 3 N throughout.
fn cable_finger_beats_the_maximal_tension(file: &str, steps: usize, pressing: f64) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scene = Scene::load(
        &root.join("scenes").join(file),
        &["soft_body.finger.cable.cable.max_force=3".to_string()],
    )
    .unwrap();
    let tip = scene.body_actuation(0).effectors[0]
        .point
        .position(scene.bodies[0].rest_positions());
    let origin = tip + Vec3::new(0.0, 0.010, 0.0);
    let options = ControlOptions {
        max_change: 0.05,
        regularisation: 1e-3,
    };
    let weights = ForceLimiting {
        alpha: 1.0,
        beta: 1e-2,
        regularisation: 1e-4,
    };
    let (_, heur) = compare_with_heuristic(
        &scene,
        &[("tip", origin)],
        steps,
        options,
        weights,
        [0.0, 3.0 + 1e-9],
    );
    // The heuristic presses: contact forces appear.
    let last = *heur.contact_force.last().unwrap();
    assert!(
        last > pressing,
        "{file}: heuristic's final contact force {last}"
    );
    assert!(heur.actuation.iter().all(|a| (a[0] - 3.0).abs() < 1e-12));
}

/// With a rigid object: the Finger presses the key of `pianist.toml`, hinged on a revolute
/// joint with a torsion spring (soft and rigid rows in one NCP). (The cable Finger on the block
/// of `finger_obstacle.toml` and the servo Gripper on its cylinder are the examples
/// `grasp_forces` and `gripper_grasp`, checked the same way by `tests/examples_run.rs`.)
#[test]
fn the_pianist_presses_the_key_with_less_force_than_the_heuristic() {
    cable_finger_beats_the_maximal_tension("pianist.toml", 100, 0.01);
}

/// With β = 0 the Eq. 17 form is effector tracking, and it drives angle-driven servos: both
/// tips of `scenes/gripper.toml` reach where a run with known servo angles (−0.12 and −0.18
/// rad, held) put them (≈ 1.6 mm of travel) in 150 steps, to 1e-8 m: the known angles are
/// recovered.
#[test]
fn tracking_with_angle_driven_servos_reaches_a_simulated_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("scenes/gripper.toml");
    let steps = 150;
    let known = Scene::load(
        &path,
        &[
            "soft_body.finger.servo.servo.angle=-0.12".into(),
            "soft_body.finger_right.servo.servo_right.angle=-0.18".into(),
        ],
    )
    .unwrap();
    let mut state = known.initial_state();
    let mut stepper = diffsoro::scene::Stepper::new(&known).unwrap();
    for _ in 0..steps {
        stepper.step(&known, &mut state).unwrap();
    }
    let targets: Vec<Vec3> = (0..2)
        .map(|b| {
            known.body_actuation(b).effectors[0]
                .point
                .position(&state.bodies[b].positions)
        })
        .collect();
    let scene = Scene::load(&path, &[]).unwrap();
    let rest: Vec<Vec3> = (0..2)
        .map(|b| {
            scene.body_actuation(b).effectors[0]
                .point
                .position(scene.bodies[b].rest_positions())
        })
        .collect();
    let travel = (targets[0] - rest[0])
        .norm()
        .min((targets[1] - rest[1]).norm());
    assert!(
        travel > 1e-3,
        "targets {targets:?} too close to rest {rest:?}"
    );
    let options = ControlOptions {
        max_change: 0.01,
        regularisation: 1e-3,
    };
    let weights = ForceLimiting {
        alpha: 1.0,
        beta: 0.0,
        regularisation: 1e-6,
    };
    let mut solver = default_qp_solver(QpSettings::default());
    let run = grasp(
        &scene,
        &[("tip", targets[0]), ("tip_right", targets[1])],
        steps,
        options,
        Some(weights),
        solver.as_mut(),
    )
    .unwrap();
    let last = run.effector_distance.last().copied().unwrap();
    eprintln!(
        "travel {travel:e} m, final distance {last:e} m, final angles {:?}",
        run.actuation.last().unwrap()
    );
    assert!(last < 1e-8, "{last}");
    // Within the servos' range [scene angle, 0] at every step.
    for row in &run.actuation {
        assert!(row.iter().all(|a| (-0.2..=0.0).contains(a)), "{row:?}");
    }
}
