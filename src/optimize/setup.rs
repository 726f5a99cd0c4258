//! The `optimize` job's input: the effector, the waypoints, the knots and their bounds, the
//! effort weight, the run's length and start — checked against the scene.

use crate::actuator::EmbeddedPoint;
use crate::calibrate::LmOptions;
use crate::control::check_effector;
use crate::diff::{ActuationKnots, Parameter};
use crate::error::{Error, Result};
use crate::scene::{PointPath, RunStart, Scene};

/// The default effort weight W (m² per squared input unit, e.g. (m/N)² for tensions):
/// 1 N held at one knot costs as much as 0.03 mm of waypoint error.
pub const DEFAULT_EFFORT: f64 = 1e-9;

/// A checked `optimize` problem (module doc of [`crate::optimize`]).
#[derive(Debug, Clone)]
pub struct OptimizeSetup {
    /// The effector's name.
    pub effector: String,
    /// The effector's soft body and where it sits on it.
    pub point: (usize, EmbeddedPoint),
    /// The waypoints (s, m), inside the run.
    pub waypoints: PointPath,
    /// The knots: times uniform over the run, every listed actuator, initial values the
    /// scene's inputs.
    pub knots: ActuationKnots,
    /// Per actuator of `knots`, its input's bounds [lo, hi] in its unit.
    pub bounds: Vec<[f64; 2]>,
    /// The effort weight W (m² per squared input unit).
    pub effort: f64,
    /// The run's number of steps.
    pub steps: usize,
    /// Where the run starts.
    pub start: RunStart,
    /// The iteration's settings (its iteration limit from `--iterations`).
    pub options: LmOptions,
}

impl OptimizeSetup {
    /// Checks the problem of `optimize SCENE --effector NAME --waypoints FILE [--knots K]
    /// [--effort W] [--steps N] [--start …] [--actuator NAME …]`: the effector must exist
    /// (the error lists the scene's effectors); `actuators` (default: every actuator of every
    /// soft body) must be driven by a tension, pressure, torque or displacement (an
    /// angle-driven servo is refused); K ≥ 2 knots spread evenly over [0, steps·dt]
    /// (default: one more than the waypoints); `steps` (default: the whole steps that reach
    /// the last waypoint) must reach every waypoint, whose times are ≥ 0; W ≥ 0 and finite.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        scene: &Scene,
        effector: &str,
        waypoints: PointPath,
        knots: Option<usize>,
        effort: Option<f64>,
        steps: Option<usize>,
        start: RunStart,
        actuators: &[String],
    ) -> Result<OptimizeSetup> {
        check_effector(scene, effector)?;
        let (body, e) = scene.effector(effector).expect("checked");
        let point = (body, e.point);
        let dt = scene.simulation.dt;
        let what = || format!("--waypoints {}", waypoints.file);
        if let Some(t) = waypoints.times.iter().find(|t| !(**t >= 0.0)) {
            return Err(Error::invalid(
                what(),
                format!("waypoint time {t} s is before the run's start (0 s)"),
            ));
        }
        let last = *waypoints.times.last().expect("a path has a point");
        let steps = match steps {
            Some(0) => return Err(Error::invalid("--steps", "must be at least 1")),
            Some(n) => n,
            None => ((last / dt) - 1e-9).ceil().max(1.0) as usize,
        };
        if last > steps as f64 * dt * (1.0 + 1e-12) {
            return Err(Error::invalid(
                what(),
                format!(
                    "the last waypoint ({last} s) lies after the run's end ({steps} steps of {dt} s)"
                ),
            ));
        }
        let effort = effort.unwrap_or(DEFAULT_EFFORT);
        if !(effort >= 0.0 && effort.is_finite()) {
            return Err(Error::invalid(
                "--effort",
                format!("{effort} is not a finite weight ≥ 0 (m² per squared input unit)"),
            ));
        }
        let count = knots.unwrap_or(waypoints.len() + 1);
        if count < 2 {
            return Err(Error::invalid(
                "--knots",
                format!("{count} knot(s): at least 2 (the inputs at the start and at the end)"),
            ));
        }
        let names: Vec<String> = if actuators.is_empty() {
            all_actuators(scene)
        } else {
            actuators.to_vec()
        };
        if names.is_empty() {
            return Err(Error::invalid(
                "the scene",
                "has no actuator on a soft body to optimise",
            ));
        }
        let times = ActuationKnots::uniform_times(steps as f64 * dt, count);
        let knots = ActuationKnots::at_current_inputs(scene, &names, times)?;
        let bounds = knots
            .actuators
            .iter()
            .map(|p| {
                let Parameter::Actuator { body, index } = *p else {
                    unreachable!("knots drive actuators")
                };
                scene.body_actuation(body).input_bounds(index)
            })
            .collect();
        Ok(OptimizeSetup {
            effector: effector.to_string(),
            point,
            waypoints,
            knots,
            bounds,
            effort,
            steps,
            start,
            options: LmOptions {
                max_iterations: 30,
                ..LmOptions::default()
            },
        })
    }

    /// The names of the knots' actuators, in order.
    pub fn actuator_names(&self, scene: &Scene) -> Vec<String> {
        self.knots
            .actuators
            .iter()
            .map(|p| {
                let name = p.name(scene);
                name.strip_prefix("actuator:").unwrap_or(&name).to_string()
            })
            .collect()
    }
}

/// Every actuator of every soft body, by name, in scene order.
fn all_actuators(scene: &Scene) -> Vec<String> {
    (0..scene.bodies.len())
        .flat_map(|b| {
            scene
                .body_actuation(b)
                .actuators
                .iter()
                .map(|a| a.name.clone())
                .collect::<Vec<_>>()
        })
        .collect()
}
