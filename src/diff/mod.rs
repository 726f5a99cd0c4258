//! Implicit differentiation of the step and of trajectories (layer 5; uses `scene`,
//! `contact`, `fem`, `actuator`, `linalg`): forward mode (JVP, tangents of x⁺, v⁺ for k input
//! directions with k solves by the step's own factorisation) and reverse mode (VJP, one solve
//! per output cotangent), and over trajectories forward sensitivities and a reverse-mode
//! adjoint (docs/derivatives.md; paper 004 §III, Eq. 10-11; paper 002 Appendix D).
//!
//! This layer only chains: the stiffness derivative `∂(K V)/∂x` and the parameter derivatives
//! come from `fem`, `∂(H_aᵀλ)/∂x` from `actuator`, the NCP derivative and the contact
//! geometry derivatives from `contact`.
//!
//! # The differentiated step
//!
//! The linearised implicit Euler step (paper 004 Eq. 1, `scene::Stepper`) written per body over
//! its free degrees of freedom is
//!
//! ```text
//! A v⁺ = M v + h (f_ext + f(x) + H_a(x)ᵀλ_a) + h H_c(x)ᵀλ_c,
//! A = (1 + hα) M + (hβ + h²)(K(x) + K_a(x))
//! x⁺ = x + h v⁺
//! ```
//!
//! (the step's `A Δv = b` with Δv = v⁺ − v rearranged; K_a = −∂f_a/∂x of the force-driven
//! cables, `scene::step::free::actuator_tangent`). Differentiating, with `c_K = hβ + h²`,
//! `T_V = ∂(K V)/∂x` and `T^a_V = ∂(K_a V)/∂x`:
//!
//! ```text
//! A dv⁺ = M dv + h (−K dx + ∂f/∂p dp + ∂(H_aᵀλ_a)/∂x dx + H_aᵀ dλ_a)
//!         − c_K (T_{v⁺} dx + ∂(K v⁺)/∂p dp + T^a_{v⁺} dx + ∂K_a/∂λ_a v⁺ dλ_a) + [contact terms]
//! dx⁺ = dx + h dv⁺
//! ```
//!
//! Reverse mode transposes this with A = Aᵀ, K = Kᵀ, T_V = T_Vᵀ and T^a_V = (T^a_V)ᵀ (all
//! Hessians of energies), so one solve A r̄ = v̄⁺ + h x̄⁺ gives every input cotangent.
//!
//! Fixed nodes are boundary conditions, not inputs: their components of a tangent are ignored
//! on input and zero on output, and likewise for cotangents. The horn nodes of angle-driven
//! (pinned) servos are removed from the system like fixed nodes but move,
//! x_p⁺ = o + R(θ⁺)(X − o): their components are inputs and outputs, the servo's angle target
//! is the parameter `actuator:NAME` (rad), and `scene::PrescribedDerivative` gives the terms
//! (the coupling of the free rows to v_p⁺ and x_p, the one-sided derivative of the per-step
//! angle limit) that this layer chains.

mod ball_chain;
mod chain_row;
mod chain_rows;
mod command_sensitivity;
mod contact_chain;
mod contact_point_set;
mod dense_product;
mod finite_difference;
mod group_ncp_derivative;
mod knot_sensitivity;
mod knots;
mod mixed_rows;
mod parameter;
mod record;
mod rigid_parameter;
mod rigid_record;
mod rigid_step;
mod rigid_step_vjp;
mod rigid_target;
mod rigid_trajectory;
mod row_chain;
mod static_start;
mod step_derivative;
mod tangent;
mod trajectory;

pub use command_sensitivity::{CommandSensitivity, CommandTerm, RunParameter};
pub use contact_chain::ContactRecord;
pub use contact_point_set::ContactPointSet;
pub use finite_difference::step_parameter_jacobian_fd;
pub use knot_sensitivity::KnotSensitivity;
pub use knots::ActuationKnots;
pub use mixed_rows::{MixedRowKind, MixedRows};
pub use parameter::{Parameter, every_parameter};
pub use record::{BodyRecord, Recorder, StepRecord, check_differentiable};
pub use rigid_parameter::{RigidParameter, RigidSeed, parse_rigid_parameter, rigid_seeds};
pub use rigid_record::RigidRecord;
pub use rigid_step::{RigidJacobianWorkspace, RigidStepJacobian, rigid_step_jacobian};
pub use rigid_trajectory::{
    RigidGradient, RigidSensitivity, RigidSensitivityStepper, RigidTape, record_rigid_trajectory,
    rigid_forward_sensitivities,
};
pub use step_derivative::{InputTangent, StepDerivative, StepVjp};
pub use tangent::{BodyTangent, RigidTangent, StateTangent};
pub use trajectory::{
    AdjointResult, BeforeStep, SensitivityStepper, SeriesAdjoint, Tape, TapeOptions, adjoint,
    adjoint_series, forward_sensitivities, record_trajectory, record_trajectory_with,
};
