//! The rigid stage of the step: free bodies and robots (their inputs, mass factors, free
//! velocities and poses), what touches them, and their rows in the contact NCP.

pub mod detection;
pub mod row_geometry;
pub mod stage;
pub mod term;
