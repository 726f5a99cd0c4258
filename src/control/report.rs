//! The `control` result (docs/outputs.md) and its output folder.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::grasp_job::GraspSummary;
use super::joint_control::JointSummary;
use crate::actuator::{ActuatorKind, Drive};
use crate::chart::{FileSet, LineChart, ScaleChoice};
use crate::error::{Error, Result};
use crate::scene::Scene;

/// What `diffsoro control` prints: `{"target", "final_position", "final_error",
/// "error_history", "actuation_history"}` (docs/outputs.md), plus the actuator names that order
/// each actuation row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ControlReport {
    /// The target position (m, world frame; for a joint effector `q:ROBOT[k]` one value,
    /// rad or m).
    pub target: Vec<f64>,
    /// The effector's position after the last step (m; a joint effector's coordinate).
    pub final_position: Vec<f64>,
    /// `‖final_position − target‖` (m; rad for a revolute joint effector).
    pub final_error: f64,
    /// The distance to the target after each step (m; rad for a revolute joint effector).
    pub error_history: Vec<f64>,
    /// The effector's position after each step (m, world frame; with `--contact-weight` the
    /// first effector's; a joint effector's coordinate), one row per `error_history` entry.
    pub position_history: Vec<Vec<f64>>,
    /// The actuation applied at each step, one value per actuator (N for cables, Pa for
    /// cavities, N·m for servos), in the order of `actuators`.
    pub actuation_history: Vec<Vec<f64>>,
    /// The actuator names, in the order of each `actuation_history` row.
    pub actuators: Vec<String>,
    /// The unit of each actuator's control variable, in the order of `actuators`
    /// ([`actuation_units`]: `N`, `Pa`, `N·m` or `rad`); empty when unknown. Labels the
    /// actuation chart; not in the JSON.
    #[serde(skip)]
    pub actuator_units: Vec<String>,
    /// With a target path or `--settle S`: the RMS (m) of `error_history` over the steps
    /// ending after S (every step of a path without `--settle`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracking_rms: Option<f64>,
    /// With `--contact-weight` (paper 004 Eq. 17): the effectors, contact forces and the
    /// loss's two terms, at the top level of the JSON; absent otherwise.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub grasp: Option<GraspSummary>,
    /// With a joint effector (`--effector q:ROBOT[k]`): its name, unit, final velocity and
    /// whether it reached the target or stopped on the actuators' bounds, at the top level
    /// of the JSON; absent otherwise.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub joint: Option<JointSummary>,
}

impl ControlReport {
    /// Writes `DIR/control.json` (this report), `DIR/error.svg` + `.csv` (distance to the
    /// target per step, on the y scale `error_scale` resolves to), `DIR/actuation.svg` +
    /// `.csv` (one line per actuator), with contact-force limiting `DIR/contact_force.svg` +
    /// `.csv` (‖λ_c‖ per step), and `DIR/summary.svg` (the path, the error, the actuation and
    /// the key numbers on one page, [`ControlReport::summary`]). Creates `dir` if needed.
    /// All or nothing ([`FileSet`]). Returns the paths written. Errors if an actuation row does not have one value per
    /// actuator.
    pub fn write_outputs(&self, dir: &Path, error_scale: ScaleChoice) -> Result<Vec<PathBuf>> {
        self.check_rows()?;
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let mut files = FileSet::new(dir);
        files.add_chart(&self.error_chart(error_scale), "error")?;
        if let Some(actuation) = self.actuation_chart() {
            files.add_chart(&actuation, "actuation")?;
        }
        if let Some(force) = self.contact_force_chart() {
            files.add_chart(&force, "contact_force")?;
        }
        files.add_summary(&self.summary(error_scale))?;
        let json = serde_json::to_vec_pretty(self)
            .map_err(|e| Error::invalid("control report", e.to_string()))?;
        files.add("control.json", json);
        files.write()
    }

    /// Checks that every actuation row has one value per actuator.
    fn check_rows(&self) -> Result<()> {
        match self
            .actuation_history
            .iter()
            .position(|row| row.len() != self.actuators.len())
        {
            None => Ok(()),
            Some(i) => Err(Error::invalid(
                "control report",
                format!(
                    "actuation row {i} has {} values for {} actuators",
                    self.actuation_history[i].len(),
                    self.actuators.len()
                ),
            )),
        }
    }

    /// The distance to the target per step (m), on the y scale `scale` resolves to for it.
    pub fn error_chart(&self, scale: ScaleChoice) -> LineChart {
        let steps: Vec<f64> = (1..=self.error_history.len()).map(|i| i as f64).collect();
        LineChart::new(
            "Distance of the effector to the target",
            "step",
            format!("error ({})", self.effector_unit()),
            steps,
        )
        .with_series("error", self.error_history.clone())
        .with_y_scale(scale.resolve(self.error_history.iter().copied()))
    }

    /// The unit of the effector's position and error: `m`, or a joint effector's (`rad`,
    /// `m`).
    pub fn effector_unit(&self) -> &str {
        self.joint.as_ref().map_or("m", |j| j.unit.as_str())
    }

    /// The actuation per step, one series per actuator in its unit; `None` without actuators.
    pub fn actuation_chart(&self) -> Option<LineChart> {
        if self.actuators.is_empty() {
            return None;
        }
        let steps: Vec<f64> = (1..=self.actuation_history.len())
            .map(|i| i as f64)
            .collect();
        let unit = |k: usize| self.actuator_units.get(k).map_or("", String::as_str);
        let units: Vec<&str> = (0..self.actuators.len()).map(unit).collect();
        let quantity = match units.first() {
            Some(&first) if units.iter().all(|&u| u == first) => quantity_of(first),
            _ => "actuation",
        };
        let mut actuation = LineChart::new("Actuation", "step", quantity, steps);
        for (k, name) in self.actuators.iter().enumerate() {
            actuation = actuation.with_series_in(
                name.clone(),
                unit(k),
                self.actuation_history.iter().map(|row| row[k]).collect(),
            );
        }
        Some(actuation)
    }

    /// ‖λ_c‖ per step (N) with contact-force limiting; `None` otherwise.
    pub fn contact_force_chart(&self) -> Option<LineChart> {
        let g = self.grasp.as_ref()?;
        let steps: Vec<f64> = (1..=g.contact_force_history.len())
            .map(|i| i as f64)
            .collect();
        Some(
            LineChart::new("Contact forces", "step", "‖λ_c‖ (N)", steps)
                .with_series("contact force", g.contact_force_history.clone()),
        )
    }
}

/// The quantity an actuation unit measures, for a chart's axis title.
fn quantity_of(unit: &str) -> &'static str {
    match unit {
        "N" => "cable tension",
        "Pa" => "cavity pressure",
        "N·m" => "servo torque",
        "rad" => "servo angle target",
        _ => "actuation",
    }
}

/// The unit of each named actuator's control variable in `scene`: `N` for a cable's tension,
/// `Pa` for a cavity's pressure, `N·m` for a torque-driven servo, `rad` for an angle-driven
/// servo (whose angle target is the control variable); empty for a name the scene lacks.
pub fn actuation_units(scene: &Scene, names: &[String]) -> Vec<String> {
    names
        .iter()
        .map(|name| {
            let found = (0..scene.bodies.len())
                .flat_map(|i| scene.body_actuation(i).actuators.iter())
                .find(|a| &a.name == name);
            match found {
                None => "",
                Some(a) => match (&a.kind, &a.drive) {
                    (ActuatorKind::Cable(_), _) => "N",
                    (ActuatorKind::Pneumatic(_), _) => "Pa",
                    (ActuatorKind::Servo(_), Drive::Target(_)) => "rad",
                    (ActuatorKind::Servo(_), Drive::Force(_)) => "N·m",
                },
            }
            .to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> ControlReport {
        ControlReport {
            target: vec![0.0, 0.0, 0.1],
            final_position: vec![0.0, 0.0, 0.1005],
            final_error: 5e-4,
            error_history: vec![0.01, 0.002, 5e-4],
            position_history: vec![
                vec![0.0, 0.0, 0.09],
                vec![0.0, 0.0, 0.098],
                vec![0.0, 0.0, 0.1005],
            ],
            actuation_history: vec![vec![0.1, 0.0], vec![0.2, 0.05], vec![0.25, 0.05]],
            actuators: vec!["c1".into(), "c2".into()],
            actuator_units: vec!["N".into(), "N".into()],
            tracking_rms: None,
            grasp: None,
            joint: None,
        }
    }

    #[test]
    fn report_writes_json_and_both_charts() {
        let dir = std::env::temp_dir().join(format!("diffsoro-control-{}", std::process::id()));
        let written = report().write_outputs(&dir, ScaleChoice::Auto).unwrap();
        assert_eq!(written.len(), 6);
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("control.json")).unwrap()).unwrap();
        for key in [
            "target",
            "final_position",
            "final_error",
            "error_history",
            "actuation_history",
        ] {
            assert!(json.get(key).is_some(), "contract key {key}");
        }
        let csv = std::fs::read_to_string(dir.join("actuation.csv")).unwrap();
        assert_eq!(csv.lines().next().unwrap(), "step,c1,c2");
        assert_eq!(csv.lines().nth(2).unwrap(), "2.0,0.2,0.05");
        // The chart names the quantity and unit, and each cable with its unit.
        let svg = std::fs::read_to_string(dir.join("actuation.svg")).unwrap();
        for text in ["cable tension (N)", "c1 (N)", "c2 (N)"] {
            assert!(svg.contains(text), "{text}");
        }
        assert!(!svg.contains("(SI)"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_ragged_actuation_history_is_an_error() {
        let mut bad = report();
        bad.actuation_history[1].pop();
        let e = bad
            .write_outputs(Path::new("/nonexistent"), ScaleChoice::Auto)
            .unwrap_err();
        assert!(
            e.to_string().contains("actuation row 1 has 1 values for 2"),
            "{e}"
        );
    }
}
