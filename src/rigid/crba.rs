//! Composite rigid-body algorithm: the joint-space inertia matrix `M(q)` (Featherstone,
//! "Rigid Body Dynamics Algorithms", Table 6.2), with world-frame composite inertias.

use super::data::Data;
use super::kinematics::{joint_columns, place_joint};
use super::model::Model;
use crate::math::DMat;

/// The joint-space inertia matrix `M(q)` (nv × nv, kg·m² / kg), full symmetric, in `data.m`
/// (also returned). With world-frame Jacobian columns `J` and `F_c = Y^C J_c`, `Y^C` the
/// composite inertia of the subtree of `c`'s joint, `M[c, r] = J_rᵀ F_c` for every coordinate
/// `c` in the subtree of `r`'s joint; the other entries are zero. The lower triangle is formed
/// column by column and copied onto the upper one.
pub fn crba<'a>(model: &Model, data: &'a mut Data, q: &[f64]) -> &'a DMat {
    assert_eq!(q.len(), model.nq, "q must have length nq");
    let n = model.njoints();
    let nv = model.nv;
    for i in 1..n {
        place_joint(model, data, i, q);
        joint_columns(model, data, i);
        data.o_icrb[i] = model.inertias[i].transformed_origin(&data.o_m_i[i]);
    }
    let m = data.m.as_mut_slice();
    for i in (1..n).rev() {
        let joint = &model.joints[i];
        let (iv, jnv) = (joint.idx_v, joint.nv());
        let end = iv + model.nv_subtree[i];
        for k in iv..iv + jnv {
            data.u_cols[k] = data.o_icrb[i].mul_motion(&data.j[k]);
        }
        for r in iv..iv + jnv {
            let jr = data.j[r];
            let col = &mut m[r * nv..(r + 1) * nv];
            for (entry, f) in col[iv..end].iter_mut().zip(&data.u_cols[iv..end]) {
                *entry = jr.dot(f);
            }
        }
        let p = model.parents[i];
        if p > 0 {
            let y = data.o_icrb[i];
            data.o_icrb[p].add_assign(&y);
        }
    }
    for c in 0..nv {
        for r in c + 1..nv {
            m[r * nv + c] = m[c * nv + r];
        }
    }
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
        let m = crba(&model, &mut data, &model.neutral()).clone();
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
