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
    let nv = model.nv;
    let minv = faer::MatRef::from_column_major_slice(data.minv.as_slice(), nv, nv);
    for (out, rhs) in [
        (&mut data.ddq_dq, &data.dtau_dq),
        (&mut data.ddq_dv, &data.dtau_dv),
    ] {
        // faer's GEMM keeps its packing buffers in thread-local storage: no allocation per call
        // once warm (nalgebra's would allocate them on every call at this size).
        faer::linalg::matmul::matmul(
            faer::MatMut::from_column_major_slice_mut(out.as_mut_slice(), nv, nv),
            faer::Accum::Replace,
            minv,
            faer::MatRef::from_column_major_slice(rhs.as_slice(), nv, nv),
            -1.0,
            faer::Par::Seq,
        );
    }
}
