//! Non-negative least squares by Lawson & Hanson's active-set method (Solving Least Squares
//! Problems, 1974, Ch. 23), stopped as soon as the residual meets a tolerance: the sparse,
//! non-negative element weights of energy-conserving sampling (Farhat et al., IJNME 2015,
//! Sec. 3: ECSW) come from its early iterates.

use crate::math::{DMat, DVec};

/// What [`nnls`] found.
#[derive(Debug, Clone)]
pub struct NnlsSolution {
    /// w ≥ 0, one per column of G, zero outside the active set.
    pub weights: DVec,
    /// ‖Gw − b‖ / ‖b‖ at the end.
    pub relative_residual: f64,
}

/// min ‖Gw − b‖ over w ≥ 0, stopped once ‖Gw − b‖ ≤ `tolerance` ‖b‖ (or at the exact
/// minimum). Works on the normal equations GᵀG (formed once), so each active-set solve is a
/// dense Cholesky of the active columns only.
pub fn nnls(g: &DMat, b: &DVec, tolerance: f64) -> NnlsSolution {
    let n = g.ncols();
    let gtg = g.transpose() * g;
    let gtb = g.transpose() * b;
    let bb = b.norm_squared();
    let residual = |w: &DVec| -> f64 {
        let r2 = bb - 2.0 * w.dot(&gtb) + w.dot(&(&gtg * w));
        (r2.max(0.0) / bb.max(f64::MIN_POSITIVE)).sqrt()
    };
    let mut w = DVec::zeros(n);
    let mut active: Vec<usize> = Vec::new();
    let mut in_set = vec![false; n];
    let mut relative = if bb > 0.0 { 1.0 } else { 0.0 };
    while relative > tolerance && active.len() < n {
        let gradient = &gtb - &gtg * &w;
        let Some((j, gj)) = (0..n)
            .filter(|&j| !in_set[j])
            .map(|j| (j, gradient[j]))
            .max_by(|a, b| a.1.total_cmp(&b.1))
        else {
            break;
        };
        if gj <= 1e-14 * gtb.amax() {
            break; // the minimum over w ≥ 0
        }
        active.push(j);
        in_set[j] = true;
        loop {
            let z = solve_active(&gtg, &gtb, &active);
            if z.iter().all(|&v| v > 0.0) {
                for (k, &c) in active.iter().enumerate() {
                    w[c] = z[k];
                }
                break;
            }
            // Step from w toward z as far as w stays non-negative; drop the columns it zeroes.
            let alpha = active
                .iter()
                .zip(z.iter())
                .filter(|(_, zk)| **zk <= 0.0)
                .map(|(&c, &zk)| w[c] / (w[c] - zk))
                .fold(f64::INFINITY, f64::min);
            for (k, &c) in active.iter().enumerate() {
                w[c] += alpha * (z[k] - w[c]);
            }
            active.retain(|&c| {
                let keep = w[c] > 1e-14 * w.amax();
                if !keep {
                    w[c] = 0.0;
                    in_set[c] = false;
                }
                keep
            });
            if active.is_empty() {
                break;
            }
        }
        relative = residual(&w);
    }
    NnlsSolution {
        weights: w,
        relative_residual: relative,
    }
}

/// The unconstrained least-squares solution over the `active` columns, from the normal
/// equations (with a round-off ridge when the columns are dependent).
fn solve_active(gtg: &DMat, gtb: &DVec, active: &[usize]) -> DVec {
    let m = active.len();
    let mut a = DMat::from_fn(m, m, |i, j| gtg[(active[i], active[j])]);
    let rhs = DVec::from_fn(m, |i, _| gtb[active[i]]);
    let scale = (0..m).map(|i| a[(i, i)]).fold(0.0, f64::max);
    let mut ridge = 0.0;
    loop {
        if let Some(c) = a.clone().cholesky() {
            return c.solve(&rhs);
        }
        let next = if ridge == 0.0 {
            1e-12 * scale
        } else {
            ridge * 10.0
        };
        for i in 0..m {
            a[(i, i)] += next - ridge;
        }
        ridge = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exact_non_negative_solution_is_found() {
        // b = 2 g₁ + 0.5 g₃ with independent columns: the exact w.
        let g = DMat::from_row_slice(
            4,
            3,
            &[1.0, 0.0, 2.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 3.0, 0.0, 1.0],
        );
        let w_true = DVec::from_vec(vec![2.0, 0.0, 0.5]);
        let b = &g * &w_true;
        let s = nnls(&g, &b, 1e-12);
        assert!((s.weights - w_true).amax() < 1e-12);
        assert!(s.relative_residual < 1e-12);
    }

    #[test]
    fn a_negative_unconstrained_solution_is_clipped_to_the_bound() {
        // min ‖w₁ (1, 0) + w₂ (1, 1) − (1, −1)‖ over w ≥ 0: unconstrained w = (2, −1); with
        // w₂ = 0 the best w₁ is 1 (residual (0, −1)), with w₁ = 0 w₂ would be 0: so (1, 0).
        let g = DMat::from_row_slice(2, 2, &[1.0, 1.0, 0.0, 1.0]);
        let b = DVec::from_vec(vec![1.0, -1.0]);
        let s = nnls(&g, &b, 1e-12);
        assert!((s.weights[0] - 1.0).abs() < 1e-12 && s.weights[1] == 0.0);
        assert!((s.relative_residual - 1.0 / 2f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn a_loose_tolerance_stops_with_few_columns() {
        // b is the sum of 50 nearly equal columns: one scaled column is within 5 %.
        let g = DMat::from_fn(20, 50, |i, j| 1.0 + 0.01 * ((i * 7 + j * 3) % 5) as f64);
        let b = &g * DVec::from_element(50, 1.0);
        let s = nnls(&g, &b, 0.05);
        let used = s.weights.iter().filter(|&&w| w > 0.0).count();
        assert!(used <= 2, "{used}");
        assert!(s.relative_residual <= 0.05);
    }
}
