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

use super::rigid::{RigidDynamics, RigidInput, RigidSystem};
use super::rigid_system::SystemBuffers;
use crate::scene::model::RigidState;

/// Where [`RigidSystem::velocity_update_jacobian_into`] writes: a system's blocks of the
/// stacked update `[∂v⁺/∂q, ∂v⁺/∂v, ∂v⁺/∂τ]` (n × 3n) at coordinate `at`, its ∂v⁺/∂m (nv), and
/// a scratch for the robot's applied torque.
pub(crate) struct VelocityUpdateBlocks<'a> {
    pub(crate) update: &'a mut DMat,
    pub(crate) at: usize,
    pub(crate) dmass: &'a mut [f64],
    pub(crate) tau: &'a mut Vec<f64>,
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

    /// The derivatives of the velocity update `v⁺ = v + h (a(q, v, τ) + M⁻¹ Q)` with the
    /// generalised contact force `force` (nv; N, N·m) held, at the state `(q, v)` and input
    /// `τ`, time step `h` (s) (for a robot the ABA derivatives at `τ − d∘v + Q`; for a free
    /// body its Newton–Euler derivatives), written into `out`'s blocks: rows
    /// and columns `at..at + nv` of the three n-column blocks of `out.update`
    /// (`[∂v⁺/∂q, ∂v⁺/∂v, ∂v⁺/∂τ]`, n = update's rows) and `out.dmass`. A robot's needs no
    /// allocation once `out.tau` holds nv entries.
    pub(crate) fn velocity_update_jacobian_into(
        &self,
        buf: &mut SystemBuffers,
        (q, v, tau): (&[f64], &[f64], &[f64]),
        force: &[f64],
        h: f64,
        out: &mut VelocityUpdateBlocks<'_>,
    ) {
        let nv = self.nv();
        let (n, o) = (out.update.nrows(), out.at);
        match (&self.dynamics, buf) {
            (RigidDynamics::Free(body), _) => {
                let j = body.velocity_update_jacobian(q, v, force, h);
                out.update.view_mut((o, o), (nv, nv)).copy_from(&j.dq);
                out.update.view_mut((o, n + o), (nv, nv)).copy_from(&j.dv);
                out.update
                    .view_mut((o, 2 * n + o), (nv, nv))
                    .copy_from(&j.dforce);
                out.dmass
                    .copy_from_slice(&body.velocity_update_mass_derivative(q, force, h));
            }
            (RigidDynamics::Robot(model), SystemBuffers::Robot { data, .. }) => {
                // v⁺ = v + h ABA(q, v, τ − d∘v + Q).
                out.tau.clear();
                out.tau
                    .extend((0..nv).map(|k| tau[k] - model.damping[k] * v[k] + force[k]));
                compute_aba_derivatives(model, data, q, v, out.tau);
                for c in 0..nv {
                    for r in 0..nv {
                        out.update[(o + r, o + c)] = data.ddq_dq[(r, c)] * h;
                        let mut dv = data.ddq_dv[(r, c)] * h;
                        dv -= h * data.minv[(r, c)] * model.damping[c];
                        if r == c {
                            dv += 1.0;
                        }
                        out.update[(o + r, n + o + c)] = dv;
                        out.update[(o + r, 2 * n + o + c)] = data.minv[(r, c)] * h;
                    }
                }
                out.dmass.fill(0.0);
            }
            _ => unreachable!("a robot's buffers are built with it"),
        }
    }

    /// The derivatives of `q⁺ = q ⊕ h v⁺` with respect to the tangent of q (`jq`) and to v⁺
    /// (`jv`, the factor h included), nv × nv each; `nu` a scratch for `h v⁺` (no allocation
    /// once it holds nv entries).
    pub(crate) fn integrate_jacobians(
        &self,
        v_plus: &[f64],
        h: f64,
        jq: &mut DMat,
        jv: &mut DMat,
        nu: &mut Vec<f64>,
    ) {
        match &self.dynamics {
            RigidDynamics::Free(body) => body.integrate_jacobians(v_plus, h, jq, jv),
            RigidDynamics::Robot(model) => {
                nu.clear();
                nu.extend(v_plus.iter().map(|x| x * h));
                integrate_jacobians(model, nu, jq, jv);
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
    /// Written into `dq` and `dv` (nv each).
    pub(crate) fn input_jacobian(
        &self,
        state: &RigidState,
        dq: &mut [f64],
        dv: &mut [f64],
    ) -> Result<()> {
        dq.fill(0.0);
        dv.fill(0.0);
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
        Ok(())
    }
}

/// The velocity of the world point `p` (m) under the twist `t`: `v_O + ω × p`.
pub fn point_velocity(t: &Vec6, p: &Vec3) -> Vec3 {
    lin(t) + ang(t).cross(p)
}
