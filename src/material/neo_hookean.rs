//! Compressible Neo-Hookean: Ψ = (μ/2)(I₁ − 3) − μ ln J + (λ/2)(ln J)², I₁ = tr(FᵀF),
//! J = det F (Bonet & Wood's form; stress-free at F = I and at every rotation).
//!
//! Basis terms, with G = F⁻ᵀ: Ψ_μ = (I₁ − 3)/2 − ln J, Ψ_λ = (ln J)²/2; P_μ = F − G,
//! P_λ = ln J · G. With dG = −G dFᵀ G and d ln J = G:dF every derivative is closed-form.
//!
//! An element with J ≤ 0 has no energy (ln J): [`NeoHookeanPoint::at`] returns
//! [`DeformationError::Inverted`] with the value of J; it is never clamped.

use super::tensor::{Mat9, frobenius};
use super::{DeformationError, HyperelasticPoint, Lame, check_finite};
use crate::math::Mat3;

/// The Neo-Hookean state at one deformation gradient: F, G = F⁻ᵀ, ln J and tr(FᵀF).
#[derive(Debug, Clone, Copy)]
pub struct NeoHookeanPoint {
    f: Mat3,
    g: Mat3,
    ln_j: f64,
    i1: f64,
}

impl NeoHookeanPoint {
    /// G dFᵀ G = −dG[dF], the derivative of −F⁻ᵀ in the direction dF.
    #[inline]
    fn g_dft_g(&self, df: &Mat3) -> Mat3 {
        self.g * df.transpose() * self.g
    }
}

impl HyperelasticPoint for NeoHookeanPoint {
    /// Errors with [`DeformationError::Inverted`] when J = det F ≤ 0.
    fn at(f: &Mat3) -> Result<Self, DeformationError> {
        check_finite(f)?;
        let j = f.determinant();
        if !j.is_finite() {
            return Err(DeformationError::NonFinite);
        }
        if j <= 0.0 {
            return Err(DeformationError::Inverted { j });
        }
        // F⁻ᵀ = cof(F) / J (cofactor matrix), exact for any J > 0.
        let c0 = f.column(1).cross(&f.column(2));
        let c1 = f.column(2).cross(&f.column(0));
        let c2 = f.column(0).cross(&f.column(1));
        let g = Mat3::from_columns(&[c0, c1, c2]) / j;
        Ok(NeoHookeanPoint {
            f: *f,
            g,
            ln_j: j.ln(),
            i1: frobenius(f, f),
        })
    }

    /// Ψ = (μ/2)(I₁ − 3) − μ ln J + (λ/2)(ln J)² (J/m³).
    fn energy_density(&self, lame: &Lame) -> f64 {
        lame.mu * (0.5 * (self.i1 - 3.0) - self.ln_j) + 0.5 * lame.lambda * self.ln_j * self.ln_j
    }

    /// P = μ (F − F⁻ᵀ) + λ ln J F⁻ᵀ (Pa).
    fn stress(&self, lame: &Lame) -> Mat3 {
        self.f * lame.mu + self.g * (lame.lambda * self.ln_j - lame.mu)
    }

    /// ∂P_ij/∂F_kl = μ δ_ik δ_jl + (μ − λ ln J) G_il G_kj + λ G_ij G_kl.
    fn tangent(&self, lame: &Lame) -> Mat9 {
        let g = &self.g;
        let c = lame.mu - lame.lambda * self.ln_j;
        let la = lame.lambda;
        let mut h = Mat9::zeros();
        for l in 0..3 {
            for k in 0..3 {
                let b = k + 3 * l;
                let gkl = la * g[(k, l)];
                for j in 0..3 {
                    let cgkj = c * g[(k, j)];
                    for i in 0..3 {
                        h[(i + 3 * j, b)] = cgkj * g[(i, l)] + gkl * g[(i, j)];
                    }
                }
                h[(b, b)] += lame.mu;
            }
        }
        h
    }

    /// dP = μ dF + (μ − λ ln J) G dFᵀ G + λ (G:dF) G.
    fn tangent_action(&self, lame: &Lame, df: &Mat3) -> Mat3 {
        df * lame.mu
            + self.g_dft_g(df) * (lame.mu - lame.lambda * self.ln_j)
            + self.g * (lame.lambda * frobenius(&self.g, df))
    }

    /// d²P[dF₁, dF₂] = −(μ − λ ln J)(G dF₂ᵀ G dF₁ᵀ G + G dF₁ᵀ G dF₂ᵀ G)
    ///                 − λ (G:dF₂) G dF₁ᵀ G − λ (G:dF₁) G dF₂ᵀ G − λ (G dF₂ᵀ G : dF₁) G.
    fn tangent_derivative(&self, lame: &Lame, df1: &Mat3, df2: &Mat3) -> Mat3 {
        let g = &self.g;
        let a1 = self.g_dft_g(df1);
        let a2 = self.g_dft_g(df2);
        let c = lame.mu - lame.lambda * self.ln_j;
        let la = lame.lambda;
        let two_sided = g * df2.transpose() * a1 + g * df1.transpose() * a2;
        -(two_sided * c)
            - a1 * (la * frobenius(g, df2))
            - a2 * (la * frobenius(g, df1))
            - g * (la * frobenius(&a2, df1))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{check_law, sample_deformations};
    use super::*;
    use crate::math::Vec3;

    #[test]
    fn derivatives_match_finite_differences() {
        for f in &sample_deformations() {
            check_law::<NeoHookeanPoint>(f);
        }
        // Strong compression (J = 0.06): derivatives still exact.
        check_law::<NeoHookeanPoint>(&Mat3::from_diagonal(&Vec3::new(0.2, 0.5, 0.6)));
    }

    #[test]
    fn inverted_and_flat_elements_are_reported_not_clamped() {
        for (f, j) in [
            (Mat3::from_diagonal(&Vec3::new(1.0, 1.0, -1.0)), -1.0),
            (Mat3::from_diagonal(&Vec3::new(2.0, 0.0, 1.0)), 0.0),
            (Mat3::new(0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 3.0), -3.0),
        ] {
            match NeoHookeanPoint::at(&f) {
                Err(DeformationError::Inverted { j: got }) => assert!((got - j).abs() < 1e-15),
                other => panic!("expected Inverted {{ j: {j} }}, got {other:?}"),
            }
        }
    }

    #[test]
    fn hydrostatic_stretch_matches_the_hand_formula() {
        // F = s I: J = s³, G = I/s, P = (μ (s − 1/s) + 3 λ ln s / s) I.
        let (s, lame) = (
            1.3f64,
            Lame {
                mu: 0.7,
                lambda: 2.5,
            },
        );
        let p = NeoHookeanPoint::at(&(Mat3::identity() * s)).unwrap();
        let expected =
            Mat3::identity() * (lame.mu * (s - 1.0 / s) + 3.0 * lame.lambda * s.ln() / s);
        assert!((p.stress(&lame) - expected).norm() < 1e-14);
    }
}
