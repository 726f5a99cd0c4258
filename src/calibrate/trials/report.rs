//! The report of a trial fit (docs/outputs.md#calibrate): the calibration report's keys, the
//! standard errors and correlations of the fitted values, the RMS residual overall, per marker
//! and per trial, the registered frame, and with `--out DIR` the files: the report's, and per
//! trial and marker the measured against the simulated coordinates over time and the
//! residuals over time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::super::report::CalibrationReport;
use super::frame::{Frame, Registration};
use super::residuals::{ComparedSample, Comparison};
use super::statistics::{FitStatistics, rms_per_marker, sample_rms};
use crate::chart::{FileSet, LineChart, Panel, ScaleChoice};
use crate::error::{Error, Result};
use crate::math::Vec3;

/// The RMS residuals (m): √(Σ r²/N) over the coordinates of the compared samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RmsReport {
    /// Over every sample of every trial.
    pub all: Option<f64>,
    /// Per marker (over the trials), by name; a marker never observed is absent.
    pub per_marker: BTreeMap<String, f64>,
    /// Per trial, in `--trial` order (`null` for a trial without compared sample).
    pub per_trial: Vec<Option<f64>>,
}

/// The registered camera → scene frame: scene_point = R(ω)·camera_point + τ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrameReport {
    /// τ (m).
    pub translation: [f64; 3],
    /// ω, the rotation's axis times its angle (rad); zero and not fitted for `translation`.
    pub rotation: [f64; 3],
    /// The standard errors of τ (m) and ω (rad) (`null` where not fitted or undefined).
    pub std_errors: FrameErrors,
}

/// [`FrameReport::std_errors`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrameErrors {
    /// Of τ (m).
    pub translation: Option<[f64; 3]>,
    /// Of ω (rad).
    pub rotation: Option<[f64; 3]>,
}

/// One trial as it was fitted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrialSummary {
    /// The `--trial` argument.
    pub trial: String,
    /// The log's first row time t₀ (s): simulation time 0.
    pub t0: f64,
    /// The steps simulated (to the last sample).
    pub steps: usize,
    /// The valid observed samples (marker positions).
    pub samples: usize,
}

/// What `diffsoro calibrate --trial …` prints (docs/outputs.md#calibrate).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrialReport {
    /// The calibration report's keys (`params`, `iterations`, `loss`, `converged`, …).
    #[serde(flatten)]
    pub calibration: CalibrationReport,
    /// The standard error of each fitted value (its unit), by name: √ of the diagonal of the
    /// Gauss–Newton covariance σ̂² (JᵀJ)⁻¹ at the optimum (`null` when undefined).
    pub std_errors: BTreeMap<String, Option<f64>>,
    /// The correlations of the fitted values, rows and columns in the order of `params`' keys
    /// (`correlation_names`); `null` entries when the covariance is undefined.
    pub correlation: Vec<Vec<Option<f64>>>,
    /// The names of `correlation`'s rows and columns.
    pub correlation_names: Vec<String>,
    /// σ̂ = √(SSR/(N − p)) (m), the residuals' standard deviation the covariance assumes.
    pub residual_std: Option<f64>,
    /// N − p: residuals (three per compared sample) less fitted parameters (frame included).
    pub degrees_of_freedom: usize,
    /// The RMS residuals (m).
    pub rms: RmsReport,
    /// The registered frame (absent with `--register none`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame: Option<FrameReport>,
    /// The trials, in `--trial` order.
    pub trials: Vec<TrialSummary>,
    /// `absolute` or `displacement`.
    pub compare: String,
    /// `none`, `translation` or `rigid`.
    pub register: String,
    /// Why standard errors are missing, when they are.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The compared samples at the fitted values (for the plots).
    #[serde(skip)]
    pub samples: Vec<ComparedSample>,
    /// The scene's marker names (scene order).
    #[serde(skip)]
    pub marker_names: Vec<String>,
}

/// What [`TrialReport::new`] is built from, beside the calibration report.
pub struct TrialOutcome<'a> {
    /// The fitted parameters' names, in fit order.
    pub names: &'a [String],
    /// The fitted frame and how it was registered.
    pub frame: (Frame, Registration),
    /// The statistics at the optimum (parameters then frame coordinates).
    pub statistics: &'a FitStatistics,
    /// The compared samples at the optimum.
    pub samples: Vec<ComparedSample>,
    /// The scene's marker names.
    pub marker_names: Vec<String>,
    /// The trials.
    pub trials: Vec<TrialSummary>,
    /// `--compare`.
    pub comparison: Comparison,
}

impl TrialReport {
    /// The report of `calibration` with `outcome`'s statistics, RMS and frame.
    pub fn new(calibration: CalibrationReport, outcome: TrialOutcome<'_>) -> TrialReport {
        let TrialOutcome {
            names,
            frame: (frame, registration),
            statistics,
            samples,
            marker_names,
            trials,
            comparison,
        } = outcome;
        let n = names.len();
        let std_errors: BTreeMap<String, Option<f64>> = names
            .iter()
            .enumerate()
            .map(|(k, name)| (name.clone(), statistics.std_error(k)))
            .collect();
        // `params`' key order (sorted names) for the correlation matrix.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| names[a].cmp(&names[b]));
        let correlation = order
            .iter()
            .map(|&k| {
                order
                    .iter()
                    .map(|&l| statistics.correlation(k, l))
                    .collect()
            })
            .collect();
        let mut warnings = Vec::new();
        if statistics.covariance.is_none() {
            warnings.push(if statistics.residual_variance.is_none() {
                format!(
                    "{} residuals for {} parameters: no degree of freedom is left to estimate the noise, so no standard errors",
                    statistics.residuals,
                    n + registration.parameters()
                )
            } else {
                format!(
                    "JᵀJ is singular at the optimum (condition number {:.1e} after scaling its columns): some parameters are not separately identifiable from these trials, so no standard errors",
                    statistics.condition
                )
            });
        }
        let pick = |k: usize| -> Option<[f64; 3]> {
            let e: Vec<f64> = (k..k + 3).filter_map(|i| statistics.std_error(i)).collect();
            (e.len() == 3).then(|| [e[0], e[1], e[2]])
        };
        let frame_report = (registration != Registration::None).then(|| FrameReport {
            translation: frame.translation.into(),
            rotation: frame.rotation.into(),
            std_errors: FrameErrors {
                translation: pick(n),
                rotation: (registration == Registration::Rigid)
                    .then(|| pick(n + 3))
                    .flatten(),
            },
        });
        let per_trial = (0..trials.len())
            .map(|i| sample_rms(samples.iter().filter(|s| s.trial == i)))
            .collect();
        TrialReport {
            calibration,
            std_errors,
            correlation,
            correlation_names: order.iter().map(|&k| names[k].clone()).collect(),
            residual_std: statistics.residual_variance.map(f64::sqrt),
            degrees_of_freedom: statistics.degrees_of_freedom,
            rms: RmsReport {
                all: sample_rms(&samples),
                per_marker: rms_per_marker(&samples, &marker_names),
                per_trial,
            },
            frame: frame_report,
            trials,
            compare: comparison.label().to_string(),
            register: registration.label().to_string(),
            warnings,
            samples,
            marker_names,
        }
    }

    /// Writes into `dir` (created if needed), all or nothing ([`FileSet`]): the calibration
    /// report's files (`loss`, one chart per parameter, `summary.svg` with a table of the
    /// standard errors and RMS added), per trial i (from 1) and observed marker NAME
    /// `trialI_NAME.svg`/`.csv` (measured and simulated x, y, z over time, m) and
    /// `trialI_NAME_residuals.svg`/`.csv` (measured − simulated, m), and `calibration.json`
    /// (this report) last. Returns the paths written.
    pub fn write_outputs(&self, dir: &Path, loss_scale: ScaleChoice) -> Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let mut files = FileSet::new(dir);
        let c = &self.calibration;
        files.add_chart(&c.loss_chart(loss_scale), "loss")?;
        for (name, chart) in c.parameter_charts() {
            files.add_chart(&chart, &name.replace(':', "_"))?;
        }
        for (stem, chart) in self.track_charts() {
            files.add_chart(&chart, &stem)?;
        }
        let mut summary = c.summary(loss_scale);
        summary.title = "calibrate run (trials)".into();
        summary.panels.push(Panel::Table(
            "Fit statistics".into(),
            self.statistics_rows(),
        ));
        files.add_summary(&summary)?;
        let json = serde_json::to_vec_pretty(self)
            .map_err(|e| Error::invalid("calibration report", e.to_string()))?;
        files.add("calibration.json", json);
        files.write()
    }

    /// Per trial and observed marker, the file stem and the chart of measured and simulated
    /// coordinates over time, then that of the residuals.
    pub fn track_charts(&self) -> Vec<(String, LineChart)> {
        let displacement = self.compare == Comparison::Displacement.label();
        let what = if displacement {
            "displacement from the first sample"
        } else {
            "position"
        };
        let mut charts = Vec::new();
        for (i, trial) in self.trials.iter().enumerate() {
            for (m, name) in self.marker_names.iter().enumerate() {
                let samples: Vec<&ComparedSample> = self
                    .samples
                    .iter()
                    .filter(|s| s.trial == i && s.marker == m)
                    .collect();
                if samples.is_empty() {
                    continue;
                }
                let time: Vec<f64> = samples.iter().map(|s| s.time).collect();
                let column = |f: &dyn Fn(&ComparedSample) -> Vec3, c: usize| -> Vec<f64> {
                    samples.iter().map(|s| f(s)[c]).collect()
                };
                let stem = format!("trial{}_{}", i + 1, file_stem(name));
                let mut chart = LineChart::new(
                    format!("Trial {} ({}), marker {name}", i + 1, trial.trial),
                    "time (s)",
                    format!("{what}, measured and simulated (m)"),
                    time.clone(),
                );
                for (c, axis) in ["x", "y", "z"].iter().enumerate() {
                    chart = chart
                        .with_series(format!("{axis} measured"), column(&|s| s.measured, c))
                        .with_series(format!("{axis} simulated"), column(&|s| s.simulated, c));
                }
                charts.push((stem.clone(), chart));
                let mut residuals = LineChart::new(
                    format!("Trial {}, marker {name}: residuals", i + 1),
                    "time (s)",
                    "measured − simulated (m)",
                    time,
                );
                for (c, axis) in ["x", "y", "z"].iter().enumerate() {
                    residuals = residuals.with_series(*axis, column(&|s| s.residual(), c));
                }
                charts.push((format!("{stem}_residuals"), residuals));
            }
        }
        charts
    }

    /// The summary's table: σ̂, the RMS overall and per trial, each standard error and the
    /// frame.
    fn statistics_rows(&self) -> Vec<(String, String)> {
        let num = |v: Option<f64>, unit: &str| match v {
            Some(v) => format!("{v:.4e}{unit}"),
            None => "undefined".to_string(),
        };
        let mut rows = vec![
            ("σ̂ (residual std)".to_string(), num(self.residual_std, " m")),
            ("RMS residual".to_string(), num(self.rms.all, " m")),
        ];
        for (i, r) in self.rms.per_trial.iter().enumerate() {
            rows.push((format!("RMS trial {}", i + 1), num(*r, " m")));
        }
        for (name, e) in &self.std_errors {
            rows.push((format!("σ {name}"), num(*e, "")));
        }
        if let Some(f) = &self.frame {
            rows.push((
                "frame τ".into(),
                format!(
                    "[{:.4e}, {:.4e}, {:.4e}] m",
                    f.translation[0], f.translation[1], f.translation[2]
                ),
            ));
            if self.register == Registration::Rigid.label() {
                rows.push((
                    "frame ω".into(),
                    format!(
                        "[{:.4e}, {:.4e}, {:.4e}] rad",
                        f.rotation[0], f.rotation[1], f.rotation[2]
                    ),
                ));
            }
        }
        rows
    }
}

/// A marker name as a file-name part: letters, digits, `-` and `_` kept, others as `_`.
fn file_stem(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
