//! Energy-consistent co-rotational elasticity: Ψ = μ‖F − R‖²_F + (λ/2) tr(RᵀF − I)², with R
//! the rotation of the polar decomposition F = R S (McAdams et al. 2011, "Efficient elasticity
//! for character skinning with contact and collisions"; Stomakhin et al. 2012, "Energetically
//! consistent invertible elasticity").
//!
//! R comes from the rotation-variant SVD F = U Σ Vᵀ: U, V with det(U Vᵀ) = +1 and Σ = diag(σ)
//! with only the smallest singular value possibly negative (an inverted element). Then R = U Vᵀ,
//! S = V Σ Vᵀ, Ψ_μ = Σ(σᵢ − 1)², Ψ_λ = (Σσᵢ − 3)²/2, and
//! P = 2μ (F − R) + λ (tr S − 3) R (the terms in ∂R/∂F vanish in P since RᵀdR is skew).
//!
//! All derivatives are EXACT, including the derivative of R: K = ∂P/∂F is the true Hessian
//! of Ψ (symmetric, not the usual "R fixed" approximation), so the gradient code
//! differentiates exactly what the step computes. With M = Uᵀ dF V,
//! dR = U W̃ Vᵀ, W̃ᵢⱼ = (Mᵢⱼ − Mⱼᵢ)/(σᵢ + σⱼ) (skew),
//! i.e. ∂vec(R)/∂vec(F) = Σ_{i<j} 2/(σᵢ + σⱼ) qᵢⱼ qᵢⱼᵀ with qᵢⱼ = vec(uᵢvⱼᵀ − uⱼvᵢᵀ)/√2.
//! Only sums σᵢ + σⱼ appear, never differences: repeated singular values (where U and V are
//! not unique) are harmless, R and its derivatives are smooth there.
//!
//! Guard: σᵢ + σⱼ ≥ 0 always (only the smallest σ can be negative), and it vanishes only when
//! an inverted element has |σ₃| = σ₂, where the polar decomposition itself is not
//! differentiable. The divisor is floored at `SIGMA_SUM_FLOOR · max(σ₁, 1)`, so the stiffness
//! there is huge but finite; away from that set (relative distance > 1e-12) the derivatives
//! are exact.

use super::svd3::Svd3;
use super::tensor::{Mat9, frobenius};
use super::{DeformationError, HyperelasticPoint, Lame, LowRankTangent, check_finite};
use crate::math::{Mat3, Vec3};

/// Relative floor of the divisors σᵢ + σⱼ (see the module documentation).
const SIGMA_SUM_FLOOR: f64 = 1e-12;
/// The pairs (i, j), i < j, of the off-diagonal rotation generators.
const PAIRS: [(usize, usize); 3] = [(0, 1), (0, 2), (1, 2)];

/// The co-rotational state at one deformation gradient: F, its rotation-variant SVD, R and the
/// three rotation generators qᵢⱼ with their weights 2/(σᵢ + σⱼ).
#[derive(Debug, Clone, Copy)]
pub struct CorotationalPoint {
    f: Mat3,
    u: Mat3,
    v: Mat3,
    sigma: Vec3,
    r: Mat3,
    /// 1/(σᵢ + σⱼ) for the pairs in `PAIRS` order (floored divisor).
    inv_sum: [f64; 3],
    /// qᵢⱼ = (uᵢvⱼᵀ − uⱼvᵢᵀ)/√2 for the pairs in `PAIRS` order (orthonormal under `:`).
    q: [Mat3; 3],
}

impl CorotationalPoint {
    /// The rotation R of the polar decomposition F = R S (a proper rotation, det R = +1).
    pub fn rotation(&self) -> Mat3 {
        self.r
    }

    /// The signed singular values (σ₁ ≥ σ₂ ≥ |σ₃|; σ₃ < 0 for an inverted element).
    pub fn singular_values(&self) -> Vec3 {
        self.sigma
    }

    /// [`HyperelasticPoint::at`] of `N` deformation gradients at once, each bit for bit as
    /// alone, handed to `each(k, point)` in order; their SVDs run side by side
    /// ([`Svd3::new_lanes`]), which hides the latency of the Jacobi rotations. `wrap` turns
    /// a point into what `each` reads, which gets it by reference: the points are large (about
    /// 0.6 kB), and moving them through a chain of closures costs a copy at each link.
    pub(super) fn at_lanes<const N: usize, T>(
        fs: [&Mat3; N],
        wrap: impl Fn(CorotationalPoint) -> T,
        mut each: impl FnMut(usize, Result<&T, DeformationError>),
    ) {
        let finite = fs.map(check_finite);
        // A non-finite lane is factored as the identity and reported as NonFinite.
        let identity = Mat3::identity();
        let inputs: [&Mat3; N] =
            std::array::from_fn(|k| if finite[k].is_ok() { fs[k] } else { &identity });
        let svds = Svd3::new_lanes(inputs);
        for k in 0..N {
            let outcome =
                finite[k].and_then(|()| svds[k].as_ref().ok_or(DeformationError::SvdNotConverged));
            match outcome {
                Ok(svd) => each(k, Ok(&wrap(CorotationalPoint::from_svd(fs[k], svd)))),
                Err(err) => each(k, Err(err)),
            }
        }
    }

    /// The state at `f` from its rotation-variant SVD (inlined, so that the state is built
    /// where its caller keeps it rather than copied there).
    #[inline(always)]
    fn from_svd(f: &Mat3, &Svd3 { u, sigma, v }: &Svd3) -> CorotationalPoint {
        let vt = v.transpose();
        let r = u * vt;
        let floor = SIGMA_SUM_FLOOR * sigma.amax().max(1.0);
        let mut inv_sum = [0.0; 3];
        let mut q = [Mat3::zeros(); 3];
        for (p, &(i, j)) in PAIRS.iter().enumerate() {
            inv_sum[p] = 1.0 / (sigma[i] + sigma[j]).max(floor);
            q[p] = (u.column(i) * v.column(j).transpose() - u.column(j) * v.column(i).transpose())
                * std::f64::consts::FRAC_1_SQRT_2;
        }
        CorotationalPoint {
            f: *f,
            u,
            v,
            sigma,
            r,
            inv_sum,
            q,
        }
    }

    /// W̃ with W̃ᵢⱼ = (Mᵢⱼ − Mⱼᵢ)/(σᵢ + σⱼ): the V-frame generator of dR for M = Uᵀ dF V
    /// (dR = U W̃ Vᵀ), equivalently the solution of W̃Σ + ΣW̃ = M − Mᵀ.
    fn omega(&self, m: &Mat3) -> Mat3 {
        let mut w = Mat3::zeros();
        for (p, &(i, j)) in PAIRS.iter().enumerate() {
            let x = (m[(i, j)] - m[(j, i)]) * self.inv_sum[p];
            w[(i, j)] = x;
            w[(j, i)] = -x;
        }
        w
    }

    /// ∂P/∂F = 2μ I₉ + λ vec(R) vec(R)ᵀ + Σ_{i<j} 2c/(σᵢ + σⱼ) vec(qᵢⱼ) vec(qᵢⱼ)ᵀ with
    /// c = λ(tr S − 3) − 2μ: the same tangent as [`HyperelasticPoint::tangent`], kept as its
    /// four rank-one terms (Pa).
    pub(super) fn low_rank_tangent(&self, lame: &Lame) -> LowRankTangent {
        let c = lame.lambda * (self.sigma.sum() - 3.0) - 2.0 * lame.mu;
        LowRankTangent {
            identity: 2.0 * lame.mu,
            weights: [
                lame.lambda,
                2.0 * c * self.inv_sum[0],
                2.0 * c * self.inv_sum[1],
                2.0 * c * self.inv_sum[2],
            ],
            directions: [self.r, self.q[0], self.q[1], self.q[2]],
        }
    }

    /// dR[dF] = Σ 2/(σᵢ + σⱼ) (qᵢⱼ : dF) qᵢⱼ.
    fn rotation_derivative(&self, df: &Mat3) -> Mat3 {
        let mut dr = Mat3::zeros();
        for p in 0..3 {
            dr += self.q[p] * (2.0 * self.inv_sum[p] * frobenius(&self.q[p], df));
        }
        dr
    }
}

impl HyperelasticPoint for CorotationalPoint {
    /// Any finite F is accepted (inverted, flat and zero F too); errors only for NaN/∞
    /// entries, or an SVD that does not converge or overflows (entries beyond ~1e150).
    fn at(f: &Mat3) -> Result<Self, DeformationError> {
        check_finite(f)?;
        let svd = Svd3::new(f).ok_or(DeformationError::SvdNotConverged)?;
        Ok(CorotationalPoint::from_svd(f, &svd))
    }

    /// Ψ = μ Σ(σᵢ − 1)² + (λ/2)(Σσᵢ − 3)² (J/m³).
    fn energy_density(&self, lame: &Lame) -> f64 {
        let s = self.sigma;
        let dev = (s - Vec3::repeat(1.0)).norm_squared();
        let vol = s.sum() - 3.0;
        lame.mu * dev + 0.5 * lame.lambda * vol * vol
    }

    /// P = 2μ (F − R) + λ (tr S − 3) R (Pa).
    fn stress(&self, lame: &Lame) -> Mat3 {
        (self.f - self.r) * (2.0 * lame.mu) + self.r * (lame.lambda * (self.sigma.sum() - 3.0))
    }

    /// ∂P/∂F = 2μ I₉ + λ vec(R) vec(R)ᵀ + (λ(tr S − 3) − 2μ) Σ_{i<j} 2/(σᵢ + σⱼ) qᵢⱼ qᵢⱼᵀ.
    fn tangent(&self, lame: &Lame) -> Mat9 {
        let c = lame.lambda * (self.sigma.sum() - 3.0) - 2.0 * lame.mu;
        let r = self.r.as_slice();
        let mut h = Mat9::zeros();
        for b in 0..9 {
            let lr = lame.lambda * r[b];
            let w: [f64; 3] =
                std::array::from_fn(|p| 2.0 * c * self.inv_sum[p] * self.q[p].as_slice()[b]);
            for a in 0..9 {
                h[(a, b)] = lr * r[a]
                    + w[0] * self.q[0].as_slice()[a]
                    + w[1] * self.q[1].as_slice()[a]
                    + w[2] * self.q[2].as_slice()[a];
            }
            h[(b, b)] += 2.0 * lame.mu;
        }
        h
    }

    /// dP = 2μ dF + (λ(tr S − 3) − 2μ) dR + λ (R:dF) R.
    fn tangent_action(&self, lame: &Lame, df: &Mat3) -> Mat3 {
        let c = lame.lambda * (self.sigma.sum() - 3.0) - 2.0 * lame.mu;
        df * (2.0 * lame.mu)
            + self.rotation_derivative(df) * c
            + self.r * (lame.lambda * frobenius(&self.r, df))
    }

    /// Both actions from one dR and one R : dF.
    fn tangent_actions(&self, lames: [&Lame; 2], df: &Mat3) -> [Mat3; 2] {
        let dr = self.rotation_derivative(df);
        let r_df = frobenius(&self.r, df);
        let action = |lame: &Lame| {
            let c = lame.lambda * (self.sigma.sum() - 3.0) - 2.0 * lame.mu;
            df * (2.0 * lame.mu) + dr * c + self.r * (lame.lambda * r_df)
        };
        [action(lames[0]), action(lames[1])]
    }

    /// dF₁ : (∂P/∂F) : dF₂ = 2μ dF₁:dF₂ + λ (R:dF₁)(R:dF₂)
    ///                     + (λ(tr S − 3) − 2μ) Σ_{i<j} 2/(σᵢ + σⱼ) (qᵢⱼ:dF₁)(qᵢⱼ:dF₂),
    /// from the low-rank form of the tangent: eight projections, no dR.
    fn tangent_form(&self, lame: &Lame, df1: &Mat3, df2: &Mat3) -> f64 {
        let c = lame.lambda * (self.sigma.sum() - 3.0) - 2.0 * lame.mu;
        let mut rotation = 0.0;
        for p in 0..3 {
            rotation += self.inv_sum[p] * frobenius(&self.q[p], df1) * frobenius(&self.q[p], df2);
        }
        2.0 * lame.mu * frobenius(df1, df2)
            + lame.lambda * frobenius(&self.r, df1) * frobenius(&self.r, df2)
            + 2.0 * c * rotation
    }

    /// d²P[dF₁, dF₂] = (λ(tr S − 3) − 2μ) d²R[dF₁, dF₂]
    ///                 + λ ((R:dF₂) dR₁ + (R:dF₁) dR₂ + (dR₂:dF₁) R),
    /// with d²R = U (W̃₂W̃₁ + Ỹ) Vᵀ, where Ỹ solves ỸΣ + ΣỸ = C̃,
    /// C̃ = −(W̃₁ dS̃₂ + dS̃₂ W̃₁) − (W̃₂ M₁ + M₁ᵀ W̃₂), dS̃₂ = M₂ − W̃₂Σ (the V-frame derivative of S),
    /// obtained by differentiating RᵀdR₁ S + S RᵀdR₁ = RᵀdF₁ − dF₁ᵀR in the direction dF₂.
    ///
    /// Everything is formed in the singular frames and rotated back once: with
    /// Mₖ = Uᵀ dFₖ V, dRₖ = U W̃ₖ Vᵀ, R : dFₖ = tr Mₖ and dR₂ : dF₁ = W̃₂ : M₁, so
    /// d²P = U (c (W̃₂W̃₁ + Ỹ) + λ (tr M₂ W̃₁ + tr M₁ W̃₂)) Vᵀ + λ (W̃₂ : M₁) R.
    fn tangent_derivative(&self, lame: &Lame, df1: &Mat3, df2: &Mat3) -> Mat3 {
        self.second_derivative(lame, &self.frames(df1), &self.frames(df2))
    }

    /// The three terms from the directions' singular-frame forms Mₖ = Uᵀ dFₖ V and W̃ₖ, built
    /// once: dP\[dF₂\] = 2μ dF₂ + U (c W̃₂ + λ tr M₂ I) Vᵀ (R = U Vᵀ, dR₂ = U W̃₂ Vᵀ, R : dF₂ =
    /// tr M₂), d²P as [`Self::tangent_derivative`], and each form as
    /// [`Self::tangent_form`] with qᵢⱼ : dFₖ = ((Mₖ)ᵢⱼ − (Mₖ)ⱼᵢ)/√2.
    fn reverse_terms(
        &self,
        lame: &Lame,
        df1: &Mat3,
        df2: &Mat3,
        forms: &[Lame],
        out: &mut [f64],
    ) -> (Mat3, Mat3) {
        assert_eq!(forms.len(), out.len(), "reverse_terms: one output per form");
        let (f1, f2) = (self.frames(df1), self.frames(df2));
        let (t1, t2) = (f1.m.trace(), f2.m.trace());
        let dot = frobenius(df1, df2);
        // Σ 2/(σᵢ + σⱼ) (qᵢⱼ : dF₁)(qᵢⱼ : dF₂).
        let mut rotation = 0.0;
        for (p, &(i, j)) in PAIRS.iter().enumerate() {
            rotation +=
                self.inv_sum[p] * (f1.m[(i, j)] - f1.m[(j, i)]) * (f2.m[(i, j)] - f2.m[(j, i)]);
        }
        let trace_s = self.sigma.sum() - 3.0;
        for (o, pair) in out.iter_mut().zip(forms) {
            let c = pair.lambda * trace_s - 2.0 * pair.mu;
            *o = 2.0 * pair.mu * dot + pair.lambda * t1 * t2 + c * rotation;
        }
        let c = lame.lambda * trace_s - 2.0 * lame.mu;
        let frame = f2.w * c + Mat3::identity() * (lame.lambda * t2);
        let dp = df2 * (2.0 * lame.mu) + self.u * frame * self.v.transpose();
        (dp, self.second_derivative(lame, &f1, &f2))
    }
}

/// A direction dF in the singular frames of a point: M = Uᵀ dF V and the generator W̃ of dR.
struct Frames {
    m: Mat3,
    w: Mat3,
}

impl CorotationalPoint {
    /// M = Uᵀ dF V and W̃ = omega(M) of the direction `df`.
    fn frames(&self, df: &Mat3) -> Frames {
        let m = self.u.tr_mul(df) * self.v;
        let w = self.omega(&m);
        Frames { m, w }
    }

    /// d²P[dF₁, dF₂] from the directions' frames ([`HyperelasticPoint::tangent_derivative`]).
    fn second_derivative(&self, lame: &Lame, f1: &Frames, f2: &Frames) -> Mat3 {
        let (u, v) = (&self.u, &self.v);
        let (m1, w1, m2, w2) = (&f1.m, &f1.w, &f2.m, &f2.w);
        // W̃₂Σ: column j of W̃₂ scaled by σⱼ.
        let mut w2_sigma = *w2;
        for j in 0..3 {
            w2_sigma.column_mut(j).scale_mut(self.sigma[j]);
        }
        let ds2 = m2 - w2_sigma;
        let c_tilde = -(w1 * ds2 + ds2 * w1) - (w2 * m1 + m1.transpose() * w2);
        // C̃ is skew, so omega(C̃) = 2 Ỹ.
        let y = self.omega(&c_tilde) * 0.5;
        let c = lame.lambda * (self.sigma.sum() - 3.0) - 2.0 * lame.mu;
        let frame = (w2 * w1 + y) * c + (w1 * m2.trace() + w2 * m1.trace()) * lame.lambda;
        u * frame * v.transpose() + self.r * (lame.lambda * frobenius(w2, m1))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{check_law, rotation, sample_deformations};
    use super::*;

    /// U diag(s) Vᵀ for two fixed rotations.
    fn with_singular_values(s: Vec3) -> Mat3 {
        rotation(Vec3::new(0.3, -1.1, 0.4))
            * Mat3::from_diagonal(&s)
            * rotation(Vec3::new(-0.7, 0.2, 0.9))
    }

    #[test]
    fn derivatives_match_finite_differences() {
        let mut fs = sample_deformations();
        fs.extend([
            // Two equal singular values ± 1e-3, and exactly equal ones.
            with_singular_values(Vec3::new(1.4, 0.8, 0.8 + 1e-3)),
            with_singular_values(Vec3::new(1.4, 0.8, 0.8 - 1e-3)),
            with_singular_values(Vec3::new(1.4, 0.8, 0.8)),
            with_singular_values(Vec3::new(1.1, 1.1, 0.6)),
            with_singular_values(Vec3::new(0.9, 0.9, 0.9)),
            // A rotation, and a rotation composed with a stretch.
            rotation(Vec3::new(0.5, 0.2, -0.8)),
            rotation(Vec3::new(0.1, 2.0, 0.3)) * Mat3::from_diagonal(&Vec3::new(1.5, 0.9, 0.7)),
            // Inverted elements (det F < 0), handled by the rotation-variant SVD.
            with_singular_values(Vec3::new(1.2, 0.9, -0.5)),
            Mat3::new(0.9, 0.1, 0.0, 0.2, -0.8, 0.1, 0.0, 0.3, 1.1),
        ]);
        for f in &fs {
            check_law::<CorotationalPoint>(f);
        }
    }

    #[test]
    fn degenerate_deformations_give_finite_outputs_or_an_error() {
        let lame = Lame {
            mu: 1.0,
            lambda: 1.0,
        };
        let (d1, d2) = (
            Mat3::new(0.3, -0.1, 0.2, 0.0, 0.5, -0.4, 0.1, 0.2, -0.3),
            Mat3::identity(),
        );
        for f in [
            Mat3::zeros(),
            // Flat element (σ₃ = 0) and a rank-one F.
            Mat3::from_diagonal(&Vec3::new(1.2, 0.7, 0.0)),
            Mat3::new(1.0, 2.0, 3.0, 2.0, 4.0, 6.0, 1.0, 1.0, 1.0),
            // Inverted with |σ₃| = σ₂: the floored divisor σ₂ + σ₃ = 0.
            Mat3::from_diagonal(&Vec3::new(1.2, 0.7, -0.7)),
        ] {
            let p = CorotationalPoint::at(&f).unwrap();
            assert!((p.rotation().determinant() - 1.0).abs() < 1e-12, "{f}");
            let all_finite = p.energy_density(&lame).is_finite()
                && p.stress(&lame).iter().all(|x| x.is_finite())
                && p.tangent(&lame).iter().all(|x| x.is_finite())
                && p.tangent_derivative(&lame, &d1, &d2)
                    .iter()
                    .all(|x| x.is_finite());
            assert!(all_finite, "{f}");
        }
        assert_eq!(
            CorotationalPoint::at(&(Mat3::identity() * 1e200)).unwrap_err(),
            DeformationError::SvdNotConverged
        );
    }

    #[test]
    fn low_rank_tangent_is_the_tangent() {
        // Two ways to ∂P/∂F: the dense 9×9 formula and the expansion of the four rank-one
        // terms; both also checked against finite differences by `check_law`.
        let lame = Lame {
            mu: 0.8,
            lambda: 1.7,
        };
        for f in sample_deformations() {
            let p = CorotationalPoint::at(&f).unwrap();
            let dense = p.tangent(&lame);
            let err = (p.low_rank_tangent(&lame).to_dense() - dense).norm() / dense.norm();
            assert!(err < 1e-14, "{f}: {err}");
        }
    }

    #[test]
    fn rotated_stretch_matches_the_hand_formula() {
        // F = R₀ diag(s): R = R₀, Ψ = μ Σ(sᵢ − 1)² + (λ/2)(Σsᵢ − 3)²,
        // P = 2μ (F − R₀) + λ (Σsᵢ − 3) R₀ — also for an inverted stretch (s₃ < 0).
        let lame = Lame {
            mu: 0.8,
            lambda: 1.7,
        };
        let r0 = rotation(Vec3::new(-0.6, 0.3, 0.8));
        for s in [Vec3::new(1.6, 1.1, 0.7), Vec3::new(1.2, 0.9, -0.5)] {
            let f = r0 * Mat3::from_diagonal(&s);
            let p = CorotationalPoint::at(&f).unwrap();
            let vol = s.sum() - 3.0;
            let psi =
                lame.mu * (s - Vec3::repeat(1.0)).norm_squared() + 0.5 * lame.lambda * vol * vol;
            assert!((p.energy_density(&lame) - psi).abs() < 1e-13, "{s:?}");
            let stress = (f - r0) * (2.0 * lame.mu) + r0 * (lame.lambda * vol);
            assert!((p.stress(&lame) - stress).norm() < 1e-13, "{s:?}");
        }
    }

    #[test]
    fn rotation_is_the_polar_factor() {
        // F = R₀ S₀ with S₀ symmetric positive definite: the polar rotation is R₀.
        let r0 = rotation(Vec3::new(0.4, -0.3, 1.2));
        let a = Mat3::new(1.0, 0.2, -0.1, 0.0, 0.8, 0.3, 0.1, 0.0, 1.2);
        let s0 = a.transpose() * a;
        let p = CorotationalPoint::at(&(r0 * s0)).unwrap();
        assert!((p.rotation() - r0).norm() < 1e-12);
        // Inverted: F = R₀ diag(1.2, 0.9, −0.5) keeps R₀ and flips the smallest σ.
        let f = r0 * Mat3::from_diagonal(&Vec3::new(1.2, 0.9, -0.5));
        let p = CorotationalPoint::at(&f).unwrap();
        assert!((p.rotation() - r0).norm() < 1e-12);
        assert!((p.singular_values() - Vec3::new(1.2, 0.9, -0.5)).norm() < 1e-12);
    }
}
