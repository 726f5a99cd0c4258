//! Parameter names and the unconstrained reparametrisation calibration optimises over.
//!
//! Names are those of DESIGN.md §4: `young_modulus:BODY`, `poisson_ratio:BODY`,
//! `actuator:NAME`. Levenberg–Marquardt works on an unconstrained `s ∈ ℝ` per parameter, mapped
//! to the physical value so that every iterate is admissible:
//!
//! ```text
//!   Young's modulus   E = exp(s)                     E > 0            dE/ds = E
//!   Poisson's ratio   ν = −1 + 1.5 · σ(s)            −1 < ν < 0.5     dν/ds = 1.5 σ(s)(1 − σ(s))
//!   actuator input    a = s                          (unbounded)      da/ds = 1
//! ```
//!
//! with the logistic `σ(s) = 1 / (1 + e^{−s})`. Jacobians with respect to the physical values
//! become Jacobians with respect to `s` by the chain rule (a column scaling).

use std::fmt;
use std::str::FromStr;

use super::levenberg_marquardt::LeastSquares;
use crate::diff::Parameter;
use crate::error::{Error, Result};
use crate::math::{DMat, DVec};
use crate::scene::Scene;

/// What a parameter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ParameterKind {
    /// Young's modulus `E` of a soft body (Pa), `E = exp(s)`.
    YoungModulus,
    /// Poisson's ratio `ν` of a soft body, `ν = −1 + 1.5 σ(s)`.
    PoissonRatio,
    /// An actuator's input (its force or displacement, held over the run), `a = s`.
    Actuator,
}

impl ParameterKind {
    /// Every kind, in the order of their name prefixes in error messages.
    pub const ALL: [ParameterKind; 3] = [
        ParameterKind::YoungModulus,
        ParameterKind::PoissonRatio,
        ParameterKind::Actuator,
    ];

    /// The name prefix (`young_modulus`, `poisson_ratio`, `actuator`).
    pub fn prefix(self) -> &'static str {
        match self {
            ParameterKind::YoungModulus => "young_modulus",
            ParameterKind::PoissonRatio => "poisson_ratio",
            ParameterKind::Actuator => "actuator",
        }
    }

    /// The physical value of the unconstrained `s`.
    pub fn to_physical(self, s: f64) -> f64 {
        match self {
            ParameterKind::YoungModulus => s.exp(),
            ParameterKind::PoissonRatio => -1.0 + 1.5 * logistic(s),
            ParameterKind::Actuator => s,
        }
    }

    /// `d value / d s` at `s`.
    pub fn derivative(self, s: f64) -> f64 {
        match self {
            ParameterKind::YoungModulus => s.exp(),
            ParameterKind::PoissonRatio => {
                let sigma = logistic(s);
                1.5 * sigma * (1.0 - sigma)
            }
            ParameterKind::Actuator => 1.0,
        }
    }

    /// The open interval of admissible values, as text for error messages.
    pub fn range(self) -> &'static str {
        match self {
            ParameterKind::YoungModulus => "E > 0",
            ParameterKind::PoissonRatio => "-1 < ν < 0.5",
            ParameterKind::Actuator => "any finite value",
        }
    }

    /// The unconstrained `s` of a physical value, or `None` outside the admissible range
    /// (or NaN).
    pub fn to_unconstrained(self, value: f64) -> Option<f64> {
        if !value.is_finite() {
            return None;
        }
        match self {
            ParameterKind::YoungModulus => (value > 0.0).then(|| value.ln()),
            ParameterKind::PoissonRatio => {
                let p = (value + 1.0) / 1.5; // σ(s) ∈ (0, 1)
                (value > -1.0 && value < 0.5).then(|| (p / (1.0 - p)).ln())
            }
            ParameterKind::Actuator => Some(value),
        }
    }
}

/// The logistic function `1 / (1 + e^{−s})`, without overflow for large `|s|`.
fn logistic(s: f64) -> f64 {
    if s >= 0.0 {
        1.0 / (1.0 + (-s).exp())
    } else {
        let e = s.exp();
        e / (1.0 + e)
    }
}

/// A parameter name `KIND:TARGET` (`young_modulus:beam`, `actuator:c3`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ParameterName {
    /// What the parameter is.
    pub kind: ParameterKind,
    /// The soft body (material parameters) or actuator it belongs to.
    pub target: String,
}

impl ParameterName {
    /// Parses `KIND:TARGET`. Errors name the text and list the known kinds.
    pub fn parse(text: &str) -> Result<ParameterName> {
        let known = || {
            ParameterKind::ALL
                .iter()
                .map(|k| format!("{}:NAME", k.prefix()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some((prefix, target)) = text.split_once(':') else {
            return Err(Error::invalid(
                format!("parameter `{text}`"),
                format!("is not of the form KIND:NAME (known: {})", known()),
            ));
        };
        let Some(kind) = ParameterKind::ALL
            .into_iter()
            .find(|k| k.prefix() == prefix)
        else {
            return Err(Error::invalid(
                format!("parameter `{text}`"),
                format!("unknown kind `{prefix}` (known: {})", known()),
            ));
        };
        if target.is_empty() || target.trim() != target {
            return Err(Error::invalid(
                format!("parameter `{text}`"),
                "the name after `:` is empty or has surrounding spaces",
            ));
        }
        Ok(ParameterName {
            kind,
            target: target.to_string(),
        })
    }

    /// The scene parameter this name denotes ([`Parameter::parse`]): an error names the
    /// parameter and lists the scene's soft bodies or actuators when the target is not there.
    pub fn resolve(&self, scene: &Scene) -> Result<Parameter> {
        Parameter::parse(scene, &self.to_string())
    }

    /// The unconstrained `s` of `value`; an error naming the parameter and its range when
    /// `value` is not admissible.
    pub fn unconstrained(&self, value: f64) -> Result<f64> {
        self.kind.to_unconstrained(value).ok_or_else(|| {
            Error::invalid(
                self.to_string(),
                format!("value {value} is out of range ({})", self.kind.range()),
            )
        })
    }
}

impl fmt::Display for ParameterName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind.prefix(), self.target)
    }
}

impl FromStr for ParameterName {
    type Err = Error;
    fn from_str(s: &str) -> Result<ParameterName> {
        ParameterName::parse(s)
    }
}

/// An ordered list of distinct parameters and their map between unconstrained `s` and
/// physical values.
#[derive(Debug, Clone, PartialEq)]
pub struct Parametrisation {
    /// The parameters, in optimisation order.
    pub names: Vec<ParameterName>,
}

impl Parametrisation {
    /// Parses `names`; an unknown kind, a malformed name or a repeated one is an error.
    pub fn parse<S: AsRef<str>>(names: &[S]) -> Result<Parametrisation> {
        if names.is_empty() {
            return Err(Error::invalid("parameters", "at least one is needed"));
        }
        let mut out: Vec<ParameterName> = Vec::with_capacity(names.len());
        for text in names {
            let name = ParameterName::parse(text.as_ref())?;
            if out.contains(&name) {
                return Err(Error::invalid(
                    format!("parameter `{name}`"),
                    "is given more than once",
                ));
            }
            out.push(name);
        }
        Ok(Parametrisation { names: out })
    }

    /// Number of parameters.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when there are no parameters.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The position of `name` in the list.
    pub fn index_of(&self, name: &ParameterName) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Physical values of the unconstrained `s` (one per parameter).
    pub fn physical(&self, s: &[f64]) -> Vec<f64> {
        assert_eq!(s.len(), self.len(), "one unconstrained value per parameter");
        self.names
            .iter()
            .zip(s)
            .map(|(n, &s)| n.kind.to_physical(s))
            .collect()
    }

    /// Unconstrained `s` of physical `values`; an out-of-range value is an error naming it.
    pub fn unconstrained(&self, values: &[f64]) -> Result<Vec<f64>> {
        assert_eq!(values.len(), self.len(), "one value per parameter");
        self.names
            .iter()
            .zip(values)
            .map(|(n, &v)| n.unconstrained(v))
            .collect()
    }

    /// Turns a Jacobian with respect to the physical values (columns in parameter order) into
    /// the Jacobian with respect to `s`, in place: column `k` is scaled by `d value_k / d s_k`.
    pub fn chain_jacobian(&self, s: &[f64], jacobian: &mut DMat) {
        assert_eq!(jacobian.ncols(), self.len(), "one column per parameter");
        for (k, (n, &sk)) in self.names.iter().zip(s).enumerate() {
            let d = n.kind.derivative(sk);
            jacobian.column_mut(k).scale_mut(d);
        }
    }
}

/// A least-squares problem in physical parameters seen through a [`Parametrisation`]: it
/// evaluates the inner problem at the physical values of `s` and chains its Jacobian, so the
/// optimiser runs unconstrained while every evaluation is admissible.
pub struct Reparametrised<'a, P> {
    /// The problem in physical values.
    pub problem: &'a mut P,
    /// The map between `s` and physical values.
    pub map: &'a Parametrisation,
}

impl<P: LeastSquares> LeastSquares for Reparametrised<'_, P> {
    fn evaluate(&mut self, s: &[f64]) -> Result<(DVec, DMat)> {
        let values = self.map.physical(s);
        let (r, mut j) = self.problem.evaluate(&values)?;
        if j.ncols() == self.map.len() {
            self.map.chain_jacobian(s, &mut j);
        }
        Ok((r, j))
    }
}
