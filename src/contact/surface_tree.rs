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

use parry3d_f64::bounding_volume::Aabb;
use parry3d_f64::math::Vector as GlamVector;
use parry3d_f64::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};

use super::detection::{contact_frame, validate_margin};
use crate::error::Result;
use crate::math::{Mat3, Vec3};

/// How far outside a triangle (in barycentric weight) a node's projection may fall and still
/// count as on it: round-off for a node above an edge or vertex.
pub const WEIGHT_TOLERANCE: f64 = 1e-9;

/// Where a node meets a surface triangle ([`SurfaceTree::facing_triangle`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TriangleHit {
    /// Index of the triangle in the tree's list.
    pub triangle: usize,
    /// The triangle's vertices (nodes of the surface's body).
    pub vertices: [usize; 3],
    /// Barycentric weights of the contact point c on the triangle (sum 1, each ≥
    /// −`WEIGHT_TOLERANCE`).
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
    thickness: f64,
    node_normals: Vec<Vec3>,
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
        SurfaceTree {
            triangles,
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

    /// The area-weighted outward normal of `node` at the last refit (not normalised; zero
    /// for a node on no triangle).
    pub fn node_normal(&self, node: usize) -> Vec3 {
        self.node_normals[node]
    }

    /// Moves the surface to `positions` (m, the body's nodes): node normals, leaf boxes grown
    /// by `max(margin, thickness)` (m), and a refit of the tree (built on the first call).
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
        for t in &self.triangles {
            let [a, b, c] = t.map(|i| positions[i]);
            let n = (b - a).cross(&(c - a));
            for &i in t {
                self.node_normals[i] += n;
            }
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
