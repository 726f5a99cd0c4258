//! The effectors' paths and the actuators' inputs over a `simulate` run, recorded frame by
//! frame for the run's one-page summary (`summary.svg`).

use crate::actuator::ActuatorKind;
use crate::chart::{LineChart, Mark, Marker, Panel, PathPlot, Summary};

use crate::scene::model::{Scene, State};

/// What a run's summary shows, one entry per recorded state.
#[derive(Debug, Clone, PartialEq)]
pub struct RunTrace {
    /// The time of each recorded state (s).
    times: Vec<f64>,
    /// Each effector's name and position at each recorded state (m).
    effectors: Vec<(String, Vec<[f64; 3]>)>,
    /// Each actuator's name, unit (`N`, `Pa`, `N·m`) and input λ at each recorded state.
    actuators: Vec<(String, &'static str, Vec<f64>)>,
}

impl RunTrace {
    /// An empty trace of the effectors and actuators of `scene`, in scene order.
    pub fn new(scene: &Scene) -> RunTrace {
        let mut effectors = Vec::new();
        let mut actuators = Vec::new();
        for i in 0..scene.bodies.len() {
            let act = scene.body_actuation(i);
            effectors.extend(act.effectors.iter().map(|e| (e.name.clone(), Vec::new())));
            actuators.extend(act.actuators.iter().map(|a| {
                let unit = match a.kind {
                    ActuatorKind::Cable(_) => "N",
                    ActuatorKind::Pneumatic(_) => "Pa",
                    ActuatorKind::Servo(_) => "N·m",
                };
                (a.name.clone(), unit, Vec::new())
            }));
        }
        RunTrace {
            times: Vec::new(),
            effectors,
            actuators,
        }
    }

    /// Whether the scene has an effector (a path to show).
    pub fn has_path(&self) -> bool {
        !self.effectors.is_empty()
    }

    /// Records `state`: its time, each effector's position and each actuator's input λ
    /// (the tension, pressure or torque of the step that led to it; 0 when unset).
    pub fn record(&mut self, scene: &Scene, state: &State) {
        self.times.push(state.time);
        let (mut e, mut a) = (0, 0);
        for (i, bs) in state.bodies.iter().enumerate() {
            let act = scene.body_actuation(i);
            for effector in &act.effectors {
                let p = effector.point.position(&bs.positions);
                self.effectors[e].1.push([p.x, p.y, p.z]);
                e += 1;
            }
            let forces = state.actuator_forces.get(i);
            for j in 0..act.actuators.len() {
                let force = forces.and_then(|f| f.get(j)).copied().unwrap_or(0.0);
                self.actuators[a].2.push(force);
                a += 1;
            }
        }
    }

    /// The summary, when the scene has an effector and a state was recorded: the effectors'
    /// paths (the first recorded position circled), each effector's displacement from its
    /// first recorded position over time (x, y, z, m), the actuators' inputs over time (one series per actuator, in its unit) when there
    /// are actuators, and a table of the key numbers (frames, final time, each effector's
    /// final position).
    pub fn summary(&self) -> Option<Summary> {
        if !self.has_path() || self.times.is_empty() {
            return None;
        }
        let markers = self
            .effectors
            .iter()
            .map(|(name, path)| Marker {
                name: format!("{name} at t = {}", self.times[0]),
                position: path[0],
                mark: Mark::Circle,
            })
            .collect();
        let mut panels = vec![Panel::Path(PathPlot {
            title: "Effector paths".into(),
            paths: self.effectors.clone(),
            markers,
        })];
        let mut coordinates = LineChart::new(
            "Effector displacements",
            "time (s)",
            "displacement from the first frame",
            self.times.clone(),
        );
        for (name, path) in &self.effectors {
            for (k, axis) in ["x", "y", "z"].iter().enumerate() {
                coordinates = coordinates.with_series_in(
                    format!("{name} Δ{axis}"),
                    "m",
                    path.iter().map(|p| p[k] - path[0][k]).collect(),
                );
            }
        }
        panels.push(Panel::Line(coordinates));
        if !self.actuators.is_empty() {
            let mut inputs = LineChart::new(
                "Actuation",
                "time (s)",
                "actuator input",
                self.times.clone(),
            );
            for (name, unit, values) in &self.actuators {
                inputs = inputs.with_series_in(name.clone(), *unit, values.clone());
            }
            panels.push(Panel::Line(inputs));
        }
        let mut rows = vec![
            ("frames".to_string(), self.times.len().to_string()),
            (
                "final time".to_string(),
                format!("{} s", self.times[self.times.len() - 1]),
            ),
        ];
        for (name, path) in &self.effectors {
            let p = path[path.len() - 1];
            rows.push((
                format!("{name} at the end"),
                format!("({:.4e}, {:.4e}, {:.4e}) m", p[0], p[1], p[2]),
            ));
        }
        panels.push(Panel::Table("Key numbers".into(), rows));
        Some(Summary {
            title: "simulate run".into(),
            panels,
        })
    }
}
