//! Composite rigid-body algorithm: the joint-space inertia matrix `M(q)` (Featherstone,
//! "Rigid Body Dynamics Algorithms", Table 6.2), with world-frame composite inertias.

use super::data::Data;
use super::kinematics::{joint_columns, place_joint};
use super::model::Model;
use crate::math::DMat;

/// The joint-space inertia matrix `M(q)` (nv × nv, kg·m² / kg), full symmetric, in `data.m`
/// (also returned). `M[r, c] = J_rᵀ Y^c_i J_c` for `r` on the path from `c` to the root, where
/// `Y^c_i` is the composite inertia of the subtree of `c`'s joint; the lower triangle is copied
/// from the upper one.
pub fn crba<'a>(model: &Model, data: &'a mut Data, q: &[f64]) -> &'a DMat {
    assert_eq!(q.len(), model.nq, "q must have length nq");
    let n = model.njoints();
    for i in 1..n {
        place_joint(model, data, i, q);
        joint_columns(model, data, i);
        data.o_icrb[i] = model.inertias[i].transformed_origin(&data.o_m_i[i]);
    }
    for i in (1..n).rev() {
        let joint = &model.joints[i];
        for k in joint.idx_v..joint.idx_v + joint.nv() {
            let f = data.o_icrb[i].mul_motion(&data.j[k]);
            let mut r = Some(k);
            while let Some(row) = r {
                data.m[(row, k)] = data.j[row].dot(&f);
                r = model.parent_dof[row];
            }
        }
        let p = model.parents[i];
        if p > 0 {
            let y = data.o_icrb[i];
            data.o_icrb[p].add_assign(&y);
        }
    }
    symmetrize_from_upper(&mut data.m);
    &data.m
}

/// Copies the upper triangle of a square matrix onto its lower triangle.
pub(crate) fn symmetrize_from_upper(m: &mut DMat) {
    let n = m.nrows();
    for c in 0..n {
        for r in c + 1..n {
            m[(r, c)] = m[(c, r)];
        }
    }
}
