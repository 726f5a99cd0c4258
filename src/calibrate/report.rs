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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::{LmIteration, LmStop};

    #[test]
    fn report_holds_physical_values_and_writes_its_folder() {
        let map = Parametrisation::parse(&["young_modulus:beam", "poisson_ratio:beam"]).unwrap();
        let s = |e: f64, nu: f64| map.unconstrained(&[e, nu]).unwrap();
        let entry = |e, nu, loss| LmIteration {
            loss,
            params: s(e, nu),
            damping: 1.0,
            accepted: true,
            gradient: 0.0,
        };
        let fit = LmResult {
            params: s(3e5, 0.45),
            loss: 1e-20,
            iterations: 2,
            stop: LmStop::Gradient,
            history: vec![
                entry(1e5, 0.3, 1e-4),
                entry(2.5e5, 0.4, 1e-9),
                entry(3e5, 0.45, 1e-20),
            ],
        };
        let report = CalibrationReport::from_fit(&map, &fit);
        let e = report.params["young_modulus:beam"];
        assert!((e - 3e5).abs() < 1e-9 * 3e5, "{e}");
        assert!((report.params["poisson_ratio:beam"] - 0.45).abs() < 1e-12);
        assert_eq!(report.loss, [1e-4, 1e-9, 1e-20]);
        assert!(report.converged);
        let nu = &report.param_history["poisson_ratio:beam"];
        assert!((nu[0] - 0.3).abs() < 1e-12 && nu.len() == 3);

        let dir = std::env::temp_dir().join(format!("diffsoro-calib-{}", std::process::id()));
        let written = report.write_outputs(&dir).unwrap();
        let names: Vec<String> = written
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
            .collect();
        for expected in [
            "loss.svg",
            "loss.csv",
            "young_modulus_beam.svg",
            "poisson_ratio_beam.csv",
            "calibration.json",
        ] {
            assert!(
                names.iter().any(|n| n == expected),
                "{expected} in {names:?}"
            );
        }
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("calibration.json")).unwrap()).unwrap();
        for key in ["params", "iterations", "loss", "converged"] {
            assert!(json.get(key).is_some(), "contract key {key}");
        }
        assert_eq!(json["iterations"], 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
