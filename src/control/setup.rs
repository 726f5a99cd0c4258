//! The `control` job's input (effector, target, number of steps), checked against the scene,
//! and the entry point that runs the control loop on a scene.

use super::controller::ControlOptions;
use super::feedback::Controller;
use super::qp::QpSolver;
use super::report::ControlReport;
use crate::error::{Error, Result};
use crate::math::Vec3;
use crate::scene::{ContactOutcome, PointPath, Scene, State};

/// A checked inverse-control problem.
#[derive(Debug, Clone)]
pub struct ControlSetup {
    /// The effector to drive (an effector name of the scene).
    pub effector: String,
    /// The target position of the effector (m, world frame).
    pub target: Vec3,
    /// Number of control steps (one QP and one simulation step each).
    pub steps: usize,
    /// Bounds and weights of the QP (defaults: [`ControlOptions::default`]).
    pub options: ControlOptions,
    /// A moving target (`--target-path`), which replaces `target`: the target of step k is
    /// the path at the step's end time ([`ControlSetup::target_at`]).
    pub path: Option<PointPath>,
    /// `--settle` (s): the report's `tracking_rms` covers the steps ending after this time
    /// (None: no `tracking_rms` for a fixed target; every step for a path).
    pub settle: Option<f64>,
    /// The robot under control when it is not the model (`--plant-set`,
    /// `--measurement-noise`); None: the model is the robot, measured exactly.
    pub plant: Option<super::plant::Plant>,
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
            path: None,
            settle: None,
            plant: None,
        })
    }

    /// The setup of `control --effector NAME --target-path FILE` (the path read with file
    /// and line in errors, [`PointPath::read`]); `target` is the path's first point until
    /// the run moves it.
    pub fn with_path(
        scene: &Scene,
        effector: &str,
        path: &std::path::Path,
        steps: Option<usize>,
    ) -> Result<ControlSetup> {
        let path = PointPath::read(path)?;
        let first = path.positions[0];
        let mut setup = ControlSetup::new(scene, effector, "0,0,0", steps)?;
        setup.target = first;
        setup.path = Some(path);
        Ok(setup)
    }

    /// Sets `--settle` (s). Errors: a time that is not finite and ≥ 0.
    pub fn settle_after(mut self, settle: Option<f64>) -> Result<ControlSetup> {
        if let Some(s) = settle
            && !(s.is_finite() && s >= 0.0)
        {
            return Err(Error::invalid(
                "--settle",
                format!("{s} s must be a finite time ≥ 0"),
            ));
        }
        self.settle = settle;
        Ok(self)
    }

    /// The target at time `t` (s): the path there (linear between its points, held outside
    /// them), or the fixed target.
    pub fn target_at(&self, t: f64) -> Vec3 {
        self.path.as_ref().map_or(self.target, |p| p.at(t))
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
/// state after each step (of the robot: the plant when `setup.plant` is given).
///
/// Each step: the robot (the model itself, or `setup.plant`) steps with the commands; the
/// effector is measured (plus the plant's noise); the feedback [`Controller`] steps the
/// model and chooses the next commands aiming at the target of the next step. Row `n` of
/// `actuation_history` is the input applied during step `n`; `error_history[n]` and
/// `position_history[n]` are the robot's true effector against the target of step `n` (the
/// target at the step's end time). `tracking_rms`: the RMS of `error_history` over the steps
/// ending after `setup.settle` (every step for a path without it).
pub fn control_scene_observed(
    scene: &Scene,
    setup: &ControlSetup,
    solver: &mut dyn QpSolver,
    progress: &mut dyn FnMut(usize),
    observe: &mut StateObserver<'_>,
) -> Result<ControlReport> {
    let mut controller = Controller::new(scene, &[&setup.effector], setup.options)?;
    let mut plant = match &setup.plant {
        Some(p) => Some(p.start(&controller)?),
        None => None,
    };
    let mut noise = super::plant::Noise::new(setup.plant.as_ref());
    match &plant {
        Some(p) => observe(&p.scene, &p.state, &[])?,
        None => observe(controller.model(), controller.model_state(), &[])?,
    }
    let dt = scene.simulation.dt;
    let lead = controller.lead();
    let mut error_history = Vec::with_capacity(setup.steps);
    let mut position_history = Vec::with_capacity(setup.steps);
    let mut actuation_history = Vec::with_capacity(setup.steps);
    let mut position = controller.model_position();
    let mut target = setup.target;
    let (mut squares, mut counted) = (0.0, 0usize);
    for step in 0..setup.steps {
        actuation_history.push(controller.commands().to_vec());
        let time = match plant.as_mut() {
            Some(p) => {
                let report = p.step(&controller)?;
                observe(&p.scene, &p.state, &report.contact)?;
                position = controller.effector_position(&p.state);
                controller.step_model()?;
                p.state.time
            }
            None => {
                let report = controller.step_model()?.contact.clone();
                observe(controller.model(), controller.model_state(), &report)?;
                position = controller.model_position();
                controller.model_state().time
            }
        };
        target = setup.target_at(time);
        let error = (position - target).norm();
        error_history.push(error);
        position_history.push(position.as_slice().to_vec());
        if setup.path.is_some() || setup.settle.is_some() {
            let settle = setup.settle.unwrap_or(f64::NEG_INFINITY);
            if time > settle + 1e-9 * dt {
                squares += error * error;
                counted += 1;
            }
        }
        // The next step's target, aimed the model's damping lag ahead ([`Controller::lead`]).
        let next = setup.target_at(time + dt + lead);
        controller.aim_with(position + noise.sample(), next, solver)?;
        progress(step + 1);
    }
    let tracking_rms = (setup.path.is_some() || setup.settle.is_some())
        .then(|| (squares / counted.max(1) as f64).sqrt())
        .filter(|_| counted > 0);
    Ok(ControlReport {
        target: target.as_slice().to_vec(),
        final_position: position.as_slice().to_vec(),
        final_error: (position - target).norm(),
        error_history,
        position_history,
        actuation_history,
        actuators: controller.actuators().to_vec(),
        actuator_units: super::report::actuation_units(scene, controller.actuators()),
        tracking_rms,
        grasp: None,
        joint: None,
    })
}
