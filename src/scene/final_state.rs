//! The final-state JSON of `simulate` (DESIGN.md §4), also the observation file `calibrate`
//! reads.

use serde::{Deserialize, Serialize};

use super::model::{Scene, State};

/// One soft body's nodes in the final state (m, m/s), one row per mesh-file node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BodyOutput {
    /// The body's name.
    pub name: String,
    /// Node positions (m).
    pub positions: Vec<[f64; 3]>,
    /// Node velocities (m/s).
    pub velocities: Vec<[f64; 3]>,
}

/// The final state of a run (DESIGN.md §4). `actuators`, `effectors` and `robots` are empty
/// until scenes carry them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinalState {
    /// Simulated time (s).
    pub time: f64,
    /// Steps taken.
    pub steps: usize,
    /// Number of active contacts at the end.
    pub contacts: usize,
    /// The soft bodies, in scene order.
    pub soft_bodies: Vec<BodyOutput>,
    /// Actuators: name, kind, value δ, force λ.
    #[serde(default)]
    pub actuators: Vec<serde_json::Value>,
    /// Effectors: name, position.
    #[serde(default)]
    pub effectors: Vec<serde_json::Value>,
    /// Rigid robots: name, q, v.
    #[serde(default)]
    pub robots: Vec<serde_json::Value>,
    /// d(final positions)/d(parameter) per requested name (`young_modulus:BODY`, …).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub sensitivities: std::collections::BTreeMap<String, Vec<[f64; 3]>>,
}

impl FinalState {
    /// The final state of `state` in `scene`.
    pub fn new(scene: &Scene, state: &State) -> FinalState {
        FinalState {
            time: state.time,
            steps: state.steps,
            contacts: 0,
            soft_bodies: scene
                .bodies
                .iter()
                .zip(&state.bodies)
                .map(|(b, s)| BodyOutput {
                    name: b.name().to_string(),
                    positions: s.positions.iter().map(|p| [p.x, p.y, p.z]).collect(),
                    velocities: s.velocities.iter().map(|v| [v.x, v.y, v.z]).collect(),
                })
                .collect(),
            actuators: Vec::new(),
            effectors: Vec::new(),
            robots: Vec::new(),
            sensitivities: Default::default(),
        }
    }
}
