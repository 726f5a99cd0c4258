//! The `control` result (DESIGN.md §4) and its output folder.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::chart::{LineChart, write_chart};
use crate::error::{Error, Result};
use crate::mesh::io::write_file_atomic;

/// What `diffsoro control` prints: `{"target", "final_position", "final_error",
/// "error_history", "actuation_history"}` (DESIGN.md §4), plus the actuator names that order
/// each actuation row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ControlReport {
    /// The target position (m, world frame).
    pub target: [f64; 3],
    /// The effector's position after the last step (m).
    pub final_position: [f64; 3],
    /// `‖final_position − target‖` (m).
    pub final_error: f64,
    /// The distance to the target after each step (m).
    pub error_history: Vec<f64>,
    /// The actuation applied at each step, one value per actuator (N for cables, Pa for
    /// cavities, N·m for servos), in the order of `actuators`.
    pub actuation_history: Vec<Vec<f64>>,
    /// The actuator names, in the order of each `actuation_history` row.
    pub actuators: Vec<String>,
}

impl ControlReport {
    /// Writes `DIR/control.json` (this report), `DIR/error.svg` + `.csv` (distance to the
    /// target per step) and `DIR/actuation.svg` + `.csv` (one line per actuator). Creates
    /// `dir` if needed. Returns the paths written. Errors if an actuation row does not have
    /// one value per actuator.
    pub fn write_outputs(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        if let Some(i) = self
            .actuation_history
            .iter()
            .position(|row| row.len() != self.actuators.len())
        {
            return Err(Error::invalid(
                "control report",
                format!(
                    "actuation row {i} has {} values for {} actuators",
                    self.actuation_history[i].len(),
                    self.actuators.len()
                ),
            ));
        }
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let steps: Vec<f64> = (1..=self.error_history.len()).map(|i| i as f64).collect();
        let mut written = Vec::new();
        let error = LineChart::new(
            "Distance of the effector to the target",
            "step",
            "error (m)",
            steps,
        )
        .with_series("error", self.error_history.clone());
        let (svg, csv) = write_chart(&error, dir, "error")?;
        written.extend([svg, csv]);
        if !self.actuators.is_empty() {
            let steps: Vec<f64> = (1..=self.actuation_history.len()).map(|i| i as f64).collect();
            let mut actuation = LineChart::new("Actuation", "step", "actuation (SI)", steps);
            for (k, name) in self.actuators.iter().enumerate() {
                actuation = actuation.with_series(
                    name.clone(),
                    self.actuation_history.iter().map(|row| row[k]).collect(),
                );
            }
            let (svg, csv) = write_chart(&actuation, dir, "actuation")?;
            written.extend([svg, csv]);
        }
        let json = serde_json::to_vec_pretty(self)
            .map_err(|e| Error::invalid("control report", e.to_string()))?;
        let path = dir.join("control.json");
        write_file_atomic(&path, &json)?;
        written.push(path);
        Ok(written)
    }
}
