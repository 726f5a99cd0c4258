//! The programs of `examples/` run by a test, each against the claim its documentation makes
//! (docs/calibration.md, docs/control.md, docs/speed.md): every example is compiled into this
//! binary as a module (its `main` unused here) and its `run` called with a scratch folder for
//! its outputs, which are read back and checked. The numbers checked are the examples' inputs
//! (a calibration's true values, a control target, a bound) or derived apart from the run
//! (the two strategies of a grasp compared by their own histories). `rigid_loop` and
//! `rigid_dynamics_report` are not here: they are timing and comparison tools driven by
//! command-line arguments (`benches/pinocchio_reference.cpp`, `urdf/check_with_pinocchio.py`),
//! and the library functions they call have tests of their own.

use std::path::Path;

use serde_json::Value;

use crate::cli_support::scratch;

// Both calibration examples include `examples/common/calibration_demo.rs` as a module of
// their own, so it is compiled twice here.
#[path = "../examples/calibrate_beam.rs"]
#[allow(dead_code, clippy::duplicate_mod)] // `main`
mod calibrate_beam;
#[path = "../examples/calibrate_beam_contact.rs"]
#[allow(dead_code, clippy::duplicate_mod)]
mod calibrate_beam_contact;
#[path = "../examples/contact_inverse_dynamics.rs"]
#[allow(dead_code)]
mod contact_inverse_dynamics;
#[path = "../examples/factor_reuse.rs"]
#[allow(dead_code)]
mod factor_reuse;
#[path = "../examples/finger_press.rs"]
#[allow(dead_code)]
mod finger_press;
#[path = "../examples/grasp_forces.rs"]
#[allow(dead_code)]
mod grasp_forces;
#[path = "../examples/gripper_grasp.rs"]
#[allow(dead_code)]
mod gripper_grasp;
#[path = "../examples/rigid_initial_velocity.rs"]
#[allow(dead_code)]
mod rigid_initial_velocity;
#[path = "../examples/trunk_targets.rs"]
#[allow(dead_code)]
mod trunk_targets;

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The rows of a CSV file with a header line, as numbers.
fn read_csv(path: &Path) -> Vec<Vec<f64>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect()
}

/// A calibration case's parameters: (name, true value, initial guess).
type Params = [(&'static str, f64, f64)];

/// Every case's `calibration.json` in `out/CASE/`: converged, each parameter at its true
/// value (the one the observation was simulated with) to 1e-6 relative.
fn assert_cases_recovered(out: &Path, cases: &[(&str, &Params)]) {
    for (name, params) in cases {
        let report = read_json(&out.join(name).join("calibration.json"));
        assert_eq!(report["converged"], true, "{name}: {report}");
        for (param, truth, guess) in params.iter() {
            let fitted = report["params"][param].as_f64().unwrap();
            let error = ((fitted - truth) / truth).abs();
            assert!(
                error <= 1e-6,
                "{name}: {param} from {guess} fitted {fitted}, true {truth}"
            );
        }
        assert!(out.join(name).join("observed.json").is_file());
    }
}

/// The cantilever's E from 3× too small, ν from 0.3 and both, each recovered.
#[test]
fn calibrate_beam_recovers_its_true_values() {
    let out = scratch("calibrate-beam");
    calibrate_beam::run(&out).unwrap();
    let cases = calibrate_beam::cases();
    let cases: Vec<_> = cases.iter().map(|c| (c.name, c.params)).collect();
    assert_cases_recovered(&out, &cases);
}

/// The beam on its supports (frictional contact in every step): the same, from E 3× too large.
#[test]
fn calibrate_beam_contact_recovers_its_true_values() {
    let out = scratch("calibrate-beam-contact");
    calibrate_beam_contact::run(&out).unwrap();
    let cases = calibrate_beam_contact::cases();
    let cases: Vec<_> = cases.iter().map(|c| (c.name, c.params)).collect();
    assert_cases_recovered(&out, &cases);
}

/// The Trunk reaches each of its three targets (static poses of admissible tensions, so
/// reachable) to 0.01 mm by the end of its steps, the cables within their 0.3 N bound.
#[test]
fn trunk_targets_reaches_each_target() {
    let out = scratch("trunk-targets");
    trunk_targets::run(&out).unwrap();
    let report = read_json(&out.join("control.json"));
    let errors = report["error_history"].as_array().unwrap();
    let n = trunk_targets::STEPS_PER_TARGET;
    assert_eq!(errors.len(), n * trunk_targets::TARGETS.len());
    for k in 0..trunk_targets::TARGETS.len() {
        let e = errors[(k + 1) * n - 1].as_f64().unwrap();
        assert!(e < 1e-5, "target {k}: error {e} m after {n} steps");
    }
    for a in report["actuation_history"].as_array().unwrap() {
        for t in a.as_array().unwrap() {
            let t = t.as_f64().unwrap();
            assert!((0.0..=0.3 + 1e-9).contains(&t), "tension {t} N");
        }
    }
    assert!(out.join("error.svg").is_file() && out.join("actuation.svg").is_file());
}

/// The Finger asked 10 mm up presses the block 3 mm above it: no contact at the start,
/// contacts carrying a positive normal force at the end, the tip held more than 2 mm short
/// of a target 7 mm inside the block, and the tension below its 3 N cap.
#[test]
fn finger_press_presses_the_block_below_the_cable_cap() {
    let out = scratch("finger-press");
    finger_press::run(&out).unwrap();
    let rows = read_csv(&out.join("contacts.csv"));
    assert_eq!(rows.len(), 150);
    assert_eq!(rows[0][1], 0.0, "no contact at step 1");
    let last = rows.last().unwrap();
    assert!(
        last[1] > 0.0 && last[2] > 0.0,
        "contacts at the end: {last:?}"
    );
    let report = read_json(&out.join("control.json"));
    let error = report["final_error"].as_f64().unwrap();
    assert!(error > 0.002, "the block holds the tip back: {error} m");
    for a in report["actuation_history"].as_array().unwrap() {
        let t = a[0].as_f64().unwrap();
        assert!((0.0..3.0).contains(&t), "tension {t} N");
    }
}

/// Of a grasp's two strategies in `grasp.csv` (columns: step, then distance (m), force (N)
/// and the inputs of the heuristic, then of the optimised run), the optimised one ends with
/// the smaller α d² + β f² and the smaller contact force; its inputs stay in `[lo, hi]` and
/// change by at most `max_change` per step; the heuristic holds `heuristic` throughout.
fn assert_grasp(
    csv: &Path,
    inputs: usize,
    [alpha, beta]: [f64; 2],
    [lo, hi]: [f64; 2],
    max_change: f64,
    heuristic: f64,
) {
    let rows = read_csv(csv);
    let last = rows.last().unwrap();
    let (heur_d, heur_f) = (last[1], last[2]);
    let (opt_d, opt_f) = (last[4], last[5]);
    let loss = |d: f64, f: f64| alpha * d * d + beta * f * f;
    assert!(
        loss(opt_d, opt_f) < loss(heur_d, heur_f),
        "optimised {opt_d} m, {opt_f} N; heuristic {heur_d} m, {heur_f} N"
    );
    assert!(opt_f < heur_f);
    for (s, row) in rows.iter().enumerate() {
        assert!((row[3] - heuristic).abs() < 1e-12, "heuristic at step {s}");
        for i in 0..inputs {
            let t = row[6 + i];
            assert!((lo..=hi).contains(&t), "step {s}: {t}");
            if s > 0 {
                let d = t - rows[s - 1][6 + i];
                assert!(d.abs() <= max_change + 1e-9, "step {s}: change {d}");
            }
        }
    }
}

/// The cable Finger closing on the block (α = 1 m⁻², β = 10⁻² N⁻², [0, 3] N, 0.05 N per step)
/// against a constant 3 N, which presses on the block (more than 0.05 N at the end).
#[test]
fn grasp_forces_optimised_beats_the_maximal_tension() {
    let out = scratch("grasp-forces");
    grasp_forces::run(&out).unwrap();
    let csv = out.join("grasp.csv");
    assert_grasp(&csv, 1, [1.0, 1e-2], [0.0, 3.0 + 1e-9], 0.05, 3.0);
    let last = read_csv(&csv).pop().unwrap();
    assert!(
        last[2] > 0.05,
        "the heuristic's final contact force {} N",
        last[2]
    );
}

/// The servo Gripper on the cylinder (α = 1 m⁻², β = 10⁻⁴ N⁻², [−0.35, 0] rad, 4 mrad per
/// step) against −0.35 rad all along: both reach the object (the heuristic presses with more
/// than 1 N at the end, the optimised run touches it at some step), and the optimised
/// fingers closed (the α term moved both angles below −0.05 rad).
#[test]
fn gripper_grasp_optimised_beats_the_maximal_closing() {
    let out = scratch("gripper-grasp");
    gripper_grasp::run(&out).unwrap();
    let csv = out.join("grasp.csv");
    assert_grasp(&csv, 2, [1.0, 1e-4], [-0.35 - 1e-12, 1e-12], 0.004, -0.35);
    let rows = read_csv(&csv);
    let last = rows.last().unwrap();
    assert!(
        last[2] > 1.0,
        "the heuristic's final contact force {} N",
        last[2]
    );
    assert!(rows.iter().any(|r| r[5] > 0.0), "the optimised run touches");
    assert!(last[6] < -0.05 && last[7] < -0.05, "final angles {last:?}");
}

/// The quadruped's standing torques bring every velocity of the next step below the
/// solve's 1e-5 within its 15 iterations.
#[test]
fn contact_inverse_dynamics_holds_the_quadruped_still() {
    let result = contact_inverse_dynamics::run().unwrap();
    assert!(result.iterations <= 15);
    assert!(result.residual() < 1e-5, "{:?}", result.history);
}

/// The push of `scenes/cube_push.toml`, (0.8, 0.3) m/s, recovered from (0.4, 0.6) to 1e-6.
#[test]
fn rigid_initial_velocity_recovers_the_push() {
    let fit = rigid_initial_velocity::run().unwrap();
    for (got, truth) in fit.params.iter().zip([0.8, 0.3]) {
        assert!(((got - truth) / truth).abs() < 1e-6, "{:?}", fit.params);
    }
}

/// The Trunk's step matrices over 20 steps, each solved by conjugate gradients preconditioned
/// with the factor of the step before: every solve reaches 1e-12 relative before the
/// example's 200-iteration cap.
#[test]
fn factor_reuse_converges_on_the_trunk() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let counts = factor_reuse::run(
        &root.join("scenes/trunk.toml"),
        &["simulation.steps=20".to_string()],
        1,
    )
    .unwrap();
    assert_eq!(counts.len(), 19);
    assert!(counts.iter().all(|&c| (1..200).contains(&c)), "{counts:?}");
}
