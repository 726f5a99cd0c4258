//! The immutable description of an articulated system: the kinematic tree of joints with their
//! placements and body inertias, operational frames and collision geometry (Pinocchio's `Model`).
//!
//! Joint 0 is the universe (the world). Joints are stored in depth-first order, so every
//! joint's parent has a smaller index and the velocity coordinates of a subtree are contiguous.

use super::collision::Geometry;
use super::joint::{JointKind, JointModel};
use super::spatial::{Inertia, Se3, Vec6, spatial};
use crate::error::{Error, Result};
use crate::math::Vec3;

/// What created a [`Frame`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// A body (URDF link).
    Body,
    /// A moving joint.
    Joint,
    /// A fixed joint (merged into its parent body).
    FixedJoint,
}

/// An operational frame rigidly attached to a joint's body.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Name (the URDF link or joint name).
    pub name: String,
    /// The joint whose body carries the frame.
    pub parent_joint: usize,
    /// The frame's pose in the parent joint's frame.
    pub placement: Se3,
    /// What the frame stands for.
    pub kind: FrameKind,
}

/// Position, velocity and effort limits of the coordinates (±∞ / ∞ when not given).
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Lower position limit per configuration coordinate (rad or m).
    pub lower: Vec<f64>,
    /// Upper position limit per configuration coordinate (rad or m).
    pub upper: Vec<f64>,
    /// Velocity limit per velocity coordinate (rad/s or m/s).
    pub velocity: Vec<f64>,
    /// Effort limit per velocity coordinate (N·m or N).
    pub effort: Vec<f64>,
}

/// The kinematic tree: immutable once built (Pinocchio's `Model`).
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// The robot's name.
    pub name: String,
    /// Joints, index 0 the universe, depth-first order.
    pub joints: Vec<JointModel>,
    /// Parent joint of each joint (`parents[0] = 0`).
    pub parents: Vec<usize>,
    /// Placement of each joint's origin frame in its parent joint's frame.
    pub placements: Vec<Se3>,
    /// Inertia of each joint's body (fixed-joint children merged) in the joint frame.
    pub inertias: Vec<Inertia>,
    /// Number of velocity coordinates of each joint's subtree (itself included).
    pub nv_subtree: Vec<usize>,
    /// For each velocity coordinate, the previous coordinate on the path to the root
    /// (Pinocchio's `parents_fromRow`), `None` at the root.
    pub parent_dof: Vec<Option<usize>>,
    /// The joint owning each velocity coordinate.
    pub dof_joint: Vec<usize>,
    /// Operational frames.
    pub frames: Vec<Frame>,
    /// The collision model: one entry per URDF `<collision>` element, in file order of the
    /// links visited depth-first.
    pub geometries: Vec<Geometry>,
    /// Joint limits.
    pub limits: Limits,
    /// Viscous joint damping per velocity coordinate (URDF `<dynamics damping>`; N·m·s/rad or
    /// N·s/m, 0 when not given). Stored only: the dynamics algorithms do not apply it.
    pub damping: Vec<f64>,
    /// Dry joint friction per velocity coordinate (URDF `<dynamics friction>`; N·m or N, 0 when
    /// not given). Stored only.
    pub friction: Vec<f64>,
    /// Gravity acceleration as a spatial motion in the world frame (m/s², default `[0,0,−9.81; 0]`).
    pub gravity: Vec6,
    /// Configuration dimension.
    pub nq: usize,
    /// Velocity dimension.
    pub nv: usize,
}

impl Model {
    /// An empty model (only the universe), gravity `−9.81 m/s²` along z.
    pub fn new(name: impl Into<String>) -> Self {
        Model {
            name: name.into(),
            joints: vec![JointModel {
                name: "universe".into(),
                kind: JointKind::Universe,
                idx_q: 0,
                idx_v: 0,
            }],
            parents: vec![0],
            placements: vec![Se3::identity()],
            inertias: vec![Inertia::zero()],
            nv_subtree: vec![0],
            parent_dof: vec![],
            dof_joint: vec![],
            frames: vec![],
            geometries: vec![],
            limits: Limits {
                lower: vec![],
                upper: vec![],
                velocity: vec![],
                effort: vec![],
            },
            damping: vec![],
            friction: vec![],
            gravity: spatial(Vec3::new(0.0, 0.0, -9.81), Vec3::zeros()),
            nq: 0,
            nv: 0,
        }
    }

    /// Number of joints, the universe included.
    pub fn njoints(&self) -> usize {
        self.joints.len()
    }

    /// Appends a moving joint under `parent` at `placement` (in the parent joint's frame) with
    /// an empty body, and returns its index. Joints must be added depth-first: `parent` is the
    /// last joint added or one of its ancestors.
    pub fn add_joint(
        &mut self,
        parent: usize,
        kind: JointKind,
        placement: Se3,
        name: impl Into<String>,
    ) -> Result<usize> {
        let name = name.into();
        if matches!(kind, JointKind::Universe) {
            return Err(Error::invalid(
                format!("joint {name}"),
                "cannot add a universe joint",
            ));
        }
        let last = self.joints.len() - 1;
        let mut a = last;
        while a != parent && a != 0 {
            a = self.parents[a];
        }
        if a != parent {
            return Err(Error::invalid(
                format!("joint {name}"),
                format!("parent joint {parent} breaks the depth-first order"),
            ));
        }
        let id = self.joints.len();
        let joint = JointModel {
            name,
            kind,
            idx_q: self.nq,
            idx_v: self.nv,
        };
        let (nq, nv) = (kind.nq(), kind.nv());
        // Path to the root in velocity coordinates.
        let mut prev = {
            let mut p = parent;
            while p != 0 && self.joints[p].nv() == 0 {
                p = self.parents[p];
            }
            (p != 0).then(|| self.joints[p].idx_v + self.joints[p].nv() - 1)
        };
        for k in 0..nv {
            self.parent_dof.push(prev);
            self.dof_joint.push(id);
            prev = Some(self.nv + k);
        }
        let (lo, hi) = match kind {
            JointKind::RevoluteUnbounded { .. } | JointKind::Spherical => (-1.0, 1.0),
            _ => (f64::NEG_INFINITY, f64::INFINITY),
        };
        self.limits.lower.extend(std::iter::repeat_n(lo, nq));
        self.limits.upper.extend(std::iter::repeat_n(hi, nq));
        if matches!(kind, JointKind::FreeFlyer) {
            self.limits.lower[self.nq + 3..self.nq + 7].fill(-1.0);
            self.limits.upper[self.nq + 3..self.nq + 7].fill(1.0);
        }
        self.limits
            .velocity
            .extend(std::iter::repeat_n(f64::INFINITY, nv));
        self.limits
            .effort
            .extend(std::iter::repeat_n(f64::INFINITY, nv));
        self.damping.extend(std::iter::repeat_n(0.0, nv));
        self.friction.extend(std::iter::repeat_n(0.0, nv));
        self.joints.push(joint);
        self.parents.push(parent);
        self.placements.push(placement);
        self.inertias.push(Inertia::zero());
        self.nv_subtree.push(nv);
        let mut a = parent;
        loop {
            self.nv_subtree[a] += nv;
            if a == 0 {
                break;
            }
            a = self.parents[a];
        }
        self.nq += nq;
        self.nv += nv;
        Ok(id)
    }

    /// Adds the body `inertia` (expressed in joint `joint`'s frame) to that joint's body.
    pub fn append_body(&mut self, joint: usize, inertia: &Inertia) {
        self.inertias[joint] = self.inertias[joint].add(inertia);
    }

    /// Index of the joint named `name`.
    pub fn joint_id(&self, name: &str) -> Option<usize> {
        self.joints.iter().position(|j| j.name == name)
    }

    /// Index of the frame named `name`.
    pub fn frame_id(&self, name: &str) -> Option<usize> {
        self.frames.iter().position(|f| f.name == name)
    }

    /// Whether joint `ancestor` is on the path from joint `j` to the root (`j` included).
    pub fn is_ancestor(&self, ancestor: usize, mut j: usize) -> bool {
        loop {
            if j == ancestor {
                return true;
            }
            if j == 0 {
                return false;
            }
            j = self.parents[j];
        }
    }

    /// The neutral configuration (zero angles, identity rotations).
    pub fn neutral(&self) -> Vec<f64> {
        let mut q = vec![0.0; self.nq];
        for j in &self.joints[1..] {
            j.neutral(&mut q);
        }
        q
    }

    /// `out = q ⊕ v`: integrates the constant velocity `v` for unit time on every joint's
    /// manifold (the retraction used for derivatives and finite differences on the manifold).
    pub fn integrate(&self, q: &[f64], v: &[f64], out: &mut [f64]) {
        self.integrate_dt(q, v, 1.0, out);
    }

    /// `out = q ⊕ v dt`: integrates the constant velocity `v` (rad/s, m/s; free-flyer and
    /// spherical velocities in the child frame) for the time `dt` (s) on every joint's manifold.
    pub fn integrate_dt(&self, q: &[f64], v: &[f64], dt: f64, out: &mut [f64]) {
        assert!(q.len() == self.nq && out.len() == self.nq && v.len() == self.nv);
        for j in &self.joints[1..] {
            j.integrate(q, v, dt, out);
        }
    }

    /// `out = q1 ⊖ q0`, the velocity with `q0 ⊕ out = q1` (for finite differences on the manifold).
    pub fn difference(&self, q0: &[f64], q1: &[f64], out: &mut [f64]) {
        assert!(q0.len() == self.nq && q1.len() == self.nq && out.len() == self.nv);
        for j in &self.joints[1..] {
            j.difference(q0, q1, out);
        }
    }

    /// Total mass of the bodies (kg), the universe excluded.
    pub fn total_mass(&self) -> f64 {
        self.inertias[1..].iter().map(|i| i.mass).sum()
    }
}
