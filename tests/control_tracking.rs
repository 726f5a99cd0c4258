//! Inverse control follows moving targets (`--target-path`) and drives a robot that is not
//! the model (`control::Controller`, `--plant-set`, `--measurement-noise`): paths of tip
//! positions the Trunk reaches (a forward run under slowly varying tensions; a loop of
//! static equilibria) are tracked, also with a stiffer robot and a noisy sensor.

use std::path::Path;

use diffsoro::control::{ControlSetup, Plant, QpSettings, control_scene, default_qp_solver};
use diffsoro::diff::Parameter;
use diffsoro::math::Vec3;
use diffsoro::scene::{PointPath, Scene, StaticOptions, Stepper, solve_static};

use crate::cli_support::{run, scratch};

fn trunk(sets: &[String]) -> Scene {
    Scene::load(Path::new("scenes/trunk.toml"), sets).unwrap()
}

fn tip(scene: &Scene, x: &[Vec3]) -> Vec3 {
    scene.body_actuation(0).effectors[0].point.position(x)
}

/// The tensions (N) of the four long cables at angle θ of a loop of amplitude `a`: one or
/// two neighbouring cables pull, so the tip circles around the sagged rest.
fn loop_tensions(theta: f64, a: f64) -> Vec<String> {
    let pulls = [theta.cos(), theta.sin(), -theta.cos(), -theta.sin()];
    pulls
        .iter()
        .enumerate()
        .map(|(i, p)| format!("soft_body.trunk.cable.c{}.force={}", i + 1, a * p.max(0.0)))
        .collect()
}

/// The tip at the static equilibrium of the Trunk under `sets` (another method than
/// control: Newton on the static balance).
fn static_tip(sets: &[String]) -> Vec3 {
    let scene = trunk(sets);
    let mut state = scene.initial_state();
    solve_static(&scene, &mut state, StaticOptions::default()).unwrap();
    tip(&scene, &state.bodies[0].positions)
}

fn rms(errors: &[f64]) -> f64 {
    (errors.iter().map(|e| e * e).sum::<f64>() / errors.len() as f64).sqrt()
}

#[test]
fn a_path_a_forward_run_traces_is_tracked() {
    // The forward run: from the scene's start (cables slack) the Trunk sags for 2 s, then
    // c1 and c2 pull with tensions rising and falling over 4 s (≤ 0.06 N).
    let scene = trunk(&[]);
    let dt = scene.simulation.dt;
    let steps = 600;
    let tension = |t: f64| -> [f64; 2] {
        let s = ((t - 2.0) / 4.0).clamp(0.0, 1.0);
        let bump = (std::f64::consts::PI * s).sin().powi(2);
        [
            0.06 * bump,
            0.04 * (2.0 * std::f64::consts::PI * s).sin().max(0.0),
        ]
    };
    let mut driven = scene.clone();
    let mut stepper = Stepper::new(&driven).unwrap();
    let mut state = driven.initial_state();
    let mut text = String::from("time,x,y,z\n");
    for k in 0..steps {
        let [a, b] = tension(k as f64 * dt);
        Parameter::Actuator { body: 0, index: 0 }
            .set(&mut driven, a)
            .unwrap();
        Parameter::Actuator { body: 0, index: 1 }
            .set(&mut driven, b)
            .unwrap();
        stepper.step(&driven, &mut state).unwrap();
        let p = tip(&driven, &state.bodies[0].positions);
        text += &format!("{},{},{},{}\n", state.time, p.x, p.y, p.z);
    }
    let dir = std::env::temp_dir().join(format!("diffsoro-track-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("path.csv");
    std::fs::write(&file, &text).unwrap();
    let path = PointPath::read(&file).unwrap();
    let setup = ControlSetup::with_path(&scene, "tip", &file, Some(steps))
        .unwrap()
        .settle_after(Some(2.0))
        .unwrap();
    let report = control_scene(
        &scene,
        &setup,
        default_qp_solver(QpSettings::default()).as_mut(),
    )
    .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    // The errors against the path at each step's end time, from the report's positions.
    let moved = (path.at(4.0) - path.at(2.0)).norm();
    let after: Vec<f64> = (200..steps)
        .map(|k| {
            let p = Vec3::from_column_slice(&report.position_history[k]);
            (p - path.at((k + 1) as f64 * dt)).norm()
        })
        .collect();
    let rms_after = rms(&after);
    eprintln!(
        "path moves {moved:.4e} m; tracking_rms {:?}, max after 2 s {:.4e}",
        report.tracking_rms,
        after.iter().cloned().fold(0.0, f64::max)
    );
    let reported = report.tracking_rms.unwrap();
    assert!(
        (reported - rms_after).abs() <= 1e-9 * rms_after,
        "{reported} against {rms_after}"
    );
    assert!(moved > 5e-3, "the path moves {moved} m");
    // Within 2.5 % of how far the path moves (the lag of the Trunk's damping, β·v ≈ 0.4 mm
    // at the path's fastest, is aimed ahead of; what remains is the inertia's).
    assert!(rms_after < 2e-4, "tracking RMS {rms_after} m");
}

#[test]
fn a_stiffer_noisy_trunk_follows_a_loop_of_static_poses() {
    // 16 tip positions of static equilibria around the sagged rest, 5 s a lap, two laps.
    let points: Vec<Vec3> = (0..16)
        .map(|j| {
            static_tip(&loop_tensions(
                std::f64::consts::TAU * j as f64 / 16.0,
                0.05,
            ))
        })
        .collect();
    let lap = 5.0;
    let mut text = String::from("time,x,y,z\n");
    for j in 0..=32 {
        let p = points[j % 16];
        text += &format!("{},{},{},{}\n", lap * j as f64 / 16.0, p.x, p.y, p.z);
    }
    // scenes/trunk_loop.csv (the path of docs/control.md's command) is this loop.
    let file = Path::new("scenes/trunk_loop.csv");
    assert_eq!(
        PointPath::read(file).unwrap(),
        PointPath::parse("scenes/trunk_loop.csv", &text).unwrap()
    );
    let scene = trunk(&[]);
    let mut setup = ControlSetup::with_path(&scene, "tip", file, Some(1000))
        .unwrap()
        .settle_after(Some(lap))
        .unwrap();
    let e = 450.0e3 * 1.25;
    let robot = trunk(&[format!("soft_body.trunk.young_modulus={e}")]);
    setup.plant = Some(Plant::new(robot, 2e-4, 1).unwrap());
    let t0 = std::time::Instant::now();
    let report = control_scene(
        &scene,
        &setup,
        default_qp_solver(QpSettings::default()).as_mut(),
    )
    .unwrap();
    let size = points
        .iter()
        .map(|p| (p - points[8]).norm())
        .fold(0.0, f64::max);
    let second = rms(&report.error_history[500..]);
    let first = rms(&report.error_history[100..500]);
    eprintln!(
        "loop size {size:.4e} m; rms first lap after 1 s {first:.4e}, second lap {second:.4e}, tracking_rms {:?}; {:.1} s",
        report.tracking_rms,
        t0.elapsed().as_secs_f64()
    );
    assert!(size > 5e-3, "the loop spans {size} m");
    assert!(second <= 1e-3, "second lap RMS {second} m");
}

/// `control --target-path`'s input checks: a bad path file names file and line; a path with
/// `--target`, or the tracking flags with `--static`, are one-line errors.
#[test]
fn control_path_flags_reject_bad_input_in_one_line() {
    let dir = scratch("target-path");
    let file = dir.join("bad.csv");
    std::fs::write(&file, "time,x,y,z\n0,0,-0.15,0.09\n0.5,0,x,0.09\n").unwrap();
    let file = file.to_str().unwrap();
    let control = |extra: &[&str]| {
        let mut args = vec!["control", "scenes/trunk.toml", "--effector", "tip"];
        args.extend_from_slice(extra);
        run(&args)
    };
    let one_line = |out: std::process::Output, needles: &[&str]| {
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(!out.status.success(), "{err}");
        let lines: Vec<&str> = err
            .trim_end()
            .lines()
            .filter(|l| !l.starts_with("warning: "))
            .collect();
        assert_eq!(lines.len(), 1, "{err}");
        for n in needles {
            assert!(err.contains(n), "`{n}` not in {err}");
        }
    };
    one_line(
        control(&["--target-path", file, "--steps", "2"]),
        &["bad.csv", "line 3", "y `x` is not a finite number"],
    );
    one_line(
        control(&["--target-path", "/nonexistent/path.csv", "--steps", "2"]),
        &["/nonexistent/path.csv"],
    );
    one_line(
        control(&["--target", "0,0,0.1", "--target-path", file]),
        &["--target-path", "not both"],
    );
    one_line(
        control(&["--static", "--target", "0,0,0.1", "--settle", "1"]),
        &["--settle", "--static"],
    );
    one_line(
        control(&[
            "--target",
            "0,0,0.1",
            "--measurement-noise=-1",
            "--steps",
            "2",
        ]),
        &["--measurement-noise", "-1"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
