//! The rows of a rigid face lying flat on a soft face where no vertex row holds it (mixed
//! rigid/soft scenes; row kinds 7, a collider's face, and 8, a fixed body's): a box or a convex
//! hull whose face lies face-on on a soft surface triangle (the face's outward normal m within
//! `contact::RIGID_ARC_SLACK` of −n) meets it in the face's polygon clipped by the triangle, and
//! when none of that region's vertices is a row already (no vertex of the soft edge's face-on
//! triangles lies over the face, no corner of the face over them:
//! `contact::face_meets_triangle_at_a_vertex`) the crossings of the face's edges with the
//! triangle's edges hold it (`SurfaceTree::face_on_crossings`): a thin key under a fingertip, a bar
//! narrower than the node spacing lying across a coarse block.
//!
//! Each crossing is a row of the edge rows' form (`scene::model::soft_rigid`, kinds 5 and 6), with
//! their geometry and derivatives (`contact::geometry::edge_edge`): the closest points p(s) of the soft
//! edge and a(t) of the rigid one, n = ±(e_soft × e_rigid)/‖…‖ out of the soft body (for two
//! edges lying in one plane, the plane's normal), Φ = n · (a(t) − p(s)):
//! σ = frameᵀ (v_rigid(a(t)) − (1 − s) v_p₀ − s v_p₁). Where a vertex row holds the region
//! (a box face wider than the node spacing, as in `scenes/cube_on_block.toml`), the face
//! rests on the vertex rows alone as before: the crossings would be coplanar with them, the
//! redundant support that stalls ADMM.

use crate::contact::{
    Collider, EdgeHit, FACE_ON_ANGLE, ShapePose, SurfaceTree, angle_between,
    face_meets_triangle_at_a_vertex,
};
use crate::math::Vec3;

use crate::scene::model::rigid::RigidSide;
use crate::scene::model::soft_rigid::SoftRigidRow;

/// One rigid shape meeting a soft surface (its faces lying flat, `flat_face_rows`; a ball,
/// `scene::step::contact::ball_rows`), and its rows' common parts.
pub(in crate::scene) struct ShapeFaces<'a> {
    /// The shape and its world pose at the start of the step.
    pub(in crate::scene) collider: &'a Collider,
    pub(in crate::scene) pose: &'a ShapePose,
    /// How far (m) a crossing's gap may be and still be a row (the reaches of both sides).
    pub(in crate::scene) margin: f64,
    /// The rigid side (`None`: a fixed body).
    pub(in crate::scene) side: Option<RigidSide>,
    /// Coulomb coefficient.
    pub(in crate::scene) friction: f64,
    /// The rows' kind (7 or 8; 9 or 10 for a ball) and the first two indices of their key (`SoftRigidRow::key`).
    pub(in crate::scene) key: (u8, usize, usize),
}

/// Appends to `out` the rows of `shape`'s faces lying flat on `surface` at the soft nodes'
/// positions `x` (m) where no vertex row holds them (module doc): shape edge by shape edge,
/// then surface edge; `edges` and `hits` are the query's buffers.
pub(in crate::scene) fn flat_face_rows(
    shape: &ShapeFaces<'_>,
    surface: &SurfaceTree,
    x: &[Vec3],
    edges: &mut Vec<usize>,
    hits: &mut Vec<EdgeHit>,
    out: &mut Vec<SoftRigidRow>,
) {
    let (pose, shape_edges) = (shape.pose, shape.collider.edges());
    let count = shape_edges.len();
    for (k, edge) in shape_edges.iter().enumerate() {
        let normals = edge.normals.map(|m| pose.rotation * m);
        hits.clear();
        surface.face_on_crossings(
            x,
            &edge.ends.map(|a| pose.transform_point(&a)),
            &normals,
            shape.margin,
            edges,
            hits,
        );
        for hit in hits.iter() {
            let c = hit.crossing;
            // The face lying flat: the one of the edge's two closer to −n.
            let closer = |j: usize| angle_between(&-c.normal, &normals[j]);
            let j = if closer(0) <= closer(1) { 0 } else { 1 };
            let held = surface.edge(hit.edge).triangles.iter().any(|&t| {
                surface
                    .triangle_normal(t)
                    .is_some_and(|n| angle_between(&n, &-normals[j]) <= FACE_ON_ANGLE)
                    && face_meets_triangle_at_a_vertex(
                        shape_edges,
                        pose,
                        &edge.normals[j],
                        &surface.triangle(t).map(|v| x[v]),
                    )
            });
            if held {
                continue;
            }
            let key = (shape.key.0, shape.key.1, shape.key.2, hit.edge * count + k);
            out.push(SoftRigidRow::crossing(hit, shape.side, shape.friction, key));
        }
    }
}
