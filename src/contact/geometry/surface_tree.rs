//! A soft body's boundary surface as a refitted bounding-volume tree of its triangles, and
//! the query both surface contacts use: the triangle of a surface that a node faces across a
//! thin gap (`self_contact`: a body against its own surface; `body_contact`: a body against
//! another body's surface).
//!
//! Tree: parry3d's `Bvh` over the triangles, each leaf the triangle's box grown by
//! `max(margin, thickness)`, built once and refitted every step (never rebuilt).
//!
//! Query ([`SurfaceTree::facing_triangle`]): a triangle T is a contact for a node at p when p
//! projects **onto** T (every barycentric weight ≥ −[`WEIGHT_TOLERANCE`], so a node right
//! above an edge or a vertex of the other surface, as when two meshes with matching nodes
//! touch, still finds a triangle; a node beyond the surface's edges and corners, in the
//! Voronoi region of a convex edge or vertex, does not), the node's own surface normal faces T's (n_node · n_T < 0: the two
//! sides of a gap, not neighbours on one flat face), and the signed gap Φ = n_T · (p − c) lies
//! in [−thickness, margin]; of several such triangles the one of smallest |Φ| is kept.
//! `thickness` (m), the deepest penetration still recognised, is a quarter of the mean surface
//! edge length at rest: a node behind a face by more than that may well be outside the body
//! beside it (a signed distance to one face is not an inside test). Contacts are detected a
//! step ahead (within the margin), so penetrations stay far below it. n_T is T's outward unit
//! normal at the current positions (z of the frame, [`contact_frame`]).
//!
//! Edge query ([`SurfaceTree::crossing_edges`]): the surface edges (each the side of one or
//! two triangles) that a rigid shape's edge crosses within the margin (`contact::geometry::edge_edge`):
//! the leaves overlapping the rigid edge's bounding box name the candidate triangles, whose
//! edges are tested in increasing edge index. A crossing is kept when its parameters lie
//! strictly inside both edges, its normal n (turned out of the body: towards the sum of the
//! edge's triangles' normals) lies in the edge's normal arc (between its triangles' normals,
//! [`SOFT_ARC_SLACK`] wider: a surface edge is nearly flat), −n lies in the rigid edge's arc
//! (between its faces' outward normals: the rigid edge is the shape's deepest feature along
//! −n) at least [`RIGID_ARC_SLACK`] from both its ends, and Φ lies in [−thickness, margin].
//! A crossing whose −n is a face's normal belongs to that face lying flat on the surface,
//! which rests on the nodes' and the corners' rows; its edge rows would lie in one plane with
//! theirs (the same support, an NCP far more degenerate). Those crossings are
//! [`SurfaceTree::face_on_crossings`] (−n within [`RIGID_ARC_SLACK`] of a face's normal, the
//! same tests on Φ and the soft arc), rows only where no node or corner holds the face
//! (`contact::geometry::flat_face`, `scene::step::contact::flat_face_rows`).
//!
//! Ball query ([`SurfaceTree::ball_triangles`]): every triangle onto which a rigid ball's
//! centre projects and whose plane the ball reaches, Φ = n_T · (c − a) − r in
//! [−thickness, margin] (`scene::step::contact::ball_rows`); the ridges beside a ball
//! ([`SurfaceTree::ball_edges`]) and across a capsule's axis
//! ([`SurfaceTree::capsule_ridges`]).

use parry3d_f64::bounding_volume::Aabb;
use parry3d_f64::math::Vector as GlamVector;
use parry3d_f64::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};

use super::detection::{contact_frame, validate_margin};
use super::edge_edge::{EdgeCrossing, angle_between, edge_crossing, within_arc};
use crate::error::Result;
use crate::math::{Mat3, Vec3};

mod ball_queries;

/// How far outside a triangle (in barycentric weight) a node's projection may fall and still
/// count as on it: round-off for a node above an edge or vertex.
pub const WEIGHT_TOLERANCE: f64 = 1e-9;

/// How far (rad) a crossing's normal may lie outside a soft surface edge's normal arc: a
/// slightly bent surface still carries the rigid edge.
pub const SOFT_ARC_SLACK: f64 = 0.25;

/// How far (rad) inside a rigid edge's normal arc the reversed normal of a crossing must lie:
/// away from the normals of the edge's faces (a face lying flat on the surface).
pub const RIGID_ARC_SLACK: f64 = 0.05;

/// Round-off allowance (rad) of the test that −n lies in a rigid edge's arc.
const ARC_ROUND_OFF: f64 = 1e-9;

/// An edge of the surface: its two nodes (increasing) and the triangles it bounds (the same
/// one twice for an edge of an open surface).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SurfaceEdge {
    /// The nodes, increasing.
    pub nodes: [usize; 2],
    /// The triangles on its two sides (indices in the tree's list).
    pub triangles: [usize; 2],
}

impl SurfaceEdge {
    /// The triangle across the edge from triangle `k` (one of its two), `None` on an open
    /// surface's rim.
    pub fn across(&self, k: usize) -> Option<usize> {
        let other = if self.triangles[0] == k {
            self.triangles[1]
        } else {
            self.triangles[0]
        };
        (other != k).then_some(other)
    }

    /// The place (0–2) in `triangle` (its nodes) of its vertex off the edge.
    pub fn vertex_off(&self, triangle: &[usize; 3]) -> usize {
        (0..3)
            .find(|&v| !self.nodes.contains(&triangle[v]))
            .expect("a triangle has a vertex off each of its edges")
    }
}

/// Where a rigid edge crosses a surface edge ([`SurfaceTree::crossing_edges`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EdgeHit {
    /// Index of the surface edge ([`SurfaceTree::edge`]).
    pub edge: usize,
    /// Its nodes p₀, p₁ (the soft point is (1 − s) p₀ + s p₁).
    pub nodes: [usize; 2],
    /// The crossing (normal out of the body, towards the rigid edge).
    pub crossing: EdgeCrossing,
}

/// Where a node meets a surface triangle ([`SurfaceTree::facing_triangle`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TriangleHit {
    /// Index of the triangle in the tree's list.
    pub triangle: usize,
    /// The triangle's vertices (nodes of the surface's body).
    pub vertices: [usize; 3],
    /// Barycentric weights of the contact point c on the triangle (sum 1, each ≥
    /// −`WEIGHT_TOLERANCE`, but for a ball held beyond a concave crease,
    /// [`SurfaceTree::ball_triangles`]).
    pub weights: [f64; 3],
    /// Signed gap Φ = n_T · (p − c) (m).
    pub gap: f64,
    /// Contact frame `[t₁, t₂, n_T]`.
    pub frame: Mat3,
}

/// A point's projection onto the plane of a triangle (a, b, c): the triangle's unit normal
/// n_T = (b − a) × (c − a)/‖…‖, the barycentric weights of the projection (sub-triangle
/// areas along n_T over the triangle's, sum 1; negative outside the triangle) and the signed
/// gap Φ = n_T · (p − a) (m). `contact::TriangleHitDerivative` differentiates it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TriangleProjection {
    /// Unit normal n_T (right-handed around a, b, c).
    pub normal: Vec3,
    /// Barycentric weights (w_a, w_b, w_c) of the projection of p.
    pub weights: [f64; 3],
    /// Signed gap Φ (m).
    pub gap: f64,
}

/// The projection of `p` (m) onto the triangle `corners` = (a, b, c) (m)
/// ([`TriangleProjection`]); `None` for a degenerate triangle (zero or non-finite area).
pub fn project_on_triangle(p: &Vec3, corners: &[Vec3; 3]) -> Option<TriangleProjection> {
    let [a, b, c] = *corners;
    let cross = (b - a).cross(&(c - a));
    let area2 = cross.norm();
    if !(area2 > 0.0) || !area2.is_finite() {
        return None;
    }
    let n = cross / area2;
    let wa = (b - p).cross(&(c - p)).dot(&n) / area2;
    let wb = (c - p).cross(&(a - p)).dot(&n) / area2;
    Some(TriangleProjection {
        normal: n,
        weights: [wa, wb, 1.0 - wa - wb],
        gap: n.dot(&(p - a)),
    })
}

/// One body's outward-oriented boundary triangles, their refitted tree and the area-weighted
/// node normals of the last refit.
#[derive(Clone, Default)]
pub struct SurfaceTree {
    triangles: Vec<[usize; 3]>,
    edges: Vec<SurfaceEdge>,
    triangle_edges: Vec<[usize; 3]>,
    thickness: f64,
    node_normals: Vec<Vec3>,
    /// Each triangle's outward unit normal at the last refit (None when degenerate).
    triangle_normals: Vec<Option<Vec3>>,
    bvh: Bvh,
    workspace: BvhWorkspace,
    leaves: Vec<Aabb>,
}

impl std::fmt::Debug for SurfaceTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SurfaceTree")
            .field("triangles", &self.triangles.len())
            .field("thickness", &self.thickness)
            .finish()
    }
}

fn to_glam(v: Vec3) -> GlamVector {
    v.into()
}

impl SurfaceTree {
    /// The surface of outward-oriented `triangles` of a body whose rest node positions are
    /// `rest` (m); the thickness is a quarter of their mean edge length.
    pub fn new(triangles: Vec<[usize; 3]>, rest: &[Vec3]) -> SurfaceTree {
        let edges: f64 = triangles
            .iter()
            .map(|t| {
                (0..3)
                    .map(|e| (rest[t[(e + 1) % 3]] - rest[t[e]]).norm())
                    .sum::<f64>()
            })
            .sum();
        let thickness = if triangles.is_empty() {
            0.0
        } else {
            0.25 * edges / (3 * triangles.len()) as f64
        };
        // Each edge once, numbered as first met along the triangles.
        let mut index = std::collections::HashMap::new();
        let mut edge_list: Vec<SurfaceEdge> = Vec::new();
        let mut triangle_edges = Vec::with_capacity(triangles.len());
        for (k, t) in triangles.iter().enumerate() {
            let mut ids = [0; 3];
            for (e, id) in ids.iter_mut().enumerate() {
                let (a, b) = (t[e], t[(e + 1) % 3]);
                let nodes = [a.min(b), a.max(b)];
                *id = match index.entry(nodes) {
                    std::collections::hash_map::Entry::Occupied(o) => {
                        let i: usize = *o.get();
                        edge_list[i].triangles[1] = k;
                        i
                    }
                    std::collections::hash_map::Entry::Vacant(v) => {
                        edge_list.push(SurfaceEdge {
                            nodes,
                            triangles: [k, k],
                        });
                        *v.insert(edge_list.len() - 1)
                    }
                };
            }
            triangle_edges.push(ids);
        }
        SurfaceTree {
            triangles,
            edges: edge_list,
            triangle_edges,
            thickness,
            node_normals: vec![Vec3::zeros(); rest.len()],
            ..Default::default()
        }
    }

    /// The deepest penetration recognised (m).
    pub fn thickness(&self) -> f64 {
        self.thickness
    }

    /// Whether the surface has no triangle.
    pub fn is_empty(&self) -> bool {
        self.triangles.is_empty()
    }

    /// Surface edge `k` (numbered as first met along the triangles).
    pub fn edge(&self, k: usize) -> SurfaceEdge {
        self.edges[k]
    }

    /// Number of surface edges.
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }

    /// The area-weighted outward normal of `node` at the last refit (not normalised; zero
    /// for a node on no triangle).
    pub fn node_normal(&self, node: usize) -> Vec3 {
        self.node_normals[node]
    }

    /// Moves the surface to `positions` (m, the body's nodes): node and triangle normals, leaf
    /// boxes grown by `max(margin, thickness)` (m), and a refit of the tree (built on the
    /// first call).
    ///
    /// Errors when `margin` is negative or not finite.
    pub fn refit(&mut self, positions: &[Vec3], margin: f64) -> Result<()> {
        validate_margin(margin)?;
        assert_eq!(
            positions.len(),
            self.node_normals.len(),
            "SurfaceTree::refit: one position per node"
        );
        self.node_normals
            .iter_mut()
            .for_each(|n| *n = Vec3::zeros());
        let grow = Vec3::repeat(margin.max(self.thickness));
        self.leaves.clear();
        self.triangle_normals.clear();
        for t in &self.triangles {
            let [a, b, c] = t.map(|i| positions[i]);
            let n = (b - a).cross(&(c - a));
            for &i in t {
                self.node_normals[i] += n;
            }
            self.triangle_normals.push(n.try_normalize(0.0));
            let lo = a.inf(&b).inf(&c) - grow;
            let hi = a.sup(&b).sup(&c) + grow;
            self.leaves.push(Aabb::new(to_glam(lo), to_glam(hi)));
        }
        if self.triangles.is_empty() {
            return Ok(());
        }
        if self.bvh.is_empty() {
            self.bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &self.leaves);
        } else {
            for (i, aabb) in self.leaves.iter().enumerate() {
                self.bvh.insert_or_update_partially(*aabb, i as u32, 0.0);
            }
            self.bvh.refit(&mut self.workspace);
        }
        Ok(())
    }

    /// The surface edges that the rigid edge `rigid` = (a₀, a₁) (m), whose faces' outward unit
    /// normals are `rigid_normals`, crosses within `margin` (m) at `positions` (this surface's
    /// nodes, as at the last [`Self::refit`], whose triangle normals it reads), by the rule of
    /// the module doc, appended to `out` in increasing edge index; `scratch` holds the
    /// candidate edges.
    pub fn crossing_edges(
        &self,
        positions: &[Vec3],
        rigid: &[Vec3; 2],
        rigid_normals: &[Vec3; 2],
        margin: f64,
        scratch: &mut Vec<usize>,
        out: &mut Vec<EdgeHit>,
    ) {
        self.crossings(positions, rigid, margin, scratch, out, |n| {
            within_arc(&-n, &rigid_normals[0], &rigid_normals[1], ARC_ROUND_OFF)
                && rigid_normals
                    .iter()
                    .all(|m| angle_between(&-n, m) >= RIGID_ARC_SLACK)
        });
    }

    /// The face-on crossings of the rigid edge `rigid` = (a₀, a₁) (m), whose faces' outward
    /// unit normals are `rigid_normals`: the crossings [`Self::crossing_edges`] leaves out
    /// because −n lies within [`RIGID_ARC_SLACK`] of one of the two face normals (a face lying
    /// flat on the surface; `contact::geometry::flat_face`), with the same tests on the gap and the soft
    /// edge's arc, appended to `out` in increasing edge index.
    pub fn face_on_crossings(
        &self,
        positions: &[Vec3],
        rigid: &[Vec3; 2],
        rigid_normals: &[Vec3; 2],
        margin: f64,
        scratch: &mut Vec<usize>,
        out: &mut Vec<EdgeHit>,
    ) {
        self.crossings(positions, rigid, margin, scratch, out, |n| {
            rigid_normals
                .iter()
                .any(|m| angle_between(&-n, m) < RIGID_ARC_SLACK)
        });
    }

    /// The crossings of `rigid` with the surface edges whose gap lies in [−thickness, margin]
    /// and whose normal n lies in the soft edge's arc, kept when `rigid_side(n)` holds.
    fn crossings(
        &self,
        positions: &[Vec3],
        rigid: &[Vec3; 2],
        margin: f64,
        scratch: &mut Vec<usize>,
        out: &mut Vec<EdgeHit>,
        rigid_side: impl Fn(&Vec3) -> bool,
    ) {
        if self.triangles.is_empty() {
            return;
        }
        self.edges_near(rigid, 0.0, scratch);
        for &k in scratch.iter() {
            let edge = self.edges[k];
            let (Some(n1), Some(n2)) = (
                self.triangle_normals[edge.triangles[0]],
                self.triangle_normals[edge.triangles[1]],
            ) else {
                continue;
            };
            let soft = edge.nodes.map(|i| positions[i]);
            let Some(crossing) = edge_crossing(&soft, rigid, &(n1 + n2)) else {
                continue;
            };
            let n = crossing.normal;
            if crossing.gap > margin
                || crossing.gap < -self.thickness
                || !within_arc(&n, &n1, &n2, SOFT_ARC_SLACK)
                || !rigid_side(&n)
            {
                continue;
            }
            out.push(EdgeHit {
                edge: k,
                nodes: edge.nodes,
                crossing,
            });
        }
    }

    /// Into `out`, in increasing index, the edges of the triangles whose bounding boxes
    /// (inflated at the last refit) meet the box of the segment `segment` (m) grown by
    /// `grow` (m) on every side.
    fn edges_near(&self, segment: &[Vec3; 2], grow: f64, out: &mut Vec<usize>) {
        out.clear();
        for leaf in self.bvh.intersect_aabb(&segment_box(segment, grow)) {
            out.extend_from_slice(&self.triangle_edges[leaf as usize]);
        }
        out.sort_unstable();
        out.dedup();
    }

    /// Whether `point` (m) projects onto the plane of `edge`'s triangle `triangle` beyond the
    /// edge (the weight of the triangle's vertex off the edge below −`WEIGHT_TOLERANCE`), at
    /// `positions`; false for a degenerate triangle.
    fn beyond_edge(
        &self,
        positions: &[Vec3],
        edge: &SurfaceEdge,
        triangle: usize,
        point: &Vec3,
    ) -> bool {
        let t = self.triangles[triangle];
        let far = edge.vertex_off(&t);
        project_on_triangle(point, &t.map(|i| positions[i]))
            .is_some_and(|p| p.weights[far] < -WEIGHT_TOLERANCE)
    }

    /// Triangle `k`'s nodes (outward-oriented).
    pub fn triangle(&self, k: usize) -> [usize; 3] {
        self.triangles[k]
    }

    /// Triangle `k`'s outward unit normal at the last [`Self::refit`] (`None` when degenerate).
    pub fn triangle_normal(&self, k: usize) -> Option<Vec3> {
        self.triangle_normals[k]
    }

    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.triangles.len()
    }

    /// The triangle a node at `p` (m) with outward surface normal `p_normal` faces within
    /// `margin` (m) at `positions` (this surface's nodes, as at the last [`Self::refit`]),
    /// by the rule of the module doc; triangles for which `skip` is true are ignored.
    pub fn facing_triangle(
        &self,
        positions: &[Vec3],
        p: Vec3,
        p_normal: Vec3,
        margin: f64,
        skip: impl Fn(&[usize; 3]) -> bool,
    ) -> Option<TriangleHit> {
        if self.triangles.is_empty() {
            return None;
        }
        let query = Aabb::new(to_glam(p), to_glam(p));
        let mut best: Option<TriangleHit> = None;
        for leaf in self.bvh.intersect_aabb(&query) {
            let k = leaf as usize;
            let t = self.triangles[k];
            if skip(&t) {
                continue;
            }
            let corners = t.map(|i| positions[i]);
            let [a, b, c] = corners;
            if p_normal.dot(&(b - a).cross(&(c - a))) >= 0.0 {
                continue;
            }
            let Some(projection) = project_on_triangle(&p, &corners) else {
                continue;
            };
            let [wa, wb, wc] = projection.weights;
            if !(wa.min(wb).min(wc) >= -WEIGHT_TOLERANCE) {
                continue;
            }
            let n = projection.normal;
            let gap = projection.gap;
            if gap > margin || gap < -self.thickness {
                continue;
            }
            if best.is_none_or(|s| gap.abs() < s.gap.abs()) {
                best = Some(TriangleHit {
                    triangle: k,
                    vertices: t,
                    weights: [wa, wb, wc],
                    gap,
                    frame: contact_frame(&n),
                });
            }
        }
        best
    }
}

/// The box around the segment `segment` (m), grown by `grow` (m) on every side, as a BVH
/// query.
fn segment_box(segment: &[Vec3; 2], grow: f64) -> Aabb {
    let half = to_glam(Vec3::repeat(grow));
    Aabb::new(
        to_glam(segment[0].inf(&segment[1])) - half,
        to_glam(segment[0].sup(&segment[1])) + half,
    )
}

#[cfg(test)]
mod tests;
