//! The small dense bounded problem of the solved actuators (k × k, k = a handful), S symmetric
//! positive semi-definite and r(λ) = Sλ − c:
//!
//! - a target-driven actuator i asks rᵢ = 0 with λᵢ ∈ [loᵢ, hiᵢ] (rᵢ ≥ 0 at loᵢ, ≤ 0 at hiᵢ):
//!   the KKT conditions of min ½λᵀSλ − cᵀλ over the box;
//! - a force-driven actuator with bounds on its value (a cable's total pull in
//!   [min_displacement, max_displacement]) asks λᵢ = fᵢ, its preferred (given) force, while
//!   (Sλ)ᵢ stays in a window [c⁻ᵢ, c⁺ᵢ]; at the window's edge λᵢ is what holds it there:
//!   fᵢ − λᵢ ∈ N_{[c⁻, c⁺]}((Sλ)ᵢ) (a normal-cone complementarity), within [loᵢ, hiᵢ].
//!
//! Both are the optimality conditions of one convex problem, min ½λᵀSλ + Σᵢ φᵢ(λᵢ) over the
//! box, φᵢ separable: −cᵢλᵢ for a target, σᵢ(fᵢ − λᵢ) for a window (σᵢ its support function,
//! σ(u) = max over c in [c⁻, c⁺] of c·u, whose subgradient condition is the normal cone
//! above), so exact coordinate minimisation (projected Gauss-Seidel) converges: each sweep sets
//! λᵢ = clamp(clamp(fᵢ, λᵢ(c⁻ᵢ), λᵢ(c⁺ᵢ)), loᵢ, hiᵢ), with λᵢ(c) the λᵢ that makes
//! (Sλ)ᵢ = c with the others fixed. A target is the window c⁻ = c⁺ = cᵢ (fᵢ unused).

use crate::math::{DMat, DVec};

/// Solves the box-constrained problem (module doc, targets only) by projected Gauss-Seidel
/// from `lambda` (warm start, projected onto the box first) until the largest change is below
/// `tolerance` times the largest |λ| (or 1), at most `max_sweeps` sweeps. Returns the sweeps
/// taken. A diagonal entry ≤ 0 (an actuator with no effect) leaves its λ at the bound nearest 0.
pub fn bounded_solve(
    s: &DMat,
    c: &DVec,
    bounds: &[[f64; 2]],
    lambda: &mut DVec,
    tolerance: f64,
    max_sweeps: usize,
) -> usize {
    let windows: Vec<[f64; 2]> = c.iter().map(|&c| [c, c]).collect();
    let preferred = vec![0.0; c.len()];
    window_solve(
        s, &windows, &preferred, bounds, lambda, tolerance, max_sweeps,
    )
}

/// Solves the problem of the module doc: per actuator a window `windows[i]` = [c⁻, c⁺] of
/// (Sλ)ᵢ (c⁻ ≤ c⁺; equal for a target, infinite sides for no bound), a preferred λ
/// `preferred[i]` (used when the window is not a point) and bounds `bounds[i]` on λᵢ. Projected
/// Gauss-Seidel from `lambda` until the largest change is below `tolerance` times the largest
/// |λ| (or 1), at most `max_sweeps` sweeps; returns the sweeps taken. A diagonal entry ≤ 0 (an
/// actuator with no effect) gets its preferred λ within its bounds.
pub fn window_solve(
    s: &DMat,
    windows: &[[f64; 2]],
    preferred: &[f64],
    bounds: &[[f64; 2]],
    lambda: &mut DVec,
    tolerance: f64,
    max_sweeps: usize,
) -> usize {
    let k = windows.len();
    assert!(
        s.nrows() == k
            && s.ncols() == k
            && bounds.len() == k
            && preferred.len() == k
            && lambda.len() == k
    );
    for i in 0..k {
        assert!(
            windows[i][0] <= windows[i][1],
            "window {i}: {:?}",
            windows[i]
        );
        lambda[i] = lambda[i].clamp(bounds[i][0], bounds[i][1]);
    }
    for sweep in 1..=max_sweeps {
        let mut change: f64 = 0.0;
        for i in 0..k {
            let d = s[(i, i)];
            let new = if d > 0.0 {
                let r = (0..k).map(|j| s[(i, j)] * lambda[j]).sum::<f64>();
                let [lo, hi] = windows[i].map(|c| lambda[i] + (c - r) / d);
                let held = if windows[i][0] == windows[i][1] {
                    lo
                } else {
                    preferred[i].clamp(lo, hi)
                };
                held.clamp(bounds[i][0], bounds[i][1])
            } else if windows[i][0] == windows[i][1] {
                0.0f64.clamp(bounds[i][0], bounds[i][1])
            } else {
                preferred[i].clamp(bounds[i][0], bounds[i][1])
            };
            change = change.max((new - lambda[i]).abs());
            lambda[i] = new;
        }
        let scale = lambda.iter().fold(1.0f64, |m, l| m.max(l.abs()));
        if change <= tolerance * scale {
            return sweep;
        }
    }
    max_sweeps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unconstrained_solution_and_active_bound() {
        let s = DMat::from_row_slice(2, 2, &[2.0, 0.5, 0.5, 1.0]);
        let c = DVec::from_vec(vec![1.0, -2.0]);
        let mut l = DVec::zeros(2);
        let inf = f64::INFINITY;
        bounded_solve(&s, &c, &[[-inf, inf]; 2], &mut l, 1e-15, 10_000);
        let exact = s.clone().lu().solve(&c).unwrap();
        assert!((&l - exact).norm() < 1e-12);
        // λ₂ ≥ 0: the unconstrained λ₂ < 0 is held at 0, λ₁ = c₁/s₁₁.
        let mut l = DVec::zeros(2);
        bounded_solve(&s, &c, &[[-inf, inf], [0.0, inf]], &mut l, 1e-15, 10_000);
        assert!((l[0] - 0.5).abs() < 1e-14 && l[1] == 0.0);
    }

    #[test]
    fn a_preferred_force_is_kept_inside_its_window_and_held_at_its_edge() {
        // Actuator 0 a target (S λ)₀ = 1; actuator 1 prefers λ₁ = 3 with (S λ)₁ ≤ 2.
        let s = DMat::from_row_slice(2, 2, &[2.0, 0.5, 0.5, 1.0]);
        let inf = f64::INFINITY;
        let bounds = [[-inf, inf], [0.0, inf]];
        let solve = |upper: f64, preferred: f64| {
            let mut l = DVec::zeros(2);
            window_solve(
                &s,
                &[[1.0, 1.0], [-inf, upper]],
                &[0.0, preferred],
                &bounds,
                &mut l,
                1e-15,
                10_000,
            );
            l
        };
        // Free: λ₁ = 3, λ₀ = (1 − 0.5·3)/2 = −0.25, (Sλ)₁ = 0.5·(−0.25) + 3 = 2.875 > 2: the
        // window binds, so both rows are equalities: S λ = (1, 2), λ = S⁻¹ (1, 2).
        let l = solve(2.0, 3.0);
        let exact = s
            .clone()
            .lu()
            .solve(&DVec::from_vec(vec![1.0, 2.0]))
            .unwrap();
        assert!((&l - &exact).norm() < 1e-12, "{l} vs {exact}");
        assert!(l[1] < 3.0);
        // A wider window: λ₁ stays at its preferred 3, λ₀ = −0.25.
        let l = solve(3.0, 3.0);
        assert!(
            (l[1] - 3.0).abs() < 1e-14 && (l[0] + 0.25).abs() < 1e-14,
            "{l}"
        );
        // Held at the edge but the force bound λ₁ ≥ 0 wins: preferred 3 with (Sλ)₁ ≤ −1
        // would need λ₁ < 0.
        let l = solve(-1.0, 3.0);
        assert!(l[1] == 0.0 && (l[0] - 0.5).abs() < 1e-14, "{l}");
    }
}
