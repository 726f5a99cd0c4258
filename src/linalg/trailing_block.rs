//! The trailing block of a factor whose ordering eliminates some DOFs last
//! ([`FactorOrdering::AmdWithLast`](super::FactorOrdering::AmdWithLast)).
//!
//! With the DOFs `t` eliminated after all the others, `P A Pᵀ = L Lᵀ` splits as
//!
//! ```text
//! L = [ L_oo   0   ]        L_tt L_ttᵀ = S = A_tt − A_to A_oo⁻¹ A_ot
//!     [ L_to  L_tt ]
//! ```
//!
//! so `L_tt` is the Cholesky factor of the Schur complement of `A` on `t`, and for right-hand
//! sides `B` that vanish outside `t`, `Bᵀ A⁻¹ B = (L_tt⁻¹ B_t)ᵀ (L_tt⁻¹ B_t)` costs a dense
//! triangular solve of the block's size instead of two sparse substitutions through all of
//! `L` per column. The Delassus columns of attached nodes are such right-hand sides
//! (`contact::assemble_delassus`). A dense block, not an inverse: `(A⁻¹)_tt` is never formed.

use super::cholesky::NumericFactor;
use super::factor_options::FactorKind;
use faer::dyn_stack::MemStack;
use faer::sparse::SparseColMatRef;
use faer::sparse::linalg::cholesky::SymbolicCholeskyRaw;
use faer::sparse::linalg::cholesky::supernodal::SupernodalLltRef;
use faer::sparse::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::{Conj, MatMut, Par};

impl NumericFactor {
    /// The forward half of a solve, in place: `Y = L⁻¹ B` for the `k` right-hand sides `B`
    /// already in elimination order (`rhs`: n × k column-major, row `i` the DOF eliminated at
    /// step `i`, [`SymbolicFactor::step_of_dof`](super::SymbolicFactor::step_of_dof)), so that
    /// `B₁ᵀ A⁻¹ B₂ = Y₁ᵀ Y₂` (`P A Pᵀ = L Lᵀ`). `stack` as for
    /// [`solve_in_place`](Self::solve_in_place) with `k` columns.
    ///
    /// `false`, and `rhs` untouched, unless the factor is an `L Lᵀ` and factorised (either
    /// layout: faer's supernodal `l_solve`, or for the simplicial one the sparse lower
    /// triangular solve its own solve begins with). Panics if `rhs.len() != n·k`.
    pub fn forward_solve_permuted(&self, rhs: &mut [f64], k: usize, stack: &mut MemStack) -> bool {
        let n = self.symbolic.n();
        assert_eq!(rhs.len(), n * k, "forward_solve_permuted: rhs length");
        if !self.is_factorized() || self.kind() != FactorKind::Llt {
            return false;
        }
        let rhs = MatMut::from_column_major_slice_mut(rhs, n, k);
        match self.symbolic.inner.raw() {
            SymbolicCholeskyRaw::Supernodal(s) => SupernodalLltRef::new(s, &self.values)
                .l_solve_with_conj(Conj::No, rhs, Par::Seq, stack),
            SymbolicCholeskyRaw::Simplicial(s) => solve_lower_triangular_in_place(
                SparseColMatRef::new(s.factor(), &self.values),
                Conj::No,
                rhs,
                Par::Seq,
            ),
        }
        true
    }

    /// The trailing block `L_tt` of an `L Lᵀ` factor (module doc): its size `m = n − t₀`
    /// (`t₀` = [`SymbolicFactor::tail_start`](super::SymbolicFactor::tail_start)), with `out`
    /// resized to `m × m` column-major, `L_tt` in its lower triangle and zeros above.
    ///
    /// `None`, and `out` untouched, when there is no trailing block, the factor is not
    /// factorised, is `L D Lᵀ`, or has the simplicial layout (callers then solve through all
    /// of `L`).
    pub fn trailing_factor(&self, out: &mut Vec<f64>) -> Option<usize> {
        let symbolic = &self.symbolic;
        let (n, t0) = (symbolic.n(), symbolic.tail_start());
        if t0 >= n || !self.is_factorized() || self.kind() != FactorKind::Llt {
            return None;
        }
        let SymbolicCholeskyRaw::Supernodal(s) = symbolic.inner.raw() else {
            return None;
        };
        let m = n - t0;
        out.clear();
        out.resize(m * m, 0.0);
        let (begin, end) = (s.supernode_begin(), s.supernode_end());
        let (row_ptr, rows, val_ptr) = (s.col_ptr_for_row_idx(), s.row_idx(), s.col_ptr_for_val());
        for k in 0..s.n_supernodes() {
            if end[k] <= t0 {
                continue;
            }
            let ncols = end[k] - begin[k];
            let pattern = &rows[row_ptr[k]..row_ptr[k + 1]];
            let nrows = ncols + pattern.len();
            let block = &self.values[val_ptr[k]..val_ptr[k + 1]];
            // Rows of the block: its own columns' diagonal block, then its pattern (all
            // below it); the diagonal block's upper triangle is not part of L.
            let row_of = |i: usize| {
                if i < ncols {
                    begin[k] + i
                } else {
                    pattern[i - ncols]
                }
            };
            for j in t0.max(begin[k]) - begin[k]..ncols {
                let c = begin[k] + j - t0;
                for i in j..nrows {
                    out[(row_of(i) - t0) + c * m] = block[i + j * nrows];
                }
            }
        }
        Some(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::test_support::{free_grid_system, symbolic_with_layout, to_dense};
    use crate::linalg::{FactorOrdering, SymbolicFactor, SymbolicOptions};
    use crate::math::{DMat, SplitMix64};
    use std::sync::Arc;

    /// The trailing block against a second method: the dense Cholesky factor of the Schur
    /// complement `A_tt − A_to A_oo⁻¹ A_ot`, formed with nalgebra from the dense `A`.
    #[test]
    fn the_trailing_block_is_the_cholesky_factor_of_the_schur_complement() {
        let mut rng = SplitMix64::new(7);
        let (pattern, values) = free_grid_system([3, 3, 2], &mut rng);
        let n = pattern.n();
        // A face's worth of DOFs, not contiguous.
        let last: Vec<usize> = (0..n).filter(|r| r % 7 == 3 || r % 11 == 5).rev().collect();
        let symbolic = SymbolicFactor::with_options(
            &pattern,
            SymbolicOptions {
                ordering: FactorOrdering::AmdWithLast(&last),
                ..Default::default()
            },
        )
        .unwrap();
        assert!(symbolic.is_supernodal());
        let t0 = symbolic.tail_start();
        assert!(t0 <= n - last.len(), "every listed DOF is in the block");
        for &r in &last {
            assert!(symbolic.step_of_dof(r) >= t0);
        }
        let symbolic = Arc::new(symbolic);
        let mut factor = NumericFactor::new(symbolic.clone(), FactorKind::Llt);
        factor.factorize(&pattern, &values).unwrap();
        let mut block = Vec::new();
        let m = factor
            .trailing_factor(&mut block)
            .expect("a trailing block");
        assert_eq!(m, n - t0);
        // The block's DOFs and the others, in elimination order.
        let mut by_step = vec![0; n];
        for r in 0..n {
            by_step[symbolic.step_of_dof(r)] = r;
        }
        let (others, tail) = by_step.split_at(t0);
        let a = to_dense(&pattern, &values);
        let sub = |rows: &[usize], cols: &[usize]| {
            DMat::from_fn(rows.len(), cols.len(), |i, j| a[(rows[i], cols[j])])
        };
        let a_oo = sub(others, others).cholesky().expect("SPD");
        let s = sub(tail, tail) - sub(tail, others) * a_oo.solve(&sub(others, tail));
        let expected = s.cholesky().expect("SPD").l();
        let got = DMat::from_column_slice(m, m, &block);
        let error = (&got - &expected).amax() / expected.amax();
        assert!(error < 1e-12, "relative error {error:.1e}");
        // No block without the ordering, nor for L D Lᵀ.
        let plain = Arc::new(SymbolicFactor::new(&pattern).unwrap());
        let mut f = NumericFactor::new(plain, FactorKind::Llt);
        f.factorize(&pattern, &values).unwrap();
        assert_eq!(f.trailing_factor(&mut block), None);
        let mut f = NumericFactor::new(symbolic, FactorKind::Ldlt);
        f.factorize(&pattern, &values).unwrap();
        assert_eq!(f.trailing_factor(&mut block), None);
    }

    /// The forward half of a solve in either layout: `YᵀY = Bᵀ A⁻¹ B` for `Y = L⁻¹ P B`
    /// against nalgebra's dense Cholesky of the dense `A` (a second method); none for `L D Lᵀ`.
    #[test]
    fn the_forward_half_gives_b_transpose_a_inverse_b_in_both_layouts() {
        use crate::linalg::FactorMethod;
        let mut rng = SplitMix64::new(13);
        let (pattern, values) = free_grid_system([3, 3, 2], &mut rng);
        let n = pattern.n();
        let k = 4;
        let b = DMat::from_fn(n, k, |_, _| rng.uniform() - 0.5);
        let a = to_dense(&pattern, &values);
        let expected = b.transpose() * a.cholesky().expect("SPD").solve(&b);
        for method in [FactorMethod::Simplicial, FactorMethod::Supernodal] {
            let symbolic = symbolic_with_layout(&pattern, method);
            assert_eq!(symbolic.is_supernodal(), method == FactorMethod::Supernodal);
            let mut factor = NumericFactor::new(symbolic.clone(), FactorKind::Llt);
            factor.factorize(&pattern, &values).unwrap();
            let mut y = vec![0.0; n * k];
            for j in 0..k {
                for r in 0..n {
                    y[j * n + symbolic.step_of_dof(r)] = b[(r, j)];
                }
            }
            let mut buffer = faer::dyn_stack::MemBuffer::new(factor.solve_scratch(k));
            let stack = MemStack::new(&mut buffer);
            assert!(factor.forward_solve_permuted(&mut y, k, stack));
            let y = DMat::from_column_slice(n, k, &y);
            let got = y.transpose() * &y;
            let error = (&got - &expected).amax() / expected.amax();
            assert!(error < 1e-12, "{method:?}: relative error {error:.1e}");
            let mut f = NumericFactor::new(symbolic, FactorKind::Ldlt);
            f.factorize(&pattern, &values).unwrap();
            let mut y = vec![0.0; n * k];
            let stack = MemStack::new(&mut buffer);
            assert!(
                !f.forward_solve_permuted(&mut y, k, stack),
                "{method:?}: L D Lᵀ"
            );
        }
    }
}
