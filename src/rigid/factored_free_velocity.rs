//! The rigid step's free velocity when M(q) is factorised anyway (the step solves with it for
//! the contact impulses): `v_free = v + h M⁻¹ (τ − d ∘ v − b(q, v))`, the same velocity as
//! [`free_velocity`](super::free_velocity)'s `v + h ABA(q, v, τ − d ∘ v)` (equal to round-off),
//! with the bias forces b (Coriolis, centrifugal, gravity) by a world-frame RNEA that reads the
//! placements and Jacobian columns [`MassFactor::factorize`]'s CRBA left in `Data`: no second
//! kinematics pass (no sines and cosines), no articulated inertias.
//!
//! World-frame RNEA at zero joint acceleration (Featherstone Table 5.1 in the world frame, as
//! `aba` runs its passes): with `v_J,i = Σ_k J_k v_k` over joint i's coordinates,
//!
//! ```text
//! v_i = v_p + v_J,i,   a_i = a_p + v_i × v_J,i   (a_0 = −g),   f_i = Y_i a_i + v_i ×* Y_i v_i,
//! F_i = f_i + Σ_children F_c,   b_k = J_kᵀ F_i
//! ```
//!
//! with Y_i body i's spatial inertia about the world origin.

use super::data::Data;
use super::mass_factor::MassFactor;
use super::model::Model;
use super::spatial::{Vec6, cross_force, cross_motion};

/// `v_free = v + h M⁻¹ (τ − d ∘ v − b(q, v))` into `out` (length nv; rad/s, m/s), `h` the time
/// step (s), `tau` the joint inputs (N·m, N). `factor` and `data` must come from
/// [`MassFactor::factorize`] at the step's q (its CRBA leaves the world placements and
/// Jacobian columns current); leaves `data.ov`, `data.oa`, `data.of` and `data.tau` (= b)
/// for that q and `v`.
pub fn factored_free_velocity(
    model: &Model,
    data: &mut Data,
    factor: &MassFactor,
    v: &[f64],
    tau: &[f64],
    h: f64,
    out: &mut [f64],
) {
    let nv = model.nv;
    assert!(
        v.len() == nv && tau.len() == nv && out.len() == nv,
        "lengths nv"
    );
    let n = model.njoints();
    data.ov[0].fill(0.0);
    data.oa[0] = -model.gravity;
    for i in 1..n {
        let joint = &model.joints[i];
        let p = model.parents[i];
        let mut vj = Vec6::zeros();
        for k in joint.idx_v..joint.idx_v + joint.nv() {
            vj += data.j[k] * v[k];
        }
        let ov = data.ov[p] + vj;
        let oa = data.oa[p] + cross_motion(&ov, &vj);
        let y = model.inertias[i].transformed_origin(&data.o_m_i[i]);
        data.of[i] = y.mul_motion(&oa) + cross_force(&ov, &y.mul_motion(&ov));
        data.ov[i] = ov;
        data.oa[i] = oa;
    }
    for i in (1..n).rev() {
        let joint = &model.joints[i];
        let f = data.of[i];
        for k in joint.idx_v..joint.idx_v + joint.nv() {
            data.tau[k] = data.j[k].dot(&f);
        }
        let p = model.parents[i];
        if p > 0 {
            data.of[p] += f;
        }
    }
    for (k, o) in out.iter_mut().enumerate() {
        *o = tau[k] - model.damping[k] * v[k] - data.tau[k];
    }
    factor.solve_in_place(out);
    for (k, o) in out.iter_mut().enumerate() {
        *o = v[k] + h * *o;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rigid::{Base, free_velocity, load_urdf};
    use std::path::Path;

    /// The factored free velocity equals ABA's on a fixed arm and on free-flyers.
    #[test]
    fn equals_the_free_velocity_by_aba() {
        for (file, base) in [
            ("ur5.urdf", Base::Fixed),
            ("quadruped.urdf", Base::FreeFlyer),
            ("humanoid.urdf", Base::FreeFlyer),
        ] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("urdf")
                .join(file);
            let model = load_urdf(&path, base).unwrap();
            let mut q: Vec<f64> = (0..model.nq).map(|k| 0.3 * k as f64 - 0.7).collect();
            if base == Base::FreeFlyer {
                q[3..7].copy_from_slice(&[0.1, -0.2, 0.3, (1.0f64 - 0.14).sqrt()]);
            }
            let v: Vec<f64> = (0..model.nv).map(|k| 0.9 - 0.17 * k as f64).collect();
            let tau: Vec<f64> = (0..model.nv).map(|k| 0.5 * (k as f64).sin()).collect();
            let h = 0.002;
            let mut data = Data::new(&model);
            let mut want = vec![0.0; model.nv];
            free_velocity(&model, &mut data, &q, &v, &tau, h, &mut want);
            let mut data = Data::new(&model);
            let mut factor = MassFactor::new(&model);
            factor.factorize(&model, &mut data, &q).unwrap();
            let mut got = vec![0.0; model.nv];
            factored_free_velocity(&model, &mut data, &factor, &v, &tau, h, &mut got);
            let scale = want.iter().fold(1.0f64, |m, x| m.max(x.abs()));
            for k in 0..model.nv {
                assert!(
                    (want[k] - got[k]).abs() < 1e-12 * scale,
                    "{file} v_free[{k}]: {} vs {}",
                    want[k],
                    got[k]
                );
            }
        }
    }
}
