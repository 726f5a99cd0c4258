//! Inverse control of a robot that is not the model (feedback): [`Controller`] runs the
//! scene as a model beside the robot and takes the robot's measured effector position, not
//! the model's, for the QP's error.
//!
//! Each [`Controller::update`] is one control period of the robot: the robot has just
//! executed the commands of the last update for one step (`h`, the scene's `dt`) and its
//! effector was measured at `p_m`. The model takes the same step with the same commands
//! (recorded), is linearised as in [`InverseController::linearise`] (its effector at p⁺,
//! the equilibrium it is heading to p_eq, the compliance W), and the QPs of
//! `control::controller` aim with
//!
//! ```text
//! p̂_eq = p_m + (p_eq − p⁺)          (the measured effector, moved as the model expects it to settle)
//! ```
//!
//! in place of p_eq. At the robot's rest under constant commands (the model at rest too),
//! p̂_eq = p_m, so the commands stop changing only where the *measured* effector is on the
//! target: a model error (a stiffer robot, another weight) slows or speeds the approach by
//! the ratio of the compliances but does not bias where it ends (the QP is one Gauss-Newton
//! step per period on the robot's static map, with the model's W). When the robot is the
//! model, p_m = p⁺ and this is exactly `control`'s loop.

use crate::diff::{Recorder, StepRecord};
use crate::error::{Error, Result};
use crate::math::Vec3;
use crate::scene::{Scene, State, StepReport};

use super::controller::{ControlOptions, InverseController, Linearisation};
use super::qp::{QpSettings, QpSolver, QpStatus, default_qp_solver};

/// A feedback controller of one effector: the model (a scene and its state, its actuators
/// at the commands last returned), its inverse controller and QP solver.
pub struct Controller {
    model: Scene,
    state: State,
    recorder: Recorder,
    inverse: InverseController,
    solver: Box<dyn QpSolver>,
    effector: String,
    /// The model's last step, until [`Controller::aim`] linearises it.
    record: Option<StepRecord>,
    report: Option<StepReport>,
    last: Option<Linearisation>,
}

impl Controller {
    /// A controller of `effectors` of `scene` (the model; the robot's first commands are
    /// [`Controller::commands`], the scene's forces clamped into its bounds), with the QP's
    /// `options` ([`ControlOptions::for_scene`] gives the scene's). Errors: not exactly one
    /// effector (the QP drives one), an unknown effector, a scene the derivatives do not
    /// cover, bad options ([`InverseController::new`]).
    pub fn new(scene: &Scene, effectors: &[&str], options: ControlOptions) -> Result<Self> {
        let [effector] = effectors else {
            return Err(Error::invalid(
                "effectors",
                format!(
                    "a controller drives one effector (given {}); several effectors with limited contact forces: control::grasp",
                    effectors.len()
                ),
            ));
        };
        super::setup::check_effector(scene, effector)?;
        let mut model = scene.clone();
        let inverse = InverseController::new(&model, effector, options)?;
        inverse.apply(&mut model)?;
        let recorder = Recorder::new(&model)?;
        let state = model.initial_state();
        Ok(Controller {
            model,
            state,
            recorder,
            inverse,
            solver: default_qp_solver(QpSettings::default()),
            effector: effector.to_string(),
            record: None,
            report: None,
            last: None,
        })
    }

    /// The controlled effector's name.
    pub fn effector(&self) -> &str {
        &self.effector
    }

    /// The controlled actuators' names (every force-driven actuator of the scene), in the
    /// order of [`Controller::commands`].
    pub fn actuators(&self) -> &[String] {
        self.inverse.actuators()
    }

    /// The commands for the robot's next step (N for cables, Pa for cavities, N·m for
    /// servos; [`Controller::actuators`] order): before the first update the scene's forces
    /// clamped into the bounds.
    pub fn commands(&self) -> &[f64] {
        self.inverse.actuation()
    }

    /// The model's state (after as many steps as updates).
    pub fn model_state(&self) -> &State {
        &self.state
    }

    /// The model scene, its actuators at the commands of the last update.
    pub fn model(&self) -> &Scene {
        &self.model
    }

    /// The lead (s) to aim a moving target with: the model's stiffness-proportional
    /// damping β (Rayleigh). A body whose damping is βK lags the equilibrium its inputs
    /// set by a first-order filter of time constant β when mass is negligible (its modes
    /// slower than 1/h), so aiming at the target β ahead (`r(t + β) ≈ r + β ṙ`) cancels the
    /// lag a path moving at speed v otherwise leaves, about β·v.
    pub fn lead(&self) -> f64 {
        self.model.bodies[self.inverse.effector_body()]
            .options()
            .rayleigh_stiffness
    }

    /// The model's effector position (m).
    pub fn model_position(&self) -> Vec3 {
        self.inverse.effector_position(&self.state)
    }

    /// The last aim's linearisation (the measured position in `position`, p̂_eq in
    /// `predicted`, the model's W); None before the first.
    pub fn last(&self) -> Option<&Linearisation> {
        self.last.as_ref()
    }

    /// One control period (module doc): [`Controller::step_model`] then
    /// [`Controller::aim`]; returns the commands for the robot's next step
    /// ([`Controller::actuators`] order) with the first QP's status. Errors (before the
    /// model steps): a position or target that is not finite; then a failed model step.
    pub fn update(&mut self, measured: Vec3, target: Vec3) -> Result<(&[f64], QpStatus)> {
        self.check_finite(measured, target)?;
        self.step_model()?;
        let status = self.aim(measured, target)?;
        Ok((self.inverse.actuation(), status))
    }

    /// The model's half of a period: one recorded step with the current commands (the step
    /// the robot has just taken). Returns its report (contact outcomes). Errors: a failed
    /// step.
    pub fn step_model(&mut self) -> Result<&StepReport> {
        if let Some(old) = self.record.take() {
            self.recorder.recycle(old);
        }
        let (report, record) = self.recorder.step(&self.model, &mut self.state)?;
        self.record = Some(record);
        self.report = Some(report);
        Ok(self.report.as_ref().expect("just set"))
    }

    /// The QPs' half of a period, after [`Controller::step_model`]: linearises the model's
    /// step, aims from the `measured` effector position (m) at `target` (m) and sets the
    /// commands for the robot's next step. Returns the first QP's status (a QP not solved
    /// keeps the commands). Errors: a position or target that is not finite, no model step
    /// since the last aim.
    pub fn aim(&mut self, measured: Vec3, target: Vec3) -> Result<QpStatus> {
        let mut solver = std::mem::replace(&mut self.solver, Box::new(NoSolver));
        let status = self.aim_with(measured, target, solver.as_mut());
        self.solver = solver;
        status
    }

    /// [`Controller::aim`] with the QP solver `solver` instead of the controller's own
    /// (clarabel with the default settings).
    pub fn aim_with(
        &mut self,
        measured: Vec3,
        target: Vec3,
        solver: &mut dyn QpSolver,
    ) -> Result<QpStatus> {
        self.check_finite(measured, target)?;
        let Some(record) = self.record.take() else {
            return Err(Error::invalid(
                "controller",
                "aim needs a model step first (step_model, or update for both)",
            ));
        };
        let lin = self.inverse.linearise(&self.model, &record, &self.state);
        self.recorder.recycle(record);
        let lin = lin?.measured(measured);
        let status = self.inverse.update(&lin, target, solver)?;
        self.inverse.apply(&mut self.model)?;
        self.last = Some(lin);
        Ok(status)
    }

    /// Errors naming the effector: a measured position or target that is not finite.
    fn check_finite(&self, measured: Vec3, target: Vec3) -> Result<()> {
        for (what, p) in [("measured position", measured), ("target", target)] {
            if !p.iter().all(|v| v.is_finite()) {
                return Err(Error::invalid(
                    format!("{what} of effector `{}`", self.effector),
                    format!("({}, {}, {}) is not finite", p.x, p.y, p.z),
                ));
            }
        }
        Ok(())
    }

    /// The effector's position (m) in `state`, a state of the model's scene or of a robot
    /// simulated with the same mesh (the effector's barycentric weights).
    pub fn effector_position(&self, state: &State) -> Vec3 {
        self.inverse.effector_position(state)
    }

    /// Sets the current commands as the inputs of `robot`'s controlled actuators (a
    /// simulated robot: the model's scene with other values). Errors: `robot` lacks one of
    /// the model's actuators.
    pub fn apply(&self, robot: &mut Scene) -> Result<()> {
        self.inverse.apply(robot)
    }
}

/// Stands in for the controller's solver while [`Controller::aim`] lends it out.
struct NoSolver;

impl QpSolver for NoSolver {
    fn solve(&mut self, _: &super::qp::Qp) -> Result<super::qp::QpSolution> {
        Err(Error::invalid("controller", "no QP solver"))
    }

    fn name(&self) -> &'static str {
        "none"
    }
}
