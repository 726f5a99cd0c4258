//! Calibration of material parameters (and of a free body's initial velocity) from
//! observations (layer 6; uses `chart`, `mesh` (file output), `scene` and `diff`):
//! Levenberg–Marquardt over a generic least-squares trait, the
//! parameter names, their admissible ranges and the coordinates optimised in a box inside
//! them, the final-state fit whose
//! Jacobian is the trajectory sensitivities, and the `calibrate` job's setup, entry point and
//! report.

mod final_state_fit;
mod fitted;
mod initial_velocity;
mod levenberg_marquardt;
mod parametrisation;
mod range;
mod report;
mod setup;
mod summary;
pub mod trials;

pub use final_state_fit::{CalibrationProgress, FinalStateFit};
pub use initial_velocity::fit_initial_velocity;
pub use levenberg_marquardt::{
    LeastSquares, LmIteration, LmOptions, LmResult, LmStop, levenberg_marquardt,
    levenberg_marquardt_in_box,
};
pub use parametrisation::{ParameterKind, ParameterName, Parametrisation, Reparametrised};
pub use range::{ParameterRange, RELATIVE_MARGIN};
pub use report::{CONVERGED_LOSS_FRACTION, CalibrationReport, reached};
pub use setup::{
    CalibrationSetup, DEFAULT_RESTARTS, calibrate_scene, calibrate_scene_with_inputs,
    check_targets, load_observation, parse_initial_values,
};

#[cfg(test)]
mod fit_tests;
