//! The trial fit as a least-squares problem: one set of parameters for every trial, each
//! trial run from its own start under its own command log carrying the forward sensitivities
//! of the whole state (`diff::CommandSensitivity`: one multi-right-hand-side solve per step
//! with the step's own factorisation), its markers and their tangents kept at every saved
//! state, and the residuals of every observed sample ([`super::residuals`]) with the frame's
//! coordinates appended to the parameters' when registering.
//!
//! Levenberg–Marquardt works on coordinates `s = (s_θ, τ, ω)`: `s_θ` those of the
//! [`Parametrisation`] (logarithmic or linear per kind, in a box inside each range), the
//! frame's as they are (m, rad, unbounded). A trial point whose run fails (an element
//! inverted, a step matrix that is not positive definite, a static start that does not
//! converge or is unstable) gives a NaN residual, which Levenberg–Marquardt rejects, shrinking
//! the step: the fit goes on. The same failure at the starting point is an error.

use std::rc::Rc;

use crate::diff::{CommandSensitivity, RunParameter, StateTangent, check_differentiable};
use crate::error::{Error, Result};
use crate::math::{DMat, DVec, Vec3};
use crate::scene::{CommandRun, RunStart, Scene, State};

use super::super::final_state_fit::CalibrationProgress;
use super::super::levenberg_marquardt::LeastSquares;
use super::super::parametrisation::Parametrisation;
use super::frame::{Frame, Registration};
use super::parameters::FittedParameter;
use super::residuals::{
    Comparison, Residuals, SimulatedMarkers, TrialTracks, assemble, best_frame, check_registration,
};
use super::trial::Trial;

/// How the trials are run and compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TrialOptions {
    /// Where each trial's run starts (`--start`; default: at rest under its first commands).
    pub start: RunStart,
    /// How tracks are compared (`--compare`).
    pub comparison: Comparison,
    /// Which camera → scene frame is fitted (`--register`).
    pub registration: Registration,
}

/// One simulation of every trial at one set of physical values.
struct Simulation {
    values: Vec<f64>,
    markers: Rc<Vec<SimulatedMarkers>>,
    evaluation: usize,
    announced: bool,
    unconverged: usize,
}

/// The trial fit (module doc): `r(s)`, `∂r/∂s` over every valid sample of every trial.
pub struct TrialFit<'p> {
    scene: Scene,
    map: Parametrisation,
    parameters: Vec<FittedParameter>,
    trials: Vec<Trial>,
    options: TrialOptions,
    evaluations: usize,
    /// The last two simulations (a frame change needs no new run).
    cache: Vec<Simulation>,
    progress: &'p mut dyn FnMut(CalibrationProgress<'_>),
}

impl<'p> TrialFit<'p> {
    /// The fit of `map`'s parameters of (a copy of) `scene` to `trials` under `options`.
    /// Errors: no trial, a scene whose step is not differentiable
    /// (`diff::check_differentiable`), `displacement` with a registration (a translation
    /// cancels in displacements), and a parameter that does not resolve
    /// ([`FittedParameter::resolve`]).
    pub fn new(
        scene: &Scene,
        map: &Parametrisation,
        trials: Vec<Trial>,
        options: TrialOptions,
        progress: &'p mut dyn FnMut(CalibrationProgress<'_>),
    ) -> Result<TrialFit<'p>> {
        if trials.is_empty() {
            return Err(Error::invalid(
                "--trial",
                "at least one trial (INPUTS.csv:MARKERS.csv) is needed",
            ));
        }
        check_registration(options.comparison, options.registration, "--register")?;
        check_differentiable(scene)?;
        let parameters = map
            .names
            .iter()
            .map(|n| FittedParameter::resolve(scene, &trials, n))
            .collect::<Result<Vec<_>>>()?;
        Ok(TrialFit {
            scene: scene.clone(),
            map: map.clone(),
            parameters,
            trials,
            options,
            evaluations: 0,
            cache: Vec::new(),
            progress,
        })
    }

    /// The trials, in order.
    pub fn trials(&self) -> &[Trial] {
        &self.trials
    }

    /// The scene's marker names, in scene order.
    pub fn marker_names(&self) -> Vec<String> {
        self.scene
            .markers
            .names()
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    /// Replaces the trials by `trials` (other observed tracks of the same experiment, say).
    /// The runs kept from earlier evaluations stay when every trial's command log and step
    /// count are those of the one it replaces (a run depends on nothing else); otherwise
    /// they are dropped. Errors: a different number of trials, or a parameter that does not
    /// resolve against the new trials' logs.
    pub fn replace_trials(&mut self, trials: Vec<Trial>) -> Result<()> {
        if trials.len() != self.trials.len() {
            return Err(Error::invalid(
                "trials",
                format!(
                    "{} trials replace {}: give as many as the fit has",
                    trials.len(),
                    self.trials.len()
                ),
            ));
        }
        let parameters = self
            .map
            .names
            .iter()
            .map(|n| FittedParameter::resolve(&self.scene, &trials, n))
            .collect::<Result<Vec<_>>>()?;
        let same_runs = parameters == self.parameters
            && trials
                .iter()
                .zip(&self.trials)
                .all(|(a, b)| a.log == b.log && a.steps == b.steps);
        if !same_runs {
            self.cache.clear();
        }
        self.parameters = parameters;
        self.trials = trials;
        for entry in &mut self.cache {
            entry.announced = false;
        }
        Ok(())
    }

    /// The options.
    pub fn options(&self) -> TrialOptions {
        self.options
    }

    /// The parametrisation of the physical parameters.
    pub fn map(&self) -> &Parametrisation {
        &self.map
    }

    /// The scene's own value of each parameter, in order.
    pub fn scene_values(&self) -> Vec<f64> {
        self.parameters
            .iter()
            .map(|p| p.value(&self.scene))
            .collect()
    }

    /// Simulations run so far (every trial once each).
    pub fn evaluations(&self) -> usize {
        self.evaluations
    }

    /// The number of coordinates: the parameters', then the frame's.
    pub fn coordinates(&self) -> usize {
        self.map.len() + self.options.registration.parameters()
    }

    /// The frame a fit from the physical `values` starts from (`best_frame`: the mean
    /// offset for a translation, Kabsch for a rigid map, over every sample against the runs
    /// at `values`). Errors: those of the runs.
    pub fn initial_frame(&mut self, values: &[f64]) -> Result<Frame> {
        let TrialOptions {
            comparison,
            registration,
            ..
        } = self.options;
        if registration == Registration::None {
            return Ok(Frame::default());
        }
        let k = self.simulation(values)?;
        let sims = Rc::clone(&self.cache[k].markers);
        Ok(best_frame(&self.tracks(&sims), comparison, registration))
    }

    /// The residuals at the physical `values` and `frame`, their Jacobian in physical units
    /// (per unit of each parameter, then m and rad for the frame). Errors: those of the runs.
    pub fn residuals(&mut self, values: &[f64], frame: &Frame) -> Result<Residuals> {
        let k = self.simulation(values)?;
        let sims = Rc::clone(&self.cache[k].markers);
        Ok(self.assemble(&sims, frame))
    }

    /// Each trial's observed tracks beside its run in `sims`.
    fn tracks<'a>(&'a self, sims: &'a [SimulatedMarkers]) -> Vec<TrialTracks<'a>> {
        self.trials
            .iter()
            .zip(sims)
            .map(|(t, s)| TrialTracks {
                observed: &t.observed,
                t0: t.t0(),
                simulated: s,
            })
            .collect()
    }

    fn assemble(&self, sims: &[SimulatedMarkers], frame: &Frame) -> Residuals {
        assemble(
            &self.tracks(sims),
            self.options.comparison,
            self.options.registration,
            frame,
            self.map.len(),
        )
    }

    /// The index in the cache of the simulation at `values`, run when it is not there.
    fn simulation(&mut self, values: &[f64]) -> Result<usize> {
        if let Some(k) = self.cache.iter().position(|s| s.values == values) {
            return Ok(k);
        }
        let mut scene = self.scene.clone();
        for (p, &v) in self.parameters.iter().zip(values) {
            p.set(&mut scene, v)?;
        }
        self.evaluations += 1;
        let evaluation = self.evaluations;
        let total: usize = self.trials.iter().map(|t| t.steps).sum();
        let mut done = 0;
        let mut markers = Vec::with_capacity(self.trials.len());
        let mut unconverged = 0;
        for trial in &self.trials {
            let progress = &mut *self.progress;
            let (sim, u) = run_trial(
                &scene,
                trial,
                &self.parameters,
                self.options.start,
                &mut |k| {
                    progress(CalibrationProgress::Step {
                        evaluation,
                        step: done + k,
                        steps: total,
                    })
                },
            )?;
            done += trial.steps;
            unconverged += u;
            markers.push(sim);
        }
        if self.cache.len() == 2 {
            self.cache.remove(0);
        }
        self.cache.push(Simulation {
            values: values.to_vec(),
            markers: Rc::new(markers),
            evaluation,
            announced: false,
            unconverged,
        });
        Ok(self.cache.len() - 1)
    }
}

impl LeastSquares for TrialFit<'_> {
    /// `r` and `∂r/∂s` at the coordinates `s` (parameters' then frame's): the physical values
    /// `map.physical(s_θ)`, the runs at them (or the last two's, kept), the residuals, and the
    /// Jacobian's parameter columns times dθ/ds.
    fn evaluate(&mut self, s: &[f64]) -> Result<(DVec, DMat)> {
        let n = self.map.len();
        assert_eq!(s.len(), self.coordinates(), "one coordinate each");
        let values = self.map.physical(&s[..n]);
        let frame = Frame::from_coordinates(self.options.registration, &s[n..]);
        let k = match self.simulation(&values) {
            Ok(k) => k,
            Err(error) if self.evaluations > 1 => {
                (self.progress)(CalibrationProgress::Failed {
                    evaluation: self.evaluations,
                    values: &values,
                    error: &error,
                });
                let rows = 3 * self.trials.iter().map(|t| t.samples()).sum::<usize>();
                return Ok((
                    DVec::from_element(rows, f64::NAN),
                    DMat::zeros(rows, s.len()),
                ));
            }
            Err(error) => return Err(error),
        };
        let sims = Rc::clone(&self.cache[k].markers);
        let residuals = self.assemble(&sims, &frame);
        let entry = &mut self.cache[k];
        if !entry.announced {
            entry.announced = true;
            (self.progress)(CalibrationProgress::Evaluated {
                evaluation: entry.evaluation,
                values: &values,
                loss: 0.5 * residuals.values.norm_squared(),
                unconverged_contact_steps: entry.unconverged,
            });
        }
        let mut jacobian = residuals.jacobian;
        self.map.chain_jacobian(&s[..n], &mut jacobian);
        Ok((residuals.values, jacobian))
    }
}

/// One run of `trial` on (a copy of) `scene` from `start`, carrying the tangents of the
/// `parameters` the trial depends on; its markers and their tangents at every saved state
/// (zero columns for the parameters it does not depend on), and the steps whose contact NCP
/// stopped at its iteration limit. `progress` gets the steps done.
fn run_trial(
    scene: &Scene,
    trial: &Trial,
    parameters: &[FittedParameter],
    start: RunStart,
    progress: &mut dyn FnMut(usize),
) -> Result<(SimulatedMarkers, usize)> {
    let mut scene = scene.clone();
    let (mut run, mut state) =
        CommandRun::start(&mut scene, trial.log.clone(), Some(trial.steps), start)?;
    run.take_warnings();
    let dt = scene.simulation.dt;
    // Each parameter's column among the run's (None: the trial does not depend on it).
    let mut runs: Vec<RunParameter> = Vec::new();
    let slots: Vec<Option<usize>> = parameters
        .iter()
        .map(|p| {
            p.in_run(run.schedule()).map(|c| {
                runs.push(c);
                runs.len() - 1
            })
        })
        .collect();
    // No column: the plain run (no tangent to carry).
    let mut sens = if runs.is_empty() {
        None
    } else {
        Some(CommandSensitivity::new(
            &scene,
            run.schedule(),
            &state,
            start,
            &runs,
        )?)
    };
    let mut out = SimulatedMarkers::new(scene.markers.len(), parameters.len());
    let mut unconverged = 0;
    record(&mut out, &scene, &state, sens.as_ref(), &slots, 0.0);
    for k in 0..trial.steps {
        let report = match sens.as_mut() {
            Some(s) => s.step(&mut scene, run.schedule_mut(), &mut state)?,
            None => run.step(&mut scene, &mut state)?,
        };
        run.take_warnings();
        unconverged += usize::from(!report.contact_converged);
        let time = (k + 1) as f64 * dt;
        record(&mut out, &scene, &state, sens.as_ref(), &slots, time);
        progress(k + 1);
    }
    Ok((out, unconverged))
}

/// Appends the markers of `state` at simulation time `time` (s) and their tangents: parameter
/// j's is the marker's combination of the node tangents of run column `slots[j]` of `sens` (a
/// marker is a fixed linear combination of its body's nodes), zero where it has none (every
/// slot is `None` without `sens`).
fn record(
    out: &mut SimulatedMarkers,
    scene: &Scene,
    state: &State,
    sens: Option<&CommandSensitivity>,
    slots: &[Option<usize>],
    time: f64,
) {
    let tangents: Vec<&StateTangent> = sens.map(|s| s.tangents().collect()).unwrap_or_default();
    let list = &scene.markers.list;
    out.push(time, &scene.markers.positions(state), |m, j| {
        match slots[j] {
            Some(c) => list[m].position_of(&tangents[c].bodies[list[m].body].positions),
            None => Vec3::zeros(),
        }
    });
}
