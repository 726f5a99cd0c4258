//! The contact points of a soft body: its boundary nodes, or the vertices of a contact surface
//! given as a file of its own and embedded in the volume mesh (SOFA's collision model on a
//! `BarycentricMapping`: `[soft_body.contact] surface`, docs/scene-file.md "A contact surface
//! of its own"), whose triangles then stand for the boundary in self-contact and contact
//! between bodies.
//!
//! An embedded vertex p = Σ wᵢ x_{nᵢ} moves with its tetrahedron's affine field, so its row of
//! the contact Jacobian H_c is the frame's axes spread over the tetrahedron's nodes with the
//! weights wᵢ (paper 004 Eq. 5 with H_c = Fᵀ Σ wᵢ e_{nᵢ}), and the contact force λ acts on those
//! nodes as wᵢ F λ. Its gap and frame depend on the nodes through p only:
//! ∂Φ/∂x_{nᵢ} = wᵢ ∇_p Φ, ∂F/∂x_{nᵢ} = wᵢ ∂F/∂p.

use crate::actuator::EmbeddedPoint;
use crate::math::Vec3;

/// A contact surface embedded in a volume mesh: its vertices, each following its
/// tetrahedron's nodes, and its triangles over them (vertex indices).
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddedSurface {
    /// The vertices.
    pub points: Vec<EmbeddedPoint>,
    /// The triangles, oriented (normals out of the body).
    pub triangles: Vec<[usize; 3]>,
}

/// Which points of a soft body are its contact points (module doc). A contact's `node`
/// (`NodeContact::node`, `SelfContact::node`, a `TriangleHit`'s vertices) indexes them.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum ContactPoints {
    /// The nodes of the volume mesh's boundary: point i is node i.
    #[default]
    Nodes,
    /// The vertices of an embedded contact surface: point i follows the nodes of
    /// `points[i]` with its weights.
    Embedded(std::sync::Arc<EmbeddedSurface>),
}

/// The most node entries a row of H_c over contact points expands to: a point against a
/// triangle, four points of four nodes each.
pub const MAX_EXPANDED: usize = 16;

impl ContactPoints {
    /// The nodes and weights point `i` follows (`len` entries used: 1 for a node, 4 for an
    /// embedded vertex).
    pub fn weights(&self, i: usize) -> ([(usize, f64); 4], usize) {
        match self {
            ContactPoints::Nodes => ([(i, 1.0); 4], 1),
            ContactPoints::Embedded(s) => {
                let e = &s.points[i];
                (std::array::from_fn(|k| (e.nodes[k], e.weights[k])), 4)
            }
        }
    }

    /// The embedding of point `i`, `None` for a node.
    pub fn embedded(&self, i: usize) -> Option<&EmbeddedPoint> {
        match self {
            ContactPoints::Nodes => None,
            ContactPoints::Embedded(s) => Some(&s.points[i]),
        }
    }

    /// Whether the points are an embedded surface's vertices.
    pub fn is_embedded(&self) -> bool {
        matches!(self, ContactPoints::Embedded(_))
    }

    /// Point `i` of the nodal field `x` (positions in m, or velocities in m/s).
    #[inline]
    pub fn value(&self, x: &[Vec3], i: usize) -> Vec3 {
        match self {
            ContactPoints::Nodes => x[i],
            ContactPoints::Embedded(s) => s.points[i].position(x),
        }
    }

    /// The points of the nodal field `x`, into `out` (resized); empty for [`Self::Nodes`],
    /// whose points are `x` itself (see [`Self::field`]).
    pub fn fill(&self, x: &[Vec3], out: &mut Vec<Vec3>) {
        out.clear();
        if let ContactPoints::Embedded(s) = self {
            out.extend(s.points.iter().map(|e| e.position(x)));
        }
    }

    /// The points' field: `x` itself for nodes, else `filled` (from [`Self::fill`]).
    pub fn field<'a>(&self, x: &'a [Vec3], filled: &'a [Vec3]) -> &'a [Vec3] {
        match self {
            ContactPoints::Nodes => x,
            ContactPoints::Embedded(_) => filled,
        }
    }

    /// The contact candidates among the points: for nodes, those of `surface_nodes` that
    /// are free (`free(node)`); for an embedded surface, the vertices that follow at least
    /// one free node with a nonzero weight.
    pub fn candidates(&self, surface_nodes: &[usize], free: impl Fn(usize) -> bool) -> Vec<usize> {
        match self {
            ContactPoints::Nodes => surface_nodes.iter().copied().filter(|&n| free(n)).collect(),
            ContactPoints::Embedded(s) => (0..s.points.len())
                .filter(|&i| {
                    let e = &s.points[i];
                    (0..4).any(|k| e.weights[k] != 0.0 && free(e.nodes[k]))
                })
                .collect(),
        }
    }

    /// The entries `(point, weight)` of a row of H_c over contact points as entries over
    /// the nodes (`len` used; at most [`MAX_EXPANDED`]): each point's nodes with the point's
    /// weight times theirs.
    pub fn expand(&self, entries: &[(usize, f64)]) -> ([(usize, f64); MAX_EXPANDED], usize) {
        let mut out = [(0, 0.0); MAX_EXPANDED];
        let mut len = 0;
        for &(p, w) in entries {
            let (nodes, n) = self.weights(p);
            for &(node, e) in &nodes[..n] {
                out[len] = (node, w * e);
                len += 1;
            }
        }
        (out, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_embedded_point_is_its_weighted_nodes() {
        let e = EmbeddedPoint {
            nodes: [0, 1, 2, 3],
            weights: [0.1, 0.2, 0.3, 0.4],
        };
        let pts = ContactPoints::Embedded(
            EmbeddedSurface {
                points: vec![e],
                triangles: Vec::new(),
            }
            .into(),
        );
        let x = [
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(0.0, 0.0, 1.0),
        ];
        assert_eq!(pts.value(&x, 0), Vec3::new(0.2, 0.3, 0.4));
        let (w, len) = pts.weights(0);
        assert_eq!(len, 4);
        assert_eq!(w[2], (2, 0.3));
        // A vertex whose only nonzero weights are on fixed nodes is no candidate.
        assert_eq!(pts.candidates(&[], |n| n == 3), vec![0]);
        assert!(pts.candidates(&[], |n| n == 9).is_empty());
        let (rows, len) = pts.expand(&[(0, -2.0)]);
        assert_eq!(len, 4);
        assert_eq!(rows[3], (3, -0.8));
        let nodes = ContactPoints::Nodes;
        assert_eq!(nodes.value(&x, 1), x[1]);
        assert_eq!(nodes.expand(&[(2, 0.5), (1, -1.0)]).1, 2);
        assert_eq!(nodes.candidates(&[1, 2, 3], |n| n != 2), vec![1, 3]);
    }
}
