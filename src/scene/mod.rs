//! Scenes (layer 4; uses `mesh`, `material`, `linalg`, `fem`): the scene file, its `--set`
//! overrides, the model built from it, and the step as a readable list of stages.

mod file;
mod overrides;

pub use file::{MassKind, SceneFile, SimulationSection, SoftBodySection};
pub use overrides::apply_override;
