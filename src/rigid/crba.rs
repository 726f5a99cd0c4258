//! Composite rigid-body algorithm: the joint-space inertia matrix `M(q)` (Featherstone,
//! "Rigid Body Dynamics Algorithms", Table 6.2), in joint-local frames as Pinocchio's default
//! (`Convention::LOCAL`): no world placements are formed.

use super::data::Data;
use super::joint::{JointKind, JointModel};
use super::mat3;
use super::model::Model;
use super::origin_inertia::OriginInertia;
use super::revolute_pose::{
    axis_cos_sin, coordinate_axis, revolute_cos_sin, rotate_about_axis, rotated_about,
};
use super::spatial::{Se3, Vec6, spatial};
use crate::math::{DMat, Mat3, Vec3};

/// The joint-space inertia matrix `M(q)` (nv × nv, kg·m² / kg), full symmetric, in `data.m`
/// (also returned). With `Y_i` the composite inertia of joint i's subtree in i's frame
/// (`Y_λ += λX*_i Y_i iX_λ`, child to parent, the 10-number origin form) and `F = Y_i S_c` for
/// a column c of joint i, `M[r, c] = M[c, r] = S_rᵀ (jX*_i F)` for r a coordinate of joint i
/// or of an ancestor j, the force carried up by each `liMi`; the other entries are zero.
/// Also leaves `liMi` current; `oMi` and the Jacobian columns are not touched (the rigid step
/// uses [`crba_world`](super::crba_world), which leaves them current).
pub fn crba<'a>(model: &Model, data: &'a mut Data, q: &[f64]) -> &'a DMat {
    assert_eq!(q.len(), model.nq, "q must have length nq");
    let n = model.njoints();
    let nv = model.nv;
    for i in 1..n {
        let (li, axis) = local_placement(model, i, q);
        data.li_m_i[i] = li;
        data.li_axis[i] = axis;
        data.ycrb[i] = model.inertias[i].origin_form();
    }
    let Data {
        m,
        li_m_i,
        li_axis,
        ycrb,
        ..
    } = data;
    let m = m.as_mut_slice();
    assert_eq!(m.len(), nv * nv);
    for i in (1..n).rev() {
        let joint = &model.joints[i];
        // This joint's composite and its ancestors' borrowed apart: no copy of it is made.
        let (outer, rest) = ycrb.split_at_mut(i);
        let y = &rest[0];
        for k in 0..joint.nv() {
            let c = joint.idx_v + k;
            let mut f = composite_column(joint, k, y);
            // Within the joint's own block only the rows r ≤ c are formed (both triangles).
            project(m, nv, joint, c, &f, k + 1);
            let mut j = i;
            while model.parents[j] > 0 {
                f = act_force(&li_m_i[j], li_axis[j], &f);
                j = model.parents[j];
                let jj = &model.joints[j];
                project(m, nv, jj, c, &f, jj.nv());
            }
        }
        let p = model.parents[i];
        if p > 0 {
            let li = &li_m_i[i];
            outer[p].add_assign(&match li_axis[i] {
                Some(k) => {
                    let (c, s) = axis_cos_sin(&li.rot, k);
                    y.act_about_axis(k, c, s, &li.trans)
                }
                None => y.act(li),
            });
        }
    }
    &data.m
}

/// `liMi = placement · M_J(q)` of joint `i`, and `Some(k)` when it rotates about the
/// coordinate axis `e_k` alone. A revolute joint's is formed from cos and sin without the full
/// rotation product when its axis is a coordinate axis.
#[inline(always)]
fn local_placement(model: &Model, i: usize, q: &[f64]) -> (Se3, Option<usize>) {
    let joint = &model.joints[i];
    let placement = &model.placements[i];
    match joint.kind {
        JointKind::Revolute { axis } | JointKind::RevoluteUnbounded { axis } => {
            let (c, s) = revolute_cos_sin(&joint.kind, &q[joint.idx_q..]);
            let k = coordinate_axis(&axis);
            let li = Se3 {
                rot: rotated_about(&placement.rot, &axis, k, c, s),
                trans: placement.trans,
            };
            (li, k.filter(|_| placement.rot == Mat3::identity()))
        }
        _ => {
            let jm = joint.transform(q);
            let li = Se3 {
                rot: mat3::mul(&placement.rot, &jm.rot),
                trans: mat3::mul_vec(&placement.rot, &jm.trans) + placement.trans,
            };
            (li, None)
        }
    }
}

/// The wrench `f` of joint i's frame in its parent's, `λX*_i f = [R f; R n + p × R f]`
/// (`Se3::act_force`), with `R = R_k(θ)` applied as a plane rotation when `axis` is `Some(k)`.
#[inline(always)]
fn act_force(li: &Se3, axis: Option<usize>, f: &Vec6) -> Vec6 {
    // One copy per axis: the rotation's indices are then constants.
    match axis {
        Some(0) => act_force_about::<0>(li, f),
        Some(1) => act_force_about::<1>(li, f),
        Some(_) => act_force_about::<2>(li, f),
        None => li.act_force(f),
    }
}

#[inline(always)]
fn act_force_about<const K: usize>(li: &Se3, f: &Vec6) -> Vec6 {
    let (c, s) = axis_cos_sin(&li.rot, K);
    let fl = rotate_about_axis(K, c, s, &Vec3::new(f[0], f[1], f[2]));
    let n = rotate_about_axis(K, c, s, &Vec3::new(f[3], f[4], f[5]));
    spatial(fl, n + li.trans.cross(&fl))
}

/// `Y S_k`, the momentum of the composite `y` moving with the joint's k-th subspace column:
/// for a rotation about the unit axis a, `[a × h; I_o a]` (about a coordinate axis, a column
/// of `I_o`); for a translation along a, `[m a; h × a]`.
#[inline(always)]
fn composite_column(joint: &JointModel, k: usize, y: &OriginInertia) -> Vec6 {
    let [xx, xy, xz, yy, yz, zz] = y.i_o;
    let h = y.h;
    match joint.kind {
        JointKind::Revolute { axis } | JointKind::RevoluteUnbounded { axis } => {
            match coordinate_axis(&axis) {
                Some(0) => spatial(Vec3::new(0.0, -h.z, h.y), Vec3::new(xx, xy, xz)),
                Some(1) => spatial(Vec3::new(h.z, 0.0, -h.x), Vec3::new(xy, yy, yz)),
                Some(_) => spatial(Vec3::new(-h.y, h.x, 0.0), Vec3::new(xz, yz, zz)),
                None => spatial(axis.cross(&h), y.rot_mul(&axis)),
            }
        }
        JointKind::Prismatic { axis } => spatial(axis * y.mass, h.cross(&axis)),
        _ => y.mul_motion(&joint.subspace(k)),
    }
}

/// `M[r, c] = M[c, r] = S_rᵀ f` for the first `rows` coordinates r of `joint`, `f` expressed in
/// its frame (column-major `m`, `nv` rows).
#[inline(always)]
fn project(m: &mut [f64], nv: usize, joint: &JointModel, c: usize, f: &Vec6, rows: usize) {
    let r0 = joint.idx_v;
    let mut put = |r: usize, x: f64| {
        m[c * nv + r] = x;
        m[r * nv + c] = x;
    };
    match joint.kind {
        JointKind::Revolute { axis } | JointKind::RevoluteUnbounded { axis } => {
            let x = match coordinate_axis(&axis) {
                Some(k) => f[3 + k],
                None => axis.dot(&f.fixed_rows::<3>(3)),
            };
            put(r0, x);
        }
        JointKind::Prismatic { axis } => put(r0, axis.dot(&f.fixed_rows::<3>(0))),
        JointKind::Spherical => {
            for k in 0..rows {
                put(r0 + k, f[3 + k]);
            }
        }
        JointKind::FreeFlyer => {
            for k in 0..rows {
                put(r0 + k, f[k]);
            }
        }
        JointKind::Universe => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rigid::{Base, crba_world, load_urdf};
    use std::path::Path;

    #[test]
    fn the_joint_frame_matrix_equals_the_world_frame_one() {
        for (file, base) in [
            ("ur5.urdf", Base::Fixed),
            ("quadruped.urdf", Base::FreeFlyer),
            ("humanoid.urdf", Base::FreeFlyer),
            ("double_pendulum.urdf", Base::Fixed),
        ] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("urdf")
                .join(file);
            let model = load_urdf(&path, base).unwrap();
            let mut data = Data::new(&model);
            let dq: Vec<f64> = (0..model.nv).map(|k| 0.37 * k as f64 - 0.9).collect();
            let mut q = model.neutral();
            model.integrate(&model.neutral(), &dq, &mut q);
            let world = crba_world(&model, &mut data, &q).clone();
            let local = crba(&model, &mut data, &q).clone();
            let err = (&local - &world).amax();
            assert!(err < 1e-12 * world.amax(), "{file}: {err}");
            assert_eq!(local, local.transpose(), "{file}: symmetric");
        }
    }
}
