//! Contact inverse dynamics (paper 002 §V-B, Eq. 15): the joint torques that keep a robot in
//! contact still. From a state `(q, v)` find the robot's actuated torques τ with
//! `v⁺(q, v, τ) = 0` — the whole step, contact NCP included — by Gauss–Newton on the step's
//! Jacobian `∂v⁺/∂τ` (`diff::rigid_step_jacobian`): `τ ← τ − (∂v⁺/∂τ)⁺ v⁺`, the minimum-norm
//! least-squares step (the contact forces leave the torques free in the directions that only
//! squeeze the feet against the floor).

use crate::contact::BoundaryGradient;
use crate::diff::rigid_step_jacobian;
use crate::error::{Error, Result};
use crate::math::{DMat, DVec};
use crate::scene::{RigidDynamics, RigidInput, Scene, State, Stepper};

/// What [`contact_inverse_dynamics`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct InverseDynamicsResult {
    /// The robot's joint input (N·m, N; nv entries, zero on unactuated coordinates).
    pub tau: Vec<f64>,
    /// Gauss–Newton iterations taken.
    pub iterations: usize,
    /// `max |v⁺|` (rad/s, m/s) of every rigid coordinate at each iterate, from τ₀.
    pub history: Vec<f64>,
}

impl InverseDynamicsResult {
    /// `max |v⁺|` at the returned τ.
    pub fn residual(&self) -> f64 {
        *self.history.last().expect("the initial residual at least")
    }
}

/// The torques of robot `robot` of `scene` that bring every rigid velocity to zero in one step
/// from `state`, from `initial` (nv), stopping when `max |v⁺| ≤ tolerance` (m/s, rad/s) or
/// after `max_iterations`. Actuated coordinates are those with a positive effort limit outside
/// free-flyer and spherical joints. Errors on an unknown robot or an `initial` of another
/// length, and as the step does.
pub fn contact_inverse_dynamics(
    scene: &Scene,
    robot: &str,
    state: &State,
    initial: &[f64],
    tolerance: f64,
    max_iterations: usize,
) -> Result<InverseDynamicsResult> {
    let systems = &scene.rigid.systems;
    let (s, model) = systems
        .iter()
        .enumerate()
        .find_map(|(i, sys)| match &sys.dynamics {
            RigidDynamics::Robot(m) if sys.name == robot => Some((i, m)),
            _ => None,
        })
        .ok_or_else(|| Error::invalid("--robot", format!("the scene has no robot `{robot}`")))?;
    let nv = model.nv;
    if initial.len() != nv {
        return Err(Error::invalid(
            format!("robot.{robot}.torque"),
            format!("needs {nv} entries, got {}", initial.len()),
        ));
    }
    let actuated: Vec<usize> = model.joints[1..]
        .iter()
        .filter(|j| {
            !matches!(
                j.kind,
                crate::rigid::JointKind::FreeFlyer | crate::rigid::JointKind::Spherical
            )
        })
        .flat_map(|j| j.idx_v..j.idx_v + j.nv())
        .filter(|&k| model.limits.effort[k] > 0.0)
        .collect();
    let offset: usize = systems[..s].iter().map(|x| x.nv()).sum();
    let mut scene = scene.clone();
    let mut tau = initial.to_vec();
    let mut history = Vec::new();
    let mut iterations = 0;
    loop {
        scene.rigid.systems[s].input = RigidInput::Torque(tau.clone());
        let mut next = state.clone();
        let mut stepper = Stepper::new(&scene)?;
        let (_, jac) = rigid_step_jacobian(
            &scene,
            &mut stepper,
            &mut next,
            BoundaryGradient::OneSided,
            &[],
        )?;
        let v: Vec<f64> = next
            .rigid
            .iter()
            .flat_map(|r| r.v.iter().copied())
            .collect();
        let residual = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        history.push(residual);
        if residual <= tolerance || iterations == max_iterations {
            break;
        }
        iterations += 1;
        let j = DMat::from_fn(v.len(), actuated.len(), |r, c| {
            jac.dv_dtau[(r, offset + actuated[c])]
        });
        let step = j
            .svd(true, true)
            .solve(&DVec::from_column_slice(&v), 1e-12)
            .map_err(|e| Error::invalid("contact inverse dynamics", e.to_string()))?;
        for (c, &k) in actuated.iter().enumerate() {
            tau[k] -= step[c];
        }
    }
    Ok(InverseDynamicsResult {
        tau,
        iterations,
        history,
    })
}
