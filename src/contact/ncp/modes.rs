//! Contact modes (paper 002 §III-B, Eq. 8-10): each contact of an NCP solution is breaking,
//! sticking or sliding; the NCP derivatives treat each mode with its own equations.
//!
//! Rule, for contact forces λ (N) and velocities σ (m/s) in the contact frame, with the
//! tolerances of [`ModeTolerance`]:
//!
//! 1. **breaking** when `‖λ‖ ≤ force` (no force: the contact opens, σ_N ≥ 0);
//! 2. otherwise **sliding** when `‖σ_T‖ > velocity` (the point slips; λ on the cone's rim);
//! 3. otherwise **sticking** (σ ≈ 0, λ anywhere in the cone).
//!
//! At a mode boundary (λ ≈ 0 and σ ≈ 0, or ‖σ_T‖ ≈ 0 with λ on the rim) the rule picks the
//! first mode in that order: breaking before sticking before sliding, the one-sided choice
//! the derivatives then take.

use super::problem::block;

/// One contact's mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContactMode {
    /// λ = 0, the contact opens (σ_N ≥ 0).
    Breaking,
    /// σ = 0, the point is held; λ in the cone.
    Sticking,
    /// σ_N = 0, σ_T ≠ 0, λ on the cone's boundary opposite to σ_T.
    Sliding,
}

/// Tolerances of the mode rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModeTolerance {
    /// A contact with `‖λ‖` at most this (N) is breaking.
    pub force: f64,
    /// A contact with `‖σ_T‖` above this (m/s) is sliding.
    pub velocity: f64,
}

impl Default for ModeTolerance {
    /// `1e-8` N and `1e-8` m/s: a hundred times the default NCP tolerance, so a converged
    /// solution's residual noise does not flip a mode.
    fn default() -> Self {
        ModeTolerance {
            force: 1e-8,
            velocity: 1e-8,
        }
    }
}

impl ModeTolerance {
    /// The tolerance to classify the solution of an NCP solved to `tolerance` with: the
    /// default, widened to ten times the solver tolerance.
    pub fn for_ncp_tolerance(tolerance: f64) -> ModeTolerance {
        ModeTolerance {
            force: ModeTolerance::default().force.max(10.0 * tolerance),
            velocity: ModeTolerance::default().velocity.max(10.0 * tolerance),
        }
    }
}

/// The mode of one contact from its force `lambda` and velocity `sigma` (contact frame).
pub fn classify_contact(
    lambda: &crate::math::Vec3,
    sigma: &crate::math::Vec3,
    tol: ModeTolerance,
) -> ContactMode {
    if lambda.norm() <= tol.force {
        ContactMode::Breaking
    } else if sigma.x.hypot(sigma.y) > tol.velocity {
        ContactMode::Sliding
    } else {
        ContactMode::Sticking
    }
}

/// The mode of every contact of stacked `lambda` and `sigma` (3 entries per contact).
///
/// Panics if the lengths differ or are not a multiple of 3.
pub fn classify(lambda: &[f64], sigma: &[f64], tol: ModeTolerance) -> Vec<ContactMode> {
    let mut modes = Vec::new();
    classify_into(lambda, sigma, tol, &mut modes);
    modes
}

/// [`classify`] into `modes` (cleared first; its buffer reused).
///
/// Panics if the lengths differ or are not a multiple of 3.
pub fn classify_into(
    lambda: &[f64],
    sigma: &[f64],
    tol: ModeTolerance,
    modes: &mut Vec<ContactMode>,
) {
    assert!(
        lambda.len() == sigma.len() && lambda.len().is_multiple_of(3),
        "classify: lengths"
    );
    modes.clear();
    modes.extend(
        (0..lambda.len() / 3).map(|i| classify_contact(&block(lambda, i), &block(sigma, i), tol)),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::{AdmmSolver, ContactProblem};
    use crate::math::{DMat, DVec};

    #[test]
    fn constructed_cases() {
        let tol = ModeTolerance::default();
        let lambda = [0.0, 0.0, 0.0, 0.1, -0.2, 1.0, -0.5, 0.0, 1.0];
        let sigma = [0.3, 0.1, 2.0, 0.0, 0.0, 0.0, 0.4, 0.0, 0.0];
        assert_eq!(
            classify(&lambda, &sigma, tol),
            vec![
                ContactMode::Breaking,
                ContactMode::Sticking,
                ContactMode::Sliding
            ]
        );
        // Boundary: λ = 0 and σ = 0 is breaking (the documented one-sided choice).
        assert_eq!(
            classify(&[0.0; 3], &[0.0; 3], tol),
            vec![ContactMode::Breaking]
        );
    }

    /// Three decoupled contacts with G = I, μ = 0.5, whose modes follow from g alone:
    /// g_N > 0 → breaking; g_N < 0 with ‖g_T‖ < μ|g_N| → sticking; ‖g_T‖ > μ|g_N| → sliding.
    #[test]
    fn modes_of_solved_decoupled_contacts() {
        let g = DVec::from_vec(vec![
            0.1, 0.0, 1.0, // separating
            0.2, 0.1, -1.0, // ‖g_T‖ ≈ 0.22 < 0.5
            1.0, 0.5, -1.0, // ‖g_T‖ ≈ 1.12 > 0.5
        ]);
        let p = ContactProblem::new(DMat::identity(9, 9), g, &[0.5; 3]).unwrap();
        let s = AdmmSolver::default().solve(&p, None).unwrap();
        assert!(s.converged);
        assert_eq!(
            classify(
                s.lambda.as_slice(),
                s.sigma.as_slice(),
                ModeTolerance::default()
            ),
            vec![
                ContactMode::Breaking,
                ContactMode::Sticking,
                ContactMode::Sliding
            ]
        );
    }
}
