//! The `optimize` report: the knots found, how close the effector passes each waypoint, the
//! loss and its history (`optimize.json`), and its plots (the effector's path against the
//! waypoints, the actuation over time, the loss per iteration, a summary page).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::calibrate::{LmResult, LmStop};
use crate::chart::{FileSet, LineChart, Mark, Marker, Panel, PathPlot, ScaleChoice, Summary};
use crate::diff::{ActuationKnots, Parameter};
use crate::error::{Error, Result};
use crate::math::Vec3;
use crate::scene::{RunStart, Scene, input_unit};

use super::run::KnotRun;
use super::setup::OptimizeSetup;

/// One waypoint: its time, where it is and where the effector passes at that time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WaypointOutcome {
    /// Its time (s).
    pub time: f64,
    /// The waypoint (m).
    pub target: [f64; 3],
    /// The effector at that time (m).
    pub reached: [f64; 3],
}

/// What `diffsoro optimize` prints and writes as `optimize.json` (docs/optimize.md).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OptimizeReport {
    /// The effector driven.
    pub effector: String,
    /// The knot times (s).
    pub knot_times: Vec<f64>,
    /// Per actuator, its input at each knot in its unit (`actuator_units`).
    pub actuation: BTreeMap<String, Vec<f64>>,
    /// Per actuator, the unit of its input (`N`, `Pa`, `m`, …).
    pub actuator_units: BTreeMap<String, String>,
    /// Per waypoint, the distance (m) from the effector at its time.
    pub waypoint_errors: Vec<f64>,
    /// The waypoints and where the effector passes.
    pub waypoints: Vec<WaypointOutcome>,
    /// The loss ½ Σ‖p − y‖² + ½ W Σ q² at the knots found (m²).
    pub loss: f64,
    /// The loss at the start knots (m²).
    pub initial_loss: f64,
    /// The effort weight W (m² per squared input unit).
    pub effort: f64,
    /// Levenberg–Marquardt iterations (accepted and rejected steps).
    pub iterations: usize,
    /// Runs with sensitivities (one per iteration, plus the start).
    pub evaluations: usize,
    /// Whether a tolerance, not the iteration limit, stopped the iteration.
    pub converged: bool,
    /// What stopped it.
    pub stop: LmStop,
    /// The loss after each iteration (m²), the start first.
    pub loss_history: Vec<f64>,
    /// The run: its steps, time step (s) and start (`static` or `scene`).
    pub steps: usize,
    /// The time step (s).
    pub dt: f64,
    /// `static` or `scene`.
    pub start: String,
    /// The effector's position (m) after each step of the optimised run, the start first
    /// (not in the JSON: in `effector.csv`).
    #[serde(skip)]
    pub path: Vec<Vec3>,
    /// The inputs of the optimised run at each step, per actuator (not in the JSON: in
    /// `actuation.csv`).
    #[serde(skip)]
    pub inputs: Vec<Vec<f64>>,
}

impl OptimizeReport {
    /// The report of a finished optimisation: the knots found, their run, the iteration.
    pub fn new(
        scene: &Scene,
        setup: &OptimizeSetup,
        knots: &ActuationKnots,
        run: &KnotRun,
        fit: &LmResult,
        evaluations: usize,
    ) -> OptimizeReport {
        let names = setup.actuator_names(scene);
        let units: Vec<String> = knots
            .actuators
            .iter()
            .map(|p| {
                let Parameter::Actuator { body, index } = *p else {
                    unreachable!("knots drive actuators")
                };
                input_unit(&scene.body_actuation(body).actuators[index]).to_string()
            })
            .collect();
        let waypoints: Vec<WaypointOutcome> = setup
            .waypoints
            .times
            .iter()
            .zip(&setup.waypoints.positions)
            .zip(&run.at_waypoints)
            .map(|((&time, y), p)| WaypointOutcome {
                time,
                target: [y.x, y.y, y.z],
                reached: [p.x, p.y, p.z],
            })
            .collect();
        let dt = scene.simulation.dt;
        OptimizeReport {
            effector: setup.effector.clone(),
            knot_times: knots.times.clone(),
            actuation: names.iter().cloned().zip(knots.values.clone()).collect(),
            actuator_units: names.iter().cloned().zip(units).collect(),
            waypoint_errors: setup
                .waypoints
                .positions
                .iter()
                .zip(&run.at_waypoints)
                .map(|(y, p)| (p - y).norm())
                .collect(),
            waypoints,
            loss: fit.loss,
            initial_loss: fit.history[0].loss,
            effort: setup.effort,
            iterations: fit.iterations,
            evaluations,
            converged: fit.converged(),
            stop: fit.stop,
            loss_history: fit
                .history
                .iter()
                .filter(|h| h.accepted)
                .map(|h| h.loss)
                .collect(),
            steps: setup.steps,
            dt,
            start: match setup.start {
                RunStart::Static => "static",
                RunStart::Scene => "scene",
            }
            .to_string(),
            path: run.path.clone(),
            inputs: (0..=setup.steps)
                .map(|s| {
                    (0..knots.actuators.len())
                        .map(|a| knots.input(a, s as f64 * dt))
                        .collect()
                })
                .collect(),
        }
    }

    fn times(&self) -> Vec<f64> {
        (0..self.path.len()).map(|s| s as f64 * self.dt).collect()
    }

    /// The effector's coordinates over time (m).
    pub fn effector_chart(&self) -> LineChart {
        let mut chart = LineChart::new(
            format!("Effector `{}` over time", self.effector),
            "time (s)",
            "position (m)",
            self.times(),
        );
        for (i, axis) in ["x", "y", "z"].iter().enumerate() {
            chart = chart.with_series(*axis, self.path.iter().map(|p| p[i]).collect());
        }
        chart
    }

    /// Each actuator's input over time, in its unit.
    pub fn actuation_chart(&self) -> LineChart {
        let mut chart = LineChart::new("Actuation", "time (s)", "input", self.times());
        for (a, (name, unit)) in self.actuator_units.iter().enumerate() {
            chart = chart.with_series_in(
                name.clone(),
                unit.clone(),
                self.inputs.iter().map(|row| row[a]).collect(),
            );
        }
        chart
    }

    /// The loss after each accepted iteration (m², log scale when it spans decades).
    pub fn loss_chart(&self) -> LineChart {
        let x = (0..self.loss_history.len()).map(|i| i as f64).collect();
        LineChart::new("Loss", "accepted iteration", "loss (m²)", x)
            .with_series("loss", self.loss_history.clone())
            .with_y_scale(ScaleChoice::Auto.resolve(self.loss_history.iter().copied()))
    }

    /// The summary page: the path against the waypoints, the loss, the actuation, the key
    /// numbers.
    pub fn summary(&self) -> Summary {
        let mut markers: Vec<Marker> = self
            .waypoints
            .iter()
            .enumerate()
            .map(|(i, w)| Marker {
                name: format!("waypoint {} ({} s)", i + 1, w.time),
                position: w.target,
                mark: Mark::Cross,
            })
            .collect();
        if let Some(p) = self.path.first() {
            markers.push(Marker {
                name: "start".into(),
                position: [p.x, p.y, p.z],
                mark: Mark::Circle,
            });
        }
        let largest = self.waypoint_errors.iter().copied().fold(0.0, f64::max);
        Summary {
            title: "optimize run".into(),
            panels: vec![
                Panel::Path(PathPlot {
                    title: "Effector path and waypoints".into(),
                    paths: vec![(
                        self.effector.clone(),
                        self.path.iter().map(|p| [p.x, p.y, p.z]).collect(),
                    )],
                    markers,
                }),
                Panel::Line(self.loss_chart()),
                Panel::Line(self.actuation_chart()),
                Panel::Table(
                    "Key numbers".into(),
                    vec![
                        (
                            "largest waypoint error".into(),
                            format!("{:.3} mm", largest * 1e3),
                        ),
                        ("loss".into(), format!("{:.3e} m²", self.loss)),
                        ("iterations".into(), self.iterations.to_string()),
                        ("converged".into(), self.converged.to_string()),
                        (
                            "run".into(),
                            format!(
                                "{} steps of {} s, {} start",
                                self.steps, self.dt, self.start
                            ),
                        ),
                    ],
                ),
            ],
        }
    }

    /// Writes `effector`, `actuation` and `loss` (SVG and CSV), `summary.svg` and
    /// `optimize.json` into `dir`, all or nothing (`chart::FileSet`); returns the paths.
    pub fn write_outputs(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let mut files = FileSet::new(dir);
        files.add_chart(&self.effector_chart(), "effector")?;
        files.add_chart(&self.actuation_chart(), "actuation")?;
        files.add_chart(&self.loss_chart(), "loss")?;
        files.add_summary(&self.summary())?;
        let json = serde_json::to_vec_pretty(self)
            .map_err(|e| Error::invalid("optimize report", e.to_string()))?;
        files.add("optimize.json", json);
        files.write()
    }
}
