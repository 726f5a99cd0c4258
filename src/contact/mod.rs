//! Frictional contact (layer 3; uses `math`, `error`, `linalg`, `mesh`): the Coulomb cone and
//! its De Saxcé correction, the NCP instance and its residuals, the ADMM and PGS solvers,
//! contact modes, detection of nodes against obstacles and of a body against itself (analytic
//! plane, sphere, box, capsule; triangle meshes and the refitted node broad phase through
//! parry3d-f64, converted to and from glam at this module's boundary only), the Delassus
//! matrix assembled with the step's factorisation (DESIGN.md §1, paper 004 §II-B), and the
//! contact layer's own derivatives: the NCP's implicit derivative, the gap, normal and frame
//! derivatives of detection, and the penetration correction's slopes (DESIGN.md §2).

mod admm;
mod broad_phase;
mod capsule;
mod cone;
mod delassus;
mod detection;
mod geometry_derivative;
mod mesh_obstacle;
mod modes;
mod ncp_derivative;
mod pgs;
mod problem;
mod self_contact;

pub use admm::{AdmmSettings, AdmmSolver};
pub use broad_phase::NodeBroadPhase;
pub use capsule::Capsule;
pub use cone::FrictionCone;
pub use delassus::{
    ContactJacobian, DelassusWorkspace, PenetrationCorrection, assemble_delassus,
    free_contact_velocity,
};
pub use detection::{
    NodeContact, Obstacle, Proximity, contact_frame, detect_nodes, push_node_contacts,
};
pub use geometry_derivative::contact_frame_derivative;
pub use mesh_obstacle::{MeshFeature, MeshObstacle, MeshPoint};
pub use modes::{ContactMode, ModeTolerance, classify, classify_contact};
pub use ncp_derivative::{
    BoundaryGradient, CotangentSide, NcpDerivative, RANK_TOLERANCE, ReducedStatus,
};
pub use pgs::{PgsSettings, PgsSolver};
pub use problem::{ContactProblem, NcpSolution, Residuals};
pub use self_contact::{SelfContact, SelfContactDetector, push_self_contacts};
