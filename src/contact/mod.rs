//! Frictional contact (layer 3; uses `math`, `error`, `linalg`; `mesh` in tests):
//! the Coulomb cone and its De Saxcé correction, the NCP instance and its residuals, the ADMM
//! and PGS solvers, contact modes, detection of nodes against analytic obstacles, and the
//! Delassus matrix assembled with the step's factorisation (DESIGN.md §1, paper 004 §II-B),
//! and the contact layer's own derivatives: the NCP's implicit derivative, the gap, normal and
//! frame derivatives of detection, and the penetration correction's slopes (DESIGN.md §2).

mod admm;
mod cone;
mod delassus;
mod detection;
mod geometry_derivative;
mod modes;
mod ncp_derivative;
mod pgs;
mod problem;

pub use admm::{AdmmSettings, AdmmSolver};
pub use cone::FrictionCone;
pub use delassus::{
    ContactJacobian, DelassusWorkspace, PenetrationCorrection, assemble_delassus,
    free_contact_velocity,
};
pub use detection::{
    NodeContact, Obstacle, Proximity, contact_frame, detect_nodes, push_node_contacts,
};
pub use geometry_derivative::contact_frame_derivative;
pub use modes::{ContactMode, ModeTolerance, classify, classify_contact};
pub use ncp_derivative::{
    BoundaryGradient, CotangentSide, NcpDerivative, RANK_TOLERANCE, ReducedStatus,
};
pub use pgs::{PgsSettings, PgsSolver};
pub use problem::{ContactProblem, NcpSolution, Residuals};
