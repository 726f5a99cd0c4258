//! Forward sensitivities of the rigid state along a run: the tangents of every free body's
//! and robot's `(q, v)` with respect to k directions of the initial state and of a constant
//! input, carried step by step by the rigid step's Jacobian ([`RigidStepJacobian`]):
//!
//! ```text
//! S_q⁺ = ∂q⁺/∂q S_q + ∂q⁺/∂v S_v + ∂q⁺/∂τ S_τ,    S_v⁺ = ∂v⁺/∂q S_q + ∂v⁺/∂v S_v + ∂v⁺/∂τ S_τ
//! ```
//!
//! (N × k each, N the stacked velocity coordinates, q in the tangent spaces).

use crate::contact::BoundaryGradient;
use crate::error::{Error, Result};
use crate::math::DMat;
use crate::scene::{Scene, State, Stepper};

use super::rigid_step::rigid_step_jacobian;

/// The tangents of the stacked rigid state after a run (N × k each).
#[derive(Debug, Clone, PartialEq)]
pub struct RigidSensitivity {
    /// `∂q_T/∂(inputs)` (tangent spaces).
    pub q: DMat,
    /// `∂v_T/∂(inputs)`.
    pub v: DMat,
    /// Steps whose rigid NCP stopped at its iteration limit.
    pub unconverged_steps: usize,
}

/// Advances `state` by `steps` steps of `scene` and carries the tangents seeded by
/// `seed_q`, `seed_v` (the initial state's, N × k) and `seed_tau` (a constant input's,
/// N × k; for a robot driven by `torque`, the change of that torque) through them.
/// `progress(step)` is called after each step. Errors as [`rigid_step_jacobian`], and on
/// seeds whose shapes do not match the scene.
pub fn rigid_forward_sensitivities(
    scene: &Scene,
    state: &mut State,
    steps: usize,
    seeds: [&DMat; 3],
    progress: &mut dyn FnMut(usize),
) -> Result<RigidSensitivity> {
    let n: usize = scene.rigid.systems.iter().map(|s| s.nv()).sum();
    let k = seeds[0].ncols();
    if seeds.iter().any(|s| s.shape() != (n, k)) {
        return Err(Error::invalid(
            "rigid sensitivity seeds",
            format!(
                "must be {n} × {k} (the scene's rigid velocity coordinates × directions), got {:?}",
                seeds.map(|s| s.shape())
            ),
        ));
    }
    let mut stepper = Stepper::new(scene)?;
    let (mut sq, mut sv) = (seeds[0].clone(), seeds[1].clone());
    let tau = seeds[2];
    let mut unconverged_steps = 0;
    for step in 0..steps {
        let (report, j) =
            rigid_step_jacobian(scene, &mut stepper, state, BoundaryGradient::OneSided)?;
        unconverged_steps += usize::from(!report.rigid.converged);
        let q = &j.dq_dq * &sq + &j.dq_dv * &sv + &j.dq_dtau * tau;
        let v = &j.dv_dq * &sq + &j.dv_dv * &sv + &j.dv_dtau * tau;
        sq = q;
        sv = v;
        progress(step + 1);
    }
    Ok(RigidSensitivity {
        q: sq,
        v: sv,
        unconverged_steps,
    })
}
