//! `diffsoro calibrate`: the fit of material parameters (Levenberg–Marquardt on the
//! trajectory sensitivities, `calibrate::calibrate_scene`) or of a free body's initial
//! velocity (`calibrate::fit_initial_velocity`), its progress on stderr, its report and files.

use std::path::Path;
use std::time::Instant;

use diffsoro::calibrate::CalibrationProgress;
use diffsoro::diff::parse_rigid_parameter;
use diffsoro::scene::{CommandLog, CommandSchedule, FinalState, MarkerUnit, RunStart, Scene};
use indicatif::ProgressBar;

use crate::out_folder::with_out_folder;
use crate::simulate_command::InputsFlags;
use crate::{load_scene, print_json, progress, write_frames, write_run_view};

/// The `calibrate` flags that define the fit.
pub(crate) struct CalibrateFlags<'a> {
    pub(crate) params: &'a [String],
    pub(crate) bounds: &'a [String],
    pub(crate) init: &'a [String],
    pub(crate) restarts: usize,
    pub(crate) error_scale: diffsoro::chart::ScaleChoice,
    /// `--view`: write the fitted run's frames and the viewer page into `--out`.
    pub(crate) view: bool,
    /// `--inputs` and `--start`: every simulation of the fit under logged commands.
    pub(crate) inputs: InputsFlags<'a>,
}

/// `--marker-unit`, `--compare` and `--register` of a fit to trials.
pub(crate) struct TrialFlags<'a> {
    pub(crate) unit: MarkerUnit,
    pub(crate) compare: Option<&'a str>,
    pub(crate) register: Option<&'a str>,
}

/// What a fit is compared with: an observed final state (`--observed`) or trials (`--trial`).
pub(crate) enum Observed<'a> {
    FinalState(&'a Path),
    Trials(&'a [String], TrialFlags<'a>),
}

impl<'a> Observed<'a> {
    /// `--observed FILE` or the `--trial` arguments (clap requires one and forbids both).
    pub(crate) fn new(
        observed: Option<&'a Path>,
        trials: &'a [String],
        flags: TrialFlags<'a>,
    ) -> Observed<'a> {
        match observed {
            Some(file) => Observed::FinalState(file),
            None => Observed::Trials(trials, flags),
        }
    }
}

/// `calibrate`: checks the input against the scene and `--out` (created before the fit,
/// removed again if the fit fails), fits (a progress bar per simulation of the run, a line
/// per evaluation on stderr), prints the report; with `out`, writes `calibration.json` and
/// the plots.
pub(crate) fn calibrate(
    path: &Path,
    observed: Observed<'_>,
    flags: &CalibrateFlags<'_>,
    out: Option<&Path>,
    set: &[String],
) -> diffsoro::Result<()> {
    let scene = load_scene(path, set)?;
    let observed = match observed {
        Observed::FinalState(file) => file,
        Observed::Trials(trials, trial_flags) => {
            return calibrate_to_trials(&scene, trials, &trial_flags, flags, out);
        }
    };
    let names: Vec<&str> = flags
        .params
        .iter()
        .flat_map(|p| p.split(','))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let rigid: Vec<_> = names
        .iter()
        .map(|p| parse_rigid_parameter(&scene, p))
        .collect::<diffsoro::Result<_>>()?;
    let commands = flags.inputs.read()?;
    if rigid.iter().any(Option::is_some) {
        if commands.is_some() {
            return Err(diffsoro::Error::invalid(
                "--inputs",
                "applies to the fit of soft parameters; a rigid body's initial velocity is fitted without logged commands",
            ));
        }
        return calibrate_rigid_velocity(&scene, observed, flags, out, &names, rigid);
    }
    let inputs = match commands {
        Some((_, RunStart::Static)) => {
            return Err(diffsoro::Error::invalid(
                "calibrate --inputs",
                "the fit's sensitivities start from the scene's initial state; the static start's sensitivity to the parameters is not built yet: give --start scene",
            ));
        }
        Some((log, RunStart::Scene)) => {
            warn_clamps(&scene, &log)?;
            Some(log)
        }
        None => None,
    };
    let mut setup = diffsoro::calibrate::CalibrationSetup::new(
        &scene,
        observed,
        flags.params,
        flags.bounds,
        flags.init,
    )?;
    setup.restarts = flags.restarts;
    with_out_folder(out, |out| {
        run_calibration(
            &scene,
            &setup,
            inputs.as_ref(),
            out.map(|dir| (dir, flags.error_scale, flags.view)),
        )
    })
}

/// Prints the clamp warnings of `log` in `scene` once: a logged run's inputs do not depend on
/// the fitted parameters, so every simulation of the fit clamps the same steps.
fn warn_clamps(scene: &Scene, log: &CommandLog) -> diffsoro::Result<()> {
    let mut scratch = scene.clone();
    let mut schedule = CommandSchedule::new(&scratch, log.clone())?;
    schedule.apply_start(&mut scratch);
    for _ in 0..schedule.steps_to_last_row() {
        schedule.apply_next(&mut scratch);
    }
    for w in schedule.take_warnings() {
        eprintln!("warning: {w}");
    }
    let clamped: Vec<String> = schedule
        .clamped()
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(name, n)| format!("{name}: {n}"))
        .collect();
    if !clamped.is_empty() {
        eprintln!(
            "warning: every simulation of the fit clamps the same steps' inputs ({})",
            clamped.join(", ")
        );
    }
    Ok(())
}

/// `calibrate` with rigid parameters: components of one free body's initial velocity
/// (`velocity:BODY[k]`, `angular_velocity:BODY[k]`), fitted to the body's observed final
/// position (`calibrate::fit_initial_velocity`).
fn calibrate_rigid_velocity(
    scene: &Scene,
    observed: &Path,
    flags: &CalibrateFlags<'_>,
    out: Option<&Path>,
    names: &[&str],
    parsed: Vec<Option<Vec<diffsoro::diff::RigidParameter>>>,
) -> diffsoro::Result<()> {
    if !flags.bounds.is_empty() {
        return Err(diffsoro::Error::invalid(
            "--bounds",
            "a rigid body's initial velocity is fitted without bounds",
        ));
    }
    if flags.view {
        return Err(diffsoro::Error::invalid(
            "--view",
            "is not available for a rigid body's initial velocity yet (simulate the fitted velocity with `simulate --set rigid_body.NAME.velocity=[…] --out DIR --view`)",
        ));
    }
    let what = "--param";
    let mut params = Vec::new();
    for (name, p) in names.iter().zip(parsed) {
        let Some(list) = p else {
            return Err(diffsoro::Error::invalid(
                what,
                format!(
                    "`{name}` is a soft parameter: one fit takes parameters of one kind, soft or rigid"
                ),
            ));
        };
        params.extend(list);
    }
    let body = params[0]
        .name
        .split([':', '['])
        .nth(1)
        .unwrap_or_default()
        .to_string();
    if params.iter().any(|p| {
        p.seed != diffsoro::diff::RigidSeed::Velocity
            || p.name.split([':', '[']).nth(1) != Some(body.as_str())
    }) {
        return Err(diffsoro::Error::invalid(
            what,
            "rigid calibration fits components of one free body's initial velocity (`velocity:BODY`, `angular_velocity:BODY`, or one component `velocity:BODY[k]`)",
        ));
    }
    let systems = &scene.rigid.systems;
    let s = systems
        .iter()
        .position(|x| x.name == body)
        .expect("parsed against the scene");
    let offset: usize = systems[..s].iter().map(|x| x.nv()).sum();
    let components: Vec<usize> = params.iter().map(|p| p.index - offset).collect();
    let mut guess: Vec<f64> = components.iter().map(|&c| systems[s].v0[c]).collect();
    for entry in flags.init {
        let Some((name, value)) = entry.split_once('=') else {
            return Err(diffsoro::Error::invalid(
                format!("--init `{entry}`"),
                "is not of the form NAME=VALUE",
            ));
        };
        let k = params
            .iter()
            .position(|p| p.name == name.trim())
            .ok_or_else(|| {
                let known: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
                diffsoro::Error::invalid(
                    format!("--init `{entry}`"),
                    format!("names none of the parameters {known:?}"),
                )
            })?;
        guess[k] = value
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| {
                diffsoro::Error::invalid(
                    format!("--init `{entry}`"),
                    "the value is not a finite number",
                )
            })?;
    }
    let text = std::fs::read_to_string(observed).map_err(|e| diffsoro::Error::io(observed, e))?;
    let state: FinalState = serde_json::from_str(&text).map_err(|e| {
        diffsoro::Error::parse(
            observed.display().to_string(),
            diffsoro::error::Location::Line(e.line()),
            e.to_string(),
        )
    })?;
    let position = state
        .rigid_bodies
        .iter()
        .find(|b| b.name == body)
        .map(|b| b.position)
        .ok_or_else(|| {
            diffsoro::Error::invalid(
                format!("--observed `{}`", observed.display()),
                format!("has no rigid body `{body}` in `rigid_bodies`"),
            )
        })?;
    eprintln!(
        "fitting {} of {body} to its observed final position {position:?} m",
        params
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let fit = diffsoro::calibrate::fit_initial_velocity(
        scene,
        &body,
        &components,
        &guess,
        diffsoro::math::Vec3::from(position),
        scene.simulation.steps,
    )?;
    let names: Vec<String> = params.iter().map(|p| p.name.clone()).collect();
    let report = diffsoro::calibrate::CalibrationReport::from_unbounded_fit(&names, &fit);
    with_out_folder(out, |out| {
        if let Some(dir) = out {
            let written = report.write_outputs(dir, flags.error_scale)?;
            eprintln!("wrote {} files in {}", written.len(), dir.display());
        }
        print_json(&report)
    })
}

/// The fit of [`calibrate`] once its input is checked.
fn run_calibration(
    scene: &Scene,
    setup: &diffsoro::calibrate::CalibrationSetup,
    inputs: Option<&CommandLog>,
    out: Option<(&Path, diffsoro::chart::ScaleChoice, bool)>,
) -> diffsoro::Result<()> {
    use diffsoro::calibrate::{LmOptions, calibrate_scene_with_inputs};
    let names: Vec<String> = setup.params.names.iter().map(|n| n.to_string()).collect();
    let mut on_progress = progress_reporter(names);
    let report = calibrate_scene_with_inputs(
        scene,
        setup,
        inputs,
        &LmOptions::default(),
        &mut on_progress,
    )?;
    if let Some((dir, loss_scale, view)) = out {
        let written = report.write_outputs(dir, loss_scale)?;
        eprintln!(
            "wrote {} files in {}; {} shows the run on one page",
            written.len(),
            dir.display(),
            dir.join("summary.svg").display()
        );
        if view {
            let fitted = report.fitted_scene(scene)?;
            write_frames(&fitted, fitted.simulation.steps, dir, inputs)?;
            write_run_view(dir)?;
        }
    }
    print_json(&report)
}

/// `calibrate --trial …`: the trials read and checked against the scene, the fit (a progress
/// bar per simulation of all trials, a line per evaluation), the report printed; with `out`,
/// its files (`calibration.json`, the loss and parameter plots, per trial and marker the
/// measured and simulated coordinates and the residuals over time, `summary.svg`).
fn calibrate_to_trials(
    scene: &Scene,
    trials: &[String],
    trial_flags: &TrialFlags<'_>,
    flags: &CalibrateFlags<'_>,
    out: Option<&Path>,
) -> diffsoro::Result<()> {
    use diffsoro::calibrate::LmOptions;
    use diffsoro::calibrate::trials::{
        TrialOptions, TrialSetup, calibrate_trials, parse_comparison,
    };
    if flags.view {
        return Err(diffsoro::Error::invalid(
            "--view",
            "is not available with --trial yet (simulate a trial at the fitted values with `simulate --inputs INPUTS.csv --set … --out DIR --view`)",
        ));
    }
    if flags.inputs.inputs.is_some() {
        return Err(diffsoro::Error::invalid(
            "--inputs",
            "each --trial carries its own command log (INPUTS.csv:MARKERS.csv)",
        ));
    }
    let (comparison, registration) = parse_comparison(
        trial_flags.compare,
        trial_flags.register,
        ["--compare", "--register"],
    )?;
    let options = TrialOptions {
        start: flags.inputs.start.unwrap_or_default(),
        comparison,
        registration,
    };
    let names: Vec<String> = flags
        .params
        .iter()
        .flat_map(|p| p.split(','))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect();
    let setup = TrialSetup::from_arguments(
        scene,
        trials,
        trial_flags.unit,
        &names,
        flags.bounds,
        flags.init,
        options,
    )?;
    with_out_folder(out, |out| {
        let mut on_progress = progress_reporter(names.clone());
        let report = calibrate_trials(scene, &setup, &LmOptions::default(), &mut on_progress)?;
        for w in &report.warnings {
            eprintln!("warning: {w}");
        }
        if let Some(dir) = out {
            let written = report.write_outputs(dir, flags.error_scale)?;
            eprintln!(
                "wrote {} files in {}; {} shows the fit on one page",
                written.len(),
                dir.display(),
                dir.join("summary.svg").display()
            );
        }
        print_json(&report)
    })
}

/// The progress of a fit on stderr: a bar per simulation (over its steps), a line per
/// evaluation with its values and loss, a line per restart and per failed trial step.
fn progress_reporter(names: Vec<String>) -> impl FnMut(CalibrationProgress<'_>) {
    let mut bar: Option<ProgressBar> = None;
    let started = Instant::now();
    move |event: CalibrationProgress<'_>| match event {
        CalibrationProgress::Step {
            evaluation,
            step,
            steps,
        } => {
            let steps = steps as u64;
            let b = bar.get_or_insert_with(|| {
                progress(steps, &format!("calibrate: simulation {evaluation}"))
            });
            b.set_position(step as u64);
        }
        CalibrationProgress::Evaluated {
            evaluation,
            values,
            loss,
            unconverged_contact_steps,
        } => {
            if let Some(b) = bar.take() {
                b.finish_and_clear();
            }
            let values = named_values(&names, values);
            let warning = if unconverged_contact_steps > 0 {
                format!(
                    " (warning: the contact NCP stopped at its iteration limit in {unconverged_contact_steps} steps)"
                )
            } else {
                String::new()
            };
            eprintln!(
                "simulation {evaluation}: {}, loss {loss:.3e} m², {:.1} s elapsed{warning}",
                values.join(", "),
                started.elapsed().as_secs_f64()
            );
        }
        CalibrationProgress::Restart { restart, values } => {
            if let Some(b) = bar.take() {
                b.finish_and_clear();
            }
            let values = named_values(&names, values);
            eprintln!(
                "restart {restart}: the fit so far missed the answer (a local minimum or a bound); starting again from {}",
                values.join(", ")
            );
        }
        CalibrationProgress::Failed {
            evaluation,
            values,
            error,
        } => {
            if let Some(b) = bar.take() {
                b.finish_and_clear();
            }
            let values = named_values(&names, values);
            eprintln!(
                "simulation {evaluation} at {} failed ({error}): a rejected trial step, the damping increased",
                values.join(", ")
            );
        }
    }
}

/// `name = value` for each parameter of a calibration progress line.
fn named_values(names: &[String], values: &[f64]) -> Vec<String> {
    names
        .iter()
        .zip(values)
        .map(|(n, v)| format!("{n} = {v:.6e}"))
        .collect()
}
