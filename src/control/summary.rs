//! The one-page summary of a `control` run (`summary.svg`): the effector's path, the error,
//! the actuation (and the contact forces, with contact-force limiting) and the key numbers.

use super::report::ControlReport;
use crate::chart::{Mark, Marker, Panel, PathPlot, ScaleChoice, Summary};

impl ControlReport {
    /// The summary: a path panel (the effector's positions after each step, or the first
    /// effector's with contact-force limiting, the first position circled, the target crossed; projected onto the plane of the two world axes it spans
    /// most, m), the error chart on the y scale `error_scale` resolves to, the actuation
    /// chart (one series per actuator), the contact-force chart with contact-force limiting,
    /// and a table of the key numbers. A run without steps has no path or error panel.
    pub fn summary(&self, error_scale: ScaleChoice) -> Summary {
        let mut panels = Vec::new();
        let point = |p: &[f64]| -> Option<[f64; 3]> { p.try_into().ok() };
        let path: Option<Vec<[f64; 3]>> = self.position_history.iter().map(|p| point(p)).collect();
        match (path, point(&self.target)) {
            (Some(path), Some(target)) if !path.is_empty() => {
                let markers = vec![
                    Marker {
                        name: "target".into(),
                        position: target,
                        mark: Mark::Cross,
                    },
                    Marker {
                        name: "after step 1".into(),
                        position: path[0],
                        mark: Mark::Circle,
                    },
                ];
                // With contact-force limiting the path is the first effector's, named.
                let name = self
                    .grasp
                    .as_ref()
                    .and_then(|g| g.effectors.first())
                    .map_or("effector", String::as_str);
                panels.push(Panel::Path(PathPlot {
                    title: "Effector path".into(),
                    paths: vec![(name.to_string(), path)],
                    markers,
                }));
                panels.push(Panel::Line(self.error_chart(error_scale)));
            }
            // A joint effector's coordinate has no path: the error chart alone.
            _ if !self.error_history.is_empty() => {
                panels.push(Panel::Line(self.error_chart(error_scale)));
            }
            _ => {}
        }
        panels.extend(self.actuation_chart().map(Panel::Line));
        panels.extend(self.contact_force_chart().map(Panel::Line));
        panels.push(Panel::Table("Key numbers".into(), self.key_numbers()));
        Summary {
            title: "control run".into(),
            panels,
        }
    }

    /// The table of the summary: steps, target, final position, first and final error (m),
    /// each actuator's last input with its unit, and with contact-force limiting the
    /// strategy and the loss.
    fn key_numbers(&self) -> Vec<(String, String)> {
        let unit = self.effector_unit();
        let point = |p: &[f64]| match p {
            [x, y, z] => format!("({x:.4e}, {y:.4e}, {z:.4e}) {unit}"),
            _ => p
                .iter()
                .map(|x| format!("{x:.4e} {unit}"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        let mut rows = vec![
            ("steps".to_string(), self.error_history.len().to_string()),
            ("target".to_string(), point(&self.target)),
            ("final position".to_string(), point(&self.final_position)),
        ];
        if let Some(first) = self.error_history.first() {
            rows.push(("error after step 1".into(), format!("{first:.4e} {unit}")));
        }
        rows.push((
            "final error".into(),
            format!("{:.4e} {unit}", self.final_error),
        ));
        if let Some(last) = self.actuation_history.last() {
            for (k, (name, value)) in self.actuators.iter().zip(last).enumerate() {
                let unit = self.actuator_units.get(k).map_or("", String::as_str);
                rows.push((
                    format!("final input of {name}"),
                    format!("{value:.4e} {unit}"),
                ));
            }
        }
        if let Some(j) = &self.joint {
            rows.push(("effector".into(), j.effector.clone()));
            rows.push(("status".into(), j.status.clone()));
        }
        if let Some(g) = &self.grasp {
            rows.push(("strategy".into(), g.strategy.clone()));
            rows.push(("loss α‖X_e‖² + β‖λ_c‖²".into(), format!("{:.4e}", g.loss)));
        }
        rows
    }
}
