//! Tangents and cotangents of a scene's state: one nodal vector field for the positions
//! (m per unit of input) and one for the velocities (m/s per unit of input) per soft body.

use crate::linalg::DofMap;
use crate::math::Vec3;
use crate::scene::{Scene, State};

/// A tangent (or cotangent) of one soft body's state, one row per mesh node.
#[derive(Debug, Clone, PartialEq)]
pub struct BodyTangent {
    /// Position components.
    pub positions: Vec<Vec3>,
    /// Velocity components.
    pub velocities: Vec<Vec3>,
}

/// A tangent (or cotangent) of a scene's state: one [`BodyTangent`] per soft body.
#[derive(Debug, Clone, PartialEq)]
pub struct StateTangent {
    /// Per soft body, in scene order.
    pub bodies: Vec<BodyTangent>,
}

impl StateTangent {
    /// The zero tangent of `scene`'s state.
    pub fn zeros(scene: &Scene) -> StateTangent {
        StateTangent {
            bodies: scene
                .bodies
                .iter()
                .map(|b| BodyTangent {
                    positions: vec![Vec3::zeros(); b.node_count()],
                    velocities: vec![Vec3::zeros(); b.node_count()],
                })
                .collect(),
        }
    }

    /// The Euclidean inner product ⟨self, other⟩ over every position and velocity component.
    pub fn dot(&self, other: &StateTangent) -> f64 {
        self.bodies
            .iter()
            .zip(&other.bodies)
            .map(|(a, b)| {
                let p: f64 = a
                    .positions
                    .iter()
                    .zip(&b.positions)
                    .map(|(u, v)| u.dot(v))
                    .sum();
                let v: f64 = a
                    .velocities
                    .iter()
                    .zip(&b.velocities)
                    .map(|(u, v)| u.dot(v))
                    .sum();
                p + v
            })
            .sum()
    }

    /// All components flattened: per body, positions then velocities, xyz per node.
    pub fn to_vec(&self) -> Vec<f64> {
        self.bodies
            .iter()
            .flat_map(|b| b.positions.iter().chain(&b.velocities))
            .flat_map(|p| [p.x, p.y, p.z])
            .collect()
    }

    /// Adds `scale` · self to `state`'s positions and velocities (for finite differences).
    pub fn add_to(&self, state: &mut State, scale: f64) {
        for (t, s) in self.bodies.iter().zip(&mut state.bodies) {
            for (x, d) in s.positions.iter_mut().zip(&t.positions) {
                *x += scale * d;
            }
            for (v, d) in s.velocities.iter_mut().zip(&t.velocities) {
                *v += scale * d;
            }
        }
    }
}

/// Free-DOF components of a nodal field (fixed components dropped).
pub(crate) fn reduce_nodes(dofs: &DofMap, field: &[Vec3], out: &mut [f64]) {
    for (r, &full) in out.iter_mut().zip(dofs.free_dofs()) {
        *r = field[full / 3][full % 3];
    }
}

/// A nodal field from free-DOF components (fixed components zero).
pub(crate) fn expand_nodes(dofs: &DofMap, reduced: &[f64], out: &mut [Vec3]) {
    out.iter_mut().for_each(|p| *p = Vec3::zeros());
    for (r, &full) in reduced.iter().zip(dofs.free_dofs()) {
        out[full / 3][full % 3] = *r;
    }
}

/// Adds `scale` times the free components of a nodal field to a reduced vector.
pub(crate) fn add_reduced(dofs: &DofMap, field: &[Vec3], scale: f64, out: &mut [f64]) {
    for (r, &full) in out.iter_mut().zip(dofs.free_dofs()) {
        *r += scale * field[full / 3][full % 3];
    }
}
