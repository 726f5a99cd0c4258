//! Self-contact of one soft body: its surface nodes against its own surface triangles that do
//! not contain them, so that folds of a body, or separate pieces of one mesh, do not pass
//! through each other. One factorisation per body serves it: the rows of `H_c` are
//! `frame ᵀ (v_node − Σ wᵢ v_triangle,i)`, the node's velocity relative to the barycentric
//! point of the triangle.
//!
//! Detection: a BVH (parry3d's `Bvh`) over the surface triangles, each leaf the triangle's box
//! grown by `max(margin, thickness)`, refitted every step (never rebuilt), queried with each
//! candidate node. A (node, triangle) pair is a contact when the node projects **inside** the
//! triangle (all barycentric weights > 0; edge and vertex regions are left to the
//! neighbouring triangles), the node's surface normal faces the triangle's (n_node · n_T < 0:
//! opposite sides of a gap, not neighbours on one flat face), and the signed gap
//! Φ = n_T · (p − c) lies in [−thickness, margin]; a node keeps only its triangle of smallest
//! |Φ|. `thickness` (m), the deepest penetration still recognised, is a quarter of the mean
//! surface edge length at rest: a node behind a face by more than that may well be outside
//! the body beside it (a signed distance to one face is not an inside test). Contacts are
//! detected a step ahead (within the margin), so penetrations stay far below it.
//! The normal n_T is the triangle's outward unit normal at the current positions (z of the
//! frame, [`contact_frame`]).

use parry3d_f64::bounding_volume::Aabb;
use parry3d_f64::math::Vector as GlamVector;
use parry3d_f64::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};

use super::delassus::ContactJacobian;
use super::detection::contact_frame;
use crate::error::{Error, Result};
use crate::math::{Mat3, Vec3};

/// One self-contact: a surface node against a point inside one of the body's own surface
/// triangles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SelfContact {
    /// The node.
    pub node: usize,
    /// Index of the triangle in the detector's list.
    pub triangle: usize,
    /// The triangle's vertices.
    pub vertices: [usize; 3],
    /// Barycentric weights of the contact point c on the triangle (sum 1, all > 0).
    pub weights: [f64; 3],
    /// Signed gap Φ = n_T · (p − c) (m).
    pub gap: f64,
    /// Contact frame `[t₁, t₂, n_T]`.
    pub frame: Mat3,
}

/// The self-contact detector of one body and its reusable buffers.
#[derive(Clone, Default)]
pub struct SelfContactDetector {
    triangles: Vec<[usize; 3]>,
    thickness: f64,
    node_normals: Vec<Vec3>,
    bvh: Bvh,
    workspace: BvhWorkspace,
    leaves: Vec<Aabb>,
}

impl std::fmt::Debug for SelfContactDetector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SelfContactDetector")
            .field("triangles", &self.triangles.len())
            .field("thickness", &self.thickness)
            .finish()
    }
}

fn to_glam(v: Vec3) -> GlamVector {
    v.into()
}

impl SelfContactDetector {
    /// A detector for the outward-oriented surface `triangles` of a body whose rest node
    /// positions are `rest` (m); the thickness is a quarter of their mean edge length.
    pub fn new(triangles: Vec<[usize; 3]>, rest: &[Vec3]) -> SelfContactDetector {
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
        SelfContactDetector {
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

    /// Appends to `out` the self-contacts of the `candidates` (surface nodes) at `positions`
    /// within `margin` (m, ≥ 0), one per node at most, in node order (module doc). Refits the
    /// triangle tree first.
    pub fn detect(
        &mut self,
        positions: &[Vec3],
        candidates: &[usize],
        margin: f64,
        out: &mut Vec<SelfContact>,
    ) -> Result<()> {
        if !(margin >= 0.0) || !margin.is_finite() {
            return Err(Error::invalid(
                "contact margin",
                format!("{margin} must be finite and non-negative"),
            ));
        }
        if self.triangles.is_empty() {
            return Ok(());
        }
        // Node normals (area-weighted) and the triangle boxes.
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
        if self.bvh.is_empty() {
            self.bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &self.leaves);
        } else {
            for (i, aabb) in self.leaves.iter().enumerate() {
                self.bvh.insert_or_update_partially(*aabb, i as u32, 0.0);
            }
            self.bvh.refit(&mut self.workspace);
        }
        for &node in candidates {
            let p = positions[node];
            let query = Aabb::new(to_glam(p), to_glam(p));
            let node_normal = self.node_normals[node];
            let mut best: Option<SelfContact> = None;
            for leaf in self.bvh.intersect_aabb(&query) {
                let k = leaf as usize;
                let t = self.triangles[k];
                if t.contains(&node) {
                    continue;
                }
                let [a, b, c] = t.map(|i| positions[i]);
                let cross = (b - a).cross(&(c - a));
                let area2 = cross.norm();
                if !(area2 > 0.0) || node_normal.dot(&cross) >= 0.0 {
                    continue;
                }
                let n = cross / area2;
                // Barycentric weights of p's projection (sub-triangle areas along n).
                let wa = (b - p).cross(&(c - p)).dot(&n) / area2;
                let wb = (c - p).cross(&(a - p)).dot(&n) / area2;
                let wc = 1.0 - wa - wb;
                if !(wa > 0.0 && wb > 0.0 && wc > 0.0) {
                    continue;
                }
                let gap = n.dot(&(p - a));
                if gap > margin || gap < -self.thickness {
                    continue;
                }
                if best.is_none_or(|s| gap.abs() < s.gap.abs()) {
                    best = Some(SelfContact {
                        node,
                        triangle: k,
                        vertices: t,
                        weights: [wa, wb, wc],
                        gap,
                        frame: contact_frame(&n),
                    });
                }
            }
            out.extend(best);
        }
        Ok(())
    }
}

/// Appends the 3 rows of `H_c` of each self-contact (module doc) to `jacobian`.
pub fn push_self_contacts(contacts: &[SelfContact], jacobian: &mut ContactJacobian) -> Result<()> {
    for c in contacts {
        let [a, b, d] = c.vertices;
        let [wa, wb, wd] = c.weights;
        jacobian.push_point_contact(&c.frame, &[(c.node, 1.0), (a, -wa), (b, -wb), (d, -wd)])?;
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
            let mut det = SelfContactDetector::new(mesh.boundary_triangles(), &x);
            assert!((det.thickness() - 0.25 * (2.0 + 2f64.sqrt()) / 3.0).abs() < 1e-12);
            let all: Vec<usize> = (0..x.len()).collect();
            let mut out = Vec::new();
            det.detect(&x, &all, 0.05, &mut out).unwrap();
            // Of the upper cube's bottom corners only (0.2, 0.1) projects inside the lower
            // cube's top face [0, 1]², and of the lower cube's top corners only (1, 1) inside
            // the upper cube's bottom face [0.2, 1.2] × [0.1, 1.1].
            let found: Vec<(usize, f64)> = out.iter().map(|c| (c.node, c.gap)).collect();
            assert_eq!(out.len(), expect, "gap {gap}: {found:?}");
            for c in &out {
                assert!((c.gap - gap).abs() < 1e-12, "{c:?}");
                let w = c.weights;
                assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-14);
                // The contact point is the node's projection.
                let cp: Vec3 = (0..3).map(|i| w[i] * x[c.vertices[i]]).sum();
                assert!((x[c.node] - cp - c.gap * c.frame.column(2)).norm() < 1e-12);
            }
            // A node moved: the tree is refitted and finds the same pairs shifted.
            let shifted: Vec<Vec3> = x.iter().map(|p| p + Vec3::new(0.0, 0.0, 0.5)).collect();
            let mut again = Vec::new();
            det.detect(&shifted, &all, 0.05, &mut again).unwrap();
            assert_eq!(again.len(), out.len());
            let mut jac = ContactJacobian::new(x.len());
            push_self_contacts(&out, &mut jac).unwrap();
            assert_eq!(jac.contact_count(), expect);
        }
    }
}
