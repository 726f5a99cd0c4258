//! Shared by the calibration examples: generate an observation by simulating a scene with
//! known parameter values, fit from a wrong guess with `calibrate_scene`, print every
//! iteration and write the report's JSON, SVG and CSV files.

use std::path::{Path, PathBuf};
use std::time::Instant;

use diffsoro::calibrate::{
    CalibrationProgress, CalibrationSetup, LmOptions, Parametrisation, calibrate_scene,
};
use diffsoro::scene::{FinalState, Scene, Stepper};

/// One calibration case: which parameters, their true values (put into the observation) and
/// the wrong starting guess.
pub struct Case<'a> {
    /// A short name, also the output sub-folder.
    pub name: &'a str,
    /// `(parameter, true value, initial guess)`; the scene override of a true value is
    /// `soft_body.BODY.KIND=VALUE`.
    pub params: &'a [(&'a str, f64, f64)],
}

/// The project's own files.
pub fn project_file(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// Simulates `scene_path` (with `overrides`) under the true values of `case` and writes the
/// observation to `out/observed.json`; then fits from the guesses, prints the iterations and
/// the final relative errors, and writes the report to `out`.
pub fn run_case(
    scene_path: &Path,
    overrides: &[String],
    case: &Case,
    out: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    println!("\n== {}: {} ==", case.name, scene_path.display());
    // The observation: the plain simulator with the true values set in the scene file.
    let mut truth_overrides = overrides.to_vec();
    for &(name, truth, _) in case.params {
        let (kind, body) = name.split_once(':').ok_or("parameter KIND:BODY")?;
        truth_overrides.push(format!("soft_body.{body}.{kind}={truth}"));
    }
    let truth_scene = Scene::load(scene_path, &truth_overrides)?;
    let mut state = truth_scene.initial_state();
    let mut stepper = Stepper::new(&truth_scene)?;
    for _ in 0..truth_scene.simulation.steps {
        stepper.step(&truth_scene, &mut state)?;
    }
    let observed = FinalState::new(&truth_scene, &state);
    std::fs::create_dir_all(out)?;
    std::fs::write(out.join("observed.json"), serde_json::to_vec(&observed)?)?;
    println!(
        "observation: {} steps with {}, {} contacts at the end",
        truth_scene.simulation.steps,
        truth_overrides[overrides.len()..].join(", "),
        observed.contacts
    );

    // The fit, from the wrong guesses.
    let scene = Scene::load(scene_path, overrides)?;
    let names: Vec<&str> = case.params.iter().map(|p| p.0).collect();
    let setup = CalibrationSetup {
        params: Parametrisation::parse(&names)?,
        initial: case.params.iter().map(|p| Some(p.2)).collect(),
        observed,
        restarts: diffsoro::calibrate::DEFAULT_RESTARTS,
    };
    let started = Instant::now();
    let mut simulations = 0;
    let report = calibrate_scene(&scene, &setup, &LmOptions::default(), &mut |event| {
        if let CalibrationProgress::Evaluated { .. } | CalibrationProgress::Failed { .. } = event {
            simulations += 1;
        }
    })?;
    let seconds = started.elapsed().as_secs_f64();
    println!("iteration  loss (m²)    {}", names.join("  "));
    for (i, loss) in report.loss.iter().enumerate() {
        let values: Vec<String> = names
            .iter()
            .map(|n| format!("{:.8e}", report.param_history[*n][i]))
            .collect();
        println!("{i:>9}  {loss:.3e}  {}", values.join("  "));
    }
    for &(name, truth, guess) in case.params {
        let fitted = report.params[name];
        println!(
            "{name}: guess {guess:e}, fitted {fitted:.10e}, true {truth:e}, relative error {:.1e}",
            ((fitted - truth) / truth).abs()
        );
    }
    println!(
        "{} iterations ({} simulations with sensitivities), converged: {}, {:.2} s ({:.3} s per iteration)",
        report.iterations,
        simulations,
        report.converged,
        seconds,
        seconds / report.iterations.max(1) as f64
    );
    let written = report.write_outputs(out, diffsoro::chart::ScaleChoice::Auto)?;
    println!(
        "wrote {} and {} files (calibration.json, loss and parameter plots as SVG + CSV) in {}",
        out.join("observed.json").display(),
        written.len(),
        out.display()
    );
    Ok(())
}
