//! The jobs in scenes where soft and rigid bodies share an NCP (issue 19 §4), through the
//! derivatives of mixed steps: calibrating a soft body's Young's modulus with a rigid body
//! attached to it (the observation made by the plain stepper at a known E; the fit starts
//! three times too small and must recover it to 1e-4 relative), and contact-force control
//! (paper 004 Eq. 17) of the cable Finger pressing the hinged piano key of
//! `scenes/pianist.toml` against the constant-maximum-actuation heuristic (the direction of
//! the paper's Table I).

mod cli_support;

use std::path::Path;

use diffsoro::calibrate::{CalibrationSetup, LmOptions, Parametrisation, calibrate_scene};
use diffsoro::scene::{FinalState, Scene, Stepper};

fn load(overrides: &[&str]) -> Scene {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/lift_pad.toml");
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Scene::load(&path, &overrides).unwrap()
}

#[test]
fn the_pad_hanging_from_a_palm_gives_its_young_modulus() {
    // 40 steps (0.2 s): the palm sinks under the pad's weight and the pad sags.
    let truth = 1.0e5;
    let scene = load(&[
        "simulation.steps=40",
        &format!("soft_body.pad.young_modulus={truth}"),
    ]);
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    for _ in 0..scene.simulation.steps {
        stepper.step(&scene, &mut state).unwrap();
    }
    let observed = FinalState::new(&scene, &state);
    let setup = CalibrationSetup {
        params: Parametrisation::parse(&["young_modulus:pad"]).unwrap(),
        initial: vec![Some(truth / 3.0)],
        observed,
        restarts: 0,
    };
    let report = calibrate_scene(&scene, &setup, &LmOptions::default(), &mut |_| {}).unwrap();
    let fitted = report.params["young_modulus:pad"];
    assert!(
        ((fitted - truth) / truth).abs() <= 1e-4,
        "fitted {fitted}, true {truth}: {report:?}"
    );
    assert!(report.converged, "{report:?}");
    assert!(report.iterations <= 20, "{} iterations", report.iterations);
}

/// `simulate --sensitivity` in a mixed scene: the pad of `lift_pad.toml` pushed up by a
/// constant force (`torque`, N) instead of the PD. The palm's sensitivities (`rigid_sensitivities`)
/// and the pad's (`sensitivities`) with respect to that force, to E and to the palm's initial
/// velocity (`v:lift`, a rigid initial-state name taken with the soft ones in a mixed scene)
/// equal central differences of two runs each, to 1e-6 relative.
#[test]
fn simulate_reports_mixed_sensitivities_equal_to_differences_of_two_runs() {
    let root = cli_support::root();
    let dir = cli_support::scratch("pushed-pad");
    let text = std::fs::read_to_string(root.join("scenes/lift_pad.toml"))
        .unwrap()
        .replace("../meshes/", &format!("{}/meshes/", root.display()))
        .replace("../urdf/", &format!("{}/urdf/", root.display()))
        .replace("kp = [200.0]", "torque = [1.2]")
        .replace("kd = [20.0]", "")
        .replace("target = [0.0]", "")
        + "\n[contact]\ntolerance = 1e-12\nmax_iterations = 100000\n";
    let scene = dir.join("pushed_pad.toml");
    std::fs::write(&scene, text).unwrap();
    let scene = scene.to_str().unwrap();
    let final_json = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["simulate", scene, "--steps", "20"];
        args.extend(extra);
        let out = cli_support::run(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let with = final_json(&["--sensitivity", "tau:lift[0],young_modulus:pad,v:lift"]);
    for (name, set, value, eps) in [
        ("tau:lift[0]", "robot.lift.torque", "[{}]", 1e-4),
        ("v:lift[0]", "robot.lift.v", "[{}]", 1e-4),
        (
            "young_modulus:pad",
            "soft_body.pad.young_modulus",
            "{}",
            10.0,
        ),
    ] {
        let base = match &name[..1] {
            "t" => 1.2,
            "v" => 0.0,
            _ => 1.0e5,
        };
        let at = |x: f64| {
            let v = value.replace("{}", &format!("{x}"));
            let arg = format!("{set}={v}");
            final_json(&["--set", arg.as_str()])
        };
        let (p, m) = (at(base + eps), at(base - eps));
        let q = |j: &serde_json::Value| j["robots"][0]["q"][0].as_f64().unwrap();
        let fd = (q(&p) - q(&m)) / (2.0 * eps);
        let analytic = with["rigid_sensitivities"][name]["lift"]["q"][0]
            .as_f64()
            .unwrap();
        assert!(
            (fd - analytic).abs() <= 1e-6 * analytic.abs(),
            "{name}: palm q {analytic:e} vs {fd:e}"
        );
        let z = |j: &serde_json::Value| j["soft_bodies"][0]["positions"][0][2].as_f64().unwrap();
        let fd = (z(&p) - z(&m)) / (2.0 * eps);
        let analytic = with["sensitivities"][name][0][2].as_f64().unwrap();
        assert!(analytic.abs() > 1e-12, "{name}: the pad moves with it");
        assert!(
            (fd - analytic).abs() <= 1e-6 * analytic.abs(),
            "{name}: pad node 0 z {analytic:e} vs {fd:e}"
        );
    }
}
