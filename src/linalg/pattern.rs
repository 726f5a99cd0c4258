//! The fixed sparsity pattern of a symmetric, block-structured system matrix such as
//! `A = M + hD + h²K` (docs/step.md), built once from the mesh's cliques.
//!
//! Storage convention: the **lower triangle** (row ≥ column, diagonal included) of the
//! reduced matrix over the free DOFs, in compressed sparse column (CSC) form, row indices
//! sorted increasingly inside each column. The diagonal entry is therefore the first entry
//! of every column, and every free DOF has one (even a node that belongs to no clique).
//! This is the layout faer's sparse Cholesky reads with `Side::Lower`.

use super::assembly::AssemblyPlan;
use super::dof_map::DofMap;
use crate::error::{Error, Result};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};

/// Sparsity pattern (lower-triangle CSC over the free DOFs), DOF map and assembly plan of a
/// symmetric matrix whose nonzero blocks come from cliques of nodes.
///
/// Node `i` couples with node `j` when both appear in one clique (for a tetrahedral mesh, the
/// 4 nodes of a tetrahedron). Each node carries `block_size` DOFs; full DOF of node `i`,
/// component `c` is `i·block_size + c`. Removed DOFs (fixed nodes) have no row and no column.
#[derive(Debug, Clone)]
pub struct SymmetricPattern {
    pub(super) n_nodes: usize,
    pub(super) block_size: usize,
    pub(super) dofs: DofMap,
    /// CSC column pointers of the stored lower triangle (length `n + 1`).
    pub(super) col_ptr: Vec<usize>,
    /// CSC row indices (reduced), sorted inside each column; the diagonal is first.
    pub(super) row_idx: Vec<usize>,
    /// Row pointers of the strictly lower triangle seen row by row (length `n + 1`).
    pub(super) row_ptr: Vec<usize>,
    /// Column (reduced) of each strictly-lower entry, row by row, columns increasing.
    pub(super) row_col: Vec<usize>,
    /// Value index of each strictly-lower entry, row by row.
    pub(super) row_val: Vec<usize>,
    pub(super) plan: AssemblyPlan,
}

impl SymmetricPattern {
    /// Builds the pattern of the reduced matrix and the assembly plan.
    ///
    /// - `n_nodes`: number of nodes; every clique entry must be `< n_nodes`.
    /// - `block_size`: DOFs per node (3 for a soft body), at least 1.
    /// - `cliques`: node lists (any length ≥ 1, e.g. `[usize; 4]` per tetrahedron). Clique `e`
    ///   contributes a dense `(k·b)×(k·b)` block (`k` = its node count) to the matrix.
    /// - `removed`: one flag per full DOF (`n_nodes·block_size` of them); `true` removes the DOF.
    ///
    /// Errors ([`Error::Invalid`]) name the clique and position of an out-of-range node, or the
    /// mismatching length of `removed`, or a pattern too large for the 32-bit assembly plan.
    pub fn new<C: AsRef<[usize]>>(
        n_nodes: usize,
        block_size: usize,
        cliques: &[C],
        removed: &[bool],
    ) -> Result<Self> {
        Self::with_couplings::<C, C>(n_nodes, block_size, cliques, &[], removed)
    }

    /// As [`SymmetricPattern::new`], with the structure widened by `couplings`: further node
    /// lists whose nodes all couple (e.g. the points a cable's tangent links, which lie in
    /// different elements) but which have no block in the assembly plan; their values are
    /// added through [`SymmetricPattern::value_index`], looked up once.
    pub fn with_couplings<C: AsRef<[usize]>, D: AsRef<[usize]>>(
        n_nodes: usize,
        block_size: usize,
        cliques: &[C],
        couplings: &[D],
        removed: &[bool],
    ) -> Result<Self> {
        if block_size == 0 {
            return Err(Error::invalid("block_size", "must be at least 1"));
        }
        let n_full = n_nodes
            .checked_mul(block_size)
            .ok_or_else(|| Error::invalid("n_nodes", "n_nodes·block_size overflows"))?;
        if removed.len() != n_full {
            return Err(Error::invalid(
                "removed DOF mask",
                format!(
                    "has {} entries, expected n_nodes·block_size = {n_full}",
                    removed.len()
                ),
            ));
        }
        let all: Vec<&[usize]> = cliques
            .iter()
            .map(AsRef::as_ref)
            .chain(couplings.iter().map(AsRef::as_ref))
            .collect();
        for (e, clique) in all.iter().enumerate() {
            if clique.is_empty() {
                return Err(Error::invalid(format!("clique {e}"), "has no node"));
            }
            if let Some((pos, &node)) = clique.iter().enumerate().find(|(_, n)| **n >= n_nodes) {
                return Err(Error::invalid(
                    format!("clique {e}"),
                    format!("node {node} at position {pos} is out of range (n_nodes = {n_nodes})"),
                ));
            }
        }

        let dofs = DofMap::new(removed);
        let neighbours = upper_node_neighbours(n_nodes, &all);
        let (col_ptr, row_idx) = lower_csc(&dofs, block_size, &neighbours);
        let (row_ptr, row_col, row_val) =
            strictly_lower_by_rows(dofs.n_reduced(), &col_ptr, &row_idx);
        let mut pattern = Self {
            n_nodes,
            block_size,
            dofs,
            col_ptr,
            row_idx,
            row_ptr,
            row_col,
            row_val,
            plan: AssemblyPlan::default(),
        };
        pattern.plan = AssemblyPlan::new(&pattern, cliques)?;
        Ok(pattern)
    }

    /// Number of nodes.
    pub fn n_nodes(&self) -> usize {
        self.n_nodes
    }

    /// DOFs per node.
    pub fn block_size(&self) -> usize {
        self.block_size
    }

    /// Size `n` of the reduced (free-DOF) matrix.
    pub fn n(&self) -> usize {
        self.dofs.n_reduced()
    }

    /// Number of stored values (entries of the lower triangle, diagonal included).
    pub fn nnz(&self) -> usize {
        self.row_idx.len()
    }

    /// The full ↔ reduced DOF map (also expands and reduces vectors).
    pub fn dofs(&self) -> &DofMap {
        &self.dofs
    }

    /// The assembly plan (clique block entries → value indices).
    pub fn plan(&self) -> &AssemblyPlan {
        &self.plan
    }

    /// CSC column pointers of the stored lower triangle (length `n + 1`).
    pub fn col_ptr(&self) -> &[usize] {
        &self.col_ptr
    }

    /// CSC row indices (reduced) of the stored lower triangle, sorted inside each column.
    pub fn row_idx(&self) -> &[usize] {
        &self.row_idx
    }

    /// Value index of the diagonal entry of reduced DOF `r`.
    #[inline]
    pub fn diagonal_index(&self, r: usize) -> usize {
        self.col_ptr[r]
    }

    /// Value index of entry `(i, j)` of the reduced matrix (either triangle: `(i, j)` and
    /// `(j, i)` share one stored value), or `None` if it is structurally zero.
    pub fn value_index(&self, i: usize, j: usize) -> Option<usize> {
        let (row, col) = if i >= j { (i, j) } else { (j, i) };
        let start = self.col_ptr[col];
        let rows = &self.row_idx[start..self.col_ptr[col + 1]];
        rows.binary_search(&row).ok().map(|k| start + k)
    }

    /// The structure as a faer symbolic matrix (lower triangle, `Side::Lower`).
    pub fn faer_symbolic(&self) -> SymbolicSparseColMatRef<'_, usize> {
        let n = self.n();
        // The checked constructor verifies the structure in O(nnz), negligible next to a
        // factorisation.
        SymbolicSparseColMatRef::new_checked(n, n, &self.col_ptr, None, &self.row_idx)
    }

    /// The matrix with `values` (one per stored entry) as a faer sparse matrix view
    /// (lower triangle; read it with `Side::Lower`).
    ///
    /// Panics if `values.len() != nnz()`.
    pub fn faer_matrix<'a>(&'a self, values: &'a [f64]) -> SparseColMatRef<'a, usize, f64> {
        assert_eq!(values.len(), self.nnz(), "faer_matrix: values length");
        SparseColMatRef::new(self.faer_symbolic(), values)
    }
}

/// For each node `j`, the sorted list of nodes `i ≥ j` sharing a clique with it (`j` itself
/// always included), as CSR (`ptr`, `idx`).
fn upper_node_neighbours<C: AsRef<[usize]>>(
    n_nodes: usize,
    cliques: &[C],
) -> (Vec<usize>, Vec<usize>) {
    // Node → cliques incidence (CSR).
    let mut inc_ptr = vec![0usize; n_nodes + 1];
    for clique in cliques {
        for &node in clique.as_ref() {
            inc_ptr[node + 1] += 1;
        }
    }
    for i in 0..n_nodes {
        inc_ptr[i + 1] += inc_ptr[i];
    }
    let mut inc = vec![0usize; inc_ptr[n_nodes]];
    let mut fill = inc_ptr.clone();
    for (e, clique) in cliques.iter().enumerate() {
        for &node in clique.as_ref() {
            inc[fill[node]] = e;
            fill[node] += 1;
        }
    }
    // Neighbours i ≥ j, deduplicated with a stamp array.
    let mut stamp = vec![usize::MAX; n_nodes];
    let mut ptr = Vec::with_capacity(n_nodes + 1);
    let mut idx = Vec::new();
    ptr.push(0);
    for j in 0..n_nodes {
        let start = idx.len();
        stamp[j] = j;
        idx.push(j);
        for &e in &inc[inc_ptr[j]..inc_ptr[j + 1]] {
            for &i in cliques[e].as_ref() {
                if i > j && stamp[i] != j {
                    stamp[i] = j;
                    idx.push(i);
                }
            }
        }
        idx[start..].sort_unstable();
        ptr.push(idx.len());
    }
    (ptr, idx)
}

/// The lower-triangle CSC structure over the free DOFs.
fn lower_csc(
    dofs: &DofMap,
    b: usize,
    neighbours: &(Vec<usize>, Vec<usize>),
) -> (Vec<usize>, Vec<usize>) {
    let (nb_ptr, nb_idx) = neighbours;
    let n_nodes = nb_ptr.len() - 1;
    let mut col_ptr = Vec::with_capacity(dofs.n_reduced() + 1);
    let mut row_idx = Vec::new();
    col_ptr.push(0);
    for j in 0..n_nodes {
        for q in 0..b {
            if dofs.is_removed(j * b + q) {
                continue;
            }
            // Node j itself: components p ≥ q; then the other neighbours, all components.
            // Full DOFs increase along the way, hence so do reduced rows.
            for p in q..b {
                if let Some(r) = dofs.reduced_index(j * b + p) {
                    row_idx.push(r);
                }
            }
            for &i in &nb_idx[nb_ptr[j] + 1..nb_ptr[j + 1]] {
                for p in 0..b {
                    if let Some(r) = dofs.reduced_index(i * b + p) {
                        row_idx.push(r);
                    }
                }
            }
            col_ptr.push(row_idx.len());
        }
    }
    (col_ptr, row_idx)
}

/// The strictly lower entries grouped by row: (`row_ptr`, column of each, value index of each),
/// columns increasing inside a row.
fn strictly_lower_by_rows(
    n: usize,
    col_ptr: &[usize],
    row_idx: &[usize],
) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
    let mut row_ptr = vec![0usize; n + 1];
    for j in 0..n {
        for &i in &row_idx[col_ptr[j] + 1..col_ptr[j + 1]] {
            row_ptr[i + 1] += 1;
        }
    }
    for i in 0..n {
        row_ptr[i + 1] += row_ptr[i];
    }
    let total = row_ptr[n];
    let mut row_col = vec![0usize; total];
    let mut row_val = vec![0usize; total];
    let mut fill = row_ptr.clone();
    for j in 0..n {
        // Skip the diagonal (first entry of the column).
        let strictly_lower = col_ptr[j] + 1..col_ptr[j + 1];
        for (v, &i) in strictly_lower.clone().zip(&row_idx[strictly_lower]) {
            row_col[fill[i]] = j;
            row_val[fill[i]] = v;
            fill[i] += 1;
        }
    }
    (row_ptr, row_col, row_val)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nonzero structure (lower triangle, reduced numbering) obtained by assembling a dense
    /// matrix of ones by hand: entry (r, c) is nonzero iff some clique holds both nodes.
    fn dense_structure(
        n_nodes: usize,
        b: usize,
        cliques: &[Vec<usize>],
        removed: &[bool],
    ) -> Vec<(usize, usize)> {
        let n_full = n_nodes * b;
        let mut dense = vec![vec![0.0f64; n_full]; n_full];
        for clique in cliques {
            for &a in clique {
                for &c in clique {
                    for p in 0..b {
                        for q in 0..b {
                            dense[a * b + p][c * b + q] += 1.0;
                        }
                    }
                }
            }
        }
        // Every node has its own diagonal block.
        for i in 0..n_nodes {
            for p in 0..b {
                for q in 0..b {
                    dense[i * b + p][i * b + q] += 1.0;
                }
            }
        }
        let free: Vec<usize> = (0..n_full).filter(|d| !removed[*d]).collect();
        let mut out = Vec::new();
        for (cc, &c) in free.iter().enumerate() {
            for (rr, &r) in free.iter().enumerate() {
                if rr >= cc && dense[r][c] != 0.0 {
                    out.push((rr, cc));
                }
            }
        }
        out
    }

    fn stored_structure(p: &SymmetricPattern) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for c in 0..p.n() {
            for &r in &p.row_idx()[p.col_ptr()[c]..p.col_ptr()[c + 1]] {
                out.push((r, c));
            }
        }
        out
    }

    #[test]
    fn structure_matches_hand_assembled_dense_nonzeros() {
        // 7 nodes: two tetrahedra sharing a face, a triangle, a lone edge, node 6 isolated.
        let cliques = vec![
            vec![0, 1, 2, 3],
            vec![1, 2, 3, 4],
            vec![4, 5, 0],
            vec![5, 2],
        ];
        for b in [1, 3] {
            let none = vec![false; 7 * b];
            let p = SymmetricPattern::new(7, b, &cliques, &none).unwrap();
            assert_eq!(stored_structure(&p), dense_structure(7, b, &cliques, &none));
            // Removing all DOFs of node 2 and one DOF of node 4.
            let mut removed = none.clone();
            for c in 0..b {
                removed[2 * b + c] = true;
            }
            removed[4 * b + b - 1] = true;
            let p = SymmetricPattern::new(7, b, &cliques, &removed).unwrap();
            assert_eq!(p.n(), 7 * b - b - 1);
            assert_eq!(
                stored_structure(&p),
                dense_structure(7, b, &cliques, &removed)
            );
            for r in 0..p.n() {
                assert_eq!(p.row_idx()[p.diagonal_index(r)], r, "diagonal first");
            }
        }
    }

    #[test]
    fn bad_input_is_an_error_naming_the_clique() {
        let err = SymmetricPattern::new(3, 3, &[[0usize, 1, 5]], &[false; 9]).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("clique 0") && msg.contains("node 5"), "{msg}");
        assert!(SymmetricPattern::new(3, 3, &[[0usize, 1, 2]], &[false; 8]).is_err());
    }
}
