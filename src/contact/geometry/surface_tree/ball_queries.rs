//! The surface's queries for a rigid ball resting on it (`scene::step::contact::ball_rows`): the triangles
//! whose planes hold it, and the ridges' edges that hold it where no triangle does; and the
//! ridges a capsule's axis lies across.

use super::{
    EdgeHit, SurfaceTree, TriangleHit, TriangleProjection, WEIGHT_TOLERANCE, project_on_triangle,
    segment_box,
};
use crate::contact::geometry::ball_segment::BallOnSegment;
use crate::contact::geometry::detection::contact_frame;
use crate::contact::geometry::edge_edge::edge_crossing;
use crate::math::Vec3;

impl SurfaceTree {
    /// Calls `visit` with each triangle whose bounding box (inflated at the last refit) meets
    /// the box of half-side `radius` (m) around `centre` (m), at `positions`: its index, its
    /// vertices and the centre's projection onto its plane (degenerate triangles left out).
    fn near_ball(
        &self,
        positions: &[Vec3],
        centre: Vec3,
        radius: f64,
        mut visit: impl FnMut(usize, [usize; 3], TriangleProjection),
    ) {
        if self.triangles.is_empty() {
            return;
        }
        for leaf in self.bvh.intersect_aabb(&segment_box(&[centre; 2], radius)) {
            let k = leaf as usize;
            let t = self.triangles[k];
            if let Some(projection) = project_on_triangle(&centre, &t.map(|i| positions[i])) {
                visit(k, t, projection);
            }
        }
    }

    /// The triangles a rigid ball (centre `centre`, radius `radius`, m) rests on within
    /// `margin` (m) at `positions` (this surface's nodes, as at the last [`Self::refit`]),
    /// appended to `out` in the tree's order: those onto which the centre projects (weights
    /// ≥ −`WEIGHT_TOLERANCE`), or projects less than `radius` beyond one edge where T meets its
    /// neighbour in a concave crease (T's plane runs on below the neighbour, so the ball is
    /// held by T's plane before it reaches T: `Self::beyond_concave_edge`), with the ball's gap
    /// to their plane, Φ = n_T · (centre − a) − radius, in [−thickness, margin]. Each hit's
    /// weights are the centre's projection's (one negative beyond a crease), its gap Φ, its
    /// frame's z the outward normal n_T (the ball's support point towards T is
    /// centre − radius n_T, `scene::step::contact::ball_rows`).
    pub fn ball_triangles(
        &self,
        positions: &[Vec3],
        centre: Vec3,
        radius: f64,
        margin: f64,
        out: &mut Vec<TriangleHit>,
    ) {
        self.near_ball(positions, centre, radius, |k, t, projection| {
            let [wa, wb, wc] = projection.weights;
            let gap = projection.gap - radius;
            let onto = wa.min(wb).min(wc) >= -WEIGHT_TOLERANCE
                || self.beyond_concave_edge(positions, k, &centre, &projection, radius);
            if onto && gap <= margin && gap >= -self.thickness {
                out.push(TriangleHit {
                    triangle: k,
                    vertices: t,
                    weights: [wa, wb, wc],
                    gap,
                    frame: contact_frame(&projection.normal),
                });
            }
        });
    }

    /// Whether `centre` (m), whose `projection` onto triangle `k` lies outside it, lies beyond
    /// exactly one of its edges, less than `radius` (m) beyond it, where triangle `k` meets
    /// its neighbour in a concave crease: the neighbour's far vertex is above triangle `k`'s
    /// plane (by more than 1e-9 of the edge's length), so that plane runs on below the
    /// neighbour's face and a ball over the neighbour is held by it before it reaches `k`.
    fn beyond_concave_edge(
        &self,
        positions: &[Vec3],
        k: usize,
        centre: &Vec3,
        projection: &TriangleProjection,
        radius: f64,
    ) -> bool {
        let w = projection.weights;
        let mut outside = (0..3).filter(|&v| w[v] < -WEIGHT_TOLERANCE);
        let (Some(v), None) = (outside.next(), outside.next()) else {
            return false;
        };
        // The edge opposite vertex v joins vertices v + 1 and v + 2: edge (v + 1) % 3.
        let edge = self.edges[self.triangle_edges[k][(v + 1) % 3]];
        let Some(other) = edge.across(k) else {
            return false;
        };
        let [a, b] = edge.nodes.map(|i| positions[i]);
        let along = b - a;
        let length = along.norm();
        let foot = centre - projection.gap * projection.normal;
        let beyond = (foot - a).cross(&along).norm() / length;
        if !(beyond < radius) {
            return false;
        }
        let t = self.triangles[other];
        let far = t[edge.vertex_off(&t)];
        projection.normal.dot(&(positions[far] - a)) > 1e-9 * length
    }

    /// The surface edges a rigid ball (centre `centre`, radius `radius`, m) rests on within
    /// `margin` (m) at `positions`, where no triangle holds it (`Self::ball_triangles`):
    /// appended to `out` as (edge, [`BallOnSegment`]), each edge once, an edge beyond which
    /// the centre projects onto each of its triangles (the weight of each triangle's vertex
    /// off the edge < −`WEIGHT_TOLERANCE`: a convex ridge, or the surface's rim), whose point
    /// closest to the centre lies strictly between its nodes (a node's neighbourhood is the
    /// node's row), with the ball's gap to it in [−thickness, margin].
    pub fn ball_edges(
        &self,
        positions: &[Vec3],
        centre: Vec3,
        radius: f64,
        margin: f64,
        out: &mut Vec<(usize, BallOnSegment)>,
    ) {
        self.near_ball(positions, centre, radius, |k, _, projection| {
            for e in 0..3 {
                // Edge e joins vertices e and e + 1; the weight beyond it is vertex e + 2's.
                if projection.weights[(e + 2) % 3] >= -WEIGHT_TOLERANCE {
                    continue;
                }
                let id = self.triangle_edges[k][e];
                if out.iter().any(|(seen, _)| *seen == id) {
                    continue;
                }
                // Beyond it on the edge's other triangle too.
                let edge = self.edges[id];
                if edge
                    .across(k)
                    .is_some_and(|other| !self.beyond_edge(positions, &edge, other, &centre))
                {
                    continue;
                }
                let ends = edge.nodes.map(|i| positions[i]);
                let Some(hit) = BallOnSegment::new(&centre, &ends, radius, WEIGHT_TOLERANCE) else {
                    continue;
                };
                if hit.gap <= margin && hit.gap >= -self.thickness {
                    out.push((id, hit));
                }
            }
        });
    }

    /// The convex ridges a capsule's axis `axis` = (a₀, a₁) (m) lies across within its
    /// `radius` (m) plus `margin` (m) (the tree's boxes, inflated at the last refit, hold the
    /// margin, as for [`Self::ball_triangles`]), at `positions`, appended to `out` in increasing edge
    /// index: surface edges whose closest points to the axis, p(s) and a(t), lie strictly inside
    /// both (`contact::edge_crossing`, n out of the body), where a(t) projects beyond every
    /// triangle of the edge (a convex ridge, as for [`Self::ball_edges`]: along a flat or
    /// concave edge the capsule rests on its end balls' and the nodes' rows), with the
    /// capsule's gap Φ = n · (a(t) − p(s)) − radius in [−thickness, margin]. Each hit's
    /// crossing has that gap and, as its rigid point, the capsule's support point
    /// a(t) − radius n (`scene::step::contact::ball_rows`).
    pub fn capsule_ridges(
        &self,
        positions: &[Vec3],
        axis: &[Vec3; 2],
        radius: f64,
        margin: f64,
        scratch: &mut Vec<usize>,
        out: &mut Vec<EdgeHit>,
    ) {
        if self.triangles.is_empty() {
            return;
        }
        self.edges_near(axis, radius, scratch);
        for &k in scratch.iter() {
            let edge = self.edges[k];
            let Some(outward) = edge
                .triangles
                .iter()
                .map(|&t| self.triangle_normals[t])
                .try_fold(Vec3::zeros(), |sum, n| n.map(|n| sum + n))
            else {
                continue;
            };
            let soft = edge.nodes.map(|i| positions[i]);
            let Some(mut crossing) = edge_crossing(&soft, axis, &outward) else {
                continue;
            };
            let centre = crossing.rigid_point;
            let ridge = edge
                .triangles
                .iter()
                .all(|&t| self.beyond_edge(positions, &edge, t, &centre));
            crossing.gap -= radius;
            if !ridge || crossing.gap > margin || crossing.gap < -self.thickness {
                continue;
            }
            crossing.rigid_point = centre - radius * crossing.normal;
            out.push(EdgeHit {
                edge: k,
                nodes: edge.nodes,
                crossing,
            });
        }
    }
}
