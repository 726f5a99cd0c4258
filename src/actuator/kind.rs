//! An actuator (docs/step.md): its geometry (cable, cavity, servo), how it is driven, and the
//! generalised force it applies, f_a = σ λ H_aᵀ with H_a = ∂δ/∂x.
//!
//! Sign σ: λ is the physical input, positive as users expect it — a cable's tension (N)
//! pulls, shortening the cable, so σ = −1; a pressure (Pa) and a servo torque (N·m) increase
//! the volume and the angle, so σ = +1. In every case σλ δ is the work-conjugate pair, so
//! f_a = ∂(σλδ)/∂x.

use crate::math::{Mat3, Vec3};

use super::cable::Cable;
use super::cavity::Cavity;
use super::servo::Servo;

/// The geometry of an actuator (closed set).
#[derive(Debug, Clone, PartialEq)]
pub enum ActuatorKind {
    /// A cable; δ = its length (m), λ = tension (N).
    Cable(Cable),
    /// A pneumatic cavity; δ = its volume (m³), λ = pressure (Pa).
    Pneumatic(Cavity),
    /// A servo; δ = its angle (rad), λ = torque (N·m).
    Servo(Servo),
}

/// How an actuator is driven.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Drive {
    /// λ given (N, Pa or N·m).
    Force(f64),
    /// δ driven to this target (m, m³ or rad): λ is solved in the step so that δ(x⁺)
    /// reaches it (to first order in the linearised step), within the bounds; an angle-driven
    /// servo instead pins its horn nodes to the rigid rotation (`scene::step::free::prescribed`).
    Target(f64),
}

/// An actuator: name, geometry, drive and bounds on λ.
#[derive(Debug, Clone, PartialEq)]
pub struct Actuator {
    /// Its name (`c1`).
    pub name: String,
    /// Geometry.
    pub kind: ActuatorKind,
    /// Force or target.
    pub drive: Drive,
    /// Bounds [min, max] on λ when it is solved (a cable only pulls: min = 0).
    pub bounds: [f64; 2],
    /// Bounds [min, max] on δ (m, m³ or rad) that a force-driven actuator keeps (a cable's
    /// total pull between `min_displacement` and `max_displacement`, SOFA's
    /// `maxPositiveDisp` / `maxNegativeDisp` in force mode): λ is then solved in the step, the
    /// given force while δ(x⁺) stays inside, the force that holds δ at the bound otherwise
    /// (`scene::model::actuation`). [−∞, ∞] for none.
    pub value_bounds: [f64; 2],
    /// Largest change of the target-driven value per step (m, m³ or rad; SOFA's
    /// `maxDispVariation`): each step aims at the target moved from the current δ by at most
    /// this. `f64::INFINITY` for no limit.
    pub max_value_step: f64,
    /// Largest change of λ per step (N, Pa or N·m): a given force is ramped towards, a solved
    /// one is bounded to λₙ ± this. `f64::INFINITY` for no limit.
    pub max_force_step: f64,
}

impl ActuatorKind {
    /// `cable`, `pneumatic` or `servo` (the final state's `kind`).
    pub fn label(&self) -> &'static str {
        match self {
            ActuatorKind::Cable(_) => "cable",
            ActuatorKind::Pneumatic(_) => "pneumatic",
            ActuatorKind::Servo(_) => "servo",
        }
    }

    /// σ of the module doc: −1 for a cable, +1 otherwise.
    pub fn sign(&self) -> f64 {
        match self {
            ActuatorKind::Cable(_) => -1.0,
            _ => 1.0,
        }
    }

    /// δ(x): length (m), volume (m³) or angle (rad) at node positions `x` (m).
    pub fn value(&self, x: &[Vec3]) -> f64 {
        match self {
            ActuatorKind::Cable(c) => c.value(x),
            ActuatorKind::Pneumatic(c) => c.value(x),
            ActuatorKind::Servo(s) => s.value(x),
        }
    }

    /// Clears `rows` and writes H_a = ∂δ/∂x as (node, 3-vector) rows (a node may repeat).
    pub fn jacobian(&self, x: &[Vec3], rows: &mut Vec<(usize, Vec3)>) {
        rows.clear();
        match self {
            ActuatorKind::Cable(c) => c.jacobian(x, rows),
            ActuatorKind::Pneumatic(c) => c.jacobian(x, rows),
            ActuatorKind::Servo(s) => s.jacobian(x, rows),
        }
    }

    /// Adds `scale` · (∂²δ/∂x²) dx into `out` (one vector per node).
    pub fn hessian_action(&self, x: &[Vec3], dx: &[Vec3], scale: f64, out: &mut [Vec3]) {
        match self {
            ActuatorKind::Cable(c) => c.hessian_action(x, dx, scale, out),
            ActuatorKind::Pneumatic(c) => c.hessian_action(x, dx, scale, out),
            ActuatorKind::Servo(s) => s.hessian_action(x, dx, scale, out),
        }
    }
}

impl ActuatorKind {
    /// Whether a force-driven actuator of this kind has its tangent −∂f_a/∂x = −σλ ∂²δ/∂x²
    /// held implicitly in the step matrix A (the linearised force at x⁺, not at xₙ): a
    /// cable's, λ ∂²L/∂x², positive semi-definite for λ ≥ 0. Held explicitly, a tensioned
    /// cable's bow-string stiffness feeds energy into the step: a trunk compressed by its
    /// cables past its Euler load is held straight only by that stiffness. A cavity's
    /// −p ∂²V/∂x² and a servo's −τ ∂²θ/∂x² are indefinite and stay explicit.
    pub fn tangent_in_step(&self) -> bool {
        matches!(self, ActuatorKind::Cable(_))
    }

    /// The node lists its implicit tangent couples ([`Self::tangent_in_step`]; empty for
    /// the others).
    pub fn tangent_cliques(&self) -> Vec<Vec<usize>> {
        match self {
            ActuatorKind::Cable(c) => c.segment_nodes(),
            _ => Vec::new(),
        }
    }

    /// Calls `add(i, j, B)` with the 3×3 blocks of `scale` · ∂²δ/∂x² for the kinds whose
    /// tangent is implicit ([`crate::actuator::Cable::hessian_blocks`]); nothing for the
    /// others.
    pub fn hessian_blocks(&self, x: &[Vec3], scale: f64, add: impl FnMut(usize, usize, &Mat3)) {
        if let ActuatorKind::Cable(c) = self {
            c.hessian_blocks(x, scale, add);
        }
    }

    /// Adds `scale` · d/dx[(∂²δ/∂x²) w] · dx into `out` for the kinds whose tangent is
    /// implicit ([`crate::actuator::Cable::hessian_derivative_action`]); nothing for the
    /// others.
    pub fn hessian_derivative_action(
        &self,
        x: &[Vec3],
        w: &[Vec3],
        dx: &[Vec3],
        scale: f64,
        out: &mut [Vec3],
    ) {
        if let ActuatorKind::Cable(c) = self {
            c.hessian_derivative_action(x, w, dx, scale, out);
        }
    }
}

impl Actuator {
    /// Adds the nodal forces f_a = σ λ H_aᵀ (N) into `out`, using `rows` as scratch.
    pub fn add_forces(
        &self,
        x: &[Vec3],
        lambda: f64,
        rows: &mut Vec<(usize, Vec3)>,
        out: &mut [Vec3],
    ) {
        self.kind.jacobian(x, rows);
        let s = self.kind.sign() * lambda;
        for (n, g) in rows.iter() {
            out[*n] += s * g;
        }
    }

    /// Adds ∂f_a/∂x · dx = σ λ (∂²δ/∂x²) dx (N) into `out`: the derivative of H_aᵀλ the
    /// gradients need, as an action on a displacement `dx` (m).
    pub fn add_force_derivative_action(
        &self,
        x: &[Vec3],
        lambda: f64,
        dx: &[Vec3],
        out: &mut [Vec3],
    ) {
        if lambda != 0.0 {
            self.kind
                .hessian_action(x, dx, self.kind.sign() * lambda, out);
        }
    }
}
