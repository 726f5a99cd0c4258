//! The one-page summary of a `calibrate` run (`summary.svg`): the loss, each parameter's
//! value per iteration and the key numbers. A calibration fits a final state, not an
//! effector's motion, so it has no path panel.

use super::report::{CalibrationReport, parameter_unit};
use crate::chart::{Panel, ScaleChoice, Summary};

impl CalibrationReport {
    /// The summary: the loss chart on the y scale `loss_scale` resolves to, one chart per
    /// parameter (its value per iteration, in its unit), and a table of the key numbers.
    pub fn summary(&self, loss_scale: ScaleChoice) -> Summary {
        let mut panels = vec![Panel::Line(self.loss_chart(loss_scale))];
        panels.extend(
            self.parameter_charts()
                .into_iter()
                .map(|(_, chart)| Panel::Line(chart)),
        );
        panels.push(Panel::Table("Key numbers".into(), self.key_numbers()));
        Summary {
            title: "calibrate run".into(),
            panels,
        }
    }

    /// The table of the summary: iterations, restarts, whether it converged, the initial and
    /// final loss (m²), each fitted value with its unit and the parameters held by a bound.
    fn key_numbers(&self) -> Vec<(String, String)> {
        let mut rows = vec![
            ("iterations".to_string(), self.iterations.to_string()),
            ("restarts".to_string(), self.restarts.to_string()),
            ("converged".to_string(), self.converged.to_string()),
            (
                "initial loss".to_string(),
                format!("{:.4e} m²", self.initial_loss),
            ),
        ];
        if let Some(last) = self.loss.last() {
            rows.push(("final loss".into(), format!("{last:.4e} m²")));
        }
        for (name, value) in &self.params {
            // A unit when it is one (not ν's `1`, nor the actuators' list of possible ones).
            let unit = match parameter_unit(name) {
                u if u == "1" || u.contains(',') => String::new(),
                u => format!(" {u}"),
            };
            rows.push((name.clone(), format!("{value:.6e}{unit}")));
        }
        for (name, end) in &self.at_bound {
            rows.push((format!("{name} held by its bound"), format!("{end:e}")));
        }
        rows
    }
}
