//! The forward half of a solve, `Y = L⁻¹ B`, for sparse right-hand sides: each column of `B`
//! is carried only through the supernodes its solution can be non-zero in, the union of the
//! paths from its non-zero rows' supernodes to the root of the supernodal elimination tree
//! (the reach of Gilbert and Peierl; Davis, "Direct Methods for Sparse Linear Systems", §3.2,
//! by supernodes). A contact row of `H_c` reads the three DOFs of one node, or the nine of a
//! triangle's, so its column of `B = P H_cᵀ` starts with a few non-zeros and its reach skips
//! most of the factor's leaves: on box meshes with a face in contact, 26–44 % of the dense
//! right-hand sides' flops. `contact::assemble_delassus` uses it for `G = h YᵀY`, telling it
//! each column's rows (`forward_solve_reach_supported`) rather than having them scanned for.

use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::sparse::linalg::cholesky::SymbolicCholeskyRaw;
use faer::{Accum, MatMut, MatRef, Par};

use faer::sparse::linalg::cholesky::SymbolicCholesky;

use super::cholesky::NumericFactor;
use super::factor_options::FactorKind;

/// The supernodal elimination tree of a symbolic analysis, built with it
/// (`SymbolicFactor::supernode_tree`): a supernode's parent holds the first row of its
/// pattern below it.
#[derive(Debug)]
pub(super) struct SupernodeTree {
    /// The supernode of each elimination step.
    supernode_of: Vec<usize>,
    /// Each supernode's parent (`usize::MAX`: a root).
    parent: Vec<usize>,
}

impl SupernodeTree {
    /// The tree of faer's analysis `inner`; `None` for the simplicial layout.
    pub(super) fn of(inner: &SymbolicCholesky<usize>) -> Option<SupernodeTree> {
        let SymbolicCholeskyRaw::Supernodal(s) = inner.raw() else {
            return None;
        };
        let (begin, end) = (s.supernode_begin(), s.supernode_end());
        let (row_ptr, rows) = (s.col_ptr_for_row_idx(), s.row_idx());
        let mut supernode_of = vec![0; s.nrows()];
        for q in 0..s.n_supernodes() {
            supernode_of[begin[q]..end[q]].fill(q);
        }
        let parent = (0..s.n_supernodes())
            .map(|q| {
                rows[row_ptr[q]..row_ptr[q + 1]]
                    .first()
                    .map_or(usize::MAX, |&r| supernode_of[r])
            })
            .collect();
        Some(SupernodeTree {
            supernode_of,
            parent,
        })
    }
}

/// Reusable buffers of [`NumericFactor::forward_solve_reach`] (grown on demand, never shrunk).
#[derive(Debug, Default)]
pub struct ForwardReach {
    /// Per supernode: the columns whose reach contains it (start offsets into `columns`),
    /// and the next free place while filling them.
    start: Vec<usize>,
    next: Vec<usize>,
    columns: Vec<usize>,
    /// Per column: the last supernode marked, while walking its paths.
    mark: Vec<usize>,
    /// (supernode, column) pairs of the reaches, before sorting by supernode.
    pairs: Vec<(usize, usize)>,
    /// Dense gathers: the supernode's rows of its active columns, and their update below it.
    x: Vec<f64>,
    w: Vec<f64>,
}

impl NumericFactor {
    /// `Y = L⁻¹ B` in place for the `k` right-hand sides `rhs` (n × k column-major, rows in
    /// elimination order), as [`forward_solve_permuted`](Self::forward_solve_permuted) gives,
    /// each column carried through its reach only (module doc), found from the column's
    /// non-zero entries. `false`, and `rhs` untouched, unless the factor is a factorised
    /// `L Lᵀ` with the supernodal layout (callers then take `forward_solve_permuted`). Panics
    /// if `rhs.len() != n·k`.
    pub fn forward_solve_reach(&self, rhs: &mut [f64], k: usize, work: &mut ForwardReach) -> bool {
        let n = self.symbolic().n();
        assert_eq!(rhs.len(), n * k, "forward_solve_reach: rhs length");
        let columns: &[f64] = rhs;
        let support = |j: usize| (0..n).filter(move |&r| columns[j * n + r] != 0.0);
        if !self.mark_reaches(k, support, work) {
            return false;
        }
        self.solve_marked_reaches(rhs, k, work);
        true
    }

    /// As [`forward_solve_reach`](Self::forward_solve_reach), with the rows (in elimination
    /// order) where column `j` may be non-zero given by `support(j)` instead of scanned for:
    /// a caller that built `B` knows them (`contact::assemble_delassus`: the few DOFs of a
    /// contact row). Rows listed where the column is zero cost a little work, never a
    /// different result; a non-zero row left out gives a wrong one.
    pub fn forward_solve_reach_supported<I: IntoIterator<Item = usize>>(
        &self,
        rhs: &mut [f64],
        k: usize,
        support: impl Fn(usize) -> I,
        work: &mut ForwardReach,
    ) -> bool {
        let n = self.symbolic().n();
        assert_eq!(rhs.len(), n * k, "forward_solve_reach: rhs length");
        if !self.mark_reaches(k, support, work) {
            return false;
        }
        self.solve_marked_reaches(rhs, k, work);
        true
    }

    /// The supernodes of each column's reach (`work.start`, `work.columns`: for each
    /// supernode, the columns whose reach holds it, in increasing order), from each
    /// column's support; false unless the factor is a factorised supernodal `L Lᵀ`.
    fn mark_reaches<I: IntoIterator<Item = usize>>(
        &self,
        k: usize,
        support: impl Fn(usize) -> I,
        work: &mut ForwardReach,
    ) -> bool {
        let symbolic = self.symbolic();
        if !self.is_factorized() || self.kind() != FactorKind::Llt {
            return false;
        }
        let (SymbolicCholeskyRaw::Supernodal(s), Some(tree)) =
            (symbolic.inner.raw(), &symbolic.supernode_tree)
        else {
            return false;
        };
        let ns = s.n_supernodes();
        // Each column's reach: from each non-zero row's supernode up to the root, stopping at
        // a supernode this column already marked.
        work.pairs.clear();
        work.mark.clear();
        work.mark.resize(ns, usize::MAX);
        for j in 0..k {
            for r in support(j) {
                let mut q = tree.supernode_of[r];
                while q != usize::MAX && work.mark[q] != j {
                    work.mark[q] = j;
                    work.pairs.push((q, j));
                    q = tree.parent[q];
                }
            }
        }
        // Columns by supernode (a counting sort, which keeps each supernode's columns in
        // increasing order).
        work.start.clear();
        work.start.resize(ns + 1, 0);
        for &(q, _) in &work.pairs {
            work.start[q + 1] += 1;
        }
        for q in 0..ns {
            work.start[q + 1] += work.start[q];
        }
        work.columns.resize(work.pairs.len(), 0);
        work.next.clone_from(&work.start);
        for &(q, j) in &work.pairs {
            work.columns[work.next[q]] = j;
            work.next[q] += 1;
        }
        true
    }

    /// The forward solve of `rhs`'s `k` columns on the reaches [`Self::mark_reaches`] found.
    fn solve_marked_reaches(&self, rhs: &mut [f64], k: usize, work: &mut ForwardReach) {
        let SymbolicCholeskyRaw::Supernodal(s) = self.symbolic().inner.raw() else {
            unreachable!("marked on a supernodal factor");
        };
        let n = self.symbolic().n();
        debug_assert_eq!(rhs.len(), n * k);
        let (begin, end) = (s.supernode_begin(), s.supernode_end());
        let (row_ptr, rows, val_ptr) = (s.col_ptr_for_row_idx(), s.row_idx(), s.col_ptr_for_val());
        for q in 0..s.n_supernodes() {
            let active = &work.columns[work.start[q]..work.start[q + 1]];
            let a = active.len();
            if a == 0 {
                continue;
            }
            let nc = end[q] - begin[q];
            let pattern = &rows[row_ptr[q]..row_ptr[q + 1]];
            let np = pattern.len();
            let block = MatRef::from_column_major_slice_with_stride(
                &self.values[val_ptr[q]..val_ptr[q + 1]],
                nc + np,
                nc,
                nc + np,
            );
            // X = L_qq⁻¹ B[q's rows, active], gathered.
            work.x.resize(nc * a, 0.0);
            for (c, &j) in active.iter().enumerate() {
                work.x[c * nc..(c + 1) * nc]
                    .copy_from_slice(&rhs[j * n + begin[q]..j * n + end[q]]);
            }
            solve_lower_triangular_in_place(
                block.subrows(0, nc),
                MatMut::from_column_major_slice_mut(&mut work.x, nc, a),
                Par::Seq,
            );
            for (c, &j) in active.iter().enumerate() {
                rhs[j * n + begin[q]..j * n + end[q]]
                    .copy_from_slice(&work.x[c * nc..(c + 1) * nc]);
            }
            if np == 0 {
                continue;
            }
            // B[pattern, active] −= L_pq X.
            work.w.resize(np * a, 0.0);
            matmul(
                MatMut::from_column_major_slice_mut(&mut work.w, np, a),
                Accum::Replace,
                block.subrows(nc, np),
                MatRef::from_column_major_slice(&work.x, nc, a),
                1.0,
                Par::Seq,
            );
            for (c, &j) in active.iter().enumerate() {
                let column = &mut rhs[j * n..(j + 1) * n];
                for (&r, w) in pattern.iter().zip(&work.w[c * np..(c + 1) * np]) {
                    column[r] -= w;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::FactorMethod;
    use crate::linalg::test_support::{free_grid_system, symbolic_with_layout};
    use crate::math::SplitMix64;
    use faer::dyn_stack::{MemBuffer, MemStack};

    /// Against faer's dense-block forward solve (`forward_solve_permuted`, a second method):
    /// columns with one to nine non-zeros anywhere (several subtrees at once), a dense column
    /// and a zero one, to 1e-13 of the largest entry; the simplicial layout declines.
    #[test]
    fn the_reach_solve_is_the_forward_solve() {
        let mut rng = SplitMix64::new(21);
        let (pattern, values) = free_grid_system([4, 3, 5], &mut rng);
        let n = pattern.n();
        let k = 40;
        let mut b = vec![0.0; n * k];
        for j in 0..k {
            let column = &mut b[j * n..(j + 1) * n];
            match j {
                0 => column.iter_mut().for_each(|x| *x = rng.uniform() - 0.5),
                1 => {}
                _ => {
                    for _ in 0..1 + j % 9 {
                        let r = ((rng.uniform() + 1.0) * 0.5 * n as f64) as usize % n;
                        column[r] = rng.uniform() - 0.5;
                    }
                }
            }
        }
        for method in [FactorMethod::Supernodal, FactorMethod::Simplicial] {
            let mut factor =
                NumericFactor::new(symbolic_with_layout(&pattern, method), FactorKind::Llt);
            factor.factorize(&pattern, &values).unwrap();
            let mut expected = b.clone();
            let mut buffer = MemBuffer::new(factor.solve_scratch(k));
            assert!(factor.forward_solve_permuted(&mut expected, k, MemStack::new(&mut buffer)));
            let mut got = b.clone();
            let mut work = ForwardReach::default();
            let solved = factor.forward_solve_reach(&mut got, k, &mut work);
            assert_eq!(solved, method == FactorMethod::Supernodal);
            if !solved {
                assert_eq!(got, b);
                continue;
            }
            let scale = expected.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            let error = got
                .iter()
                .zip(&expected)
                .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
            assert!(error <= 1e-13 * scale, "error {error:e} of {scale:e}");
            assert!(got[n..2 * n].iter().all(|&x| x == 0.0));
            // The same workspace again (reused buffers), on the same columns.
            let mut again = b.clone();
            assert!(factor.forward_solve_reach(&mut again, k, &mut work));
            assert_eq!(again, got);
            // The supports given instead of scanned for: each column's non-zero rows, listed
            // with repeats and with rows where the column is zero (the last row, and the
            // first of every fourth column), the same bits.
            let support = |j: usize| {
                let column = &b[j * n..(j + 1) * n];
                let mut rows: Vec<usize> = (0..n).filter(|&r| column[r] != 0.0).collect();
                rows.extend(rows.clone());
                rows.push(n - 1);
                if j.is_multiple_of(4) {
                    rows.push(0);
                }
                rows
            };
            let mut supported = b.clone();
            assert!(factor.forward_solve_reach_supported(&mut supported, k, support, &mut work));
            assert_eq!(supported, got);
        }
    }
}
