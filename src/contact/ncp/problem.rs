//! One instance of the frictional contact NCP (paper 004 Eq. 2): find λ (N) with
//!
//! ```text
//! σ = G λ + g,     K_μ ∋ λ  ⊥  σ + Γ_μ(σ) ∈ K_μ*       (per contact)
//! ```
//!
//! `G` (3n×3n, symmetric positive semi-definite, (m/s)/N) is the Delassus matrix, `g` (m/s) the
//! free contact velocity; contact `i` owns entries `3i..3i+3`, ordered `[t₁, t₂, n]` in its
//! contact frame. The residual measures below are what every solver stops on and reports.

use super::cone::FrictionCone;
use super::delassus_operator::dense_velocity;
use crate::error::{Error, Result};
use crate::math::{DMat, DVec, Vec3};

/// A dense NCP instance: Delassus `G`, free velocity `g`, one friction cone per contact.
#[derive(Debug, Clone)]
pub struct ContactProblem {
    delassus: DMat,
    free_velocity: DVec,
    cones: Vec<FrictionCone>,
}

/// How far a pair (λ, σ) is from solving the NCP: each a maximum over the contacts.
///
/// - `primal` (N): `max_i dist(λ_i, K_μ)`, primal feasibility.
/// - `dual` (m/s): `max_i dist(σ_i + Γ_μ(σ_i), K_μ*)`, dual feasibility (= `max(0, −σ_N)`
///   for each contact: Signorini's non-penetration).
/// - `complementarity` (W = N·m/s): `max_i |⟨λ_i, σ_i + Γ_μ(σ_i)⟩|`, which vanishes exactly
///   when Signorini complementarity and maximal dissipation (sliding opposes the velocity,
///   on the cone's boundary) hold.
///
/// All three are absolute, in the problem's units; a solver's tolerance applies to each.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Residuals {
    /// Primal feasibility (N).
    pub primal: f64,
    /// Dual feasibility (m/s).
    pub dual: f64,
    /// Complementarity (W).
    pub complementarity: f64,
}

impl Residuals {
    /// The largest of the three measures; NaN when any is NaN (an iterate that is not a
    /// number never counts as converged).
    pub fn max(&self) -> f64 {
        let all = [self.primal, self.dual, self.complementarity];
        if all.iter().any(|x| x.is_nan()) {
            return f64::NAN;
        }
        all.into_iter().fold(0.0, f64::max)
    }
}

/// What an NCP solver returns. `converged` is a status: `false` means the iteration limit
/// was reached before every residual fell below the tolerance; λ and σ are then the last
/// iterate, and the caller decides what to do (docs/design.md).
#[derive(Debug, Clone)]
pub struct NcpSolution {
    /// Contact forces λ (N), 3 per contact, contact frames.
    pub lambda: DVec,
    /// Contact velocities σ = G λ + g (m/s).
    pub sigma: DVec,
    /// Residuals of (λ, σ).
    pub residuals: Residuals,
    /// Iterations taken (ADMM iterations or PGS sweeps).
    pub iterations: usize,
    /// Whether every residual reached the tolerance.
    pub converged: bool,
}

/// The 3-vector of contact `i` in a stacked vector.
#[inline]
pub(crate) fn block(v: &[f64], i: usize) -> Vec3 {
    Vec3::new(v[3 * i], v[3 * i + 1], v[3 * i + 2])
}

impl ContactProblem {
    /// Checks and wraps a problem.
    ///
    /// Errors when the sizes disagree (`G` must be 3n×3n, `g` 3n, one friction per contact),
    /// when an entry is not finite, when a friction coefficient is negative, or when `G` is
    /// not symmetric (to `1e-9·max|G|`). Positive semi-definiteness is not checked here (it
    /// costs a factorisation); the ADMM solver reports a `G` it cannot factorise.
    pub fn new(delassus: DMat, free_velocity: DVec, friction: &[f64]) -> Result<ContactProblem> {
        let cones = friction
            .iter()
            .enumerate()
            .map(|(i, &mu)| {
                FrictionCone::new(mu).map_err(|_| {
                    Error::invalid(
                        format!("friction of contact {i}"),
                        format!("{mu} is not a finite non-negative number"),
                    )
                })
            })
            .collect::<Result<Vec<_>>>()?;
        ContactProblem::with_cones(delassus, free_velocity, cones)
    }

    /// As [`Self::new`] with each contact's cone given (Coulomb cones and bilateral rows,
    /// [`FrictionCone::bilateral`]).
    pub fn with_cones(
        delassus: DMat,
        free_velocity: DVec,
        cones: Vec<FrictionCone>,
    ) -> Result<ContactProblem> {
        check_sizes_and_values(&delassus, &free_velocity, cones.len())?;
        // The scale of the symmetry check: the largest |G_ij|.
        let scale = delassus.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let n = cones.len();
        for c in 0..3 * n {
            for r in c + 1..3 * n {
                if (delassus[(r, c)] - delassus[(c, r)]).abs() > 1e-9 * scale {
                    return Err(Error::invalid(
                        format!("Delassus entries ({r}, {c}) and ({c}, {r})"),
                        format!(
                            "differ ({} vs {}): the matrix must be symmetric",
                            delassus[(r, c)],
                            delassus[(c, r)]
                        ),
                    ));
                }
            }
        }
        Ok(ContactProblem {
            delassus,
            free_velocity,
            cones,
        })
    }

    /// As [`Self::with_cones`] for a Delassus matrix symmetric by construction (each entry
    /// computed once and mirrored): the sizes and values are checked, the symmetry is not
    /// (a strided pass over the matrix, a few percent of a step with many contacts).
    pub(crate) fn with_symmetric_cones(
        delassus: DMat,
        free_velocity: DVec,
        cones: Vec<FrictionCone>,
    ) -> Result<ContactProblem> {
        check_sizes_and_values(&delassus, &free_velocity, cones.len())?;
        Ok(ContactProblem {
            delassus,
            free_velocity,
            cones,
        })
    }

    /// Number of contacts n.
    pub fn contact_count(&self) -> usize {
        self.cones.len()
    }

    /// The Delassus matrix G (3n×3n, (m/s)/N).
    pub fn delassus(&self) -> &DMat {
        &self.delassus
    }

    /// Gives back G's storage (to be reused by the next step's assembly).
    pub fn into_delassus(self) -> DMat {
        self.delassus
    }

    /// The free contact velocity g (3n, m/s).
    pub fn free_velocity(&self) -> &DVec {
        &self.free_velocity
    }

    /// The friction cone of each contact.
    pub fn cones(&self) -> &[FrictionCone] {
        &self.cones
    }

    /// σ = G λ + g into `sigma` (no allocation). Panics on wrong lengths.
    pub fn velocity(&self, lambda: &[f64], sigma: &mut [f64]) {
        let m = 3 * self.contact_count();
        assert!(lambda.len() == m && sigma.len() == m, "velocity: lengths");
        dense_velocity(&self.delassus, self.free_velocity.as_slice(), lambda, sigma);
    }

    /// The residual measures of the pair (λ, σ) (see [`Residuals`]); σ is taken as given,
    /// so pass σ = G λ + g. Panics on wrong lengths.
    pub fn residuals(&self, lambda: &[f64], sigma: &[f64]) -> Residuals {
        cone_residuals(&self.cones, lambda, sigma)
    }

    /// An [`NcpSolution`] for λ: computes σ = G λ + g and the residuals.
    pub(crate) fn solution(&self, lambda: DVec, iterations: usize, tolerance: f64) -> NcpSolution {
        let mut sigma = DVec::zeros(lambda.len());
        self.velocity(lambda.as_slice(), sigma.as_mut_slice());
        let residuals = self.residuals(lambda.as_slice(), sigma.as_slice());
        NcpSolution {
            converged: residuals.max() <= tolerance,
            lambda,
            sigma,
            residuals,
            iterations,
        }
    }
}

/// The residual measures of (λ, σ) for contacts with the given `cones` (see [`Residuals`]);
/// σ is taken as given (σ = G λ + g). Panics on wrong lengths.
pub(crate) fn cone_residuals(cones: &[FrictionCone], lambda: &[f64], sigma: &[f64]) -> Residuals {
    let m = 3 * cones.len();
    assert!(lambda.len() == m && sigma.len() == m, "residuals: lengths");
    let mut r = Residuals::default();
    for (i, cone) in cones.iter().enumerate() {
        let l = block(lambda, i);
        let s = cone.corrected(&block(sigma, i));
        r.primal = r.primal.max(cone.distance(&l));
        r.dual = r.dual.max(cone.distance_dual(&s));
        r.complementarity = r.complementarity.max(l.dot(&s).abs());
    }
    r
}

/// Checks that `delassus` is 3n×3n and `free_velocity` 3n long, every entry finite.
fn check_sizes_and_values(delassus: &DMat, free_velocity: &DVec, n: usize) -> Result<()> {
    if delassus.nrows() != 3 * n || delassus.ncols() != 3 * n {
        return Err(Error::invalid(
            "Delassus matrix",
            format!(
                "is {}×{}, expected {}×{} for {n} contacts",
                delassus.nrows(),
                delassus.ncols(),
                3 * n,
                3 * n
            ),
        ));
    }
    if free_velocity.len() != 3 * n {
        return Err(Error::invalid(
            "free contact velocity",
            format!("has {} entries, expected {}", free_velocity.len(), 3 * n),
        ));
    }
    if let Some(i) = free_velocity.iter().position(|x| !x.is_finite()) {
        return Err(Error::invalid(
            format!("free contact velocity entry {i}"),
            "not finite",
        ));
    }
    // One pass that vectorises; the entry is located only when something is wrong.
    let values = delassus.as_slice();
    if !all_finite(values) {
        let k = values
            .iter()
            .position(|x| !x.is_finite())
            .expect("a non-finite entry");
        return Err(Error::invalid(
            format!("Delassus entry ({}, {})", k % (3 * n), k / (3 * n)),
            "not finite",
        ));
    }
    Ok(())
}

/// Whether every entry of `values` is finite, in one pass over eight independent lanes (x·0
/// is 0 for a finite x, NaN otherwise; a single running sum would chain every addition to the
/// last and not vectorise).
fn all_finite(values: &[f64]) -> bool {
    const LANES: usize = 8;
    let mut lanes = [0.0f64; LANES];
    let chunks = values.chunks_exact(LANES);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (l, x) in lanes.iter_mut().zip(chunk) {
            *l += x * 0.0;
        }
    }
    lanes
        .iter()
        .chain(rest)
        .map(|x| x * 0.0)
        .sum::<f64>()
        .is_finite()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_finite_finds_any_entry_that_is_not() {
        let mut v = vec![1.5; 37];
        assert!(all_finite(&v));
        assert!(all_finite(&[]));
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            for i in [0, 7, 8, 31, 32, 36] {
                v[i] = bad;
                assert!(!all_finite(&v), "{bad} at {i}");
                v[i] = -2.0;
            }
        }
    }

    #[test]
    fn bad_problems_are_errors_naming_the_entry() {
        let g = DMat::identity(3, 3);
        let v = DVec::zeros(3);
        assert!(ContactProblem::new(g.clone(), v.clone(), &[0.5]).is_ok());
        assert!(ContactProblem::new(g.clone(), v.clone(), &[0.5, 0.5]).is_err());
        assert!(ContactProblem::new(g.clone(), DVec::zeros(6), &[0.5]).is_err());
        let e = ContactProblem::new(g.clone(), v.clone(), &[-1.0]).unwrap_err();
        assert!(e.to_string().contains("contact 0"), "{e}");
        let mut a = g.clone();
        a[(0, 1)] = 0.5;
        let e = ContactProblem::new(a, v.clone(), &[0.5]).unwrap_err();
        assert!(e.to_string().contains("symmetric"), "{e}");
        let mut a = g;
        a[(2, 2)] = f64::NAN;
        assert!(ContactProblem::new(a, v, &[0.5]).is_err());
    }

    #[test]
    fn residuals_vanish_on_hand_made_solutions_and_not_elsewhere() {
        // G = I, μ = 0.5. Sliding solution: λ = (−0.5, 0, 1), σ = (1, 0, 0).
        let p = ContactProblem::new(
            DMat::identity(3, 3),
            DVec::from_vec(vec![1.5, 0.0, -1.0]),
            &[0.5],
        )
        .unwrap();
        let lambda = [-0.5, 0.0, 1.0];
        let mut sigma = [0.0; 3];
        p.velocity(&lambda, &mut sigma);
        assert_eq!(sigma, [1.0, 0.0, 0.0]);
        assert_eq!(p.residuals(&lambda, &sigma).max(), 0.0);
        // Tangential force along the velocity (not opposing it): complementarity fails.
        let r = p.residuals(&[0.5, 0.0, 1.0], &[1.0, 0.0, 0.0]);
        assert!((r.complementarity - 1.0).abs() < 1e-15);
        // Outside the cone, and penetrating velocity.
        let r = p.residuals(&[2.0, 0.0, 1.0], &[0.0, 0.0, -0.25]);
        assert!((r.primal - 1.5 / 1.25f64.sqrt()).abs() < 1e-12);
        assert!((r.dual - 0.25).abs() < 1e-15);
    }

    #[test]
    fn a_residual_that_is_not_a_number_is_never_small() {
        let r = Residuals {
            primal: 0.0,
            dual: f64::NAN,
            complementarity: 0.0,
        };
        assert!(r.max().is_nan());
        assert!(!(r.max() <= 1e-10));
    }
}
