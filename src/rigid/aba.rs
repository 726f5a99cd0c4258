//! Articulated-body algorithm: forward dynamics `q̈ = M(q)⁻¹ (τ − b(q, v))` in O(n)
//! (Featherstone, "Rigid Body Dynamics Algorithms", Table 7.1), with the articulated inertias
//! and bias forces accumulated in the world frame (no 6×6 frame changes in the backward pass).

use super::data::Data;
use super::kinematics::{joint_columns, place_joint};
use super::model::Model;
use super::spatial::{Mat6, Vec6, cross_force, cross_motion};
use crate::math::DVec;

/// For joint `i` with current `data.o_yaba[i]` (`I^A`) and Jacobian columns: `U = I^A J`,
/// `D⁻¹ = (Jᵀ U)⁻¹` (into `data.dinv[i]`, identity-padded to 6×6) and `U D⁻¹`.
#[inline(always)]
pub(crate) fn articulate_joint(model: &Model, data: &mut Data, i: usize) {
    let joint = &model.joints[i];
    let (iv, nv) = (joint.idx_v, joint.nv());
    let ia = &data.o_yaba[i];
    for k in iv..iv + nv {
        data.u_cols[k] = ia * data.j[k];
    }
    if nv == 1 {
        let d = data.j[iv].dot(&data.u_cols[iv]);
        assert!(
            d > 0.0,
            "joint {}: articulated inertia is not positive",
            joint.name
        );
        let dinv = 1.0 / d;
        data.dinv[i][(0, 0)] = dinv;
        data.ud_cols[iv] = data.u_cols[iv] * dinv;
        return;
    }
    let mut d = Mat6::identity();
    for r in 0..nv {
        for c in 0..nv {
            d[(r, c)] = data.j[iv + r].dot(&data.u_cols[iv + c]);
        }
    }
    let chol = nalgebra::Cholesky::new(d).unwrap_or_else(|| {
        panic!(
            "joint {}: articulated inertia is not positive definite",
            joint.name
        )
    });
    let dinv = chol.inverse();
    data.dinv[i] = dinv;
    for c in 0..nv {
        let mut s = data.u_cols[iv] * dinv[(0, c)];
        for r in 1..nv {
            s += data.u_cols[iv + r] * dinv[(r, c)];
        }
        data.ud_cols[iv + c] = s;
    }
}

/// Adds to the parent of joint `i` its articulated inertia as seen across the joint,
/// `I^A − U D⁻¹ Uᵀ`, and returns it.
#[inline(always)]
pub(crate) fn pass_articulated_inertia(model: &Model, data: &mut Data, i: usize) -> Mat6 {
    let joint = &model.joints[i];
    let mut ia = data.o_yaba[i];
    for k in joint.idx_v..joint.idx_v + joint.nv() {
        ia -= data.ud_cols[k] * data.u_cols[k].transpose();
    }
    data.o_yaba[model.parents[i]] += ia;
    ia
}

/// First pass: placements, Jacobian columns, world velocities `data.ov`, bias accelerations
/// `c_i = v_i × (J_i q̇_i)` (in `data.oa`), body inertias (`data.oinertia`, `data.o_yaba`) and
/// bias forces `p_i = v_i ×* (Y_i v_i)` (in `data.of`).
pub(crate) fn aba_first_pass(model: &Model, data: &mut Data, q: &[f64], v: &[f64]) {
    data.ov[0].fill(0.0);
    for i in 1..model.njoints() {
        place_joint(model, data, i, q);
        joint_columns(model, data, i);
        let joint = &model.joints[i];
        let mut vj = Vec6::zeros();
        for k in joint.idx_v..joint.idx_v + joint.nv() {
            vj += data.j[k] * v[k];
        }
        let ov = data.ov[model.parents[i]] + vj;
        data.ov[i] = ov;
        data.oa[i] = cross_motion(&ov, &vj);
        let y = model.inertias[i].transformed(&data.o_m_i[i]).matrix();
        data.oinertia[i] = y;
        data.o_yaba[i] = y;
        data.of[i] = cross_force(&ov, &(y * ov));
    }
}

/// Backward step of joint `i`: `U`, `D⁻¹`, `u = τ − Jᵀ p^A`, and the articulated inertia and
/// bias force `p^a = p^A + I^a c + U D⁻¹ u` handed to the parent.
#[inline(always)]
pub(crate) fn aba_backward_joint(model: &Model, data: &mut Data, i: usize, tau: &[f64]) {
    articulate_joint(model, data, i);
    let joint = &model.joints[i];
    let (iv, nv) = (joint.idx_v, joint.nv());
    for k in iv..iv + nv {
        data.u[k] = tau[k] - data.j[k].dot(&data.of[i]);
    }
    let p = model.parents[i];
    if p > 0 {
        let ia = pass_articulated_inertia(model, data, i);
        let mut pa = data.of[i] + ia * data.oa[i];
        for k in iv..iv + nv {
            pa += data.ud_cols[k] * data.u[k];
        }
        data.of[p] += pa;
    }
}

/// Forward step of joint `i`: `a = a_λ + c`, `q̈ = D⁻¹(u − Uᵀ a)`, `a += J q̈` (world frame).
#[inline(always)]
pub(crate) fn aba_forward_joint(model: &Model, data: &mut Data, i: usize) {
    let joint = &model.joints[i];
    let (iv, nv) = (joint.idx_v, joint.nv());
    let a = data.oa[model.parents[i]] + data.oa[i];
    let mut acc = a;
    if nv == 1 {
        let s = data.dinv[i][(0, 0)] * (data.u[iv] - data.u_cols[iv].dot(&a));
        data.ddq[iv] = s;
        acc += data.j[iv] * s;
    } else {
        let mut w = [0.0; 6];
        for (c, wc) in w.iter_mut().enumerate().take(nv) {
            *wc = data.u[iv + c] - data.u_cols[iv + c].dot(&a);
        }
        let dinv = &data.dinv[i];
        for r in 0..nv {
            let mut s = 0.0;
            for (c, wc) in w.iter().enumerate().take(nv) {
                s += dinv[(r, c)] * wc;
            }
            data.ddq[iv + r] = s;
            acc += data.j[iv + r] * s;
        }
    }
    data.oa[i] = acc;
}

/// The joint accelerations `q̈(q, v, τ)` (length nv) under gravity, in `data.ddq` (also
/// returned). World-frame ABA: the bias acceleration of body i is `c_i = v_i × (J_i q̇_i)`, the
/// bias force `p_i = v_i ×* (Y_i v_i)`, and the three passes of Featherstone Table 7.1.
/// Afterwards `data.oa` holds the world accelerations with the fictitious gravity (`a − g`).
pub fn aba<'a>(model: &Model, data: &'a mut Data, q: &[f64], v: &[f64], tau: &[f64]) -> &'a DVec {
    assert!(q.len() == model.nq && v.len() == model.nv && tau.len() == model.nv);
    let n = model.njoints();
    aba_first_pass(model, data, q, v);
    for i in (1..n).rev() {
        aba_backward_joint(model, data, i, tau);
    }
    data.oa[0] = -model.gravity;
    for i in 1..n {
        aba_forward_joint(model, data, i);
    }
    &data.ddq
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{Mat3, Vec3};
    use crate::rigid::{Inertia, JointKind, Model, Se3, rnea};

    #[test]
    fn a_free_body_falls_with_gravity_seen_in_its_own_frame() {
        let mut model = Model::new("body");
        let j = model
            .add_joint(0, JointKind::FreeFlyer, Se3::identity(), "root")
            .unwrap();
        let inertia = Mat3::new(0.1, 0.01, 0.0, 0.01, 0.2, 0.02, 0.0, 0.02, 0.3);
        model.append_body(j, &Inertia::new(1.5, Vec3::new(0.1, -0.2, 0.3), inertia));
        let mut data = Data::new(&model);
        // A rotation of 90° about x: (qx, qy, qz, qw) = (sin 45°, 0, 0, cos 45°).
        let s = std::f64::consts::FRAC_1_SQRT_2;
        let q = [0.4, 0.5, 0.6, s, 0.0, 0.0, s];
        let ddq = aba(&model, &mut data, &q, &[0.0; 6], &[0.0; 6]).clone();
        // Rᵀ (0, 0, −9.81) with R = Rx(90°): the body's y axis points up, so g = (0, −9.81, 0).
        let expect = [0.0, -9.81, 0.0, 0.0, 0.0, 0.0];
        for k in 0..6 {
            assert!((ddq[k] - expect[k]).abs() < 1e-12, "{ddq}");
        }
        // Holding the body still takes the weight at its centre of mass: f = −m g (body frame),
        // n = c × f.
        let tau = rnea(&model, &mut data, &q, &[0.0; 6], &[0.0; 6]).clone();
        let f = Vec3::new(0.0, 1.5 * 9.81, 0.0);
        let n = Vec3::new(0.1, -0.2, 0.3).cross(&f);
        let expect = [f.x, f.y, f.z, n.x, n.y, n.z];
        for k in 0..6 {
            assert!((tau[k] - expect[k]).abs() < 1e-12, "{tau}");
        }
    }
}
