//! Assembly of clique blocks split among parts (one per thread) that own disjoint sets of the
//! stored values, bit for bit the one-thread scatter ([`AssemblyPlan::scatter_add`] in clique
//! order).
//!
//! Every stored value belongs to one part: the part of its column's node, as the caller
//! partitions the nodes (e.g. slabs of the mesh across its longest axis). A part evaluates
//! every clique that adds to one of its values, in increasing clique order, and adds only the
//! entries of its own values, into a compact buffer of them that starts at zero. So each value
//! sums its contributions from zero in clique order, whatever the number of parts: the
//! one-thread scatter's sums. A clique with nodes in two parts is evaluated by both (with
//! slabs, a thin layer of elements); one of them, its *home*, keeps what the clique computes
//! besides its block (forces, energy). Nothing is shared between the parts while they run: no
//! atomics, no locks, and no buffer of every block.

use super::assembly::AssemblyPlan;
use super::pattern::SymmetricPattern;

/// What one part evaluates and where its entries go.
#[derive(Debug, Clone, Default)]
pub struct AssemblyPart {
    /// The cliques this part evaluates, in increasing order.
    cliques: Vec<u32>,
    /// Per listed clique: whether this part is its home.
    home: Vec<bool>,
    /// Per listed clique: range into `entry_local` and `entry_slot` (`cliques.len() + 1`).
    entry_ptr: Vec<u32>,
    /// The clique's entries that add to this part's values: the position in the block's
    /// upper triangle they are read from…
    entry_local: Vec<u16>,
    /// …and the slot of the part's compact value buffer each adds to.
    entry_slot: Vec<u32>,
    /// The stored value of each slot, increasing.
    values: Vec<u32>,
}

impl AssemblyPart {
    /// The cliques this part evaluates, in increasing order.
    pub fn cliques(&self) -> &[u32] {
        &self.cliques
    }

    /// Whether this part is the home of its `i`-th listed clique: the one part that keeps the
    /// clique's other results.
    #[inline]
    pub fn is_home(&self, i: usize) -> bool {
        self.home[i]
    }

    /// Number of values this part owns: the length of its compact value buffer.
    pub fn value_count(&self) -> usize {
        self.values.len()
    }

    /// Adds the entries of this part's `i`-th listed clique that belong to the part, read
    /// from the row-major symmetric `block` (upper triangle), into the part's compact value
    /// buffer `slots`.
    ///
    /// Panics if `slots` is shorter than [`AssemblyPart::value_count`].
    #[inline]
    pub fn scatter_add(&self, i: usize, block: &[f64], slots: &mut [f64]) {
        let entries = self.entry_ptr[i] as usize..self.entry_ptr[i + 1] as usize;
        for (&local, &slot) in self.entry_local[entries.clone()]
            .iter()
            .zip(&self.entry_slot[entries])
        {
            slots[slot as usize] += block[usize::from(local)];
        }
    }
}

/// The parts of one pattern's assembly (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct PartedAssembly {
    parts: Vec<AssemblyPart>,
}

impl PartedAssembly {
    /// The parts, in order.
    pub fn parts(&self) -> &[AssemblyPart] {
        &self.parts
    }

    /// Overwrites `values` (one per stored entry) with the parts' compact buffers
    /// (`part_values[p]` for part `p`): every stored value is one part's, so each is written
    /// once (one no clique adds to takes its slot's value, zero in a buffer that started at
    /// zero).
    ///
    /// Panics if the number of buffers is not the number of parts, or a buffer is shorter
    /// than its part's [`AssemblyPart::value_count`].
    pub fn write<'a>(
        &self,
        part_values: impl ExactSizeIterator<Item = &'a [f64]>,
        values: &mut [f64],
    ) {
        assert_eq!(
            part_values.len(),
            self.parts.len(),
            "write: one buffer per part"
        );
        for (part, slots) in self.parts.iter().zip(part_values) {
            for (&v, &x) in part.values.iter().zip(&slots[..part.values.len()]) {
                values[v as usize] = x;
            }
        }
    }
}

impl SymmetricPattern {
    /// The assembly of this pattern's cliques split among `parts` parts, where the stored
    /// value (i, j), i ≥ j, belongs to the part `node_part[node of j]` of its column's node.
    /// A clique's home is the lowest part it adds to (part 0 if it adds to none, e.g. when
    /// all its DOFs are removed).
    ///
    /// Panics if `node_part` does not have one entry per node or names a part `≥ parts`.
    pub fn parted_assembly(&self, node_part: &[usize], parts: usize) -> PartedAssembly {
        assert_eq!(
            node_part.len(),
            self.n_nodes(),
            "parted_assembly: one part per node"
        );
        assert!(
            node_part.iter().all(|&p| p < parts),
            "parted_assembly: a node's part out of range"
        );
        let b = self.block_size();
        let col_ptr = self.col_ptr();
        let mut value_part = vec![0usize; self.nnz()];
        for col in 0..self.n() {
            let part = node_part[self.dofs().full_index(col) / b];
            value_part[col_ptr[col]..col_ptr[col + 1]].fill(part);
        }
        let mut slot_of = vec![0u32; self.nnz()];
        let mut result: Vec<AssemblyPart> = vec![AssemblyPart::default(); parts];
        for (v, &p) in value_part.iter().enumerate() {
            slot_of[v] = result[p].values.len() as u32;
            result[p].values.push(v as u32);
        }
        for part in &mut result {
            part.entry_ptr.push(0);
        }
        let plan: &AssemblyPlan = self.plan();
        let mut touched = vec![false; parts];
        let mut entries = Vec::new();
        for e in 0..plan.n_cliques() {
            entries.clear();
            entries.extend(plan.clique_entries(e));
            touched.fill(false);
            for &(_, v) in &entries {
                touched[value_part[v as usize]] = true;
            }
            let home = touched.iter().position(|&t| t).unwrap_or(0);
            touched[home] = true;
            for (p, part) in result.iter_mut().enumerate() {
                if !touched[p] {
                    continue;
                }
                for &(local, v) in &entries {
                    if value_part[v as usize] == p {
                        part.entry_local.push(local);
                        part.entry_slot.push(slot_of[v as usize]);
                    }
                }
                part.cliques.push(e as u32);
                part.home.push(p == home);
                part.entry_ptr.push(part.entry_local.len() as u32);
            }
        }
        PartedAssembly { parts: result }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::test_support::{grid_tetrahedra, random_symmetric_blocks};
    use crate::math::SplitMix64;

    /// The column of stored value `v`.
    fn column_of(pattern: &SymmetricPattern, v: usize) -> usize {
        pattern.col_ptr().partition_point(|&start| start <= v) - 1
    }

    /// Parts drawn at random over the nodes (not slabs: many shared cliques), some nodes
    /// pinned and six cliques wholly pinned: the parts' buffers, each filled by its own cliques
    /// in its own order, written back give the one-thread scatter's values bit for bit; every
    /// clique has exactly one home, and a part lists a clique exactly when it adds to one of
    /// the part's values or is its home.
    #[test]
    fn parts_give_the_one_thread_scatter_bit_for_bit() {
        let (_, tets) = grid_tetrahedra([4, 3, 3], 0, 0.0);
        let n_nodes = 5 * 4 * 4;
        let mut removed = vec![false; 3 * n_nodes];
        // The first cube's eight corners pinned (its six tetrahedra add nothing), and one
        // component of node 30.
        for node in [0, 1, 5, 6, 20, 21, 25, 26] {
            removed[3 * node..3 * node + 3].fill(true);
        }
        removed[3 * 30 + 1] = true;
        let pattern = SymmetricPattern::new(n_nodes, 3, &tets, &removed).unwrap();
        let plan = pattern.plan();
        let mut rng = SplitMix64::new(11);
        let blocks = random_symmetric_blocks(plan, 4, &mut rng);
        let mut expected = vec![0.0; pattern.nnz()];
        for e in 0..plan.n_cliques() {
            plan.scatter_add(e, &blocks[plan.block_offset(e)..], &mut expected);
        }
        for parts in [1, 2, 3, 5] {
            let node_part: Vec<usize> = (0..n_nodes)
                .map(|_| (rng.next_u64() % parts as u64) as usize)
                .collect();
            let parted = pattern.parted_assembly(&node_part, parts);
            let mut homes = vec![0usize; plan.n_cliques()];
            let buffers: Vec<Vec<f64>> = parted
                .parts()
                .iter()
                .map(|part| {
                    let mut slots = vec![0.0; part.value_count()];
                    for (i, &e) in part.cliques().iter().enumerate() {
                        let e = e as usize;
                        homes[e] += usize::from(part.is_home(i));
                        part.scatter_add(i, &blocks[plan.block_offset(e)..], &mut slots);
                    }
                    slots
                })
                .collect();
            let mut values = vec![f64::NAN; pattern.nnz()];
            parted.write(buffers.iter().map(Vec::as_slice), &mut values);
            let same = values
                .iter()
                .zip(&expected)
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(
                same,
                "{parts} parts: values differ from the one-thread scatter"
            );
            assert!(
                homes.iter().all(|&h| h == 1),
                "{parts} parts: one home per clique"
            );
            for (p, part) in parted.parts().iter().enumerate() {
                for e in 0..plan.n_cliques() {
                    let adds = plan.clique_entries(e).any(|(_, v)| {
                        let col = column_of(&pattern, v as usize);
                        node_part[pattern.dofs().full_index(col) / 3] == p
                    });
                    let listed = part.cliques().binary_search(&(e as u32));
                    let home = listed.is_ok_and(|i| part.is_home(i));
                    assert_eq!(
                        listed.is_ok(),
                        adds || home,
                        "{parts} parts: part {p}, clique {e}"
                    );
                }
            }
        }
    }
}
