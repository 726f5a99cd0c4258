//! Joint models: their configuration spaces (nq), tangent spaces (nv), transforms, motion
//! subspaces and the integration / difference maps on their manifolds (as Pinocchio).
//!
//! Every joint here has a motion subspace `S` that is constant in the child (joint) frame and a
//! zero bias `c = Ṡ q̇`; the child frame moves as `M_J(q ⊕ δ) = M_J(q) · exp6(S δ)`, so
//! derivatives "with respect to q" are taken in that local tangent space.

use super::spatial::{Se3, Vec6, spatial};
use crate::math::{Mat3, Vec3};
use nalgebra::{Quaternion, UnitQuaternion};

/// The kinds of joint (a closed set).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum JointKind {
    /// The world (joint 0): no motion.
    Universe,
    /// Rotation by the angle `q` (rad) about the unit `axis` of the joint frame (nq = nv = 1).
    Revolute {
        /// Unit rotation axis in the joint frame.
        axis: Vec3,
    },
    /// Unbounded rotation ("continuous" in URDF) about the unit `axis`, configuration
    /// `(cos θ, sin θ)` (nq = 2, nv = 1), as Pinocchio's `JointModelRevoluteUnbounded`.
    RevoluteUnbounded {
        /// Unit rotation axis in the joint frame.
        axis: Vec3,
    },
    /// Translation by `q` (m) along the unit `axis` (nq = nv = 1).
    Prismatic {
        /// Unit translation axis in the joint frame.
        axis: Vec3,
    },
    /// Ball joint: configuration the unit quaternion `(qx, qy, qz, qw)`, velocity the angular
    /// velocity in the child frame (nq = 4, nv = 3).
    Spherical,
    /// Free-flyer: configuration `(x, y, z, qx, qy, qz, qw)` (position in the parent frame and
    /// unit quaternion), velocity the twist `[v; ω]` in the child frame (nq = 7, nv = 6).
    FreeFlyer,
}

impl JointKind {
    /// Dimension of the configuration vector.
    pub fn nq(&self) -> usize {
        match self {
            JointKind::Universe => 0,
            JointKind::Revolute { .. } | JointKind::Prismatic { .. } => 1,
            JointKind::RevoluteUnbounded { .. } => 2,
            JointKind::Spherical => 4,
            JointKind::FreeFlyer => 7,
        }
    }

    /// Dimension of the velocity (tangent) vector.
    pub fn nv(&self) -> usize {
        match self {
            JointKind::Universe => 0,
            JointKind::Revolute { .. }
            | JointKind::Prismatic { .. }
            | JointKind::RevoluteUnbounded { .. } => 1,
            JointKind::Spherical => 3,
            JointKind::FreeFlyer => 6,
        }
    }
}

/// A joint of a [`Model`](super::Model): its kind and where its coordinates sit in `q` and `v`.
#[derive(Debug, Clone, PartialEq)]
pub struct JointModel {
    /// The joint's name (from URDF).
    pub name: String,
    /// What kind of joint.
    pub kind: JointKind,
    /// First index of the joint's coordinates in the configuration vector `q`.
    pub idx_q: usize,
    /// First index of the joint's coordinates in the velocity vector `v`.
    pub idx_v: usize,
}

/// Rotation of the unit quaternion stored as `(x, y, z, w)` in `c`, normalised.
#[inline]
fn quat_at(c: &[f64]) -> UnitQuaternion<f64> {
    UnitQuaternion::from_quaternion(Quaternion::new(c[3], c[0], c[1], c[2]))
}

#[inline]
fn write_quat(q: &UnitQuaternion<f64>, out: &mut [f64]) {
    let c = q.as_ref().coords; // (i, j, k, w)
    out[0] = c[0];
    out[1] = c[1];
    out[2] = c[2];
    out[3] = c[3];
}

/// Rotation by the angle with cosine `c` and sine `s` about the unit axis `a`:
/// `R = c I + s [a]× + (1 − c) a aᵀ` (Rodrigues).
#[inline(always)]
pub(crate) fn axis_rotation(a: &Vec3, c: f64, s: f64) -> Mat3 {
    let t = 1.0 - c;
    let (x, y, z) = (a.x, a.y, a.z);
    Mat3::new(
        c + t * x * x,
        t * x * y - s * z,
        t * x * z + s * y,
        t * x * y + s * z,
        c + t * y * y,
        t * y * z - s * x,
        t * x * z - s * y,
        t * y * z + s * x,
        c + t * z * z,
    )
}

impl JointModel {
    /// Dimension of the configuration vector.
    pub fn nq(&self) -> usize {
        self.kind.nq()
    }

    /// Dimension of the velocity vector.
    pub fn nv(&self) -> usize {
        self.kind.nv()
    }

    /// The joint transform `M_J(q)` (child frame in the joint's origin frame), reading the
    /// joint's coordinates from the full configuration `q`.
    #[inline]
    pub fn transform(&self, q: &[f64]) -> Se3 {
        let i = self.idx_q;
        match self.kind {
            JointKind::Universe => Se3::identity(),
            JointKind::Revolute { axis } => {
                let (s, c) = q[i].sin_cos();
                Se3::new(axis_rotation(&axis, c, s), Vec3::zeros())
            }
            JointKind::RevoluteUnbounded { axis } => {
                let (c, s) = (q[i], q[i + 1]);
                let n = (c * c + s * s).sqrt();
                Se3::new(axis_rotation(&axis, c / n, s / n), Vec3::zeros())
            }
            JointKind::Prismatic { axis } => Se3::from_translation(axis * q[i]),
            JointKind::Spherical => Se3::new(
                *quat_at(&q[i..i + 4]).to_rotation_matrix().matrix(),
                Vec3::zeros(),
            ),
            JointKind::FreeFlyer => Se3::new(
                *quat_at(&q[i + 3..i + 7]).to_rotation_matrix().matrix(),
                Vec3::new(q[i], q[i + 1], q[i + 2]),
            ),
        }
    }

    /// Column `k < nv` of the motion subspace `S` in the child frame.
    #[inline]
    pub fn subspace(&self, k: usize) -> Vec6 {
        match self.kind {
            JointKind::Universe => unreachable!("the universe has no motion subspace"),
            JointKind::Revolute { axis } | JointKind::RevoluteUnbounded { axis } => {
                spatial(Vec3::zeros(), axis)
            }
            JointKind::Prismatic { axis } => spatial(axis, Vec3::zeros()),
            JointKind::Spherical => {
                let mut e = Vec6::zeros();
                e[3 + k] = 1.0;
                e
            }
            JointKind::FreeFlyer => {
                let mut e = Vec6::zeros();
                e[k] = 1.0;
                e
            }
        }
    }

    /// The neutral configuration (zero angle, identity rotation) into `q`.
    pub fn neutral(&self, q: &mut [f64]) {
        let i = self.idx_q;
        match self.kind {
            JointKind::Universe => {}
            JointKind::Revolute { .. } | JointKind::Prismatic { .. } => q[i] = 0.0,
            JointKind::RevoluteUnbounded { .. } => {
                q[i] = 1.0;
                q[i + 1] = 0.0;
            }
            JointKind::Spherical => q[i..i + 4].copy_from_slice(&[0.0, 0.0, 0.0, 1.0]),
            JointKind::FreeFlyer => {
                q[i..i + 7].copy_from_slice(&[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
            }
        }
    }

    /// `out = q ⊕ v dt`: the configuration reached from `q` by following the constant velocity
    /// `v` (joint coordinates of full vectors) for the time `dt`,
    /// `M_J(q ⊕ v dt) = M_J(q) exp6(S v dt)`.
    pub fn integrate(&self, q: &[f64], v: &[f64], dt: f64, out: &mut [f64]) {
        let (i, j) = (self.idx_q, self.idx_v);
        match self.kind {
            JointKind::Universe => {}
            JointKind::Revolute { .. } | JointKind::Prismatic { .. } => out[i] = q[i] + v[j] * dt,
            JointKind::RevoluteUnbounded { .. } => {
                let (c0, s0) = (q[i], q[i + 1]);
                let n = (c0 * c0 + s0 * s0).sqrt();
                let (s, c) = (v[j] * dt).sin_cos();
                out[i] = (c0 * c - s0 * s) / n;
                out[i + 1] = (s0 * c + c0 * s) / n;
            }
            JointKind::Spherical => {
                let w = Vec3::new(v[j], v[j + 1], v[j + 2]) * dt;
                let r = quat_at(&q[i..i + 4]) * UnitQuaternion::new(w);
                write_quat(&r, &mut out[i..i + 4]);
            }
            JointKind::FreeFlyer => {
                let r0 = quat_at(&q[i + 3..i + 7]);
                let nu = Vec6::from_column_slice(&v[j..j + 6]) * dt;
                let d = Se3::exp6(&nu);
                let p = Vec3::new(q[i], q[i + 1], q[i + 2]) + r0 * d.trans;
                let r = r0 * UnitQuaternion::new(super::spatial::ang(&nu));
                out[i..i + 3].copy_from_slice(p.as_slice());
                write_quat(&r, &mut out[i + 3..i + 7]);
            }
        }
    }

    /// `out = q1 ⊖ q0`: the velocity `v` with `q0 ⊕ v = q1` (shortest rotation).
    pub fn difference(&self, q0: &[f64], q1: &[f64], out: &mut [f64]) {
        let (i, j) = (self.idx_q, self.idx_v);
        match self.kind {
            JointKind::Universe => {}
            JointKind::Revolute { .. } | JointKind::Prismatic { .. } => out[j] = q1[i] - q0[i],
            JointKind::RevoluteUnbounded { .. } => {
                let (c0, s0, c1, s1) = (q0[i], q0[i + 1], q1[i], q1[i + 1]);
                out[j] = (c0 * s1 - s0 * c1).atan2(c0 * c1 + s0 * s1);
            }
            JointKind::Spherical => {
                let r = quat_at(&q0[i..i + 4]).inverse() * quat_at(&q1[i..i + 4]);
                out[j..j + 3].copy_from_slice(r.scaled_axis().as_slice());
            }
            JointKind::FreeFlyer => {
                let m0 = self.transform(q0);
                let m1 = self.transform(q1);
                let nu = m0.inv_mul(&m1).log6();
                out[j..j + 6].copy_from_slice(nu.as_slice());
            }
        }
    }
}

/// Rotation (3×3) of a configuration quaternion `(x, y, z, w)`; used by tests and tools.
pub fn quaternion_rotation(c: &[f64]) -> Mat3 {
    *quat_at(c).to_rotation_matrix().matrix()
}

/// Checks that the unit-norm parts of a joint's coordinates are unit within `tol`;
/// returns the offending norm otherwise.
pub fn unit_norm_violation(joint: &JointModel, q: &[f64], tol: f64) -> Option<f64> {
    let i = joint.idx_q;
    let norm = match joint.kind {
        JointKind::RevoluteUnbounded { .. } => (q[i] * q[i] + q[i + 1] * q[i + 1]).sqrt(),
        JointKind::Spherical => nalgebra::Vector4::from_column_slice(&q[i..i + 4]).norm(),
        JointKind::FreeFlyer => nalgebra::Vector4::from_column_slice(&q[i + 3..i + 7]).norm(),
        _ => return None,
    };
    ((norm - 1.0).abs() > tol).then_some(norm)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joint(kind: JointKind) -> JointModel {
        JointModel {
            name: "j".into(),
            kind,
            idx_q: 0,
            idx_v: 0,
        }
    }

    #[test]
    fn integrate_then_difference_recovers_the_velocity_and_moves_along_s() {
        let axis = Vec3::new(1.0, 2.0, -0.5).normalize();
        for kind in [
            JointKind::Revolute { axis },
            JointKind::RevoluteUnbounded { axis },
            JointKind::Prismatic { axis },
            JointKind::Spherical,
            JointKind::FreeFlyer,
        ] {
            let j = joint(kind);
            let mut q0 = vec![0.0; j.nq()];
            j.neutral(&mut q0);
            let v0: Vec<f64> = (0..j.nv()).map(|k| 0.3 - 0.2 * k as f64).collect();
            let mut q = q0.clone();
            j.integrate(&q0, &v0, 1.0, &mut q); // a non-trivial base point
            let v: Vec<f64> = (0..j.nv()).map(|k| -0.4 + 0.25 * k as f64).collect();
            let mut q1 = q.clone();
            j.integrate(&q, &v, 1.0, &mut q1);
            // Following v for dt is following v·dt for unit time.
            let (mut half_a, mut half_b) = (q.clone(), q.clone());
            j.integrate(&q, &v, 0.5, &mut half_a);
            let v_half: Vec<f64> = v.iter().map(|x| 0.5 * x).collect();
            j.integrate(&q, &v_half, 1.0, &mut half_b);
            for (a, b) in half_a.iter().zip(&half_b) {
                assert!((a - b).abs() < 1e-15, "{kind:?}");
            }
            let mut back = vec![0.0; j.nv()];
            j.difference(&q, &q1, &mut back);
            for k in 0..j.nv() {
                assert!((back[k] - v[k]).abs() < 1e-12, "{kind:?}");
            }
            // M_J(q ⊕ v) = M_J(q) exp6(S v).
            let mut sv = Vec6::zeros();
            for (k, vk) in v.iter().enumerate() {
                sv += j.subspace(k) * *vk;
            }
            let expect = j.transform(&q).mul(&Se3::exp6(&sv));
            let got = j.transform(&q1);
            assert!((expect.rot - got.rot).norm() < 1e-12, "{kind:?}");
            assert!((expect.trans - got.trans).norm() < 1e-12, "{kind:?}");
        }
    }
}
