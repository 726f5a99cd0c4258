//! Composite rigid-body algorithm: the joint-space inertia matrix `M(q)` (Featherstone,
//! "Rigid Body Dynamics Algorithms", Table 6.2), with world-frame composite inertias.

use super::data::Data;
use super::joint::{JointKind, axis_rotation};
use super::kinematics::{joint_columns, place_joint};
use super::model::Model;
use super::spatial::{Se3, Vec6, spatial};
use crate::math::{DMat, Mat3, Vec3};

/// The joint-space inertia matrix `M(q)` (nv × nv, kg·m² / kg), full symmetric, in `data.m`
/// (also returned). With world-frame Jacobian columns `J` and `F_c = Y^C J_c`, `Y^C` the
/// composite inertia of the subtree of `c`'s joint, `M[c, r] = M[r, c] = J_rᵀ F_c` for every
/// coordinate `c` in the subtree of `r`'s joint; the other entries are zero. Both triangles are
/// written as the entries are formed. Also leaves `oMi`, `liMi` and `data.j` current for `q`.
pub fn crba<'a>(model: &Model, data: &'a mut Data, q: &[f64]) -> &'a DMat {
    assert_eq!(q.len(), model.nq, "q must have length nq");
    let n = model.njoints();
    let nv = model.nv;
    for i in 1..n {
        let joint = &model.joints[i];
        match joint.kind {
            // One column, and the joint rotation leaves the translation of the placement alone.
            JointKind::Revolute { axis } | JointKind::RevoluteUnbounded { axis } => {
                let placement = &model.placements[i];
                let (c, s) = revolute_cos_sin(&joint.kind, &q[joint.idx_q..]);
                let li = Se3 {
                    rot: rotated_about(&placement.rot, &axis, c, s),
                    trans: placement.trans,
                };
                let om = data.o_m_i[model.parents[i]].mul(&li);
                data.li_m_i[i] = li;
                data.o_m_i[i] = om;
                let w = om.rot * axis;
                data.j[joint.idx_v] = spatial(om.trans.cross(&w), w);
            }
            _ => {
                place_joint(model, data, i, q);
                joint_columns(model, data, i);
            }
        }
        data.o_icrb[i] = model.inertias[i].transformed_origin(&data.o_m_i[i]);
    }
    let Data {
        m,
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
        let y = o_icrb[i];
        for (u, jc) in u_cols[iv..iv + jnv].iter_mut().zip(&j[iv..iv + jnv]) {
            *u = y.mul_motion(jc);
        }
        // Within the joint's own block only `c ≥ r` (the lower triangle) is formed.
        for r in iv..iv + jnv {
            fill_row(m, nv, r, &j[r], &u_cols[r..end]);
        }
        let p = model.parents[i];
        if p > 0 {
            o_icrb[p].add_assign(&y);
        }
    }
    &data.m
}

/// Cosine and sine of a revolute joint's angle from its coordinates `q` (the angle, or the
/// `(cos, sin)` pair of an unbounded joint, normalised as in [`JointModel::transform`](super::JointModel::transform)).
#[inline(always)]
fn revolute_cos_sin(kind: &JointKind, q: &[f64]) -> (f64, f64) {
    if let JointKind::RevoluteUnbounded { .. } = kind {
        let (c, s) = (q[0], q[1]);
        let n = (c * c + s * s).sqrt();
        (c / n, s / n)
    } else {
        let (s, c) = q[0].sin_cos();
        (c, s)
    }
}

/// `P · R(axis, θ)` for the rotation by the angle with cosine `c` and sine `s` about the unit
/// `axis`. About a coordinate axis `e_k` only two columns mix (`P e_k` is kept):
/// `P R e_b = c P e_b + s P e_d`, `P R e_d = c P e_d − s P e_b` with `(k, b, d)` cyclic —
/// the same floating-point values as the full product, whose other terms are exact zeros.
#[inline(always)]
fn rotated_about(p: &Mat3, axis: &Vec3, c: f64, s: f64) -> Mat3 {
    let k = if axis.x == 1.0 && axis.y == 0.0 && axis.z == 0.0 {
        0
    } else if axis.x == 0.0 && axis.y == 1.0 && axis.z == 0.0 {
        1
    } else if axis.x == 0.0 && axis.y == 0.0 && axis.z == 1.0 {
        2
    } else {
        return p * axis_rotation(axis, c, s);
    };
    let (b, d) = ((k + 1) % 3, (k + 2) % 3);
    let (pb, pd) = (p.column(b), p.column(d));
    let mut out = *p;
    out.set_column(b, &(pb * c + pd * s));
    out.set_column(d, &(pd * c - pb * s));
    out
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
    fn coordinate_axis_rotation_equals_the_full_product_bit_for_bit() {
        let p = crate::rigid::spatial::exp3(&Vec3::new(0.3, -0.7, 1.1));
        let (s, c) = 0.83f64.sin_cos();
        for axis in [Vec3::x(), Vec3::y(), Vec3::z(), Vec3::new(0.6, 0.0, 0.8)] {
            assert_eq!(
                rotated_about(&p, &axis, c, s),
                p * axis_rotation(&axis, c, s)
            );
        }
    }

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
