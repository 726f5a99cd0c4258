//! Soft bodies (layer 2; uses `mesh`, `material`, `linalg`): linear tetrahedra, their rest
//! precomputation, internal forces and stiffness assembled in parallel into a pattern fixed
//! once per mesh, lumped, consistent or uniform mass, and fixed nodes (projected out of the system).

mod elastic;
mod elastic_parted;
mod fixed;
mod mass;
mod mass_damping;
mod material_region;
mod node_slabs;
mod parameter_derivative;
mod rest_frame;
mod slab_balance;
mod soft_body;
mod stiffness_derivative;
mod tangent_projection;
mod tetrahedron;
mod von_mises;

pub use elastic::{ElasticState, Stiffness};
pub use fixed::fixed_nodes;
pub use mass::{MassKind, consistent_mass_block, lumped_masses, uniform_masses};
pub use mass_damping::MassDampingParameter;
pub use material_region::MaterialRegion;
pub use parameter_derivative::{MaterialParameter, ParameterDerivatives, ParameterPairing};
pub use soft_body::{SoftBody, SoftBodyOptions};
pub use stiffness_derivative::StiffnessDerivativeState;
pub use tangent_projection::negative_part;
pub use tetrahedron::Tetrahedron;
pub use von_mises::von_mises;
