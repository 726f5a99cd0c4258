//! diffsoro: a differentiable soft-robot simulator.
//!
//! Soft bodies are tetrahedral finite-element meshes; see `DESIGN.md` of the project for the
//! step equations and the layer order of the modules below (a module uses only modules of
//! lower layers; `tests/layering.rs` checks it).

// L0
pub mod error;
pub mod math;

// L2
pub mod rigid;

pub use error::{Error, Result};
