//! Analytical derivatives of ABA (Carpentier & Mansard, RSS 2018, Sec. III-C): since
//! `M(q) q̈ + b(q, v) = τ`, the forward-dynamics derivatives are `∂q̈/∂q = −M⁻¹ ∂τ/∂q`,
//! `∂q̈/∂v = −M⁻¹ ∂τ/∂v` with the RNEA derivatives evaluated at `a = q̈`, and `∂q̈/∂τ = M⁻¹`.
//! One ABA sweep yields q̈, the world kinematics (velocities and accelerations with gravity)
//! and, on the same articulated inertias, `M⁻¹`; the RNEA-derivative passes reuse them.

use super::aba::{aba_backward_joint, aba_first_pass, aba_forward_joint};
use super::crba::symmetrize_from_upper;
use super::data::Data;
use super::minverse::{minv_backward_joint, minv_forward_joint};
use super::model::Model;
use super::rnea_derivatives::rnea_derivative_passes;

/// Fills `data.ddq` (= ABA(q, v, τ)), `data.ddq_dq`, `data.ddq_dv` (tangent space, nv × nv) and
/// `data.minv` (= ∂q̈/∂τ, full symmetric); also leaves `data.dtau_dq`, `data.dtau_dv` at
/// `(q, v, q̈)`.
pub fn compute_aba_derivatives(model: &Model, data: &mut Data, q: &[f64], v: &[f64], tau: &[f64]) {
    assert!(q.len() == model.nq && v.len() == model.nv && tau.len() == model.nv);
    let n = model.njoints();
    aba_first_pass(model, data, q, v);
    data.fcrb.fill(0.0);
    for i in (1..n).rev() {
        aba_backward_joint(model, data, i, tau);
        minv_backward_joint(model, data, i);
    }
    data.oa[0] = -model.gravity;
    for i in 1..n {
        aba_forward_joint(model, data, i);
        minv_forward_joint(model, data, i);
    }
    symmetrize_from_upper(&mut data.minv);
    // data.oa now holds the accelerations a − g of the motion q̈: RNEA at (q, v, q̈).
    rnea_derivative_passes(model, data);
    data.ddq_dq.gemm(-1.0, &data.minv, &data.dtau_dq, 0.0);
    data.ddq_dv.gemm(-1.0, &data.minv, &data.dtau_dv, 0.0);
}
