//! Logged actuator commands over time (`simulate --inputs FILE.csv`, docs/cli.md): the time
//! base, the command map (gain, offset, lag), the clamps, the static start, the errors of a bad
//! command file, and `actuator:NAME` on a displacement-driven cable (its shortening, its drive
//! kept). The expected values come from hand computations, from the closed form of the lag's
//! recursion, or from runs that reach the same inputs another way (`--set`, `--static`).

use std::path::Path;

use diffsoro::actuator::Drive;
use diffsoro::diff::Parameter;
use diffsoro::fem::Stiffness;
use diffsoro::math::Vec3;
use diffsoro::scene::{CommandLog, CommandRun, FinalState, RunStart, Scene, Stepper};
use serde_json::Value;

use crate::cli_support::{root, run, run_json, scratch};

/// `text` written as `name` in `dir`; returns its path as a string.
fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn finger() -> Scene {
    Scene::load(&root().join("scenes/finger.toml"), &[]).unwrap()
}

/// The finger scene with its cable displacement-driven (tests/data/finger_displacement.toml).
const DISPLACED: &str = "tests/data/finger_displacement.toml";

/// The one-line error of a failing `diffsoro ARGS…`, without `error: `.
fn error(args: &[&str]) -> String {
    let out = run(args);
    assert!(!out.status.success(), "{args:?} succeeded");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr.trim().lines().last().unwrap_or("");
    assert!(line.starts_with("error: "), "{stderr}");
    line["error: ".len()..].to_string()
}

#[test]
fn a_constant_command_file_reproduces_a_plain_run_bit_for_bit() {
    // The finger's cable at 0.3 N: given by --set, or logged as 0.3 from file time 2.5 s
    // (gain 1, offset 0: the input is the command itself), from the scene's initial state.
    let dir = scratch("constant");
    let csv = write(&dir, "hold.csv", "time,cable\n2.5,0.3\n3.0,0.3\n");
    let plain = run_json(&[
        "simulate",
        "scenes/finger.toml",
        "--steps",
        "20",
        "--set",
        "soft_body.finger.cable.cable.force=0.3",
    ]);
    let logged = run_json(&[
        "simulate",
        "scenes/finger.toml",
        "--steps",
        "20",
        "--inputs",
        &csv,
        "--start",
        "scene",
    ]);
    for key in ["soft_bodies", "actuators", "effectors", "time", "steps"] {
        assert_eq!(plain[key], logged[key], "{key}");
    }
    assert_eq!(plain.get("inputs"), None);
    let inputs = &logged["inputs"];
    assert_eq!(inputs["file"], Value::from(csv.as_str()));
    assert_eq!(inputs["t0"], 2.5);
    assert_eq!(inputs["steps"], 20);
    assert_eq!(inputs["clamped"], serde_json::json!({"cable": 0}));
    // Simulation time is counted from the first row: 20 steps of 0.01 s.
    assert_eq!(logged["time"], plain["time"]);
}

#[test]
fn a_displacement_driven_cable_follows_its_logged_shortening_bit_for_bit() {
    // The scene's displacement 0.002 m given by --set, or logged: both Target(rest − 0.002).
    let dir = scratch("displaced");
    let csv = write(&dir, "pull.csv", "time,cable\n0.0,0.002\n");
    let set = "soft_body.finger.cable.cable.displacement=0.002";
    let plain = run_json(&["simulate", DISPLACED, "--steps", "15", "--set", set]);
    let logged = run_json(&[
        "simulate", DISPLACED, "--steps", "15", "--inputs", &csv, "--start", "scene",
    ]);
    assert_eq!(plain["soft_bodies"], logged["soft_bodies"]);
    assert_eq!(plain["actuators"], logged["actuators"]);
}

#[test]
fn without_steps_a_run_ends_at_the_last_row() {
    // dt = 0.01 s. Rows from 1.0 to 1.155 s: 15.5 steps, so 16 whole steps reach the last
    // row; from 0 to 0.15 s: (0.15 − 0)/0.01 = 15.000000000000002 in doubles, 15 steps (the
    // 1e-9 keeps a log sampled at dt from gaining a step). One row: no step.
    let dir = scratch("steps");
    for (text, steps) in [
        ("time,cable\n1.0,0.1\n1.155,0.2\n", 16),
        ("time,cable\n0.0,0.1\n0.15,0.2\n", 15),
        ("time,cable\n0.7,0.1\n", 0),
    ] {
        let csv = write(&dir, "log.csv", text);
        let out = run_json(&[
            "simulate",
            "scenes/finger.toml",
            "--inputs",
            &csv,
            "--start",
            "scene",
        ]);
        assert_eq!(out["steps"], steps, "{text}");
        assert_eq!(out["inputs"]["steps"], steps, "{text}");
    }
}

#[test]
fn gain_offset_lag_and_clamps_give_the_inputs_computed_by_hand() {
    let dir = scratch("mapped");
    // Lag: the command steps from 0.1 to 0.5 within the first step (rows at 0 and 0.005 s),
    // so u₋₁ = 0.1 and every step's target ū = 0.5; with τ = 0.05 s and dt = 0.01 s,
    // a = e^(−0.2) and u_k = ū + (u₋₁ − ū)·a^(k+1). After 10 steps the cable's tension (a
    // force-driven cable's λ is its input) is u₉ = 0.5 − 0.4·e^(−2).
    let csv = write(&dir, "step.csv", "time,cable\n0.0,0.1\n0.005,0.5\n");
    let out = run_json(&[
        "simulate",
        "scenes/finger.toml",
        "--steps",
        "10",
        "--inputs",
        &csv,
        "--start",
        "scene",
        "--set",
        "soft_body.finger.cable.cable.time_constant=0.05",
    ]);
    let lambda = out["actuators"][0]["force"].as_f64().unwrap();
    let expected = 0.5 - 0.4 * (-2.0f64).exp();
    assert!((lambda - expected).abs() < 1e-14, "{lambda} vs {expected}");
    // Gain 2, offset 0.1 (N per command unit, N): command 0.2 → 0.5 N.
    let csv = write(&dir, "gain.csv", "time,cable\n0.0,0.2\n");
    let out = run_json(&[
        "simulate",
        "scenes/finger.toml",
        "--steps",
        "3",
        "--inputs",
        &csv,
        "--start",
        "scene",
        "--set",
        "soft_body.finger.cable.cable.gain=2",
        "--set",
        "soft_body.finger.cable.cable.offset=0.1",
    ]);
    assert_eq!(out["actuators"][0]["force"], 2.0 * 0.2 + 0.1);
    // Clamps: max_force 0.55 N, the command rising from 0.2 at 0 s to 1.2 at 0.1 s then held.
    // Step k takes c = 0.2 + 10·0.01·(k+1) up to k = 9 (0.3, 0.4, 0.5, 0.6, …), then 1.2: the
    // inputs above 0.55 are those of k = 3…14, 12 of the 15 steps; the last is clamped to 0.55.
    let csv = write(&dir, "ramp.csv", "time,cable\n0.0,0.2\n0.1,1.2\n");
    let done = crate::cli_support::run_ok(&[
        "simulate",
        "scenes/finger.toml",
        "--steps",
        "15",
        "--inputs",
        &csv,
        "--start",
        "scene",
        "--set",
        "soft_body.finger.cable.cable.max_force=0.55",
    ]);
    let out: Value = serde_json::from_slice(&done.stdout).unwrap();
    assert_eq!(out["inputs"]["clamped"]["cable"], 12);
    assert_eq!(out["actuators"][0]["force"], 0.55);
    // Warned once, naming the file, the actuator and the bounds.
    let stderr = String::from_utf8_lossy(&done.stderr);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("clamped to"))
        .collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].contains(&csv) && warnings[0].contains("`cable`"),
        "{}",
        warnings[0]
    );
    assert!(warnings[0].contains("[0, 0.55] N"), "{}", warnings[0]);
}

#[test]
fn the_static_start_is_the_static_equilibrium_under_the_first_commands() {
    // The first row's command 0.2 with gain 2 and offset 0.1: input 0.5 N (later rows
    // differ, and must not matter). `simulate --static` with the cable at that force (and
    // the same gain and offset, which --static ignores) solves the same equilibrium from
    // the same initial state with the same calls: bit for bit.
    let dir = scratch("static");
    let csv = write(&dir, "pull.csv", "time,cable\n0.0,0.2\n0.3,0.9\n");
    let input = 2.0 * 0.2 + 0.1;
    let map = [
        "--set",
        "soft_body.finger.cable.cable.gain=2",
        "--set",
        "soft_body.finger.cable.cable.offset=0.1",
    ];
    let mut args = vec![
        "simulate",
        "scenes/finger.toml",
        "--steps",
        "0",
        "--inputs",
        csv.as_str(),
    ];
    args.extend(map);
    let started = run_json(&args);
    let force = format!("soft_body.finger.cable.cable.force={input:?}");
    let mut args = vec![
        "simulate",
        "scenes/finger.toml",
        "--static",
        "--set",
        force.as_str(),
    ];
    args.extend(map);
    let statics = run_json(&args);
    assert_eq!(
        started["soft_bodies"][0]["positions"],
        statics["soft_bodies"][0]["positions"]
    );
    assert_eq!(started["actuators"], statics["actuators"]);
    let velocities = started["soft_bodies"][0]["velocities"].as_array().unwrap();
    assert!(
        velocities
            .iter()
            .flat_map(|v| v.as_array().unwrap())
            .all(|c| c == 0.0)
    );
    assert_eq!(started["time"], 0.0);
}

#[test]
fn stepping_from_the_static_start_under_constant_commands_stays_there() {
    let mut scene = finger();
    let log = CommandLog::parse("hold.csv", "time,cable\n0.0,0.4\n").unwrap();
    let (mut run, mut state) =
        CommandRun::start(&mut scene, log, Some(100), RunStart::Static).unwrap();
    assert!(run.static_reports()[0].residual <= 1e-9);
    let body = &scene.bodies[0];
    let x_s = state.bodies[0].positions.clone();
    // The static solve's residual at its answer, r = f(x) + m g + f_a on the free nodes (N).
    let mut elastic = body.elastic_state();
    body.evaluate_elastic(&x_s, Stiffness::Skip, &mut elastic)
        .unwrap();
    let mut fa = vec![Vec3::zeros(); body.node_count()];
    scene.body_actuation(0).add_driven_forces(
        &x_s,
        &state.actuator_forces[0],
        1.0,
        &mut Vec::new(),
        &mut fa,
    );
    let g = scene.gravity();
    let free: Vec<usize> = (0..body.node_count())
        .filter(|&n| !body.is_fixed(n))
        .collect();
    let r = free
        .iter()
        .map(|&n| (elastic.forces[n] + body.node_masses()[n] * g + fa[n]).norm_squared())
        .sum::<f64>()
        .sqrt();
    let m_min = free
        .iter()
        .map(|&n| body.node_masses()[n])
        .fold(f64::INFINITY, f64::min);
    let h = scene.simulation.dt;
    // Step 1 from rest: A v₁ = h r, with A = (1 + hα)M + (hβ + h²)K̂ ⪰ M (K̂ = K + K_a,
    // the Hessian of the potential, is positive semi-definite at the minimum the static
    // solve found), so ‖v₁‖ ≤ h ‖r‖ / m_min.
    run.step(&mut scene, &mut state).unwrap();
    let speed = |s: &diffsoro::scene::State| {
        s.bodies[0]
            .velocities
            .iter()
            .map(|v| v.norm_squared())
            .sum::<f64>()
            .sqrt()
    };
    let first = speed(&state);
    assert!(first <= h * r / m_min, "{first} > {}", h * r / m_min);
    // Later steps: the step never raises the mechanical energy (docs/design.md,
    // tests/settling.rs), and near the minimum Π(x) ≥ Π(x_s) − rᵀ(x − x_s), so
    // ½ m_min ‖v‖² ≤ ½ vᵀMv ≤ ‖r‖ ‖x − x_s‖: ‖v‖ ≤ √(2 ‖r‖ ‖x − x_s‖ / m_min).
    for k in 1..100 {
        run.step(&mut scene, &mut state).unwrap();
        let moved = state.bodies[0]
            .positions
            .iter()
            .zip(&x_s)
            .map(|(a, b)| (a - b).norm_squared())
            .sum::<f64>()
            .sqrt();
        let bound = (2.0 * r * moved / m_min).sqrt();
        let v = speed(&state);
        assert!(v <= bound, "step {k}: ‖v‖ = {v:e} > {bound:e}");
        assert!(moved < 1e-9, "step {k}: moved {moved:e} m");
    }
}

#[test]
fn a_run_under_commands_is_the_library_run_step_by_step() {
    // The CLI's `--inputs` run and CommandRun driven from the library: the same final state.
    let dir = scratch("library");
    let text = "time,cable\n0.0,0.0\n0.05,0.4\n0.12,0.1\n";
    let csv = write(&dir, "wave.csv", text);
    let cli = crate::cli_support::run_ok(&["simulate", "scenes/finger.toml", "--inputs", &csv]);
    let mut scene = finger();
    let log = CommandLog::parse(&csv, text).unwrap();
    let (mut run, mut state) = CommandRun::start(&mut scene, log, None, RunStart::Static).unwrap();
    assert_eq!(run.steps(), 12);
    for _ in 0..run.steps() {
        run.step(&mut scene, &mut state).unwrap();
    }
    let mut expected = FinalState::new(&scene, &state);
    expected.inputs = Some(run.output());
    // The same JSON text: the same numbers to the bit.
    assert_eq!(
        String::from_utf8_lossy(&cli.stdout).trim_end(),
        serde_json::to_string(&expected).unwrap()
    );
}

#[test]
fn every_bad_command_file_is_a_one_line_error_naming_file_and_line() {
    let dir = scratch("errors");
    let cases = [
        (
            "time,cable,thumb\n0,0.1,0.2\n",
            "line 1: column 3: the scene has no actuator `thumb` (it has [\"cable\"])",
        ),
        (
            "time,cable,cable\n0,1,1\n",
            "line 1: column 3: `cable` is repeated",
        ),
        (
            "t,cable\n0,1\n",
            "line 1: the header must start with `time`",
        ),
        (
            "time,cable\n",
            "line 1: the header is followed by no command row",
        ),
        (
            "time,cable\n0,0.1\n0.1,0.2,0.3\n",
            "line 3: has 3 cells, the header 2",
        ),
        (
            "time,cable\n0,0.1\n0.1,x\n",
            "line 3: column 2 (`cable`): `x` is not a number",
        ),
        (
            "time,cable\n0,0.1\n0.1,inf\n",
            "line 3: column 2 (`cable`): inf is not finite",
        ),
        (
            "time,cable\n0.2,0.1\n0.2,0.3\n",
            "line 3: time 0.2 is not after the previous row's 0.2",
        ),
    ];
    for (text, message) in cases {
        let csv = write(&dir, "bad.csv", text);
        let e = error(&["simulate", "scenes/finger.toml", "--inputs", &csv]);
        assert_eq!(e.split(": line").next(), Some(csv.as_str()), "{e}");
        assert!(e.contains(message), "{text:?}: {e}");
    }
    // A missing file names it.
    let missing = dir.join("none.csv").display().to_string();
    let e = error(&["simulate", "scenes/finger.toml", "--inputs", &missing]);
    assert!(e.starts_with(&missing), "{e}");
    // The flags that do not go together.
    let csv = write(&dir, "ok.csv", "time,cable\n0,0.1\n");
    let e = error(&["simulate", "scenes/finger.toml", "--start", "static"]);
    assert!(e.starts_with("--start: "), "{e}");
    let e = error(&[
        "simulate",
        "scenes/finger.toml",
        "--inputs",
        &csv,
        "--static",
    ]);
    assert!(e.starts_with("--inputs: ") && e.contains("--static"), "{e}");
    let e = error(&[
        "simulate",
        "scenes/finger.toml",
        "--inputs",
        &csv,
        "--sensitivity",
        "young_modulus:finger",
        "--gradient-of",
        "tip.x",
    ]);
    assert!(e.starts_with("--gradient-of with --inputs: "), "{e}");
    // Statics has no contact yet: a static start in a scene with an obstacle says to start
    // from the scene instead.
    let e = error(&["simulate", "scenes/finger_obstacle.toml", "--inputs", &csv]);
    assert!(e.contains("--start scene"), "{e}");
}

#[test]
fn bench_takes_its_inputs_from_the_command_file() {
    let dir = scratch("bench");
    let csv = write(&dir, "hold.csv", "time,cable\n0,0.2\n");
    let out = run_json(&[
        "bench",
        "scenes/finger.toml",
        "--steps",
        "2",
        "--inputs",
        &csv,
        "--start",
        "scene",
    ]);
    assert!(out["step_ms"].as_f64().unwrap() > 0.0);
    let e = error(&[
        "bench",
        "scenes/finger.toml",
        "--steps",
        "2",
        "--start",
        "scene",
    ]);
    assert!(e.starts_with("--start: "), "{e}");
}

#[test]
fn actuator_parameters_of_a_displacement_driven_cable_are_its_shortening() {
    let mut scene = Scene::load(&root().join(DISPLACED), &[]).unwrap();
    let rest = scene.actuation[0].actuators[0]
        .kind
        .value(scene.bodies[0].rest_positions());
    let p = Parameter::parse(&scene, "actuator:cable").unwrap();
    // The scene's displacement 0 reads as 0 (it read 0 for every target-driven one before).
    assert_eq!(p.value(&scene), 0.0);
    let d = 5e-4;
    p.set(&mut scene, d).unwrap();
    // The drive is kept: the length's target is rest − d.
    assert_eq!(
        scene.actuation[0].actuators[0].drive,
        Drive::Target(rest - d)
    );
    assert!((p.value(&scene) - d).abs() <= 2.0 * f64::EPSILON * rest);
    // Stepped until it settles (3 s), the cable's length is rest − d: the linearised step
    // meets the target to first order in each step's motion, which dies out as it settles.
    // Its tension is solved (about 0.56 N against the finger's weight and stiffness), not
    // the 5e-4 N the value would have been taken for before.
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    for _ in 0..300 {
        stepper.step(&scene, &mut state).unwrap();
    }
    let fs = FinalState::new(&scene, &state);
    let length = fs.actuators[0].value;
    assert!(
        (length - (rest - d)).abs() < 1e-9,
        "{length} vs {}",
        rest - d
    );
    assert!(fs.actuators[0].force > 0.1, "{}", fs.actuators[0].force);
}

#[test]
fn calibrate_fits_a_run_under_logged_commands() {
    // An observation made under a logged pull at E = 450 kPa, from the scene's initial state;
    // the fit under the same log recovers E from 700 kPa. Without the log, the same fit
    // would simulate the scene's 100 steps with the cable slack and miss it.
    let dir = scratch("calibrate");
    let csv = write(&dir, "pull.csv", "time,cable\n0.0,0.0\n0.1,0.5\n0.15,0.5\n");
    let obs = dir.join("obs");
    let logged = ["--inputs", csv.as_str(), "--start", "scene"];
    let mut args = vec![
        "simulate",
        "scenes/finger.toml",
        "--set",
        "soft_body.finger.young_modulus=4.5e5",
        "--out",
        obs.to_str().unwrap(),
    ];
    args.extend(logged);
    run_json(&args);
    let observed = obs.join("final.json");
    let calib = dir.join("calib");
    let mut args = vec![
        "calibrate",
        "scenes/finger.toml",
        "--observed",
        observed.to_str().unwrap(),
        "--param",
        "young_modulus:finger",
        "--init",
        "young_modulus:finger=7e5",
        "--out",
        calib.to_str().unwrap(),
        "--view",
    ];
    args.extend(logged);
    let report = run_json(&args);
    let e = report["params"]["young_modulus:finger"].as_f64().unwrap();
    assert!((e - 4.5e5).abs() <= 1e-4 * 4.5e5, "{report}");
    assert_eq!(report["converged"], true);
    // The fitted run written by --view followed the log: 15 steps, its inputs recorded.
    let fitted: Value =
        serde_json::from_str(&std::fs::read_to_string(calib.join("final.json")).unwrap()).unwrap();
    assert_eq!(fitted["steps"], 15);
    assert_eq!(fitted["inputs"]["file"], Value::from(csv.as_str()));
    // The static start has no sensitivities yet; a logged actuator is no parameter.
    let base = [
        "calibrate",
        "scenes/finger.toml",
        "--observed",
        observed.to_str().unwrap(),
        "--inputs",
        csv.as_str(),
    ];
    let mut args = base.to_vec();
    args.extend(["--param", "young_modulus:finger"]);
    let e = error(&args);
    assert!(
        e.starts_with("calibrate --inputs: ") && e.contains("--start scene"),
        "{e}"
    );
    let mut args = base.to_vec();
    args.extend(["--param", "actuator:cable", "--start", "scene"]);
    let e = error(&args);
    assert!(e.starts_with("--param actuator:cable: is logged in"), "{e}");
}
