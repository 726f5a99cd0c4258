//! A partition of a mesh's nodes into slabs across its longest axis, for the element loop on
//! several threads ([`crate::linalg::PartedAssembly`]): the elements with nodes in two slabs,
//! which two threads both evaluate, are a thin layer.

use crate::math::Vec3;

use super::tetrahedron::Tetrahedron;

/// The slab (`0..shares.len()`) of every node of `rest` (m): the nodes in order along the axis
/// of largest extent (ties by index), cut where the elements' first nodes in that order split
/// by `shares` (fractions of the elements, summing to 1), so that about
/// `shares[p] · elements.len()` elements start in slab `p`. Nodes of no element are ordered
/// with the others. Equal shares give slabs of equal element counts; unequal ones let a
/// thread that starts later take fewer (`super::slab_balance`).
///
/// Panics if `shares` is empty.
pub(super) fn node_slabs(rest: &[Vec3], elements: &[Tetrahedron], shares: &[f64]) -> Vec<usize> {
    assert!(!shares.is_empty(), "node_slabs: at least one part");
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
    // Cut j (1 ≤ j < parts) at the rank that starts the element after the first j shares.
    let mut before = 0.0;
    let cuts: Vec<usize> = shares[..shares.len() - 1]
        .iter()
        .map(|share| {
            before += share;
            let at = (before * first.len() as f64).round() as usize;
            first.get(at).copied().unwrap_or(rest.len())
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
    /// neighbouring planes y = 0.01 i and 0.01 (i + 1) and starts on the lower one, and each
    /// plane but the last starts the same number of elements, so `parts` equal slabs cut the
    /// 13 planes at the multiples of 12 / parts, and shares of a quarter and three quarters
    /// at plane 3.
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
            let slabs = node_slabs(&rest, &elements, &vec![1.0 / parts as f64; parts]);
            for (p, slab) in rest.iter().zip(&slabs) {
                let plane = (p.y / 0.01).round() as usize;
                let expected = (plane * parts / 12).min(parts - 1);
                assert_eq!(*slab, expected, "{parts} parts: node at y = {}", p.y);
            }
        }
        let slabs = node_slabs(&rest, &elements, &[0.25, 0.75]);
        for (p, slab) in rest.iter().zip(&slabs) {
            let plane = (p.y / 0.01).round() as usize;
            assert_eq!(*slab, usize::from(plane >= 3), "node at y = {}", p.y);
        }
    }
}
