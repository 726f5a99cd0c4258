//! Reduced models of a soft body for real time (L5; uses `scene`, `fem`, `actuator`,
//! `material`, `linalg`): a POD basis learned from snapshots of full runs (`basis`), the
//! elastic forces on a weighted sample of elements (`ecsw`, with `nnls`), the reduced step
//! (`stepper`) and runs under command logs (`run`), the offline reduction (`train`) and the
//! versioned model file (`model`, `fingerprint`). Goury & Duriez, IEEE T-RO 2018; Farhat et
//! al., IJNME 2015.

pub mod basis;
pub mod cable;
pub mod ecsw;
pub mod element_projection;
pub mod fingerprint;
pub mod model;
pub mod nnls;
pub mod nodal_basis;
pub mod run;
pub mod stepper;
pub mod train;

pub use basis::{ModeChoice, Pod, pod};
pub use model::{ReducedModel, TrainingError};
pub use run::ReducedRun;
pub use stepper::{ReducedState, ReducedStepper};
pub use train::{ReduceOptions, reduce};
