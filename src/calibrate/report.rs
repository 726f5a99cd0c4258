//! The `calibrate` result (DESIGN.md §4) and its output folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::levenberg_marquardt::LmResult;
use super::parametrisation::Parametrisation;
use crate::chart::{LineChart, YScale, write_chart};
use crate::error::{Error, Result};
use crate::mesh::io::write_file_atomic;

/// What `diffsoro calibrate` prints: `{"params", "iterations", "loss", "converged"}`
/// (DESIGN.md §4), plus the parameter values per iteration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalibrationReport {
    /// The fitted physical value of each parameter, by name (`young_modulus:beam` → Pa).
    pub params: BTreeMap<String, f64>,
    /// Levenberg–Marquardt iterations taken (accepted and rejected steps).
    pub iterations: usize,
    /// The loss `½‖r‖²` (m²) at the start and after each iteration.
    pub loss: Vec<f64>,
    /// Whether a tolerance, not the iteration limit, stopped the fit.
    pub converged: bool,
    /// Each parameter's physical value at the start and after each iteration.
    pub param_history: BTreeMap<String, Vec<f64>>,
}

impl CalibrationReport {
    /// The report of a fit run over the unconstrained variables of `map` (its parameters and
    /// history are turned back into physical values).
    pub fn from_fit(map: &Parametrisation, fit: &LmResult) -> CalibrationReport {
        let values = map.physical(&fit.params);
        let params = map
            .names
            .iter()
            .zip(values)
            .map(|(n, v)| (n.to_string(), v))
            .collect();
        let mut param_history: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for entry in &fit.history {
            for (n, v) in map.names.iter().zip(map.physical(&entry.params)) {
                param_history.entry(n.to_string()).or_default().push(v);
            }
        }
        CalibrationReport {
            params,
            iterations: fit.iterations,
            loss: fit.history.iter().map(|h| h.loss).collect(),
            converged: fit.converged(),
            param_history,
        }
    }

    /// Writes `DIR/calibration.json` (this report), `DIR/loss.svg` + `.csv` (loss per
    /// iteration, log scale) and, per parameter, `DIR/KIND_TARGET.svg` + `.csv` (its value per
    /// iteration; `young_modulus:beam` → `young_modulus_beam`). Creates `dir` if needed.
    /// Returns the paths written.
    pub fn write_outputs(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let iterations: Vec<f64> = (0..self.loss.len()).map(|i| i as f64).collect();
        let mut written = Vec::new();
        let loss = LineChart::new(
            "Calibration loss",
            "iteration",
            "loss ½‖x − x_observed‖² (m²)",
            iterations.clone(),
        )
        .with_series("loss", self.loss.clone())
        .with_y_scale(YScale::Log);
        let (svg, csv) = write_chart(&loss, dir, "loss")?;
        written.extend([svg, csv]);
        for (name, values) in &self.param_history {
            let chart = LineChart::new(
                format!("Calibration of {name}"),
                "iteration",
                name.clone(),
                iterations.clone(),
            )
            .with_series(name.clone(), values.clone());
            let (svg, csv) = write_chart(&chart, dir, &name.replace(':', "_"))?;
            written.extend([svg, csv]);
        }
        let json = serde_json::to_vec_pretty(self)
            .map_err(|e| Error::invalid("calibration report", e.to_string()))?;
        let path = dir.join("calibration.json");
        write_file_atomic(&path, &json)?;
        written.push(path);
        Ok(written)
    }
}
