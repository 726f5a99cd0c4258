//! The `control` job's input (effector, target, number of steps), checked against the scene,
//! and the entry point that runs the control loop on a scene.

use super::controller::{ControlOptions, InverseController};
use super::qp::QpSolver;
use super::report::ControlReport;
use crate::diff::Recorder;
use crate::error::{Error, Result};
use crate::math::Vec3;
use crate::scene::{ContactOutcome, Scene, State};

/// A checked inverse-control problem.
#[derive(Debug, Clone, PartialEq)]
pub struct ControlSetup {
    /// The effector to drive (an effector name of the scene).
    pub effector: String,
    /// The target position of the effector (m, world frame).
    pub target: Vec3,
    /// Number of control steps (one QP and one simulation step each).
    pub steps: usize,
    /// Bounds and weights of the QP (defaults: [`ControlOptions::default`]).
    pub options: ControlOptions,
}

impl ControlSetup {
    /// Builds and checks the setup of `diffsoro control SCENE --effector NAME --target X,Y,Z
    /// [--steps N]`: the effector must exist in `scene` (the error lists its effectors), the
    /// target must be three finite numbers ([`parse_target`]), `steps` (default: the scene's
    /// `simulation.steps`) at least 1.
    pub fn new(
        scene: &Scene,
        effector: &str,
        target: &str,
        steps: Option<usize>,
    ) -> Result<ControlSetup> {
        check_effector(scene, effector)?;
        let target = parse_target(target)?;
        let steps = steps.unwrap_or(scene.simulation.steps);
        if steps == 0 {
            return Err(Error::invalid("--steps", "must be at least 1"));
        }
        Ok(ControlSetup {
            effector: effector.to_string(),
            target,
            steps,
            options: ControlOptions::for_scene(scene),
        })
    }
}

/// Checks that `scene` has an effector named `name` (the error lists its effectors).
pub fn check_effector(scene: &Scene, name: &str) -> Result<()> {
    let effectors: Vec<&str> = scene
        .actuation
        .iter()
        .flat_map(|a| a.effectors.iter().map(|e| e.name.as_str()))
        .collect();
    if effectors.contains(&name) {
        return Ok(());
    }
    Err(Error::invalid(
        format!("--effector `{name}`"),
        format!(
            "the scene has no such effector (its effectors: {})",
            if effectors.is_empty() {
                "none".to_string()
            } else {
                effectors.join(", ")
            }
        ),
    ))
}

/// Parses a target `X,Y,Z` (m): exactly three comma-separated finite numbers (spaces around
/// them allowed).
pub fn parse_target(text: &str) -> Result<Vec3> {
    let what = || format!("--target `{text}`");
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() != 3 {
        return Err(Error::invalid(
            what(),
            format!(
                "expected X,Y,Z (three numbers), got {} field(s)",
                parts.len()
            ),
        ));
    }
    let mut out = [0.0; 3];
    for (k, (slot, part)) in out.iter_mut().zip(&parts).enumerate() {
        let axis = ["X", "Y", "Z"][k];
        let v: f64 = part
            .parse()
            .map_err(|_| Error::invalid(what(), format!("{axis} = `{part}` is not a number")))?;
        if !v.is_finite() {
            return Err(Error::invalid(
                what(),
                format!("{axis} = {v} is not finite"),
            ));
        }
        *slot = v;
    }
    Ok(Vec3::from(out))
}

/// Drives `setup.effector` of `scene` towards `setup.target` for `setup.steps` steps by QP
/// inverse control (paper 004 §IV-D, Eq. 15-16), solving each step's QP with `solver`.
///
/// Each control step: one recorded simulation step with the current actuation λ (on a copy
/// of `scene` whose force-driven actuators are set to λ), the effector's linearisation from
/// that step's derivative, and one QP choosing the λ of the next step
/// ([`InverseController`]; its module doc explains the formulation). Row `n` of the
/// report's `actuation_history` is the λ applied during step `n` (row 0 is the scene's own
/// forces clamped into the bounds), `error_history[n]` the distance to the target after it.
///
/// Errors: a scene the derivatives do not cover (target-driven actuators, full Newton,
/// per-step force limits), a failed step. A QP the solver cannot solve keeps λ (a status, not an
/// error).
pub fn control_scene(
    scene: &Scene,
    setup: &ControlSetup,
    solver: &mut dyn QpSolver,
) -> Result<ControlReport> {
    control_scene_with_progress(scene, setup, solver, &mut |_| {})
}

/// [`control_scene`], calling `progress` with the number of steps done after each step (for
/// a progress bar).
pub fn control_scene_with_progress(
    scene: &Scene,
    setup: &ControlSetup,
    solver: &mut dyn QpSolver,
    progress: &mut dyn FnMut(usize),
) -> Result<ControlReport> {
    control_scene_observed(scene, setup, solver, progress, &mut |_, _, _| Ok(()))
}

/// Watches the states of a run: called with the scene as driven (its actuators set to the
/// actuation of the step), the state and the step's contact outcome per soft body (empty at
/// the start), at the start and after each step (e.g. to write the frames of `control
/// --view`). An error stops the run.
pub type StateObserver<'a> = dyn FnMut(&Scene, &State, &[ContactOutcome]) -> Result<()> + 'a;

/// [`control_scene_with_progress`], also calling `observe` with the initial state and the
/// state after each step.
pub fn control_scene_observed(
    scene: &Scene,
    setup: &ControlSetup,
    solver: &mut dyn QpSolver,
    progress: &mut dyn FnMut(usize),
    observe: &mut StateObserver<'_>,
) -> Result<ControlReport> {
    let mut scene = scene.clone();
    let mut controller = InverseController::new(&scene, &setup.effector, setup.options)?;
    controller.apply(&mut scene)?;
    let mut recorder = Recorder::new(&scene)?;
    let mut state = scene.initial_state();
    observe(&scene, &state, &[])?;
    let mut error_history = Vec::with_capacity(setup.steps);
    let mut position_history = Vec::with_capacity(setup.steps);
    let mut actuation_history = Vec::with_capacity(setup.steps);
    let mut position = controller.effector_position(&state);
    for step in 0..setup.steps {
        actuation_history.push(controller.actuation().to_vec());
        let (step_report, record) = recorder.step(&scene, &mut state)?;
        observe(&scene, &state, &step_report.contact)?;
        position = controller.effector_position(&state);
        error_history.push((position - setup.target).norm());
        position_history.push(position.as_slice().to_vec());
        let lin = controller.linearise(&scene, &record, &state)?;
        controller.update(&lin, setup.target, solver)?;
        controller.apply(&mut scene)?;
        recorder.recycle(record);
        progress(step + 1);
    }
    Ok(ControlReport {
        target: setup.target.as_slice().to_vec(),
        final_position: position.as_slice().to_vec(),
        final_error: (position - setup.target).norm(),
        error_history,
        position_history,
        actuation_history,
        actuators: controller.actuators().to_vec(),
        actuator_units: super::report::actuation_units(&scene, controller.actuators()),
        grasp: None,
        joint: None,
    })
}
