//! Actuators and effectors of soft bodies (layer 2; uses `mesh`, `math`, `error`): cables,
//! pneumatic cavities and servos, each with its value δ(x), its Jacobian H_a = ∂δ/∂x and the
//! derivative of its force ∂(H_aᵀλ)/∂x (docs/step.md, paper 004 Sec. II-C); points embedded
//! in the mesh; the small bounded solve of displacement-driven actuators.

mod bounded_solve;
mod cable;
mod cavity;
mod embedding;
mod kind;
mod servo;

pub use bounded_solve::{bounded_solve, window_solve};
pub use cable::Cable;
pub use cavity::Cavity;
pub use embedding::{Effector, EmbeddedPoint};
pub use kind::{Actuator, ActuatorKind, Drive};
pub use servo::Servo;

#[cfg(test)]
mod derivative_tests;
