//! Composite rigid-body algorithm with world-frame composite inertias (Featherstone, "Rigid
//! Body Dynamics Algorithms", Table 6.2; Pinocchio's `Convention::WORLD`): the rigid step's
//! CRBA, which also leaves the world placements and Jacobian columns it reads afterwards.

use super::data::Data;
use super::joint::JointKind;
use super::kinematics::{joint_columns, place_joint};
use super::mat3;
use super::model::Model;
use super::revolute_pose::{coordinate_axis, revolute_cos_sin, rotated_about};
use super::spatial::{Se3, Vec6, spatial};
use crate::math::DMat;

/// The joint-space inertia matrix `M(q)` (nv × nv, kg·m² / kg), full symmetric, in `data.m`
/// (also returned). With world-frame Jacobian columns `J` and `F_c = Y^C J_c`, `Y^C` the
/// composite inertia of the subtree of `c`'s joint, `M[c, r] = M[r, c] = J_rᵀ F_c` for every
/// coordinate `c` in the subtree of `r`'s joint; the other entries are zero. Both triangles are
/// written as the entries are formed. Also leaves `oMi`, `liMi` and `data.j` current for `q`
/// (what the rigid step reads after factorising M); [`crba`](super::crba) computes the same
/// matrix in joint frames, without them.
pub fn crba_world<'a>(model: &Model, data: &'a mut Data, q: &[f64]) -> &'a DMat {
    assert_eq!(q.len(), model.nq, "q must have length nq");
    let n = model.njoints();
    let nv = model.nv;
    // The pose of the joint just before, kept in registers: in a chain it is the parent, read
    // without a round trip through memory.
    let mut prev = data.o_m_i[0];
    for i in 1..n {
        let joint = &model.joints[i];
        let om = match joint.kind {
            // One column, and the joint rotation leaves the translation of the placement alone.
            JointKind::Revolute { axis } | JointKind::RevoluteUnbounded { axis } => {
                let placement = &model.placements[i];
                let (c, s) = revolute_cos_sin(&joint.kind, &q[joint.idx_q..]);
                let k = coordinate_axis(&axis);
                let li = Se3 {
                    rot: rotated_about(&placement.rot, &axis, k, c, s),
                    trans: placement.trans,
                };
                let p = model.parents[i];
                let parent = if p + 1 == i { prev } else { data.o_m_i[p] };
                // `parent · li`, unrolled (the same values as `Se3::mul`).
                let om = Se3 {
                    rot: mat3::mul(&parent.rot, &li.rot),
                    trans: mat3::mul_vec(&parent.rot, &li.trans) + parent.trans,
                };
                // About a coordinate axis `e_k`, `R e_k` is column k of R.
                let w = match k {
                    Some(k) => om.rot.column(k).into_owned(),
                    None => om.rot * axis,
                };
                data.j[joint.idx_v] = spatial(om.trans.cross(&w), w);
                data.li_m_i[i] = li;
                data.o_m_i[i] = om;
                om
            }
            _ => {
                place_joint(model, data, i, q);
                joint_columns(model, data, i);
                data.o_m_i[i]
            }
        };
        data.o_icrb[i] = model.inertias[i].transformed_origin(&om);
        prev = om;
    }
    let Data {
        m,
        o_m_i,
        o_icrb,
        j,
        u_cols,
        ..
    } = data;
    let m = m.as_mut_slice();
    assert_eq!(m.len(), nv * nv);
    for i in (1..n).rev() {
        let joint = &model.joints[i];
        let (iv, jnv) = (joint.idx_v, joint.nv());
        let end = iv + model.nv_subtree[i];
        // This joint's composite and its ancestors' borrowed apart: no copy of it is made.
        let (outer, rest) = o_icrb.split_at_mut(i);
        let y = &rest[0];
        for (u, jc) in u_cols[iv..iv + jnv].iter_mut().zip(&j[iv..iv + jnv]) {
            *u = y.mul_motion(jc);
        }
        if let JointKind::FreeFlyer = joint.kind {
            fill_free_flyer_rows(m, nv, iv, &o_m_i[i], &u_cols[iv..end]);
        } else {
            // Within the joint's own block only `c ≥ r` (the lower triangle) is formed.
            for r in iv..iv + jnv {
                fill_row(m, nv, r, &j[r], &u_cols[r..end]);
            }
        }
        let p = model.parents[i];
        if p > 0 {
            outer[p].add_assign(y);
        }
    }
    &data.m
}

/// `M[c, r] = M[r, c] = J_rᵀ F_c` for the columns `c = r, r + 1, …` of `f` (column-major `m`,
/// `nv` rows).
#[inline(always)]
fn fill_row(m: &mut [f64], nv: usize, r: usize, jr: &Vec6, f: &[Vec6]) {
    let c0 = r;
    let jr = *jr;
    let col_r = &mut m[r * nv + c0..r * nv + c0 + f.len()];
    for (e, fc) in col_r.iter_mut().zip(f) {
        *e = jr.dot(fc);
    }
    // Row r, columns c0..: the transposed entries (stride nv).
    for k in 0..f.len() {
        let v = m[r * nv + c0 + k];
        m[(c0 + k) * nv + r] = v;
    }
}

/// The six rows `r0..r0 + 6` of a free-flyer with world pose `om`: its Jacobian columns are
/// `om · I₆`, so `[J_r0 … J_r0+5]ᵀ F_c` is the force `F_c` expressed in the joint frame,
/// `om⁻¹ · F_c` (24 products instead of 36). `f` holds the columns `c = r0, r0 + 1, …`; within
/// the joint's own block only `r ≤ c` is formed, then mirrored.
#[inline(always)]
fn fill_free_flyer_rows(m: &mut [f64], nv: usize, r0: usize, om: &Se3, f: &[Vec6]) {
    for (k, fc) in f.iter().enumerate() {
        let c = r0 + k;
        let x = om.act_inv_force(fc);
        if k >= 5 {
            m[c * nv + r0..c * nv + r0 + 6].copy_from_slice(x.as_slice());
            for (r, xr) in x.iter().enumerate() {
                m[(r0 + r) * nv + c] = *xr;
            }
        } else {
            for r in 0..=k {
                m[c * nv + r0 + r] = x[r];
                m[(r0 + r) * nv + c] = x[r];
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{Mat3, Vec3};
    use crate::rigid::{Inertia, JointKind, Model, Se3};

    #[test]
    fn a_free_body_at_the_origin_has_its_spatial_inertia_as_mass_matrix() {
        let mut model = Model::new("body");
        let j = model
            .add_joint(0, JointKind::FreeFlyer, Se3::identity(), "root")
            .unwrap();
        let inertia = Mat3::from_diagonal(&Vec3::new(0.1, 0.2, 0.3));
        model.append_body(j, &Inertia::new(2.0, Vec3::new(0.0, 0.0, 0.1), inertia));
        let mut data = Data::new(&model);
        let m = crba_world(&model, &mut data, &model.neutral()).clone();
        // [[m I, −m[c]×], [m[c]×, I_c − m[c]×²]] with m = 2, c = (0, 0, 0.1):
        // m[c]× = [[0, −0.2, 0], [0.2, 0, 0], [0, 0, 0]], −m[c]×² = diag(0.02, 0.02, 0).
        #[rustfmt::skip]
        let expect = DMat::from_row_slice(6, 6, &[
            2.0, 0.0, 0.0, 0.0, 0.2, 0.0,
            0.0, 2.0, 0.0, -0.2, 0.0, 0.0,
            0.0, 0.0, 2.0, 0.0, 0.0, 0.0,
            0.0, -0.2, 0.0, 0.12, 0.0, 0.0,
            0.2, 0.0, 0.0, 0.0, 0.22, 0.0,
            0.0, 0.0, 0.0, 0.0, 0.0, 0.3,
        ]);
        assert!((m - expect).amax() < 1e-15);
    }
}
