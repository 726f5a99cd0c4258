//! The final-state JSON of `simulate` (docs/outputs.md), also the observation file `calibrate`
//! reads.

use serde::{Deserialize, Serialize};

use super::obstacles::{ObstacleOutput, obstacle_outputs};
use crate::scene::model::rigid::RigidKind;
use crate::scene::model::{Scene, State};

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
    /// The soft body it is embedded in (empty in files written before it was recorded).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body: String,
    /// The nodes of `body` it follows (mesh-file indices), those of non-zero weight.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<usize>,
    /// Their barycentric weights: `position` = Σᵢ `weights[i]` x(`nodes[i]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub weights: Vec<f64>,
}

/// One marker in the final state (docs/outputs.md), present when the scene has markers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MarkerOutput {
    /// Its name.
    pub name: String,
    /// The soft body it is on.
    pub body: String,
    /// Its position (m, scene frame).
    pub position: [f64; 3],
}

/// A free rigid body at the end of a run (docs/outputs.md, docs/rigid.md), world frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RigidBodyOutput {
    /// Its name.
    pub name: String,
    /// Centre of mass (m).
    pub position: [f64; 3],
    /// Orientation as a unit quaternion `[qx, qy, qz, qw]`.
    pub orientation: [f64; 4],
    /// Velocity of the centre of mass (m/s).
    pub velocity: [f64; 3],
    /// Angular velocity (rad/s, world axes).
    pub angular_velocity: [f64; 3],
}

/// A robot at the end of a run (docs/outputs.md, docs/rigid.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RobotOutput {
    /// Its name.
    pub name: String,
    /// Configuration (nq; URDF joints depth-first, a free-flyer base first).
    pub q: Vec<f64>,
    /// Velocity (nv).
    pub v: Vec<f64>,
    /// Joint input of the last step, after clamping to the effort limits (N·m, N).
    pub tau: Vec<f64>,
}

/// The final state of a run (docs/outputs.md).
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
    /// Markers (`[[soft_body.marker]]`): name, body, position; absent when the scene has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub markers: Vec<MarkerOutput>,
    /// Free rigid bodies: name, pose, velocities.
    #[serde(default)]
    pub rigid_bodies: Vec<RigidBodyOutput>,
    /// Robots: name, q, v, τ.
    #[serde(default)]
    pub robots: Vec<RobotOutput>,
    /// The scene's gravity (m/s²), which tells a viewer which way is up (absent in files
    /// written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gravity: Option<[f64; 3]>,
    /// The scene's static obstacles, placed in the world (absent when there are none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub obstacles: Vec<ObstacleOutput>,
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
    /// d(final rigid state)/d(parameter) per requested rigid name (`velocity:cube[0]`, …):
    /// per rigid body or robot, by name, the tangent of its configuration and velocity.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub rigid_sensitivities:
        std::collections::BTreeMap<String, std::collections::BTreeMap<String, RigidTangentOutput>>,
    /// `simulate --gradient-of LOSS`: dℓ/d(name) per `--sensitivity` name (component), by one
    /// reverse sweep (docs/cli.md).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub gradient: std::collections::BTreeMap<String, f64>,
    /// `simulate --inputs FILE.csv`: the command file the run followed (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<InputsOutput>,
    /// `simulate --observed-markers FILE.csv`: the run's markers against a recording
    /// (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marker_error: Option<MarkerErrorOutput>,
}

/// The `"marker_error"` of a run compared with observed marker tracks (docs/outputs.md): the
/// RMS over the coordinates of every compared sample of observed − simulated (after the best
/// camera → scene frame for this run when registering; relative to each track's first sample
/// with `displacement`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MarkerErrorOutput {
    /// √(Σ r²/N) over every coordinate of every compared sample (m); `null` for none.
    pub rms: Option<f64>,
    /// The same per marker, by name (m); a marker never compared is absent.
    pub per_marker: std::collections::BTreeMap<String, f64>,
    /// The observed samples compared (with `displacement`, each track's first is not).
    pub samples: usize,
    /// The observed samples outside the run (before its start or after its end), not compared.
    pub outside: usize,
    /// `absolute` or `displacement`.
    pub compare: String,
    /// `none`, `translation` or `rigid`.
    pub register: String,
    /// The best camera → scene frame for this run (`--register`): scene = R(ω)·camera + τ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<FrameOutput>,
}

/// A camera → scene frame, scene = R(ω)·camera + τ.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameOutput {
    /// τ (m).
    pub translation: [f64; 3],
    /// ω, the rotation's axis times its angle (rad).
    pub rotation: [f64; 3],
}

/// The `"inputs"` of a run that followed a command file (docs/outputs.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputsOutput {
    /// The command file, as given on the command line.
    pub file: String,
    /// Its first row's time t₀ (s, the file's clock): simulation time 0.
    pub t0: f64,
    /// Steps run under the commands.
    pub steps: usize,
    /// Per actuator of the file (by name), how many steps' inputs were clamped to its bounds.
    pub clamped: std::collections::BTreeMap<String, usize>,
}

/// One rigid system's part of a rigid sensitivity: the tangent of its configuration `q` (a
/// free body's `[δc; δθ]`, m and rad, the rotation in world axes; a robot's joint coordinates,
/// a free-flyer's twist in its own frame) and of its velocity `v` (nv each), per unit of the
/// parameter.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RigidTangentOutput {
    /// Configuration tangent.
    pub q: Vec<f64>,
    /// Velocity tangent.
    pub v: Vec<f64>,
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
                let used: Vec<usize> = (0..4).filter(|&k| e.point.weights[k] != 0.0).collect();
                effectors.push(EffectorOutput {
                    name: e.name.clone(),
                    position: [p.x, p.y, p.z],
                    body: scene.bodies[i].name().to_string(),
                    nodes: used.iter().map(|&k| e.point.nodes[k]).collect(),
                    weights: used.iter().map(|&k| e.point.weights[k]).collect(),
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
            markers: scene
                .markers
                .list
                .iter()
                .map(|m| {
                    let p = m.position(state);
                    MarkerOutput {
                        name: m.name.clone(),
                        body: scene.bodies[m.body].name().to_string(),
                        position: [p.x, p.y, p.z],
                    }
                })
                .collect(),
            rigid_bodies: rigid_bodies(scene, state),
            gravity: Some(scene.simulation.gravity),
            obstacles: obstacle_outputs(&scene.contact),
            robots: scene
                .rigid
                .systems
                .iter()
                .zip(&state.rigid)
                .filter(|(s, _)| s.kind() == RigidKind::Robot)
                .map(|(s, st)| RobotOutput {
                    name: s.name.clone(),
                    q: st.q.clone(),
                    v: st.v.clone(),
                    tau: st.tau.clone(),
                })
                .collect(),
            sensitivities: Default::default(),
            rigid_sensitivities: Default::default(),
            gradient: Default::default(),
            inputs: None,
            marker_error: None,
        }
    }
}

/// The free rigid bodies of `state` (their coordinates are the output's: `[c; quaternion]`,
/// `[ċ; ω]` in world axes).
fn rigid_bodies(scene: &Scene, state: &State) -> Vec<RigidBodyOutput> {
    scene
        .rigid
        .systems
        .iter()
        .zip(&state.rigid)
        .filter(|(s, _)| s.kind() == RigidKind::FreeBody)
        .map(|(s, st)| {
            let (q, v) = (&st.q, &st.v);
            RigidBodyOutput {
                name: s.name.clone(),
                position: [q[0], q[1], q[2]],
                orientation: [q[3], q[4], q[5], q[6]],
                velocity: [v[0], v[1], v[2]],
                angular_velocity: [v[3], v[4], v[5]],
            }
        })
        .collect()
}
