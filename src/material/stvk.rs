//! Saint-Venant-Kirchhoff: Ψ = μ E:E + (λ/2) tr(E)², E = (FᵀF − I)/2 (Green-Lagrange strain).
//!
//! Basis terms: Ψ_μ = E:E, Ψ_λ = tr(E)²/2; P_μ = 2 F E, P_λ = tr(E) F, so
//! P = F (2μE + λ tr(E) I) = F S with S the second Piola-Kirchhoff stress (paper 004, Eq. 3).
//! Defined for every F (inverted elements included: StVK does not resist inversion well, but
//! it is smooth).

use super::tensor::{Mat9, frobenius};
use super::{DeformationError, HyperelasticPoint, Lame, check_finite};
use crate::math::Mat3;

/// The StVK state at one deformation gradient: F, E, tr E and F Fᵀ.
#[derive(Debug, Clone, Copy)]
pub struct StVKPoint {
    f: Mat3,
    e: Mat3,
    tr_e: f64,
    f_ft: Mat3,
}

/// sym(A) = (A + Aᵀ)/2.
fn sym(a: &Mat3) -> Mat3 {
    (a + a.transpose()) * 0.5
}

impl HyperelasticPoint for StVKPoint {
    /// Any finite F is accepted.
    fn at(f: &Mat3) -> Result<Self, DeformationError> {
        check_finite(f)?;
        let e = (f.tr_mul(f) - Mat3::identity()) * 0.5;
        Ok(StVKPoint {
            f: *f,
            e,
            tr_e: e.trace(),
            f_ft: f * f.transpose(),
        })
    }

    /// Ψ = μ E:E + (λ/2) tr(E)² (J/m³).
    fn energy_density(&self, lame: &Lame) -> f64 {
        lame.mu * frobenius(&self.e, &self.e) + 0.5 * lame.lambda * self.tr_e * self.tr_e
    }

    /// P = F (2μ E + λ tr(E) I) (Pa).
    fn stress(&self, lame: &Lame) -> Mat3 {
        self.f * (self.e * (2.0 * lame.mu)) + self.f * (lame.lambda * self.tr_e)
    }

    /// ∂P_ij/∂F_kl = μ (2 δ_ik E_lj + (FFᵀ)_ik δ_jl + F_il F_kj) + λ (F_ij F_kl + tr(E) δ_ik δ_jl).
    fn tangent(&self, lame: &Lame) -> Mat9 {
        let (mu, la) = (lame.mu, lame.lambda);
        let (f, e, ff) = (&self.f, &self.e, &self.f_ft);
        let diag = la * self.tr_e;
        let mut h = Mat9::zeros();
        for l in 0..3 {
            for k in 0..3 {
                let b = k + 3 * l;
                for j in 0..3 {
                    for i in 0..3 {
                        let a = i + 3 * j;
                        let mut v = mu * f[(i, l)] * f[(k, j)] + la * f[(i, j)] * f[(k, l)];
                        if i == k {
                            v += 2.0 * mu * e[(l, j)];
                        }
                        if j == l {
                            v += mu * ff[(i, k)];
                            if i == k {
                                v += diag;
                            }
                        }
                        h[(a, b)] = v;
                    }
                }
            }
        }
        h
    }

    /// dP = μ (2 dF E + 2 F dE) + λ (tr(dE) F + tr(E) dF), dE = sym(Fᵀ dF), tr dE = F:dF.
    fn tangent_action(&self, lame: &Lame, df: &Mat3) -> Mat3 {
        let de = sym(&self.f.tr_mul(df));
        let tr_de = frobenius(&self.f, df);
        (df * self.e + self.f * de) * (2.0 * lame.mu)
            + (self.f * tr_de + df * self.tr_e) * lame.lambda
    }

    /// d²P[dF₁, dF₂] = μ (2 dF₁ dE₂ + 2 dF₂ dE₁ + 2 F sym(dF₂ᵀ dF₁))
    ///               + λ ((dF₁:dF₂) F + (F:dF₁) dF₂ + (F:dF₂) dF₁).
    fn tangent_derivative(&self, lame: &Lame, df1: &Mat3, df2: &Mat3) -> Mat3 {
        let f = &self.f;
        let de1 = sym(&f.tr_mul(df1));
        let de2 = sym(&f.tr_mul(df2));
        let dde = sym(&df2.tr_mul(df1));
        let mu_part = (df1 * de2 + df2 * de1 + f * dde) * (2.0 * lame.mu);
        let la_part = f * frobenius(df1, df2) + df2 * frobenius(f, df1) + df1 * frobenius(f, df2);
        mu_part + la_part * lame.lambda
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{check_law, sample_deformations};
    use super::*;

    #[test]
    fn derivatives_match_finite_differences() {
        let mut fs = sample_deformations();
        // StVK is defined for inverted elements too.
        fs.push(Mat3::new(0.9, 0.1, 0.0, 0.2, -0.8, 0.1, 0.0, 0.3, 1.1));
        for f in &fs {
            check_law::<StVKPoint>(f);
        }
    }

    #[test]
    fn uniaxial_stretch_matches_the_hand_formula() {
        // F = diag(s, 1, 1): E = diag((s² − 1)/2, 0, 0), P_11 = s (2μ + λ)(s² − 1)/2.
        let (s, lame) = (
            1.7,
            Lame {
                mu: 2.0,
                lambda: 3.0,
            },
        );
        let p = StVKPoint::at(&Mat3::from_diagonal(&crate::math::Vec3::new(s, 1.0, 1.0))).unwrap();
        let g = 0.5 * (s * s - 1.0);
        let expected = Mat3::from_diagonal(&crate::math::Vec3::new(
            s * (2.0 * lame.mu + lame.lambda) * g,
            lame.lambda * g,
            lame.lambda * g,
        ));
        assert!((p.stress(&lame) - expected).norm() < 1e-13);
        let psi = lame.mu * g * g + 0.5 * lame.lambda * g * g;
        assert!((p.energy_density(&lame) - psi).abs() < 1e-13);
    }
}
