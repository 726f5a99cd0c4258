//! Right-preconditioned GMRES (Saad and Schultz 1986; Saad, *Iterative Methods for Sparse
//! Linear Systems*, 2nd ed., Alg. 9.5) for a square operator known only by its products, with
//! a preconditioner known only by its solves: the Newton steps of a contact polish whose
//! Jacobian goes through a sparse factor (`contact::ncp::polish_krylov`).
//!
//! From `x₀ = 0`, iteration `k` finds the `x = P⁻¹ V_k y` that minimises the true residual
//! `‖b − J x‖₂` over the Krylov space of `J P⁻¹` and `b` (Arnoldi with modified Gram–Schmidt,
//! Givens rotations on the Hessenberg matrix). One product with `J` and one solve with `P`
//! per iteration, against two of each for an iteration of BiCGSTAB; no restarts (the caller
//! bounds the iterations), and the preconditioned vectors `z_k = P⁻¹ v_k` are kept, so the
//! answer costs no further solve.

use super::dot::{dot, norm};

/// A square operator `J` and its preconditioner `P` (`n × n`), for [`gmres`].
pub trait PreconditionedOperator {
    /// `out = J x`.
    fn apply(&mut self, x: &[f64], out: &mut [f64]);
    /// `x ← P⁻¹ x`.
    fn precondition(&mut self, x: &mut [f64]);
}

/// The Krylov basis, the preconditioned basis and the rotated Hessenberg matrix of [`gmres`],
/// kept between calls (`2 k n` values after `k` iterations).
#[derive(Debug, Default, Clone)]
pub struct GmresWorkspace {
    basis: Vec<f64>,
    preconditioned: Vec<f64>,
    /// The rotated Hessenberg matrix, column-major `(max_iterations + 1) × max_iterations`.
    hessenberg: Vec<f64>,
    /// The Givens rotations `(c, s)`, the rotated right-hand side `β e₁`, the Arnoldi vector
    /// and the coefficients `y` of the answer in the preconditioned basis.
    rotations: Vec<(f64, f64)>,
    rhs: Vec<f64>,
    w: Vec<f64>,
    y: Vec<f64>,
}

/// How a [`gmres`] solve ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GmresInfo {
    /// Products with `J` (and solves with `P`) made.
    pub iterations: usize,
    /// `‖b − J x‖₂ / ‖b‖₂` at the returned `x` (0 for `b = 0`), from the rotations (equal to
    /// the true residual in exact arithmetic).
    pub relative_residual: f64,
    /// Whether `relative_residual ≤ tolerance`.
    pub converged: bool,
}

/// Solves `J x = b` for the operator and preconditioner of `op`, to a relative residual of
/// `tolerance` or in `max_iterations` (≥ 1) iterations, whichever comes first; `x` (length
/// `b.len()`) receives the minimal-residual iterate of the last Krylov space either way.
pub fn gmres(
    op: &mut impl PreconditionedOperator,
    b: &[f64],
    x: &mut [f64],
    tolerance: f64,
    max_iterations: usize,
    work: &mut GmresWorkspace,
) -> GmresInfo {
    let n = b.len();
    assert_eq!(x.len(), n, "gmres: x and b lengths");
    x.fill(0.0);
    let beta = norm(b);
    if !(beta > 0.0) {
        return GmresInfo {
            iterations: 0,
            relative_residual: 0.0,
            converged: beta == 0.0,
        };
    }
    let kmax = max_iterations.max(1);
    let ld = kmax + 1;
    work.basis.clear();
    work.basis.extend(b.iter().map(|v| v / beta));
    work.preconditioned.clear();
    work.hessenberg.clear();
    work.hessenberg.resize(ld * kmax, 0.0);
    work.rotations.clear();
    work.rhs.clear();
    work.rhs.resize(ld, 0.0);
    work.rhs[0] = beta;
    work.w.resize(n, 0.0);
    let mut residual = beta;
    let mut k = 0;
    while k < kmax {
        let j = k;
        k += 1;
        // z_j = P⁻¹ v_j, w = J z_j.
        work.preconditioned
            .extend_from_slice(&work.basis[j * n..(j + 1) * n]);
        let z = &mut work.preconditioned[j * n..(j + 1) * n];
        op.precondition(z);
        op.apply(&work.preconditioned[j * n..(j + 1) * n], &mut work.w);
        // Arnoldi: w ⟂ v_0 … v_j (modified Gram–Schmidt).
        let column = &mut work.hessenberg[j * ld..(j + 1) * ld];
        for (i, h) in column.iter_mut().enumerate().take(j + 1) {
            let v = &work.basis[i * n..(i + 1) * n];
            *h = dot(v, &work.w);
            for (w, a) in work.w.iter_mut().zip(v) {
                *w -= *h * a;
            }
        }
        let next = norm(&work.w);
        column[j + 1] = next;
        // The earlier rotations, then the one that zeroes h_{j+1, j}.
        for (i, &(c, s)) in work.rotations.iter().enumerate() {
            let (a, b) = (column[i], column[i + 1]);
            column[i] = c * a + s * b;
            column[i + 1] = -s * a + c * b;
        }
        let (a, b) = (column[j], column[j + 1]);
        let r = a.hypot(b);
        let (c, s) = if r > 0.0 { (a / r, b / r) } else { (1.0, 0.0) };
        column[j] = r;
        column[j + 1] = 0.0;
        work.rotations.push((c, s));
        let g = work.rhs[j];
        work.rhs[j] = c * g;
        work.rhs[j + 1] = -s * g;
        residual = work.rhs[j + 1].abs();
        // Converged, or the space closed (the solution lies in it: exact).
        if residual <= tolerance * beta || !(next > 0.0) || !residual.is_finite() {
            break;
        }
        work.basis.extend(work.w.iter().map(|w| w / next));
    }
    // y = R⁻¹ g (back substitution on the rotated Hessenberg matrix), x = Z y.
    let h = &work.hessenberg;
    let y = &mut work.y;
    y.clear();
    y.resize(k, 0.0);
    for i in (0..k).rev() {
        let mut s = work.rhs[i];
        for (l, yl) in y.iter().enumerate().skip(i + 1) {
            s -= h[l * ld + i] * yl;
        }
        y[i] = if h[i * ld + i] != 0.0 {
            s / h[i * ld + i]
        } else {
            0.0
        };
    }
    for (l, yl) in y.iter().enumerate() {
        for (xi, z) in x.iter_mut().zip(&work.preconditioned[l * n..(l + 1) * n]) {
            *xi += yl * z;
        }
    }
    let relative_residual = residual / beta;
    GmresInfo {
        iterations: k,
        relative_residual,
        converged: relative_residual <= tolerance,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{DMat, DVec};

    /// A dense J with a dense LU of an approximation of it as preconditioner.
    struct Dense {
        j: DMat,
        p: nalgebra::LU<f64, nalgebra::Dyn, nalgebra::Dyn>,
        products: usize,
    }

    impl PreconditionedOperator for Dense {
        fn apply(&mut self, x: &[f64], out: &mut [f64]) {
            self.products += 1;
            out.copy_from_slice((&self.j * DVec::from_column_slice(x)).as_slice());
        }
        fn precondition(&mut self, x: &mut [f64]) {
            let y = self
                .p
                .solve(&DVec::from_column_slice(x))
                .expect("invertible");
            x.copy_from_slice(y.as_slice());
        }
    }

    fn nonsymmetric(n: usize) -> DMat {
        DMat::from_fn(n, n, |i, k| {
            let base = ((i * 7 + k * 3) as f64 * 0.37).sin() * 0.3;
            if i == k { 4.0 + i as f64 * 0.1 } else { base }
        })
    }

    /// GMRES on `J x = b` preconditioned by `p`'s LU: the answer, how it ended, and the
    /// products with J it made.
    fn solve(j: &DMat, p: DMat, b: &DVec, tolerance: f64, most: usize) -> (DVec, GmresInfo, usize) {
        let mut op = Dense {
            j: j.clone(),
            p: p.lu(),
            products: 0,
        };
        let mut x = vec![0.0; b.len()];
        let work = &mut GmresWorkspace::default();
        let info = gmres(&mut op, b.as_slice(), &mut x, tolerance, most, work);
        (DVec::from_vec(x), info, op.products)
    }

    #[test]
    fn the_solution_is_the_lu_solution() {
        let n = 30;
        let j = nonsymmetric(n);
        let b = DVec::from_fn(n, |i, _| (i as f64 * 0.9).cos());
        let reference = j.clone().lu().solve(&b).unwrap();
        let tolerance = 1e-13;
        // ‖x − J⁻¹b‖ ≤ ‖J⁻¹‖ ‖b − J x‖ ≤ tolerance ‖b‖ / σ_min(J), plus round-off.
        let bound = tolerance * b.norm() / j.singular_values().min() + 1e-14 * reference.norm();
        // Preconditioned by J's diagonal only, then by J itself (one iteration).
        for (p, most) in [(DMat::from_diagonal(&j.diagonal()), n), (j.clone(), 1)] {
            let (x, info, products) = solve(&j, p, &b, tolerance, n);
            assert!(info.converged && info.iterations <= most, "{info:?}");
            assert_eq!(products, info.iterations);
            let error = (x - &reference).norm();
            assert!(error <= bound, "{error:e} against {bound:e}");
        }
    }

    #[test]
    fn the_reported_residual_is_the_true_one_when_stopped_early() {
        let n = 40;
        let j = nonsymmetric(n);
        let b = DVec::from_fn(n, |i, _| 1.0 + i as f64);
        let (x, info, _) = solve(&j, DMat::identity(n, n), &b, 0.0, 3);
        assert_eq!((info.iterations, info.converged), (3, false));
        let true_residual = (&b - &j * x).norm() / b.norm();
        assert!(
            (info.relative_residual - true_residual).abs() <= 1e-12,
            "{} against {true_residual}",
            info.relative_residual
        );
        assert!(info.relative_residual < 1.0);
    }

    #[test]
    fn a_zero_right_hand_side_gives_zero_at_once() {
        let n = 5;
        let mut op = Dense {
            j: nonsymmetric(n),
            p: DMat::identity(n, n).lu(),
            products: 0,
        };
        let mut x = vec![1.0; n];
        let info = gmres(
            &mut op,
            &[0.0; 5],
            &mut x,
            1e-10,
            5,
            &mut GmresWorkspace::default(),
        );
        assert_eq!((info.iterations, info.converged, op.products), (0, true, 0));
        assert_eq!(x, vec![0.0; 5]);
    }
}
