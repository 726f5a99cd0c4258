//! The least-squares problem of calibration (paper 004 §IV-C): the gap between a scene's
//! simulated final node positions and observed ones, as a function of physical parameters,
//! with its Jacobian from the forward trajectory sensitivities of `diff`.

use super::levenberg_marquardt::LeastSquares;
use super::parametrisation::Parametrisation;
use crate::diff::{Parameter, SensitivityStepper, check_differentiable};
use crate::error::{Error, Result};
use crate::math::{DMat, DVec};
use crate::scene::{CommandLog, CommandSchedule, FinalState, Scene};

/// What a [`FinalStateFit`] reports while it evaluates.
#[derive(Debug, Clone, Copy)]
pub enum CalibrationProgress<'a> {
    /// Step `step` of `steps` of evaluation `evaluation` (counted from 1) is done.
    Step {
        /// The evaluation (one simulation with its sensitivities), from 1.
        evaluation: usize,
        /// Steps done.
        step: usize,
        /// Steps per evaluation.
        steps: usize,
    },
    /// Evaluation `evaluation` is done.
    Evaluated {
        /// The evaluation, from 1.
        evaluation: usize,
        /// The physical parameter values it simulated, in parameter order.
        values: &'a [f64],
        /// Its loss `½‖x − x_observed‖²` (m²).
        loss: f64,
        /// Steps whose contact NCP stopped at its iteration limit (0 without contact).
        unconverged_contact_steps: usize,
    },
    /// The first fit missed the answer; fit number `restart + 1` starts at `values` (physical,
    /// in parameter order; [`super::calibrate_scene`]).
    Restart {
        /// The restart, from 1.
        restart: usize,
        /// Its starting values.
        values: &'a [f64],
    },
    /// The simulation of evaluation `evaluation` (not the first) failed, e.g. an element
    /// inverted at a trial point far from the data: a failed trial step of the fit.
    Failed {
        /// The evaluation, from 2.
        evaluation: usize,
        /// The physical parameter values it tried.
        values: &'a [f64],
        /// Why the simulation failed.
        error: &'a Error,
    },
}

/// `r(p) = x_final(p) − x_observed` over every node of every soft body (scene body order,
/// nodes in mesh order, `x y z` per node; m) after `steps` steps from the scene's initial
/// state, and `∂r/∂p`, one column per parameter (m per unit of the parameter: m/Pa for E),
/// the position part of the forward sensitivities ([`crate::diff::forward_sensitivities`]).
/// Fixed nodes give zero rows.
///
/// A simulation that fails at the first evaluation is an error; at a later one (a trial point
/// of the fit, e.g. a far step that inverts an element) it gives a NaN residual, which
/// Levenberg–Marquardt counts as a failed step (it damps more and retries closer).
pub struct FinalStateFit<'p> {
    scene: Scene,
    parameters: Vec<Parameter>,
    observed: DVec,
    steps: usize,
    evaluations: usize,
    progress: &'p mut dyn FnMut(CalibrationProgress<'_>),
    /// Logged commands every evaluation runs under ([`FinalStateFit::with_inputs`]).
    inputs: Option<CommandLog>,
}

impl<'p> FinalStateFit<'p> {
    /// The fit of `params` of (a copy of) `scene` to `observed` after `steps` steps. Errors:
    /// a scene whose step is not differentiable ([`check_differentiable`]'s error), a
    /// parameter that names no body or actuator of the scene, an observation lacking a body,
    /// with another node count or with a non-finite position.
    pub fn new(
        scene: &Scene,
        params: &Parametrisation,
        observed: &FinalState,
        steps: usize,
        progress: &'p mut dyn FnMut(CalibrationProgress<'_>),
    ) -> Result<FinalStateFit<'p>> {
        check_differentiable(scene)?;
        let parameters = params
            .names
            .iter()
            .map(|n| n.resolve(scene))
            .collect::<Result<Vec<_>>>()?;
        let flat = observed_positions(scene, observed, "observation")?;
        Ok(FinalStateFit {
            scene: scene.clone(),
            parameters,
            observed: DVec::from_vec(flat),
            steps,
            evaluations: 0,
            progress,
            inputs: None,
        })
    }

    /// Runs every evaluation under the logged commands `log` (`calibrate --inputs`,
    /// docs/cli.md#commands-over-time): from the scene's initial state with the first
    /// commands' inputs set, each step's inputs set before it (`scene::CommandSchedule`). The
    /// logged inputs do not depend on the parameters, so the sensitivities need no term of
    /// theirs. Errors: a name of the log that is no actuator of the scene, and an actuator
    /// parameter the log names (the log sets its input every step).
    pub fn with_inputs(mut self, log: CommandLog) -> Result<Self> {
        CommandSchedule::new(&self.scene, log.clone())?;
        for p in &self.parameters {
            if let Parameter::Actuator { body, index } = *p {
                let name = &self.scene.body_actuation(body).actuators[index].name;
                if log.names.contains(name) {
                    return Err(Error::invalid(
                        format!("--param actuator:{name}"),
                        format!(
                            "is logged in {}, which sets its input every step: fit other parameters, or leave it out of the command file",
                            log.file
                        ),
                    ));
                }
            }
        }
        self.inputs = Some(log);
        Ok(self)
    }

    /// Passes `event` to the progress callback (for events of the fitting loop around this
    /// problem, such as [`CalibrationProgress::Restart`]).
    pub fn announce(&mut self, event: CalibrationProgress<'_>) {
        (self.progress)(event);
    }

    /// The resolved parameters, in order.
    pub fn parameters(&self) -> &[Parameter] {
        &self.parameters
    }

    /// Evaluations (simulations) run so far.
    pub fn evaluations(&self) -> usize {
        self.evaluations
    }

    /// The physical values of the parameters in the scene copy (the last evaluated ones, or
    /// the scene's at the start).
    pub fn values(&self) -> Vec<f64> {
        self.parameters
            .iter()
            .map(|p| p.value(&self.scene))
            .collect()
    }
}

impl LeastSquares for FinalStateFit<'_> {
    /// Sets `values` (physical, in parameter order) on the scene copy, simulates
    /// `steps` steps carrying the sensitivities, and returns `(r, ∂r/∂p)`.
    fn evaluate(&mut self, values: &[f64]) -> Result<(DVec, DMat)> {
        assert_eq!(
            values.len(),
            self.parameters.len(),
            "one value per parameter"
        );
        if values.iter().any(|v| !v.is_finite()) {
            // An overflowed trial point (E = exp(s) = ∞): a failed step, not an error.
            let m = self.observed.len();
            let n = values.len();
            return Ok((DVec::from_element(m, f64::NAN), DMat::zeros(m, n)));
        }
        for (p, &v) in self.parameters.iter().zip(values) {
            p.set(&mut self.scene, v)?;
        }
        self.evaluations += 1;
        let evaluation = self.evaluations;
        match self.simulate(evaluation, values) {
            Err(error) if evaluation > 1 => {
                (self.progress)(CalibrationProgress::Failed {
                    evaluation,
                    values,
                    error: &error,
                });
                let (m, n) = (self.observed.len(), values.len());
                Ok((DVec::from_element(m, f64::NAN), DMat::zeros(m, n)))
            }
            other => other,
        }
    }
}

impl FinalStateFit<'_> {
    /// One evaluation at `values` (already set on the scene copy).
    fn simulate(&mut self, evaluation: usize, values: &[f64]) -> Result<(DVec, DMat)> {
        let mut schedule = match &self.inputs {
            Some(log) => {
                let mut s = CommandSchedule::new(&self.scene, log.clone())?;
                s.apply_start(&mut self.scene);
                Some(s)
            }
            None => None,
        };
        let mut state = self.scene.initial_state();
        let mut stepper = SensitivityStepper::new(&self.scene, &self.parameters)?;
        let mut unconverged = 0;
        for step in 1..=self.steps {
            if let Some(s) = schedule.as_mut() {
                s.apply_next(&mut self.scene);
            }
            let report = stepper.step(&self.scene, &mut state)?;
            if !report.contact_converged {
                unconverged += 1;
            }
            (self.progress)(CalibrationProgress::Step {
                evaluation,
                step,
                steps: self.steps,
            });
        }
        let m = self.observed.len();
        let mut residual = DVec::zeros(m);
        let mut row = 0;
        for body in &state.bodies {
            for x in &body.positions {
                for c in 0..3 {
                    residual[row] = x[c] - self.observed[row];
                    row += 1;
                }
            }
        }
        assert_eq!(row, m, "state and observation sizes agree");
        let mut jacobian = DMat::zeros(m, self.parameters.len());
        for (k, tangent) in stepper.tangents().enumerate() {
            let mut row = 0;
            for body in &tangent.bodies {
                for d in &body.positions {
                    for c in 0..3 {
                        jacobian[(row, k)] = d[c];
                        row += 1;
                    }
                }
            }
        }
        (self.progress)(CalibrationProgress::Evaluated {
            evaluation,
            values,
            loss: 0.5 * residual.norm_squared(),
            unconverged_contact_steps: unconverged,
        });
        Ok((residual, jacobian))
    }
}

/// The observed node positions of every soft body of `scene` (scene body order, nodes in mesh
/// order, `x y z` per node), checked: each body must be in `observed` by name, with one
/// finite position per node of its mesh. Errors start with `source` (the file name) and name
/// the body.
pub(crate) fn observed_positions(
    scene: &Scene,
    observed: &FinalState,
    source: &str,
) -> Result<Vec<f64>> {
    let mut flat = Vec::new();
    for body in &scene.bodies {
        let what = || format!("{source}: soft body `{}`", body.name());
        let Some(seen) = observed.soft_bodies.iter().find(|b| b.name == body.name()) else {
            return Err(Error::invalid(
                what(),
                "is in the scene but not in the observation",
            ));
        };
        if seen.positions.len() != body.node_count() {
            return Err(Error::invalid(
                what(),
                format!(
                    "has {} observed node positions, the scene's mesh has {} nodes",
                    seen.positions.len(),
                    body.node_count()
                ),
            ));
        }
        if let Some(i) = seen
            .positions
            .iter()
            .position(|p| p.iter().any(|c| !c.is_finite()))
        {
            return Err(Error::invalid(
                format!("{} node {i}", what()),
                "has a non-finite position",
            ));
        }
        flat.extend(seen.positions.iter().flatten());
    }
    Ok(flat)
}
