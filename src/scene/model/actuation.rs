//! The actuators and effectors of one soft body as the model holds them ([`BodyActuation`],
//! built from the scene file by `actuation_build`), which of them the step solves for, and
//! their forces f_a = σλ H_aᵀ and force derivatives at given λ (docs/step.md).

use crate::actuator::{Actuator, ActuatorKind, Drive, Effector};
use crate::math::Vec3;

use super::actuator_input::ActuatorInput;
use super::pinned_servo::PinnedServo;

/// The actuators and effectors of one soft body (model data, immutable).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BodyActuation {
    /// Cables, then cavities, then servos, each in file order.
    pub actuators: Vec<Actuator>,
    /// What each actuator's input is and how a command becomes it, one per actuator, in
    /// the same order (`actuator_input`: [`BodyActuation::input`], [`BodyActuation::set_input`]).
    pub inputs: Vec<ActuatorInput>,
    /// Effectors, in file order.
    pub effectors: Vec<Effector>,
    /// The angle-driven servos, whose horn nodes are pinned (`scene::step::free::prescribed`); the body
    /// must have these nodes fixed (removed from the system).
    pub pinned: Vec<PinnedServo>,
    /// What the user should hear about the build, one line each naming the key (points
    /// outside the mesh mapped with extrapolated weights, when the scene did not state the
    /// body's `embed_tolerance`); `Scene::warnings` reports them.
    pub warnings: Vec<String>,
}

/// Whether λ of `a` is solved by the bounded solve: a target-driven cable or cavity (an
/// angle-driven servo pins its horn instead), or a force-driven actuator with value bounds.
pub fn is_solved(a: &Actuator) -> bool {
    !matches!(a.kind, ActuatorKind::Servo(_))
        && (matches!(a.drive, Drive::Target(_)) || has_value_bounds(a))
}

/// Whether `a` has a finite bound on its value δ ([`Actuator::value_bounds`]).
pub fn has_value_bounds(a: &Actuator) -> bool {
    a.value_bounds[0] > f64::NEG_INFINITY || a.value_bounds[1] < f64::INFINITY
}

/// [`Actuator::value_bounds`] of an actuator without bounds on its value.
pub(in crate::scene) const NO_VALUE_BOUNDS: [f64; 2] = [f64::NEG_INFINITY, f64::INFINITY];

/// A per-step limit from the file (`None`: unlimited).
pub(in crate::scene) fn limit(v: Option<f64>) -> f64 {
    v.unwrap_or(f64::INFINITY)
}

impl BodyActuation {
    /// Whether an actuator's λ is solved (a target-driven cable or cavity).
    pub fn has_targets(&self) -> bool {
        self.actuators.iter().any(is_solved)
    }

    /// Every pinned node (fixed in the body: `Scene::build` marks them).
    pub fn pinned_nodes(&self) -> impl Iterator<Item = usize> + '_ {
        self.pinned.iter().flat_map(|p| p.nodes.iter().copied())
    }

    /// λ at the start of a run: the given force (0 when it is ramped, `max_force_step`), or 0
    /// for target-driven actuators.
    pub fn initial_forces(&self) -> Vec<f64> {
        self.actuators
            .iter()
            .map(|a| match a.drive {
                Drive::Force(f) if a.max_force_step.is_infinite() => f,
                _ => 0.0,
            })
            .collect()
    }

    /// The given λ of the force-driven actuators (0 for the others), without ramping.
    pub fn given_forces(&self) -> Vec<f64> {
        self.actuators
            .iter()
            .map(|a| match a.drive {
                Drive::Force(f) => f,
                Drive::Target(_) => 0.0,
            })
            .collect()
    }

    /// Moves each force-driven λ in `forces` towards its given value by at most its
    /// `max_force_step` (the step's λ; a no-op without limits). Solved ones (with value
    /// bounds) keep λₙ: `begin_step` ramps their preferred λ.
    pub fn ramp_forces(&self, forces: &mut [f64]) {
        for (a, l) in self.actuators.iter().zip(forces.iter_mut()) {
            if let Drive::Force(f) = a.drive
                && !is_solved(a)
            {
                *l = f.clamp(*l - a.max_force_step, *l + a.max_force_step);
            }
        }
    }

    /// Adds `scale` · Σ f_a of the force-driven actuators that are not solved (N) at `x` into
    /// `out`, with λ from `forces` (indexed like `actuators`).
    pub fn add_driven_forces(
        &self,
        x: &[Vec3],
        forces: &[f64],
        scale: f64,
        rows: &mut Vec<(usize, Vec3)>,
        out: &mut [Vec3],
    ) {
        for (a, f) in self.actuators.iter().zip(forces) {
            if matches!(a.drive, Drive::Force(_)) && !is_solved(a) {
                a.add_forces(x, scale * f, rows, out);
            }
        }
    }

    /// Adds `scale` · Σ f_a of the solved actuators (N) at `x` into `out`, λ from `forces`.
    pub fn add_solved_forces(
        &self,
        x: &[Vec3],
        forces: &[f64],
        scale: f64,
        rows: &mut Vec<(usize, Vec3)>,
        out: &mut [Vec3],
    ) {
        for (a, f) in self.actuators.iter().zip(forces) {
            if is_solved(a) {
                a.add_forces(x, scale * f, rows, out);
            }
        }
    }

    /// Adds `scale` · Σ ∂f_a/∂x · dx of the force-driven actuators and `solved_scale` · that of
    /// the solved ones (N) into `out`, λ from `forces`, over the actuators `include` accepts.
    #[allow(clippy::too_many_arguments)]
    pub fn add_driven_force_derivative(
        &self,
        include: impl Fn(&Actuator) -> bool,
        x: &[Vec3],
        forces: &[f64],
        scale: f64,
        solved_scale: f64,
        dx: &[Vec3],
        out: &mut [Vec3],
    ) {
        for (a, f) in self.actuators.iter().zip(forces) {
            if !include(a) {
                continue;
            }
            if is_solved(a) {
                a.add_force_derivative_action(x, solved_scale * f, dx, out);
            } else if let Drive::Force(_) = a.drive {
                a.add_force_derivative_action(x, scale * f, dx, out);
            }
        }
    }

    /// Σ σλδ(x) of the force-driven actuators that are not solved (J), λ from `forces`: the
    /// work whose gradient is their force.
    pub fn driven_work(&self, x: &[Vec3], forces: &[f64]) -> f64 {
        self.actuators
            .iter()
            .zip(forces)
            .map(|(a, f)| match a.drive {
                Drive::Force(_) if !is_solved(a) => a.kind.sign() * f * a.kind.value(x),
                _ => 0.0,
            })
            .sum()
    }
}

/// The node lists the implicit actuator tangents of `act` couple (every cable segment's
/// nodes), to widen the body's pattern with ([`crate::fem::SoftBody::with_couplings`]).
pub fn couplings(act: &BodyActuation) -> Vec<Vec<usize>> {
    act.actuators
        .iter()
        .flat_map(|a| a.kind.tangent_cliques())
        .collect()
}
