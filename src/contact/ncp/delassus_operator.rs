//! The Delassus matrix `G` ((m/s)/N, 3n×3n, symmetric positive semi-definite) as the ADMM
//! solver sees it: a product `G x` and a shifted solve `(G + c I)⁻¹ r` (docs/step.md).
//!
//! Two implementations: [`DenseDelassus`], the assembled matrix with a dense LLᵀ factor of
//! `G + c I` (what every solver can use, cheap for tens of contacts), and
//! [`crate::contact::FactoredDelassus`], one soft body's `G = h H A⁻¹ Hᵀ` never formed, applied through
//! the sparse factor of `A` and shift-solved by the Woodbury identity (for hundreds and
//! thousands of contacts).

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{
    LltRegularization, cholesky_in_place, cholesky_in_place_scratch,
};
use faer::linalg::cholesky::llt::solve::solve_in_place_with_conj;
use faer::{Accum, Conj, MatMut, MatRef, Par, Spec};

use crate::error::{Error, Result};
use crate::math::DMat;

/// What an NCP solver needs of the Delassus matrix `G` of a contact problem.
pub trait DelassusOperator {
    /// Number of rows of `G` (3 per contact).
    fn dim(&self) -> usize;

    /// `out = G x` ((m/s) from N). Panics on wrong lengths.
    fn apply(&mut self, x: &[f64], out: &mut [f64]);

    /// `sigma = G x + g` (m/s), the contact velocity of forces `x`. Panics on wrong lengths.
    fn velocity(&mut self, g: &[f64], x: &[f64], sigma: &mut [f64]) {
        self.apply(x, sigma);
        for (s, gi) in sigma.iter_mut().zip(g) {
            *s += gi;
        }
    }

    /// Prepares [`solve_shifted`](Self::solve_shifted) for `G + shift·I` (`shift > 0`,
    /// (m/s)/N). Errors when the shifted matrix cannot be factorised (`G` not positive
    /// semi-definite).
    fn factorize_shifted(&mut self, shift: f64) -> Result<()>;

    /// `rhs ← (G + shift·I)⁻¹ rhs` for the shift of the last
    /// [`factorize_shifted`](Self::factorize_shifted). Panics if none succeeded.
    fn solve_shifted(&mut self, rhs: &mut [f64]);

    /// `G` itself when it is assembled (what polishing an iterate on its contact modes
    /// reads, `super::polish`); `None` for an operator that never forms it.
    fn assembled(&self) -> Option<&DMat> {
        None
    }

    /// Prepares [`solve_projected`](Self::solve_projected) for the projected system
    /// `E G Eᵀ + diag(shifts)` ((m/s)/N, r × r), where row `k` of `E` (r × 3n) is
    /// `rows[k].direction` placed on contact `rows[k].contact`'s three rows, and every shift
    /// is positive. What polishing an iterate on its cones' faces without an assembled `G`
    /// preconditions its Newton steps with (`super::polish_krylov`).
    ///
    /// `Ok(false)` when the operator has no such solve (the default; a dense `G` polishes
    /// by LU instead). Errors on a contact index out of range, lengths that differ, a shift
    /// that is not positive, or a matrix that cannot be factorised.
    fn factorize_projected(&mut self, rows: &[ProjectedRow], shifts: &[f64]) -> Result<bool> {
        let _ = (rows, shifts);
        Ok(false)
    }

    /// `rhs ← (E G Eᵀ + diag(shifts))⁻¹ rhs` (N from m/s) for the last successful
    /// [`factorize_projected`](Self::factorize_projected). Panics if there was none.
    fn solve_projected(&mut self, rhs: &mut [f64]) {
        let _ = rhs;
        panic!("solve_projected: this Delassus operator has no projected solve");
    }
}

/// One row of a projected Delassus system ([`DelassusOperator::factorize_projected`]):
/// contact `contact`'s three rows of `H` (tangential, tangential, normal) weighted by
/// `direction`, a unit vector in the contact's frame (e.g. `(0, 0, 1)`, its normal row).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProjectedRow {
    /// Index of the contact.
    pub contact: usize,
    /// Weights of its three rows (unit norm).
    pub direction: [f64; 3],
}

/// The dense LLᵀ factor of `G + c I` and its workspace, kept by a solver between problems
/// (sized on first use, reused while the problem size does not change).
#[derive(Default)]
pub struct DenseShiftedFactor {
    /// Column-major factor (lower triangle used).
    factor: Vec<f64>,
    stack: Option<MemBuffer>,
    dim: usize,
    factorized: bool,
}

impl std::fmt::Debug for DenseShiftedFactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DenseShiftedFactor")
            .field("dim", &self.dim)
            .finish()
    }
}

/// An assembled Delassus matrix with the buffers of its shifted factor.
pub struct DenseDelassus<'a> {
    g: &'a DMat,
    shifted: &'a mut DenseShiftedFactor,
}

impl<'a> DenseDelassus<'a> {
    /// `G` (square, column-major `DMat`) with `shifted` as the factor's storage.
    pub fn new(g: &'a DMat, shifted: &'a mut DenseShiftedFactor) -> DenseDelassus<'a> {
        assert_eq!(g.nrows(), g.ncols(), "DenseDelassus: G must be square");
        let m = g.nrows();
        if shifted.dim != m || shifted.stack.is_none() {
            shifted.factor.resize(m * m, 0.0);
            shifted.stack = Some(MemBuffer::new(cholesky_in_place_scratch::<f64>(
                m,
                Par::Seq,
                Spec::default(),
            )));
            shifted.dim = m;
        }
        shifted.factorized = false;
        DenseDelassus { g, shifted }
    }
}

/// `out += G x` for a square column-major `g`: faer's matrix–vector product when a quarter
/// or more of `x` is non-zero, otherwise the columns of the non-zero entries alone (most
/// forces of a problem with many open contacts are zero). Panics on wrong lengths.
pub(crate) fn add_product(g: &DMat, x: &[f64], out: &mut [f64]) {
    let m = g.nrows();
    assert!(
        g.ncols() == m && x.len() == m && out.len() == m,
        "add_product: lengths"
    );
    let non_zero = x.iter().filter(|&&v| v != 0.0).count();
    if 4 * non_zero >= m {
        faer::linalg::matmul::matmul(
            MatMut::from_column_major_slice_mut(out, m, 1),
            Accum::Add,
            MatRef::from_column_major_slice(g.as_slice(), m, m),
            MatRef::from_column_major_slice(x, m, 1),
            1.0,
            Par::Seq,
        );
        return;
    }
    let g = g.as_slice();
    for (j, &xj) in x.iter().enumerate() {
        if xj != 0.0 {
            for (o, gij) in out.iter_mut().zip(&g[j * m..(j + 1) * m]) {
                *o += gij * xj;
            }
        }
    }
}

/// `sigma = G λ + g` (m/s) for an assembled column-major `G` ([`add_product`]). Panics on
/// wrong lengths.
pub(crate) fn dense_velocity(delassus: &DMat, g: &[f64], lambda: &[f64], sigma: &mut [f64]) {
    sigma.copy_from_slice(g);
    add_product(delassus, lambda, sigma);
}

impl DelassusOperator for DenseDelassus<'_> {
    fn dim(&self) -> usize {
        self.g.nrows()
    }

    fn apply(&mut self, x: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        add_product(self.g, x, out);
    }

    fn velocity(&mut self, g: &[f64], x: &[f64], sigma: &mut [f64]) {
        dense_velocity(self.g, g, x, sigma);
    }

    fn factorize_shifted(&mut self, shift: f64) -> Result<()> {
        let m = self.dim();
        let s = &mut *self.shifted;
        s.factorized = false;
        s.factor.copy_from_slice(self.g.as_slice());
        for i in 0..m {
            s.factor[i * m + i] += shift;
        }
        let stack = MemStack::new(s.stack.as_mut().expect("sized by new"));
        cholesky_in_place(
            MatMut::from_column_major_slice_mut(&mut s.factor, m, m),
            LltRegularization::default(),
            Par::Seq,
            stack,
            Spec::default(),
        )
        .map_err(|e| {
            Error::invalid(
                "Delassus matrix",
                format!(
                    "G + {shift:e}·I cannot be factorised ({e:?}): G is not positive semi-definite"
                ),
            )
        })?;
        s.factorized = true;
        Ok(())
    }

    fn assembled(&self) -> Option<&DMat> {
        Some(self.g)
    }

    fn solve_shifted(&mut self, rhs: &mut [f64]) {
        let m = self.dim();
        assert!(
            self.shifted.factorized,
            "solve_shifted: no valid factorisation"
        );
        assert_eq!(rhs.len(), m, "DenseDelassus::solve_shifted: length");
        solve_in_place_with_conj(
            MatRef::from_column_major_slice(&self.shifted.factor, m, m),
            Conj::No,
            MatMut::from_column_major_slice_mut(rhs, m, 1),
            Par::Seq,
            MemStack::new(&mut []),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{DVec, SplitMix64};

    /// `out += G x` by both of its paths (faer's product for a vector mostly non-zero, the
    /// non-zero columns for a sparse one) against nalgebra's product, to 1e-14 relative.
    #[test]
    fn add_product_is_the_matrix_vector_product() {
        let mut rng = SplitMix64::new(17);
        let m = 45;
        let g = DMat::from_fn(m, m, |_, _| rng.uniform());
        for non_zero in [m, m / 4 + 1, 3, 0] {
            let x = DVec::from_fn(m, |i, _| if i < non_zero { rng.uniform() } else { 0.0 });
            let start = DVec::from_fn(m, |_, _| rng.uniform());
            let mut out = start.clone();
            add_product(&g, x.as_slice(), out.as_mut_slice());
            let expected = &start + &g * &x;
            let error = (&out - &expected).amax();
            assert!(
                error <= 1e-14 * expected.amax(),
                "{non_zero} non-zero: {error:e}"
            );
        }
    }
}
