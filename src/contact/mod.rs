//! Frictional contact (layer 3; uses `math`, `error`, `linalg`, `mesh`, `actuator`'s embedded
//! points): the Coulomb cone and
//! its De Saxcé correction, the NCP instance and its residuals, the ADMM and PGS solvers,
//! contact modes, detection of nodes against obstacles (analytic plane, sphere, box, capsule;
//! triangle meshes and the refitted node broad phase through parry3d-f64, converted to and
//! from glam at this module's boundary only), of a body against its own surface and of two
//! bodies against each other's surfaces (a refitted tree of surface triangles), the Delassus
//! matrix assembled with the step's factorisation (docs/step.md, paper 004 §II-B) or applied
//! through it without being formed (`FactoredDelassus`, the Woodbury identity), bilateral rows
//! (attachments) eliminated exactly from an NCP before it is solved, and the
//! contact layer's own derivatives: the NCP's implicit derivative, the gap, normal and frame
//! derivatives of detection (obstacles, surface triangles and edges crossing; a rigid face lying flat on a surface triangle, `flat_face`), and the penetration correction's slopes (docs/derivatives.md); convex rigid shapes at poses and their
//! contact manifolds with each other and with the obstacles (parry3d-f64), for the rigid bodies
//! `scene` places on them (docs/rigid.md).

mod delassus;
mod geometry;
mod ncp;
#[cfg(test)]
pub(crate) mod test_support;

pub use delassus::assembly::{DelassusWorkspace, assemble_delassus};
pub use delassus::attached_reduction::{AttachedReduction, ReductionBody};
pub use delassus::factored::{FactoredDelassus, FactoredDelassusWorkspace};
pub use delassus::jacobian::{ContactJacobian, PenetrationCorrection, free_contact_velocity};
pub(crate) use delassus::row_places::{add_blocks, gather, scatter};
pub use geometry::ball_segment::BallOnSegment;
pub use geometry::body_contact::{
    BodyContact, BodySurface, detect_body_contacts, push_body_contact,
};
pub use geometry::broad_phase::NodeBroadPhase;
pub use geometry::capsule::Capsule;
pub use geometry::contact_points::{ContactPoints, EmbeddedSurface, MAX_EXPANDED};
pub use geometry::convex_shape::{Collider, ConvexShape, ShapeEdge, ShapePose};
pub use geometry::detection::{
    NodeContact, Obstacle, Proximity, contact_frame, detect_nodes, push_node_contacts,
};
pub use geometry::edge_edge::{
    EdgeCrossing, EdgeCrossingDerivative, PARALLEL_SINE, angle_between, edge_crossing, within_arc,
};
pub use geometry::flat_face::{
    FACE_ON_ANGLE, OVER_ROUND_OFF, SAME_FACE, face_meets_triangle_at_a_vertex, lies_over_face,
};
pub use geometry::geometry_derivative::contact_frame_derivative;
pub use geometry::manifold_derivative::{
    ContactGeometryJacobian, Counterpart, GEOMETRY_STEP, contact_geometry_jacobian,
};
pub use geometry::mesh_obstacle::{MeshFeature, MeshObstacle, MeshPoint};
pub use geometry::pair_separation::PairSeparation;
pub use geometry::proximity_derivative::{ProximityJacobian, proximity_jacobian};
pub use geometry::self_contact::{SelfContact, detect_self_contacts, push_self_contacts};
pub use geometry::shape_manifold::{
    ManifoldWorkspace, ShapeContact, collider_contacts, obstacle_contacts,
};
pub use geometry::surface_derivative::TriangleHitDerivative;
pub use geometry::surface_tree::{
    EdgeHit, RIGID_ARC_SLACK, SOFT_ARC_SLACK, SurfaceEdge, SurfaceTree, TriangleHit,
    TriangleProjection, project_on_triangle,
};
pub use ncp::admm::{AdmmSolver, HINTED_LANCZOS_STEPS};
pub use ncp::admm_settings::{
    ACCELERATED_MARGIN, AdmmSettings, FACES_SETTLING_RATIO, POLISH_ATTEMPTS,
    POLISH_MATRIX_FREE_AFTER, POLISH_STABLE_ITERATIONS, STALLED_CHECKS,
};
pub use ncp::admm_trace::{AdmmTraceEntry, TracedPolish};
pub use ncp::bilateral_elimination::BilateralElimination;
pub use ncp::cone::FrictionCone;
pub use ncp::delassus_operator::{
    DelassusOperator, DenseDelassus, DenseShiftedFactor, ProjectedRow,
};
pub use ncp::derivative::{
    BoundaryGradient, CotangentSide, NcpDerivative, NcpSolveScratch, RANK_TOLERANCE, ReducedStatus,
};
pub use ncp::modes::{ContactMode, ModeTolerance, classify, classify_contact, classify_into};
pub use ncp::pgs::{PgsSettings, PgsSolver};
pub use ncp::problem::{ContactProblem, NcpSolution, Residuals};
