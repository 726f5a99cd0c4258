//! Calibration against real experiments (`calibrate --trial INPUTS.csv:MARKERS.csv …`,
//! docs/calibration.md#real-experiments-marker-tracks-and-command-logs): several trials, each
//! a command log the robot followed and the marker tracks observed meanwhile, fitted with one
//! set of parameters; each trial run from its own start, every observed sample compared with
//! the simulated marker at its time, optionally through a fitted camera frame.
//!
//! One idea per file: `trial` (a trial's files, read and checked, and its time base),
//! `parameters` (what a fitted name denotes, how it is set), `frame` (the camera → scene map
//! and its Jacobian), `residuals` (the samples against the runs, and their Jacobian), `fit`
//! (the least-squares problem: the runs with their sensitivities), `statistics` (the
//! Gauss–Newton covariance, RMS), `report` (the JSON and the plots), `setup` (the entry point),
//! `validation` (a run against a held-out recording).

mod fit;
mod frame;
mod parameters;
mod report;
mod residuals;
mod setup;
mod statistics;
mod trial;
mod validation;

pub use fit::{TrialFit, TrialOptions};
pub use frame::{Frame, Registration, initial_frame, right_jacobian, skew};
pub use parameters::FittedParameter;
pub use report::{FrameErrors, FrameReport, RmsReport, TrialOutcome, TrialReport, TrialSummary};
pub use residuals::{
    ComparedSample, Comparison, Residuals, SimulatedMarkers, TrialTracks, assemble,
    check_registration, parse_comparison,
};
pub use setup::{TrialSetup, calibrate_trials, fit_trials};
pub use statistics::{FitStatistics, LARGEST_CONDITION, rms, statistics};
pub use trial::{Trial, steps_to_reach};
pub use validation::marker_error;

#[cfg(test)]
mod residual_tests;
