//! The rigid part of the reverse pass (VJP), the transpose of `rigid_forward`: for output
//! cotangents (q̄⁺, v̄⁺) of the rigid systems,
//!
//! ```text
//! ṽ = v̄⁺ + J_vᵀ q̄⁺,   q̄ = J_qᵀ q̄⁺                     (dq⁺ = J_q dq + J_v dv⁺)
//! λ̄ += J (h M⁻¹)ᵀ ṽ                                  (dv⁺ = a_r + h M⁻¹ Jᵀ dλ)
//! ā_r = ṽ + Jᵀ σ̄,  ā_L += H_Lᵀ σ̄,  z̄ = (∂σ/∂z)ᵀ σ̄,  v̄ += s_v Jᵀ σ̄_N, ū_L += s_v H_Lᵀ σ̄_N
//! w = (h M⁻¹)ᵀ ā_r:  q̄ += (∂v⁺/∂q)ᵀ ā_r + ∂τ/∂q w,  v̄ += (∂v⁺/∂v)ᵀ ā_r + ∂τ/∂v w,
//!                    z̄ += (∂(Jᵀλ)/∂z)ᵀ w
//! z̄ += h (∂(H_Lᵀλ)/∂z)ᵀ r̄_L                          (r̄ = A⁻¹ ā of the soft bodies)
//! q̄ += z̄_q,  x̄_L += z̄_x
//! ```
//!
//! with σ̄ = Nᵀ λ̄ the NCP's cotangent (`contact_chain`).

use super::*;
use crate::diff::rigid_record::RigidRecord;
use crate::diff::row_chain::RowChain;
use crate::diff::tangent::RigidTangent;
use crate::math::DVec;

/// The rigid cotangents of a reverse pass (n each).
pub(super) struct RigidCotangents {
    /// ṽ: the cotangent of dv⁺ (output v̄⁺ plus what q⁺ passes to it).
    v_total: DVec,
    /// ā_r, the cotangent of dv⁺ with λ held.
    a_bar: DVec,
    /// The inputs' cotangents q̄, v̄, and τ̄ = (h M⁻¹)ᵀ ā_r of the applied input.
    q_bar: DVec,
    v_bar: DVec,
    tau_bar: DVec,
}

/// ṽ and q̄ from the output cotangent's rigid part (absent: zero).
pub(super) fn rigid_output_cotangent(rec: &RigidRecord, output: &StateTangent) -> RigidCotangents {
    let n = rec.n();
    let (mut q_out, mut v_out) = (DVec::zeros(n), DVec::zeros(n));
    rec.stack(&output.rigid, |r, x| q_out[r] = x, |r, x| v_out[r] = x);
    let v_total = v_out + rec.jv.transpose() * &q_out;
    RigidCotangents {
        a_bar: v_total.clone(),
        v_total,
        q_bar: rec.jq.transpose() * q_out,
        v_bar: DVec::zeros(n),
        tau_bar: DVec::zeros(n),
    }
}

/// The rigid systems' part of λ̄ for `chain`'s rows, J (h M⁻¹)ᵀ ṽ, by block (`blocks` in all).
pub(super) fn chain_lambda_bar(
    chain: &RowChain,
    rec: &RigidRecord,
    cot: &RigidCotangents,
    blocks: usize,
) -> Vec<f64> {
    let w = rec.minv_h().transpose() * &cot.v_total;
    let jw = &chain.jac * w;
    let mut out = vec![0.0; 3 * blocks];
    for (i, row) in chain.rows.iter().enumerate() {
        for r in 0..3 {
            out[3 * row.block + r] = jw[3 * i + r];
        }
    }
    out
}

/// The transposes of the chain rows' dσ for the NCP cotangent `sigma_bar` (by block): into
/// ā_r and v̄ of the rigid systems (`cot`), the soft nodes' ā (`abar`) and v̄ (`vbar`); returns
/// z̄ = (∂σ/∂z)ᵀ σ̄.
pub(super) fn chain_sigma_cotangent(
    chain: &RowChain,
    sigma_bar: &[f64],
    cot: Option<&mut RigidCotangents>,
    abar: &mut NodalFields,
    vbar: &mut NodalFields,
) -> DVec {
    let m = chain.rows.len();
    let mut sb = DVec::zeros(3 * m);
    let mut sb_normal = DVec::zeros(3 * m);
    for (i, row) in chain.rows.iter().enumerate() {
        for r in 0..3 {
            sb[3 * i + r] = sigma_bar[3 * row.block + r];
        }
        sb_normal[3 * i + 2] = chain.s_v[i] * sb[3 * i + 2];
    }
    if let Some(cot) = cot {
        cot.a_bar += chain.jac.transpose() * &sb;
        cot.v_bar += chain.jac.transpose() * &sb_normal;
    }
    let a_l = chain.soft_jac.transpose() * &sb;
    let v_l = chain.soft_jac.transpose() * &sb_normal;
    for (l, &(b, node)) in chain.local.iter().enumerate() {
        for d in 0..3 {
            abar[b][node][d] += a_l[3 * l + d];
            vbar[b][node][d] += v_l[3 * l + d];
        }
    }
    chain.dsigma.transpose() * sb
}

/// The transpose of the velocity update with λ held (module doc): into q̄, v̄ and each
/// chain's z̄ (`chains`, the record's chains with their z̄).
pub(super) fn rigid_update_cotangent(
    rec: &RigidRecord,
    cot: &mut RigidCotangents,
    chains: &mut [(&RowChain, &mut DVec)],
) {
    let n = rec.n();
    let w = rec.minv_h().transpose() * &cot.a_bar;
    cot.q_bar += rec.update.columns(0, n).transpose() * &cot.a_bar;
    cot.v_bar += rec.update.columns(n, n).transpose() * &cot.a_bar;
    for r in 0..n {
        cot.q_bar[r] += rec.dtau_dq[r] * w[r];
        cot.v_bar[r] += rec.dtau_dv[r] * w[r];
    }
    for (chain, zbar) in chains.iter_mut() {
        **zbar += chain.dforce.transpose() * &w;
    }
    cot.tau_bar = w;
}

/// Adds τ̄ to the `tau:ROBOT[k]` parameters' cotangents and kp_k τ̄ to the
/// `target:ROBOT[k]` ones (zero where the effort limit clamped the input), and (∂v⁺/∂m)ᵀ ā_r to the `mass:BODY` ones.
pub(super) fn add_rigid_parameter_cotangents(
    scene: &Scene,
    rec: &RigidRecord,
    cot: &RigidCotangents,
    parameters: &[Parameter],
    out: &mut [f64],
) {
    for (p, o) in parameters.iter().zip(out) {
        match *p {
            Parameter::RigidInput { system, dof } | Parameter::RigidTarget { system, dof }
                if scene.rigid.systems[system].input_unclamped(&rec.end[system], dof) =>
            {
                *o += p.input_gain(scene) * cot.tau_bar[rec.offsets[system] + dof];
            }
            Parameter::RigidMass { system } => *o += rec.mass_column(system).dot(&cot.a_bar),
            _ => {}
        }
    }
}

/// z̄ += h (∂(H_Lᵀλ)/∂z)ᵀ r̄_L, `rbar` the soft nodes' r̄ = A⁻¹ ā (per body and node).
pub(super) fn add_soft_force_cotangent(
    chain: &RowChain,
    rbar: impl Fn(usize, usize) -> Vec3,
    h: f64,
    zbar: &mut DVec,
) {
    let r: DVec = DVec::from_iterator(
        3 * chain.local.len(),
        chain.local.iter().flat_map(|&(b, node)| {
            let v = rbar(b, node);
            [v.x, v.y, v.z]
        }),
    );
    *zbar += chain.dsoft_force.transpose() * r * h;
}

/// Splits z̄ into the rigid q̄ (`cot`) and the soft nodes' x̄ (`xbar`, per body and node).
pub(super) fn distribute(
    chain: &RowChain,
    zbar: &DVec,
    cot: Option<&mut RigidCotangents>,
    xbar: &mut NodalFields,
) {
    let n = chain.n;
    if let Some(cot) = cot {
        for j in 0..n {
            cot.q_bar[j] += zbar[j];
        }
    }
    for (l, &(b, node)) in chain.local.iter().enumerate() {
        for d in 0..3 {
            xbar[b][node][d] += zbar[n + 3 * l + d];
        }
    }
}

/// The inputs' rigid cotangents, per system.
pub(super) fn rigid_input_cotangents(
    rec: &RigidRecord,
    cot: &RigidCotangents,
) -> Vec<RigidTangent> {
    rec.split(cot.q_bar.as_slice(), cot.v_bar.as_slice())
}
