//! Analytical derivatives of ABA (Carpentier & Mansard, RSS 2018, Sec. III-C): since
//! `M(q) q̈ + b(q, v) = τ`, the forward-dynamics derivatives are `∂q̈/∂q = −M⁻¹ ∂τ/∂q`,
//! `∂q̈/∂v = −M⁻¹ ∂τ/∂v` with the RNEA derivatives evaluated at `a = q̈`, and `∂q̈/∂τ = M⁻¹`.

use super::aba::aba;
use super::data::Data;
use super::minverse::compute_minverse;
use super::model::Model;
use super::rnea_derivatives::compute_rnea_derivatives;

/// Fills `data.ddq` (= ABA(q, v, τ)), `data.ddq_dq`, `data.ddq_dv` (tangent space, nv × nv) and
/// `data.minv` (= ∂q̈/∂τ, full symmetric). Uses `data.tau` and the RNEA-derivative buffers as
/// scratch.
pub fn compute_aba_derivatives(model: &Model, data: &mut Data, q: &[f64], v: &[f64], tau: &[f64]) {
    assert!(q.len() == model.nq && v.len() == model.nv && tau.len() == model.nv);
    aba(model, data, q, v, tau);
    let ddq = std::mem::take(&mut data.ddq);
    compute_rnea_derivatives(model, data, q, v, ddq.as_slice());
    data.ddq = ddq;
    compute_minverse(model, data, q);
    data.ddq_dq.gemm(-1.0, &data.minv, &data.dtau_dq, 0.0);
    data.ddq_dv.gemm(-1.0, &data.minv, &data.dtau_dv, 0.0);
}
