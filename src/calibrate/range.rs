//! The admissible range of a calibrated parameter (its kind's default or a user's `--bounds
//! NAME=LO,HI`) and the box its optimisation coordinate stays in, strictly inside the range.
//!
//! A range `lower ≤ value ≤ upper` lies within the kind's physical limits (`E > 0`,
//! `−1 < ν < 0.5`, an actuator's input unbounded). The optimisation coordinate `s` is `ln E`
//! for Young's modulus, `ln m` for a rigid body's mass, and the value itself otherwise ([`super::ParameterKind::coordinate`]);
//! the box of `s` is the range's image pulled inward at each finite end by a margin of
//! [`RELATIVE_MARGIN`] times the box's width (both ends finite) or times `max(1, |end|)` (one
//! end), and held within hard limits where the range is open (`|ln E| ≤ 700`, `|a| ≤ 1e300`)
//! so that every iterate is finite and strictly inside the range.

use super::parametrisation::ParameterKind;
use crate::error::{Error, Result};

/// The margin by which iterates stay inside a finite end of a range, relative to the width of
/// the coordinate box (or to `max(1, |end|)` for a half-open range): 5e-7 of ν's default
/// width 0.5, a relative 1e-6 for a bound on E.
pub const RELATIVE_MARGIN: f64 = 1e-6;

/// A parameter's admissible physical values `lower ≤ value ≤ upper` (the parameter's units:
/// Pa for E, none for ν, the actuator's units), an end that equals the kind's physical limit
/// (E = 0, ν = −1, ν = 0.5) or is infinite being open. Iterates never reach either end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParameterRange {
    /// Smallest admissible value (`-∞`: none).
    pub lower: f64,
    /// Largest admissible value (`+∞`: none).
    pub upper: f64,
}

impl ParameterRange {
    /// The default range of `kind`: its physical limits ([`ParameterKind::physical_limits`]:
    /// `E > 0`, any actuator input, `μ > 0`, `m > 0`, `α > 0`, `β > 0`, `ρ > 0`, any gain but
    /// 0, any offset, `τ > 0`), but `0 ≤ ν < 0.5` for Poisson's ratio.
    pub fn default_for(kind: ParameterKind) -> ParameterRange {
        let (lower, upper) = match kind {
            ParameterKind::PoissonRatio => (0.0, 0.5),
            _ => kind.physical_limits(),
        };
        ParameterRange { lower, upper }
    }

    /// Parses the `LO,HI` of `--bounds NAME=LO,HI` for a parameter of `kind` (`what` names the
    /// argument in errors): either end may be empty for the kind's default end; both must be
    /// numbers within the kind's physical limits with `LO < HI`.
    pub fn parse(kind: ParameterKind, text: &str, what: &str) -> Result<ParameterRange> {
        let Some((lo, hi)) = text.split_once(',') else {
            return Err(Error::invalid(
                what,
                "is not of the form NAME=LO,HI (either end may be empty)",
            ));
        };
        let default = ParameterRange::default_for(kind);
        let end = |t: &str, fallback: f64| -> Result<f64> {
            let t = t.trim();
            if t.is_empty() {
                return Ok(fallback);
            }
            t.parse::<f64>()
                .ok()
                .filter(|v| !v.is_nan())
                .ok_or_else(|| Error::invalid(what, format!("`{t}` is not a number")))
        };
        let (lower_limit, upper_limit) = kind.physical_limits();
        let range = ParameterRange {
            lower: end(lo, default.lower.max(lower_limit))?,
            upper: end(hi, default.upper.min(upper_limit))?,
        };
        if range.lower < lower_limit || range.upper > upper_limit {
            return Err(Error::invalid(
                what,
                format!(
                    "[{}, {}] leaves the admissible {}",
                    range.lower,
                    range.upper,
                    kind.limits_text()
                ),
            ));
        }
        if !(range.lower < range.upper) {
            return Err(Error::invalid(
                what,
                format!(
                    "the lower end {} must be below the upper end {}",
                    range.lower, range.upper
                ),
            ));
        }
        let (lo, hi) = range.coordinate_box(kind);
        if !(lo < hi) {
            return Err(Error::invalid(
                what,
                format!(
                    "[{}, {}] leaves no room inside the representable values",
                    range.lower, range.upper
                ),
            ));
        }
        Ok(range)
    }

    /// Whether `value` is admissible: finite, strictly inside the kind's physical limits and
    /// within `[lower, upper]`; a gain also differs from 0.
    pub fn contains(&self, kind: ParameterKind, value: f64) -> bool {
        let (lo, hi) = kind.physical_limits();
        let cut = kind == ParameterKind::Gain && value == 0.0;
        value.is_finite()
            && value > lo
            && value < hi
            && value >= self.lower
            && value <= self.upper
            && !cut
    }

    /// The range as text for messages: `0 ≤ ν < 0.5`, `0 < E`, `any finite value`, `any
    /// finite value other than 0` (a gain).
    pub fn describe(&self, kind: ParameterKind) -> String {
        let (lo_limit, hi_limit) = kind.physical_limits();
        let lower = if self.lower == f64::NEG_INFINITY {
            String::new()
        } else if self.lower == lo_limit {
            format!("{} < ", self.lower)
        } else {
            format!("{} ≤ ", self.lower)
        };
        let upper = if self.upper == f64::INFINITY {
            String::new()
        } else if self.upper == hi_limit {
            format!(" < {}", self.upper)
        } else {
            format!(" ≤ {}", self.upper)
        };
        let but_zero = kind == ParameterKind::Gain && self.lower < 0.0 && self.upper > 0.0;
        match (lower.is_empty() && upper.is_empty(), but_zero) {
            (true, false) => "any finite value".to_string(),
            (true, true) => "any finite value other than 0".to_string(),
            (false, false) => format!("{lower}{}{upper}", kind.symbol()),
            (false, true) => format!("{lower}{}{upper}, g ≠ 0", kind.symbol()),
        }
    }

    /// The box `[lo, hi]` of the optimisation coordinate `s` (module doc): strictly inside
    /// the image of the range, finite.
    pub fn coordinate_box(&self, kind: ParameterKind) -> (f64, f64) {
        let (hard_lo, hard_hi) = kind.coordinate_limits();
        let lo = kind.coordinate(self.lower);
        let hi = kind.coordinate(self.upper);
        let (lo_finite, hi_finite) = (lo.is_finite(), hi.is_finite());
        let margin = |end: f64| match (lo_finite, hi_finite) {
            (true, true) => RELATIVE_MARGIN * (hi - lo),
            _ => RELATIVE_MARGIN * end.abs().max(1.0),
        };
        let lo = if lo_finite {
            (lo + margin(lo)).max(hard_lo)
        } else {
            hard_lo
        };
        let hi = if hi_finite {
            (hi - margin(hi)).min(hard_hi)
        } else {
            hard_hi
        };
        (lo, hi)
    }

    /// Whether both ends are finite in the optimisation coordinate (a grid of restarts can
    /// span the range).
    pub fn is_finite(&self, kind: ParameterKind) -> bool {
        kind.coordinate(self.lower).is_finite() && kind.coordinate(self.upper).is_finite()
    }
}
