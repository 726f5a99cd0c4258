//! The final-state JSON of `simulate` (docs/outputs.md), also the observation file `calibrate`
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

/// One actuator in the final state (docs/outputs.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActuatorOutput {
    /// Its name.
    pub name: String,
    /// `cable`, `pneumatic` or `servo`.
    pub kind: String,
    /// δ: cable length (m), cavity volume (m³) or servo angle (rad).
    pub value: f64,
    /// λ: tension (N), pressure (Pa) or torque (N·m).
    pub force: f64,
}

/// One effector in the final state (docs/outputs.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EffectorOutput {
    /// Its name.
    pub name: String,
    /// Its position (m).
    pub position: [f64; 3],
}

/// The final state of a run (docs/outputs.md). `robots` is empty until scenes carry them.
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
    pub actuators: Vec<ActuatorOutput>,
    /// Effectors: name, position.
    #[serde(default)]
    pub effectors: Vec<EffectorOutput>,
    /// Rigid robots: name, q, v.
    #[serde(default)]
    pub robots: Vec<serde_json::Value>,
    /// Steps whose contact NCP stopped at its iteration limit (their last iterate was
    /// used; `--strict` makes that an error instead).
    #[serde(default)]
    pub unconverged_steps: usize,
    /// What the run should tell its reader, one sentence each (e.g. unconverged contact
    /// steps); empty when all went well.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// d(final positions)/d(parameter) per requested name (`young_modulus:BODY`, …).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub sensitivities: std::collections::BTreeMap<String, Vec<[f64; 3]>>,
}

impl FinalState {
    /// The final state of `state` in `scene`.
    pub fn new(scene: &Scene, state: &State) -> FinalState {
        let mut actuators = Vec::new();
        let mut effectors = Vec::new();
        for (i, bs) in state.bodies.iter().enumerate() {
            let act = scene.body_actuation(i);
            let forces = state.actuator_forces.get(i);
            for (j, a) in act.actuators.iter().enumerate() {
                actuators.push(ActuatorOutput {
                    name: a.name.clone(),
                    kind: a.kind.label().to_string(),
                    value: a.kind.value(&bs.positions),
                    force: forces.and_then(|f| f.get(j)).copied().unwrap_or(0.0),
                });
            }
            for e in &act.effectors {
                let p = e.point.position(&bs.positions);
                effectors.push(EffectorOutput {
                    name: e.name.clone(),
                    position: [p.x, p.y, p.z],
                });
            }
        }
        FinalState {
            time: state.time,
            steps: state.steps,
            contacts: state.contacts,
            unconverged_steps: state.unconverged_steps,
            warnings: if state.unconverged_steps > 0 {
                vec![format!(
                    "the contact NCP stopped at its iteration limit in {} of {} steps; their solver's last iterate was used",
                    state.unconverged_steps, state.steps
                )]
            } else {
                Vec::new()
            },
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
            actuators,
            effectors,
            robots: Vec::new(),
            sensitivities: Default::default(),
        }
    }
}
