//! A partition of a mesh's nodes into slabs across its longest axis, for the element loop on
//! several threads ([`crate::linalg::PartedAssembly`]): the elements with nodes in two slabs,
//! which two threads both evaluate, are a thin layer.

use crate::math::Vec3;

use super::tetrahedron::Tetrahedron;

/// The slab (`0..parts`) of every node of `rest` (m): the nodes in order along the axis of
/// largest extent (ties by index), cut where the elements' first nodes in that order split
/// into `parts` equal counts, so that about `elements.len() / parts` elements start in each
/// slab. Nodes of no element are ordered with the others.
///
/// Panics if `parts` is zero.
pub(super) fn node_slabs(rest: &[Vec3], elements: &[Tetrahedron], parts: usize) -> Vec<usize> {
    assert!(parts > 0, "node_slabs: at least one part");
    if rest.is_empty() {
        return Vec::new();
    }
    let (low, high) = rest
        .iter()
        .fold((rest[0], rest[0]), |(lo, hi), p| (lo.inf(p), hi.sup(p)));
    let axis = (high - low).imax();
    let mut order: Vec<usize> = (0..rest.len()).collect();
    order.sort_by(|&a, &b| rest[a][axis].total_cmp(&rest[b][axis]).then(a.cmp(&b)));
    let mut rank = vec![0usize; rest.len()];
    for (r, &node) in order.iter().enumerate() {
        rank[node] = r;
    }
    let mut first: Vec<usize> = elements
        .iter()
        .map(|t| t.nodes.iter().map(|&n| rank[n]).min().expect("four nodes"))
        .collect();
    first.sort_unstable();
    // Cut j (1 ≤ j < parts) at the rank that starts the j-th share of the elements.
    let cuts: Vec<usize> = (1..parts)
        .map(|j| {
            first
                .get(j * first.len() / parts)
                .copied()
                .unwrap_or(rest.len())
        })
        .collect();
    rank.iter()
        .map(|&r| cuts.partition_point(|&cut| cut <= r))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::box_mesh;

    /// A 2 × 12 × 2-cell bar along y (its nodes numbered x first): every element spans two
    /// neighbouring planes y = 0.01 i and 0.01 (i + 1) and starts on the lower one, so `parts`
    /// slabs cut the 13 planes at the multiples of 12 / parts.
    #[test]
    fn slabs_cut_a_bar_across_its_length() {
        let mesh = box_mesh([2, 12, 2], [0.0; 3], [0.02, 0.12, 0.02]).unwrap();
        let rest = mesh.positions().to_vec();
        let elements: Vec<Tetrahedron> = mesh
            .tetrahedra()
            .iter()
            .map(|t| Tetrahedron::new(*t, &rest))
            .collect();
        for parts in [1, 2, 3] {
            let slabs = node_slabs(&rest, &elements, parts);
            for (p, slab) in rest.iter().zip(&slabs) {
                let plane = (p.y / 0.01).round() as usize;
                let expected = (plane * parts / 12).min(parts - 1);
                assert_eq!(*slab, expected, "{parts} parts: node at y = {}", p.y);
            }
        }
    }
}
