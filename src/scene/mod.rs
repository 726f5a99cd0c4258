//! Scenes (layer 4; uses `mesh`, `material`, `linalg`, `fem`, `actuator`, `rigid`, `contact`): the scene file and its
//! `--set` overrides, the model and state built from it (soft bodies, free rigid bodies and
//! robots), the time step as a readable list of stages (with its contact stage),
//! the static-equilibrium solve, the final-state output, and what an experiment brings to a
//! run (logged actuator commands over time, marker tracks).

mod experiment;
mod file;
mod model;
mod output;
mod statics;
mod step;

pub use experiment::command_log::CommandLog;
pub use experiment::command_run::{CommandRun, RunStart};
pub use experiment::command_schedule::{
    ChannelInput, CommandChannel, CommandSchedule, MapTangent, step_time,
};
pub use experiment::interpolate::{interpolate, interpolation_weights};
pub use experiment::point_path::{POINT_PATH_HEADER, PointPath};
pub use experiment::tracks::{MarkerTracks, MarkerUnit, TRACKS_HEADER, Track};
pub use file::attachment::AttachmentSection;
pub use file::contact::{
    ContactSection, ContactSolverKind, DelassusKind, ObstacleKind, ObstacleSection,
    axis_angle_matrix,
};
pub use file::contact_surface::{SoftContactSection, SurfaceFiles};
pub use file::control::{ControlSection, check_max_change, check_regularisation};
pub use file::embedded_surface::EMBEDDING_TOLERANCE;
pub use file::marker::MarkerSection;
pub use file::overrides::apply_override;
pub use file::path::scene_path;
pub use file::region::RegionSection;
pub use file::rigid::{BaseKind, RigidBodySection, RigidShapeKind, RobotSection};
pub use file::{
    CableSection, EffectorSection, PneumaticSection, SceneFile, ServoSection, SimulationSection,
    SoftBodySection,
};
pub use model::RigidState;
pub use model::actuation::{
    BodyActuation, couplings as actuator_couplings, is_solved as actuator_is_solved,
};
pub use model::actuator_input::{ActuatorInput, CommandMap, input_unit};
pub use model::contact::SceneContact;
pub use model::energy::Energy;
pub use model::markers::{Marker, MarkerPoint, Markers};
pub use model::pinned_servo::PinnedServo;
pub use model::rigid::RigidSide;
pub use model::rigid::{
    JointCollider, RigidDynamics, RigidInput, RigidKind, RigidScene, RigidSystem, StaticCollider,
};
pub use model::rigid_system::SystemBuffers;
pub(crate) use model::rigid_system_derivative::VelocityUpdateBlocks;
pub use model::rigid_system_derivative::point_velocity;
pub use model::soft_point::SoftPoint;
pub use model::soft_rigid::{Attachment, SoftRigid, SoftRigidRow};
pub use model::{
    BodyState, LARGEST_PLAUSIBLE_SIZE, SMALLEST_PLAUSIBLE_SIZE, Scene, State, size_warning,
};
pub use output::final_state::{
    ActuatorOutput, BodyOutput, EffectorOutput, FinalState, FrameOutput, InputsOutput,
    MarkerErrorOutput, MarkerOutput, RigidTangentOutput,
};
pub use output::frames::FrameSeries;
pub use output::obstacles::{ObstacleOutput, obstacle_outputs};
pub use output::run_trace::RunTrace;
pub use output::stale_staging::remove_stale_folders;
pub use statics::{StaticInput, StaticOptions, StaticReport, StaticTangent, solve_static};
pub use step::contact::group_ncp::GroupNcp;
pub use step::contact::stage::{
    ContactBody, ContactMemory, ContactOutcome, RigidCoupling, SceneContactWorkspace,
    resolve_contacts,
};
pub use step::contact::workspace::ContactWorkspace;
pub use step::free::actuation::ActuationWorkspace;
pub use step::free::actuator_tangent::{
    ActuatorTangent, add_tangent_action, add_tangent_derivative_action,
    add_tangent_force_derivative,
};
pub use step::free::prescribed::PrescribedWorkspace;
pub use step::free::prescribed_derivative::{AngleSlope, PrescribedDerivative};
pub use step::rigid::detection::{RigidContact, RigidRow};
pub use step::rigid::stage::{RigidOutcome, RigidWorkspace};
pub use step::{BodyWorkspace, FreeStageTimes, StageTimes, StepReport, Stepper};
