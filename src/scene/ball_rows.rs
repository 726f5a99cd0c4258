//! The rows of a rigid ball resting on a soft face (issue 19; row kinds 9, a free body's or a
//! link's ball, and 10, a fixed body's): a ball smaller than the node spacing touches a soft
//! surface triangle inside it, where no node row (a node against the ball) holds it (a ball
//! has no corners for corner rows), and without these rows falls through the face.
//!
//! A ball of centre c and radius r over a triangle T (outward unit normal n, vertex x₀) whose
//! plane it reaches (`SurfaceTree::ball_triangles`: c projects onto T within the corner rows'
//! weight tolerance, Φ in [−thickness, margin]) touches it at its support point towards T,
//! p = c − r n, with the gap Φ = n · (c − x₀) − r. The row is the corner row's
//! (`scene::soft_rigid`, kinds 3 and 4) with the "corner" at p: the soft part the barycentric
//! weights wᵢ of c's projection on T, the rigid part the body's velocity at p, normal n out of
//! the soft body:
//! σ = frameᵀ (v_rigid(p) − Σ wᵢ v_i). Friction acts at p, r from the centre: its torque
//! (p − c) × f_t = −r n × f_t is what makes a ball roll.
//!
//! **Which triangles**: every one the centre projects onto, each its own row (a ball in the
//! cone-shaped dent it presses around a node touches the dent's faces, one row each). These
//! rows and the node rows hold different points: a node row holds the ball at the node, on
//! the ball's surface; a ball row at p, inside the triangle. Where the ball touches a face at
//! an interior point its nodes lie outside the ball (gap ≈ d²/2r for a node d from p), so a
//! ball resting on a face is held by its ball rows alone, however large it is; the two
//! coincide only for a ball touching the face exactly at a node. A scene without a ball
//! touching a soft body has the same rows as without this module, bit for bit.
//!
//! Derivatives (`diff::chain_rows`, `ChainRow::add_ball_on_triangle`): Φ + r, n and the weights
//! are those of c's projection on T (`contact::TriangleHitDerivative` at c); the support point
//! turns with the triangle, dp = dc − r dn, which a corner row's body-fixed vertex does not.

use crate::contact::{ConvexShape, SurfaceTree, TriangleHit};
use crate::math::Vec3;

use super::flat_face_rows::ShapeFaces;
use super::soft_point::SoftPoint;
use super::soft_rigid::SoftRigidRow;

/// Appends to `out` the rows of `shape` if it is a ball resting on triangles of `surface` (at
/// the soft nodes' positions `x`, m), within `shape.margin` (m), one per triangle in the
/// tree's order (module doc); `shape.key` holds the rows' kind (9 or 10) and the first two
/// indices of their key (the third is the triangle's index); `hits` is the query's buffer.
pub(super) fn ball_rows(
    shape: &ShapeFaces<'_>,
    surface: &SurfaceTree,
    x: &[Vec3],
    hits: &mut Vec<TriangleHit>,
    out: &mut Vec<SoftRigidRow>,
) {
    let ConvexShape::Ball { radius } = *shape.collider.shape() else {
        return;
    };
    let c = shape.pose.translation;
    hits.clear();
    surface.ball_triangles(x, c, radius, shape.margin, hits);
    for hit in hits.iter() {
        let n = hit.frame.column(2).into_owned();
        out.push(SoftRigidRow {
            soft: SoftPoint::Face {
                vertices: hit.vertices,
                weights: hit.weights,
            },
            soft_sign: -1.0,
            side: shape.side,
            point: c - radius * n,
            frame: hit.frame,
            gap: hit.gap,
            error: Vec3::zeros(),
            friction: shape.friction,
            bilateral: false,
            key: (shape.key.0, shape.key.1, shape.key.2, hit.triangle),
        });
    }
}
