//! The small dense bounded problem of displacement-driven actuators: find λ ∈ [lo, hi] with
//! S λ = c on the components strictly inside their bounds (the KKT conditions of
//! min ½λᵀSλ − cᵀλ over the box), S symmetric positive semi-definite (k × k, k = number of
//! solved actuators, a handful).

use crate::math::{DMat, DVec};

/// Solves the box-constrained problem by projected Gauss-Seidel from `lambda` (warm start,
/// projected onto the box first) until the largest change is below `tolerance` times the
/// largest |λ| (or 1), at most `max_sweeps` sweeps. Returns the sweeps taken. A diagonal
/// entry ≤ 0 (an actuator with no effect) leaves its λ at the bound nearest 0.
pub fn bounded_solve(
    s: &DMat,
    c: &DVec,
    bounds: &[[f64; 2]],
    lambda: &mut DVec,
    tolerance: f64,
    max_sweeps: usize,
) -> usize {
    let k = c.len();
    assert!(s.nrows() == k && s.ncols() == k && bounds.len() == k && lambda.len() == k);
    for i in 0..k {
        lambda[i] = lambda[i].clamp(bounds[i][0], bounds[i][1]);
    }
    for sweep in 1..=max_sweeps {
        let mut change: f64 = 0.0;
        for i in 0..k {
            let d = s[(i, i)];
            let new = if d > 0.0 {
                let r = c[i] - (0..k).map(|j| s[(i, j)] * lambda[j]).sum::<f64>();
                (lambda[i] + r / d).clamp(bounds[i][0], bounds[i][1])
            } else {
                0.0f64.clamp(bounds[i][0], bounds[i][1])
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
}
