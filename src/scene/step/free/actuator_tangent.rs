//! The force-driven actuators' tangent held implicitly in the step (docs/step.md):
//! K_a = −∂f_a/∂x = Σ −σλ ∂²δ/∂x² over the force-driven actuators whose kind has
//! [`ActuatorKind::tangent_in_step`] (cables: λ ∂²L/∂x², positive semi-definite for λ ≥ 0).
//! The step linearises their force at the end of the step, f_a(x⁺) ≈ f_a(xₙ) − h K_a v⁺, so
//!
//! ```text
//! A = (1 + hα) M + (hβ + h²)(K + K_a),    b = h (f_ext + f + f_a − D v) − h² (K + K_a) v
//! ```
//!
//! with the Rayleigh damping D = αM + β(K + K_a) built on the same total stiffness. A cable
//! held explicitly (K_a out of A) feeds energy into every step once its bow-string stiffness
//! is what keeps the body up (a trunk pulled by its cables past its Euler load, where the
//! elastic K alone is indefinite), and so does a damping βK without K_a (negative along the
//! buckling mode): the robot never comes to rest. With both, D is positive semi-definite at
//! every stable equilibrium (K + K_a is). K_a's blocks link the nodes of a cable segment's two
//! embedded points, which lie in different elements: the body's pattern is widened by
//! [`couplings`](crate::scene::actuator_couplings) when it is built, and [`ActuatorTangent`] looks up where every block entry
//! goes once.

use crate::actuator::{Actuator, Drive};
use crate::error::{Error, Result};
use crate::linalg::SymmetricPattern;
use crate::math::{Mat3, Vec3};

use crate::scene::model::actuation::{BodyActuation, is_solved};

/// Marks a block entry of a removed (fixed) degree of freedom or of the upper triangle.
const SKIP: u32 = u32::MAX;

/// Whether actuator `a`'s tangent is in the step: force-driven, not solved (a cable with
/// displacement bounds has its λ solved, its force held at xₙ as a displacement-driven
/// cable's), and of a kind that has one.
fn in_step(a: &Actuator) -> bool {
    matches!(a.drive, Drive::Force(_)) && !is_solved(a) && a.kind.tangent_in_step()
}

/// Whether actuator `a` has a force derivative (a solved λ's, or a force-driven actuator's)
/// that [`in_step`] leaves out of the matrix: a cavity's, a torque-driven servo's, a solved λ's.
pub(in crate::scene) fn derivative_outside_step(a: &Actuator) -> bool {
    !in_step(a) && (is_solved(a) || matches!(a.drive, Drive::Force(_)))
}

/// Where each entry of K_a's blocks goes in the values of the body's pattern, looked up once
/// (the order of the blocks depends on the actuators' structure only).
#[derive(Debug, Clone, Default)]
pub struct ActuatorTangent {
    /// Per block entry (9 per block, row-major), its value index or [`SKIP`].
    indices: Vec<u32>,
    /// Per actuator whose tangent is in the step: its index and its range of `indices`.
    ranges: Vec<(usize, std::ops::Range<usize>)>,
}

impl ActuatorTangent {
    /// The plan of `act`'s implicit tangents on `pattern` (which must hold [`couplings`](crate::scene::actuator_couplings)),
    /// with `rest` the body's rest positions (any positions do: only the structure is read).
    ///
    /// Errors, naming `what`, if a block entry is missing from the pattern (a body built
    /// without [`couplings`](crate::scene::actuator_couplings)).
    pub fn new(
        act: &BodyActuation,
        pattern: &SymmetricPattern,
        rest: &[Vec3],
        what: &str,
    ) -> Result<ActuatorTangent> {
        let dofs = pattern.dofs();
        let mut indices = Vec::new();
        let mut missing = false;
        let mut ranges = Vec::new();
        for (k, a) in act.actuators.iter().enumerate() {
            if !in_step(a) {
                continue;
            }
            let start = indices.len();
            a.kind.hessian_blocks(rest, 1.0, |i, j, _| {
                for p in 0..3 {
                    for q in 0..3 {
                        let index =
                            match (dofs.reduced_index(3 * i + p), dofs.reduced_index(3 * j + q)) {
                                (Some(r), Some(c)) if r >= c => {
                                    pattern.value_index(r, c).map_or_else(
                                        || {
                                            missing = true;
                                            SKIP
                                        },
                                        |v| v as u32,
                                    )
                                }
                                _ => SKIP,
                            };
                        indices.push(index);
                    }
                }
            });
            ranges.push((k, start..indices.len()));
        }
        if missing {
            return Err(Error::invalid(
                what,
                "its pattern lacks the cables' couplings: build it with SoftBody::with_couplings(…, scene::actuator_couplings(…))",
            ));
        }
        Ok(ActuatorTangent { indices, ranges })
    }

    /// Whether no actuator's tangent is in the step.
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }

    /// Adds `scale` · K_a(x) to the pattern's `values` (lower triangle), λ from `forces`;
    /// a slack actuator (λ = 0) costs nothing.
    pub fn add(
        &self,
        act: &BodyActuation,
        x: &[Vec3],
        forces: &[f64],
        scale: f64,
        values: &mut [f64],
    ) {
        for (k, range) in &self.ranges {
            let (a, f) = (&act.actuators[*k], forces[*k]);
            if f == 0.0 {
                continue;
            }
            // K_a = −σλ ∂²δ/∂x².
            let indices = &self.indices[range.clone()];
            let mut at = 0;
            a.kind
                .hessian_blocks(x, -a.kind.sign() * f * scale, |_, _, block: &Mat3| {
                    for (index, value) in indices[at..at + 9].iter().zip(block.transpose().iter()) {
                        if *index != SKIP {
                            values[*index as usize] += value;
                        }
                    }
                    at += 9;
                });
            debug_assert_eq!(at, indices.len());
        }
    }
}

/// Adds `scale` · K_a(x) w (N per unit w) into `out` (one vector per node), λ from `forces`.
pub fn add_tangent_action(
    act: &BodyActuation,
    x: &[Vec3],
    forces: &[f64],
    w: &[Vec3],
    scale: f64,
    out: &mut [Vec3],
) {
    for (a, f) in act.actuators.iter().zip(forces) {
        if in_step(a) && *f != 0.0 {
            a.kind.hessian_action(x, w, -a.kind.sign() * f * scale, out);
        }
    }
}

/// Adds `scale` · d/dx[K_a(x) w] · dx (N per unit w and dx) into `out`, λ from `forces`:
/// symmetric in `w` and `dx` (a third derivative), so it serves forward and reverse mode.
pub fn add_tangent_derivative_action(
    act: &BodyActuation,
    x: &[Vec3],
    forces: &[f64],
    w: &[Vec3],
    dx: &[Vec3],
    scale: f64,
    out: &mut [Vec3],
) {
    for (a, f) in act.actuators.iter().zip(forces) {
        if in_step(a) && *f != 0.0 {
            a.kind
                .hessian_derivative_action(x, w, dx, -a.kind.sign() * f * scale, out);
        }
    }
}

/// Adds `scale` · (∂K_a/∂λ_i) w = −σ ∂²δ_i/∂x² w · `scale` of actuator `index` into `out`
/// (nothing when its tangent is not in the step): the tangent's part of d/dλ_i.
pub fn add_tangent_force_derivative(
    act: &BodyActuation,
    index: usize,
    x: &[Vec3],
    w: &[Vec3],
    scale: f64,
    out: &mut [Vec3],
) {
    let a = &act.actuators[index];
    if in_step(a) {
        a.kind.hessian_action(x, w, -a.kind.sign() * scale, out);
    }
}
