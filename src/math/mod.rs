//! Small dense math (layer 0): f64 vector/matrix aliases and the central finite-difference
//! checkers every derivative test uses, and a tiny deterministic generator for test inputs.
//! Uses no other module.

mod finite_difference;
mod split_mix;

pub use finite_difference::{central_difference_jacobian, relative_error};
pub use split_mix::SplitMix64;

/// A 3-vector (m, m/s, N, … depending on use).
pub type Vec3 = nalgebra::Vector3<f64>;
/// A 3×3 matrix (deformation gradients, stresses, rotations).
pub type Mat3 = nalgebra::Matrix3<f64>;
/// A dynamically sized dense vector.
pub type DVec = nalgebra::DVector<f64>;
/// A dynamically sized dense matrix.
pub type DMat = nalgebra::DMatrix<f64>;
