//! What the rigid stage asks of one rigid system, whichever its dynamics (a free body or an
//! articulated robot): its free velocity and mass factorisation for the step, the world pose
//! and velocity of a joint's body, the Jacobian of a body point, solves with M, and the
//! configuration update. One `match` per question, over [`RigidDynamics`].

use crate::contact::ShapePose;
use crate::error::Result;
use crate::math::Vec3;
use crate::rigid::spatial::{ang, lin};
use crate::rigid::{Data, MassFactor, factored_free_velocity, point_jacobian};

use super::rigid::{RigidDynamics, RigidInput, RigidSystem};
use crate::scene::model::RigidState;

/// Per-system buffers of the step: a robot's `Data` and its factor of M (a free body needs
/// none).
pub enum SystemBuffers {
    /// A free body needs none.
    Free,
    /// A robot's algorithm buffers and M = L Lᵀ of the step.
    Robot {
        /// Pinocchio-style data of the model.
        data: Box<Data>,
        /// Cholesky factor of M(q).
        factor: MassFactor,
    },
}

impl SystemBuffers {
    /// Buffers for `system`.
    pub fn new(system: &RigidSystem) -> SystemBuffers {
        match &system.dynamics {
            RigidDynamics::Free(_) => SystemBuffers::Free,
            RigidDynamics::Robot(m) => SystemBuffers::Robot {
                data: Box::new(Data::new(m)),
                factor: MassFactor::new(m),
            },
        }
    }
}

impl RigidSystem {
    /// The step's start at time `time` (s): the input τ (clamped to the effort limits) into
    /// `state.tau`, M(q) factorised (robots), and `v_free` (paper 002 Eq. 3 without contact).
    /// `gravity` (m/s²) drives free bodies (robots carry theirs).
    pub(in crate::scene) fn prepare(
        &self,
        buf: &mut SystemBuffers,
        state: &mut RigidState,
        gravity: &Vec3,
        h: f64,
        time: f64,
        v_free: &mut [f64],
    ) -> Result<()> {
        self.input_torque(state, time);
        match (&self.dynamics, buf) {
            (RigidDynamics::Free(body), _) => {
                body.free_velocity(&state.q, &state.v, gravity, h, v_free);
            }
            (RigidDynamics::Robot(model), SystemBuffers::Robot { data, factor }) => {
                factor.factorize(model, data, &state.q)?;
                factored_free_velocity(model, data, factor, &state.v, &state.tau, h, v_free);
            }
            (RigidDynamics::Robot(_), SystemBuffers::Free) => {
                unreachable!("a robot's buffers are built with it")
            }
        }
        Ok(())
    }

    /// The world pose of joint `joint`'s body frame at `q` (after `Self::prepare`).
    pub fn joint_pose(&self, buf: &SystemBuffers, q: &[f64], joint: usize) -> ShapePose {
        match (&self.dynamics, buf) {
            (RigidDynamics::Free(_), _) => ShapePose {
                rotation: crate::rigid::quaternion_rotation(&q[3..7]),
                translation: Vec3::new(q[0], q[1], q[2]),
            },
            (RigidDynamics::Robot(_), SystemBuffers::Robot { data, .. }) if joint > 0 => {
                let m = &data.o_m_i[joint];
                ShapePose {
                    rotation: m.rot,
                    translation: m.trans,
                }
            }
            _ => ShapePose::identity(),
        }
    }

    /// The world spatial velocity `(v_O, ω)` of joint `joint`'s body for the velocity `v`
    /// (v_O: the velocity of the body point at the world origin; m/s, rad/s).
    pub fn body_velocity(
        &self,
        buf: &SystemBuffers,
        q: &[f64],
        joint: usize,
        v: &[f64],
    ) -> (Vec3, Vec3) {
        match (&self.dynamics, buf) {
            (RigidDynamics::Free(_), _) => {
                let w = Vec3::new(v[3], v[4], v[5]);
                let c = Vec3::new(q[0], q[1], q[2]);
                (Vec3::new(v[0], v[1], v[2]) - w.cross(&c), w)
            }
            (RigidDynamics::Robot(model), SystemBuffers::Robot { data, .. }) => {
                let (mut vo, mut w) = (Vec3::zeros(), Vec3::zeros());
                let mut j = joint;
                while j != 0 && model.joints[j].nv() == 0 {
                    j = model.parents[j];
                }
                if j == 0 {
                    return (vo, w);
                }
                let jm = &model.joints[j];
                let mut c = Some(jm.idx_v + jm.nv() - 1);
                while let Some(k) = c {
                    vo += lin(&data.j[k]) * v[k];
                    w += ang(&data.j[k]) * v[k];
                    c = model.parent_dof[k];
                }
                (vo, w)
            }
            _ => unreachable!("a robot's buffers are built with it"),
        }
    }

    /// The 3 × nv Jacobian of the world velocity of the point `p` (m, world) of joint
    /// `joint`'s body.
    pub(in crate::scene) fn point_jacobian(
        &self,
        buf: &SystemBuffers,
        q: &[f64],
        joint: usize,
        p: &Vec3,
        out: &mut nalgebra::Matrix3xX<f64>,
    ) {
        match (&self.dynamics, buf) {
            (RigidDynamics::Free(body), _) => body.point_jacobian(q, p, out),
            (RigidDynamics::Robot(model), SystemBuffers::Robot { data, .. }) => {
                point_jacobian(model, data, joint, p, out)
            }
            _ => unreachable!("a robot's buffers are built with it"),
        }
    }

    /// `x ← M(q)⁻¹ x` with the step's factorisation.
    pub(in crate::scene) fn solve_mass(&self, buf: &SystemBuffers, q: &[f64], x: &mut [f64]) {
        match (&self.dynamics, buf) {
            (RigidDynamics::Free(body), _) => body.solve_mass(q, x),
            (RigidDynamics::Robot(_), SystemBuffers::Robot { factor, .. }) => {
                factor.solve_in_place(x)
            }
            _ => unreachable!("a robot's buffers are built with it"),
        }
    }

    /// `out = q ⊕ h v` on the system's configuration manifold.
    pub(in crate::scene) fn integrate(&self, q: &[f64], v: &[f64], h: f64, out: &mut [f64]) {
        match &self.dynamics {
            RigidDynamics::Free(body) => body.integrate(q, v, h, out),
            RigidDynamics::Robot(model) => model.integrate_dt(q, v, h, out),
        }
    }

    /// The world pose of each collider at configuration `q` (for output; a robot's placements
    /// are computed in a buffer of its own).
    pub fn collider_poses(&self, q: &[f64]) -> Vec<ShapePose> {
        let mut buf = SystemBuffers::new(self);
        self.kinematics(&mut buf, q);
        self.colliders
            .iter()
            .map(|c| self.joint_pose(&buf, q, c.joint).compose(&c.placement))
            .collect()
    }

    /// Brings a robot's placements and world Jacobian columns up to `q` in `buf` (what
    /// [`Self::joint_pose`] and [`Self::body_velocity`] read; the step's `prepare` does it
    /// through CRBA).
    pub fn kinematics(&self, buf: &mut SystemBuffers, q: &[f64]) {
        if let (RigidDynamics::Robot(model), SystemBuffers::Robot { data, .. }) =
            (&self.dynamics, buf)
        {
            crate::rigid::compute_joint_jacobians(model, data, q);
        }
    }

    /// Whether joints `i` and `j` carry the same or adjacent bodies (never in contact).
    pub(in crate::scene) fn adjacent(&self, i: usize, j: usize) -> bool {
        match &self.dynamics {
            RigidDynamics::Free(_) => true,
            RigidDynamics::Robot(m) => i == j || m.parents[i] == j || m.parents[j] == i,
        }
    }

    /// The input at the state and time `time` (s), clamped to the effort limits, into
    /// `state.tau`.
    fn input_torque(&self, state: &mut RigidState, time: f64) {
        state.tau.resize(self.nv(), 0.0);
        match &self.input {
            RigidInput::None => state.tau.fill(0.0),
            RigidInput::Torque(t) => state.tau.copy_from_slice(t),
            RigidInput::Pd {
                kp,
                kd,
                target,
                path,
            } => {
                // τ = kp ∘ (target(t) ⊖ q) − kd ∘ v, ⊖ on each joint's manifold; along a
                // path, target(t) = q_a ⊕ s (q_b ⊖ q_a) between waypoints a and b.
                if let RigidDynamics::Robot(model) = &self.dynamics {
                    let next = path.iter().position(|(t, _)| *t > time);
                    match next {
                        Some(b) if b > 0 => {
                            let ((ta, qa), (tb, qb)) = (&path[b - 1], &path[b]);
                            let s = (time - ta) / (tb - ta);
                            let mut dq = vec![0.0; self.nv()];
                            model.difference(qa, qb, &mut dq);
                            let mut now = vec![0.0; self.nq()];
                            model.integrate_dt(qa, &dq, s, &mut now);
                            model.difference(&state.q, &now, &mut state.tau);
                        }
                        Some(_) => model.difference(&state.q, &path[0].1, &mut state.tau),
                        None => model.difference(&state.q, target, &mut state.tau),
                    }
                }
                for k in 0..state.tau.len() {
                    state.tau[k] = kp[k] * state.tau[k] - kd[k] * state.v[k];
                }
            }
        }
        if let RigidDynamics::Robot(model) = &self.dynamics {
            for (t, e) in state.tau.iter_mut().zip(&model.limits.effort) {
                *t = t.clamp(-e, *e);
            }
        }
    }
}
