//! Self-contact of one soft body: its surface nodes against its own surface triangles that do
//! not contain them, so that folds of a body, or separate pieces of one mesh, do not pass
//! through each other. One factorisation per body serves it: the rows of `H_c` are
//! `frame ᵀ (v_node − Σ wᵢ v_triangle,i)`, the node's velocity relative to the barycentric
//! point of the triangle. Which triangle a node faces, and the penetration depth still
//! recognised, is [`SurfaceTree::facing_triangle`]'s rule.

use super::contact_points::ContactPoints;
use super::surface_tree::{SurfaceTree, TriangleHit};
use crate::contact::delassus::jacobian::ContactJacobian;
use crate::error::Result;
use crate::math::Vec3;

/// One self-contact: a surface node against a point inside one of the body's own surface
/// triangles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SelfContact {
    /// The node.
    pub node: usize,
    /// Where it meets the triangle (vertices of the same body).
    pub hit: TriangleHit,
}

impl SelfContact {
    /// Signed gap Φ (m).
    pub fn gap(&self) -> f64 {
        self.hit.gap
    }
}

/// Appends to `out` the self-contacts of the `candidates` (surface nodes) at `positions`
/// within `margin` (m), one per node at most, in node order. `surface` is the body's own,
/// refitted at `positions` with at least this margin ([`SurfaceTree::refit`]).
pub fn detect_self_contacts(
    surface: &SurfaceTree,
    positions: &[Vec3],
    candidates: &[usize],
    margin: f64,
    out: &mut Vec<SelfContact>,
) {
    for &node in candidates {
        let hit = surface.facing_triangle(
            positions,
            positions[node],
            surface.node_normal(node),
            margin,
            |t| t.contains(&node),
        );
        out.extend(hit.map(|hit| SelfContact { node, hit }));
    }
}

/// Appends the 3 rows of `H_c` of each self-contact (module doc) to `jacobian`, the contact
/// points (the node and the triangle's vertices) spread over their nodes by `points`.
pub fn push_self_contacts(
    contacts: &[SelfContact],
    points: &ContactPoints,
    jacobian: &mut ContactJacobian,
) -> Result<()> {
    for c in contacts {
        let [a, b, d] = c.hit.vertices;
        let [wa, wb, wd] = c.hit.weights;
        let (rows, len) = points.expand(&[(c.node, 1.0), (a, -wa), (b, -wb), (d, -wd)]);
        jacobian.push_point_contact(&c.hit.frame, &rows[..len])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{Mesh, box_mesh};

    /// Two unit-ish cubes of one mesh, the second `gap` above the first.
    fn stacked(gap: f64) -> Mesh {
        let a = box_mesh([1, 1, 1], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]).unwrap();
        let b = box_mesh([1, 1, 1], [0.2, 0.1, 1.0 + gap], [1.2, 1.1, 2.0 + gap]).unwrap();
        let n = a.node_count();
        let mut x = a.positions().to_vec();
        x.extend_from_slice(b.positions());
        let mut tets = a.tetrahedra().to_vec();
        tets.extend(b.tetrahedra().iter().map(|t| t.map(|i| i + n)));
        Mesh::new(x, tets, Vec::new(), Default::default()).unwrap()
    }

    #[test]
    fn stacked_cubes_touch_through_the_facing_faces_only() {
        for (gap, expect) in [(0.01, 2), (-0.01, 2), (0.2, 0)] {
            let mesh = stacked(gap);
            let x = mesh.positions().to_vec();
            let mut surface = SurfaceTree::new(mesh.boundary_triangles(), &x);
            assert!((surface.thickness() - 0.25 * (2.0 + 2f64.sqrt()) / 3.0).abs() < 1e-12);
            let all: Vec<usize> = (0..x.len()).collect();
            let mut out = Vec::new();
            surface.refit(&x, 0.05).unwrap();
            detect_self_contacts(&surface, &x, &all, 0.05, &mut out);
            // Of the upper cube's bottom corners only (0.2, 0.1) projects inside the lower
            // cube's top face [0, 1]², and of the lower cube's top corners only (1, 1) inside
            // the upper cube's bottom face [0.2, 1.2] × [0.1, 1.1].
            let found: Vec<(usize, f64)> = out.iter().map(|c| (c.node, c.gap())).collect();
            assert_eq!(out.len(), expect, "gap {gap}: {found:?}");
            for c in &out {
                assert!((c.gap() - gap).abs() < 1e-12, "{c:?}");
                let w = c.hit.weights;
                assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-14);
                // The contact point is the node's projection.
                let cp: Vec3 = (0..3).map(|i| w[i] * x[c.hit.vertices[i]]).sum();
                assert!((x[c.node] - cp - c.gap() * c.hit.frame.column(2)).norm() < 1e-12);
            }
            // Every node moved: the tree is refitted and finds the same pairs shifted.
            let shifted: Vec<Vec3> = x.iter().map(|p| p + Vec3::new(0.0, 0.0, 0.5)).collect();
            let mut again = Vec::new();
            surface.refit(&shifted, 0.05).unwrap();
            detect_self_contacts(&surface, &shifted, &all, 0.05, &mut again);
            assert_eq!(again.len(), out.len());
            let mut jac = ContactJacobian::new(x.len());
            push_self_contacts(&out, &ContactPoints::Nodes, &mut jac).unwrap();
            assert_eq!(jac.contact_count(), expect);
        }
    }

    #[test]
    fn a_negative_margin_is_an_error() {
        let mesh = stacked(0.01);
        let mut surface = SurfaceTree::new(mesh.boundary_triangles(), mesh.positions());
        assert!(surface.refit(mesh.positions(), -1.0).is_err());
        assert!(surface.refit(mesh.positions(), f64::NAN).is_err());
    }
}
