//! Open-loop optimal control through the engine (`diffsoro optimize`, docs/optimize.md):
//! actuation knots ([`crate::diff::ActuationKnots`], each actuator's input piecewise linear
//! in time) within the actuators' bounds, such that an effector passes waypoints at their
//! times with least effort:
//!
//! ```text
//! min_q  ½ Σ_w ‖p(t_w; q) − y_w‖² + ½ W Σ_{a,j} q_{a,j}²     subject to  lo_a ≤ q_{a,j} ≤ hi_a
//! ```
//!
//! p(t; q) the effector's position along the run (m; linear between the states around t), W
//! the effort weight (m² per squared input unit). Solved by projected Levenberg–Marquardt
//! (`calibrate::levenberg_marquardt_in_box`, the projected Gauss–Newton step of Bertsekas
//! 1982) on the residual's Jacobian, which forward sensitivities give in one run per
//! iteration ([`crate::diff::KnotSensitivity`]: one multi-right-hand-side solve per step with
//! the step's factorisation), through contact as the rest of the engine. A trial step the
//! model cannot take (a step matrix that is not positive definite, a static start that does
//! not converge) is a rejected step: the damping grows and the step shrinks.
//!
//! `setup` (the problem checked against the scene), `run` (one run under knots: the path,
//! the waypoint residuals and their Jacobian), `fit` (the least-squares problem and its
//! solution), `report` (the JSON, the plots).

mod fit;
mod report;
mod run;
mod setup;

pub use fit::optimize;
pub use report::OptimizeReport;
pub use run::{KnotRun, run_knots};
pub use setup::{DEFAULT_EFFORT, OptimizeSetup};
