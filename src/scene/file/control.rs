//! `[control]`: the inverse-control QP's settings a scene may carry (`diffsoro control`, the
//! library's `control::Controller`); `control --regularisation` / `--max-change` override
//! them for a run.

use serde::Deserialize;

use crate::error::{Error, Result};

/// `[control]` (every key optional; the defaults are `control::ControlOptions`'s).
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControlSection {
    /// Relative weight ε of the damping ½ ε s ‖Δλ‖² of the QP's change (dimensionless, ≥ 0).
    pub regularisation: Option<f64>,
    /// Largest change of each actuator's input per control step (the actuators' units: N,
    /// Pa, N·m; > 0).
    pub max_change: Option<f64>,
}

impl ControlSection {
    /// Errors naming the key (`control.regularisation`, `control.max_change`) for a value
    /// that is not finite, a negative regularisation or a change ≤ 0.
    pub fn validate(&self) -> Result<()> {
        check_regularisation("control.regularisation", self.regularisation)?;
        check_max_change("control.max_change", self.max_change)
    }
}

/// `value`, if given, must be finite and ≥ 0 (the error names `what`).
pub fn check_regularisation(what: &str, value: Option<f64>) -> Result<()> {
    match value {
        Some(v) if !(v >= 0.0 && v.is_finite()) => Err(Error::invalid(
            what,
            format!("{v} must be a finite number ≥ 0 (a relative weight)"),
        )),
        _ => Ok(()),
    }
}

/// `value`, if given, must be finite and > 0 (the error names `what`).
pub fn check_max_change(what: &str, value: Option<f64>) -> Result<()> {
    match value {
        Some(v) if !(v > 0.0 && v.is_finite()) => Err(Error::invalid(
            what,
            format!("{v} must be a finite number > 0 (the actuators' units per step)"),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_values_are_refused_naming_the_key() {
        let parse = |text: &str| toml::from_str::<ControlSection>(text).unwrap().validate();
        assert!(parse("regularisation = 0.0\nmax_change = 0.05").is_ok());
        assert!(parse("").is_ok());
        for (text, key) in [
            ("regularisation = -1.0", "control.regularisation"),
            ("regularisation = nan", "control.regularisation"),
            ("max_change = 0.0", "control.max_change"),
            ("max_change = -0.1", "control.max_change"),
            ("max_change = inf", "control.max_change"),
        ] {
            let err = parse(text).unwrap_err();
            assert!(
                matches!(err, Error::Invalid { ref what, .. } if what == key),
                "{text}: {err}"
            );
        }
        assert!(toml::from_str::<ControlSection>("max_chnage = 0.1").is_err());
    }
}
