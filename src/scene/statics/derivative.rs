//! The derivative of a static equilibrium with respect to its inputs: how x* moves when a
//! material parameter or an actuator's input moves, so that a run started at rest at the
//! static equilibrium under its first commands (`--start static`) carries the start's
//! sensitivity into every trajectory derivative.
//!
//! At equilibrium the residual of each body on its free degrees of freedom vanishes,
//!
//! ```text
//! r(x; θ) = f(x; E, ν) + M g + Σ f_a(x; λ_a) = 0,      f_a = σ λ_a H_a(x)ᵀ
//! ```
//!
//! and differentiating, (∂r/∂x) dx + (∂r/∂θ) dθ = 0 with −∂r/∂x = K + K_a − J_a = T − J_a:
//! K the elastic tangent, K_a = −∂f_a/∂x of the force-driven cables (in the sparse matrix T),
//! J_a = ∂f_a/∂x of the other force-driven actuators (cavities, torque-driven servos: applied
//! matrix-free, `refine`). So
//!
//! ```text
//! (T − J_a) dx = ∂r/∂θ dθ,   ∂r/∂E = ∂f/∂E,  ∂r/∂ν = ∂f/∂ν,  ∂r/∂ρ = M g / ρ,
//!                            ∂r/∂λ_a = σ H_a(x*)ᵀ
//! ```
//!
//! one factorisation of T per body, solved once per input direction (forward) or once per
//! output cotangent (reverse: T − J_a is symmetric, every term a Hessian of an energy).
//! A stable equilibrium has T − J_a positive definite; where T is not, the equilibrium is not
//! stable and its derivative is refused. Displacement-driven actuators (λ solved from a
//! target), angle-driven servos (pinned horns) and laws without an exact tangent
//! (`corotational_sofa`) are refused too: their equilibria have no such derivative here.

use std::sync::Arc;

use faer::dyn_stack::{MemBuffer, MemStack};

use crate::error::{Error, Result};
use crate::fem::{MaterialParameter, SoftBody, Stiffness};
use crate::linalg::{FactorKind, NumericFactor, SymbolicFactor};
use crate::math::Vec3;
use crate::scene::model::actuation::BodyActuation;
use crate::scene::model::{Scene, State};
use crate::scene::step::free::actuator_tangent::{ActuatorTangent, derivative_outside_step};

use super::refine::{ActuatedTangent, Refinement};

/// An input of a static equilibrium: what `∂r/∂θ` is taken with respect to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StaticInput {
    /// E (Pa) or ν of soft body `body`.
    Material {
        /// Index of the soft body.
        body: usize,
        /// Which parameter.
        parameter: MaterialParameter,
    },
    /// The density ρ (kg/m³) of soft body `body` (a lumped or consistent mass): the weights
    /// mₙ g scale with it, ∂r/∂ρ = (mₙ/ρ) g.
    Density {
        /// Index of the soft body.
        body: usize,
    },
    /// The force λ (N, Pa or N·m) of force-driven actuator `index` of soft body `body`.
    Actuator {
        /// Index of the soft body.
        body: usize,
        /// Index of the actuator in the body's actuators.
        index: usize,
    },
}

impl StaticInput {
    fn body(&self) -> usize {
        match *self {
            StaticInput::Material { body, .. }
            | StaticInput::Density { body }
            | StaticInput::Actuator { body, .. } => body,
        }
    }
}

/// One body's factor of the static tangent T = K + K_a at its equilibrium, and buffers.
struct BodyTangent {
    factor: NumericFactor,
    buffer: MemBuffer,
    /// T's values on the body's pattern.
    t: Vec<f64>,
    /// Whether actuators outside T (cavities, torque-driven servos) join by conjugate
    /// gradients.
    refine_rest: bool,
    refinement: Refinement,
    rhs: Vec<f64>,
    nodal: Vec<Vec3>,
    rows: Vec<(usize, Vec3)>,
    derivatives: crate::fem::ParameterDerivatives,
}

/// The static tangents of every soft body of a scene at an equilibrium (positions and λ of a
/// [`State`] that [`super::solve_static`] wrote), factorised once; [`Self::tangent`] and
/// [`Self::cotangent`] solve with them.
pub struct StaticTangent {
    bodies: Vec<BodyTangent>,
}

impl StaticTangent {
    /// Factorises each body's T = K + K_a at `state`'s positions and forces. Errors, naming the
    /// body, when the scene or the body is outside what the module doc covers, or when T is not
    /// positive definite (the equilibrium is not stable).
    pub fn new(scene: &Scene, state: &State) -> Result<StaticTangent> {
        if !scene.rigid.systems.is_empty() {
            return Err(Error::invalid(
                "--start static",
                "the derivative of a static start covers scenes of soft bodies only (the scene has rigid bodies or robots)",
            ));
        }
        let bodies = scene
            .bodies
            .iter()
            .enumerate()
            .map(|(b, body)| {
                BodyTangent::new(
                    body,
                    scene.body_actuation(b),
                    &state.bodies[b].positions,
                    &state_forces(scene, state, b),
                )
            })
            .collect::<Result<_>>()?;
        Ok(StaticTangent { bodies })
    }

    /// dx* (m per unit of input, every node, fixed ones 0) per body along the direction
    /// Σ dθᵢ eᵢ of `direction` (input, dθᵢ), at the equilibrium `state` of `scene` that
    /// [`Self::new`] factorised.
    pub fn tangent(
        &mut self,
        scene: &Scene,
        state: &State,
        direction: &[(StaticInput, f64)],
    ) -> Result<Vec<Vec<Vec3>>> {
        let mut out = Vec::with_capacity(self.bodies.len());
        for (b, w) in self.bodies.iter_mut().enumerate() {
            let body = &scene.bodies[b];
            let x = &state.bodies[b].positions;
            w.nodal.fill(Vec3::zeros());
            for &(input, d) in direction.iter().filter(|(i, _)| i.body() == b) {
                w.add_input_force(body, scene.body_actuation(b), x, input, d, scene.gravity())?;
            }
            let forces = state_forces(scene, state, b);
            w.solve(body, scene.body_actuation(b), x, &forces);
            let mut dx = vec![Vec3::zeros(); body.node_count()];
            body.pattern().dofs().scatter_nodal(&w.rhs, &mut dx);
            out.push(dx);
        }
        Ok(out)
    }

    /// The cotangent of each input of `inputs`: ⟨x̄*, dx*/dθᵢ⟩ for the position cotangent
    /// `position_cotangent` (per body, every node; fixed nodes' entries are ignored), by one
    /// solve per body with the symmetric T − J_a.
    pub fn cotangent(
        &mut self,
        scene: &Scene,
        state: &State,
        position_cotangent: &[Vec<Vec3>],
        inputs: &[StaticInput],
    ) -> Result<Vec<f64>> {
        let mut out = vec![0.0; inputs.len()];
        for (b, w) in self.bodies.iter_mut().enumerate() {
            if !inputs.iter().any(|i| i.body() == b) {
                continue;
            }
            let body = &scene.bodies[b];
            let x = &state.bodies[b].positions;
            let dofs = body.pattern().dofs();
            dofs.gather_nodal(&position_cotangent[b], &mut w.rhs);
            let forces = state_forces(scene, state, b);
            w.solve_reduced(body, scene.body_actuation(b), x, &forces);
            let adjoint = w.rhs.clone();
            for (k, input) in inputs.iter().enumerate() {
                if input.body() != b {
                    continue;
                }
                w.nodal.fill(Vec3::zeros());
                w.add_input_force(
                    body,
                    scene.body_actuation(b),
                    x,
                    *input,
                    1.0,
                    scene.gravity(),
                )?;
                dofs.gather_nodal(&w.nodal, &mut w.rhs);
                out[k] = adjoint.iter().zip(&w.rhs).map(|(a, r)| a * r).sum();
            }
        }
        Ok(out)
    }
}

/// λ of body `b` in `state` (the given forces when the state holds none).
fn state_forces(scene: &Scene, state: &State, b: usize) -> Vec<f64> {
    state
        .actuator_forces
        .get(b)
        .cloned()
        .unwrap_or_else(|| scene.body_actuation(b).given_forces())
}

impl BodyTangent {
    fn new(body: &SoftBody, act: &BodyActuation, x: &[Vec3], forces: &[f64]) -> Result<Self> {
        let what = format!("soft_body.{}", body.name());
        let refuse = |why: &str| Err(Error::invalid(&what, why.to_string()));
        if !body.material().law().has_exact_tangent() {
            return refuse(
                "the derivative of a static start needs a law with an exact tangent (`corotational_sofa` has none: use `corotational`)",
            );
        }
        if act.has_targets() {
            return refuse(
                "the derivative of a static start covers force-driven actuators only (this body has a displacement- or volume-driven one, or displacement bounds)",
            );
        }
        if !act.pinned.is_empty() {
            return refuse(
                "the derivative of a static start does not cover angle-driven servos (pinned horns)",
            );
        }
        let pattern = body.pattern();
        let n = pattern.n();
        let mut elastic = body.elastic_state();
        body.evaluate_elastic(x, Stiffness::Assemble, &mut elastic)?;
        let mut t = elastic.stiffness;
        ActuatorTangent::new(act, pattern, body.rest_positions(), &what)?
            .add(act, x, forces, 1.0, &mut t);
        let symbolic = Arc::new(SymbolicFactor::new(pattern)?);
        let mut factor = NumericFactor::new(symbolic, FactorKind::Llt);
        factor.factorize(pattern, &t).map_err(|e| {
            Error::invalid(
                &what,
                format!(
                    "the static start is not a stable equilibrium (its tangent stiffness K + K_a is not positive definite: {e}), so it has no derivative"
                ),
            )
        })?;
        let buffer = MemBuffer::new(factor.solve_scratch(1));
        Ok(BodyTangent {
            factor,
            buffer,
            t,
            refine_rest: act.actuators.iter().any(derivative_outside_step),
            refinement: Refinement::new(body.node_count(), n),
            rhs: vec![0.0; n],
            nodal: vec![Vec3::zeros(); body.node_count()],
            rows: Vec::new(),
            derivatives: body.parameter_derivatives_state(),
        })
    }

    /// Adds d · ∂r/∂θ of `input` at `x` into `self.nodal` (N, every node), under gravity `g`
    /// (m/s²).
    fn add_input_force(
        &mut self,
        body: &SoftBody,
        act: &BodyActuation,
        x: &[Vec3],
        input: StaticInput,
        d: f64,
        g: Vec3,
    ) -> Result<()> {
        match input {
            StaticInput::Material { parameter, .. } => {
                let zero = vec![Vec3::zeros(); body.node_count()];
                body.evaluate_parameter_derivatives(x, &zero, parameter, &mut self.derivatives)?;
                for (o, f) in self.nodal.iter_mut().zip(&self.derivatives.forces) {
                    *o += d * f;
                }
            }
            StaticInput::Density { .. } => {
                let rho = body.options().density;
                for (o, m) in self.nodal.iter_mut().zip(body.node_masses()) {
                    *o += (d * m / rho) * g;
                }
            }
            StaticInput::Actuator { index, .. } => {
                act.actuators[index].add_forces(x, d, &mut self.rows, &mut self.nodal);
            }
        }
        Ok(())
    }

    /// Solves (T − J_a) dx = r for r = `self.nodal` reduced; dx in `self.rhs` (free DOFs).
    fn solve(&mut self, body: &SoftBody, act: &BodyActuation, x: &[Vec3], forces: &[f64]) {
        body.pattern()
            .dofs()
            .gather_nodal(&self.nodal, &mut self.rhs);
        self.solve_reduced(body, act, x, forces);
    }

    /// Solves (T − J_a) y = `self.rhs` in place (free DOFs).
    fn solve_reduced(&mut self, body: &SoftBody, act: &BodyActuation, x: &[Vec3], forces: &[f64]) {
        let r = self.rhs.clone();
        self.factor
            .solve_vec_in_place(&mut self.rhs, MemStack::new(&mut self.buffer));
        if self.refine_rest {
            let tangent = ActuatedTangent {
                act,
                body,
                k: &self.t,
                x,
                forces,
                s: 1.0,
            };
            tangent.refine(
                &self.factor,
                &mut self.buffer,
                &r,
                &mut self.rhs,
                &mut self.refinement,
            );
        }
    }
}
