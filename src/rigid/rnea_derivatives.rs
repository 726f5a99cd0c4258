//! Analytical derivatives of RNEA, `∂τ/∂q` and `∂τ/∂v` (Carpentier & Mansard, "Analytical
//! derivatives of rigid body dynamics algorithms", RSS 2018, Sec. III-B, Algorithm 1), in the
//! world frame as Pinocchio's `computeRNEADerivatives`. Derivatives with respect to q are taken
//! in the tangent space: column c is `d τ(q ⊕ ε e_c) / dε` at ε = 0.

use super::data::Data;
use super::kinematics::{joint_columns, place_joint};
use super::model::Model;
use super::spatial::{Mat6, Vec6, ang, cross_force, cross_motion, lin, skew};
use crate::math::{Mat3, Vec3};

/// `Ẏ = v ×* Y − Y (v ×) + (· ×* h)` for a world-frame inertia matrix `Y` moving with the
/// twist `v`, `h = Y v` (the paper's `B_i` term; Pinocchio's `variation` + `addForceCrossMatrix`).
/// With `Y = [[m I, −[mc]×], [[mc]×, D]]` and `h = [f; n]` it reduces to
/// `[[0, −2[f]×], [0, −([v]×[mc]× + [mc]×[v]×) + [ω]× D − D [ω]× − [n]×]]`.
#[inline(always)]
pub(crate) fn inertia_variation(y: &Mat6, v: &Vec6, h: &Vec6) -> Mat6 {
    let mc = Vec3::new(y[(5, 1)], y[(3, 2)], y[(4, 0)]);
    let d: Mat3 = y.fixed_view::<3, 3>(3, 3).into_owned();
    let (sv, sw, smc) = (skew(&lin(v)), skew(&ang(v)), skew(&mc));
    let g = -(sv * smc + smc * sv) + sw * d - d * sw - skew(&ang(h));
    let mut out = Mat6::zeros();
    out.fixed_view_mut::<3, 3>(0, 3)
        .copy_from(&(skew(&lin(h)) * -2.0));
    out.fixed_view_mut::<3, 3>(3, 3).copy_from(&g);
    out
}

/// The two passes of the derivatives, from the world-frame kinematics already in `data`
/// (`o_m_i`, `j`, `ov`, `oa` with gravity folded in as `a − g`, `oinertia`): fills `data.tau`,
/// `data.dtau_dq`, `data.dtau_dv`.
///
/// Forward: per column `J`, `∂v/∂q = v_λ × J`, `∂a/∂q = a_λ × J + v_λ × ∂v/∂q`,
/// `∂a/∂v = v_i × J + ∂v/∂q`, body force `f_i = Y_i a_i + v_i ×* Y_i v_i` and `Ẏ_i`.
/// Backward, with composite quantities of the subtree: `∂F/∂q = Ẏ ∂v/∂q + Y ∂a/∂q` (plus
/// `J ×* F` for the ancestors), `∂F/∂v = Ẏ J + Y ∂a/∂v`; the rows of the subtree's columns are
/// `Jᵀ ∂F` and the rows of the ancestors' columns `Jᵀ Y ∂a + Jᵀ Ẏ ∂v` (Eq. 8–12 of the paper).
pub(crate) fn rnea_derivative_passes(model: &Model, data: &mut Data) {
    let n = model.njoints();
    for i in 1..n {
        let p = model.parents[i];
        let (ov, oa) = (data.ov[i], data.oa[i]);
        let y = data.oinertia[i];
        let oh = y * ov;
        data.of[i] = y * oa + cross_force(&ov, &oh);
        data.o_ycrb[i] = y;
        data.do_ycrb[i] = inertia_variation(&y, &ov, &oh);
        let joint = &model.joints[i];
        let (ovp, oap) = (data.ov[p], data.oa[p]);
        for k in joint.idx_v..joint.idx_v + joint.nv() {
            let jc = data.j[k];
            let dj = cross_motion(&ov, &jc);
            data.dj[k] = dj;
            let mut da_dq = cross_motion(&oap, &jc);
            let mut da_dv = dj;
            if p > 0 {
                let dv_dq = cross_motion(&ovp, &jc);
                data.dv_dq[k] = dv_dq;
                da_dq += cross_motion(&ovp, &dv_dq);
                da_dv += dv_dq;
            } else {
                data.dv_dq[k] = Vec6::zeros();
            }
            data.da_dq[k] = da_dq;
            data.da_dv[k] = da_dv;
        }
    }
    for i in (1..n).rev() {
        let joint = &model.joints[i];
        let (iv, nv) = (joint.idx_v, joint.nv());
        let end = iv + model.nv_subtree[i];
        let p = model.parents[i];
        let (y, dy, of) = (data.o_ycrb[i], data.do_ycrb[i], data.of[i]);
        for k in iv..iv + nv {
            data.tau[k] = data.j[k].dot(&of);
            data.df_dv[k] = dy * data.j[k] + y * data.da_dv[k];
            data.df_dq[k] = dy * data.dv_dq[k] + y * data.da_dq[k];
        }
        for r in iv..iv + nv {
            let jr = data.j[r];
            for c in iv..end {
                data.dtau_dq[(r, c)] = jr.dot(&data.df_dq[c]);
                data.dtau_dv[(r, c)] = jr.dot(&data.df_dv[c]);
            }
        }
        for k in iv..iv + nv {
            data.df_dq[k] += cross_force(&data.j[k], &of);
        }
        if p > 0 {
            for r in iv..iv + nv {
                let t1 = y.tr_mul(&data.j[r]);
                let t2 = dy.tr_mul(&data.j[r]);
                let mut c = model.parent_dof[iv];
                while let Some(col) = c {
                    data.dtau_dq[(r, col)] = t1.dot(&data.da_dq[col]) + t2.dot(&data.dv_dq[col]);
                    data.dtau_dv[(r, col)] = t1.dot(&data.da_dv[col]) + t2.dot(&data.j[col]);
                    c = model.parent_dof[col];
                }
            }
            data.o_ycrb[p] += y;
            data.do_ycrb[p] += dy;
            data.of[p] += of;
        }
    }
}

/// Fills `data.dtau_dq` and `data.dtau_dv` (nv × nv, tangent space) and `data.tau` at
/// `(q, v, a)`. World-frame kinematics first: `v_i = v_λ + J_i q̇_i`,
/// `a_i = a_λ + J_i q̈_i + v_i × J_i q̇_i` with `a_0 = −g`; then `rnea_derivative_passes`.
pub fn compute_rnea_derivatives(model: &Model, data: &mut Data, q: &[f64], v: &[f64], a: &[f64]) {
    assert!(q.len() == model.nq && v.len() == model.nv && a.len() == model.nv);
    data.ov[0].fill(0.0);
    data.oa[0] = -model.gravity;
    for i in 1..model.njoints() {
        place_joint(model, data, i, q);
        joint_columns(model, data, i);
        let joint = &model.joints[i];
        let (mut vj, mut aj) = (Vec6::zeros(), Vec6::zeros());
        for k in joint.idx_v..joint.idx_v + joint.nv() {
            vj += data.j[k] * v[k];
            aj += data.j[k] * a[k];
        }
        let p = model.parents[i];
        let ov = data.ov[p] + vj;
        data.ov[i] = ov;
        data.oa[i] = data.oa[p] + aj + cross_motion(&ov, &vj);
        data.oinertia[i] = model.inertias[i].transformed(&data.o_m_i[i]).matrix();
    }
    rnea_derivative_passes(model, data);
}
