//! Contact-force control (paper 004 Eq. 17) against the constant-maximum-actuation heuristic
//! (the direction of the paper's Table I): on the servo Gripper closing on the cylinder of
//! `scenes/gripper_grasp.toml` (two bodies, two angle-driven servos) and on the cable Finger
//! closing on the block of `scenes/finger_obstacle.toml`, the optimised strategy ends with a
//! smaller weighted loss and lower contact forces than the heuristic, keeping every input
//! within its bounds and every change within the per-step maximum.

use std::path::Path;

use diffsoro::control::{ControlOptions, ForceLimiting, QpSettings, default_qp_solver, grasp};
use diffsoro::math::Vec3;
use diffsoro::scene::Scene;

#[test]
fn optimised_grasp_beats_the_maximal_actuation_heuristic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The cable's bound, stated (control takes bounds from the scene only): 3 N, the
    // heuristic's constant tension.
    let scene = Scene::load(
        &root.join("scenes/finger_obstacle.toml"),
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
    let mut solver = default_qp_solver(QpSettings::default());
    let steps = 150;
    let opt = grasp(
        &scene,
        &[("tip", origin)],
        steps,
        options,
        Some(weights),
        solver.as_mut(),
    )
    .unwrap();
    let heur = grasp(
        &scene,
        &[("tip", origin)],
        steps,
        options,
        None,
        solver.as_mut(),
    )
    .unwrap();
    // The heuristic presses: contact forces appear.
    assert!(*heur.contact_force.last().unwrap() > 0.05);
    let (lo, lh) = (
        opt.final_loss(weights.alpha, weights.beta),
        heur.final_loss(weights.alpha, weights.beta),
    );
    assert!(lo < lh, "optimised loss {lo:e} ≥ heuristic {lh:e}");
    assert!(
        opt.contact_force.last().unwrap() < heur.contact_force.last().unwrap(),
        "contact forces: optimised {:?} vs heuristic {:?}",
        opt.contact_force.last(),
        heur.contact_force.last()
    );
    // Bounds at every step: a cable pulls (λ ≥ 0), at most the cap, changes ≤ max_change.
    for (s, a) in opt.actuation.iter().enumerate() {
        assert!(a[0] >= 0.0 && a[0] <= 3.0 + 1e-9, "step {s}: {}", a[0]);
        if s > 0 {
            assert!(
                (a[0] - opt.actuation[s - 1][0]).abs() <= 0.05 + 1e-9,
                "step {s}: change {}",
                a[0] - opt.actuation[s - 1][0]
            );
        }
    }
    assert!(heur.actuation.iter().all(|a| (a[0] - 3.0).abs() < 1e-12));
}

/// The Gripper: both fingertips driven toward the middle of the gripper (x = 50 mm, at the
/// tips' height) while limiting both fingers' contact forces on the cylinder, the actuation
/// being the two servos' angle targets (rad), bounded by [−0.35, 0] (the scene's angle is the
/// maximal closing) and changing by at most 4 mrad per step (below the servos' 5 mrad per
/// step). The heuristic commands −0.35 rad all along and presses on the object.
#[test]
fn gripper_optimised_grasp_beats_the_maximal_closing_heuristic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scene = Scene::load(&root.join("scenes/gripper_grasp.toml"), &[]).unwrap();
    let origin = Vec3::new(0.05, 0.0575, 0.01);
    let effectors = [("tip", origin), ("tip_right", origin)];
    let options = ControlOptions {
        max_change: 0.004,
        regularisation: 1e-3,
    };
    let weights = ForceLimiting {
        alpha: 1.0,
        beta: 1e-4,
        regularisation: 1e-6,
    };
    let mut solver = default_qp_solver(QpSettings::default());
    let steps = scene.simulation.steps;
    let opt = grasp(
        &scene,
        &effectors,
        steps,
        options,
        Some(weights),
        solver.as_mut(),
    )
    .unwrap();
    let heur = grasp(&scene, &effectors, steps, options, None, solver.as_mut()).unwrap();
    // Both strategies reach the object: the contact forces are positive at some step.
    assert!(*heur.contact_force.last().unwrap() > 1.0);
    assert!(opt.contact_force.iter().any(|f| *f > 0.0));
    let (lo, lh) = (
        opt.final_loss(weights.alpha, weights.beta),
        heur.final_loss(weights.alpha, weights.beta),
    );
    assert!(lo < lh, "optimised loss {lo:e} ≥ heuristic {lh:e}");
    assert!(
        opt.contact_force.last().unwrap() < heur.contact_force.last().unwrap(),
        "contact forces: optimised {:?} vs heuristic {:?}",
        opt.contact_force.last(),
        heur.contact_force.last()
    );
    // The optimised fingers closed (the α term moved them), within the bounds and the
    // per-step change.
    for (s, a) in opt.actuation.iter().enumerate() {
        for (i, t) in a.iter().enumerate() {
            assert!((-0.35 - 1e-12..=1e-12).contains(t), "step {s}: {t}");
            if s > 0 {
                let d = t - opt.actuation[s - 1][i];
                assert!(d.abs() <= 0.004 + 1e-9, "step {s}: change {d}");
            }
        }
    }
    assert!(opt.actuation.last().unwrap().iter().all(|t| *t < -0.05));
    assert!(
        heur.actuation
            .iter()
            .all(|a| a.iter().all(|t| (t + 0.35).abs() < 1e-12))
    );
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
