//! Articulated rigid bodies (layer 2; uses `math`, `error`): the immutable [`Model`] (kinematic
//! tree, joints, inertias, frames, collision geometry) and the reusable [`Data`], spatial
//! algebra, URDF loading, kinematics, Jacobians, RNEA, CRBA, ABA, M⁻¹ and the analytical
//! derivatives of RNEA and ABA (Carpentier & Mansard, RSS 2018), as Pinocchio does; free
//! bodies (Newton–Euler with world-frame velocities), the Cholesky factor of M, and the rigid step's free velocity
//! (paper 002 Eq. 3).
//!
//! Conventions: spatial vectors are `[linear; angular]`; joint order is depth-first from the
//! URDF root with children in file order; a free-flyer is configured by
//! `x y z qx qy qz qw` and moves with a twist in its own frame; derivatives with respect to
//! `q` are in the tangent space (`q ⊕ δ`, see [`Model::integrate`]).

// The algorithms walk velocity coordinates `idx_v..idx_v + nv` that index several buffers at
// once (J, U, τ, …): index loops read like the equations.
#![allow(clippy::needless_range_loop)]

mod aba;
mod aba_derivatives;
mod collision;
mod crba;
mod crba_world;
mod data;
mod factored_free_velocity;
mod free_body;
mod free_body_derivative;
mod free_velocity;
mod integrate_derivative;
mod jacobian;
mod joint;
mod kinematics;
mod mass_factor;
mod mat3;
mod minverse;
mod model;
mod origin_inertia;
mod principal_moments;
mod report;
mod revolute_pose;
mod rnea;
mod rnea_derivatives;
pub mod spatial;
mod urdf;
mod urdf_parser;

pub use aba::aba;
pub use aba_derivatives::compute_aba_derivatives;
pub use collision::{Geometry, MeshFormat, Shape};
pub use crba::crba;
pub use crba_world::crba_world;
pub use data::{Data, Mat6xN};
pub use factored_free_velocity::factored_free_velocity;
pub use free_body::FreeBody;
pub use free_body_derivative::FreeBodyStepJacobian;
pub use free_velocity::free_velocity;
pub use integrate_derivative::{integrate_jacobians, se3_left_jacobian, so3_right_jacobian};
pub use jacobian::{
    ReferenceFrame, compute_joint_jacobians, frame_jacobian, frame_placement, point_jacobian,
};
pub use joint::{JointKind, JointModel, quaternion_rotation};
pub use kinematics::{forward_kinematics, forward_kinematics_placements};
pub use mass_factor::MassFactor;
pub use minverse::compute_minverse;
pub use model::{Frame, FrameKind, Limits, Model};
pub use principal_moments::{TRIANGLE_TOLERANCE, breaks_triangle_inequality, principal_moments};
pub use report::{DynamicsCase, DynamicsReport, check_case, dynamics_report};
pub use rnea::{nonlinear_effects, rnea};
pub use rnea_derivatives::compute_rnea_derivatives;
pub use spatial::{Inertia, Mat6, Se3, Vec6};
pub use urdf::{Base, ChildOrder, load_urdf, load_urdf_ordered, parse_urdf, parse_urdf_ordered};
