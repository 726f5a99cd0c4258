//! Geometric nested-dissection ordering of the node graph of a [`SymmetricPattern`], from
//! node coordinates.
//!
//! Recursive coordinate bisection (George 1973; George & Liu, "Computer Solution of Large
//! Sparse Positive Definite Systems", ch. 8): a part of the mesh is split at the median of its
//! longest bounding-box extent; the nodes of one side that touch the other side (the smaller
//! of the two such boundary layers) form the vertex separator; both sides are ordered
//! recursively, then the separator. Parts of at most `LEAF` nodes keep their order. The node
//! order is then expanded to the free DOFs of each node. On bulky 3D meshes of ~30k unknowns
//! this gives less fill and fewer flops than minimum degree (numeric LLᵀ about 1.5–2× faster
//! on a 22³-node cube, `benches/linalg.rs`); on thin or small meshes AMD can be as good or
//! better, so AMD stays the default.

use super::pattern::SymmetricPattern;
use crate::math::Vec3;

/// Parts with at most this many nodes are not split further.
const LEAF: usize = 8;

/// The node adjacency (both triangles, no self loops) of `pattern`, as CSR.
fn node_graph(pattern: &SymmetricPattern) -> (Vec<usize>, Vec<usize>) {
    let b = pattern.block_size();
    let n_nodes = pattern.n_nodes();
    let dofs = pattern.dofs();
    // Node pairs (i, j), i > j, from the stored lower triangle, deduplicated with a stamp.
    let mut count = vec![0usize; n_nodes + 1];
    let mut pairs = Vec::new();
    let mut stamp = vec![usize::MAX; n_nodes];
    for c in 0..pattern.n() {
        let j = dofs.full_index(c) / b;
        for &r in &pattern.row_idx()[pattern.col_ptr()[c]..pattern.col_ptr()[c + 1]] {
            let i = dofs.full_index(r) / b;
            if i != j && stamp[i] != j {
                stamp[i] = j;
                pairs.push((i, j));
                count[i + 1] += 1;
                count[j + 1] += 1;
            }
        }
    }
    for i in 0..n_nodes {
        count[i + 1] += count[i];
    }
    let ptr = count;
    let mut adj = vec![0usize; ptr[n_nodes]];
    let mut fill = ptr.clone();
    for (i, j) in pairs {
        adj[fill[i]] = j;
        fill[i] += 1;
        adj[fill[j]] = i;
        fill[j] += 1;
    }
    (ptr, adj)
}

/// The nested-dissection order of the free DOFs of `pattern` for nodes at `coordinates`
/// (any length unit; one point per node, all finite — checked by the caller):
/// `perm[k]` is the reduced DOF eliminated at step `k`.
pub(super) fn nested_dissection_order(
    pattern: &SymmetricPattern,
    coordinates: &[Vec3],
) -> Vec<usize> {
    let n_nodes = pattern.n_nodes();
    assert_eq!(coordinates.len(), n_nodes, "one coordinate per node");
    let (ptr, adj) = node_graph(pattern);
    // side[i]: 0 = outside the part being split, 1 = side A, 2 = side B.
    let mut side = vec![0u8; n_nodes];
    let mut node_order = Vec::with_capacity(n_nodes);
    // Depth-first work list; a split pushes (separator to emit, B, A) so that A is ordered
    // first, then B, then the separator.
    enum Item {
        Split(Vec<usize>),
        Emit(Vec<usize>),
    }
    let mut stack = vec![Item::Split((0..n_nodes).collect())];
    while let Some(item) = stack.pop() {
        let mut part = match item {
            Item::Emit(nodes) => {
                node_order.extend_from_slice(&nodes);
                continue;
            }
            Item::Split(part) => part,
        };
        if part.len() <= LEAF {
            node_order.extend_from_slice(&part);
            continue;
        }
        // Longest extent of the part's bounding box.
        let mut lo = coordinates[part[0]];
        let mut hi = lo;
        for &i in &part {
            lo = lo.inf(&coordinates[i]);
            hi = hi.sup(&coordinates[i]);
        }
        let axis = (hi - lo).imax();
        let half = part.len() / 2;
        part.select_nth_unstable_by(half, |&a, &b| {
            coordinates[a][axis].total_cmp(&coordinates[b][axis])
        });
        let (a_nodes, b_nodes) = part.split_at(half);
        for &i in a_nodes {
            side[i] = 1;
        }
        for &i in b_nodes {
            side[i] = 2;
        }
        let touches = |i: usize, other: u8, side: &[u8]| {
            adj[ptr[i]..ptr[i + 1]].iter().any(|&j| side[j] == other)
        };
        let boundary_a: Vec<usize> = a_nodes
            .iter()
            .copied()
            .filter(|&i| touches(i, 2, &side))
            .collect();
        let boundary_b: Vec<usize> = b_nodes
            .iter()
            .copied()
            .filter(|&i| touches(i, 1, &side))
            .collect();
        let separator = if boundary_a.len() <= boundary_b.len() {
            boundary_a
        } else {
            boundary_b
        };
        for &i in &separator {
            side[i] = 3;
        }
        let rest_a: Vec<usize> = a_nodes.iter().copied().filter(|&i| side[i] == 1).collect();
        let rest_b: Vec<usize> = b_nodes.iter().copied().filter(|&i| side[i] == 2).collect();
        for &i in &part {
            side[i] = 0;
        }
        stack.push(Item::Emit(separator));
        stack.push(Item::Split(rest_b));
        stack.push(Item::Split(rest_a));
    }
    assert_eq!(node_order.len(), n_nodes, "nested dissection lost nodes");
    let b = pattern.block_size();
    let mut perm = Vec::with_capacity(pattern.n());
    for &i in &node_order {
        for p in 0..b {
            if let Some(r) = pattern.dofs().reduced_index(i * b + p) {
                perm.push(r);
            }
        }
    }
    assert_eq!(perm.len(), pattern.n());
    perm
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::test_support::grid_tetrahedra;
    use crate::linalg::{FactorMethod, FactorOrdering, SymbolicFactor, SymbolicOptions};

    /// Tetrahedra and coordinates of an `m × m × m`-node grid starting at node `first`,
    /// shifted by `offset` along x.
    fn grid(m: usize, first: usize, offset: f64) -> (Vec<[usize; 4]>, Vec<Vec3>) {
        let (xyz, tets) = grid_tetrahedra([m - 1; 3], first, offset);
        (tets, xyz)
    }

    #[test]
    fn order_is_a_permutation_keeping_node_dofs_together() {
        // Two disconnected 8³ grids and one isolated node; node 3 fully removed.
        let (mut tets, mut xyz) = grid(8, 0, 0.0);
        let (tets2, xyz2) = grid(8, 512, 20.0);
        tets.extend(tets2);
        xyz.extend(xyz2);
        xyz.push(Vec3::new(-5.0, 0.0, 0.0));
        let n_nodes = 1025;
        let mut removed = vec![false; 3 * n_nodes];
        removed[9..12].fill(true);
        let p = SymmetricPattern::new(n_nodes, 3, &tets, &removed).unwrap();
        let perm = nested_dissection_order(&p, &xyz);
        let mut seen = vec![false; p.n()];
        for &r in &perm {
            assert!(!seen[r], "reduced DOF {r} twice");
            seen[r] = true;
        }
        assert!(seen.iter().all(|s| *s));
        let node = |r: usize| p.dofs().full_index(r) / 3;
        // Node 3 has no free DOF, so every other node contributes 3 consecutive DOFs.
        for w in perm.chunks(3) {
            assert!(w.iter().all(|&r| node(r) == node(w[0])));
        }
    }

    #[test]
    fn dissection_has_less_fill_than_minimum_degree_on_a_3d_grid() {
        // On an m³ grid a dissection by planes has fill O(N^{4/3}); minimum degree, a local
        // greedy rule, does worse on 3D grids (George & Liu, ch. 8). faer's AMD is the second
        // method the fill is compared with.
        let m = 16;
        let (tets, xyz) = grid(m, 0, 0.0);
        let n = m * m * m;
        let p = SymmetricPattern::new(n, 3, &tets, &vec![false; 3 * n]).unwrap();
        let len = |ordering| {
            let options = SymbolicOptions {
                method: FactorMethod::Simplicial,
                ordering,
            };
            SymbolicFactor::with_options(&p, options)
                .unwrap()
                .factor_len()
        };
        let amd = len(FactorOrdering::Amd);
        let nd = len(FactorOrdering::NestedDissection(&xyz));
        assert!(
            (nd as f64) < 0.9 * amd as f64,
            "nested dissection {nd} vs AMD {amd}"
        );
    }
}
