//! The `calibrate` job's input: the observed final state, the parameters to fit and their
//! starting values, each checked against the scene with errors that name the culprit; and
//! the entry point that runs the fit on a scene.

use std::path::Path;

use super::final_state_fit::{CalibrationProgress, FinalStateFit, observed_positions};
use super::levenberg_marquardt::{LmOptions, levenberg_marquardt};
use super::parametrisation::{ParameterName, Parametrisation, Reparametrised};
use super::report::CalibrationReport;
use crate::error::{Error, Location, Result};
use crate::scene::{FinalState, Scene};

/// A checked calibration problem: what to fit, from where, against what.
#[derive(Debug, Clone)]
pub struct CalibrationSetup {
    /// The parameters to fit, in order.
    pub params: Parametrisation,
    /// Starting physical value per parameter (`None`: the scene's own value).
    pub initial: Vec<Option<f64>>,
    /// The observed final state (DESIGN.md §4), one body per scene body with matching node
    /// counts.
    pub observed: FinalState,
}

impl CalibrationSetup {
    /// Builds and checks the setup of `diffsoro calibrate SCENE --observed FILE --param NAME…
    /// [--init NAME=VALUE…]`: parameter names (known kinds, existing bodies and actuators, no
    /// repeats), `--init` entries (`NAME=VALUE` with `NAME` one of the parameters and `VALUE` in
    /// its range), and the observation file ([`load_observation`]).
    pub fn new(
        scene: &Scene,
        observed: &Path,
        params: &[String],
        init: &[String],
    ) -> Result<CalibrationSetup> {
        let params = Parametrisation::parse(params)?;
        check_targets(scene, &params)?;
        let initial = parse_initial_values(&params, init)?;
        let observed = load_observation(observed, scene)?;
        Ok(CalibrationSetup {
            params,
            initial,
            observed,
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
        name.unconstrained(value)
            .map_err(|e| Error::invalid(what(), e.to_string()))?; // in range
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
/// ([`levenberg_marquardt`] with `options`) over the unconstrained variables of
/// `setup.params` ([`Reparametrised`]) on the residual `x_final − x_observed` and its Jacobian
/// from the forward trajectory sensitivities ([`FinalStateFit`]), started at `setup.initial`
/// (or the scene's values). Each evaluation (one simulation of the run) reports its steps and
/// its loss through `progress`.
///
/// Errors: a scene whose step is not differentiable (the error of
/// [`crate::diff::check_differentiable`]), a parameter the scene does not have, an observation
/// that does not match the scene, or an error of the simulation.
pub fn calibrate_scene(
    scene: &Scene,
    setup: &CalibrationSetup,
    options: &LmOptions,
    progress: &mut dyn FnMut(CalibrationProgress<'_>),
) -> Result<CalibrationReport> {
    assert_eq!(
        setup.initial.len(),
        setup.params.len(),
        "one optional starting value per parameter"
    );
    let mut fit = FinalStateFit::new(
        scene,
        &setup.params,
        &setup.observed,
        scene.simulation.steps,
        progress,
    )?;
    let start: Vec<f64> = fit
        .values()
        .into_iter()
        .zip(&setup.initial)
        .map(|(own, given)| given.unwrap_or(own))
        .collect();
    let s0 = setup.params.unconstrained(&start)?;
    let mut problem = Reparametrised {
        problem: &mut fit,
        map: &setup.params,
    };
    let result = levenberg_marquardt(&mut problem, &s0, options)?;
    Ok(CalibrationReport::from_fit(&setup.params, &result))
}
