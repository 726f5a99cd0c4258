//! A run of a reduced model: under a command log (as `scene::CommandRun` runs the full
//! model, same time base and input maps) or under the scene's own inputs, with the full
//! node positions reconstructed after every step for outputs, markers and effectors.

use std::time::Instant;

use crate::error::Result;
use crate::scene::{CommandLog, CommandSchedule, RunStart, Scene, State};

use super::model::ReducedModel;
use super::stepper::{ReducedState, ReducedStepper};

/// A reduced run in progress.
pub struct ReducedRun {
    schedule: Option<CommandSchedule>,
    stepper: ReducedStepper,
    reduced: ReducedState,
    steps: usize,
    warnings: Vec<String>,
    warned_range: bool,
}

impl ReducedRun {
    /// Starts a run of `model` on `scene`: under `log` when given (its first inputs set on
    /// `scene`; `steps` defaults to the log's last row), else under the scene's own inputs
    /// for `steps` (default `simulation.steps`). `RunStart::Static` starts at the reduced
    /// static equilibrium under the first inputs (Newton on the reduced forces from the
    /// projection of the full one); `RunStart::Scene` projects the scene's initial state.
    /// Returns the run and its start state (full positions, x = X + ū + Vq).
    pub fn start(
        scene: &mut Scene,
        model: &ReducedModel,
        log: Option<CommandLog>,
        steps: Option<usize>,
        start: RunStart,
    ) -> Result<(ReducedRun, State)> {
        let stepper = ReducedStepper::new(scene, model)?;
        let (schedule, steps) = match log {
            Some(log) => {
                let mut schedule = CommandSchedule::new(scene, log)?;
                let steps = steps.unwrap_or_else(|| schedule.steps_to_last_row());
                schedule.apply_start(scene);
                (Some(schedule), steps)
            }
            None => (None, steps.unwrap_or(scene.simulation.steps)),
        };
        let (mut state, _) = start.state(scene)?;
        let mut run = ReducedRun {
            schedule,
            reduced: stepper.project(scene, &state),
            stepper,
            steps,
            warnings: Vec::new(),
            warned_range: false,
        };
        if start == RunStart::Static {
            let forces = state.actuator_forces[0].clone();
            run.stepper.settle(scene, &mut run.reduced, &forces)?;
        }
        run.stepper.expand(scene, &run.reduced, &mut state);
        Ok((run, state))
    }

    /// The steps the run takes.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// The reduced stepper.
    pub fn stepper(&self) -> &ReducedStepper {
        &self.stepper
    }

    /// The reduced coordinates now.
    pub fn reduced(&self) -> &ReducedState {
        &self.reduced
    }

    /// The command schedule, under a log.
    pub fn schedule(&self) -> Option<&CommandSchedule> {
        self.schedule.as_ref()
    }

    /// One step: the next inputs set on `scene`, the reduced step, and `state` (positions,
    /// velocities, λ, time) brought to it.
    pub fn step(&mut self, scene: &mut Scene, state: &mut State) -> Result<()> {
        self.step_timed(scene, state).map(|_| ())
    }

    /// [`ReducedRun::step`], returning the wall time (ms) of the reduced step itself and of
    /// rebuilding the full positions and velocities.
    pub fn step_timed(&mut self, scene: &mut Scene, state: &mut State) -> Result<(f64, f64)> {
        if let Some(s) = self.schedule.as_mut() {
            s.apply_next(scene);
        }
        let clock = Instant::now();
        self.stepper
            .step(scene, &mut self.reduced, &mut state.actuator_forces[0])?;
        let step = clock.elapsed().as_secs_f64() * 1e3;
        let clock = Instant::now();
        self.stepper.expand(scene, &self.reduced, state);
        let expand = clock.elapsed().as_secs_f64() * 1e3;
        state.steps += 1;
        state.time = state.steps as f64 * scene.simulation.dt;
        if !self.warned_range
            && let Some((j, q, [lo, hi])) = self.stepper.outside_training(&self.reduced)
        {
            self.warned_range = true;
            self.warnings.push(format!(
                "step {}: reduced coordinate {j} = {q:.3e} left the range seen in training [{lo:.3e}, {hi:.3e}] (by more than a tenth of it): the reduced model extrapolates; train it on commands that reach this far",
                state.steps
            ));
        }
        Ok((step, expand))
    }

    /// The warnings since the last call (inputs clamped, the training range left), each once.
    pub fn take_warnings(&mut self) -> Vec<String> {
        let mut w = self
            .schedule
            .as_mut()
            .map(CommandSchedule::take_warnings)
            .unwrap_or_default();
        w.append(&mut self.warnings);
        w
    }
}
