//! QP inverse control (layer 6; uses `chart`, `mesh` (file output), `rigid` (joint kinds), `scene` and `diff`): a small dense convex QP with one solver trait and two backends (clarabel by
//! default, OSQP 0.6 behind the cargo feature `osqp`), the `control` job's setup, entry
//! point and report, the contact-force-limiting variant (paper 004 Eq. 17), and a robot's joint
//! coordinate as the effector, moved through contact (`joint_effector`, `joint_control`).

mod actuation_qp;
mod contact_force;
mod contact_inverse_dynamics;
mod controller;
mod feedback;
mod grasp_job;
mod joint_control;
mod joint_effector;
mod max_force;
mod plant;
mod qp;
mod qp_clarabel;
#[cfg(feature = "osqp")]
mod qp_osqp;
mod report;
mod setup;
mod static_compliance;
mod static_control;
mod summary;

pub use actuation_qp::ActuationQp;
pub use contact_force::{
    ForceLimiting, GraspProblem, GraspReport, grasp, grasp_observed, grasp_with_progress,
};
pub use contact_inverse_dynamics::{InverseDynamicsResult, contact_inverse_dynamics};
pub use controller::{ControlOptions, InverseController, Linearisation};
pub use feedback::Controller;
pub use grasp_job::{GraspSetup, GraspSummary, grasp_scene, grasp_scene_observed};
pub use joint_control::{
    JOINT_REACHED, JointSetup, JointSummary, joint_control, parse_joint_target,
};
pub use joint_effector::{
    ACTIVE_FORCE, HeldRows, JointEffector, JointLinearisation, JointLinearizer,
};
pub use max_force::set_max_forces;
pub use plant::{Noise, Plant, PlantRun};
pub use qp::{KktResidual, Qp, QpSettings, QpSolution, QpSolver, QpStatus, default_qp_solver};
pub use qp_clarabel::ClarabelSolver;
#[cfg(feature = "osqp")]
pub use qp_osqp::OsqpSolver;
pub use report::{ControlReport, actuation_units};
pub use setup::{
    ControlSetup, StateObserver, check_effector, control_scene, control_scene_observed,
    control_scene_with_progress, parse_target,
};
pub use static_control::{PATIENCE, STATIC_TOLERANCE, static_control};

#[cfg(test)]
mod qp_tests;
