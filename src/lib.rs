//! diffsoro: a differentiable soft-robot simulator.
//!
//! Soft bodies are tetrahedral finite-element meshes; see `docs/design.md` for the
//! step equations and the layer order of the modules below (a module uses only modules of
//! lower layers; `tests/layering.rs` checks it).

// L0
pub mod error;
pub mod math;

// L1
pub mod chart;
pub mod linalg;
pub mod material;
pub mod mesh;

// L2
pub mod actuator;
pub mod fem;
pub mod rigid;

// L3
pub mod contact;

// L4
pub mod scene;

// L5
pub mod diff;
pub mod reduce;

// L6
pub mod calibrate;
pub mod control;
pub mod view;

pub mod optimize;

pub use error::{Error, Result};
