//! Contact between two soft bodies: the surface nodes of one body against the surface
//! triangles of another (paper 004 §II-B; docs/step.md). Detection runs both ways (a's nodes
//! against b's triangles and b's nodes against a's), so a corner of either body pressing into
//! a face of the other is caught; which triangle a node faces, and the penetration depth still
//! recognised, is [`SurfaceTree::facing_triangle`]'s rule (the face's body sets the thickness).
//!
//! A contact's velocity is the node's velocity relative to the barycentric point of the
//! triangle, `σ = frameᵀ (v_a,node − Σ wᵢ v_b,i)`, with the frame's normal n_T the triangle's
//! outward normal (from body b into body a). Its rows of `H_c` therefore span two bodies:
//! `frameᵀ` on the node in a's Jacobian, `−wᵢ frameᵀ` on the triangle's vertices in b's
//! ([`push_body_contact`]); each body's term of the Delassus matrix comes from its own
//! factorisation.

use super::contact_points::ContactPoints;
use super::surface_tree::{SurfaceTree, TriangleHit};
use crate::contact::delassus::jacobian::ContactJacobian;
use crate::error::Result;
use crate::math::Vec3;

/// A surface node of body `node_body` against a point inside a surface triangle of body
/// `face_body` (body indices in scene order).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BodyContact {
    /// The body of the node.
    pub node_body: usize,
    /// The node (in `node_body`).
    pub node: usize,
    /// The body of the triangle.
    pub face_body: usize,
    /// Where the node meets the triangle (vertices of `face_body`).
    pub hit: TriangleHit,
}

impl BodyContact {
    /// Signed gap Φ (m).
    pub fn gap(&self) -> f64 {
        self.hit.gap
    }
}

/// One body's side of a pair query: its surface (refitted at `positions`), its node positions
/// (m) and the nodes that may touch (surface nodes that are not fixed).
#[derive(Debug, Clone, Copy)]
pub struct BodySurface<'a> {
    /// The body's index in the scene.
    pub body: usize,
    /// Its surface tree, refitted at `positions` with at least the query margin.
    pub surface: &'a SurfaceTree,
    /// Its node positions (m).
    pub positions: &'a [Vec3],
    /// Its contact candidates.
    pub candidates: &'a [usize],
}

/// Appends to `out` the contacts of `a`'s candidates against `b`'s triangles, then of `b`'s
/// candidates against `a`'s triangles, within `margin` (m): one per node at most, in node
/// order within each direction.
pub fn detect_body_contacts(
    a: BodySurface,
    b: BodySurface,
    margin: f64,
    out: &mut Vec<BodyContact>,
) {
    for (nodes, faces) in [(a, b), (b, a)] {
        for &node in nodes.candidates {
            let hit = faces.surface.facing_triangle(
                faces.positions,
                nodes.positions[node],
                nodes.surface.node_normal(node),
                margin,
                |_| false,
            );
            out.extend(hit.map(|hit| BodyContact {
                node_body: nodes.body,
                node,
                face_body: faces.body,
                hit,
            }));
        }
    }
}

/// Appends the contact's 3 rows of body `body`'s Jacobian `rows`: `frameᵀ` on the node when
/// `body` is the node's, `−wᵢ frameᵀ` on the triangle's vertices when it is the triangle's
/// (module doc), the contact points spread over their nodes by `points` (body `body`'s).
///
/// Panics if `body` is neither.
pub fn push_body_contact(
    contact: &BodyContact,
    body: usize,
    points: &ContactPoints,
    rows: &mut ContactJacobian,
) -> Result<()> {
    let frame = &contact.hit.frame;
    let (entries, len) = if body == contact.node_body {
        points.expand(&[(contact.node, 1.0)])
    } else {
        assert_eq!(
            body, contact.face_body,
            "push_body_contact: body not in the contact"
        );
        let [a, b, c] = contact.hit.vertices;
        let [wa, wb, wc] = contact.hit.weights;
        points.expand(&[(a, -wa), (b, -wb), (c, -wc)])
    };
    rows.push_point_contact(frame, &entries[..len])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::box_mesh;

    #[test]
    fn two_cubes_meet_both_ways_and_the_rows_give_the_relative_velocity() {
        // A lower cube [0, 1]³ and an upper one shifted by (0.2, 0.1) and `gap` above it: as
        // in the self-contact test, one upper corner projects inside the lower top face and
        // one lower corner inside the upper bottom face.
        let lower = box_mesh([1, 1, 1], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]).unwrap();
        let gap = 0.01;
        let upper = box_mesh([1, 1, 1], [0.2, 0.1, 1.0 + gap], [1.2, 1.1, 2.0 + gap]).unwrap();
        let (xl, xu) = (lower.positions().to_vec(), upper.positions().to_vec());
        let mut sl = SurfaceTree::new(lower.boundary_triangles(), &xl);
        let mut su = SurfaceTree::new(upper.boundary_triangles(), &xu);
        sl.refit(&xl, 0.05).unwrap();
        su.refit(&xu, 0.05).unwrap();
        let (cl, cu): (Vec<usize>, Vec<usize>) = ((0..xl.len()).collect(), (0..xu.len()).collect());
        let side = |body, surface, positions, candidates| BodySurface {
            body,
            surface,
            positions,
            candidates,
        };
        let mut out = Vec::new();
        detect_body_contacts(
            side(0, &sl, &xl, &cl),
            side(1, &su, &xu, &cu),
            0.05,
            &mut out,
        );
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!((out[0].node_body, out[0].face_body), (0, 1));
        assert_eq!((out[1].node_body, out[1].face_body), (1, 0));
        // Lower corner (1, 1, 1) under the upper bottom face: normal −z (out of the upper
        // cube, into the lower one); upper corner (0.2, 0.1, 1 + gap) above the top face: +z.
        assert!((xl[out[0].node] - Vec3::new(1.0, 1.0, 1.0)).norm() < 1e-14);
        assert!((out[0].hit.frame.column(2) - Vec3::new(0.0, 0.0, -1.0)).norm() < 1e-14);
        assert!((xu[out[1].node] - Vec3::new(0.2, 0.1, 1.0 + gap)).norm() < 1e-14);
        assert!((out[1].hit.frame.column(2) - Vec3::new(0.0, 0.0, 1.0)).norm() < 1e-14);
        for c in &out {
            assert!((c.gap() - gap).abs() < 1e-12, "{c:?}");
        }
        // Rows: with the lower cube at rest and the upper one moving down at 1 m/s, each
        // contact closes at 1 m/s along its normal: σ_N = n · (v_node − v_point) = −1.
        let vl = vec![Vec3::zeros(); xl.len()];
        let vu = vec![Vec3::new(0.3, -0.2, -1.0); xu.len()];
        for c in &out {
            let (mut jl, mut ju) = (
                ContactJacobian::new(xl.len()),
                ContactJacobian::new(xu.len()),
            );
            push_body_contact(c, 0, &ContactPoints::Nodes, &mut jl).unwrap();
            push_body_contact(c, 1, &ContactPoints::Nodes, &mut ju).unwrap();
            let (mut sigma_l, mut sigma_u) = ([0.0; 3], [0.0; 3]);
            jl.apply(&vl, &mut sigma_l);
            ju.apply(&vu, &mut sigma_u);
            assert!((sigma_l[2] + sigma_u[2] + 1.0).abs() < 1e-14, "{c:?}");
        }
    }
}
