//! Product of a symmetric matrix stored as its lower triangle ([`SymmetricPattern`]) with a
//! vector: `y = A x`, `y += α A x` and `y += (α A + β B) x`.
//!
//! Row `i` of `A` is column `i` of the stored lower triangle (entries `(r, i)`, `r ≥ i`) plus
//! the strictly lower row `i` (entries `(i, j)`, `j < i`), which the pattern keeps as a
//! row-wise index list. Every `y[i]` is thus a gather in a fixed order: the loop runs in
//! parallel (rayon) and gives bit-identical results for any thread count.

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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{DMat, DVec};

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
        let mut dense = DMat::zeros(p.n(), p.n());
        for c in 0..p.n() {
            let column = p.col_ptr()[c]..p.col_ptr()[c + 1];
            for (&r, &value) in p.row_idx()[column.clone()].iter().zip(&values[column]) {
                dense[(r, c)] = value;
                dense[(c, r)] = value;
            }
        }
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
}
