//! Tangents and cotangents of a scene's state: one nodal vector field for the positions
//! (m per unit of input) and one for the velocities (m/s per unit of input) per soft body,
//! and per rigid system (free body or robot) one vector for its configuration (in its
//! tangent space, `RigidSystem::displace`: joint coordinates, a free-flyer's centre and
//! rotation vector) and one for its velocity.

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

/// A tangent (or cotangent) of one rigid system's state (nv components each).
#[derive(Debug, Clone, PartialEq)]
pub struct RigidTangent {
    /// Configuration, in the system's tangent space (m, rad).
    pub q: Vec<f64>,
    /// Velocity (m/s, rad/s; a free-flyer's twist in its own frame).
    pub v: Vec<f64>,
}

/// A tangent (or cotangent) of a scene's state: one [`BodyTangent`] per soft body and one
/// [`RigidTangent`] per rigid system.
#[derive(Debug, Clone, PartialEq)]
pub struct StateTangent {
    /// Per soft body, in scene order.
    pub bodies: Vec<BodyTangent>,
    /// Per rigid system (free bodies and robots), in scene order; may be left empty for a
    /// zero rigid part.
    pub rigid: Vec<RigidTangent>,
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
            rigid: scene
                .rigid
                .systems
                .iter()
                .map(|s| RigidTangent {
                    q: vec![0.0; s.nv()],
                    v: vec![0.0; s.nv()],
                })
                .collect(),
        }
    }

    /// The rigid part of `(b − a) / span` (configurations by `RigidSystem::difference`),
    /// for finite differences.
    pub fn rigid_difference(scene: &Scene, a: &State, b: &State, span: f64) -> Vec<RigidTangent> {
        a.rigid
            .iter()
            .zip(&b.rigid)
            .zip(&scene.rigid.systems)
            .map(|((sa, sb), sys)| {
                let mut q = vec![0.0; sys.nv()];
                sys.difference(&sa.q, &sb.q, &mut q);
                RigidTangent {
                    q: q.iter().map(|d| d / span).collect(),
                    v: sa
                        .v
                        .iter()
                        .zip(&sb.v)
                        .map(|(x, y)| (y - x) / span)
                        .collect(),
                }
            })
            .collect()
    }

    /// Moves `state` by `scale` · self: soft positions and velocities added, rigid
    /// configurations displaced on their manifold (`RigidSystem::displace`), rigid
    /// velocities added (for finite differences).
    pub fn displace(&self, scene: &Scene, state: &mut State, scale: f64) {
        self.add_to(state, scale);
        for ((t, st), sys) in self
            .rigid
            .iter()
            .zip(&mut state.rigid)
            .zip(&scene.rigid.systems)
        {
            let delta: Vec<f64> = t.q.iter().map(|d| scale * d).collect();
            let q0 = st.q.clone();
            sys.displace(&q0, &delta, &mut st.q);
            for (v, d) in st.v.iter_mut().zip(&t.v) {
                *v += scale * d;
            }
        }
    }

    /// Adds `other` (same shapes; a rigid part left empty counts as zero) component by
    /// component.
    pub fn add(&mut self, other: &StateTangent) {
        for (a, b) in self.bodies.iter_mut().zip(&other.bodies) {
            for (x, y) in a.positions.iter_mut().zip(&b.positions) {
                *x += y;
            }
            for (x, y) in a.velocities.iter_mut().zip(&b.velocities) {
                *x += y;
            }
        }
        for (a, b) in self.rigid.iter_mut().zip(&other.rigid) {
            for (x, y) in a.q.iter_mut().zip(&b.q) {
                *x += y;
            }
            for (x, y) in a.v.iter_mut().zip(&b.v) {
                *x += y;
            }
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
            .sum::<f64>()
            + self
                .rigid
                .iter()
                .zip(&other.rigid)
                .map(|(a, b)| {
                    a.q.iter()
                        .zip(&b.q)
                        .chain(a.v.iter().zip(&b.v))
                        .map(|(x, y)| x * y)
                        .sum::<f64>()
                })
                .sum::<f64>()
    }

    /// All components flattened: per body, positions then velocities, xyz per node; then
    /// per rigid system, q then v.
    pub fn to_vec(&self) -> Vec<f64> {
        self.bodies
            .iter()
            .flat_map(|b| b.positions.iter().chain(&b.velocities))
            .flat_map(|p| [p.x, p.y, p.z])
            .chain(
                self.rigid
                    .iter()
                    .flat_map(|r| r.q.iter().chain(&r.v).copied()),
            )
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
