//! Lamé parameters (μ, λ) from Young's modulus and Poisson's ratio, with their derivatives
//! with respect to both.

use crate::{Error, Result};

/// The Lamé parameters of an isotropic material, in Pa: `mu` (μ, the shear modulus) and
/// `lambda` (λ).
///
/// Every law of this module is linear in (μ, λ) (Ψ = μ Ψ_μ + λ Ψ_λ), so a `Lame` value is
/// also the coefficient pair that weights the two basis terms: [`Lame::UNIT_MU`] and
/// [`Lame::UNIT_LAMBDA`] select the basis terms themselves, and a pair of Lamé derivatives
/// ([`LameDerivatives`]) gives the derivative of any output with respect to E or ν.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lame {
    /// Shear modulus μ = E / (2(1 + ν)) (Pa).
    pub mu: f64,
    /// First Lamé parameter λ = E ν / ((1 + ν)(1 − 2ν)) (Pa).
    pub lambda: f64,
}

/// Derivatives of the Lamé parameters with respect to the engineering parameters: each field
/// holds (∂μ/∂·, ∂λ/∂·).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LameDerivatives {
    /// (∂μ/∂E, ∂λ/∂E) (dimensionless).
    pub young_modulus: Lame,
    /// (∂μ/∂ν, ∂λ/∂ν) (Pa).
    pub poisson_ratio: Lame,
}

impl Lame {
    /// (μ, λ) = (1, 0): evaluating a law with it gives the μ basis term (Ψ_μ, P_μ, …).
    pub const UNIT_MU: Lame = Lame {
        mu: 1.0,
        lambda: 0.0,
    };
    /// (μ, λ) = (0, 1): evaluating a law with it gives the λ basis term (Ψ_λ, P_λ, …).
    pub const UNIT_LAMBDA: Lame = Lame {
        mu: 0.0,
        lambda: 1.0,
    };

    /// The Lamé parameters of Young's modulus `young_modulus` (E, Pa) and Poisson's ratio
    /// `poisson_ratio` (ν): μ = E / (2(1 + ν)), λ = E ν / ((1 + ν)(1 − 2ν)).
    ///
    /// Errors ([`Error::Invalid`] naming `young_modulus` or `poisson_ratio`) unless E is
    /// positive and finite and −1 < ν < 0.5.
    pub fn from_young_poisson(young_modulus: f64, poisson_ratio: f64) -> Result<Lame> {
        validate(young_modulus, poisson_ratio)?;
        let (e, nu) = (young_modulus, poisson_ratio);
        Ok(Lame {
            mu: e / (2.0 * (1.0 + nu)),
            lambda: e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)),
        })
    }

    /// The derivatives of [`Lame::from_young_poisson`] with respect to E and ν:
    /// ∂μ/∂E = 1 / (2(1 + ν)), ∂λ/∂E = ν / ((1 + ν)(1 − 2ν)),
    /// ∂μ/∂ν = −E / (2(1 + ν)²), ∂λ/∂ν = E (1 + 2ν²) / ((1 + ν)²(1 − 2ν)²).
    /// Same validation as [`Lame::from_young_poisson`].
    pub fn derivatives(young_modulus: f64, poisson_ratio: f64) -> Result<LameDerivatives> {
        validate(young_modulus, poisson_ratio)?;
        let (e, nu) = (young_modulus, poisson_ratio);
        let a = 1.0 + nu;
        let b = 1.0 - 2.0 * nu;
        Ok(LameDerivatives {
            young_modulus: Lame {
                mu: 1.0 / (2.0 * a),
                lambda: nu / (a * b),
            },
            poisson_ratio: Lame {
                mu: -e / (2.0 * a * a),
                lambda: e * (1.0 + 2.0 * nu * nu) / (a * a * b * b),
            },
        })
    }
}

/// E > 0 and finite, −1 < ν < 0.5 (NaN fails both).
fn validate(young_modulus: f64, poisson_ratio: f64) -> Result<()> {
    if !(young_modulus > 0.0 && young_modulus.is_finite()) {
        return Err(Error::invalid(
            "young_modulus",
            format!("must be positive and finite (Pa), got {young_modulus}"),
        ));
    }
    if !(poisson_ratio > -1.0 && poisson_ratio < 0.5) {
        return Err(Error::invalid(
            "poisson_ratio",
            format!("must lie in (-1, 0.5), got {poisson_ratio}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{DVec, central_difference_jacobian, relative_error};

    #[test]
    fn conversion_matches_the_textbook_values() {
        // E = 2.6, ν = 0.3: μ = 2.6 / 2.6 = 1, λ = 0.78 / (1.3 · 0.4) = 1.5.
        let l = Lame::from_young_poisson(2.6, 0.3).unwrap();
        assert!((l.mu - 1.0).abs() < 1e-15);
        assert!((l.lambda - 1.5).abs() < 1e-14);
        // Bulk modulus identity: λ + 2μ/3 = E / (3(1 − 2ν)).
        let (e, nu) = (1.0e6, 0.45);
        let l = Lame::from_young_poisson(e, nu).unwrap();
        let k = e / (3.0 * (1.0 - 2.0 * nu));
        assert!(((l.lambda + 2.0 * l.mu / 3.0) - k).abs() < 1e-9 * k);
    }

    #[test]
    fn derivatives_match_finite_differences() {
        for &(e, nu) in &[(1.0e6, 0.3), (3.0e4, -0.4), (2.0e5, 0.49), (7.0, 0.0)] {
            let x = DVec::from_vec(vec![e, nu]);
            let f = |p: &DVec| {
                let l = Lame::from_young_poisson(p[0], p[1]).unwrap();
                DVec::from_vec(vec![l.mu, l.lambda])
            };
            // Separate steps per parameter: E is large, ν is O(1).
            let je = central_difference_jacobian(
                |p: &DVec| f(&DVec::from_vec(vec![p[0], nu])),
                &DVec::from_vec(vec![x[0]]),
                1e-4 * e,
            );
            let h_nu = 1e-6 * (0.5 - nu).min(1.0);
            let jn = central_difference_jacobian(
                |p: &DVec| f(&DVec::from_vec(vec![e, p[0]])),
                &DVec::from_vec(vec![x[1]]),
                h_nu,
            );
            let d = Lame::derivatives(e, nu).unwrap();
            let de = [d.young_modulus.mu, d.young_modulus.lambda];
            let dn = [d.poisson_ratio.mu, d.poisson_ratio.lambda];
            assert!(
                relative_error(je.as_slice(), &de, 1e-300) < 1e-6,
                "E at {e}, {nu}"
            );
            assert!(
                relative_error(jn.as_slice(), &dn, 1e-300) < 1e-6,
                "ν at {e}, {nu}"
            );
        }
    }

    fn names(result: Result<Lame>, what: &str) {
        match result {
            Err(Error::Invalid { what: w, .. }) => assert_eq!(w, what),
            other => panic!("expected an Invalid error naming {what}, got {other:?}"),
        }
    }

    #[test]
    fn invalid_parameters_are_named() {
        for e in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            names(Lame::from_young_poisson(e, 0.3), "young_modulus");
            assert!(Lame::derivatives(e, 0.3).is_err());
        }
        for nu in [0.5, 0.7, -1.0, -2.0, f64::NAN] {
            names(Lame::from_young_poisson(1e6, nu), "poisson_ratio");
            assert!(Lame::derivatives(1e6, nu).is_err());
        }
    }
}
