//! The entry point of a trial fit (`calibrate --trial`): the checked setup, the frame's
//! start, Levenberg–Marquardt over the parameters' and the frame's coordinates, and the report
//! with the Gauss–Newton statistics at the optimum.

use super::super::final_state_fit::CalibrationProgress;
use super::super::levenberg_marquardt::{LmOptions, levenberg_marquardt_in_box};
use super::super::parametrisation::Parametrisation;
use super::super::report::CalibrationReport;
use super::super::setup::parse_initial_values;
use super::fit::{TrialFit, TrialOptions};
use super::frame::Frame;
use super::report::{TrialOutcome, TrialReport, TrialSummary};
use super::statistics::statistics;
use super::trial::Trial;
use crate::error::{Error, Result};
use crate::scene::{MarkerUnit, Scene};

/// A checked trial fit: what to fit, from where, against which trials, how.
#[derive(Debug, Clone)]
pub struct TrialSetup {
    /// The parameters to fit, in order.
    pub params: Parametrisation,
    /// Starting physical value per parameter (`None`: the scene's own value).
    pub initial: Vec<Option<f64>>,
    /// The trials.
    pub trials: Vec<Trial>,
    /// How they are run and compared.
    pub options: TrialOptions,
}

impl TrialSetup {
    /// Builds and checks the setup of a fit of `scene`'s `params` (`--param NAME…
    /// [--bounds NAME=LO,HI…] [--init NAME=VALUE…]`): the parameter names and ranges, and the
    /// starting values (each in its range); no trial yet (set [`TrialSetup::trials`], or use
    /// [`TrialSetup::from_arguments`]).
    pub fn new(
        scene: &Scene,
        params: &[String],
        bounds: &[String],
        init: &[String],
        options: TrialOptions,
    ) -> Result<TrialSetup> {
        let params = Parametrisation::parse(params)?.with_bounds(bounds)?;
        if scene.bodies.is_empty() {
            return Err(Error::invalid(
                "--trial",
                "trials are compared with markers on soft bodies, and the scene has none",
            ));
        }
        let initial = parse_initial_values(&params, init)?;
        Ok(TrialSetup {
            params,
            initial,
            trials: Vec::new(),
            options,
        })
    }

    /// The setup of `diffsoro calibrate SCENE --trial INPUTS.csv:MARKERS.csv… --param NAME…
    /// [--bounds NAME=LO,HI…] [--init NAME=VALUE…]`: [`TrialSetup::new`]'s, then the trials
    /// ([`Trial::from_argument`], coordinates in `unit`).
    pub fn from_arguments(
        scene: &Scene,
        trials: &[String],
        unit: MarkerUnit,
        params: &[String],
        bounds: &[String],
        init: &[String],
        options: TrialOptions,
    ) -> Result<TrialSetup> {
        let mut setup = TrialSetup::new(scene, params, bounds, init, options)?;
        setup.trials = trials
            .iter()
            .map(|a| Trial::from_argument(scene, a, unit))
            .collect::<Result<Vec<_>>>()?;
        Ok(setup)
    }
}

/// Fits `setup.params` of `scene` to `setup.trials`: one set of parameter values for every
/// trial, each trial run from its own start under its own commands (`TrialFit`), jointly with
/// the camera frame when registering ([`fit_trials`]). Errors: those of [`TrialFit::new`] and
/// [`fit_trials`]. A run that fails at a trial point of the fit is a rejected step (reported
/// through `progress`), never an error.
pub fn calibrate_trials(
    scene: &Scene,
    setup: &TrialSetup,
    options: &LmOptions,
    progress: &mut dyn FnMut(CalibrationProgress<'_>),
) -> Result<TrialReport> {
    let mut fit = TrialFit::new(
        scene,
        &setup.params,
        setup.trials.clone(),
        setup.options,
        progress,
    )?;
    fit_trials(&mut fit, &setup.initial, options)
}

/// Levenberg–Marquardt (`options`) on `fit` over the parameters' coordinates in their box and
/// the frame's, from `initial` (physical, per parameter; `None`: the scene's own value) and the
/// frame [`TrialFit::initial_frame`] gives at those values (the mean offset between observed
/// and simulated positions, or their least-squares rigid map). The report holds the fitted
/// values, their standard errors and correlations from the Gauss–Newton covariance
/// σ̂² (JᵀJ)⁻¹ at the optimum (J in the physical units, the frame's coordinates included), the
/// RMS residuals and the frame. `fit` keeps its last runs: a second fit of the same trials'
/// logs with other observed tracks ([`TrialFit::replace_trials`]) from the same values starts
/// without a run.
///
/// Errors: a starting value outside its range, and a run that fails at the starting values.
pub fn fit_trials(
    fit: &mut TrialFit<'_>,
    initial: &[Option<f64>],
    options: &LmOptions,
) -> Result<TrialReport> {
    let map = fit.map().clone();
    let n = map.len();
    let start: Vec<f64> = fit
        .scene_values()
        .into_iter()
        .zip(initial)
        .map(|(own, given)| given.unwrap_or(own))
        .collect();
    let mut s0 = map.coordinates(&start)?;
    // The values of the start's coordinates (a start on a closed end moves just inside).
    let start = map.physical(&s0);
    let trial_options = fit.options();
    let registration = trial_options.registration;
    let frame0 = fit.initial_frame(&start)?;
    s0.extend(frame0.coordinates(registration));
    let (mut lower, mut upper) = map.coordinate_box();
    lower.resize(n + registration.parameters(), f64::NEG_INFINITY);
    upper.resize(n + registration.parameters(), f64::INFINITY);
    let result = levenberg_marquardt_in_box(fit, &s0, &lower, &upper, options)?;
    let initial_loss = result.history[0].loss;
    let values = map.physical(&result.params[..n]);
    let frame = Frame::from_coordinates(registration, &result.params[n..]);
    let residuals = fit.residuals(&values, &frame)?;
    let stats = statistics(&residuals.values, &residuals.jacobian);
    // The calibration report over the parameters' coordinates alone.
    let mut parameters_only = result.clone();
    parameters_only.params.truncate(n);
    for entry in &mut parameters_only.history {
        entry.params.truncate(n);
    }
    let calibration = CalibrationReport::from_noisy_fit(&map, &parameters_only, initial_loss);
    let names: Vec<String> = map.names.iter().map(|n| n.to_string()).collect();
    let trials = fit
        .trials()
        .iter()
        .map(|t| TrialSummary {
            trial: t.label.clone(),
            t0: t.t0(),
            steps: t.steps,
            samples: t.samples(),
        })
        .collect();
    Ok(TrialReport::new(
        calibration,
        TrialOutcome {
            names: &names,
            frame: (frame, registration),
            statistics: &stats,
            samples: residuals.samples,
            marker_names: fit.marker_names(),
            trials,
            comparison: trial_options.comparison,
        },
    ))
}
