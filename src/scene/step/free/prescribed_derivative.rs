//! Derivatives of the prescribed-motion stage (`scene::step::free::prescribed`): how the pinned horn
//! nodes' motion and their coupling to the free rows of the linearised step change with the
//! servo's angle target, the start positions and the start velocities.
//!
//! Per pinned servo, θ⁺ = clamp(t, θₙ − m, θₙ + m) with t the angle target (rad), m its
//! `max_angle_step` and θₙ = δ(xₙ) the servo's current angle (`actuator::Servo::value`, a
//! function of the horn nodes' positions). The derivative is one-sided at the clamp's kinks:
//! the servo is *clamped* when |t − θₙ| > m (strictly), and then ∂θ⁺/∂t = 0 and
//! dθ⁺ = H_θ(xₙ) dx (θ⁺ = θₙ ± m follows the current angle); at equality |t − θₙ| = m, and
//! whenever the target is within reach, dθ⁺ = dt (the unclamped side).
//!
//! The horn nodes go to x_i⁺ = o + R(θ⁺)(X_i − o), so with J_i = ∂x_i⁺/∂θ = a × (x_i⁺ − o):
//!
//! ```text
//! dx_p⁺ = J dθ⁺,   dv_p⁺ = (J dθ⁺ − dx_p)/h      (v_p⁺ = (x_p⁺ − x_p)/h)
//! ```
//!
//! Written over the whole body, the linearised step's free rows are
//! `(A v⁺)_f = (M v)_f + h (f_ext + f(x) + …)_f` with v⁺ holding v_p⁺ on the pinned rows, so
//! the pinned nodes' tangents (dx_p, dv_p and dv_p⁺) enter the free right-hand side as
//!
//! ```text
//! M_fp dv_p − h K_fp dx_p − c_k (T_{v⁺})_fp dx_p − (c_m M_fp + c_k K_fp) dv_p⁺
//! ```
//!
//! (T_{v⁺} = ∂(K v⁺)/∂x, `fem::stiffness_derivative`, with v⁺ the whole field, prescribed rows
//! included), all of them element by element over the tetrahedra touching a pinned node
//! ([`PrescribedDerivative::add_coupling_tangent`]); M_fp vanishes for the lumped mass. The
//! reverse sweep transposes each line ([`PrescribedDerivative::angle_cotangents`]).

use crate::actuator::Servo;
use crate::fem::{MassKind, SoftBody};
use crate::material::MaterialPoint;
use crate::math::Vec3;

use super::prescribed::add_consistent_mass_action;
use crate::scene::model::actuation::BodyActuation;
use crate::scene::model::pinned_servo::servo_of;

/// The clamp's state of one pinned servo at the start of a step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AngleSlope {
    /// θ⁺ (rad), the angle the horn turns to in the step.
    pub theta_plus: f64,
    /// Whether the per-step limit is active (|t − θₙ| > m): θ⁺ then follows θₙ(x), not t.
    pub clamped: bool,
}

/// Reusable buffers of the prescribed-motion derivatives of one body.
#[derive(Debug, Clone)]
pub struct PrescribedDerivative {
    /// Tetrahedra with at least one pinned node.
    elements: Vec<usize>,
    /// Per node: whether a pinned servo drives it.
    pinned: Vec<bool>,
    /// Per pinned servo (in `BodyActuation::pinned` order): its clamp state at the prepared x.
    slopes: Vec<AngleSlope>,
    /// Per node: J_i = ∂x_i⁺/∂θ⁺ = a × (x_i⁺ − o) on pinned nodes (m/rad), 0 elsewhere.
    motion: Vec<Vec3>,
    /// Per pinned servo: H_θ = ∂θₙ/∂x rows at the prepared x (1/m).
    angle_rows: Vec<Vec<(usize, Vec3)>>,
    /// Scratch per node.
    u_k: Vec<Vec3>,
    u_t: Vec<Vec3>,
    u_m: Vec<Vec3>,
}

impl PrescribedDerivative {
    /// Buffers for the pinned servos of `act` on `body`.
    pub fn new(body: &SoftBody, act: &BodyActuation) -> PrescribedDerivative {
        let n = body.node_count();
        let mut pinned = vec![false; n];
        for i in act.pinned_nodes() {
            pinned[i] = true;
        }
        let elements = body
            .elements()
            .iter()
            .enumerate()
            .filter(|(_, e)| e.nodes.iter().any(|&i| pinned[i]))
            .map(|(e, _)| e)
            .collect();
        PrescribedDerivative {
            elements,
            pinned,
            slopes: Vec::with_capacity(act.pinned.len()),
            motion: vec![Vec3::zeros(); n],
            angle_rows: vec![Vec::new(); act.pinned.len()],
            u_k: vec![Vec3::zeros(); n],
            u_t: vec![Vec3::zeros(); n],
            u_m: vec![Vec3::zeros(); n],
        }
    }

    /// Whether the body has pinned servos.
    pub fn is_active(&self) -> bool {
        !self.angle_rows.is_empty()
    }

    /// Whether node `n` is pinned (its tangent components are inputs and outputs, unlike a
    /// fixed node's).
    pub fn is_pinned(&self, n: usize) -> bool {
        self.pinned[n]
    }

    /// The clamp states of the last [`Self::prepare`], in `BodyActuation::pinned` order.
    pub fn slopes(&self) -> &[AngleSlope] {
        &self.slopes
    }

    /// Evaluates, at the start positions `x` (m) of a step, each pinned servo's θ⁺ and clamp
    /// state (module doc), J = ∂x_p⁺/∂θ⁺ and H_θ(x).
    pub fn prepare(&mut self, body: &SoftBody, act: &BodyActuation, x: &[Vec3]) {
        let rest = body.rest_positions();
        self.slopes.clear();
        for (k, p) in act.pinned.iter().enumerate() {
            let (servo, target) = servo_of(act, p);
            let m = act.actuators[p.actuator].max_value_step;
            let now = servo.value(x);
            let theta_plus = target.clamp(now - m, now + m);
            let clamped = (target - now).abs() > m;
            self.slopes.push(AngleSlope {
                theta_plus,
                clamped,
            });
            for &i in &p.nodes {
                self.motion[i] = motion(servo, theta_plus, rest[i]);
            }
            self.angle_rows[k].clear();
            servo.jacobian(x, &mut self.angle_rows[k]);
        }
    }

    /// dθ⁺ of pinned servo `k` (rad) for a change `d_target` (rad) of its target and `dx` (m,
    /// per node) of the start positions (module doc: one-sided at the clamp).
    pub fn angle_tangent(&self, k: usize, d_target: f64, dx: &[Vec3]) -> f64 {
        if self.slopes[k].clamped {
            self.angle_rows[k].iter().map(|(i, g)| g.dot(&dx[*i])).sum()
        } else {
            d_target
        }
    }

    /// Writes dx_p⁺ = J dθ⁺ (m) and dv_p⁺ = (J dθ⁺ − dx_p)/h (m/s) into the pinned nodes'
    /// rows of `dx_plus` and `dv_plus` (other rows untouched), `dtheta` per pinned servo.
    pub fn motion_tangent(
        &self,
        act: &BodyActuation,
        dtheta: &[f64],
        dx: &[Vec3],
        h: f64,
        dx_plus: &mut [Vec3],
        dv_plus: &mut [Vec3],
    ) {
        for (p, &dt) in act.pinned.iter().zip(dtheta) {
            for &i in &p.nodes {
                let d = self.motion[i] * dt;
                dx_plus[i] = d;
                dv_plus[i] = (d - dx[i]) / h;
            }
        }
    }

    /// Adds the pinned nodes' terms of the free right-hand side (module doc),
    /// `M u_v − h K u_x − c_k T_{v⁺} u_x − c_m M u_+ − c_k K u_+` with u_x, u_v, u_+ the pinned
    /// rows of `dx`, `dv` and `dv_plus`, over the elements touching a pinned node, into the
    /// nodal `out` (every node of those elements gets a value; the caller keeps the free
    /// rows). `points` are the material points of every element at xₙ, `v_plus` the step's
    /// v⁺ (every node).
    #[allow(clippy::too_many_arguments)]
    pub fn add_coupling_tangent(
        &mut self,
        body: &SoftBody,
        points: &[MaterialPoint],
        v_plus: &[Vec3],
        dx: &[Vec3],
        dv: &[Vec3],
        dv_plus: &[Vec3],
        (h, c_m, c_k): (f64, f64, f64),
        out: &mut [Vec3],
    ) {
        assert_eq!(points.len(), body.elements().len(), "one point per element");
        for (n, &pinned) in self.pinned.iter().enumerate() {
            let (ux, uv, up) = if pinned {
                (dx[n], dv[n], dv_plus[n])
            } else {
                (Vec3::zeros(), Vec3::zeros(), Vec3::zeros())
            };
            self.u_k[n] = -h * ux - c_k * up;
            self.u_t[n] = ux;
            self.u_m[n] = uv - c_m * up;
        }
        for &e in &self.elements {
            let t = &body.elements()[e];
            let kf = t.stiffness_action(&points[e], t.nodes.map(|i| self.u_k[i]));
            let tf = t.stiffness_derivative_action(
                &points[e],
                t.nodes.map(|i| v_plus[i]),
                t.nodes.map(|i| self.u_t[i]),
            );
            for (k, &i) in t.nodes.iter().enumerate() {
                out[i] += kf[k] - c_k * tf[k];
            }
        }
        self.add_mass_coupling(body, &self.u_m, 1.0, out);
    }

    /// Adds `scale` · K(xₙ) u_p (u_p the pinned rows of `u`) over the elements touching a
    /// pinned node into the nodal `out` (read on the free rows: K_fp u_p; e.g. with u = v⁺ and
    /// scale −c_k/E, the Young's-modulus derivative of the coupling −c_k K_fp v_p⁺, K being
    /// linear in E). `points` are the material points of every element at xₙ.
    pub fn add_stiffness_coupling(
        &mut self,
        body: &SoftBody,
        points: &[MaterialPoint],
        u: &[Vec3],
        scale: f64,
        out: &mut [Vec3],
    ) {
        assert_eq!(points.len(), body.elements().len(), "one point per element");
        for (n, &pinned) in self.pinned.iter().enumerate() {
            self.u_k[n] = if pinned { scale * u[n] } else { Vec3::zeros() };
        }
        for &e in &self.elements {
            let t = &body.elements()[e];
            let kf = t.stiffness_action(&points[e], t.nodes.map(|i| self.u_k[i]));
            for (k, &i) in t.nodes.iter().enumerate() {
                out[i] += kf[k];
            }
        }
    }

    /// Adds `scale` · M u over the elements touching a pinned node (consistent mass; the
    /// lumped mass has no coupling between nodes and adds nothing) into `out`. Read on the
    /// pinned rows for a `u` on the free nodes, it is M_pf u; on the free rows for a `u` on
    /// the pinned nodes, M_fp u.
    pub fn add_mass_coupling(&self, body: &SoftBody, u: &[Vec3], scale: f64, out: &mut [Vec3]) {
        if body.options().mass == MassKind::Consistent {
            for &e in &self.elements {
                add_consistent_mass_action(body, e, u, scale, out);
            }
        }
    }

    /// Reverse of [`Self::motion_tangent`] and [`Self::angle_tangent`]: for the cotangent
    /// `vbar_plus` of v_p⁺ (read on the pinned rows) and `xbar_plus` of x_p⁺, adds
    /// −v̄_p⁺/h (and H_θᵀ θ̄⁺ for a clamped servo) to the start positions' cotangent `xbar`,
    /// and writes each pinned servo's target cotangent (0 when clamped) into `target_bar`.
    pub fn angle_cotangents(
        &self,
        act: &BodyActuation,
        vbar_plus: &[Vec3],
        xbar_plus: &[Vec3],
        h: f64,
        xbar: &mut [Vec3],
        target_bar: &mut [f64],
    ) {
        for (k, p) in act.pinned.iter().enumerate() {
            let mut theta_bar = 0.0;
            for &i in &p.nodes {
                theta_bar += self.motion[i].dot(&(vbar_plus[i] / h + xbar_plus[i]));
                xbar[i] -= vbar_plus[i] / h;
            }
            if self.slopes[k].clamped {
                for (i, g) in &self.angle_rows[k] {
                    xbar[*i] += theta_bar * g;
                }
                target_bar[k] = 0.0;
            } else {
                target_bar[k] = theta_bar;
            }
        }
    }
}

/// ∂/∂θ of o + R(θ)(X − o) at θ: a × (R(θ)(X − o)) (m/rad).
fn motion(servo: &Servo, theta: f64, rest: Vec3) -> Vec3 {
    servo
        .axis
        .cross(&(servo.rotate(theta, rest) - servo.origin))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::central_difference_jacobian;

    /// J = a × (x(θ) − o) is the derivative of the horn's rigid rotation (central differences).
    #[test]
    fn motion_is_the_derivative_of_the_rotation() {
        let rest = vec![
            Vec3::new(0.01, 0.002, 0.003),
            Vec3::new(-0.004, 0.011, 0.0),
            Vec3::new(0.0, 0.0, 0.02),
        ];
        let servo = Servo::new(
            Vec3::new(0.001, -0.002, 0.0),
            Vec3::new(0.2, -0.1, 1.0),
            &[0, 1, 2],
            &rest,
        )
        .unwrap();
        for (i, x) in rest.iter().enumerate() {
            let theta = -0.3 + 0.2 * i as f64;
            let fd = central_difference_jacobian(
                |t: &crate::math::DVec| {
                    crate::math::DVec::from_column_slice(servo.rotate(t[0], *x).as_slice())
                },
                &crate::math::DVec::from_element(1, theta),
                1e-6,
            );
            let j = motion(&servo, theta, *x);
            for k in 0..3 {
                assert!((fd[(k, 0)] - j[k]).abs() < 1e-9, "{i}: {fd} vs {j}");
            }
        }
    }
}
