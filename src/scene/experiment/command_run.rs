//! A run under logged commands (`simulate --inputs`, `bench --inputs`, Python's
//! `Simulation.run_commands`): where it starts, and its steps, each after the schedule has set
//! that step's inputs on the scene (docs/cli.md#commands-over-time).

use crate::error::{Error, Result};
use crate::scene::model::{Scene, State};
use crate::scene::output::final_state::InputsOutput;
use crate::scene::statics::{StaticOptions, StaticReport, solve_static};
use crate::scene::step::{StepReport, Stepper};

use super::command_log::CommandLog;
use super::command_schedule::CommandSchedule;

/// Where a run under commands starts (`--start`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RunStart {
    /// At rest at the static equilibrium under the start inputs u_{−1} (`solve_static` from
    /// the scene's initial state, velocities zero): a robot that has been holding its first
    /// commands for a long time. The default.
    #[default]
    Static,
    /// The scene's initial state (rest positions, zero velocities), the start inputs set.
    Scene,
}

impl RunStart {
    /// `static` or `scene`; errors name `what` (the flag or argument) and list both.
    pub fn parse(what: &str, text: &str) -> Result<RunStart> {
        match text {
            "static" => Ok(RunStart::Static),
            "scene" => Ok(RunStart::Scene),
            other => Err(Error::invalid(
                what,
                format!("expected `static` or `scene`, got `{other}`"),
            )),
        }
    }

    /// The start state of a run of `scene`, whose start inputs are set: the static
    /// equilibrium under them, at rest, with its report per soft body ([`RunStart::Static`]),
    /// or the scene's initial state and no report. Errors: a static start in a scene with
    /// contact (not supported by statics), a static solve that does not converge.
    pub fn state(self, scene: &Scene) -> Result<(State, Vec<StaticReport>)> {
        let mut state = scene.initial_state();
        let reports = match self {
            RunStart::Static => {
                if scene.contact.is_active() {
                    return Err(Error::invalid(
                        "the static start (--start static)",
                        "solves the equilibrium under the run's first inputs, and statics with contact is not supported yet: start from the scene's initial state instead (--start scene; start=\"scene\" in Python)",
                    ));
                }
                solve_static(scene, &mut state, StaticOptions::default())?
            }
            RunStart::Scene => Vec::new(),
        };
        Ok((state, reports))
    }
}

/// A run following a command log: the schedule, the stepper, the planned number of steps and
/// the static start's reports.
pub struct CommandRun {
    schedule: CommandSchedule,
    stepper: Stepper,
    steps: usize,
    static_reports: Vec<StaticReport>,
}

impl CommandRun {
    /// Starts a run of `log` on `scene`: resolves the log's names
    /// ([`CommandSchedule::new`]), sets the start inputs u_{−1} on `scene`, and returns the
    /// run with its start state (time 0 is the log's t₀): the static equilibrium under those
    /// inputs ([`RunStart::Static`]) or the scene's initial state. `steps` (default: the
    /// whole steps that reach the log's last row, [`CommandSchedule::steps_to_last_row`]) is
    /// the run's planned length, [`CommandRun::steps`]. Errors: the schedule's, a static start
    /// in a scene with contact (not supported by statics), a static solve that does not
    /// converge, and [`Stepper::new`]'s.
    pub fn start(
        scene: &mut Scene,
        log: CommandLog,
        steps: Option<usize>,
        start: RunStart,
    ) -> Result<(CommandRun, State)> {
        let mut schedule = CommandSchedule::new(scene, log)?;
        let steps = steps.unwrap_or_else(|| schedule.steps_to_last_row());
        schedule.apply_start(scene);
        let (state, static_reports) = start.state(scene)?;
        let stepper = Stepper::new(scene)?;
        Ok((
            CommandRun {
                schedule,
                stepper,
                steps,
                static_reports,
            },
            state,
        ))
    }

    /// The planned number of steps (given, or to the log's last row).
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// The static start's report per soft body (empty for [`RunStart::Scene`]).
    pub fn static_reports(&self) -> &[StaticReport] {
        &self.static_reports
    }

    /// The schedule (t₀, file time, clamp counts).
    pub fn schedule(&self) -> &CommandSchedule {
        &self.schedule
    }

    /// The schedule, mutable: a caller that carries tangents applies each step's inputs with
    /// [`CommandSchedule::apply_next_with_tangents`] and steps with its own stepper.
    pub fn schedule_mut(&mut self) -> &mut CommandSchedule {
        &mut self.schedule
    }

    /// The warnings of clamps since the last call (one per actuator over the run).
    pub fn take_warnings(&mut self) -> Vec<String> {
        self.schedule.take_warnings()
    }

    /// One step: sets the next step's inputs on `scene` ([`CommandSchedule::apply_next`]) and
    /// steps `state` with them. Steps beyond [`CommandRun::steps`] hold the last row's
    /// commands.
    pub fn step(&mut self, scene: &mut Scene, state: &mut State) -> Result<StepReport> {
        self.schedule.apply_next(scene);
        self.stepper.step(scene, state)
    }

    /// The schedule and the stepper, for a caller that steps itself (`bench` times the
    /// stepper's steps): call [`CommandSchedule::apply_next`] before each step.
    pub fn into_parts(self) -> (CommandSchedule, Stepper) {
        (self.schedule, self.stepper)
    }

    /// The final state's `"inputs"`: the file, t₀, the steps run, the clamp counts.
    pub fn output(&self) -> InputsOutput {
        self.schedule.output()
    }
}
