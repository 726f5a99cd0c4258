//! The rigid step's free velocity (paper 002 Eq. 3 without contact): semi-implicit Euler on
//! the unconstrained dynamics, `v_free = v + h ABA(q, v, τ − d ∘ v)`, with `d` the joints'
//! viscous damping (URDF `<dynamics damping>`). The step then adds the contact impulses,
//! `v⁺ = v_free + h M⁻¹ J_cᵀ λ`, and integrates `q⁺ = q ⊕ h v⁺` ([`Model::integrate_dt`]).

use super::aba::aba;
use super::data::Data;
use super::model::Model;

/// `v_free = v + h ABA(q, v, τ − d ∘ v)` into `out` (length nv; rad/s, m/s), `h` the time step
/// (s), `tau` the joint inputs (N·m, N).
pub fn free_velocity(
    model: &Model,
    data: &mut Data,
    q: &[f64],
    v: &[f64],
    tau: &[f64],
    h: f64,
    out: &mut [f64],
) {
    assert_eq!(out.len(), model.nv, "free_velocity: out has length nv");
    // The damped input first (out as scratch), then the velocity.
    for (k, s) in out.iter_mut().enumerate() {
        *s = tau[k] - model.damping[k] * v[k];
    }
    let ddq = aba(model, data, q, v, out);
    for (k, o) in out.iter_mut().enumerate() {
        *o = v[k] + h * ddq[k];
    }
}
