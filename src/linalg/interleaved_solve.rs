//! Solves with a supernodal factor for a few right-hand sides at once, stored interleaved:
//! row `i` of every column side by side, in vectors of the CPU's widest lanes, so that every
//! entry of `L` read from memory updates all the columns in a few vector operations.
//!
//! faer's supernodal solve goes supernode by supernode through a dense triangular solve and a
//! dense product per supernode, with the columns of the right-hand side apart. On the meshes
//! of this project most supernodes hold a few to a few dozen columns, where the set-up of
//! those dense kernels costs more than their arithmetic; here each supernode is one sweep
//! over its stored values (docs/speed.md, "Solves of a few columns, interleaved").
//!
//! Every lane (right-hand side) goes through the same operations in the same order whatever
//! the number of columns, whichever other columns share the sweep and whatever the
//! instruction set: products, sums and quotients of two values, never a fused multiply-add
//! (which Rust never forms unasked). So a column's solution has the same bits among two,
//! five or ten columns, and a solve split into halves on two threads gives the bits of one
//! call on one thread. One column alone still goes through faer, which is faster there.

use faer::dyn_stack::MemStack;
use faer::sparse::linalg::cholesky::SymbolicCholeskyRaw;

use super::cholesky::NumericFactor;
use super::factor_options::FactorKind;

/// The right-hand sides [`NumericFactor::solve_columns_in_place`] interleaves: from two (one
/// column through faer's dense kernels is faster than a vector of lanes mostly empty) to
/// sixteen (wider solves go through faer's dense kernels, whose blocking pays there).
pub const INTERLEAVED_COLUMNS: std::ops::RangeInclusive<usize> = 2..=16;

impl NumericFactor {
    /// Solves `A X = B` in place for `ncols` right-hand sides stored column-major in `rhs`
    /// (`n·ncols` entries, column `j` at `rhs[j·n..(j+1)·n]`).
    ///
    /// With the supernodal layout and a number of columns in [`INTERLEAVED_COLUMNS`], the
    /// columns are solved interleaved (module documentation): each column's solution then
    /// has the same bits whichever columns it is solved with, and those of any other call
    /// with a number of columns in that range. Otherwise faer solves them, each column after
    /// the permutation contiguous.
    ///
    /// Panics if the last factorisation failed or `rhs.len() != n·ncols`.
    pub fn solve_columns_in_place(&self, rhs: &mut [f64], ncols: usize, stack: &mut MemStack) {
        assert!(self.is_factorized(), "solve: no valid factorisation");
        let n = self.symbolic.n();
        assert_eq!(rhs.len(), n * ncols, "solve_columns: rhs length");
        let forward = self.symbolic.permuted.forward();
        let supernodal = matches!(
            self.symbolic.inner.raw(),
            SymbolicCholeskyRaw::Supernodal(_)
        );
        if supernodal && INTERLEAVED_COLUMNS.contains(&ncols) {
            pulp::Arch::new().dispatch(Interleaved {
                factor: self,
                rhs,
                ncols,
                stack,
            });
            return;
        }
        // As `solve_in_place`, with the permutation applied on contiguous columns.
        let (mut y, stack) = stack.make_with::<f64>(n * ncols, |_| 0.0);
        for (yj, col) in y.chunks_exact_mut(n).zip(rhs.chunks_exact(n)) {
            for (yi, &f) in yj.iter_mut().zip(forward) {
                *yi = col[f];
            }
        }
        self.solve_permuted(
            faer::MatMut::from_column_major_slice_mut(&mut y, n, ncols),
            stack,
        );
        for (yj, col) in y.chunks_exact(n).zip(rhs.chunks_exact_mut(n)) {
            for (yi, &f) in yj.iter().zip(forward) {
                col[f] = *yi;
            }
        }
    }
}

/// The interleaved solve of `ncols` columns of `rhs`, as an operation pulp runs compiled for
/// the CPU's widest vector instructions ([`pulp::Arch::dispatch`]).
struct Interleaved<'a> {
    factor: &'a NumericFactor,
    rhs: &'a mut [f64],
    ncols: usize,
    stack: &'a mut MemStack,
}

impl pulp::WithSimd for Interleaved<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, simd: S) {
        macro_rules! vectors {
            ($($b:literal)*) => {
                match self.ncols.div_ceil(S::F64_LANES) {
                    $($b => solve_rows::<S, $b>(simd, self.factor, self.rhs, self.ncols, self.stack),)*
                    _ => unreachable!("{} columns of {} lanes", self.ncols, S::F64_LANES),
                }
            };
        }
        vectors!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
    }
}

/// Gathers the `ncols` columns of `rhs` into rows of `B` vectors (permuted into elimination
/// order, zero lanes past `ncols`) on `stack`, solves, and scatters them back. `stack` holds
/// the rows and as many more as the longest supernode pattern
/// ([`NumericFactor::solve_scratch`]).
#[inline(always)]
fn solve_rows<S: pulp::Simd, const B: usize>(
    simd: S,
    factor: &NumericFactor,
    rhs: &mut [f64],
    ncols: usize,
    stack: &mut MemStack,
) {
    let n = factor.symbolic.n();
    let forward = factor.symbolic.permuted.forward();
    let stride = B * S::F64_LANES;
    let longest = factor.symbolic.longest_pattern;
    let (mut y, stack) = stack.make_with::<f64>(n * stride, |_| 0.0);
    let (mut tmp, _) = stack.make_with::<f64>(longest * stride, |_| 0.0);
    for (row, &f) in y.chunks_exact_mut(stride).zip(forward) {
        for (j, v) in row.iter_mut().take(ncols).enumerate() {
            *v = rhs[j * n + f];
        }
    }
    solve_vectors(
        simd,
        factor,
        S::as_mut_simd_f64s(&mut y).0.as_chunks_mut::<B>().0,
        S::as_mut_simd_f64s(&mut tmp).0.as_chunks_mut::<B>().0,
    );
    for (row, &f) in y.chunks_exact(stride).zip(forward) {
        for (j, v) in row.iter().take(ncols).enumerate() {
            rhs[j * n + f] = *v;
        }
    }
}

/// Solves `(P A Pᵀ) Y = B` in place for the right-hand sides in `y` (row `i` of every
/// column in `y[i]`, rows in elimination order), on a factorised supernodal factor:
/// `L Z = B` supernode by supernode, then `D` for `L D Lᵀ`, then `Lᵀ Y = Z` in reverse.
/// `tmp` holds at least as many rows as the longest supernode pattern.
///
/// faer stores supernode `q` column-major as `(c + p) × c` values (`c` columns, `p` rows of
/// its pattern below them): the diagonal block's lower triangle (`L`'s diagonal for
/// `L Lᵀ`, `D` on the diagonal and a unit `L` below it for `L D Lᵀ`) over the pattern's rows.
#[inline(always)]
fn solve_vectors<S: pulp::Simd, const B: usize>(
    simd: S,
    factor: &NumericFactor,
    y: &mut [[S::f64s; B]],
    tmp: &mut [[S::f64s; B]],
) {
    let SymbolicCholeskyRaw::Supernodal(s) = factor.symbolic.inner.raw() else {
        unreachable!("interleaved solves need the supernodal layout");
    };
    let unit = factor.kind() == FactorKind::Ldlt;
    let (begin, end) = (s.supernode_begin(), s.supernode_end());
    let (row_ptr, rows, val_ptr) = (s.col_ptr_for_row_idx(), s.row_idx(), s.col_ptr_for_val());
    let supernode = |q: usize| {
        let pattern = &rows[row_ptr[q]..row_ptr[q + 1]];
        (
            begin[q],
            end[q],
            pattern,
            &factor.values[val_ptr[q]..val_ptr[q + 1]],
        )
    };
    let zero = [simd.splat_f64s(0.0); B];
    // y − l x, w + l x and y / d, lane by lane.
    let sub_product = |y: &mut [S::f64s; B], l: f64, x: &[S::f64s; B]| {
        let l = simd.splat_f64s(l);
        for (y, x) in y.iter_mut().zip(x) {
            *y = simd.sub_f64s(*y, simd.mul_f64s(l, *x));
        }
    };
    let add_product = |w: &mut [S::f64s; B], l: f64, x: &[S::f64s; B]| {
        let l = simd.splat_f64s(l);
        for (w, x) in w.iter_mut().zip(x) {
            *w = simd.add_f64s(*w, simd.mul_f64s(l, *x));
        }
    };
    let divide = |y: &mut [S::f64s; B], d: f64| {
        let d = simd.splat_f64s(d);
        for y in y.iter_mut() {
            *y = simd.div_f64s(*y, d);
        }
    };
    // L Z = B: each column of the supernode is solved for, then carried into the rows below
    // it, within the block directly and into the pattern's rows through `tmp`.
    for q in 0..s.n_supernodes() {
        let (first, last, pattern, block) = supernode(q);
        let (nc, ld) = (last - first, last - first + pattern.len());
        let (head, tail) = y.split_at_mut(last);
        let top = &mut head[first..];
        let below = &mut tmp[..pattern.len()];
        below.fill(zero);
        for c in 0..nc {
            let column = &block[c * ld..(c + 1) * ld];
            if !unit {
                divide(&mut top[c], column[c]);
            }
            let (done, rest) = top.split_at_mut(c + 1);
            let xc = &done[c];
            for (yr, &l) in rest.iter_mut().zip(&column[c + 1..nc]) {
                sub_product(yr, l, xc);
            }
            for (w, &l) in below.iter_mut().zip(&column[nc..]) {
                add_product(w, l, xc);
            }
        }
        for (&r, w) in pattern.iter().zip(below.iter()) {
            for (y, w) in tail[r - last].iter_mut().zip(w) {
                *y = simd.sub_f64s(*y, *w);
            }
        }
    }
    if unit {
        for q in 0..s.n_supernodes() {
            let (first, last, pattern, block) = supernode(q);
            let ld = last - first + pattern.len();
            for (c, yc) in y[first..last].iter_mut().enumerate() {
                divide(yc, block[c * ld + c]);
            }
        }
    }
    // Lᵀ Y = Z: each column of the supernode, last first, takes the rows below it (the
    // pattern's, gathered into `tmp`, then the block's) out before its own solve.
    for q in (0..s.n_supernodes()).rev() {
        let (first, last, pattern, block) = supernode(q);
        let (nc, ld) = (last - first, last - first + pattern.len());
        let below = &mut tmp[..pattern.len()];
        for (w, &r) in below.iter_mut().zip(pattern) {
            *w = y[r];
        }
        let top = &mut y[first..last];
        for c in (0..nc).rev() {
            let column = &block[c * ld..(c + 1) * ld];
            let mut sum = zero;
            for (w, &l) in below.iter().zip(&column[nc..]) {
                add_product(&mut sum, l, w);
            }
            let (head, done) = top.split_at_mut(c + 1);
            for (yr, &l) in done.iter().zip(&column[c + 1..nc]) {
                add_product(&mut sum, l, yr);
            }
            let xc = &mut head[c];
            for (x, s) in xc.iter_mut().zip(&sum) {
                *x = simd.sub_f64s(*x, *s);
            }
            if !unit {
                divide(xc, column[c]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::FactorMethod;
    use crate::linalg::test_support::{free_grid_system, symbolic_with_layout, to_dense};
    use crate::math::{DVec, SplitMix64};
    use faer::dyn_stack::MemBuffer;

    /// Against nalgebra's dense Cholesky (a second method), `L Lᵀ` and `L D Lᵀ`, every
    /// interleaved width and one past it (faer's path), to 1e-12 relative per column; and
    /// each column's bits the same whichever interleaved call solves it: among 2, 5, 11 or
    /// 16 columns, and through pulp's scalar emulations of 1, 2, 4 and 8 lanes instead of the
    /// instruction set found at run time.
    #[test]
    fn interleaved_solves_match_dense_cholesky_with_the_same_bits_in_any_company() {
        let mut rng = SplitMix64::new(8);
        let (pattern, values) = free_grid_system([5, 4, 4], &mut rng);
        let n = pattern.n();
        let dense = to_dense(&pattern, &values).cholesky().expect("SPD");
        let most = *INTERLEAVED_COLUMNS.end();
        let b: Vec<f64> = (0..n * (most + 1)).map(|_| rng.uniform() - 0.5).collect();
        for kind in [FactorKind::Llt, FactorKind::Ldlt] {
            let symbolic = symbolic_with_layout(&pattern, FactorMethod::Supernodal);
            assert!(symbolic.is_supernodal());
            let mut factor = NumericFactor::new(symbolic, kind);
            factor.factorize(&pattern, &values).unwrap();
            let mut buffer = MemBuffer::new(factor.solve_scratch(most + 1));
            let solved = |k: usize, buffer: &mut MemBuffer| {
                let mut x = b[..n * k].to_vec();
                factor.solve_columns_in_place(&mut x, k, MemStack::new(buffer));
                x
            };
            for k in 1..=most + 1 {
                let x = solved(k, &mut buffer);
                for j in 0..k {
                    let expected = dense.solve(&DVec::from_column_slice(&b[j * n..(j + 1) * n]));
                    let got = DVec::from_column_slice(&x[j * n..(j + 1) * n]);
                    let error = (&got - &expected).norm() / expected.norm();
                    assert!(
                        error < 1e-12,
                        "{kind:?}, {k} columns, column {j}: {error:e}"
                    );
                }
            }
            let sixteen = solved(most, &mut buffer);
            for k in [2, 5, 11] {
                assert_eq!(
                    solved(k, &mut buffer),
                    sixteen[..n * k],
                    "{kind:?}, {k} columns"
                );
            }
            let mut emulated = |simd: &dyn Fn(Interleaved<'_>)| {
                let mut x = b[..n * 5].to_vec();
                simd(Interleaved {
                    factor: &factor,
                    rhs: &mut x,
                    ncols: 5,
                    stack: MemStack::new(&mut buffer),
                });
                x
            };
            use pulp::WithSimd;
            let lanes: [&dyn Fn(Interleaved<'_>); 4] = [
                &|op| op.with_simd(pulp::Scalar::new()),
                &|op| op.with_simd(pulp::Scalar128b),
                &|op| op.with_simd(pulp::Scalar256b),
                &|op| op.with_simd(pulp::Scalar512b),
            ];
            for (i, simd) in lanes.into_iter().enumerate() {
                assert_eq!(emulated(simd), sixteen[..n * 5], "{kind:?}, emulation {i}");
            }
        }
    }
}
