//! Forward kinematics: joint placements, body velocities and accelerations from `(q, v, a)`
//! (Featherstone, "Rigid Body Dynamics Algorithms", Sec. 4.1; Pinocchio's `forwardKinematics`).

use super::data::Data;
use super::joint::JointKind;
use super::model::Model;
use super::spatial::{Vec6, cross_motion, spatial};

/// Sets `liMi` and `oMi` of joint `i` (its parent's `oMi` must be current).
#[inline(always)]
pub(crate) fn place_joint(model: &Model, data: &mut Data, i: usize, q: &[f64]) {
    let jm = model.joints[i].transform(q);
    let li = model.placements[i].mul(&jm);
    data.li_m_i[i] = li;
    data.o_m_i[i] = data.o_m_i[model.parents[i]].mul(&li);
}

/// `S v_i` of joint `i` in its own frame: the joint velocity (or acceleration) twist.
#[inline(always)]
pub(crate) fn joint_motion(model: &Model, i: usize, v: &[f64]) -> Vec6 {
    let joint = &model.joints[i];
    let mut m = Vec6::zeros();
    for k in 0..joint.nv() {
        m += joint.subspace(k) * v[joint.idx_v + k];
    }
    m
}

/// Sets the world-frame Jacobian columns `J = oMi · S` of joint `i` (its `oMi` must be current).
#[inline(always)]
pub(crate) fn joint_columns(model: &Model, data: &mut Data, i: usize) {
    let joint = &model.joints[i];
    let m = &data.o_m_i[i];
    match joint.kind {
        JointKind::Revolute { axis } | JointKind::RevoluteUnbounded { axis } => {
            let w = m.rot * axis;
            data.j[joint.idx_v] = spatial(m.trans.cross(&w), w);
        }
        JointKind::Prismatic { axis } => {
            data.j[joint.idx_v] = spatial(m.rot * axis, crate::math::Vec3::zeros());
        }
        JointKind::Spherical => {
            for k in 0..3 {
                let w = m.rot.column(k).into_owned();
                data.j[joint.idx_v + k] = spatial(m.trans.cross(&w), w);
            }
        }
        JointKind::FreeFlyer => {
            let zero = crate::math::Vec3::zeros();
            for k in 0..3 {
                let r = m.rot.column(k).into_owned();
                data.j[joint.idx_v + k] = spatial(r, zero);
                data.j[joint.idx_v + 3 + k] = spatial(m.trans.cross(&r), r);
            }
        }
        JointKind::Universe => {}
    }
}

/// Placements `oMi`, `liMi` of every joint for the configuration `q` (length nq).
pub fn forward_kinematics_placements(model: &Model, data: &mut Data, q: &[f64]) {
    assert_eq!(q.len(), model.nq, "q must have length nq");
    for i in 1..model.njoints() {
        place_joint(model, data, i, q);
    }
}

/// Placements, body velocities `data.v[i]` and body accelerations `data.a[i]` (spatial, in each
/// body's own frame; gravity not included) for `(q, v, a)`:
/// `v_i = iXλ v_λ + S q̇_i`, `a_i = iXλ a_λ + S q̈_i + v_i × S q̇_i` (Featherstone Eq. 4.3–4.4).
pub fn forward_kinematics(model: &Model, data: &mut Data, q: &[f64], v: &[f64], a: &[f64]) {
    assert!(q.len() == model.nq && v.len() == model.nv && a.len() == model.nv);
    data.v[0] = Vec6::zeros();
    data.a[0] = Vec6::zeros();
    for i in 1..model.njoints() {
        place_joint(model, data, i, q);
        let p = model.parents[i];
        let li = data.li_m_i[i];
        let vj = joint_motion(model, i, v);
        let vi = li.act_inv_motion(&data.v[p]) + vj;
        data.v[i] = vi;
        data.a[i] =
            li.act_inv_motion(&data.a[p]) + joint_motion(model, i, a) + cross_motion(&vi, &vj);
    }
}
