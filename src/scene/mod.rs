//! Scenes (layer 4; uses `mesh`, `material`, `linalg`, `fem`): the scene file and its `--set`
//! overrides, the model and state built from it, the time step as a readable list of stages,
//! the static-equilibrium solve, and the final-state output.

mod file;
mod final_state;
mod model;
mod output;
mod overrides;
mod statics;
mod step;

pub use file::{SceneFile, SimulationSection, SoftBodySection};
pub use final_state::{BodyOutput, FinalState};
pub use model::{BodyState, Scene, State};
pub use output::FrameSeries;
pub use overrides::apply_override;
pub use statics::{StaticOptions, StaticReport, solve_static};
pub use step::{BodyWorkspace, StepReport, Stepper};
