//! Calibration of material parameters from observations (layer 6; uses `scene` and, once
//! wired, `diff`): Levenberg–Marquardt over a generic least-squares trait, the parameter names
//! and their unconstrained reparametrisation, and the `calibrate` job's setup and report.

mod levenberg_marquardt;
mod parametrisation;

pub use levenberg_marquardt::{
    LeastSquares, LmIteration, LmOptions, LmResult, LmStop, levenberg_marquardt,
};
pub use parametrisation::{ParameterKind, ParameterName, Parametrisation, Reparametrised};

#[cfg(test)]
mod fit_tests;
