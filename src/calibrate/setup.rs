//! The `calibrate` job's input: the observed final state, the parameters to fit and their
//! starting values, each checked against the scene with errors that name the culprit; and
//! the entry point that runs the fit on a scene.

use std::path::Path;

use super::final_state_fit::{CalibrationProgress, FinalStateFit, observed_positions};
use super::levenberg_marquardt::{LmOptions, LmResult, levenberg_marquardt_in_box};
use super::parametrisation::{ParameterName, Parametrisation, Reparametrised};
use super::report::{CalibrationReport, reached};
use crate::error::{Error, Location, Result};
use crate::scene::{CommandLog, CommandSchedule, FinalState, Scene};

/// A checked calibration problem: what to fit, from where, against what.
#[derive(Debug, Clone)]
pub struct CalibrationSetup {
    /// The parameters to fit, in order.
    pub params: Parametrisation,
    /// Starting physical value per parameter (`None`: the scene's own value).
    pub initial: Vec<Option<f64>>,
    /// The observed final state (docs/outputs.md), one body per scene body with matching node
    /// counts.
    pub observed: FinalState,
    /// How many more fits to start, from a grid over the parameters with a finite range, when
    /// the first does not reach the answer ([`calibrate_scene`]; 0: none).
    pub restarts: usize,
}

/// The default number of restarts of [`CalibrationSetup::restarts`].
pub const DEFAULT_RESTARTS: usize = 4;

impl CalibrationSetup {
    /// Builds and checks the setup of `diffsoro calibrate SCENE --observed FILE --param NAME…
    /// [--bounds NAME=LO,HI…] [--init NAME=VALUE…]`: parameter names (known kinds, existing
    /// bodies and actuators, no repeats), `--bounds` entries
    /// ([`Parametrisation::with_bounds`]), `--init` entries (`NAME=VALUE` with `NAME` one of
    /// the parameters and `VALUE` in its range), and the observation file
    /// ([`load_observation`]); [`DEFAULT_RESTARTS`] restarts.
    pub fn new(
        scene: &Scene,
        observed: &Path,
        params: &[String],
        bounds: &[String],
        init: &[String],
    ) -> Result<CalibrationSetup> {
        let params = Parametrisation::parse(params)?.with_bounds(bounds)?;
        if scene.bodies.is_empty() {
            return Err(Error::invalid(
                "--param",
                "these parameters are fitted to the soft bodies' final positions, and the scene has none (in a scene of rigid bodies alone, fit a free body's initial velocity: `velocity:BODY`)",
            ));
        }
        check_targets(scene, &params)?;
        let initial = parse_initial_values(&params, init)?;
        let observed = load_observation(observed, scene)?;
        Ok(CalibrationSetup {
            params,
            initial,
            observed,
            restarts: DEFAULT_RESTARTS,
        })
    }
}

/// Checks that every material parameter names a soft body of `scene` and every actuator
/// parameter one of its actuators ([`ParameterName::resolve`]); the error lists the known
/// names.
pub fn check_targets(scene: &Scene, params: &Parametrisation) -> Result<()> {
    for name in &params.names {
        name.resolve(scene)?;
    }
    Ok(())
}

/// Parses `--init NAME=VALUE` entries into one optional starting value per parameter of
/// `params`: the name must be one of them (given once), the value a number in its range.
pub fn parse_initial_values(params: &Parametrisation, init: &[String]) -> Result<Vec<Option<f64>>> {
    let mut out = vec![None; params.len()];
    for entry in init {
        let what = || format!("--init `{entry}`");
        let Some((name, value)) = entry.split_once('=') else {
            return Err(Error::invalid(what(), "is not of the form NAME=VALUE"));
        };
        let name = ParameterName::parse(name.trim())?;
        let Some(k) = params.index_of(&name) else {
            return Err(Error::invalid(
                what(),
                format!("`{name}` is not one of the --param parameters"),
            ));
        };
        if out[k].is_some() {
            return Err(Error::invalid(what(), format!("`{name}` is given twice")));
        }
        let value: f64 = value
            .trim()
            .parse()
            .map_err(|_| Error::invalid(what(), format!("`{}` is not a number", value.trim())))?;
        params
            .check(k, value)
            .map_err(|e| Error::invalid(what(), e.to_string()))?;
        out[k] = Some(value);
    }
    Ok(out)
}

/// Reads an observed final state (the JSON `simulate` writes) and checks it against `scene`:
/// every soft body of the scene must be there, by name, with one position per node of its
/// mesh. Errors name the file and the body.
pub fn load_observation(path: &Path, scene: &Scene) -> Result<FinalState> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let file = path.display().to_string();
    let observed: FinalState = serde_json::from_str(&text)
        .map_err(|e| Error::parse(&file, Location::Line(e.line()), e.to_string()))?;
    observed_positions(scene, &observed, &file)?;
    Ok(observed)
}

/// Fits `setup.params` of `scene` so that its final state after `scene.simulation.steps`
/// steps from its initial state matches `setup.observed` (paper 004 §IV-C): Levenberg–Marquardt
/// ([`levenberg_marquardt_in_box`] with `options`) over the coordinates of `setup.params` in
/// their box strictly inside each parameter's range ([`Reparametrised`]), on the residual
/// `x_final − x_observed` and its Jacobian from the forward trajectory sensitivities
/// ([`FinalStateFit`]), started at `setup.initial` (or the scene's values; a start on a
/// closed end of its range starts just inside). Each evaluation (one simulation of the run)
/// reports its steps and its loss through `progress`.
///
/// When that fit does not reach the answer (its loss stays above
/// [`super::CONVERGED_LOSS_FRACTION`] of the initial loss: a local minimum or a bound), up to
/// `setup.restarts` more fits start from the points `k/(restarts + 1)`, k = 1, 2, …, of the
/// boxes of the parameters whose range is finite (the others keep their start), until one
/// reaches it; the report is that of the fit with the least loss, and says how many restarts
/// ran. A restart whose first simulation fails is skipped.
///
/// Errors: a scene whose step is not differentiable (the error of
/// [`crate::diff::check_differentiable`]), a parameter the scene does not have, an observation
/// that does not match the scene, or an error of the simulation at the start.
pub fn calibrate_scene(
    scene: &Scene,
    setup: &CalibrationSetup,
    options: &LmOptions,
    progress: &mut dyn FnMut(CalibrationProgress<'_>),
) -> Result<CalibrationReport> {
    calibrate_scene_with_inputs(scene, setup, None, options, progress)
}

/// [`calibrate_scene`], every simulation of the fit run under the logged commands `inputs`
/// when given (`calibrate --inputs`; [`FinalStateFit::with_inputs`]): from the scene's initial
/// state with the first commands' inputs set, for the whole steps that reach the log's last
/// row (`scene::CommandSchedule::steps_to_last_row`, as `simulate --inputs` without
/// `--steps`) instead of the scene's `simulation.steps`. Errors as [`calibrate_scene`], and
/// [`FinalStateFit::with_inputs`]'s.
pub fn calibrate_scene_with_inputs(
    scene: &Scene,
    setup: &CalibrationSetup,
    inputs: Option<&CommandLog>,
    options: &LmOptions,
    progress: &mut dyn FnMut(CalibrationProgress<'_>),
) -> Result<CalibrationReport> {
    assert_eq!(
        setup.initial.len(),
        setup.params.len(),
        "one optional starting value per parameter"
    );
    let map = &setup.params;
    let steps = match inputs {
        Some(log) => CommandSchedule::new(scene, log.clone())?.steps_to_last_row(),
        None => scene.simulation.steps,
    };
    let mut fit = FinalStateFit::new(scene, map, &setup.observed, steps, progress)?;
    if let Some(log) = inputs {
        fit = fit.with_inputs(log.clone())?;
    }
    let start: Vec<f64> = fit
        .values()
        .into_iter()
        .zip(&setup.initial)
        .map(|(own, given)| given.unwrap_or(own))
        .collect();
    let s0 = map.coordinates(&start)?;
    let (lower, upper) = map.coordinate_box();
    let run = |fit: &mut FinalStateFit<'_>, s: &[f64]| {
        let mut problem = Reparametrised { problem: fit, map };
        levenberg_marquardt_in_box(&mut problem, s, &lower, &upper, options)
    };
    let mut best: LmResult = run(&mut fit, &s0)?;
    let initial_loss = best.history[0].loss;
    let gridded: Vec<usize> = (0..map.len())
        .filter(|&k| map.ranges[k].is_finite(map.names[k].kind))
        .collect();
    let mut restarts = 0;
    if !gridded.is_empty() {
        for k in 1..=setup.restarts {
            if reached(&best, initial_loss) {
                break;
            }
            let t = k as f64 / (setup.restarts + 1) as f64;
            let mut s = s0.clone();
            for &i in &gridded {
                s[i] = lower[i] + t * (upper[i] - lower[i]);
            }
            restarts += 1;
            fit.announce(CalibrationProgress::Restart {
                restart: k,
                values: &map.physical(&s),
            });
            // A start whose simulation fails (a NaN residual) is an error of the fit: skip it.
            if let Ok(result) = run(&mut fit, &s)
                && result.loss < best.loss
            {
                best = result;
            }
        }
    }
    Ok(CalibrationReport::from_fits(
        map,
        &best,
        initial_loss,
        restarts,
    ))
}
