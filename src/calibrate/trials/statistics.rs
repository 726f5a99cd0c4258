//! The statistics of a least-squares fit at its optimum, as lmfit reports them: the
//! Gauss–Newton covariance of the parameters
//!
//! > C = σ̂² (JᵀJ)⁻¹,   σ̂² = SSR/(N − p)
//!
//! (J the residuals' Jacobian in the parameters' physical units, N residuals, p parameters,
//! SSR = ‖r‖²), the standard errors √C_kk and the correlations C_kl/√(C_kk C_ll); and the RMS of
//! residuals √(Σ r²/N), over every compared sample or a marker's. These are honest when the
//! residuals are independent, of one variance, and the model is near-linear over a few
//! standard errors (docs/calibration.md).

use std::collections::BTreeMap;

use crate::math::{DMat, DVec};

use super::residuals::ComparedSample;

/// The largest condition number of the column-scaled JᵀJ whose inverse is taken: beyond it the
/// parameters are not separately identifiable from the data (a direction of the parameters
/// that changes no residual) and no covariance is given.
pub const LARGEST_CONDITION: f64 = 1e14;

/// The Gauss–Newton statistics of a fit ([`statistics`]).
#[derive(Debug, Clone, PartialEq)]
pub struct FitStatistics {
    /// N, the residuals.
    pub residuals: usize,
    /// N − p.
    pub degrees_of_freedom: usize,
    /// σ̂² = SSR/(N − p) (the residuals' unit squared); `None` when N ≤ p.
    pub residual_variance: Option<f64>,
    /// C = σ̂² (JᵀJ)⁻¹ (p × p); `None` when N ≤ p or JᵀJ is singular (its column-scaled
    /// condition number above [`LARGEST_CONDITION`]).
    pub covariance: Option<DMat>,
    /// The condition number of the column-scaled JᵀJ (∞ when a column is zero).
    pub condition: f64,
}

impl FitStatistics {
    /// The standard error √C_kk of parameter `k`, if the covariance exists.
    pub fn std_error(&self, k: usize) -> Option<f64> {
        self.covariance.as_ref().map(|c| c[(k, k)].max(0.0).sqrt())
    }

    /// The correlation C_kl/√(C_kk C_ll) of parameters `k` and `l`, if the covariance exists.
    pub fn correlation(&self, k: usize, l: usize) -> Option<f64> {
        let c = self.covariance.as_ref()?;
        Some(c[(k, l)] / (c[(k, k)] * c[(l, l)]).sqrt())
    }
}

/// The statistics of residuals `r` (N) with Jacobian `j` (N × p) at a fit's optimum (module
/// doc). (JᵀJ)⁻¹ is taken through the columns scaled to unit norm, J D⁻¹ (D = diag ‖J_k‖), by
/// the symmetric eigen-decomposition of (J D⁻¹)ᵀ(J D⁻¹): the scaling removes the spread of the
/// parameters' units from the conditioning.
pub fn statistics(r: &DVec, j: &DMat) -> FitStatistics {
    let (n, p) = j.shape();
    assert_eq!(r.len(), n, "one Jacobian row per residual");
    let dof = n.saturating_sub(p);
    let variance = (dof > 0).then(|| r.norm_squared() / dof as f64);
    let norms: Vec<f64> = (0..p).map(|k| j.column(k).norm()).collect();
    let mut condition = f64::INFINITY;
    let mut covariance = None;
    if norms.iter().all(|&c| c > 0.0 && c.is_finite()) {
        let scaled = DMat::from_fn(n, p, |i, k| j[(i, k)] / norms[k]);
        let normal = scaled.transpose() * &scaled;
        let eigen = normal.symmetric_eigen();
        let largest = eigen.eigenvalues.max();
        let smallest = eigen.eigenvalues.min();
        condition = if smallest > 0.0 {
            largest / smallest
        } else {
            f64::INFINITY
        };
        if condition <= LARGEST_CONDITION
            && let Some(s2) = variance
        {
            let inv = &eigen.eigenvectors
                * DMat::from_diagonal(&eigen.eigenvalues.map(|l| 1.0 / l))
                * eigen.eigenvectors.transpose();
            covariance = Some(DMat::from_fn(p, p, |k, l| {
                s2 * inv[(k, l)] / (norms[k] * norms[l])
            }));
        }
    }
    FitStatistics {
        residuals: n,
        degrees_of_freedom: dof,
        residual_variance: variance,
        covariance,
        condition,
    }
}

/// √(Σ r²/N) of `values` (the residuals' unit); `None` for no value.
pub fn rms(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (sum, count) = values
        .into_iter()
        .fold((0.0, 0usize), |(s, c), v| (s + v * v, c + 1));
    (count > 0).then(|| (sum / count as f64).sqrt())
}

/// The RMS (m) of the residual coordinates of `samples`, three per sample ([`rms`]); `None`
/// for no sample.
pub fn sample_rms<'a>(samples: impl IntoIterator<Item = &'a ComparedSample>) -> Option<f64> {
    rms(samples.into_iter().flat_map(|s| {
        let r = s.residual();
        [r.x, r.y, r.z]
    }))
}

/// The RMS (m) of each marker's samples ([`sample_rms`]), by its name in `names` (scene
/// order); a marker without a sample is absent.
pub fn rms_per_marker(samples: &[ComparedSample], names: &[String]) -> BTreeMap<String, f64> {
    names
        .iter()
        .enumerate()
        .filter_map(|(m, name)| {
            sample_rms(samples.iter().filter(|s| s.marker == m)).map(|v| (name.clone(), v))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A straight line y = a + b x fitted to 5 points: the textbook covariance
    /// σ̂² [[Σx², −Σx], [−Σx, N]] / (N Σx² − (Σx)²) with σ̂² = SSR/(N − 2), computed by hand.
    #[test]
    fn a_straight_line_has_the_textbook_covariance() {
        let x = [0.0, 1.0, 2.0, 3.0, 4.0];
        // Residuals at the optimum of some data: any r orthogonal to the columns would do, and
        // the covariance only needs ‖r‖²: take r with ‖r‖² = 0.1.
        let r = DVec::from_vec(vec![0.1, -0.2, 0.0, 0.2, -0.1]);
        let j = DMat::from_fn(5, 2, |i, k| if k == 0 { 1.0 } else { x[i] });
        let s = statistics(&r, &j);
        let (sx, sxx, n) = (10.0, 30.0, 5.0);
        let s2 = 0.1 / 3.0;
        let det = n * sxx - sx * sx;
        let expected = [[sxx / det, -sx / det], [-sx / det, n / det]];
        let c = s.covariance.as_ref().unwrap();
        for k in 0..2 {
            for l in 0..2 {
                let e = s2 * expected[k][l];
                assert!(
                    (c[(k, l)] - e).abs() < 1e-15,
                    "{k}{l}: {} vs {e}",
                    c[(k, l)]
                );
            }
        }
        assert_eq!(s.degrees_of_freedom, 3);
        assert!((s.residual_variance.unwrap() - s2).abs() < 1e-16);
        // The correlation of intercept and slope: −Σx/√(N Σx²).
        let rho = -sx / (n * sxx).sqrt();
        assert!((s.correlation(0, 1).unwrap() - rho).abs() < 1e-14);
        assert!((s.std_error(1).unwrap() - (s2 * n / det).sqrt()).abs() < 1e-15);
    }

    /// Two identical columns (one direction changes nothing): no covariance; no residual to
    /// spare (N = p): no variance.
    #[test]
    fn an_unidentifiable_fit_has_no_covariance() {
        let r = DVec::from_vec(vec![0.1, 0.2, 0.3]);
        let j = DMat::from_fn(3, 2, |i, _| i as f64 + 1.0);
        let s = statistics(&r, &j);
        assert!(s.covariance.is_none() && s.std_error(0).is_none());
        assert!(s.condition > LARGEST_CONDITION);
        let j = DMat::from_fn(3, 3, |i, k| if i == k { 1.0 } else { 0.0 });
        let s = statistics(&r, &j);
        assert!(s.residual_variance.is_none() && s.covariance.is_none());
        assert_eq!(rms([3.0, 4.0]), Some((12.5f64).sqrt()));
        assert_eq!(rms([]), None);
    }
}
