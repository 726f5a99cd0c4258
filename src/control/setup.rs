//! The `control` job's input (effector, target, number of steps), checked against the scene,
//! and the entry point that runs the control loop on a scene.

use super::qp::QpSolver;
use super::report::ControlReport;
use crate::error::{Error, Result};
use crate::math::Vec3;
use crate::scene::Scene;

/// A checked inverse-control problem.
#[derive(Debug, Clone, PartialEq)]
pub struct ControlSetup {
    /// The effector to drive (an effector name of the scene).
    pub effector: String,
    /// The target position of the effector (m, world frame).
    pub target: Vec3,
    /// Number of control steps (one QP and one simulation step each).
    pub steps: usize,
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
        let effectors: Vec<&str> = scene
            .actuation
            .iter()
            .flat_map(|a| a.effectors.iter().map(|e| e.name.as_str()))
            .collect();
        if !effectors.contains(&effector) {
            return Err(Error::invalid(
                format!("--effector `{effector}`"),
                format!(
                    "the scene has no such effector (its effectors: {})",
                    if effectors.is_empty() {
                        "none".to_string()
                    } else {
                        effectors.join(", ")
                    }
                ),
            ));
        }
        let target = parse_target(target)?;
        let steps = steps.unwrap_or(scene.simulation.steps);
        if steps == 0 {
            return Err(Error::invalid("--steps", "must be at least 1"));
        }
        Ok(ControlSetup {
            effector: effector.to_string(),
            target,
            steps,
        })
    }
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
/// **NOT WIRED YET** (needs the step derivative with respect to the actuation from layer L5
/// `diff`): this returns an error. The wiring is, per step: linearise the effector position
/// `p(λ) ≈ p₀ + W (λ − λ₀)` with `W = ∂p/∂λ_a` from `diff`; build the [`super::Qp`]
/// `min ½‖p₀ + W Δλ − target‖² + ½ε‖Δλ‖²` over `Δλ` (`P = WᵀW + εI`, `q = Wᵀ(p₀ − target)`)
/// with bounds from the actuators (cables only pull: `λ + Δλ ≥ 0`; a maximum force; a
/// maximum change per step); solve with `solver`; apply `λ + Δλ`; step the scene; record
/// the error and the actuation in a [`ControlReport`].
pub fn control_scene(
    scene: &Scene,
    setup: &ControlSetup,
    solver: &mut dyn QpSolver,
) -> Result<ControlReport> {
    let _ = (scene, setup, solver);
    Err(Error::invalid(
        "control",
        "not wired yet: the control loop waits for the step derivatives (diff)",
    ))
}
