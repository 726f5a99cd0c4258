//! Analytical derivatives of RNEA, `∂τ/∂q` and `∂τ/∂v` (Carpentier & Mansard, "Analytical
//! derivatives of rigid body dynamics algorithms", RSS 2018, Sec. III-B, Algorithm 1), in the
//! world frame as Pinocchio's `computeRNEADerivatives`. Derivatives with respect to q are taken
//! in the tangent space: column c is `d τ(q ⊕ ε e_c) / dε` at ε = 0.

use super::data::Data;
use super::kinematics::{joint_columns, joint_motion, place_joint};
use super::model::Model;
use super::spatial::{
    Vec6, cross_force, cross_motion, force_cross_matrix_of_wrench, motion_cross_matrix,
};

/// Fills `data.dtau_dq` and `data.dtau_dv` (nv × nv) and `data.tau` at `(q, v, a)`.
///
/// Forward pass (world frame, gravity folded into the acceleration `a_gf = a − g`): per
/// column `J = oMi S`, `∂v/∂q = v_λ × J`, `∂a/∂q = a_λ × J + v_λ × ∂v/∂q`, `∂a/∂v = v_i × J +
/// ∂v/∂q`, body force `f_i = Y_i a_i + v_i ×* Y_i v_i`, and `Ẏ_i = v_i ×* Y_i − Y_i v_i× +
/// (· ×* h_i)` (the paper's `B_i`-like term). Backward pass: composite quantities of the subtree
/// give `∂F/∂q = Ẏ ∂v/∂q + Y ∂a/∂q (+ J ×* F for the ancestors)`, `∂F/∂v = Ẏ J + Y ∂a/∂v`,
/// the rows of the subtree's columns as `Jᵀ ∂F`, and the rows of the ancestors' columns as
/// `Jᵀ Y ∂a + Jᵀ Ẏ ∂v` (Eq. 8–12 of the paper).
pub fn compute_rnea_derivatives(model: &Model, data: &mut Data, q: &[f64], v: &[f64], a: &[f64]) {
    assert!(q.len() == model.nq && v.len() == model.nv && a.len() == model.nv);
    let n = model.njoints();
    data.v[0].fill(0.0);
    data.a[0] = -model.gravity;
    data.ov[0].fill(0.0);
    data.oa[0] = -model.gravity;
    for i in 1..n {
        place_joint(model, data, i, q);
        joint_columns(model, data, i);
        let p = model.parents[i];
        let li = data.li_m_i[i];
        let vj = joint_motion(model, i, v);
        let vi = li.act_inv_motion(&data.v[p]) + vj;
        let ai = li.act_inv_motion(&data.a[p]) + joint_motion(model, i, a) + cross_motion(&vi, &vj);
        data.v[i] = vi;
        data.a[i] = ai;
        let om = data.o_m_i[i];
        let ov = om.act_motion(&vi);
        let oa = om.act_motion(&ai);
        data.ov[i] = ov;
        data.oa[i] = oa;
        let y = model.inertias[i].transformed(&om).matrix();
        let oh = y * ov;
        data.oh[i] = oh;
        data.of[i] = y * oa + cross_force(&ov, &oh);
        data.o_ycrb[i] = y;
        let x = motion_cross_matrix(&ov);
        data.do_ycrb[i] = -x.transpose() * y - y * x + force_cross_matrix_of_wrench(&oh);
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
