//! Open-loop optimal control (`diffsoro optimize`, `diffsoro::optimize`): the waypoint
//! Jacobian of a run under knots against central differences of forward runs (static and
//! scene starts); waypoints that a forward run of other knots reaches are reached again,
//! through contact (the pianist's finger pressing its key; the Trunk's tip is the worked
//! example of docs/optimize.md, checked in `doc_examples`); bad input.

use std::path::Path;

use diffsoro::diff::ActuationKnots;
use diffsoro::math::Vec3;
use diffsoro::optimize::{OptimizeSetup, optimize, run_knots};
use diffsoro::scene::{PointPath, RunStart, Scene};

use crate::cli_support::{run, scratch};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn load(name: &str) -> Scene {
    Scene::load(&Path::new(ROOT).join("scenes").join(name), &[]).unwrap()
}

/// A path of `times` whose points are all the origin (the waypoints' values do not enter the
/// Jacobian; a forward run gives the reachable ones).
fn placeholder(times: &[f64]) -> PointPath {
    PointPath {
        file: "waypoints".into(),
        times: times.to_vec(),
        positions: vec![Vec3::zeros(); times.len()],
    }
}

/// The effector's positions at the waypoints' times for `knots` (a run without tangents).
fn reached(scene: &Scene, setup: &OptimizeSetup, knots: &ActuationKnots) -> Vec<Vec3> {
    run_knots(scene, setup, knots, false, &mut |_, _| Ok(()), &mut |_| {})
        .unwrap()
        .at_waypoints
}

/// The run's waypoint Jacobian (forward sensitivities) against central differences of the
/// waypoint positions of forward runs, column by column.
fn check_jacobian(scene: &Scene, setup: &OptimizeSetup, step: f64, tolerance: f64) {
    let run = run_knots(
        scene,
        setup,
        &setup.knots,
        true,
        &mut |_, _| Ok(()),
        &mut |_| {},
    )
    .unwrap();
    let jacobian = run.jacobian.unwrap();
    let k = setup.knots.times.len();
    let largest = jacobian.amax();
    assert!(largest > 0.0);
    for a in 0..setup.knots.actuators.len() {
        for j in 0..k {
            let moved = |d: f64| {
                let mut knots = setup.knots.clone();
                knots.values[a][j] += d;
                reached(scene, setup, &knots)
            };
            let (plus, minus) = (moved(step), moved(-step));
            for w in 0..plus.len() {
                let fd = (plus[w] - minus[w]) / (2.0 * step);
                for r in 0..3 {
                    let got = jacobian[(3 * w + r, a * k + j)];
                    // Relative to the column's scale: an entry near zero is compared with the
                    // Jacobian's largest.
                    let err = (got - fd[r]).abs() / fd[r].abs().max(1e-3 * largest);
                    assert!(
                        err < tolerance,
                        "knot {a},{j}, waypoint {w}, axis {r}: sensitivity {got:e}, differences {:e}, relative error {err:.2e}",
                        fd[r]
                    );
                }
            }
        }
    }
}

/// The Finger (force-driven cable, no contact) pulled along 3 knots over 0.3 s, from its
/// static equilibrium under the first knot and from its scene state.
#[test]
fn the_waypoint_jacobian_matches_central_differences_from_either_start() {
    let scene = load("finger.toml");
    for start in [RunStart::Static, RunStart::Scene] {
        let mut setup = OptimizeSetup::new(
            &scene,
            "tip",
            placeholder(&[0.1, 0.205, 0.3]),
            Some(3),
            None,
            None,
            start,
            &[],
        )
        .unwrap();
        setup.knots.values = vec![vec![0.3, 0.8, 0.5]];
        check_jacobian(&scene, &setup, 1e-4, 1e-6);
    }
}

/// The key's angle (rad) after each step of a run under `knots`.
fn key_angles(scene: &Scene, setup: &OptimizeSetup, knots: &ActuationKnots) -> Vec<f64> {
    let mut angles = Vec::new();
    run_knots(
        scene,
        setup,
        knots,
        false,
        &mut |_, state| {
            angles.push(state.rigid[0].q[0]);
            Ok(())
        },
        &mut |_| {},
    )
    .unwrap();
    angles
}

/// The pianist's finger presses its key to three angles in sequence, through contact: the
/// waypoints are where a forward run whose cable tension ramps 0 → 1 → 1.8 → 2.4 N over 3 s
/// puts the fingertip at 1, 2 and 3 s; `optimize` starts from zero tension and must pass
/// each within 0.5 mm, pressing the key to the forward run's angles at those times.
#[test]
fn the_pianist_presses_its_key_to_three_angles_in_sequence_through_contact() {
    let scene = load("pianist.toml");
    let times = [1.0, 2.0, 3.0];
    let mut setup = OptimizeSetup::new(
        &scene,
        "tip",
        placeholder(&times),
        Some(4),
        None,
        None,
        RunStart::Scene,
        &[],
    )
    .unwrap();
    let mut truth = setup.knots.clone();
    truth.values = vec![vec![0.0, 1.0, 1.8, 2.4]];
    setup.waypoints.positions = reached(&scene, &setup, &truth);
    let dt = scene.simulation.dt;
    let steps_at = |t: f64| (t / dt).round() as usize;
    let pressed = key_angles(&scene, &setup, &truth);
    let angles: Vec<f64> = times.iter().map(|&t| pressed[steps_at(t)]).collect();
    // Three distinct angles.
    assert!(
        angles.windows(2).all(|w| (w[1] - w[0]).abs() > 0.01),
        "{angles:?}"
    );
    setup.knots.values = vec![vec![0.0; 4]];
    let report = optimize(&scene, &setup, &mut |_, _| {}, &mut |_, _| Ok(())).unwrap();
    for (w, e) in report.waypoint_errors.iter().enumerate() {
        assert!(
            *e < 5e-4,
            "waypoint {w}: {e} m (knots {:?})",
            report.actuation
        );
    }
    let mut found = setup.knots.clone();
    found.values = vec![report.actuation["cable"].clone()];
    let got = key_angles(&scene, &setup, &found);
    for (&t, want) in times.iter().zip(&angles) {
        let q = got[steps_at(t)];
        assert!(
            (q - want).abs() < 0.005,
            "key at {t} s: {q} rad, the forward run's {want} rad"
        );
    }
}

/// Bad input gets one line naming what and where, and leaves no output folder behind.
#[test]
fn bad_input_is_one_line_naming_it() {
    let dir = scratch("optimize_bad_input");
    let good = dir.join("good.csv");
    std::fs::write(&good, "time,x,y,z\n0.05,-0.1,0.007,0.007\n").unwrap();
    let late = dir.join("late.csv");
    std::fs::write(&late, "time,x,y,z\n5.0,-0.1,0.007,0.007\n").unwrap();
    let broken = dir.join("broken.csv");
    std::fs::write(&broken, "time,x,y,z\n0.05,-0.1,0.007\n").unwrap();
    let finger = root_scene("finger.toml");
    let out = dir.join("out");
    let cases: [(Vec<&str>, &str); 6] = [
        (
            vec!["--effector", "nose", "--waypoints", good.to_str().unwrap()],
            "--effector `nose`: the scene has no such effector (its effectors: tip)",
        ),
        (
            vec!["--effector", "tip", "--waypoints", broken.to_str().unwrap()],
            "line 2: expected 4 fields",
        ),
        (
            vec![
                "--effector",
                "tip",
                "--waypoints",
                late.to_str().unwrap(),
                "--steps",
                "10",
            ],
            "the last waypoint (5 s) lies after the run's end (10 steps of 0.01 s)",
        ),
        (
            vec![
                "--effector",
                "tip",
                "--waypoints",
                good.to_str().unwrap(),
                "--effort",
                "-1",
            ],
            "--effort: -1 is not a finite weight",
        ),
        (
            vec![
                "--effector",
                "tip",
                "--waypoints",
                good.to_str().unwrap(),
                "--knots",
                "1",
            ],
            "--knots: 1 knot(s): at least 2",
        ),
        (
            vec![
                "--effector",
                "tip",
                "--waypoints",
                good.to_str().unwrap(),
                "--actuator",
                "rope",
            ],
            "actuator:rope",
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["optimize", finger.as_str()];
        all.extend(&args);
        all.extend(["--out", out.to_str().unwrap()]);
        let output = run(&all);
        assert!(!output.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let line = stderr.trim();
        assert!(line.contains(expected), "{args:?}: {line}");
        assert_eq!(line.lines().count(), 1, "{args:?}: {line}");
        assert!(!out.exists(), "{args:?} left {out:?}");
    }
}

fn root_scene(name: &str) -> String {
    Path::new(ROOT)
        .join("scenes")
        .join(name)
        .display()
        .to_string()
}
