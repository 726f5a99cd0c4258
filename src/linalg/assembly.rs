//! Deterministic parallel assembly of per-clique dense blocks into the values of a
//! [`SymmetricPattern`], and the cheap value-array algebra that forms `A = M + hD + h²K`
//! (docs/step.md) on one fixed pattern.
//!
//! The per-clique blocks live in one flat buffer: clique `e` with `k` nodes owns the
//! `(k·b)²` values starting at [`AssemblyPlan::block_offset`]`(e)`, **row-major**: entry
//! (local row `R`, local column `C`) sits at `offset + R·(k·b) + C`, where local index
//! `R = a·b + p` is component `p` of the clique's `a`-th node. Blocks are symmetric, and only
//! their upper triangle (`R ≤ C`) is read: an entry that lands in the stored lower triangle of
//! the matrix is read at its mirror position when it lies below the block's diagonal, so a
//! producer may fill the upper triangle only (`fem::Tetrahedron::stiffness_low_rank` does).
//!
//! Assembly is a gather: every stored value sums its contributions in a fixed order (clique
//! order and, inside a clique, the order of the entries in its block), so the result is
//! bit-identical whatever the number of rayon threads. No atomics. A one-thread loop may
//! instead add each block into the values as soon as it is computed
//! ([`AssemblyPlan::scatter_add`], clique by clique): the same sums in the same order, so the
//! same bits, without the buffer.

use super::pattern::SymmetricPattern;
use super::tet_runs::TetRuns;
use crate::error::{Error, Result};
use rayon::prelude::*;

/// Values handled per rayon task in the parallel loops of this module.
const CHUNK: usize = 4096;

/// For every clique block entry that lands in the stored triangle, the value index it adds
/// to, and the inverse lists used by the parallel gather.
#[derive(Debug, Clone, Default)]
pub struct AssemblyPlan {
    /// Start of each clique's block in the flat buffer (`n_cliques + 1` entries).
    block_offsets: Vec<usize>,
    /// `k·b` of each clique.
    block_dims: Vec<usize>,
    /// Per clique: the index of its runs in `tet_runs` (a tetrahedron of four distinct free
    /// nodes), or `u32::MAX`.
    runs_of: Vec<u32>,
    /// The runs of the cliques that have them ([`TetRuns`]).
    tet_runs: Vec<TetRuns>,
    /// Per clique: range into `entry_local` and `entry_value` (`n_cliques + 1` entries); empty
    /// for a clique with runs.
    entry_ptr: Vec<usize>,
    /// The stored entries of each clique's block, in block order: the position in the block
    /// they are read from, in its upper triangle (`min(R, C)·(k·b) + max(R, C)`)…
    entry_local: Vec<u16>,
    /// …and the value index each adds to.
    entry_value: Vec<u32>,
    /// Per value: range into `contrib_src`.
    contrib_ptr: Vec<usize>,
    /// Positions in the block buffer contributing to each value, in clique order and, inside a
    /// clique, in block order of the entries (the order in which `scatter_add` adds them).
    contrib_src: Vec<u32>,
}

impl AssemblyPlan {
    /// Builds the plan of `pattern` (whose structure is already set) for `cliques`.
    pub(super) fn new<C: AsRef<[usize]>>(
        pattern: &SymmetricPattern,
        cliques: &[C],
    ) -> Result<Self> {
        let b = pattern.block_size;
        let mut block_offsets = Vec::with_capacity(cliques.len() + 1);
        let mut block_dims = Vec::with_capacity(cliques.len());
        block_offsets.push(0usize);
        for clique in cliques {
            let kb = clique.as_ref().len() * b;
            block_dims.push(kb);
            let end = block_offsets[block_offsets.len() - 1] + kb * kb;
            block_offsets.push(end);
        }
        let total = block_offsets[cliques.len()];
        if total >= u32::MAX as usize || pattern.nnz() >= u32::MAX as usize {
            return Err(Error::invalid(
                "assembly plan",
                format!(
                    "{total} block entries / {} stored values exceed the 32-bit plan",
                    pattern.nnz()
                ),
            ));
        }
        if let Some(kb) = block_dims
            .iter()
            .find(|&&kb| kb * kb > usize::from(u16::MAX) + 1)
        {
            return Err(Error::invalid(
                "assembly plan",
                format!("a clique block of side {kb} exceeds the plan's 16-bit local positions"),
            ));
        }

        let mut entry_ptr = Vec::with_capacity(cliques.len() + 1);
        entry_ptr.push(0usize);
        let mut entry_local = Vec::new();
        let mut entry_value = Vec::new();
        let mut count = vec![0usize; pattern.nnz() + 1];
        let mut reduced = Vec::new();
        for (e, clique) in cliques.iter().enumerate() {
            let kb = block_dims[e];
            reduced.clear();
            for &node in clique.as_ref() {
                for p in 0..b {
                    reduced.push(pattern.dofs.reduced_index(node * b + p));
                }
            }
            for (rl, row) in reduced.iter().enumerate() {
                let Some(row) = *row else { continue };
                for (cl, col) in reduced.iter().enumerate() {
                    let Some(col) = *col else { continue };
                    if row < col {
                        continue;
                    }
                    let start = pattern.col_ptr[col];
                    let rows = &pattern.row_idx[start..pattern.col_ptr[col + 1]];
                    let k = rows
                        .binary_search(&row)
                        .expect("clique entry missing from its own pattern");
                    let v = start + k;
                    entry_local.push((rl.min(cl) * kb + rl.max(cl)) as u16);
                    entry_value.push(v as u32);
                    count[v + 1] += 1;
                }
            }
            entry_ptr.push(entry_local.len());
        }
        for v in 0..pattern.nnz() {
            count[v + 1] += count[v];
        }
        let contrib_ptr = count;
        let mut fill = contrib_ptr.clone();
        let mut contrib_src = vec![0u32; contrib_ptr[pattern.nnz()]];
        for (e, offset) in block_offsets[..cliques.len()].iter().enumerate() {
            let entries = entry_ptr[e]..entry_ptr[e + 1];
            for (&local, &v) in entry_local[entries.clone()]
                .iter()
                .zip(&entry_value[entries])
            {
                let v = v as usize;
                contrib_src[fill[v]] = (offset + usize::from(local)) as u32;
                fill[v] += 1;
            }
        }
        // Cliques with runs scatter through them: their entries are dropped.
        let mut runs_of = vec![u32::MAX; cliques.len()];
        let mut tet_runs = Vec::new();
        let (mut kept_ptr, mut kept_local, mut kept_value) = (vec![0usize], Vec::new(), Vec::new());
        for (e, clique) in cliques.iter().enumerate() {
            if let Some(runs) = TetRuns::new(pattern, clique.as_ref()) {
                runs_of[e] = tet_runs.len() as u32;
                tet_runs.push(runs);
            } else {
                let entries = entry_ptr[e]..entry_ptr[e + 1];
                kept_local.extend_from_slice(&entry_local[entries.clone()]);
                kept_value.extend_from_slice(&entry_value[entries]);
            }
            kept_ptr.push(kept_local.len());
        }
        Ok(Self {
            block_offsets,
            block_dims,
            runs_of,
            tet_runs,
            entry_ptr: kept_ptr,
            entry_local: kept_local,
            entry_value: kept_value,
            contrib_ptr,
            contrib_src,
        })
    }

    /// Number of cliques.
    pub fn n_cliques(&self) -> usize {
        self.block_dims.len()
    }

    /// Length of the flat buffer of all clique blocks.
    pub fn block_buffer_len(&self) -> usize {
        self.block_offsets[self.n_cliques()]
    }

    /// Start of clique `e`'s row-major `(k·b)×(k·b)` block in the flat buffer.
    #[inline]
    pub fn block_offset(&self, e: usize) -> usize {
        self.block_offsets[e]
    }

    /// `k·b`, the side of clique `e`'s block.
    #[inline]
    pub fn block_dim(&self, e: usize) -> usize {
        self.block_dims[e]
    }

    /// Clique `e`'s stored entries: the position in its block's upper triangle each is read
    /// from and the value it adds to (by runs for a clique that has them).
    pub(super) fn clique_entries(&self, e: usize) -> Box<dyn Iterator<Item = (u16, u32)> + '_> {
        if let Some(runs) = self.tet_runs.get(self.runs_of[e] as usize) {
            return Box::new(runs.entries());
        }
        let entries = self.entry_ptr[e]..self.entry_ptr[e + 1];
        Box::new(
            self.entry_local[entries.clone()]
                .iter()
                .copied()
                .zip(self.entry_value[entries].iter().copied()),
        )
    }

    /// Adds clique `e`'s row-major symmetric block `block` (`block_dim(e)²` values; only its
    /// upper triangle is read) into `values` (one per stored entry): a tetrahedron of four
    /// distinct nodes with all DOFs free by its node pairs' column runs (`TetRuns`, 30 value
    /// indices instead of 78), any other clique entry by entry in block order.
    ///
    /// Called for the cliques in increasing order on values first set to zero, this is
    /// [`SymmetricPattern::assemble`] bit for bit: the gather sums every value's contributions
    /// from 0 in clique order and, inside a clique, in block order (a clique with runs adds
    /// each value once, so its order inside the clique does not matter). What a one-thread
    /// element loop uses to add each block while it is still in cache, instead of writing
    /// every block to the buffer first.
    ///
    /// Panics if `block` is shorter than the clique's block.
    #[inline]
    pub fn scatter_add(&self, e: usize, block: &[f64], values: &mut [f64]) {
        if let Some(runs) = self.tet_runs.get(self.runs_of[e] as usize) {
            runs.scatter_add(block, values);
            return;
        }
        let block = &block[..self.block_dims[e] * self.block_dims[e]];
        let entries = self.entry_ptr[e]..self.entry_ptr[e + 1];
        for (&local, &v) in self.entry_local[entries.clone()]
            .iter()
            .zip(&self.entry_value[entries])
        {
            values[v as usize] += block[usize::from(local)];
        }
    }
}

impl SymmetricPattern {
    /// Overwrites `values` (one per stored entry) with the sum of the clique blocks in
    /// `blocks` (the flat row-major buffer described in the module doc):
    /// `A = Σ_e P_e B_e P_eᵀ` restricted to the free DOFs, lower triangle.
    ///
    /// Parallel (rayon) over values; bit-identical for any thread count.
    /// Panics if `blocks.len() != plan().block_buffer_len()` or `values.len() != nnz()`.
    pub fn assemble(&self, blocks: &[f64], values: &mut [f64]) {
        assert_eq!(
            blocks.len(),
            self.plan.block_buffer_len(),
            "assemble: block buffer length"
        );
        assert_eq!(values.len(), self.nnz(), "assemble: values length");
        let ptr = &self.plan.contrib_ptr;
        let src = &self.plan.contrib_src;
        values
            .par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(chunk, out)| {
                let first = chunk * CHUNK;
                for (k, value) in out.iter_mut().enumerate() {
                    let v = first + k;
                    let mut sum = 0.0;
                    for &pos in &src[ptr[v]..ptr[v + 1]] {
                        sum += blocks[pos as usize];
                    }
                    *value = sum;
                }
            });
    }

    /// Adds `alpha·d[full(r)]` to the diagonal of every free DOF `r`, where `d` is indexed by
    /// full DOF (`n_nodes·block_size` entries, e.g. a lumped mass per DOF in kg); the entries
    /// of removed DOFs are ignored.
    ///
    /// Panics if `values.len() != nnz()` or `d.len()` is not the number of full DOFs.
    pub fn add_full_diagonal(&self, values: &mut [f64], alpha: f64, d: &[f64]) {
        assert_eq!(values.len(), self.nnz(), "add_full_diagonal: values length");
        assert_eq!(
            d.len(),
            self.dofs.n_full(),
            "add_full_diagonal: diagonal length"
        );
        for (r, &full) in self.dofs.free_dofs().iter().enumerate() {
            values[self.col_ptr[r]] += alpha * d[full];
        }
    }

    /// Adds `alpha·d[r]` to the diagonal of reduced DOF `r` (`d` has `n()` entries).
    ///
    /// Panics on length mismatch.
    pub fn add_diagonal(&self, values: &mut [f64], alpha: f64, d: &[f64]) {
        assert_eq!(values.len(), self.nnz(), "add_diagonal: values length");
        assert_eq!(d.len(), self.n(), "add_diagonal: diagonal length");
        for (r, &dr) in d.iter().enumerate() {
            values[self.col_ptr[r]] += alpha * dr;
        }
    }
}

/// `y ← alpha·x + beta·y` on value arrays of one pattern (or any equal-length slices), e.g.
/// `A = (1 + hα_M)·M + (hβ_K + h²)·K` for Rayleigh damping `D = α_M M + β_K K`.
/// Parallel (rayon), element-wise, so bit-identical for any thread count.
///
/// Panics if the lengths differ.
pub fn axpby(alpha: f64, x: &[f64], beta: f64, y: &mut [f64]) {
    assert_eq!(x.len(), y.len(), "axpby: lengths");
    y.par_chunks_mut(CHUNK)
        .zip(x.par_chunks(CHUNK))
        .for_each(|(y, x)| {
            for (y, x) in y.iter_mut().zip(x) {
                *y = alpha * x + beta * *y;
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::test_support::{on_threads, random_symmetric_blocks, to_dense};
    use crate::math::{DMat, SplitMix64};

    /// Naive dense assembly over the full DOFs, then removal of rows and columns.
    fn dense_reference<C: AsRef<[usize]>>(
        n_nodes: usize,
        b: usize,
        cliques: &[C],
        blocks: &[f64],
        plan: &AssemblyPlan,
        removed: &[bool],
    ) -> DMat {
        let n_full = n_nodes * b;
        let mut full = DMat::zeros(n_full, n_full);
        for (e, clique) in cliques.iter().enumerate() {
            let nodes = clique.as_ref();
            let kb = nodes.len() * b;
            for r in 0..kb {
                for c in 0..kb {
                    let gr = nodes[r / b] * b + r % b;
                    let gc = nodes[c / b] * b + c % b;
                    full[(gr, gc)] += blocks[plan.block_offset(e) + r * kb + c];
                }
            }
        }
        let free: Vec<usize> = (0..n_full).filter(|d| !removed[*d]).collect();
        DMat::from_fn(free.len(), free.len(), |i, j| full[(free[i], free[j])])
    }

    fn cliques() -> Vec<Vec<usize>> {
        // Tetrahedra of two cubes sharing a face, plus a repeated-node clique and a triangle.
        vec![
            vec![0, 1, 3, 4],
            vec![1, 2, 3, 6],
            vec![4, 5, 6, 1],
            vec![3, 6, 7, 4],
            vec![1, 4, 6, 3],
            vec![4, 5, 8, 9],
            vec![5, 9, 10, 6],
            vec![7, 6, 10, 11],
            vec![2, 2, 11],
            vec![8, 9, 10],
        ]
    }

    #[test]
    fn assembly_equals_naive_dense_assembly_with_and_without_removed_dofs() {
        let n_nodes = 12;
        let b = 3;
        let cl = cliques();
        let mut rng = SplitMix64::new(7);
        let mut removed_some = vec![false; n_nodes * b];
        for d in [0, 1, 2, 13, 30] {
            removed_some[d] = true;
        }
        for removed in [vec![false; n_nodes * b], removed_some] {
            let p = SymmetricPattern::new(n_nodes, b, &cl, &removed).unwrap();
            let blocks = random_symmetric_blocks(p.plan(), 0, &mut rng);
            let mut values = vec![f64::NAN; p.nnz()];
            p.assemble(&blocks, &mut values);
            let reference = dense_reference(n_nodes, b, &cl, &blocks, p.plan(), &removed);
            let got = to_dense(&p, &values);
            let err = (&got - &reference).abs().max();
            assert!(err <= 1e-14 * reference.abs().max(), "max error {err}");
            // Only the upper triangle of each block is read: with every entry below the
            // diagonals NaN, assembly gives the same bits.
            let mut upper_only = blocks.clone();
            for e in 0..p.plan().n_cliques() {
                let (o, kb) = (p.plan().block_offset(e), p.plan().block_dim(e));
                for r in 0..kb {
                    upper_only[o + r * kb..o + r * kb + r].fill(f64::NAN);
                }
            }
            let mut from_upper = vec![0.0; p.nnz()];
            p.assemble(&upper_only, &mut from_upper);
            assert!(
                from_upper
                    .iter()
                    .zip(&values)
                    .all(|(a, b)| a.to_bits() == b.to_bits())
            );
            // Clique by clique, the scatter is the gather bit for bit, the repeated-node
            // clique (two entries of one clique on one value) included, from the upper
            // triangles alone too; the tetrahedra of distinct free nodes scatter by runs
            // (those with a removed DOF do not).
            let with_runs = (0..p.plan().n_cliques())
                .filter(|&e| p.plan().runs_of[e] != u32::MAX)
                .count();
            let all_free = !removed.contains(&true);
            assert_eq!(with_runs, if all_free { 8 } else { 1 });
            for blocks in [&blocks, &upper_only] {
                let mut by_clique = vec![0.0; p.nnz()];
                for e in 0..p.plan().n_cliques() {
                    let o = p.plan().block_offset(e);
                    p.plan().scatter_add(e, &blocks[o..], &mut by_clique);
                }
                assert!(
                    by_clique
                        .iter()
                        .zip(&values)
                        .all(|(a, b)| a.to_bits() == b.to_bits())
                );
            }
        }
    }

    #[test]
    fn assembly_is_bit_identical_for_one_and_two_threads() {
        // A larger chain of tetrahedra so that several rayon chunks exist.
        let n_nodes = 4000;
        let cl: Vec<[usize; 4]> = (0..n_nodes - 3).map(|i| [i, i + 1, i + 2, i + 3]).collect();
        let removed: Vec<bool> = (0..n_nodes * 3).map(|d| d % 17 == 0).collect();
        let p = SymmetricPattern::new(n_nodes, 3, &cl, &removed).unwrap();
        assert!(p.nnz() > 2 * CHUNK);
        let blocks = random_symmetric_blocks(p.plan(), 0, &mut SplitMix64::new(3));
        let run = |threads: usize| {
            on_threads(threads, || {
                let mut values = vec![0.0; p.nnz()];
                p.assemble(&blocks, &mut values);
                let other: Vec<f64> = values.iter().map(|v| v * 0.5 + 1.0).collect();
                axpby(0.3, &other, 1.7, &mut values);
                values
            })
        };
        let one = run(1);
        let two = run(2);
        assert!(
            one.iter()
                .zip(&two)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        );
    }

    #[test]
    fn a_clique_beyond_16_bit_positions_is_refused_by_name() {
        // 85 nodes of 3 DOFs: a 255 × 255 block, 65,025 positions, the largest that fits; 86
        // nodes (66,564) do not.
        let fits: Vec<usize> = (0..85).collect();
        let p = SymmetricPattern::new(85, 3, &[fits], &[false; 255]).unwrap();
        // The block's last diagonal entry is the last value of the dense lower triangle.
        let mut block = vec![0.0; 255 * 255];
        block[255 * 255 - 1] = 1.0;
        let mut values = vec![0.0; p.nnz()];
        p.plan().scatter_add(0, &block, &mut values);
        assert_eq!(values[p.nnz() - 1], 1.0);
        assert_eq!(values.iter().sum::<f64>(), 1.0);
        let too_big: Vec<usize> = (0..86).collect();
        let err = SymmetricPattern::new(86, 3, &[too_big], &[false; 258]).unwrap_err();
        assert!(err.to_string().contains("side 258"), "{err}");
    }

    #[test]
    fn diagonal_and_linear_combination_match_dense_algebra() {
        let n_nodes = 12;
        let b = 3;
        let cl = cliques();
        let mut removed = vec![false; n_nodes * b];
        removed[5] = true;
        removed[20] = true;
        let p = SymmetricPattern::new(n_nodes, b, &cl, &removed).unwrap();
        let mut rng = SplitMix64::new(11);
        let k_blocks = random_symmetric_blocks(p.plan(), 0, &mut rng);
        let mut k = vec![0.0; p.nnz()];
        p.assemble(&k_blocks, &mut k);
        let mass: Vec<f64> = (0..n_nodes * b)
            .map(|_| 1.0 + rng.uniform().abs())
            .collect();
        let (h, alpha_m, beta_k) = (0.01, 0.1, 0.02);
        // A = (1 + hα)M + (hβ + h²)K.
        let mut a = vec![0.0; p.nnz()];
        p.add_full_diagonal(&mut a, 1.0, &mass);
        axpby(h * beta_k + h * h, &k, 1.0 + h * alpha_m, &mut a);
        let free = p.dofs().free_dofs();
        let m_dense = DMat::from_fn(
            p.n(),
            p.n(),
            |i, j| if i == j { mass[free[i]] } else { 0.0 },
        );
        let reference = &m_dense * (1.0 + h * alpha_m) + to_dense(&p, &k) * (h * beta_k + h * h);
        let err = (to_dense(&p, &a) - &reference).abs().max();
        assert!(err <= 1e-15 * reference.abs().max(), "max error {err}");
        // add_diagonal with a reduced vector agrees with add_full_diagonal.
        let mut reduced_mass = vec![0.0; p.n()];
        p.dofs().reduce(&mass, &mut reduced_mass);
        let mut b1 = vec![0.0; p.nnz()];
        let mut b2 = vec![0.0; p.nnz()];
        p.add_full_diagonal(&mut b1, 2.0, &mass);
        p.add_diagonal(&mut b2, 2.0, &reduced_mass);
        assert_eq!(b1, b2);
    }
}
