//! Product of a symmetric matrix stored as its lower triangle ([`SymmetricPattern`]) with a
//! vector: `y = A x`, `y += α A x` and `y += (α A + β B) x`.
//!
//! Row `i` of `A` is column `i` of the stored lower triangle (entries `(r, i)`, `r ≥ i`) plus
//! the strictly lower row `i` (entries `(i, j)`, `j < i`), which the pattern keeps as a
//! row-wise index list. Every `y[i]` is thus a sum in a fixed order: the strictly lower row
//! (columns increasing), then column `i` (rows increasing).
//!
//! With several threads each row gathers its sum (rows in parallel, rayon). On one thread a
//! single pass over the columns forms the same sums: column `j` finishes `y[j]` and adds its
//! strictly lower entries to the partial sums of their rows, which columns visit in increasing
//! order. Every value is then read once, in storage order, instead of twice (once through the
//! row-wise index), and the results are the same bits for any thread count.

use super::pattern::SymmetricPattern;
use rayon::prelude::*;

/// Rows handled per rayon task.
const CHUNK: usize = 2048;

impl SymmetricPattern {
    /// `y = A x` for the symmetric reduced matrix `A` with stored lower-triangle `values`.
    ///
    /// Panics if `values.len() != nnz()` or `x`, `y` do not have `n()` entries.
    pub fn symmetric_product(&self, values: &[f64], x: &[f64], y: &mut [f64]) {
        self.product_impl(values, 1.0, x, y, false);
    }

    /// `y += alpha·A x` for the symmetric reduced matrix `A` with stored lower-triangle
    /// `values`.
    ///
    /// Panics if `values.len() != nnz()` or `x`, `y` do not have `n()` entries.
    pub fn symmetric_product_add(&self, values: &[f64], alpha: f64, x: &[f64], y: &mut [f64]) {
        self.product_impl(values, alpha, x, y, true);
    }

    /// `y += (alpha·A + beta·B) x` for two symmetric reduced matrices on this pattern with
    /// stored lower-triangle values `a` and `b` (e.g. the mass and stiffness terms of the
    /// step's right-hand side): one pass over the pattern instead of two.
    ///
    /// Panics if `a` or `b` do not have `nnz()` values or `x`, `y` do not have `n()` entries.
    pub fn symmetric_product_add_pair(
        &self,
        a: &[f64],
        alpha: f64,
        b: &[f64],
        beta: f64,
        x: &[f64],
        y: &mut [f64],
    ) {
        let n = self.n();
        assert_eq!(a.len(), self.nnz(), "symmetric product: values length");
        assert_eq!(b.len(), self.nnz(), "symmetric product: values length");
        assert_eq!(x.len(), n, "symmetric product: x length");
        assert_eq!(y.len(), n, "symmetric product: y length");
        self.rows_in_parallel(|v| alpha * a[v] + beta * b[v], x, y, |yi, s| *yi += s);
    }

    fn product_impl(&self, values: &[f64], alpha: f64, x: &[f64], y: &mut [f64], accumulate: bool) {
        let n = self.n();
        assert_eq!(values.len(), self.nnz(), "symmetric product: values length");
        assert_eq!(x.len(), n, "symmetric product: x length");
        assert_eq!(y.len(), n, "symmetric product: y length");
        if accumulate {
            self.rows_in_parallel(|v| values[v], x, y, |yi, s| *yi += alpha * s);
        } else {
            self.rows_in_parallel(|v| values[v], x, y, |yi, s| *yi = s);
        }
    }

    /// For every row i, `out(&mut y[i], Σ_v value(v)·x[col(v)])` over the stored entries v
    /// of row i of the symmetric matrix, rows in parallel, each sum in a fixed order.
    fn rows_in_parallel(
        &self,
        value: impl Fn(usize) -> f64 + Sync,
        x: &[f64],
        y: &mut [f64],
        out: impl Fn(&mut f64, f64) + Sync,
    ) {
        if rayon::current_num_threads() == 1 {
            self.columns_in_one_pass(value, x, y, out);
            return;
        }
        let row_of = |i: usize| -> f64 {
            let mut sum = 0.0;
            for k in self.row_ptr[i]..self.row_ptr[i + 1] {
                sum += value(self.row_val[k]) * x[self.row_col[k]];
            }
            for v in self.col_ptr[i]..self.col_ptr[i + 1] {
                sum += value(v) * x[self.row_idx[v]];
            }
            sum
        };
        y.par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(chunk, chunk_out)| {
                let first = chunk * CHUNK;
                for (k, yi) in chunk_out.iter_mut().enumerate() {
                    out(yi, row_of(first + k));
                }
            });
    }

    /// The sums of [`Self::rows_in_parallel`] in one pass over the columns, on this thread:
    /// `partial[r]` collects row r's strictly lower entries as the columns j < r go by (the
    /// order of the row-wise index), and column r then adds its own entries to it (the order
    /// of the gather). Each sum is thus formed by the same operations in the same order.
    fn columns_in_one_pass(
        &self,
        value: impl Fn(usize) -> f64,
        x: &[f64],
        y: &mut [f64],
        out: impl Fn(&mut f64, f64),
    ) {
        let mut partial = vec![0.0; self.n()];
        for (j, yj) in y.iter_mut().enumerate() {
            let xj = x[j];
            let column = self.col_ptr[j]..self.col_ptr[j + 1];
            // The diagonal, stored first in its column.
            let mut sum = partial[j] + value(column.start) * xj;
            let strictly_lower = column.start + 1..column.end;
            for (v, &r) in strictly_lower.clone().zip(&self.row_idx[strictly_lower]) {
                let a = value(v);
                sum += a * x[r];
                partial[r] += a * xj;
            }
            out(yj, sum);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::test_support::{on_threads, to_dense};
    use crate::math::DVec;

    #[test]
    fn symmetric_product_equals_dense_product() {
        // A chain of tetrahedra with a few removed DOFs; values from a closed-form formula.
        let n_nodes = 1500;
        let cl: Vec<[usize; 4]> = (0..n_nodes - 3).map(|i| [i, i + 1, i + 2, i + 3]).collect();
        let removed: Vec<bool> = (0..n_nodes * 3).map(|d| d % 11 == 4).collect();
        let p = SymmetricPattern::new(n_nodes, 3, &cl, &removed).unwrap();
        let values: Vec<f64> = (0..p.nnz())
            .map(|v| ((v * 37 % 101) as f64 - 50.0) / 7.0)
            .collect();
        let dense = to_dense(&p, &values);
        let x = DVec::from_fn(p.n(), |i, _| ((i * 13 % 29) as f64 - 14.0) / 3.0);
        let reference = &dense * &x;
        let mut y = vec![0.0; p.n()];
        p.symmetric_product(&values, x.as_slice(), &mut y);
        let err = (DVec::from_column_slice(&y) - &reference).norm();
        assert!(err <= 1e-13 * reference.norm(), "error {err}");
        // y += α A x starting from y = A x gives (1 + α) A x.
        p.symmetric_product_add(&values, -0.25, x.as_slice(), &mut y);
        let err = (DVec::from_column_slice(&y) - &reference * 0.75).norm();
        assert!(err <= 1e-13 * reference.norm(), "error {err}");
        // The pair form: y += (0.5 A − 2 A) x gives (0.75 − 1.5) A x.
        let doubled: Vec<f64> = values.iter().map(|v| 2.0 * v).collect();
        p.symmetric_product_add_pair(&values, 0.5, &doubled, -1.0, x.as_slice(), &mut y);
        let err = (DVec::from_column_slice(&y) - &reference * -0.75).norm();
        assert!(err <= 1e-13 * reference.norm(), "error {err}");
    }

    #[test]
    fn one_thread_and_two_give_the_same_bits() {
        // One thread forms every row's sum in a pass over the columns, two gather each row:
        // the same operations in the same order, so the same bits, for all three products.
        // Values of mixed signs and magnitudes (and a negative zero on the diagonal), so that
        // any change in the order of the sums shows in the last bits.
        let n_nodes = 700;
        let cl: Vec<[usize; 4]> = (0..n_nodes - 7).map(|i| [i, i + 2, i + 5, i + 7]).collect();
        let removed: Vec<bool> = (0..n_nodes * 3).map(|d| d % 13 == 6).collect();
        let p = SymmetricPattern::new(n_nodes, 3, &cl, &removed).unwrap();
        let mut rng = crate::math::SplitMix64::new(7);
        let mut random = |len: usize| -> Vec<f64> {
            (0..len)
                .map(|_| rng.uniform() * 10f64.powi((rng.uniform() * 6.0) as i32))
                .collect()
        };
        let mut a = random(p.nnz());
        a[p.diagonal_index(3)] = -0.0;
        let b = random(p.nnz());
        let x = random(p.n());
        let y0 = random(p.n());
        let run = |threads: usize| {
            on_threads(threads, || {
                let mut y = vec![0.0; p.n()];
                p.symmetric_product(&a, &x, &mut y);
                let mut added = y0.clone();
                p.symmetric_product_add(&a, -0.3, &x, &mut added);
                let mut pair = y0.clone();
                p.symmetric_product_add_pair(&a, 1.7, &b, -2.1, &x, &mut pair);
                [y, added, pair].concat()
            })
        };
        let one = run(1);
        let two = run(2);
        let differing = one
            .iter()
            .zip(&two)
            .filter(|(u, v)| u.to_bits() != v.to_bits())
            .count();
        assert_eq!(differing, 0, "{differing} of {} values differ", one.len());
        // And both are the product: the one-thread sums against the dense matrix.
        let reference = to_dense(&p, &a) * DVec::from_column_slice(&x);
        let err = (DVec::from_column_slice(&one[..p.n()]) - &reference).norm();
        assert!(err <= 1e-13 * reference.norm(), "error {err}");
    }
}
