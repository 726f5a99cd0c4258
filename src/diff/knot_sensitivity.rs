//! Forward sensitivities of a run whose actuators follow knots ([`ActuationKnots`]): the
//! tangents of the state after every step with respect to each knot value q_{a,j} and to
//! step parameters held constant over the run (E, ν, damping, …).
//!
//! Step k applies u_a(t_k) = Σ_j φ_j(t_k) q_{a,j} at t_k = (k + 1)·dt, and the step's
//! derivative takes u_a as the parameter `actuator:NAME`, so the direction along q_{a,j} has
//! at step k the component φ_j(t_k) along it; the tangents chain through the steps as for
//! constant parameters ([`SensitivityStepper`]). A run started at rest at the static
//! equilibrium under the inputs at t = 0 (`RunStart::Static`) starts with its tangent
//! (the knots at t = 0 through φ_j(0), E, ν, ρ), one from the scene's initial state with zero
//! tangents. One step costs the forward step and one multi-right-hand-side solve with its
//! factorisation.

use crate::error::Result;
use crate::scene::{RunStart, Scene, State, StaticInput, StaticTangent, StepReport};

use super::knots::ActuationKnots;
use super::parameter::Parameter;
use super::static_start::{start_tangent, static_direction};
use super::step_derivative::InputTangent;
use super::tangent::StateTangent;
use super::trajectory::SensitivityStepper;

/// A stepper that runs a scene under actuation knots and carries the tangents of its state
/// (module doc). Columns: the step parameters in the order given, then the knots actuator
/// by actuator, knot by knot (column `parameters.len() + a·K + j` is q_{a,j}).
pub struct KnotSensitivity {
    stepper: SensitivityStepper,
    knots: ActuationKnots,
    /// The count of constant step parameters (the first columns and parameters).
    constant: usize,
    /// Steps taken.
    taken: usize,
}

impl KnotSensitivity {
    /// Tangents of a run of `scene` under `knots` that starts at `state` (from `start`: for
    /// [`RunStart::Static`], `state` is the static equilibrium under the knots' inputs at
    /// t = 0, set on `scene`), with respect to `parameters` (constant over the run; not the
    /// knots' actuators) and every knot. Errors: a start or a step outside what the
    /// derivatives cover (named), a knot actuator also listed in `parameters`.
    pub fn new(
        scene: &Scene,
        knots: &ActuationKnots,
        state: &State,
        start: RunStart,
        parameters: &[Parameter],
    ) -> Result<KnotSensitivity> {
        if let Some(p) = parameters.iter().find(|p| knots.actuators.contains(p)) {
            return Err(crate::Error::invalid(
                p.name(scene),
                "follows the knots in every step: its knots are the parameters",
            ));
        }
        let list: Vec<Parameter> = parameters.iter().chain(&knots.actuators).copied().collect();
        let count = knots.times.len();
        let columns = parameters.len() + knots.actuators.len() * count;
        let starts = match start {
            RunStart::Scene => vec![StateTangent::zeros(scene); columns],
            RunStart::Static => {
                let mut tangent = StaticTangent::new(scene, state)?;
                let mut out = Vec::with_capacity(columns);
                for p in parameters {
                    let direction = static_direction(scene, *p)?;
                    out.push(start_tangent(&mut tangent, scene, state, &direction)?);
                }
                for p in &knots.actuators {
                    let Parameter::Actuator { body, index } = *p else {
                        unreachable!("knots drive actuators")
                    };
                    for j in 0..count {
                        let w = knots.hat(j, 0.0);
                        out.push(if w == 0.0 {
                            StateTangent::zeros(scene)
                        } else {
                            start_tangent(
                                &mut tangent,
                                scene,
                                state,
                                &[(StaticInput::Actuator { body, index }, w)],
                            )?
                        });
                    }
                }
                out
            }
        };
        let inputs = starts
            .into_iter()
            .enumerate()
            .map(|(c, state)| {
                let mut components = vec![0.0; list.len()];
                if c < parameters.len() {
                    components[c] = 1.0;
                }
                InputTangent {
                    state,
                    parameters: components,
                }
            })
            .collect();
        Ok(KnotSensitivity {
            stepper: SensitivityStepper::from_inputs(scene, &list, inputs)?,
            knots: knots.clone(),
            constant: parameters.len(),
            taken: 0,
        })
    }

    /// One step: sets the knots' inputs at t_k on `scene` and the knot directions'
    /// components φ_j(t_k), then advances `state` and the tangents.
    pub fn step(&mut self, scene: &mut Scene, state: &mut State) -> Result<StepReport> {
        let t = ActuationKnots::step_time(scene.simulation.dt, self.taken);
        self.knots.apply(scene, t);
        let count = self.knots.times.len();
        for a in 0..self.knots.actuators.len() {
            for j in 0..count {
                let column = self.constant + a * count + j;
                let w = self.knots.hat(j, t);
                self.stepper
                    .set_parameter_component(column, self.constant + a, w);
            }
        }
        self.taken += 1;
        self.stepper.step(scene, state)
    }

    /// The tangent of the current state with respect to each column, in order (type doc).
    pub fn tangents(&self) -> impl Iterator<Item = &StateTangent> {
        self.stepper.tangents()
    }

    /// The number of columns: step parameters plus knots.
    pub fn columns(&self) -> usize {
        self.constant + self.knots.actuators.len() * self.knots.times.len()
    }
}
