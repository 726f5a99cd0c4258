//! The contact stage of the step: detection over all bodies, the groups of bodies that touch
//! each other, one NCP per group (with the rigid systems' rows), and v⁺ = v_free + A⁻¹ h H_cᵀ λ.

pub mod ball_rows;
pub mod flat_face_rows;
pub mod group;
pub mod group_apply;
pub mod group_ncp;
pub mod group_solve;
pub mod screen;
pub mod soft_rigid_rows;
pub mod stage;
pub mod workspace;
