//! Boundary-surface extraction: the faces of a tetrahedral mesh that belong to exactly one
//! tetrahedron, oriented so that their normals (right-hand rule) point out of the body.

use std::collections::HashMap;

use crate::math::Vec3;

/// The four faces of a positively oriented tetrahedron (a, b, c, d), each ordered so that its
/// right-hand normal points out of the tetrahedron.
#[inline]
fn outward_faces([a, b, c, d]: [usize; 4]) -> [[usize; 3]; 4] {
    [[a, c, b], [a, b, d], [a, d, c], [b, c, d]]
}

/// Boundary triangles of the tetrahedra (which must be positively oriented, as a
/// [`crate::mesh::Mesh`] guarantees), with outward normals. Order: by tetrahedron, then face,
/// so the result is deterministic.
pub fn boundary_triangles(tetrahedra: &[[usize; 4]]) -> Vec<[usize; 3]> {
    let mut count: HashMap<[usize; 3], u32> = HashMap::with_capacity(tetrahedra.len() * 4);
    for &tet in tetrahedra {
        for face in outward_faces(tet) {
            let mut key = face;
            key.sort_unstable();
            *count.entry(key).or_insert(0) += 1;
        }
    }
    let mut out = Vec::new();
    for &tet in tetrahedra {
        for face in outward_faces(tet) {
            let mut key = face;
            key.sort_unstable();
            if count[&key] == 1 {
                out.push(face);
            }
        }
    }
    out
}

/// Area-weighted normal of triangle (a, b, c): (b − a) × (c − a), whose norm is twice the
/// area (unit²) and whose direction follows the right-hand rule.
#[inline]
pub fn triangle_normal(positions: &[Vec3], [a, b, c]: [usize; 3]) -> Vec3 {
    (positions[b] - positions[a]).cross(&(positions[c] - positions[a]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::box_mesh;

    #[test]
    fn box_surface_is_closed_outward_and_has_the_box_area() {
        // Independent expectations: a 2×3×4 box of cells split into 6 tetrahedra each has
        // 2·(2·3 + 3·4 + 2·4) = 52 boundary squares, i.e. 104 triangles; the surface area of a
        // 1×1.5×2 box is 2·(1.5 + 3 + 2) = 13; by the divergence theorem Σ (x·n) dA = 3 V.
        let mesh = box_mesh([2, 3, 4], [0.0, 0.0, 0.0], [1.0, 1.5, 2.0]).unwrap();
        let tris = mesh.boundary_triangles();
        assert_eq!(tris.len(), 104);
        let p = mesh.positions();
        let area: f64 = tris
            .iter()
            .map(|&t| triangle_normal(p, t).norm() / 2.0)
            .sum();
        assert!((area - 13.0).abs() < 1e-12);
        let flux: f64 = tris
            .iter()
            .map(|&t| p[t[0]].dot(&triangle_normal(p, t)) / 2.0)
            .sum();
        assert!((flux - 3.0 * 3.0).abs() < 1e-12, "flux {flux}");
        // Closed: every edge is shared by exactly two boundary triangles, in opposite directions.
        let mut edges = HashMap::new();
        for t in &tris {
            for k in 0..3 {
                *edges.entry((t[k], t[(k + 1) % 3])).or_insert(0) += 1;
            }
        }
        for (&(a, b), &n) in &edges {
            assert_eq!(n, 1);
            assert_eq!(edges.get(&(b, a)), Some(&1));
        }
    }
}
