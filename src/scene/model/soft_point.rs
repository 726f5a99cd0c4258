//! The soft side of a soft–rigid row (`scene::model::soft_rigid`): a node, or a point between nodes
//! with its weights.

use crate::actuator::EmbeddedPoint;
use crate::math::Vec3;

/// The soft side of a soft–rigid row: a node, or a point of a surface triangle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SoftPoint {
    /// A node (weight 1).
    Node(usize),
    /// The point Σ wᵢ xᵢ of a surface triangle.
    Face {
        /// The triangle's nodes.
        vertices: [usize; 3],
        /// Barycentric weights.
        weights: [f64; 3],
    },
    /// A vertex of the body's embedded contact surface (`contact::ContactPoints`): the point
    /// Σ wᵢ xᵢ of its tetrahedron's nodes.
    Embedded(EmbeddedPoint),
    /// The point (1 − s) x₀ + s x₁ of a surface edge.
    Edge {
        /// The edge's nodes.
        nodes: [usize; 2],
        /// Their weights (1 − s, s).
        weights: [f64; 2],
    },
}

impl SoftPoint {
    /// The point's velocity (m/s) or position (m) from the nodes' `v`.
    pub fn value(&self, v: &[Vec3]) -> Vec3 {
        match *self {
            SoftPoint::Node(n) => v[n],
            SoftPoint::Face { vertices, weights } => {
                (0..3).map(|k| weights[k] * v[vertices[k]]).sum()
            }
            SoftPoint::Embedded(e) => e.position(v),
            SoftPoint::Edge { nodes, weights } => {
                weights[0] * v[nodes[0]] + weights[1] * v[nodes[1]]
            }
        }
    }
}
