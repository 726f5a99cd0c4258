//! Derivatives of a free body's step ([`FreeBody`], Newton–Euler with world-frame velocities):
//! with a generalised force `Q = [f; n]` (N, N·m, world axes, about the centre of mass) applied
//! over the step,
//!
//! ```text
//! ċ⁺ = ċ + h g + h f / m,     ω⁺ = ω + h I_w⁻¹ (n − ω × I_w ω),     I_w = R I Rᵀ
//! ```
//!
//! The mass m scales the whole spatial inertia, `M = m M̂` (the inertia `I = m Î` with it,
//! [`FreeBody::with_mass`]): gravity's acceleration g and the gyroscopic term
//! `I_w⁻¹(ω × I_w ω)` do not change with m, and `d(M⁻¹)/dm = −M⁻¹/m`, so with Q held
//!
//! ```text
//! ∂v⁺/∂m = −h M⁻¹ Q / m        ((m/s, rad/s) per kg)
//! ```
//!
//! Tangent of q: `δ = [δc; δθ]` with `c' = c + δc`, `R' = exp3(δθ) R` (world axes, as
//! [`FreeBody::integrate`]), so `dI_w = [δθ]× I_w − I_w [δθ]×`.

use super::free_body::FreeBody;
use super::spatial::{exp3, left_jacobian_so3, log3, skew};
use crate::math::{DMat, Mat3, Vec3};

/// The derivatives of [`FreeBody::velocity_update`]'s result (6 × 6 each, rows `[ċ⁺; ω⁺]`).
#[derive(Debug, Clone, PartialEq)]
pub struct FreeBodyStepJacobian {
    /// With respect to the configuration's tangent `[δc; δθ]` (Q held).
    pub dq: DMat,
    /// With respect to `v = [ċ; ω]`.
    pub dv: DMat,
    /// With respect to `Q = [f; n]`: `h M⁻¹`.
    pub dforce: DMat,
}

impl FreeBody {
    /// `v⁺ = v + h ([g; −I_w⁻¹(ω × I_w ω)] + M⁻¹ Q)`: the velocity after a step of `h` (s)
    /// under gravity `g` (m/s²) and the generalised force `q_force = [f; n]` (N, N·m, world,
    /// about the centre of mass) — [`FreeBody::free_velocity`] plus the impulse.
    pub fn velocity_update(
        &self,
        q: &[f64],
        v: &[f64],
        gravity: &Vec3,
        q_force: &[f64],
        h: f64,
        out: &mut [f64],
    ) {
        self.free_velocity(q, v, gravity, h, out);
        let mut x = [0.0; 6];
        x.copy_from_slice(&q_force[..6]);
        self.solve_mass(q, &mut x);
        for k in 0..6 {
            out[k] += h * x[k];
        }
    }

    /// The derivatives of [`Self::velocity_update`] at `(q, v, q_force)` (module doc).
    pub fn velocity_update_jacobian(
        &self,
        q: &[f64],
        v: &[f64],
        q_force: &[f64],
        h: f64,
    ) -> FreeBodyStepJacobian {
        let r = super::joint::quaternion_rotation(&q[3..7]);
        let iw = r * self.inertia * r.transpose();
        let iw_inv = iw
            .try_inverse()
            .expect("a free body's inertia is positive definite");
        let w = Vec3::new(v[3], v[4], v[5]);
        let n = Vec3::new(q_force[3], q_force[4], q_force[5]);
        let iww = iw * w;
        let y = n - w.cross(&iww);
        let a = iw_inv * y;
        let mut dq = DMat::zeros(6, 6);
        let mut dv = DMat::identity(6, 6);
        let mut dforce = DMat::zeros(6, 6);
        for k in 0..3 {
            let mut e = Vec3::zeros();
            e[k] = 1.0;
            // d(I_w⁻¹ y) = [e]× a − I_w⁻¹ (e × y) + I_w⁻¹ (−ω × dI_w ω), dI_w ω = e × I_w ω − I_w (e × ω).
            let di_w = e.cross(&iww) - iw * e.cross(&w);
            let col = e.cross(&a) - iw_inv * e.cross(&y) - iw_inv * w.cross(&di_w);
            for r in 0..3 {
                dq[(3 + r, 3 + k)] = h * col[r];
            }
            dforce[(k, k)] = h / self.mass;
        }
        // ∂(−ω × I_w ω)/∂ω = [I_w ω]× − [ω]× I_w.
        let dw = Mat3::identity() + iw_inv * (skew(&iww) - skew(&w) * iw) * h;
        let hinv = iw_inv * h;
        for r in 0..3 {
            for c in 0..3 {
                dv[(3 + r, 3 + c)] = dw[(r, c)];
                dforce[(3 + r, 3 + c)] = hinv[(r, c)];
            }
        }
        FreeBodyStepJacobian { dq, dv, dforce }
    }

    /// `∂v⁺/∂m` of [`Self::velocity_update`] with `q_force` held (module doc): `−h M⁻¹ Q / m`
    /// ((m/s, rad/s) per kg), the mass scaling the inertia with it.
    pub fn velocity_update_mass_derivative(&self, q: &[f64], q_force: &[f64], h: f64) -> [f64; 6] {
        let mut x = [0.0; 6];
        x.copy_from_slice(&q_force[..6]);
        self.solve_mass(q, &mut x);
        x.map(|a| -h * a / self.mass)
    }

    /// The derivatives of `q ⊕ h v` ([`Self::integrate`]) with respect to the tangent of `q`
    /// (`jq`) and to `v` (`jv`, the factor h included), 6 × 6 each:
    /// `jq = diag(I, exp3(hω))`, `jv = diag(h I, h J_l(hω))`.
    pub fn integrate_jacobians(&self, v: &[f64], h: f64, jq: &mut DMat, jv: &mut DMat) {
        let hw = Vec3::new(v[3], v[4], v[5]) * h;
        let (rot, jl) = (exp3(&hw), left_jacobian_so3(&hw));
        jq.fill(0.0);
        jv.fill(0.0);
        for r in 0..3 {
            jq[(r, r)] = 1.0;
            jv[(r, r)] = h;
            for c in 0..3 {
                jq[(3 + r, 3 + c)] = rot[(r, c)];
                jv[(3 + r, 3 + c)] = h * jl[(r, c)];
            }
        }
    }

    /// `out = q1 ⊖ q0` in the tangent of [`Self::integrate`]: `[c₁ − c₀; log(R₁ R₀ᵀ)]`.
    pub fn difference(&self, q0: &[f64], q1: &[f64], out: &mut [f64]) {
        let r0 = super::joint::quaternion_rotation(&q0[3..7]);
        let r1 = super::joint::quaternion_rotation(&q1[3..7]);
        let w = log3(&(r1 * r0.transpose()));
        for k in 0..3 {
            out[k] = q1[k] - q0[k];
            out[3 + k] = w[k];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body() -> FreeBody {
        FreeBody::new(
            "b",
            1.7,
            // Off the axes, principal moments ≈ 0.148, 0.198, 0.304 kg·m²: 0.148 + 0.198 ≥ 0.304.
            Mat3::new(0.15, 0.01, 0.0, 0.01, 0.2, 0.02, 0.0, 0.02, 0.3),
        )
        .unwrap()
    }

    #[test]
    fn the_step_jacobian_matches_central_differences() {
        let b = body();
        let s = (0.4f64).sin();
        let q = [0.1, 0.2, 0.3, s * 0.6, 0.0, s * 0.8, (0.4f64).cos()];
        let v = [0.3, -0.2, 0.1, 2.0, -1.0, 3.0];
        let force = [1.0, -2.0, 0.5, 0.3, -0.1, 0.7];
        let (g, h) = (Vec3::new(0.0, 0.0, -9.81), 0.01);
        let jac = b.velocity_update_jacobian(&q, &v, &force, h);
        let eps = 1e-6;
        let step = |q: &[f64], v: &[f64], f: &[f64]| {
            let mut out = [0.0; 6];
            b.velocity_update(q, v, &g, f, h, &mut out);
            out
        };
        for k in 0..6 {
            let mut e = [0.0; 6];
            e[k] = eps;
            let (mut qp, mut qm) = ([0.0; 7], [0.0; 7]);
            b.integrate(&q, &e, 1.0, &mut qp);
            e[k] = -eps;
            b.integrate(&q, &e, 1.0, &mut qm);
            let mut vp = v;
            vp[k] += eps;
            let mut vm = v;
            vm[k] -= eps;
            let mut fp = force;
            fp[k] += eps;
            let mut fm = force;
            fm[k] -= eps;
            let cols = [
                (step(&qp, &v, &force), step(&qm, &v, &force), &jac.dq),
                (step(&q, &vp, &force), step(&q, &vm, &force), &jac.dv),
                (step(&q, &v, &fp), step(&q, &v, &fm), &jac.dforce),
            ];
            for (plus, minus, m) in cols {
                for r in 0..6 {
                    let fd = (plus[r] - minus[r]) / (2.0 * eps);
                    assert!(
                        (fd - m[(r, k)]).abs() < 1e-8,
                        "[{r},{k}] {fd} vs {}",
                        m[(r, k)]
                    );
                }
            }
        }
    }

    #[test]
    fn the_mass_derivative_matches_central_differences() {
        let b = body();
        let s = (0.4f64).sin();
        let q = [0.1, 0.2, 0.3, s * 0.6, 0.0, s * 0.8, (0.4f64).cos()];
        let v = [0.3, -0.2, 0.1, 2.0, -1.0, 3.0];
        let force = [1.0, -2.0, 0.5, 0.3, -0.1, 0.7];
        let (g, h) = (Vec3::new(0.0, 0.0, -9.81), 0.01);
        let d = b.velocity_update_mass_derivative(&q, &force, h);
        let eps = 1e-6;
        let step = |m: f64| {
            let mut out = [0.0; 6];
            let moved = b.with_mass("b", m).unwrap();
            moved.velocity_update(&q, &v, &g, &force, h, &mut out);
            out
        };
        let (plus, minus) = (step(b.mass + eps), step(b.mass - eps));
        for r in 0..6 {
            let fd = (plus[r] - minus[r]) / (2.0 * eps);
            assert!(
                (fd - d[r]).abs() < 1e-9 * d[r].abs().max(1.0),
                "[{r}] {fd} vs {}",
                d[r]
            );
        }
        // Gravity alone (Q = 0): the velocity update does not depend on m.
        assert_eq!(
            b.velocity_update_mass_derivative(&q, &[0.0; 6], h),
            [0.0; 6]
        );
    }

    #[test]
    fn the_integrate_jacobians_match_central_differences() {
        let b = body();
        let s = (0.4f64).sin();
        let q = [0.1, 0.2, 0.3, s * 0.6, 0.0, s * 0.8, (0.4f64).cos()];
        let v = [0.3, -0.2, 0.1, 20.0, -10.0, 30.0];
        let h = 0.01;
        let (mut jq, mut jv) = (DMat::zeros(6, 6), DMat::zeros(6, 6));
        b.integrate_jacobians(&v, h, &mut jq, &mut jv);
        let mut base = [0.0; 7];
        b.integrate(&q, &v, h, &mut base);
        let eps = 1e-6;
        let slope = |p: &[f64], m: &[f64]| {
            let (mut a, mut c) = ([0.0; 6], [0.0; 6]);
            b.difference(&base, p, &mut a);
            b.difference(&base, m, &mut c);
            (0..6)
                .map(|r| (a[r] - c[r]) / (2.0 * eps))
                .collect::<Vec<_>>()
        };
        for k in 0..6 {
            let mut e = [0.0; 6];
            let (mut qp, mut qm, mut p, mut m) = ([0.0; 7], [0.0; 7], [0.0; 7], [0.0; 7]);
            e[k] = eps;
            b.integrate(&q, &e, 1.0, &mut qp);
            e[k] = -eps;
            b.integrate(&q, &e, 1.0, &mut qm);
            b.integrate(&qp, &v, h, &mut p);
            b.integrate(&qm, &v, h, &mut m);
            let along_q = slope(&p, &m);
            let (mut vp, mut vm) = (v, v);
            vp[k] += eps;
            vm[k] -= eps;
            b.integrate(&q, &vp, h, &mut p);
            b.integrate(&q, &vm, h, &mut m);
            let along_v = slope(&p, &m);
            for r in 0..6 {
                assert!((along_q[r] - jq[(r, k)]).abs() < 1e-8, "jq[{r},{k}]");
                assert!((along_v[r] - jv[(r, k)]).abs() < 1e-8, "jv[{r},{k}]");
            }
        }
    }
}
