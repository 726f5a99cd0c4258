//! The rows of a rigid ball resting on a soft face (mixed rigid/soft scenes; row kinds 9, a free
//! body's or a link's ball, and 10, a fixed body's): a ball smaller than the node spacing touches a
//! soft surface triangle inside it, where no node row (a node against the ball) holds it (a ball
//! has no corners for corner rows), and without these rows falls through the face.
//!
//! A ball of centre c and radius r over a triangle T (outward unit normal n, vertex x₀) whose
//! plane it reaches (`SurfaceTree::ball_triangles`: c projects onto T within the corner rows'
//! weight tolerance, Φ in [−thickness, margin]) touches it at its support point towards T,
//! p = c − r n, with the gap Φ = n · (c − x₀) − r. The row is the corner row's
//! (`scene::model::soft_rigid`, kinds 3 and 4) with the "corner" at p: the soft part the barycentric
//! weights wᵢ of c's projection on T, the rigid part the body's velocity at p, normal n out of
//! the soft body:
//! σ = frameᵀ (v_rigid(p) − Σ wᵢ v_i). Friction acts at p, r from the centre: its torque
//! (p − c) × f_t = −r n × f_t is what makes a ball roll.
//!
//! **Which triangles**: every one the centre projects onto, each its own row (a ball in the
//! cone-shaped dent it presses around a node touches the dent's faces, one row each); and one
//! the centre projects less than r beyond, across an edge where it meets its neighbour in a
//! concave crease (its plane runs on below the neighbour, so it holds the ball before the
//! centre reaches it; without it, the ball rolling across the crease met the next facet
//! already in, and the penetration correction's push-out did work on it).
//!
//! **Ridges**: where the centre projects beyond both triangles of an edge (a convex ridge, the
//! surface's rim) no triangle holds the ball, and the edge is its row
//! (`SurfaceTree::ball_edges`, `contact::BallOnSegment`): n from the edge's point q closest to
//! c (strictly between its nodes: a node's neighbourhood is its node row's) to c,
//! Φ = |c − q| − r, the soft part the weights (1 − s, s) of q, the key's third index the
//! triangle count plus the edge. Its derivatives (`ChainRow::add_ball_on_edge`): n turns
//! with c too, so dp = dc − r dn for the body's motion. These
//! rows and the node rows hold different points: a node row holds the ball at the node, on
//! the ball's surface; a ball row at p, inside the triangle. Where the ball touches a face at
//! an interior point its nodes lie outside the ball (gap ≈ d²/2r for a node d from p), so a
//! ball resting on a face is held by its ball rows alone, however large it is; the two
//! coincide only for a ball touching the face exactly at a node. A scene without a ball
//! touching a soft body has the same rows as without this module, bit for bit.
//!
//! **Capsules**: a capsule is the set of points within r of its axis segment, so each of its
//! two end balls (radius r, centred at the segment's ends) gets these rows, the second end's
//! keys offset by the triangle and edge counts: a capsule thinner than the node spacing lying
//! on a face rests on its ends, as a bar on two balls. An end ball's centre is fixed in the
//! body, as a ball's is, so the rows' form and derivatives are the ball's. Where its axis
//! lies across a convex ridge (its closest point a(t) to a surface edge strictly inside both,
//! and beyond both of the edge's triangles: `SurfaceTree::capsule_ridges`) the ridge's edge
//! is a row of kind 11 or 12 (key: the surface edge): the edge rows' crossing geometry for
//! the axis (`contact::geometry::edge_edge`, n = ±(e × f)/‖…‖ out of the body), Φ = n · (a(t) − p(s))
//! − r, its point the support point a(t) − r n; derivatives `ChainRow::add_capsule_on_edge`
//! (the edge row's, with dp = da(t) − r dn). Along a flat or concave edge the axis is held
//! by the end balls and the nodes.
//!
//! Derivatives (`diff::chain_rows`, `ChainRow::add_ball_on_triangle`): Φ + r, n and the weights
//! are those of c's projection on T (`contact::TriangleHitDerivative` at c); the support point
//! turns with the triangle, dp = dc − r dn, which a corner row's body-fixed vertex does not.

use crate::contact::{
    BallOnSegment, ConvexShape, EdgeHit, ShapePose, SurfaceTree, TriangleHit, contact_frame,
};
use crate::math::Vec3;

use super::flat_face_rows::ShapeFaces;
use crate::scene::model::soft_point::SoftPoint;
use crate::scene::model::soft_rigid::SoftRigidRow;

/// Whether `shape` gets ball rows (a ball, or a capsule's end balls: [`ball_rows`]).
pub(in crate::scene) fn has_balls(shape: &ConvexShape) -> bool {
    balls_of(shape, &ShapePose::identity()).is_some()
}

/// The balls whose rows a shape at `pose` gets: a ball's own, or a capsule's two end balls
/// (radius, the centres at −half_length and +half_length along its axis); none for any other
/// shape.
fn balls_of(shape: &ConvexShape, pose: &ShapePose) -> Option<(f64, [Option<Vec3>; 2])> {
    match *shape {
        ConvexShape::Ball { radius } => Some((radius, [Some(pose.translation), None])),
        _ => shape
            .capsule_axis(pose)
            .map(|(radius, ends)| (radius, ends.map(Some))),
    }
}

/// Appends to `out` the rows of `shape` if it is a ball, or a capsule's end balls, resting on
/// triangles of `surface` (at the soft nodes' positions `x`, m) or beside its convex ridges,
/// within `shape.margin` (m), one per triangle or edge in the tree's order, then a capsule's
/// axis rows across convex ridges, in increasing edge index (module doc); `shape.key` holds
/// the balls' rows' kind (9 or 10; the axis rows' is two more) and the first two indices of
/// their key (the third is the triangle's index, or the triangle count plus the edge's,
/// offset by the triangle and edge counts for a capsule's second end; the edge's for an axis
/// row), with the queries' `buffers`.
pub(in crate::scene) fn ball_rows(
    shape: &ShapeFaces<'_>,
    surface: &SurfaceTree,
    x: &[Vec3],
    buffers: BallBuffers<'_>,
    out: &mut Vec<SoftRigidRow>,
) {
    let Some((radius, centres)) = balls_of(shape.collider.shape(), shape.pose) else {
        return;
    };
    let BallBuffers {
        triangles: hits,
        ball_edges: edge_hits,
        edges,
        crossings,
    } = buffers;
    let features = surface.triangle_count() + surface.edge_count();
    for (end, c) in centres.into_iter().enumerate() {
        if let Some(c) = c {
            ball_rows_at(
                shape,
                surface,
                x,
                (c, radius, end * features),
                (hits, edge_hits),
                out,
            );
        }
    }
    // A capsule's axis across a convex ridge (kind + 2): the ridge's edge-crossing row, at
    // the capsule's support point a(t) − r n.
    if let [Some(a0), Some(a1)] = centres {
        crossings.clear();
        surface.capsule_ridges(x, &[a0, a1], radius, shape.margin, edges, crossings);
        for hit in crossings.iter() {
            let key = (shape.key.0 + 2, shape.key.1, shape.key.2, hit.edge);
            out.push(SoftRigidRow::crossing(hit, shape.side, shape.friction, key));
        }
    }
}

/// The queries' buffers of [`ball_rows`], reused from step to step.
pub(in crate::scene) struct BallBuffers<'a> {
    /// The triangles under a ball.
    pub(in crate::scene) triangles: &'a mut Vec<TriangleHit>,
    /// The ridges' edges beside a ball.
    pub(in crate::scene) ball_edges: &'a mut Vec<(usize, BallOnSegment)>,
    /// Candidate edges near a capsule's axis.
    pub(in crate::scene) edges: &'a mut Vec<usize>,
    /// The ridges a capsule's axis lies across.
    pub(in crate::scene) crossings: &'a mut Vec<EdgeHit>,
}

/// The rows of one ball of centre `c` and radius `radius` (m), their keys' third index offset
/// by `offset` (module doc of [`ball_rows`]).
fn ball_rows_at(
    shape: &ShapeFaces<'_>,
    surface: &SurfaceTree,
    x: &[Vec3],
    (c, radius, offset): (Vec3, f64, usize),
    (hits, edge_hits): (&mut Vec<TriangleHit>, &mut Vec<(usize, BallOnSegment)>),
    out: &mut Vec<SoftRigidRow>,
) {
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
            key: (shape.key.0, shape.key.1, shape.key.2, offset + hit.triangle),
        });
    }
    edge_hits.clear();
    surface.ball_edges(x, c, radius, shape.margin, edge_hits);
    let triangles = surface.triangle_count();
    for &(edge, hit) in edge_hits.iter() {
        let n = hit.normal;
        out.push(SoftRigidRow {
            soft: SoftPoint::Edge {
                nodes: surface.edge(edge).nodes,
                weights: [1.0 - hit.s, hit.s],
            },
            soft_sign: -1.0,
            side: shape.side,
            point: c - radius * n,
            frame: contact_frame(&n),
            gap: hit.gap,
            error: Vec3::zeros(),
            friction: shape.friction,
            bilateral: false,
            key: (
                shape.key.0,
                shape.key.1,
                shape.key.2,
                offset + triangles + edge,
            ),
        });
    }
}
