//! The structure of `P A Pᵀ`, the system matrix with its fill-reducing permutation applied,
//! built once per symbolic analysis, and the gather that fills its values every step.
//!
//! Why: handed the unpermuted matrix and a permutation, faer re-derives the permuted
//! structure at every numeric factorisation (a counting sort over all entries, then a copy);
//! that was about 7 % of a Trunk step. The permuted structure never changes, so it is built
//! here once and faer factorises `P A Pᵀ` with the identity ordering; a step only gathers the
//! values, in a fixed order (deterministic, no allocation).

use super::pattern::SymmetricPattern;
use faer::Side;
use faer::sparse::{SparseColMatRef, SymbolicSparseColMat};

/// `P A Pᵀ` for a [`SymmetricPattern`] `A` and a permutation (`forward[k]` is the reduced
/// DOF placed at position k, `inverse` its inverse), stored as one triangle in CSC form with
/// sorted row indices.
#[derive(Debug)]
pub(super) struct PermutedPattern {
    structure: SymbolicSparseColMat<usize>,
    /// Per stored entry of `P A Pᵀ`, the index of its value in the pattern of `A`.
    source: Vec<usize>,
    forward: Vec<usize>,
}

impl PermutedPattern {
    /// The structure of `P A Pᵀ`: its `side` triangle (diagonal included).
    pub(super) fn new(
        pattern: &SymmetricPattern,
        forward: &[usize],
        inverse: &[usize],
        side: Side,
    ) -> Self {
        let n = pattern.n();
        // Every stored (r, c), r ≥ c, of A becomes (inverse[r], inverse[c]) of P A Pᵀ, moved
        // into the requested triangle.
        let mut entries: Vec<(usize, usize, usize)> = Vec::with_capacity(pattern.nnz());
        for c in 0..n {
            let range = pattern.col_ptr()[c]..pattern.col_ptr()[c + 1];
            for (v, &r) in range.clone().zip(&pattern.row_idx()[range]) {
                let (a, b) = (inverse[r], inverse[c]);
                let (row, col) = match side {
                    Side::Lower => (a.max(b), a.min(b)),
                    Side::Upper => (a.min(b), a.max(b)),
                };
                entries.push((col, row, v));
            }
        }
        entries.sort_unstable();
        let mut col_ptr = vec![0usize; n + 1];
        for &(col, _, _) in &entries {
            col_ptr[col + 1] += 1;
        }
        for j in 0..n {
            col_ptr[j + 1] += col_ptr[j];
        }
        let row_idx = entries.iter().map(|&(_, row, _)| row).collect();
        let source = entries.iter().map(|&(_, _, v)| v).collect();
        Self {
            structure: SymbolicSparseColMat::new_checked(n, n, col_ptr, None, row_idx),
            source,
            forward: forward.to_vec(),
        }
    }

    /// Number of stored entries (that of `A`).
    pub(super) fn nnz(&self) -> usize {
        self.source.len()
    }

    /// The reduced DOF of `A` at position `k` of `P A Pᵀ`.
    pub(super) fn forward(&self) -> &[usize] {
        &self.forward
    }

    /// Writes the values of `P A Pᵀ` into `out` from the values of `A` (one per stored entry
    /// of its pattern).
    pub(super) fn gather(&self, values: &[f64], out: &mut [f64]) {
        assert_eq!(
            out.len(),
            self.source.len(),
            "permuted gather: output length"
        );
        for (o, &v) in out.iter_mut().zip(&self.source) {
            *o = values[v];
        }
    }

    /// The permuted matrix with the gathered `values` as a faer view.
    pub(super) fn matrix<'a>(&'a self, values: &'a [f64]) -> SparseColMatRef<'a, usize, f64> {
        SparseColMatRef::new(self.structure.as_ref(), values)
    }

    /// The permuted structure as a faer view.
    pub(super) fn symbolic(&self) -> faer::sparse::SymbolicSparseColMatRef<'_, usize> {
        self.structure.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permuted_entries_are_the_permuted_matrix() {
        // Two tetrahedra sharing a face, one DOF removed; a reversing permutation.
        let cliques = [[0usize, 1, 2, 3], [1, 2, 3, 4]];
        let mut removed = vec![false; 15];
        removed[4] = true;
        let p = SymmetricPattern::new(5, 3, &cliques, &removed).unwrap();
        let n = p.n();
        let forward: Vec<usize> = (0..n).rev().collect();
        let mut inverse = vec![0; n];
        for (k, &f) in forward.iter().enumerate() {
            inverse[f] = k;
        }
        let values: Vec<f64> = (0..p.nnz()).map(|v| v as f64 + 1.0).collect();
        for side in [Side::Lower, Side::Upper] {
            let pp = PermutedPattern::new(&p, &forward, &inverse, side);
            let mut out = vec![0.0; pp.nnz()];
            pp.gather(&values, &mut out);
            let m = pp.matrix(&out);
            // Every entry (i, j) of P A Pᵀ is A(forward[i], forward[j]).
            let mut seen = 0;
            for j in 0..n {
                for (&i, &value) in m.row_idx_of_col_raw(j).iter().zip(m.val_of_col(j)) {
                    match side {
                        Side::Lower => assert!(i >= j),
                        Side::Upper => assert!(i <= j),
                    }
                    let v = p.value_index(forward[i], forward[j]).unwrap();
                    assert_eq!(value, values[v]);
                    seen += 1;
                }
            }
            assert_eq!(seen, p.nnz());
        }
    }
}
