//! Derivatives of the configuration update `q ⊕ ν` ([`Model::integrate`]) in the tangent
//! space (Pinocchio's `dIntegrate`): with `q' = q ⊕ δ` and `ν' = ν + dν`,
//!
//! ```text
//! (q ⊕ δ) ⊕ ν = (q ⊕ ν) ⊕ (J_q δ),      q ⊕ (ν + dν) = (q ⊕ ν) ⊕ (J_ν dν)   (first order)
//! ```
//!
//! Per joint: one-coordinate joints `J_q = J_ν = 1`; a spherical joint (`R' = R exp3(ω)`)
//! `J_q = exp3(ω)ᵀ`, `J_ν = J_r(ω)` (the right Jacobian of SO(3)); a free-flyer
//! (`M' = M exp6(ν)`) `J_q = Ad(exp6(ν))⁻¹`, `J_ν = J_r(ν)` (the right Jacobian of SE(3),
//! Barfoot, *State Estimation for Robotics*, 2017, §7.1.5).

use super::joint::JointKind;
use super::model::Model;
use super::spatial::{Se3, Vec6, ang, exp3, left_jacobian_so3, lin, skew};
use crate::math::{DMat, Mat3, Vec3};

/// Fills `jq` and `jnu` (nv × nv, block diagonal per joint) with the derivatives of `q ⊕ ν`
/// with respect to `q` (tangent space) and to `ν` (module doc).
pub fn integrate_jacobians(model: &Model, nu: &[f64], jq: &mut DMat, jnu: &mut DMat) {
    let nv = model.nv;
    assert!(nu.len() == nv && jq.shape() == (nv, nv) && jnu.shape() == (nv, nv));
    jq.fill(0.0);
    jnu.fill(0.0);
    for j in &model.joints[1..] {
        let i = j.idx_v;
        match j.kind {
            JointKind::Universe => {}
            JointKind::Revolute { .. }
            | JointKind::RevoluteUnbounded { .. }
            | JointKind::Prismatic { .. } => {
                jq[(i, i)] = 1.0;
                jnu[(i, i)] = 1.0;
            }
            JointKind::Spherical => {
                let w = Vec3::new(nu[i], nu[i + 1], nu[i + 2]);
                put3(jq, i, i, &exp3(&w).transpose());
                put3(jnu, i, i, &so3_right_jacobian(&w));
            }
            JointKind::FreeFlyer => {
                let x = Vec6::from_column_slice(&nu[i..i + 6]);
                let m = Se3::exp6(&x);
                // Ad(M)⁻¹ = [[Rᵀ, −Rᵀ[p]×], [0, Rᵀ]].
                let rt = m.rot.transpose();
                put3(jq, i, i, &rt);
                put3(jq, i, i + 3, &(-rt * skew(&m.trans)));
                put3(jq, i + 3, i + 3, &rt);
                let r = se3_left_jacobian(&(-x));
                for a in 0..6 {
                    for b in 0..6 {
                        jnu[(i + a, i + b)] = r[(a, b)];
                    }
                }
            }
        }
    }
}

/// The right Jacobian of SO(3), `J_r(ω) = J_l(−ω)`: `exp3(ω + dω) = exp3(ω) exp3(J_r(ω) dω)`.
pub fn so3_right_jacobian(w: &Vec3) -> Mat3 {
    left_jacobian_so3(&(-w))
}

/// The left Jacobian of SE(3) for the twist `ξ = [ρ; φ]`: `[[J_l(φ), Q(ρ, φ)], [0, J_l(φ)]]`
/// (Barfoot 2017, Eq. 7.86), so `exp6(ξ + dξ) = exp6(J_l(ξ) dξ) exp6(ξ)`.
pub fn se3_left_jacobian(xi: &Vec6) -> super::spatial::Mat6 {
    let (rho, phi) = (lin(xi), ang(xi));
    let jl = left_jacobian_so3(&phi);
    let (p, r) = (skew(&phi), skew(&rho));
    let (c1, c2, c3) = q_coefficients(phi.norm_squared(), phi.norm() < 1e-2);
    let q = r * 0.5
        + (p * r + r * p + p * r * p) * c1
        + (p * p * r + r * p * p - p * r * p * 3.0) * c2
        + (p * r * p * p + p * p * r * p) * c3;
    let mut out = super::spatial::Mat6::zeros();
    out.fixed_view_mut::<3, 3>(0, 0).copy_from(&jl);
    out.fixed_view_mut::<3, 3>(0, 3).copy_from(&q);
    out.fixed_view_mut::<3, 3>(3, 3).copy_from(&jl);
    out
}

/// The coefficients of Q's three terms at θ² = `t2`, closed form or (near θ = 0, where the
/// closed form cancels) their series; both are accurate to ~1e-12 at the switch θ = 1e-2
/// (the closed form's rounding there is multiplied by θ to θ³ in Q).
fn q_coefficients(t2: f64, series: bool) -> (f64, f64, f64) {
    let t = t2.sqrt();
    if series {
        (
            1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0,
            1.0 / 24.0 - t2 / 720.0 + t2 * t2 / 40320.0,
            1.0 / 120.0 - t2 / 2520.0 + t2 * t2 / 120960.0,
        )
    } else {
        let (s, c) = t.sin_cos();
        (
            (t - s) / (t2 * t),
            (t2 + 2.0 * c - 2.0) / (2.0 * t2 * t2),
            (2.0 * t - 3.0 * s + t * c) / (2.0 * t2 * t2 * t),
        )
    }
}

fn put3(m: &mut DMat, r: usize, c: usize, b: &Mat3) {
    for a in 0..3 {
        for d in 0..3 {
            m[(r + a, c + d)] = b[(a, d)];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain with every joint kind: free-flyer, spherical, revolute, unbounded, prismatic.
    fn every_kind() -> Model {
        let mut m = Model::new("every kind");
        let kinds = [
            JointKind::FreeFlyer,
            JointKind::Spherical,
            JointKind::Revolute {
                axis: Vec3::new(0.0, 1.0, 0.0),
            },
            JointKind::RevoluteUnbounded {
                axis: Vec3::new(1.0, 0.0, 0.0),
            },
            JointKind::Prismatic {
                axis: Vec3::new(0.0, 0.0, 1.0),
            },
        ];
        let mut parent = 0;
        for (k, kind) in kinds.into_iter().enumerate() {
            parent = m
                .add_joint(parent, kind, Se3::identity(), format!("j{k}"))
                .unwrap();
        }
        m
    }

    #[test]
    fn integrate_jacobians_match_central_differences() {
        let model = every_kind();
        let nv = model.nv;
        let mut rng = crate::math::SplitMix64::new(7);
        let mut random = |s: f64| {
            (0..nv)
                .map(|_| s * (rng.uniform() - 0.5))
                .collect::<Vec<_>>()
        };
        let mut q = vec![0.0; model.nq];
        model.integrate(&model.neutral(), &random(2.0), &mut q);
        let nu = random(1.6);
        let (mut jq, mut jnu) = (DMat::zeros(nv, nv), DMat::zeros(nv, nv));
        integrate_jacobians(&model, &nu, &mut jq, &mut jnu);
        let mut base = vec![0.0; model.nq];
        model.integrate(&q, &nu, &mut base);
        let eps = 1e-6;
        // (f(+ε) ⊖ base − f(−ε) ⊖ base) / 2ε.
        let slope = |plus: &[f64], minus: &[f64]| {
            let (mut a, mut b) = (vec![0.0; nv], vec![0.0; nv]);
            model.difference(&base, plus, &mut a);
            model.difference(&base, minus, &mut b);
            (0..nv)
                .map(|r| (a[r] - b[r]) / (2.0 * eps))
                .collect::<Vec<_>>()
        };
        for k in 0..nv {
            let (mut plus, mut minus) = (vec![0.0; model.nq], vec![0.0; model.nq]);
            let (mut qp, mut qm) = (vec![0.0; model.nq], vec![0.0; model.nq]);
            let mut e = vec![0.0; nv];
            e[k] = eps;
            model.integrate(&q, &e, &mut qp);
            e[k] = -eps;
            model.integrate(&q, &e, &mut qm);
            model.integrate(&qp, &nu, &mut plus);
            model.integrate(&qm, &nu, &mut minus);
            let along_q = slope(&plus, &minus);
            let mut n = nu.clone();
            n[k] += eps;
            model.integrate(&q, &n, &mut plus);
            n[k] -= 2.0 * eps;
            model.integrate(&q, &n, &mut minus);
            let along_nu = slope(&plus, &minus);
            for r in 0..nv {
                assert!((along_q[r] - jq[(r, k)]).abs() < 1e-8, "J_q[{r},{k}]");
                assert!((along_nu[r] - jnu[(r, k)]).abs() < 1e-8, "J_ν[{r},{k}]");
            }
        }
    }

    #[test]
    fn the_se3_left_jacobian_matches_central_differences_of_exp6() {
        // exp6(ξ + ε e_k) exp6(ξ)⁻¹ = exp6(ε J_l e_k), on the closed form (the series is checked
        // against it below: exp6 itself loses digits at small angles).
        {
            let scale = 0.7;
            let xi = Vec6::new(0.3, -0.2, 0.5, 0.6 * scale, -0.7 * scale, 0.2 * scale);
            let jl = se3_left_jacobian(&xi);
            let eps = 1e-6;
            for k in 0..6 {
                let mut e = Vec6::zeros();
                e[k] = eps;
                let inv = Se3::exp6(&xi).inverse();
                let plus = Se3::exp6(&(xi + e)).mul(&inv).log6();
                let minus = Se3::exp6(&(xi - e)).mul(&inv).log6();
                let col = (plus - minus) / (2.0 * eps);
                for r in 0..6 {
                    assert!((col[r] - jl[(r, k)]).abs() < 1e-8, "J_l[{r},{k}]");
                }
            }
        }
    }

    #[test]
    fn the_series_of_q_meets_its_closed_form_at_the_switch() {
        // Q's terms carry at least θ, θ² and θ³ besides the three coefficients: compare
        // those products (Q itself is of the order of |ρ|).
        let (t2, t) = (1e-4, 1e-2);
        let (a, b) = (q_coefficients(t2, true), q_coefficients(t2, false));
        assert!((a.0 - b.0).abs() * t < 1e-12, "{a:?} {b:?}");
        assert!((a.1 - b.1).abs() * t2 < 1e-12, "{a:?} {b:?}");
        assert!((a.2 - b.2).abs() * t2 * t < 1e-12, "{a:?} {b:?}");
    }
}
