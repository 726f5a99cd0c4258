//! The prescribed-motion stage of the step: angle-driven servos pin their horn nodes to the
//! rigid rotation of the horn (the SoftRobots servo), x_i(θ) = o + R(θ)(X_i − o) from the rest
//! positions X_i, so those nodes are removed from the system like fixed nodes (the scene marks
//! them fixed in the body) but move.
//!
//! With the prescribed velocity v_p⁺ = (x_p(θ⁺) − x_p)/h the free rows of the step get the
//! coupling to the prescribed ones, which the pattern (free DOFs only) does not hold. For the
//! linearised step (`scene::step`, A = c_m M + c_k K):
//!
//! ```text
//! b_f += −c_k K_fp v_p⁺ − M_fp (c_m v_p⁺ − v_p)
//! ```
//!
//! and for the Newton residual R_f += M_fp((1 + hα) v_p⁺ − v_p) + hβ K_fp(xₙ) v_p⁺, both computed
//! element by element over the tetrahedra touching a prescribed node (`K_e` by
//! `Tetrahedron::stiffness_action` at xₙ; the consistent mass ρV(1 + δᵢⱼ)/20, zero coupling
//! for the lumped mass).
//!
//! The servo's λ is then the reaction torque about its axis (N·m) that holds the horn: with
//! the step's own momentum balance on the prescribed rows,
//!
//! ```text
//! r_p = [M(v⁺ − v) + hα M v⁺ + (hβ + c h²) K(xₙ) v⁺]/h − m g − f − f_a
//! ```
//!
//! (linearised step: c = 1, f = f(xₙ); Newton: c = 0, f = f(x⁺)), τ = Σ_i ((x_i⁺ − o) × r_i)·a,
//! f_a the force-driven actuators' forces on the horn. Contact forces on the horn are not in it,
//! and horn nodes are not contact candidates (the contact stage skips removed nodes).

use crate::error::{Error, Result};
use crate::fem::{MassKind, SoftBody};
use crate::linalg::DofMap;
use crate::material::MaterialPoint;
use crate::math::Vec3;

use crate::scene::model::actuation::BodyActuation;
use crate::scene::model::pinned_servo::{PinnedServo, servo_of};

/// The angle a pinned servo turns to this step: its target, moved from the current angle θₙ by
/// at most `max_step` (rad).
pub fn next_angle(act: &BodyActuation, p: &PinnedServo, x: &[Vec3]) -> f64 {
    let (servo, target) = servo_of(act, p);
    let a = &act.actuators[p.actuator];
    let now = servo.value(x);
    target.clamp(now - a.max_value_step, now + a.max_value_step)
}

/// Moves the pinned nodes of `x` to the horns' rigid rotation by θ₀ + s(θ − θ₀), θ₀ the
/// servos' angles at `start` (statics' load stepping: s ∈ (0, 1]).
pub fn place_pinned(body: &SoftBody, act: &BodyActuation, start: &[Vec3], s: f64, x: &mut [Vec3]) {
    let rest = body.rest_positions();
    for p in &act.pinned {
        let (servo, target) = servo_of(act, p);
        let now = servo.value(start);
        let theta = now + s * (target - now);
        for &i in &p.nodes {
            x[i] = servo.rotate(theta, rest[i]);
        }
    }
}

/// Reusable buffers of the prescribed-motion stage of one body.
pub struct PrescribedWorkspace {
    /// Per node: whether a pinned servo drives it.
    prescribed: Vec<bool>,
    /// Tetrahedra with at least one prescribed node, and their material points at xₙ.
    elements: Vec<usize>,
    points: Vec<Option<MaterialPoint>>,
    /// Per node: v_p⁺ on prescribed nodes, 0 elsewhere (m/s).
    v_plus: Vec<Vec3>,
    /// Per node: K(xₙ)_{·p} v_p⁺, M_{·p} v_p⁺ and M_{·p} v_p (N, kg·m/s).
    kv: Vec<Vec3>,
    mv_plus: Vec<Vec3>,
    mv_old: Vec<Vec3>,
    /// Scratch per node.
    nodal: Vec<Vec3>,
}

impl PrescribedWorkspace {
    /// Buffers for the pinned servos of `act` on `body`. Errors when a pinned node is not
    /// removed (fixed) in the body (a scene built in code must mark them, as `Scene::build`
    /// does).
    pub fn new(body: &SoftBody, act: &BodyActuation) -> Result<PrescribedWorkspace> {
        let n = body.node_count();
        let mut prescribed = vec![false; n];
        for p in &act.pinned {
            for &i in &p.nodes {
                if !body.is_fixed(i) {
                    return Err(Error::invalid(
                        format!(
                            "soft_body.{}.servo.{}",
                            body.name(),
                            act.actuators[p.actuator].name
                        ),
                        format!(
                            "pinned node {i} must be removed from the system (fixed) in the body"
                        ),
                    ));
                }
                prescribed[i] = true;
            }
        }
        let elements: Vec<usize> = body
            .elements()
            .iter()
            .enumerate()
            .filter(|(_, e)| e.nodes.iter().any(|&i| prescribed[i]))
            .map(|(e, _)| e)
            .collect();
        Ok(PrescribedWorkspace {
            prescribed,
            points: vec![None; elements.len()],
            elements,
            v_plus: vec![Vec3::zeros(); n],
            kv: vec![Vec3::zeros(); n],
            mv_plus: vec![Vec3::zeros(); n],
            mv_old: vec![Vec3::zeros(); n],
            nodal: vec![Vec3::zeros(); n],
        })
    }

    /// Whether the body has prescribed nodes.
    pub fn is_active(&self) -> bool {
        !self.elements.is_empty()
    }

    /// v_p⁺ per node (0 on nodes that are not prescribed), m/s.
    pub fn velocities(&self) -> &[Vec3] {
        &self.v_plus
    }

    /// Writes v_p⁺ into the prescribed nodes' entries of a full velocity vector (3 per node).
    pub fn fill_full(&self, full: &mut [f64]) {
        for (n, v) in self.v_plus.iter().enumerate() {
            if self.prescribed[n] {
                full[3 * n..3 * n + 3].copy_from_slice(v.as_slice());
            }
        }
    }
}

/// M_e u over one element, added into `out` (consistent mass; lumped adds nothing off the
/// diagonal and is handled by the caller when needed).
pub(in crate::scene) fn add_consistent_mass_action(
    body: &SoftBody,
    e: usize,
    u: &[Vec3],
    scale: f64,
    out: &mut [Vec3],
) {
    let t = &body.elements()[e];
    let w = body.options().density * t.volume / 20.0 * scale;
    let sum: Vec3 = t.nodes.iter().map(|&i| u[i]).sum();
    for &i in &t.nodes {
        out[i] += w * (u[i] + sum);
    }
}

/// Stage 0 of the step: θ⁺ of every pinned servo, v_p⁺ = (x_p(θ⁺) − xₙ)/h, the material
/// points at xₙ of the elements touching prescribed nodes, and the coupling products
/// K(xₙ)_{·p} v_p⁺, M_{·p} v_p⁺, M_{·p} v_p. Errors on an element the law cannot evaluate.
pub fn prescribe(
    body: &SoftBody,
    act: &BodyActuation,
    ws: &mut PrescribedWorkspace,
    x: &[Vec3],
    v: &[Vec3],
    h: f64,
) -> Result<()> {
    if !ws.is_active() {
        return Ok(());
    }
    let rest = body.rest_positions();
    for p in &act.pinned {
        let theta = next_angle(act, p, x);
        let (servo, _) = servo_of(act, p);
        for &i in &p.nodes {
            ws.v_plus[i] = (servo.rotate(theta, rest[i]) - x[i]) / h;
        }
    }
    for (slot, &e) in ws.points.iter_mut().zip(&ws.elements) {
        *slot = Some(body.material_point(e, x).map_err(|err| err.at_element(e))?);
    }
    stiffness_action(body, &ws.elements, &ws.points, &ws.v_plus, &mut ws.kv);
    ws.mv_plus.fill(Vec3::zeros());
    ws.mv_old.fill(Vec3::zeros());
    if body.options().mass == MassKind::Consistent {
        for &e in &ws.elements {
            add_consistent_mass_action(body, e, &ws.v_plus, 1.0, &mut ws.mv_plus);
        }
        for (n, o) in ws.nodal.iter_mut().enumerate() {
            *o = if ws.prescribed[n] {
                v[n]
            } else {
                Vec3::zeros()
            };
        }
        for &e in &ws.elements {
            add_consistent_mass_action(body, e, &ws.nodal, 1.0, &mut ws.mv_old);
        }
    }
    Ok(())
}

/// K(xₙ) u over the tetrahedra `elements` (material points `points` at xₙ), u per node,
/// written into `out` (zeroed first).
fn stiffness_action(
    body: &SoftBody,
    elements: &[usize],
    points: &[Option<MaterialPoint>],
    u: &[Vec3],
    out: &mut [Vec3],
) {
    out.fill(Vec3::zeros());
    for (&e, point) in elements.iter().zip(points) {
        let t = &body.elements()[e];
        let point = point
            .as_ref()
            .expect("material points evaluated by prescribe");
        let f = t.stiffness_action(point, t.nodes.map(|i| u[i]));
        for (k, &i) in t.nodes.iter().enumerate() {
            out[i] += f[k];
        }
    }
}

fn add_free(dofs: &DofMap, nodal: impl Fn(usize) -> Vec3, n: usize, out: &mut [f64]) {
    for i in 0..n {
        let f = nodal(i);
        for k in 0..3 {
            if let Some(r) = dofs.reduced_index(3 * i + k) {
                out[r] += f[k];
            }
        }
    }
}

/// Adds the coupling of the linearised step, −c_k K_fp v_p⁺ − M_fp (c_m v_p⁺ − v_p), to the
/// reduced right-hand side.
pub fn add_linear_coupling(
    ws: &PrescribedWorkspace,
    dofs: &DofMap,
    c_m: f64,
    c_k: f64,
    rhs: &mut [f64],
) {
    if !ws.is_active() {
        return;
    }
    let f = |i: usize| -c_k * ws.kv[i] - (c_m * ws.mv_plus[i] - ws.mv_old[i]);
    add_free(dofs, f, ws.kv.len(), rhs);
}

/// Adds the coupling of the Newton residual, M_fp((1 + hα) v_p⁺ − v_p) + hβ K_fp(xₙ) v_p⁺, to
/// the reduced residual.
pub fn add_newton_coupling(
    ws: &PrescribedWorkspace,
    dofs: &DofMap,
    h: f64,
    alpha: f64,
    beta: f64,
    residual: &mut [f64],
) {
    if !ws.is_active() {
        return;
    }
    let f = |i: usize| (1.0 + h * alpha) * ws.mv_plus[i] - ws.mv_old[i] + h * beta * ws.kv[i];
    add_free(dofs, f, ws.kv.len(), residual);
}

/// What the reaction needs from the step.
pub struct ReactionInputs<'a> {
    /// Positions at the start of the step and velocities before/after (per node).
    pub v_old: &'a [Vec3],
    /// v⁺ (per node, prescribed nodes included).
    pub v_new: &'a [Vec3],
    /// x⁺ (per node).
    pub x_new: &'a [Vec3],
    /// The elastic force f the step balanced: f(xₙ) (linearised) or f(x⁺) (Newton), N.
    pub elastic: &'a [Vec3],
    /// The force-driven actuators' nodal forces of the step (N).
    pub actuators: &'a [Vec3],
    /// Whether the step was linearised (c = 1 in the module doc) or Newton (c = 0).
    pub linearised: bool,
}

/// Writes each pinned servo's reaction torque τ (N·m, module doc) into `forces` (the body's
/// λ, indexed like its actuators).
pub fn reaction_torques(
    body: &SoftBody,
    act: &BodyActuation,
    ws: &mut PrescribedWorkspace,
    inputs: &ReactionInputs,
    h: f64,
    g: Vec3,
    forces: &mut [f64],
) {
    if !ws.is_active() {
        return;
    }
    let opts = body.options();
    let (alpha, beta) = (opts.rayleigh_mass, opts.rayleigh_stiffness);
    let c = if inputs.linearised { h * h } else { 0.0 };
    // K(xₙ) v⁺ into ws.nodal, then r = [M(v⁺ − v) + hαMv⁺ + (hβ + c)Kv⁺]/h − mg − f − f_a.
    let v_new = inputs.v_new;
    let mut r = std::mem::take(&mut ws.nodal);
    stiffness_action(body, &ws.elements, &ws.points, v_new, &mut r);
    for (n, rn) in r.iter_mut().enumerate() {
        *rn *= (h * beta + c) / h;
        if body.options().mass.is_diagonal() {
            let m = body.node_masses()[n];
            *rn += m * ((1.0 + h * alpha) * v_new[n] - inputs.v_old[n]) / h;
        }
        *rn -= body.node_masses()[n] * g + inputs.elastic[n] + inputs.actuators[n];
    }
    if body.options().mass == MassKind::Consistent {
        for &e in &ws.elements {
            add_consistent_mass_action(body, e, v_new, (1.0 + h * alpha) / h, &mut r);
            add_consistent_mass_action(body, e, inputs.v_old, -1.0 / h, &mut r);
        }
    }
    for p in &act.pinned {
        let (servo, _) = servo_of(act, p);
        forces[p.actuator] = p
            .nodes
            .iter()
            .map(|&i| {
                (inputs.x_new[i] - servo.origin)
                    .cross(&r[i])
                    .dot(&servo.axis)
            })
            .sum();
    }
    ws.nodal = r;
}
