//! Scenes (layer 4; uses `mesh`, `material`, `linalg`, `fem`, `actuator`, `rigid`, `contact`): the scene file and its
//! `--set` overrides, the model and state built from it (soft bodies, free rigid bodies and
//! robots), the time step as a readable list of stages (with its contact stage),
//! the static-equilibrium solve, and the final-state output.

mod actuation;
mod actuation_build;
mod actuation_file;
mod actuator_tangent;
mod attachment_file;
mod ball_rows;
mod contact_file;
mod contact_group;
mod contact_screen;
mod contact_stage;
mod contact_surface_file;
mod contact_workspace;
mod embedded_surface_file;
mod energy;
mod file;
mod final_state;
mod flat_face_rows;
mod group_apply;
mod group_ncp;
mod group_solve;
mod model;
mod obstacle_output;
mod output;
mod overrides;
mod prescribed;
mod prescribed_derivative;
mod region_file;
mod rigid_body_shape;
mod rigid_detection;
mod rigid_file;
mod rigid_model;
mod rigid_row_geometry;
mod rigid_stage;
mod rigid_system;
mod rigid_system_derivative;
mod rigid_term;
mod run_trace;
mod scene_contact;
mod scene_path;
mod soft_point;
mod soft_rigid;
mod soft_rigid_rows;
mod stale_frames;
mod stale_staging;
mod statics;
mod step;

pub use actuation::{ActuationWorkspace, BodyActuation, EMBEDDING_TOLERANCE};
pub use actuator_tangent::{
    ActuatorTangent, add_tangent_action, add_tangent_derivative_action,
    add_tangent_force_derivative, couplings as actuator_couplings,
};
pub use attachment_file::AttachmentSection;
pub use contact_file::{
    ContactSection, ContactSolverKind, DelassusKind, ObstacleKind, ObstacleSection,
    axis_angle_matrix,
};
pub use contact_stage::{
    ContactBody, ContactMemory, ContactOutcome, RigidCoupling, SceneContactWorkspace,
    mode_tolerance, resolve_contacts,
};
pub use contact_surface_file::{SoftContactSection, SurfaceFiles};
pub use contact_workspace::ContactWorkspace;
pub use energy::Energy;
pub use file::{
    CableSection, EffectorSection, PneumaticSection, SceneFile, ServoSection, SimulationSection,
    SoftBodySection,
};
pub use final_state::{ActuatorOutput, BodyOutput, EffectorOutput, FinalState, RigidTangentOutput};
pub use group_ncp::GroupNcp;
pub use model::{
    BodyState, LARGEST_PLAUSIBLE_SIZE, SMALLEST_PLAUSIBLE_SIZE, Scene, State, size_warning,
};
pub use obstacle_output::{ObstacleOutput, obstacle_outputs};
pub use output::FrameSeries;
pub use overrides::apply_override;
pub use prescribed::{PinnedServo, PrescribedWorkspace};
pub use prescribed_derivative::{AngleSlope, PrescribedDerivative};
pub use region_file::RegionSection;
pub use rigid_detection::{RigidContact, RigidRow, RigidSide};
pub use rigid_file::{BaseKind, RigidBodySection, RigidShapeKind, RobotSection};
pub use rigid_model::{
    JointCollider, RigidDynamics, RigidInput, RigidKind, RigidScene, RigidSystem, StaticCollider,
};
pub use rigid_stage::{RigidOutcome, RigidState, RigidWorkspace};
pub use rigid_system::SystemBuffers;
pub(crate) use rigid_system_derivative::VelocityUpdateBlocks;
pub use rigid_system_derivative::point_velocity;
pub use run_trace::RunTrace;
pub use scene_contact::SceneContact;
pub use scene_path::scene_path;
pub use soft_point::SoftPoint;
pub use soft_rigid::{Attachment, SoftRigid, SoftRigidRow};
pub use stale_staging::remove_stale_folders;
pub use statics::{StaticOptions, StaticReport, solve_static};
pub use step::{BodyWorkspace, FreeStageTimes, StageTimes, StepReport, Stepper};
