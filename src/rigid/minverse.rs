//! The inverse joint-space inertia matrix `M(q)⁻¹` by an ABA-style O(n²) recursion (Carpentier,
//! "Analytical inverse of the joint space inertia matrix", 2018; Pinocchio's
//! `computeMinverse`): column k of `M⁻¹` is ABA's `q̈` for `τ = e_k` at zero velocity and
//! gravity, and all columns are propagated at once as linear maps of τ. `M` is never inverted.

use super::aba::{articulate_joint, pass_articulated_inertia};
use super::crba_world::symmetrize_from_upper;
use super::data::Data;
use super::kinematics::{joint_columns, place_joint};
use super::model::Model;
use super::spatial::Vec6;
use crate::math::DMat;

/// Backward step of joint `i` (after [`articulate_joint`]): row block i of `M⁻¹` gets
/// `D_i⁻¹ u_i` with `u_i = e_i − J_iᵀ F_i`, where `F` (`data.fcrb`, 6 × nv) maps τ to the
/// articulated bias force of i's children; then `F_λ += U_i D_i⁻¹ u_i` on i's subtree columns.
#[inline(always)]
pub(crate) fn minv_backward_joint(model: &Model, data: &mut Data, i: usize) {
    let joint = &model.joints[i];
    let (iv, nv) = (joint.idx_v, joint.nv());
    let end = iv + model.nv_subtree[i];
    let nvt = model.nv;
    for r in 0..nv {
        for c in 0..nv {
            data.minv[(iv + r, iv + c)] = data.dinv[i][(r, c)];
        }
        for col in end..nvt {
            data.minv[(iv + r, col)] = 0.0;
        }
    }
    // Children columns: −D⁻¹ Jᵀ F = −(J D⁻¹)ᵀ F.
    for col in iv + nv..end {
        let fc: Vec6 = data.fcrb.fixed_view::<6, 1>(0, col).into_owned();
        for r in 0..nv {
            let mut s = 0.0;
            for c in 0..nv {
                s += data.dinv[i][(r, c)] * data.j[iv + c].dot(&fc);
            }
            data.minv[(iv + r, col)] = -s;
        }
    }
    if model.parents[i] > 0 {
        for col in iv..end {
            let mut add = Vec6::zeros();
            for r in 0..nv {
                add += data.u_cols[iv + r] * data.minv[(iv + r, col)];
            }
            let mut fc = data.fcrb.fixed_view_mut::<6, 1>(0, col);
            fc += add;
        }
    }
}

/// Forward step of joint `i`: `row_i −= D_i⁻¹ U_iᵀ A_λ` and `A_i = A_λ + J_i row_i`, where
/// `A_i` (`data.acc_map[i]`, 6 × nv) maps τ to body i's acceleration; columns `≥ idx_v(i)` only.
#[inline(always)]
pub(crate) fn minv_forward_joint(model: &Model, data: &mut Data, i: usize) {
    let joint = &model.joints[i];
    let (iv, nv) = (joint.idx_v, joint.nv());
    let nvt = model.nv;
    let p = model.parents[i];
    let (before, rest) = data.acc_map.split_at_mut(i);
    let ai = &mut rest[0];
    for col in iv..nvt {
        let mut acc = Vec6::zeros();
        if p > 0 {
            let apc: Vec6 = before[p].fixed_view::<6, 1>(0, col).into_owned();
            for r in 0..nv {
                data.minv[(iv + r, col)] -= data.ud_cols[iv + r].dot(&apc);
            }
            acc = apc;
        }
        for r in 0..nv {
            acc += data.j[iv + r] * data.minv[(iv + r, col)];
        }
        ai.fixed_view_mut::<6, 1>(0, col).copy_from(&acc);
    }
}

/// `M(q)⁻¹` (nv × nv), full symmetric, in `data.minv` (also returned): a backward pass of
/// `minv_backward_joint` and a forward pass of `minv_forward_joint` over the articulated
/// inertias of ABA; only columns `≥ idx_v(i)` of row block i are formed, the lower triangle is
/// copied from the upper one.
pub fn compute_minverse<'a>(model: &Model, data: &'a mut Data, q: &[f64]) -> &'a DMat {
    assert_eq!(q.len(), model.nq, "q must have length nq");
    let n = model.njoints();
    for i in 1..n {
        place_joint(model, data, i, q);
        joint_columns(model, data, i);
        data.o_yaba[i] = model.inertias[i].transformed(&data.o_m_i[i]).matrix();
    }
    data.fcrb.fill(0.0);
    for i in (1..n).rev() {
        articulate_joint(model, data, i);
        minv_backward_joint(model, data, i);
        if model.parents[i] > 0 {
            pass_articulated_inertia(model, data, i);
        }
    }
    for i in 1..n {
        minv_forward_joint(model, data, i);
    }
    symmetrize_from_upper(&mut data.minv);
    &data.minv
}
