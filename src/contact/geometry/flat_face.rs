//! A face of a box or a convex hull lying flat (face-on) on a soft surface triangle: the
//! tests that say whether the contact region between them, the face's polygon clipped by the
//! triangle, already has a vertex row, or only the crossings of their edges can hold it
//! (rigid faces on soft surfaces in mixed rigid/soft scenes; `scene::model::soft_rigid` builds
//! the rows, `SurfaceTree::face_on_crossings` finds the crossings).
//!
//! The region F ∩ T of a convex face F and a triangle T, seen along the face's normal, is a
//! convex polygon whose vertices are the face's corners inside T, T's vertices over F, and
//! the points where F's edges cross T's edges. The first two are rows already (a corner
//! against a triangle, a node against the shape); when there are none (a face narrower than
//! the node spacing, lying between two rows of nodes, its corners beyond the triangle) only
//! the crossings are left, and the face would sink through the surface without rows there.
//!
//! The face is named by its outward unit normal m in the shape's frame; its boundary edges
//! are the shape's edges ([`ShapeEdge`]) having m as one of their two face normals (within
//! [`SAME_FACE`]), the other normal m′ being that of the neighbouring face. A point q lies
//! **over** F when its projection q′ = q − (m · (q − a₀)) m on F's plane is inside F:
//! m′ · (q′ − a₀) ≤ [`OVER_ROUND_OFF`] for every boundary edge (a₀ one of its ends), F being
//! the part of its plane that its neighbours' half-spaces bound. A corner of F lies over T
//! when its projection on T's plane has barycentric weights ≥ −`WEIGHT_TOLERANCE` (the corner
//! rows' rule, `SurfaceTree::facing_triangle`).

use super::convex_shape::{ShapeEdge, ShapePose};
use super::surface_tree::{RIGID_ARC_SLACK, SOFT_ARC_SLACK, WEIGHT_TOLERANCE, project_on_triangle};
use crate::math::Vec3;

/// How far (rad) a soft triangle's outward normal may turn from −m (m the face's outward
/// normal) and the triangle still count as lying face-on under the face: the soft edges' arc
/// slack plus the rigid face's ([`SOFT_ARC_SLACK`] + [`RIGID_ARC_SLACK`]).
pub const FACE_ON_ANGLE: f64 = SOFT_ARC_SLACK + RIGID_ARC_SLACK;

/// Two unit face normals (shape frame) closer than this (1 − cosine) name the same face.
pub const SAME_FACE: f64 = 1e-9;

/// Round-off allowance (m) of the test that a point lies over a face.
pub const OVER_ROUND_OFF: f64 = 1e-12;

/// The boundary edges of the face of outward unit normal `face` (shape frame) among `edges`:
/// each edge's ends and its other face's normal (shape frame).
fn boundary<'a>(
    edges: &'a [ShapeEdge],
    face: &'a Vec3,
) -> impl Iterator<Item = (&'a [Vec3; 2], Vec3)> + 'a {
    edges.iter().filter_map(move |e| {
        let same = |m: &Vec3| 1.0 - m.dot(face) < SAME_FACE;
        match (same(&e.normals[0]), same(&e.normals[1])) {
            (true, false) => Some((&e.ends, e.normals[1])),
            (false, true) => Some((&e.ends, e.normals[0])),
            _ => None,
        }
    })
}

/// Whether the point `q` (m, world) lies over the face of outward unit normal `face` (shape
/// frame) of the shape of `edges` at `pose` (module doc).
pub fn lies_over_face(edges: &[ShapeEdge], pose: &ShapePose, face: &Vec3, q: &Vec3) -> bool {
    // In the shape's frame: q_local, projected on the face's plane.
    let local = pose.rotation.transpose() * (q - pose.translation);
    let mut sides = 0;
    for (ends, other) in boundary(edges, face) {
        let projected = local - face.dot(&(local - ends[0])) * face;
        if other.dot(&(projected - ends[0])) > OVER_ROUND_OFF {
            return false;
        }
        sides += 1;
    }
    sides > 0
}

/// Whether the face of outward unit normal `face` (shape frame) of the shape of `edges` at
/// `pose` and the triangle of vertices `triangle` (m, world) meet at a vertex: a vertex of
/// the triangle lies over the face, or a corner of the face lies over the triangle (module
/// doc). A degenerate triangle never does.
pub fn face_meets_triangle_at_a_vertex(
    edges: &[ShapeEdge],
    pose: &ShapePose,
    face: &Vec3,
    triangle: &[Vec3; 3],
) -> bool {
    if triangle
        .iter()
        .any(|q| lies_over_face(edges, pose, face, q))
    {
        return true;
    }
    boundary(edges, face).any(|(ends, _)| {
        ends.iter().any(|a| {
            project_on_triangle(&pose.transform_point(a), triangle)
                .is_some_and(|p| p.weights.iter().all(|w| *w >= -WEIGHT_TOLERANCE))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::{Collider, ConvexShape};
    use crate::math::Mat3;

    /// A 60 × 6 × 6 mm bar along x, its centre at (0, 5 mm, 23 mm): its bottom face (normal
    /// −z) spans x ∈ [−30, 30] mm, y ∈ [2, 8] mm at z = 20 mm.
    fn bar() -> (Collider, ShapePose) {
        let c = Collider::new(ConvexShape::Cuboid {
            half_extents: Vec3::new(0.03, 0.003, 0.003),
        })
        .unwrap();
        let pose = ShapePose {
            rotation: Mat3::identity(),
            translation: Vec3::new(0.0, 0.005, 0.023),
        };
        (c, pose)
    }

    #[test]
    fn points_over_the_bottom_face_of_a_bar() {
        let (c, pose) = bar();
        let down = -Vec3::z();
        let over = |q: Vec3| lies_over_face(c.edges(), &pose, &down, &q);
        // Inside the face's rectangle, above or below its plane: over.
        assert!(over(Vec3::new(0.0, 0.005, 0.019)));
        assert!(over(Vec3::new(0.029, 0.0021, 0.05)));
        // Beside it (y = 0 and 10 mm, the node rows) or beyond its ends: not.
        assert!(!over(Vec3::new(0.0, 0.0, 0.02)));
        assert!(!over(Vec3::new(0.0, 0.01, 0.02)));
        assert!(!over(Vec3::new(0.031, 0.005, 0.02)));
        // A normal that is no face of the box names no face.
        let tilted = Vec3::new(0.0, 0.6, -0.8);
        assert!(!lies_over_face(
            c.edges(),
            &pose,
            &tilted,
            &Vec3::new(0.0, 0.005, 0.019)
        ));
    }

    #[test]
    fn a_bar_between_two_rows_of_nodes_meets_no_vertex_of_their_triangles() {
        let (c, pose) = bar();
        let down = -Vec3::z();
        let meets = |t: [Vec3; 3]| face_meets_triangle_at_a_vertex(c.edges(), &pose, &down, &t);
        let p = |x: f64, y: f64| Vec3::new(x, y, 0.02);
        // A cell's triangle of the 10 mm grid under the bar: none of its vertices is over
        // the face (y = 0, 10 mm) and the face's corners (x = ±30 mm) are beyond it.
        assert!(!meets([p(0.0, 0.0), p(0.01, 0.0), p(0.01, 0.01)]));
        // A triangle with a vertex at y = 5 mm under the face: it meets the face there.
        assert!(meets([p(0.0, 0.0), p(0.01, 0.0), p(0.005, 0.005)]));
        // A large triangle holding the face's corner (30 mm, 2 mm): it meets it there.
        assert!(meets([p(0.02, -0.01), p(0.05, -0.01), p(0.02, 0.02)]));
    }
}
