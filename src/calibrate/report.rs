//! The `calibrate` result (docs/outputs.md) and its output folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::levenberg_marquardt::{LmResult, LmStop};
use super::parametrisation::Parametrisation;
use crate::chart::{FileSet, LineChart, ScaleChoice};
use crate::error::{Error, Result};

/// A fit reaches the answer when its loss falls to this fraction of the initial loss (or to
/// 0): above it, a stop of Levenberg–Marquardt is a local minimum or a bound, not convergence.
pub const CONVERGED_LOSS_FRACTION: f64 = 1e-6;

/// Whether `fit` stopped on a tolerance with a loss at most [`CONVERGED_LOSS_FRACTION`] of
/// `initial_loss` (m²).
pub fn reached(fit: &LmResult, initial_loss: f64) -> bool {
    fit.converged() && fit.loss <= CONVERGED_LOSS_FRACTION * initial_loss
}

/// What `diffsoro calibrate` prints: `{"params", "iterations", "loss", "converged"}`
/// (docs/outputs.md), plus why it stopped, the parameters held by a bound, the restarts and the
/// parameter values per iteration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalibrationReport {
    /// The fitted physical value of each parameter, by name (`young_modulus:beam` → Pa).
    pub params: BTreeMap<String, f64>,
    /// Levenberg–Marquardt iterations taken (accepted and rejected steps).
    pub iterations: usize,
    /// The loss `½‖r‖²` (m²) at the start and after each iteration.
    pub loss: Vec<f64>,
    /// Whether the fit reached the answer: a tolerance stopped it (not the iteration limit),
    /// no parameter is held by a bound, and the loss fell to [`CONVERGED_LOSS_FRACTION`] of
    /// the initial loss.
    pub converged: bool,
    /// Why it stopped, in words: `converged (…)`, `local minimum: loss … did not fall below
    /// …`, `held by a bound: …` or `iteration limit: …`.
    pub stopped: String,
    /// The parameters that ended on (just inside) an end of their range, by name, with that
    /// end's value.
    pub at_bound: BTreeMap<String, f64>,
    /// How many fits started again from a grid after the first missed the answer
    /// ([`super::calibrate_scene`]); `iterations`, `loss` and the histories are those of the
    /// best fit.
    pub restarts: usize,
    /// The loss (m²) at the user's starting point, the reference of `converged`.
    pub initial_loss: f64,
    /// Each parameter's physical value at the start and after each iteration.
    pub param_history: BTreeMap<String, Vec<f64>>,
}

impl CalibrationReport {
    /// The report of one fit run over the coordinates of `map` (its parameters and history
    /// are turned back into physical values), without restarts.
    pub fn from_fit(map: &Parametrisation, fit: &LmResult) -> CalibrationReport {
        let initial = fit.history.first().map_or(fit.loss, |h| h.loss);
        CalibrationReport::from_fits(map, fit, initial, 0)
    }

    /// The report of the best fit `fit` after `restarts` restarts, judged against the loss at
    /// the user's start `initial_loss` (m²).
    pub fn from_fits(
        map: &Parametrisation,
        fit: &LmResult,
        initial_loss: f64,
        restarts: usize,
    ) -> CalibrationReport {
        let names: Vec<String> = map.names.iter().map(|n| n.to_string()).collect();
        let history: Vec<Vec<f64>> = fit
            .history
            .iter()
            .map(|e| map.physical(&e.params))
            .collect();
        let values = map.physical(&fit.params);
        let held: Vec<(usize, f64)> = map.at_bound(&fit.params);
        CalibrationReport::build(
            &names,
            &values,
            &history,
            &held,
            fit,
            initial_loss,
            restarts,
        )
    }

    /// The report of a fit to noisy data (marker tracks of trials, `calibrate::trials`) over
    /// the coordinates of `map`, without restarts: the loss of noisy data stays at the noise's
    /// level, so `converged` says that a tolerance (gradient, step or loss) stopped the fit at a
    /// stationary point with no parameter held by a bound, not that the loss fell to
    /// [`CONVERGED_LOSS_FRACTION`] of `initial_loss` (m²).
    pub fn from_noisy_fit(
        map: &Parametrisation,
        fit: &LmResult,
        initial_loss: f64,
    ) -> CalibrationReport {
        let mut report = CalibrationReport::from_fits(map, fit, initial_loss, 0);
        if fit.converged() && report.at_bound.is_empty() {
            report.converged = true;
            report.stopped = format!(
                "converged ({}): loss {:.3e} m² at a stationary point (initial {initial_loss:.3e} m²; noisy data keep a loss at the noise's level)",
                stop_reason(fit.stop),
                fit.loss
            );
        }
        report
    }

    /// The report of a fit whose coordinates are the physical parameters `names` themselves,
    /// unbounded (a rigid body's initial velocity, `fit_initial_velocity`), judged against its
    /// first loss.
    pub fn from_unbounded_fit(names: &[String], fit: &LmResult) -> CalibrationReport {
        let initial = fit.history.first().map_or(fit.loss, |h| h.loss);
        let history: Vec<Vec<f64>> = fit.history.iter().map(|e| e.params.clone()).collect();
        CalibrationReport::build(names, &fit.params, &history, &[], fit, initial, 0)
    }

    /// The report of `fit` with its physical `values` (and per-iteration `history`) named
    /// `names`, the parameters `held` at an end of their range.
    fn build(
        names: &[String],
        values: &[f64],
        history: &[Vec<f64>],
        held: &[(usize, f64)],
        fit: &LmResult,
        initial_loss: f64,
        restarts: usize,
    ) -> CalibrationReport {
        let params = names
            .iter()
            .zip(values)
            .map(|(n, v)| (n.clone(), *v))
            .collect();
        let mut param_history: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for entry in history {
            for (n, v) in names.iter().zip(entry) {
                param_history.entry(n.clone()).or_default().push(*v);
            }
        }
        let at_bound: BTreeMap<String, f64> = held
            .iter()
            .map(|&(k, end)| (names[k].clone(), end))
            .collect();
        let converged = reached(fit, initial_loss) && held.is_empty();
        let reason = stop_reason(fit.stop);
        let (loss, fraction) = (fit.loss, CONVERGED_LOSS_FRACTION);
        let mut stopped = if fit.stop == LmStop::MaxIterations {
            format!(
                "iteration limit: {} iterations, loss {loss:.3e} m² (initial {initial_loss:.3e} m²)",
                fit.iterations
            )
        } else if !held.is_empty() {
            let which: Vec<String> = held
                .iter()
                .map(|&(k, end)| format!("{} = {} at its bound {end}", names[k], values[k]))
                .collect();
            format!(
                "held by a bound ({reason}): {}; loss {loss:.3e} m² (initial {initial_loss:.3e} m²)",
                which.join(", ")
            )
        } else if converged {
            format!(
                "converged ({reason}): loss {loss:.3e} m² is below {fraction:e} of the initial loss {initial_loss:.3e} m²"
            )
        } else {
            format!(
                "local minimum ({reason}): loss {loss:.3e} m² did not fall below {fraction:e} of the initial loss {initial_loss:.3e} m²"
            )
        };
        if restarts > 0 {
            stopped.push_str(&format!(
                "; the best of {} fits (restarts from a grid over the bounded parameters)",
                restarts + 1
            ));
        }
        CalibrationReport {
            params,
            iterations: fit.iterations,
            loss: fit.history.iter().map(|h| h.loss).collect(),
            converged,
            stopped,
            at_bound,
            restarts,
            initial_loss,
            param_history,
        }
    }

    /// Writes `DIR/calibration.json` (this report), `DIR/loss.svg` and `.csv` (loss per
    /// iteration, on the y scale `loss_scale` resolves to), per parameter `DIR/KIND_TARGET.svg`
    /// and `.csv` (its value per iteration; `young_modulus:beam` → `young_modulus_beam`), and
    /// `DIR/summary.svg` (every chart and the key numbers on one page,
    /// [`CalibrationReport::summary`]). Creates `dir` if needed. All or nothing ([`FileSet`]).
    /// Returns the paths written.
    pub fn write_outputs(&self, dir: &Path, loss_scale: ScaleChoice) -> Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let mut files = FileSet::new(dir);
        files.add_chart(&self.loss_chart(loss_scale), "loss")?;
        for (name, chart) in self.parameter_charts() {
            files.add_chart(&chart, &name.replace(':', "_"))?;
        }
        files.add_summary(&self.summary(loss_scale))?;
        let json = serde_json::to_vec_pretty(self)
            .map_err(|e| Error::invalid("calibration report", e.to_string()))?;
        files.add("calibration.json", json);
        files.write()
    }

    /// The loss per iteration (m²), on the y scale `scale` resolves to for it.
    pub fn loss_chart(&self, scale: ScaleChoice) -> LineChart {
        let iterations: Vec<f64> = (0..self.loss.len()).map(|i| i as f64).collect();
        LineChart::new(
            "Calibration loss",
            "iteration",
            "loss ½‖x − x_observed‖² (m²)",
            iterations,
        )
        .with_series("loss", self.loss.clone())
        .with_y_scale(scale.resolve(self.loss.iter().copied()))
    }

    /// Each parameter's name and the chart of its value per iteration, in its unit.
    pub fn parameter_charts(&self) -> Vec<(&str, LineChart)> {
        self.param_history
            .iter()
            .map(|(name, values)| {
                let iterations: Vec<f64> = (0..values.len()).map(|i| i as f64).collect();
                let chart = LineChart::new(
                    format!("Calibration of {name}"),
                    "iteration",
                    name.clone(),
                    iterations,
                )
                .with_series_in(name.clone(), parameter_unit(name), values.clone());
                (name.as_str(), chart)
            })
            .collect()
    }
}

/// Why Levenberg–Marquardt stopped, in words: `gradient tolerance`, `step tolerance`, `loss
/// tolerance` or `iteration limit`.
fn stop_reason(stop: LmStop) -> &'static str {
    match stop {
        LmStop::Gradient => "gradient tolerance",
        LmStop::Step => "step tolerance",
        LmStop::Loss => "loss tolerance",
        LmStop::MaxIterations => "iteration limit",
    }
}

/// The unit of a calibration parameter by its name's kind: `Pa` for `young_modulus:…`, `1`
/// (dimensionless) for `poisson_ratio:…`, `1/s`, `s` and `kg/m³` for `rayleigh_mass:…`,
/// `rayleigh_stiffness:…` and `density:…`, `s` for `time_constant:…`, and for `actuator:…`
/// and `offset:…` the actuators' units in words, for `gain:…` those per command unit (the
/// report does not know the actuator's kind).
pub(super) fn parameter_unit(name: &str) -> &'static str {
    match name.split(':').next() {
        Some("young_modulus") => "Pa",
        Some("rayleigh_mass") => "1/s",
        Some("rayleigh_stiffness") | Some("time_constant") => "s",
        Some("gain") => "N, Pa, N·m, m, m³ or rad per command unit",
        Some("density") => "kg/m³",
        Some("poisson_ratio") | Some("friction") => "1",
        Some("velocity") => "m/s",
        Some("angular_velocity") => "rad/s",
        _ => "N, Pa, N·m, m, m³ or rad",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::{LmIteration, LmStop};

    #[test]
    fn report_holds_physical_values_and_writes_its_folder() {
        let map = Parametrisation::parse(&["young_modulus:beam", "poisson_ratio:beam"]).unwrap();
        let s = |e: f64, nu: f64| map.coordinates(&[e, nu]).unwrap();
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
        assert!(
            report.stopped.starts_with("converged"),
            "{}",
            report.stopped
        );
        assert!(report.at_bound.is_empty() && report.restarts == 0);
        let nu = &report.param_history["poisson_ratio:beam"];
        assert!((nu[0] - 0.3).abs() < 1e-12 && nu.len() == 3);

        let dir = std::env::temp_dir().join(format!("diffsoro-calib-{}", std::process::id()));
        let written = report.write_outputs(&dir, ScaleChoice::Auto).unwrap();
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
        for key in [
            "params",
            "iterations",
            "loss",
            "converged",
            "stopped",
            "at_bound",
            "restarts",
        ] {
            assert!(json.get(key).is_some(), "contract key {key}");
        }
        assert_eq!(json["iterations"], 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A tolerance stop with a loss 3.1e-5 m² from 4e-5 m² (above 1e-6 of it) is a local
    /// minimum, not convergence; a parameter on its box is reported held by that bound.
    #[test]
    fn a_stop_far_above_zero_loss_or_on_a_bound_is_not_convergence() {
        let map = Parametrisation::parse(&["poisson_ratio:beam"])
            .unwrap()
            .with_bounds(&["poisson_ratio:beam=0,0.4"])
            .unwrap();
        let (lo, hi) = map.coordinate_box();
        let entry = |s: f64, loss| LmIteration {
            loss,
            params: vec![s],
            damping: 1.0,
            accepted: true,
            gradient: 0.0,
        };
        let inside = LmResult {
            params: vec![0.2],
            loss: 3.1e-5,
            iterations: 3,
            stop: LmStop::Gradient,
            history: vec![entry(0.1, 4e-5), entry(0.2, 3.1e-5)],
        };
        let report = CalibrationReport::from_fit(&map, &inside);
        assert!(!report.converged);
        assert!(
            report.stopped.starts_with("local minimum") && report.stopped.contains("3.100e-5"),
            "{}",
            report.stopped
        );
        assert!(report.at_bound.is_empty());

        let held = LmResult {
            params: vec![hi[0]],
            history: vec![entry(0.1, 4e-5), entry(hi[0], 3.1e-5)],
            ..inside.clone()
        };
        let report = CalibrationReport::from_fit(&map, &held);
        assert!(!report.converged);
        assert!(
            report.stopped.starts_with("held by a bound"),
            "{}",
            report.stopped
        );
        assert_eq!(report.at_bound["poisson_ratio:beam"], 0.4);
        let nu = report.params["poisson_ratio:beam"];
        assert!(nu < 0.4 && nu > 0.4 - 1e-6, "{nu} just inside 0.4");
        assert!(lo[0] > 0.0);

        // The same loss reached from a 1e7 times larger start: converged, unless held.
        let deep = LmResult {
            history: vec![entry(0.1, 3.1e2), entry(0.2, 3.1e-5)],
            ..inside.clone()
        };
        assert!(CalibrationReport::from_fit(&map, &deep).converged);
        let limit = LmResult {
            stop: LmStop::MaxIterations,
            ..deep
        };
        let report = CalibrationReport::from_fit(&map, &limit);
        assert!(!report.converged && report.stopped.starts_with("iteration limit"));
    }
}
