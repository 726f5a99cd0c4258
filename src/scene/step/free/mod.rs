//! Stages 1–4 of each soft body's step: its free velocity v_free without contact (the
//! elastic forces and stiffness, the actuators' inputs and tangent, the pinned servo horns,
//! the assembly and factorisation of A and the solve for Δv).

pub mod actuation;
pub mod actuator_tangent;
pub mod free_step;
pub mod newton;
pub mod prescribed;
pub mod prescribed_derivative;
pub mod workspace;
