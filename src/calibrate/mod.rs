//! Calibration of material parameters from observations (layer 6; uses `chart`, `mesh` (file
//! output), `scene` and `diff`): Levenberg–Marquardt over a generic least-squares trait, the
//! parameter names and their unconstrained reparametrisation, the final-state fit whose
//! Jacobian is the trajectory sensitivities, and the `calibrate` job's setup, entry point and
//! report.

mod final_state_fit;
mod levenberg_marquardt;
mod parametrisation;
mod report;
mod setup;

pub use final_state_fit::{CalibrationProgress, FinalStateFit};
pub use levenberg_marquardt::{
    LeastSquares, LmIteration, LmOptions, LmResult, LmStop, levenberg_marquardt,
};
pub use parametrisation::{ParameterKind, ParameterName, Parametrisation, Reparametrised};
pub use report::CalibrationReport;
pub use setup::{
    CalibrationSetup, calibrate_scene, check_targets, load_observation, parse_initial_values,
};

#[cfg(test)]
mod fit_tests;
