//! The `control` job with a joint effector (`diffsoro control SCENE --effector q:ROBOT[k]
//! --target θ`): drives a robot's joint coordinate, moved only through contact with the
//! soft bodies (the piano key of `scenes/pianist.toml`, paper 004 §IV), to a target by QP
//! inverse control of the soft actuators. Each step aims at the coupled static equilibrium
//! (`control::joint_effector`) with the same two QPs as a soft effector
//! ([`ActuationQp`], paper 004 Eq. 15-16).
//!
//! Without contact between the robot and the soft bodies the coordinate does not depend on
//! the actuation. The loop then keeps the last sensitivity it had (so a finger that let go
//! of the key is driven back by the same QP), and before any contact presses harder: every
//! actuator rises by the largest change per step, up to its bound (the finger must first
//! reach the key; a scene whose actuators move the finger away from the key never gets
//! there, and the run ends at the bound with `status = "at_bound"`).
//!
//! Within [`JOINT_HOLD`] of the target (the coordinate after the step and the predicted
//! equilibrium both) λ is held. Static friction makes the equilibrium set-valued: a key at
//! rest under a finger that sticks does not follow the sliding sensitivity for a small
//! change of λ (on the pianist at 2 N the sticking model gives dθ/dλ ≈ +0.012 rad/N, the
//! sliding one −0.128 rad/N and settled runs −0.087 rad/N), so a loop that keeps correcting
//! errors at the noise level walks λ inside the stick region in the wrong direction until
//! the contact slips (seen without the hold: 1e-11 rad errors growing twofold every ten
//! steps after 600 steps, then a stick-slip cycle of ±0.25 N). Outside the band it
//! corrects as usual.

use serde::Serialize;

use super::actuation_qp::ActuationQp;
use super::controller::ControlOptions;
use super::joint_effector::{HeldRows, JointEffector, JointLinearizer};
use super::qp::QpSolver;
use super::report::ControlReport;
use super::setup::StateObserver;
use crate::diff::{Recorder, check_differentiable};
use crate::error::{Error, Result};
use crate::math::{DMat, DVec};
use crate::rigid::JointKind;
use crate::scene::{RigidDynamics, Scene};

/// Distance to the target (rad or m) within which a joint effector counts as reached in
/// the report's `status`.
pub const JOINT_REACHED: f64 = 1e-5;

/// Relative distance of λ to a bound within which an actuator counts as on it (the QP's
/// interior point stops about 1e-10 short of an active bound).
const AT_BOUND: f64 = 1e-8;

/// Distance to the target (rad or m) within which, measured and predicted, the loop holds
/// λ (module doc: static friction makes the equilibrium set-valued).
pub const JOINT_HOLD: f64 = 1e-7;

/// A checked joint-control problem.
#[derive(Debug, Clone, PartialEq)]
pub struct JointSetup {
    /// The effector.
    pub effector: JointEffector,
    /// The target coordinate (rad for a revolute joint, m for a prismatic one).
    pub target: f64,
    /// Number of control steps (one QP and one simulation step each).
    pub steps: usize,
    /// Bounds and weights of the QP (defaults: [`ControlOptions::default`]).
    pub options: ControlOptions,
    /// Which rows of an active contact the equilibrium holds (default: the normal rows).
    pub held: HeldRows,
}

impl JointSetup {
    /// The setup of `diffsoro control SCENE --effector q:ROBOT[k] --target θ [--steps N]`,
    /// `None` when `effector` is not a rigid name (a soft effector). Errors: a rigid name
    /// that is not one joint coordinate with a spring ([`JointEffector::parse`]), a target
    /// that is not one finite number, zero steps.
    pub fn new(
        scene: &Scene,
        effector: &str,
        target: &str,
        steps: Option<usize>,
    ) -> Result<Option<JointSetup>> {
        let Some(effector) = JointEffector::parse(scene, effector)? else {
            return Ok(None);
        };
        let target = parse_joint_target(target, &effector.name)?;
        let steps = steps.unwrap_or(scene.simulation.steps);
        if steps == 0 {
            return Err(Error::invalid("--steps", "must be at least 1"));
        }
        Ok(Some(JointSetup {
            effector,
            target,
            steps,
            options: ControlOptions::for_scene(scene),
            held: HeldRows::default(),
        }))
    }
}

/// Parses the target of joint effector `effector`: exactly one finite number (rad or m).
pub fn parse_joint_target(text: &str, effector: &str) -> Result<f64> {
    let what = || format!("--target `{text}`");
    let fields = text.split(',').count();
    if fields != 1 {
        return Err(Error::invalid(
            what(),
            format!(
                "the joint effector {effector} takes one number (its coordinate, rad or m), got {fields} fields"
            ),
        ));
    }
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| Error::invalid(what(), "is not a number"))?;
    if !v.is_finite() {
        return Err(Error::invalid(what(), "is not finite"));
    }
    Ok(v)
}

/// What a joint-control report adds to [`ControlReport`] (at the top level of the JSON).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JointSummary {
    /// The effector's name (`q:key[0]`).
    pub effector: String,
    /// The unit of its coordinate, target and error: `rad` (revolute) or `m` (prismatic).
    pub unit: String,
    /// Its velocity after the last step (rad/s or m/s).
    pub final_velocity: f64,
    /// `reached` (final error ≤ [`JOINT_REACHED`]), `at_bound` (not reached, every
    /// actuator on one of its bounds: the target is out of reach within them) or `moving`.
    pub status: String,
    /// The actuators on a bound after the last step.
    pub actuators_at_bound: Vec<String>,
    /// Held contact rows coupling the robot to the soft bodies at the last step (0: no
    /// contact).
    pub contact_rows: usize,
}

/// The unit of a robot's coordinate: `m` for a prismatic joint's, `rad` otherwise.
fn unit(scene: &Scene, e: &JointEffector) -> String {
    let prismatic = match &scene.rigid.systems[e.system].dynamics {
        RigidDynamics::Robot(model) => model
            .joints
            .iter()
            .any(|j| j.idx_v == e.coordinate && matches!(j.kind, JointKind::Prismatic { .. })),
        RigidDynamics::Free(_) => false,
    };
    if prismatic { "m" } else { "rad" }.to_string()
}

/// Drives `setup.effector` of `scene` towards `setup.target` for `setup.steps` steps (module
/// doc), solving each step's QPs with `solver`; `progress` gets the number of steps done,
/// `observe` the initial state and each step's. Row `n` of the report's
/// `actuation_history` is the λ applied during step `n`, `error_history[n]` |θ − target|
/// after it; `target` and `final_position` are one-element arrays.
///
/// Errors: a scene the derivatives do not cover, a scene without force-driven actuators, a
/// failed step, a soft body without static compliance.
pub fn joint_control(
    scene: &Scene,
    setup: &JointSetup,
    solver: &mut dyn QpSolver,
    progress: &mut dyn FnMut(usize),
    observe: &mut StateObserver<'_>,
) -> Result<ControlReport> {
    check_differentiable(scene)?;
    let mut scene = scene.clone();
    let mut actuation = ActuationQp::new(&scene, setup.options)?;
    actuation.apply(&mut scene)?;
    let mut linearizer = JointLinearizer::new(&scene, setup.effector.clone(), setup.held);
    let mut recorder = Recorder::new(&scene)?;
    let mut state = scene.initial_state();
    observe(&scene, &state, &[])?;
    let effector = &setup.effector;
    let (mut error_history, mut position_history, mut actuation_history) =
        (Vec::new(), Vec::new(), Vec::new());
    let mut theta = effector.value(&state);
    let mut last_sensitivity: Option<Vec<f64>> = None;
    let mut contact_rows = 0;
    for step in 0..setup.steps {
        actuation_history.push(actuation.actuation().to_vec());
        let (report, record) = recorder.step(&scene, &mut state)?;
        observe(&scene, &state, &report.contact)?;
        theta = effector.value(&state);
        error_history.push((theta - setup.target).abs());
        position_history.push(vec![theta]);
        let lin = linearizer.linearise(&scene, &record, &state, actuation.parameters())?;
        contact_rows = lin.held_rows;
        let coupled = lin.sensitivity.iter().any(|w| *w != 0.0);
        if coupled {
            last_sensitivity = Some(lin.sensitivity.clone());
        }
        let close = (theta - setup.target)
            .abs()
            .max((lin.predicted - setup.target).abs());
        match (coupled, &last_sensitivity) {
            _ if close <= JOINT_HOLD => {}
            (false, None) => actuation.raise(),
            (_, Some(w)) => {
                let w = DMat::from_row_slice(1, w.len(), w);
                let residual = DVec::from_element(1, lin.predicted - setup.target);
                actuation.update(&w, &residual, solver)?;
            }
            (true, None) => unreachable!("set above"),
        }
        actuation.apply(&mut scene)?;
        recorder.recycle(record);
        progress(step + 1);
    }
    let final_error = (theta - setup.target).abs();
    let (lower, upper) = actuation.bounds();
    let actuators_at_bound: Vec<String> = actuation
        .actuators()
        .iter()
        .zip(actuation.actuation())
        .zip(lower.iter().zip(upper))
        .filter(|((_, l), (lo, hi))| {
            let near = |b: f64| b.is_finite() && (*l - b).abs() <= AT_BOUND * b.abs().max(1.0);
            near(**lo) || near(**hi)
        })
        .map(|((n, _), _)| n.clone())
        .collect();
    let status = if final_error <= JOINT_REACHED {
        "reached"
    } else if actuators_at_bound.len() == actuation.actuators().len() {
        "at_bound"
    } else {
        "moving"
    };
    Ok(ControlReport {
        target: vec![setup.target],
        final_position: vec![theta],
        final_error,
        error_history,
        position_history,
        actuation_history,
        actuators: actuation.actuators().to_vec(),
        actuator_units: super::report::actuation_units(&scene, actuation.actuators()),
        tracking_rms: None,
        grasp: None,
        joint: Some(JointSummary {
            effector: effector.name.clone(),
            unit: unit(&scene, effector),
            final_velocity: effector.velocity(&state),
            status: status.to_string(),
            actuators_at_bound,
            contact_rows,
        }),
    })
}
