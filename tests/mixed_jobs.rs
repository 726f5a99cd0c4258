//! The jobs in scenes where soft and rigid bodies share an NCP (issue 19 §4): calibrating a
//! soft body's Young's modulus with a rigid body attached to it, through the forward
//! sensitivities of mixed steps. The observation is made by the plain stepper at a known E;
//! the fit starts three times too small and must recover it to 1e-4 relative.

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
