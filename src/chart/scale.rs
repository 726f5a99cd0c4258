//! Choosing a chart's y scale: linear, logarithmic, or automatically from the values.

use super::line_chart::YScale;

/// A y scale as the user asks for it (`--error-scale`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScaleChoice {
    /// Logarithmic when the values span more than [`AUTO_LOG_DECADES`] decades, else linear.
    #[default]
    Auto,
    /// Always linear.
    Linear,
    /// Always logarithmic (values ≤ 0 are left out of the drawn line, kept in the CSV).
    Log,
}

/// Decades (factors of 10) the positive values must span for [`ScaleChoice::Auto`] to pick a
/// log axis: 2, i.e. the largest more than 100 times the smallest.
pub const AUTO_LOG_DECADES: f64 = 2.0;

impl ScaleChoice {
    /// The scale for a chart of `values`: the choice itself, or for `Auto` a log scale when
    /// the finite positive values span more than [`AUTO_LOG_DECADES`] decades (zeros,
    /// negatives and non-finite values are not counted), a linear one otherwise.
    pub fn resolve(self, values: impl IntoIterator<Item = f64>) -> YScale {
        match self {
            ScaleChoice::Linear => YScale::Linear,
            ScaleChoice::Log => YScale::Log,
            ScaleChoice::Auto => {
                let (lo, hi) = values
                    .into_iter()
                    .filter(|v| v.is_finite() && *v > 0.0)
                    .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
                        (lo.min(v), hi.max(v))
                    });
                if hi > 0.0 && (hi / lo).log10() > AUTO_LOG_DECADES {
                    YScale::Log
                } else {
                    YScale::Linear
                }
            }
        }
    }
}

impl std::str::FromStr for ScaleChoice {
    type Err = String;

    /// `auto`, `linear` or `log`.
    fn from_str(text: &str) -> Result<ScaleChoice, String> {
        match text {
            "auto" => Ok(ScaleChoice::Auto),
            "linear" => Ok(ScaleChoice::Linear),
            "log" => Ok(ScaleChoice::Log),
            other => Err(format!("`{other}` is not a scale: use auto, linear or log")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_is_log_beyond_two_decades_of_positive_values() {
        let auto = ScaleChoice::Auto;
        assert_eq!(auto.resolve([1e-2, 1e-4]), YScale::Linear); // exactly 2 decades
        assert_eq!(auto.resolve([1e-2, 9.9e-5]), YScale::Log);
        assert_eq!(
            auto.resolve([0.0, -1.0, 1.0, 50.0, f64::NAN]),
            YScale::Linear
        );
        assert_eq!(auto.resolve([0.0, 1e-9, 1.0]), YScale::Log);
        assert_eq!(auto.resolve([]), YScale::Linear);
        assert_eq!(ScaleChoice::Log.resolve([1.0, 2.0]), YScale::Log);
        assert_eq!(ScaleChoice::Linear.resolve([1e-9, 1.0]), YScale::Linear);
        assert_eq!("log".parse::<ScaleChoice>(), Ok(ScaleChoice::Log));
        assert!(
            "lg".parse::<ScaleChoice>()
                .unwrap_err()
                .contains("auto, linear or log")
        );
    }
}
