//! Central finite differences and norm-wise relative errors: the independent reference that
//! every derivative in the library is tested against (docs/derivatives.md).

use super::{DMat, DVec};

/// Jacobian of `f` at `x` by central differences: column `j` is
/// `(f(x + h e_j) − f(x − h e_j)) / (2h)`. Truncation error is O(h²); pick `h` near
/// `ε^{1/3}·|x|` (about 1e-5 relative) for a balance with round-off.
pub fn central_difference_jacobian(f: impl Fn(&DVec) -> DVec, x: &DVec, h: f64) -> DMat {
    assert!(h > 0.0, "finite-difference step must be positive");
    let n = x.len();
    let mut columns = Vec::with_capacity(n);
    let mut xp = x.clone();
    for j in 0..n {
        xp[j] = x[j] + h;
        let fp = f(&xp);
        xp[j] = x[j] - h;
        let fm = f(&xp);
        xp[j] = x[j];
        columns.push((fp - fm) / (2.0 * h));
    }
    let m = columns.first().map_or(0, |c| c.len());
    DMat::from_fn(m, n, |i, j| columns[j][i])
}

/// Norm-wise relative error `‖a − b‖ / max(‖a‖, ‖b‖, floor)`, the measure used by the
/// derivative tests (the 1e-6 bar of docs/derivatives.md). `floor` guards the comparison of two
/// (near-)zero quantities.
pub fn relative_error(a: &[f64], b: &[f64], floor: f64) -> f64 {
    assert_eq!(a.len(), b.len(), "relative_error: lengths differ");
    let diff: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt();
    let na: f64 = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| x * x).sum::<f64>().sqrt();
    diff / na.max(nb).max(floor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jacobian_of_a_polynomial_map_matches_its_hand_derivative() {
        // f(x, y) = (x² y, sin x + y³); J = [[2xy, x²], [cos x, 3y²]].
        let f = |v: &DVec| DVec::from_vec(vec![v[0] * v[0] * v[1], v[0].sin() + v[1].powi(3)]);
        let x = DVec::from_vec(vec![0.7, -1.3]);
        let j = central_difference_jacobian(f, &x, 1e-5);
        let exact = [2.0 * 0.7 * -1.3, 0.7f64.cos(), 0.49, 3.0 * 1.69];
        assert!(relative_error(j.as_slice(), &exact, 1e-12) < 1e-9);
    }

    #[test]
    fn relative_error_is_normwise() {
        assert!(
            (relative_error(&[1.0, 0.0], &[1.0, 1e-3], 1e-30) - 1e-3 / (1.0f64 + 1e-6).sqrt())
                .abs()
                < 1e-15
        );
        assert_eq!(relative_error(&[0.0], &[0.0], 1e-30), 0.0);
    }
}
