//! What the rigid step's derivative (`diff::RigidStepJacobian`) asks of one rigid system,
//! whichever its dynamics: the world twists of its coordinates at a body and their variation
//! with q, the derivatives of its velocity update (ABA derivatives for a robot, Newton–Euler
//! for a free body) and of its configuration update, the input's dependence on the state
//! (PD), and the tangent-space difference of two configurations.
//!
//! Twists are world spatial velocities `[v_O; ω]` (the velocity of the body point at the
//! world origin, and the angular velocity): a body point x moves at `v_O + ω × x`. Moving
//! coordinate j of the configuration by δ moves a body it carries by the twist `T_j δ`, the
//! same column as the velocity's, so the geometry's and the velocities' Jacobians share them.

use crate::error::{Error, Result};
use crate::math::{DMat, Vec3};
use crate::rigid::spatial::{Vec6, ang, cross_motion, lin, spatial};
use crate::rigid::{JointKind, compute_aba_derivatives, integrate_jacobians};

use super::rigid_model::{RigidDynamics, RigidInput, RigidSystem};
use super::rigid_stage::RigidState;
use super::rigid_system::SystemBuffers;

/// The derivatives of one system's velocity update `v⁺ = v + h (a(q, v, τ) + M⁻¹ Q)` with a
/// generalised force Q held (nv × nv each).
pub struct VelocityUpdateJacobian {
    /// ∂v⁺/∂q (tangent space).
    pub dq: DMat,
    /// ∂v⁺/∂v.
    pub dv: DMat,
    /// ∂v⁺/∂τ = ∂v⁺/∂Q = h M⁻¹.
    pub dforce: DMat,
    /// ∂v⁺/∂m of a free body's mass m, its inertia scaled with it (`rigid::FreeBody::with_mass`;
    /// (m/s, rad/s) per kg); zero for a robot, whose mass is no parameter.
    pub dmass: Vec<f64>,
}

impl RigidSystem {
    /// The last velocity coordinate carrying joint `joint`'s body (None: the world or a body
    /// fixed to it).
    fn last_dof(&self, joint: usize) -> Option<usize> {
        match &self.dynamics {
            RigidDynamics::Free(_) => Some(5),
            RigidDynamics::Robot(model) => {
                let mut j = joint;
                while j != 0 && model.joints[j].nv() == 0 {
                    j = model.parents[j];
                }
                (j != 0).then(|| model.joints[j].idx_v + model.joints[j].nv() - 1)
            }
        }
    }

    /// The twists `T_k` (nv, world) of the coordinates at joint `joint`'s body: the motion of
    /// the body for a unit step of coordinate k (zero for coordinates that do not move it).
    /// A robot's `buf` must hold its kinematics at `q` (after the step's `prepare`).
    pub(crate) fn body_twists(
        &self,
        buf: &SystemBuffers,
        q: &[f64],
        joint: usize,
        out: &mut Vec<Vec6>,
    ) {
        out.clear();
        out.resize(self.nv(), Vec6::zeros());
        match (&self.dynamics, buf) {
            (RigidDynamics::Free(_), _) => {
                let c = Vec3::new(q[0], q[1], q[2]);
                for i in 0..3 {
                    let mut e = Vec3::zeros();
                    e[i] = 1.0;
                    out[i] = spatial(e, Vec3::zeros());
                    out[3 + i] = spatial(c.cross(&e), e);
                }
            }
            (RigidDynamics::Robot(model), SystemBuffers::Robot { data, .. }) => {
                let mut k = self.last_dof(joint);
                while let Some(d) = k {
                    out[d] = data.j[d];
                    k = model.parent_dof[d];
                }
            }
            _ => unreachable!("a robot's buffers are built with it"),
        }
    }

    /// `∂T_k/∂q_j` at joint `joint`'s body, given its twists `twists` ([`Self::body_twists`]):
    /// for a robot `T_j × T_k` when both move the body and j's joint is k's or one of its
    /// ancestors (a joint moves the axes of its own and later coordinates, its own joint's
    /// included for multi-coordinate joints, which move in their own frame); for a free body,
    /// whose angular columns `[c × e_i; e_i]` follow the centre, `[e_j × e_i; 0]` for a
    /// translation j and an angular k = 3 + i.
    pub(crate) fn twist_derivative(&self, twists: &[Vec6], j: usize, k: usize) -> Vec6 {
        match &self.dynamics {
            RigidDynamics::Free(_) => {
                if j < 3 && k >= 3 {
                    let (mut ej, mut ei) = (Vec3::zeros(), Vec3::zeros());
                    ej[j] = 1.0;
                    ei[k - 3] = 1.0;
                    spatial(ej.cross(&ei), Vec3::zeros())
                } else {
                    Vec6::zeros()
                }
            }
            RigidDynamics::Robot(model) => {
                let (tj, tk) = (&twists[j], &twists[k]);
                if tj.iter().all(|x| *x == 0.0) || tk.iter().all(|x| *x == 0.0) {
                    return Vec6::zeros();
                }
                let (jj, jk) = (model.dof_joint[j], model.dof_joint[k]);
                if model.is_ancestor(jj, jk) {
                    cross_motion(tj, tk)
                } else {
                    Vec6::zeros()
                }
            }
        }
    }

    /// The derivatives of the velocity update at the state `(q, v)`, input `tau` and
    /// generalised contact force `force` (nv; N, N·m), time step `h` (s), gravity `gravity`
    /// (m/s², free bodies). Overwrites a robot's `buf` kinematics with those of `q`.
    pub(crate) fn velocity_update_jacobian(
        &self,
        buf: &mut SystemBuffers,
        state: &RigidState,
        force: &[f64],
        h: f64,
    ) -> VelocityUpdateJacobian {
        let nv = self.nv();
        match (&self.dynamics, buf) {
            (RigidDynamics::Free(body), _) => {
                let j = body.velocity_update_jacobian(&state.q, &state.v, force, h);
                VelocityUpdateJacobian {
                    dq: j.dq,
                    dv: j.dv,
                    dforce: j.dforce,
                    dmass: body
                        .velocity_update_mass_derivative(&state.q, force, h)
                        .to_vec(),
                }
            }
            (RigidDynamics::Robot(model), SystemBuffers::Robot { data, .. }) => {
                // v⁺ = v + h ABA(q, v, τ − d∘v + Q).
                let tau: Vec<f64> = (0..nv)
                    .map(|k| state.tau[k] - model.damping[k] * state.v[k] + force[k])
                    .collect();
                compute_aba_derivatives(model, data, &state.q, &state.v, &tau);
                let dq = &data.ddq_dq * h;
                let mut dv = &data.ddq_dv * h;
                for c in 0..nv {
                    for r in 0..nv {
                        dv[(r, c)] -= h * data.minv[(r, c)] * model.damping[c];
                    }
                    dv[(c, c)] += 1.0;
                }
                VelocityUpdateJacobian {
                    dq,
                    dv,
                    dforce: &data.minv * h,
                    dmass: vec![0.0; nv],
                }
            }
            _ => unreachable!("a robot's buffers are built with it"),
        }
    }

    /// The derivatives of `q⁺ = q ⊕ h v⁺` with respect to the tangent of q (`jq`) and to v⁺
    /// (`jv`, the factor h included), nv × nv each.
    pub(crate) fn integrate_jacobians(&self, v_plus: &[f64], h: f64, jq: &mut DMat, jv: &mut DMat) {
        match &self.dynamics {
            RigidDynamics::Free(body) => body.integrate_jacobians(v_plus, h, jq, jv),
            RigidDynamics::Robot(model) => {
                let nu: Vec<f64> = v_plus.iter().map(|x| x * h).collect();
                integrate_jacobians(model, &nu, jq, jv);
                *jv *= h;
            }
        }
    }

    /// `out = q1 ⊖ q0` in the tangent space of the system's configurations.
    pub fn difference(&self, q0: &[f64], q1: &[f64], out: &mut [f64]) {
        match &self.dynamics {
            RigidDynamics::Free(body) => body.difference(q0, q1, out),
            RigidDynamics::Robot(model) => model.difference(q0, q1, out),
        }
    }

    /// `out = q ⊕ δ` (the tangent step of [`Self::difference`]).
    pub fn displace(&self, q: &[f64], delta: &[f64], out: &mut [f64]) {
        self.integrate(q, delta, 1.0, out);
    }

    /// Whether coordinate `k`'s input in the step that ended in `state` (its `tau`) was
    /// applied as given, not clamped by the effort limit (always for a free body).
    pub fn input_unclamped(&self, state: &RigidState, k: usize) -> bool {
        match &self.dynamics {
            RigidDynamics::Robot(model) => state.tau[k].abs() < model.limits.effort[k],
            RigidDynamics::Free(_) => true,
        }
    }

    /// The diagonal derivatives `(∂τ/∂q, ∂τ/∂v)` of the input τ applied in the step that
    /// ended in `state` (its `tau` is the applied input): zero for a constant input or a
    /// clamped coordinate, `(−kp, −kd)` for a PD input. Errors on a PD gain on a coordinate
    /// whose difference is not linear in q (free-flyer or spherical joints).
    pub(crate) fn input_jacobian(&self, state: &RigidState) -> Result<(Vec<f64>, Vec<f64>)> {
        let nv = self.nv();
        let (mut dq, mut dv) = (vec![0.0; nv], vec![0.0; nv]);
        if let (RigidInput::Pd { kp, kd, .. }, RigidDynamics::Robot(model)) =
            (&self.input, &self.dynamics)
        {
            for joint in &model.joints[1..] {
                let linear = matches!(
                    joint.kind,
                    JointKind::Revolute { .. }
                        | JointKind::RevoluteUnbounded { .. }
                        | JointKind::Prismatic { .. }
                );
                for k in joint.idx_v..joint.idx_v + joint.nv() {
                    if kp[k] != 0.0 && !linear {
                        return Err(Error::invalid(
                            format!("robot.{}.kp", self.name),
                            "has a gain on a free-flyer or spherical coordinate: the step derivative covers PD inputs on revolute and prismatic joints",
                        ));
                    }
                    if self.input_unclamped(state, k) {
                        dq[k] = -kp[k];
                        dv[k] = -kd[k];
                    }
                }
            }
        }
        Ok((dq, dv))
    }
}

/// The velocity of the world point `p` (m) under the twist `t`: `v_O + ω × p`.
pub fn point_velocity(t: &Vec6, p: &Vec3) -> Vec3 {
    lin(t) + ang(t).cross(p)
}
