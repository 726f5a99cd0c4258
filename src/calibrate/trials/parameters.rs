//! What a fitted name denotes in a trial fit: a parameter of every step (`young_modulus:`,
//! `poisson_ratio:`, `rayleigh_mass:`, `rayleigh_stiffness:`, `density:`, `actuator:NAME` of an
//! actuator no trial logs, …: `diff::Parameter`) or a term of a logged actuator's command map
//! (`gain:NAME`, `offset:NAME`, `time_constant:NAME`), shared by every trial whose log drives
//! the actuator; how it is read from and set on a scene, and which column of a trial's run
//! under commands it is (`diff::RunParameter`).

use crate::diff::{CommandTerm, Parameter, RunParameter};
use crate::error::{Error, Result};
use crate::scene::{CommandSchedule, Scene};

use super::super::parametrisation::{ParameterKind, ParameterName};
use super::trial::Trial;

/// A fitted parameter of a trial fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FittedParameter {
    /// A parameter of every step.
    Step(Parameter),
    /// A term of the command map of actuator `index` of soft body `body`.
    Command {
        /// The soft body.
        body: usize,
        /// The actuator among the body's.
        index: usize,
        /// Gain, offset or time constant.
        term: CommandTerm,
    },
}

impl FittedParameter {
    /// What `name` denotes in `scene` for `trials`. Errors name the parameter: an unknown
    /// body, actuator or obstacle (listing the scene's), a command term of an actuator no
    /// trial's log drives (listing those the logs drive), and `actuator:NAME` of an actuator a
    /// trial's log drives (its input follows the log there: fit its gain or offset instead).
    pub fn resolve(scene: &Scene, trials: &[Trial], name: &ParameterName) -> Result<Self> {
        let what = || format!("parameter `{name}`");
        let logged = |body: usize, index: usize| {
            let actuator = &scene.body_actuation(body).actuators[index].name;
            trials.iter().any(|t| t.log.names.contains(actuator))
        };
        let term = match name.kind {
            ParameterKind::Gain => Some(CommandTerm::Gain),
            ParameterKind::Offset => Some(CommandTerm::Offset),
            ParameterKind::TimeConstant => Some(CommandTerm::TimeConstant),
            _ => None,
        };
        let Some(term) = term else {
            let p = Parameter::parse(scene, &name.to_string())?;
            if let Parameter::Actuator { body, index } = p
                && logged(body, index)
            {
                return Err(Error::invalid(
                    what(),
                    "a trial's command log drives this actuator, so its input follows the log: fit its gain:, offset: or time_constant: instead",
                ));
            }
            return Ok(FittedParameter::Step(p));
        };
        // The actuator by name, over every soft body (`actuator:NAME`'s own lookup).
        let Parameter::Actuator { body, index } =
            Parameter::parse(scene, &format!("actuator:{}", name.target))
                .map_err(|e| Error::invalid(what(), without_item(e)))?
        else {
            unreachable!("actuator:NAME parses to an actuator");
        };
        if !logged(body, index) {
            let mut driven: Vec<&str> = trials
                .iter()
                .flat_map(|t| t.log.names.iter().map(String::as_str))
                .collect();
            driven.sort_unstable();
            driven.dedup();
            return Err(Error::invalid(
                what(),
                format!(
                    "maps the commands of actuator `{}`, which no trial's command log drives (they drive {driven:?})",
                    name.target
                ),
            ));
        }
        Ok(FittedParameter::Command { body, index, term })
    }

    /// The parameter's value in `scene` (its unit: Pa, 1, 1/s, s, kg/m³, an input's unit, the
    /// input's unit per command unit, s).
    pub fn value(&self, scene: &Scene) -> f64 {
        match *self {
            FittedParameter::Step(p) => p.value(scene),
            FittedParameter::Command { body, index, term } => {
                let map = scene.body_actuation(body).input_spec(index).command;
                match term {
                    CommandTerm::Gain => map.gain,
                    CommandTerm::Offset => map.offset,
                    CommandTerm::TimeConstant => map.time_constant,
                }
            }
        }
    }

    /// Sets the parameter to `value` in `scene`. Errors: `Parameter::set`'s, a non-finite
    /// command term or a negative time constant.
    pub fn set(&self, scene: &mut Scene, value: f64) -> Result<()> {
        match *self {
            FittedParameter::Step(p) => p.set(scene, value),
            FittedParameter::Command { body, index, term } => {
                let name = scene.body_actuation(body).actuators[index].name.clone();
                if !value.is_finite() || (term == CommandTerm::TimeConstant && value < 0.0) {
                    return Err(Error::invalid(
                        format!("{}:{name}", term.label()),
                        format!("{value} is not an admissible value"),
                    ));
                }
                let map = &mut scene.actuation[body].inputs[index].command;
                match term {
                    CommandTerm::Gain => map.gain = value,
                    CommandTerm::Offset => map.offset = value,
                    CommandTerm::TimeConstant => map.time_constant = value,
                }
                Ok(())
            }
        }
    }

    /// The parameter as a column of a run under `schedule` (`diff::CommandSensitivity`):
    /// `None` for a command term of an actuator the schedule's log does not drive (the run does
    /// not depend on it).
    pub fn in_run(&self, schedule: &CommandSchedule) -> Option<RunParameter> {
        match *self {
            FittedParameter::Step(p) => Some(RunParameter::Step(p)),
            FittedParameter::Command { body, index, term } => schedule
                .channels()
                .position(|(_, b, i)| (b, i) == (body, index))
                .map(|channel| RunParameter::Command { channel, term }),
        }
    }
}

/// The message of an error without its item (to name another item with it).
fn without_item(e: Error) -> String {
    match e {
        Error::Invalid { message, .. } => message,
        other => other.to_string(),
    }
}
