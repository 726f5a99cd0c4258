//! Recursive Newton-Euler algorithm: inverse dynamics `τ = M(q) q̈ + b(q, v)` in O(n), body
//! frames (Featherstone, "Rigid Body Dynamics Algorithms", Table 5.1).

use super::data::Data;
use super::kinematics::joint_motion;
use super::model::Model;
use super::spatial::{cross_force, cross_motion};
use crate::math::DVec;

/// The joint forces `τ(q, v, a)` (N·m / N, length nv) that produce the accelerations `a` at
/// `(q, v)` under gravity; result in `data.tau` (also returned). Gravity enters as the
/// fictitious base acceleration `a_0 = −g` (Featherstone Sec. 5.3).
pub fn rnea<'a>(model: &Model, data: &'a mut Data, q: &[f64], v: &[f64], a: &[f64]) -> &'a DVec {
    assert!(a.len() == model.nv, "a must have length nv");
    rnea_impl(model, data, q, v, Some(a))
}

/// The nonlinear effects `b(q, v) = τ(q, v, 0)` (Coriolis, centrifugal and gravity), in `data.tau`.
pub fn nonlinear_effects<'a>(model: &Model, data: &'a mut Data, q: &[f64], v: &[f64]) -> &'a DVec {
    rnea_impl(model, data, q, v, None)
}

fn rnea_impl<'a>(
    model: &Model,
    data: &'a mut Data,
    q: &[f64],
    v: &[f64],
    a: Option<&[f64]>,
) -> &'a DVec {
    assert!(q.len() == model.nq && v.len() == model.nv);
    let n = model.njoints();
    data.v[0].fill(0.0);
    data.a[0] = -model.gravity;
    for i in 1..n {
        let p = model.parents[i];
        let li = model.placements[i].mul(&model.joints[i].transform(q));
        data.li_m_i[i] = li;
        let vj = joint_motion(model, i, v);
        let vi = li.act_inv_motion(&data.v[p]) + vj;
        let mut ai = li.act_inv_motion(&data.a[p]) + cross_motion(&vi, &vj);
        if let Some(a) = a {
            ai += joint_motion(model, i, a);
        }
        data.v[i] = vi;
        data.a[i] = ai;
        let inertia = &model.inertias[i];
        data.f[i] = inertia.mul_motion(&ai) + cross_force(&vi, &inertia.mul_motion(&vi));
    }
    for i in (1..n).rev() {
        let joint = &model.joints[i];
        let fi = data.f[i];
        for k in 0..joint.nv() {
            data.tau[joint.idx_v + k] = joint.subspace(k).dot(&fi);
        }
        let p = model.parents[i];
        if p > 0 {
            let fp = data.li_m_i[i].act_force(&fi);
            data.f[p] += fp;
        }
    }
    &data.tau
}
