//! Geometry and detection: obstacles and convex rigid shapes, their proximity queries and
//! contact manifolds (parry3d-f64, converted to and from glam here only), the soft bodies'
//! contact points and surfaces, node and surface detection with their broad phases, and the
//! closed-form derivatives of gaps, normals and frames.

pub mod ball_segment;
pub mod body_contact;
pub mod broad_phase;
pub mod capsule;
pub mod collider_point;
pub mod contact_points;
pub mod convex_shape;
pub mod cuboid;
pub mod detection;
pub mod edge_edge;
pub mod flat_face;
pub mod geometry_derivative;
pub mod manifold_derivative;
pub mod mesh_obstacle;
pub mod pair_separation;
pub mod proximity_derivative;
pub mod self_contact;
pub mod separation_bound;
pub mod shape_manifold;
pub mod surface_derivative;
pub mod surface_tree;
