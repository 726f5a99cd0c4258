//! Forward sensitivities of a run under logged commands (`simulate --inputs`, calibration
//! trials): the tangents of the state after every step with respect to the run's parameters
//! ([`RunParameter`]) — the step's constant parameters (E, ν, an input the log does not set)
//! and each logged actuator's `gain`, `offset` and `time_constant`, through which its input
//! changes from step to step.
//!
//! Step k's input of a logged actuator is u_k(θ) (`scene::CommandSchedule`, which owns
//! ∂u_k/∂(gain, offset, τ), `MapTangent`); the step's derivative takes it as the parameter
//! `actuator:NAME` of that step, so a direction θ has at step k the component ∂u_k/∂θ along
//! it (zero where the input is clamped), and the tangents chain through the steps as for
//! constant parameters (`SensitivityStepper`).
//!
//! A run started at rest at the static equilibrium under its first commands
//! (`RunStart::Static`) starts with the equilibrium's tangent dx*/dθ
//! (`scene::StaticTangent`: E, ν, the start inputs u_{−1} through their maps) and zero
//! velocity tangent; a run from the scene's initial state starts with zero tangents.

use crate::error::{Error, Result};
use crate::scene::{
    CommandSchedule, MapTangent, RunStart, Scene, State, StaticInput, StaticTangent, StepReport,
};

use super::parameter::Parameter;
use super::static_start::{start_tangent, static_direction};
use super::step_derivative::InputTangent;
use super::tangent::StateTangent;
use super::trajectory::SensitivityStepper;

/// Which term of a logged actuator's command map (`input = gain · command + offset`, lagged
/// by `time_constant`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandTerm {
    /// `gain:NAME` (the input's unit per command unit).
    Gain,
    /// `offset:NAME` (the input's unit).
    Offset,
    /// `time_constant:NAME` (s).
    TimeConstant,
}

impl CommandTerm {
    /// The name's prefix: `gain`, `offset` or `time_constant`.
    pub fn label(self) -> &'static str {
        match self {
            CommandTerm::Gain => "gain",
            CommandTerm::Offset => "offset",
            CommandTerm::TimeConstant => "time_constant",
        }
    }

    fn of(self, t: &MapTangent) -> f64 {
        match self {
            CommandTerm::Gain => t.gain,
            CommandTerm::Offset => t.offset,
            CommandTerm::TimeConstant => t.time_constant,
        }
    }
}

/// A parameter of a run under logged commands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RunParameter {
    /// A parameter of every step, constant over the run.
    Step(Parameter),
    /// A term of the command map of the schedule's channel `channel` (log column order).
    Command {
        /// The channel (`CommandSchedule::channels` order).
        channel: usize,
        /// Which term.
        term: CommandTerm,
    },
}

impl RunParameter {
    /// Parses `gain:NAME`, `offset:NAME` or `time_constant:NAME` of an actuator the log
    /// `schedule` drives, or any step parameter name ([`Parameter::parse`]). Errors name
    /// `name`: an actuator the log does not drive for a command term, and `actuator:NAME` of
    /// one it drives (its input follows the log: fit its gain or offset instead).
    pub fn parse(scene: &Scene, schedule: &CommandSchedule, name: &str) -> Result<RunParameter> {
        let name = name.trim();
        let term = match name.split_once(':').map(|(k, _)| k) {
            Some("gain") => Some(CommandTerm::Gain),
            Some("offset") => Some(CommandTerm::Offset),
            Some("time_constant") => Some(CommandTerm::TimeConstant),
            _ => None,
        };
        let target = name.split_once(':').map_or("", |(_, t)| t);
        let logged: Vec<&str> = schedule.channels().map(|(n, _, _)| n).collect();
        if let Some(term) = term {
            return match logged.iter().position(|n| *n == target) {
                Some(channel) => Ok(RunParameter::Command { channel, term }),
                None => Err(Error::invalid(
                    name,
                    format!(
                        "`{}` maps the commands of a logged actuator, and the command log drives {logged:?}",
                        term.label()
                    ),
                )),
            };
        }
        let p = Parameter::parse(scene, name)?;
        if let Parameter::Actuator { body, index } = p
            && schedule.channels().any(|(_, b, i)| (b, i) == (body, index))
        {
            return Err(Error::invalid(
                name,
                "this actuator's input follows the command log in every step: its gain, offset or time_constant are the parameters (gain:NAME, …)",
            ));
        }
        Ok(RunParameter::Step(p))
    }

    /// The parameter's name (`young_modulus:trunk`, `gain:c1`).
    pub fn name(&self, scene: &Scene, schedule: &CommandSchedule) -> String {
        match *self {
            RunParameter::Step(p) => p.name(scene),
            RunParameter::Command { channel, term } => {
                let (n, _, _) = schedule.channels().nth(channel).expect("a channel");
                format!("{}:{n}", term.label())
            }
        }
    }
}

/// A stepper that carries, beside a run under logged commands, the tangents of its state with
/// respect to each of its [`RunParameter`]s (module doc). Each step costs the forward step,
/// one multi-right-hand-side solve with its factorisation, and the schedule's scalar
/// recursions.
pub struct CommandSensitivity {
    stepper: SensitivityStepper,
    columns: Vec<RunParameter>,
    /// Per channel, its `actuator:NAME` among the step's parameters (when a column needs it).
    channel_parameter: Vec<Option<usize>>,
    /// Per channel, ∂u/∂(map) of its lag state and of the input given in the last step.
    lag: Vec<MapTangent>,
    given: Vec<MapTangent>,
}

impl CommandSensitivity {
    /// Tangents for `columns` of a run of `scene` whose `schedule` has set its start inputs
    /// and which starts at `state` (from `start`: for [`RunStart::Static`], `state` is the
    /// static equilibrium under the start inputs). Errors: a start or a step outside what the
    /// derivatives cover (named), and a step parameter the static start's derivative does not
    /// take.
    pub fn new(
        scene: &Scene,
        schedule: &CommandSchedule,
        state: &State,
        start: RunStart,
        columns: &[RunParameter],
    ) -> Result<CommandSensitivity> {
        let channels: Vec<(usize, usize)> = schedule.channels().map(|(_, b, i)| (b, i)).collect();
        let mut parameters: Vec<Parameter> = Vec::new();
        let index_of = |p: Parameter, parameters: &mut Vec<Parameter>| {
            parameters.iter().position(|q| *q == p).unwrap_or_else(|| {
                parameters.push(p);
                parameters.len() - 1
            })
        };
        let mut channel_parameter = vec![None; channels.len()];
        for c in columns {
            match *c {
                RunParameter::Step(p) => {
                    index_of(p, &mut parameters);
                }
                RunParameter::Command { channel, .. } => {
                    let (body, index) = channels[channel];
                    channel_parameter[channel] = Some(index_of(
                        Parameter::Actuator { body, index },
                        &mut parameters,
                    ));
                }
            }
        }
        let (lag, given) = schedule.start_tangents();
        let starts = match start {
            RunStart::Scene => vec![StateTangent::zeros(scene); columns.len()],
            RunStart::Static => static_start_tangents(scene, state, columns, &channels, &given)?,
        };
        let inputs = columns
            .iter()
            .zip(starts)
            .map(|(c, state)| {
                let mut components = vec![0.0; parameters.len()];
                if let RunParameter::Step(p) = c {
                    components[parameters.iter().position(|q| q == p).expect("listed")] = 1.0;
                }
                InputTangent {
                    state,
                    parameters: components,
                }
            })
            .collect();
        Ok(CommandSensitivity {
            stepper: SensitivityStepper::from_inputs(scene, &parameters, inputs)?,
            columns: columns.to_vec(),
            channel_parameter,
            given: given.iter().map(|_| MapTangent::default()).collect(),
            lag,
        })
    }

    /// One step of the run: the schedule sets step k's inputs on `scene` (and their tangents),
    /// then `state` and the tangents advance.
    pub fn step(
        &mut self,
        scene: &mut Scene,
        schedule: &mut CommandSchedule,
        state: &mut State,
    ) -> Result<StepReport> {
        schedule.apply_next_with_tangents(scene, &mut self.lag, &mut self.given);
        for (j, c) in self.columns.iter().enumerate() {
            if let RunParameter::Command { channel, term } = *c {
                let p = self.channel_parameter[channel].expect("a command column's parameter");
                self.stepper
                    .set_parameter_component(j, p, term.of(&self.given[channel]));
            }
        }
        self.stepper.step(scene, state)
    }

    /// The tangent of the current state with respect to each column, in order.
    pub fn tangents(&self) -> impl Iterator<Item = &StateTangent> {
        self.stepper.tangents()
    }
}

/// The tangents dx*/dθ (zero velocity) of the static start for each column.
fn static_start_tangents(
    scene: &Scene,
    state: &State,
    columns: &[RunParameter],
    channels: &[(usize, usize)],
    given: &[MapTangent],
) -> Result<Vec<StateTangent>> {
    let mut tangent = StaticTangent::new(scene, state)?;
    columns
        .iter()
        .map(|c| {
            let direction = match *c {
                RunParameter::Step(p) => static_direction(scene, p)?,
                RunParameter::Command { channel, term } => {
                    let (body, index) = channels[channel];
                    vec![(
                        StaticInput::Actuator { body, index },
                        term.of(&given[channel]),
                    )]
                }
            };
            start_tangent(&mut tangent, scene, state, &direction)
        })
        .collect()
}
