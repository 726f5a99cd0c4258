//! The co-rotational law of [`super::CorotationalPoint`] evaluated from a polar decomposition
//! F = R S instead of an SVD: the form a time step uses, where each element's R is found by
//! Newton's method from its R of the last evaluation (`polar_newton`), a few dozen flops
//! where the SVD's Jacobi sweeps cost several hundred.
//!
//! Everything the step needs is a function of R, S and A⁻¹ = (tr(S) I − S)⁻¹ (McAdams et al.
//! 2011; the same Ψ as [`super::CorotationalPoint`]):
//! - Ψ = μ ‖S − I‖²_F + (λ/2)(tr S − 3)², since ‖S − I‖²_F = Σ(σᵢ − 1)²;
//! - P = 2μ (F − R) + λ (tr S − 3) R;
//! - dR = R \[A⁻¹ a(dF)\]×, with a(dF) = (M₃₂ − M₂₃, M₁₃ − M₃₁, M₂₁ − M₁₂) for M = RᵀdF
//!   (differentiate the symmetry of RᵀF), and dF : R\[l\]× = l · a(dF), so that with
//!   A⁻¹ = Σₖ dₖ lₖlₖᵀ the exact tangent is
//!   ∂P/∂F = 2μ I₉ + λ vec R vec Rᵀ + c Σₖ dₖ vec(R\[lₖ\]×) vec(R\[lₖ\]×)ᵀ, c = λ(tr S − 3) − 2μ.
//!   With the SVD's factors (lₖ the columns of V, dₖ = 1/(σᵢ + σⱼ)) this is the SVD form's
//!   Σ_{i<j} 2c/(σᵢ + σⱼ) qᵢⱼqᵢⱼᵀ term for term; any factorisation of A⁻¹ gives the same matrix.
//!
//! The second derivatives d²P (derivative passes, which keep their material points and so
//! evaluate by SVD) are delegated to [`super::CorotationalPoint`] at the same F.

use super::polar_newton::Polar;
use super::svd3::Svd3;
use super::tensor::{Mat9, frobenius};
use super::{CorotationalPoint, DeformationError, HyperelasticPoint, Lame, LowRankTangent};
use crate::math::{Mat3, Vec3};

/// Relative floor of the pivots 1/(σᵢ + σⱼ) when built from an SVD (as
/// [`super::CorotationalPoint`]'s).
const SIGMA_SUM_FLOOR: f64 = 1e-12;

/// The co-rotational state at one deformation gradient from its polar decomposition: F, R,
/// tr S, ‖S − I‖²_F and the rotation generators R\[lₖ\]× with their weights dₖ.
#[derive(Debug, Clone, Copy)]
pub struct CorotationalPolarPoint {
    f: Mat3,
    r: Mat3,
    trace_s: f64,
    deviation: f64,
    generators: [Mat3; 3],
    weights: [f64; 3],
}

/// \[l\]×, the cross-product matrix of `l`.
#[inline]
fn cross_matrix(l: &Vec3) -> Mat3 {
    Mat3::new(0.0, -l.z, l.y, l.z, 0.0, -l.x, -l.y, l.x, 0.0)
}

impl CorotationalPolarPoint {
    /// The state at `f` from its polar decomposition `polar` (from `polar_newton`).
    #[inline]
    pub(super) fn from_polar(f: &Mat3, polar: &Polar) -> CorotationalPolarPoint {
        let Polar { r, s, l, d } = polar;
        CorotationalPolarPoint {
            f: *f,
            r: *r,
            trace_s: s.trace(),
            deviation: (s - Mat3::identity()).norm_squared(),
            generators: l.map(|l| r * cross_matrix(&l)),
            weights: *d,
        }
    }

    /// The state at `f` from its rotation-variant SVD: lₖ the columns of V and
    /// dₖ = 1/(σᵢ + σⱼ) (floored as [`super::CorotationalPoint`]'s divisors).
    pub(super) fn from_svd(f: &Mat3, &Svd3 { u, sigma, v }: &Svd3) -> CorotationalPolarPoint {
        let r = u * v.transpose();
        let floor = SIGMA_SUM_FLOOR * sigma.amax().max(1.0);
        let l: [Vec3; 3] = std::array::from_fn(|k| v.column(k).into_owned());
        let weights: [f64; 3] = std::array::from_fn(|k| 1.0 / (sigma.sum() - sigma[k]).max(floor));
        CorotationalPolarPoint {
            f: *f,
            r,
            trace_s: sigma.sum(),
            deviation: (sigma - Vec3::repeat(1.0)).norm_squared(),
            generators: l.map(|l| r * cross_matrix(&l)),
            weights,
        }
    }

    /// The rotation R of the polar decomposition F = R S.
    pub fn rotation(&self) -> Mat3 {
        self.r
    }

    /// c = λ(tr S − 3) − 2μ, the rotation generators' common factor.
    fn generator_factor(&self, lame: &Lame) -> f64 {
        lame.lambda * (self.trace_s - 3.0) - 2.0 * lame.mu
    }

    /// ∂P/∂F = 2μ I₉ + λ vec R vec Rᵀ + c Σₖ dₖ vec(R\[lₖ\]×) vec(R\[lₖ\]×)ᵀ (Pa).
    pub(super) fn low_rank_tangent(&self, lame: &Lame) -> LowRankTangent {
        let c = self.generator_factor(lame);
        LowRankTangent {
            identity: 2.0 * lame.mu,
            weights: [
                lame.lambda,
                c * self.weights[0],
                c * self.weights[1],
                c * self.weights[2],
            ],
            directions: [
                self.r,
                self.generators[0],
                self.generators[1],
                self.generators[2],
            ],
        }
    }
}

impl HyperelasticPoint for CorotationalPolarPoint {
    /// By SVD (no rotation to start Newton from); errors as [`super::CorotationalPoint`].
    fn at(f: &Mat3) -> Result<Self, DeformationError> {
        super::check_finite(f)?;
        let svd = Svd3::new(f).ok_or(DeformationError::SvdNotConverged)?;
        Ok(CorotationalPolarPoint::from_svd(f, &svd))
    }

    /// Ψ = μ ‖S − I‖²_F + (λ/2)(tr S − 3)² (J/m³).
    fn energy_density(&self, lame: &Lame) -> f64 {
        let vol = self.trace_s - 3.0;
        lame.mu * self.deviation + 0.5 * lame.lambda * vol * vol
    }

    /// P = 2μ (F − R) + λ (tr S − 3) R (Pa).
    fn stress(&self, lame: &Lame) -> Mat3 {
        (self.f - self.r) * (2.0 * lame.mu) + self.r * (lame.lambda * (self.trace_s - 3.0))
    }

    fn tangent(&self, lame: &Lame) -> Mat9 {
        self.low_rank_tangent(lame).to_dense()
    }

    /// dP = 2μ dF + λ (R:dF) R + c Σₖ dₖ (R\[lₖ\]× : dF) R\[lₖ\]×.
    fn tangent_action(&self, lame: &Lame, df: &Mat3) -> Mat3 {
        let c = self.generator_factor(lame);
        let mut dp = df * (2.0 * lame.mu) + self.r * (lame.lambda * frobenius(&self.r, df));
        for (g, d) in self.generators.iter().zip(&self.weights) {
            dp += g * (c * d * frobenius(g, df));
        }
        dp
    }

    /// Both actions from one set of projections R : dF and gₖ : dF.
    fn tangent_actions(&self, lames: [&Lame; 2], df: &Mat3) -> [Mat3; 2] {
        let r_df = frobenius(&self.r, df);
        let g_df: [f64; 3] = std::array::from_fn(|k| frobenius(&self.generators[k], df));
        lames.map(|lame| {
            let c = self.generator_factor(lame);
            let mut dp = df * (2.0 * lame.mu) + self.r * (lame.lambda * r_df);
            for ((g, d), p) in self.generators.iter().zip(&self.weights).zip(&g_df) {
                dp += g * (c * d * p);
            }
            dp
        })
    }

    fn tangent_form(&self, lame: &Lame, df1: &Mat3, df2: &Mat3) -> f64 {
        let c = self.generator_factor(lame);
        let mut form = 2.0 * lame.mu * frobenius(df1, df2)
            + lame.lambda * frobenius(&self.r, df1) * frobenius(&self.r, df2);
        for (g, d) in self.generators.iter().zip(&self.weights) {
            form += c * d * frobenius(g, df1) * frobenius(g, df2);
        }
        form
    }

    /// [`super::CorotationalPoint`]'s d²P at the same F (by SVD: the singular frames are what
    /// its formula is written in).
    fn tangent_derivative(&self, lame: &Lame, df1: &Mat3, df2: &Mat3) -> Mat3 {
        CorotationalPoint::at(&self.f)
            .expect("F was finite and its polar decomposition converged")
            .tangent_derivative(lame, df1, df2)
    }
}

#[cfg(test)]
mod tests {
    use super::super::polar_newton::{WarmRotation, polar_from};
    use super::super::testing::{check_law, rotation, sample_deformations};
    use super::*;

    #[test]
    fn derivatives_match_finite_differences() {
        for f in sample_deformations() {
            check_law::<CorotationalPolarPoint>(&f);
        }
    }

    #[test]
    fn from_a_warm_rotation_it_is_the_svd_law() {
        // Two ways to the same law: the SVD point and the polar point found by Newton from a
        // rotation 0.05 rad off; every output to round-off.
        let lame = Lame {
            mu: 0.8,
            lambda: 1.7,
        };
        let mut fs = sample_deformations();
        fs.push(
            rotation(Vec3::new(0.3, -0.2, 0.9)) * Mat3::from_diagonal(&Vec3::new(1.2, 0.9, -0.5)),
        );
        let (d1, d2) = (
            Mat3::new(0.3, -0.1, 0.2, 0.0, 0.5, -0.4, 0.1, 0.2, -0.3),
            Mat3::new(-0.2, 0.4, 0.1, 0.3, -0.1, 0.0, 0.5, -0.2, 0.2),
        );
        for f in &fs {
            let svd = CorotationalPoint::at(f).unwrap();
            let guess = WarmRotation::from_matrix(
                &(svd.rotation() * rotation(Vec3::new(0.03, -0.04, 0.0))),
            );
            let (polar, _) = polar_from(f, &guess).expect("converges");
            let p = CorotationalPolarPoint::from_polar(f, &polar);
            let scale = f.norm().max(1.0);
            let e = (p.energy_density(&lame) - svd.energy_density(&lame)).abs();
            assert!(e < 1e-13 * scale * scale, "{f}: Ψ {e}");
            let e = (p.stress(&lame) - svd.stress(&lame)).norm();
            assert!(e < 1e-13 * scale, "{f}: P {e}");
            let dense = svd.tangent(&lame);
            let e = (p.low_rank_tangent(&lame).to_dense() - dense).norm() / dense.norm();
            assert!(e < 1e-12, "{f}: ∂P/∂F {e}");
            let e = (p.tangent_action(&lame, &d1) - svd.tangent_action(&lame, &d1)).norm();
            assert!(e < 1e-12 * dense.norm(), "{f}: ∂P/∂F : dF {e}");
            let e = p.tangent_form(&lame, &d1, &d2) - svd.tangent_form(&lame, &d1, &d2);
            assert!(e.abs() < 1e-12 * dense.norm(), "{f}: form {e}");
        }
    }
}
