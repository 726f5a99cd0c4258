//! Parameter names, their admissible ranges and the coordinates calibration optimises over.
//!
//! Names are those of docs/derivatives.md: `young_modulus:BODY`, `poisson_ratio:BODY`,
//! `actuator:NAME`, `friction:OBSTACLE`, `mass:BODY`, `rayleigh_mass:BODY`,
//! `rayleigh_stiffness:BODY`, `density:BODY`, and the command maps of logged actuators, fitted
//! to trials (`--trial`, `calibrate::trials`): `gain:NAME`, `offset:NAME`,
//! `time_constant:NAME`. Levenberg–Marquardt works on one coordinate `s`
//! per parameter, kept in a box strictly inside the parameter's range
//! ([`ParameterRange::coordinate_box`]; the optimiser clamps its steps into the box), mapped to
//! the physical value:
//!
//! ```text
//!   Young's modulus   E = exp(s)     default range E > 0            dE/ds = E
//!   Poisson's ratio   ν = s          default range 0 ≤ ν < 0.5      dν/ds = 1
//!   actuator input    a = s          default range unbounded        da/ds = 1
//!   friction          μ = s          default range μ > 0            dμ/ds = 1
//!   rigid body mass   m = exp(s)     default range m > 0            dm/ds = m
//!   Rayleigh α        α = exp(s)     default range α > 0 (1/s)      dα/ds = α
//!   Rayleigh β        β = exp(s)     default range β > 0 (s)        dβ/ds = β
//!   density           ρ = exp(s)     default range ρ > 0 (kg/m³)    dρ/ds = ρ
//!   command gain      g = s          default range g ≠ 0            dg/ds = 1
//!   command offset    o = s          default range unbounded        do/ds = 1
//!   time constant     τ = exp(s)     default range τ > 0 (s)        dτ/ds = τ
//! ```
//!
//! (A gain may be negative, a command that pulls as it falls; the value 0, which would cut the
//! actuator from its command, is no starting value, and `--bounds gain:NAME=0,` keeps a fit on
//! one side of it. τ = 0, no lag, is a valid scene value but not a starting point: give
//! `--init`.)
//!
//! (α = 0 or β = 0, no damping, is a valid scene value but not a starting point of a fit:
//! give `--init` or a scene with the coefficient positive.)
//!
//! The map clamps `s` into the box first, so no `s` (±1e300, ±∞) gives a value on or outside
//! the range. Jacobians with respect to the physical values become Jacobians with respect to
//! `s` by the chain rule (a column scaling).

use std::fmt;
use std::str::FromStr;

use super::levenberg_marquardt::LeastSquares;
use super::range::ParameterRange;
use crate::diff::Parameter;
use crate::error::{Error, Result};
use crate::math::{DMat, DVec};
use crate::scene::Scene;

/// What a parameter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ParameterKind {
    /// Young's modulus `E` of a soft body (Pa), `E = exp(s)`.
    YoungModulus,
    /// Poisson's ratio `ν` of a soft body, `ν = s`.
    PoissonRatio,
    /// An actuator's input (its force or displacement, held over the run), `a = s`.
    Actuator,
    /// An obstacle's Coulomb coefficient μ (`friction:OBSTACLE`), `μ = s`.
    Friction,
    /// A free rigid body's mass m (kg, `mass:BODY`), `m = exp(s)`: fitted from the soft
    /// bodies it presses on (a scene where they share an NCP).
    Mass,
    /// A soft body's Rayleigh mass coefficient α (1/s, `rayleigh_mass:BODY`), `α = exp(s)`.
    RayleighMass,
    /// A soft body's Rayleigh stiffness coefficient β (s, `rayleigh_stiffness:BODY`),
    /// `β = exp(s)`.
    RayleighStiffness,
    /// A soft body's density ρ (kg/m³, `density:BODY`, lumped or consistent mass),
    /// `ρ = exp(s)`.
    Density,
    /// A logged actuator's command gain (`gain:NAME`, the input's unit per command unit),
    /// `g = s`, nonzero.
    Gain,
    /// A logged actuator's command offset (`offset:NAME`, the input's unit), `o = s`.
    Offset,
    /// A logged actuator's lag time constant τ (`time_constant:NAME`, s), `τ = exp(s)`.
    TimeConstant,
}

impl ParameterKind {
    /// Every kind, in the order of their name prefixes in error messages.
    pub const ALL: [ParameterKind; 11] = [
        ParameterKind::YoungModulus,
        ParameterKind::PoissonRatio,
        ParameterKind::Actuator,
        ParameterKind::Friction,
        ParameterKind::Mass,
        ParameterKind::RayleighMass,
        ParameterKind::RayleighStiffness,
        ParameterKind::Density,
        ParameterKind::Gain,
        ParameterKind::Offset,
        ParameterKind::TimeConstant,
    ];

    /// The name prefix (`young_modulus`, `poisson_ratio`, `actuator`, `friction`, `mass`,
    /// `rayleigh_mass`, `rayleigh_stiffness`, `density`, `gain`, `offset`, `time_constant`).
    pub fn prefix(self) -> &'static str {
        match self {
            ParameterKind::YoungModulus => "young_modulus",
            ParameterKind::PoissonRatio => "poisson_ratio",
            ParameterKind::Actuator => "actuator",
            ParameterKind::Friction => "friction",
            ParameterKind::Mass => "mass",
            ParameterKind::RayleighMass => "rayleigh_mass",
            ParameterKind::RayleighStiffness => "rayleigh_stiffness",
            ParameterKind::Density => "density",
            ParameterKind::Gain => "gain",
            ParameterKind::Offset => "offset",
            ParameterKind::TimeConstant => "time_constant",
        }
    }

    /// Whether the kind is a term of a logged actuator's command map (`gain`, `offset`,
    /// `time_constant`): a parameter of runs under logged commands, fitted to trials.
    pub fn is_command_term(self) -> bool {
        matches!(
            self,
            ParameterKind::Gain | ParameterKind::Offset | ParameterKind::TimeConstant
        )
    }

    /// The symbol in messages (`E`, `ν`, `a`, `μ`, `m`, `α`, `β`, `ρ`, `g`, `o`, `τ`).
    pub fn symbol(self) -> &'static str {
        match self {
            ParameterKind::YoungModulus => "E",
            ParameterKind::PoissonRatio => "ν",
            ParameterKind::Actuator => "a",
            ParameterKind::Friction => "μ",
            ParameterKind::Mass => "m",
            ParameterKind::RayleighMass => "α",
            ParameterKind::RayleighStiffness => "β",
            ParameterKind::Density => "ρ",
            ParameterKind::Gain => "g",
            ParameterKind::Offset => "o",
            ParameterKind::TimeConstant => "τ",
        }
    }

    /// Whether the optimisation coordinate is the logarithm of the value (E, m, α, β, ρ, τ).
    fn is_logarithmic(self) -> bool {
        matches!(
            self,
            ParameterKind::YoungModulus
                | ParameterKind::Mass
                | ParameterKind::RayleighMass
                | ParameterKind::RayleighStiffness
                | ParameterKind::Density
                | ParameterKind::TimeConstant
        )
    }

    /// The open physical limits of the value: `(0, ∞)` Pa for E, `(−1, 0.5)` for ν,
    /// `(−∞, ∞)` for an actuator, a gain (which must also differ from 0,
    /// [`super::ParameterRange::contains`]) and an offset, `(0, ∞)` for μ, m (kg), α (1/s),
    /// β (s), ρ (kg/m³) and τ (s).
    pub fn physical_limits(self) -> (f64, f64) {
        match self {
            ParameterKind::YoungModulus
            | ParameterKind::Friction
            | ParameterKind::Mass
            | ParameterKind::RayleighMass
            | ParameterKind::RayleighStiffness
            | ParameterKind::Density
            | ParameterKind::TimeConstant => (0.0, f64::INFINITY),
            ParameterKind::PoissonRatio => (-1.0, 0.5),
            ParameterKind::Actuator | ParameterKind::Gain | ParameterKind::Offset => {
                (f64::NEG_INFINITY, f64::INFINITY)
            }
        }
    }

    /// The physical limits as text for messages.
    pub fn limits_text(self) -> &'static str {
        match self {
            ParameterKind::YoungModulus => "range E > 0",
            ParameterKind::PoissonRatio => "range -1 < ν < 0.5",
            ParameterKind::Actuator => "finite values",
            ParameterKind::Friction => "range μ > 0",
            ParameterKind::Mass => "range m > 0",
            ParameterKind::RayleighMass => "range α > 0",
            ParameterKind::RayleighStiffness => "range β > 0",
            ParameterKind::Density => "range ρ > 0",
            ParameterKind::Gain => "finite values other than 0",
            ParameterKind::Offset => "finite values",
            ParameterKind::TimeConstant => "range τ > 0",
        }
    }

    /// The optimisation coordinate of a value (`ln E`, `ν`, `a`, `μ`, `ln m`, `ln α`, `ln β`,
    /// `ln ρ`, `g`, `o`, `ln τ`; `ln 0 = −∞`).
    pub fn coordinate(self, value: f64) -> f64 {
        if self.is_logarithmic() {
            value.ln()
        } else {
            value
        }
    }

    /// The hard limits of the coordinate where a range is open: `|ln E|, |ln m|, |ln α|,
    /// |ln β|, |ln ρ|, |ln τ| ≤ 700` (finite and positive), `|s| ≤ 1e300` otherwise.
    pub fn coordinate_limits(self) -> (f64, f64) {
        if self.is_logarithmic() {
            (-700.0, 700.0)
        } else {
            (-1e300, 1e300)
        }
    }

    /// The physical value of the coordinate `s` (no clamping: see
    /// [`Parametrisation::physical`]).
    pub fn to_physical(self, s: f64) -> f64 {
        if self.is_logarithmic() { s.exp() } else { s }
    }

    /// `d value / d s` at `s`.
    pub fn derivative(self, s: f64) -> f64 {
        if self.is_logarithmic() { s.exp() } else { 1.0 }
    }
}

/// A parameter name `KIND:TARGET` (`young_modulus:beam`, `actuator:c3`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ParameterName {
    /// What the parameter is.
    pub kind: ParameterKind,
    /// The soft body (material, mass and damping parameters), actuator, obstacle or rigid
    /// body it belongs to.
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
    /// A command term (`gain:`, `offset:`, `time_constant:`) is no parameter of a final-state
    /// fit: an error says to fit it to trials.
    pub fn resolve(&self, scene: &Scene) -> Result<Parameter> {
        if self.kind.is_command_term() {
            return Err(Error::invalid(
                format!("parameter `{self}`"),
                "maps the logged commands of an actuator: it is fitted to trials (`calibrate --trial INPUTS.csv:MARKERS.csv`), not to an observed final state",
            ));
        }
        Parameter::parse(scene, &self.to_string())
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

/// An ordered list of distinct parameters, their admissible ranges and the map between the
/// optimisation coordinates `s` and physical values.
#[derive(Debug, Clone, PartialEq)]
pub struct Parametrisation {
    /// The parameters, in optimisation order.
    pub names: Vec<ParameterName>,
    /// The admissible range of each parameter (defaults: [`ParameterRange::default_for`]).
    pub ranges: Vec<ParameterRange>,
}

impl Parametrisation {
    /// Parses `names` (default ranges); an unknown kind, a malformed name or a repeated one is
    /// an error.
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
        let ranges = out
            .iter()
            .map(|n| ParameterRange::default_for(n.kind))
            .collect();
        Ok(Parametrisation { names: out, ranges })
    }

    /// Sets ranges from `--bounds NAME=LO,HI` entries (`NAME` one of the parameters, given
    /// once; [`ParameterRange::parse`] for `LO,HI`).
    pub fn with_bounds<S: AsRef<str>>(mut self, entries: &[S]) -> Result<Parametrisation> {
        let mut seen = vec![false; self.len()];
        for entry in entries {
            let entry = entry.as_ref();
            let what = format!("--bounds `{entry}`");
            let Some((name, range)) = entry.split_once('=') else {
                return Err(Error::invalid(
                    what,
                    "is not of the form NAME=LO,HI (either end may be empty)",
                ));
            };
            let name = ParameterName::parse(name.trim())?;
            let Some(k) = self.index_of(&name) else {
                return Err(Error::invalid(
                    what,
                    format!("`{name}` is not one of the --param parameters"),
                ));
            };
            if seen[k] {
                return Err(Error::invalid(what, format!("`{name}` is given twice")));
            }
            seen[k] = true;
            self.ranges[k] = ParameterRange::parse(name.kind, range, &what)?;
        }
        Ok(self)
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

    /// The box of the coordinates, `(lower, upper)` one entry per parameter
    /// ([`ParameterRange::coordinate_box`]).
    pub fn coordinate_box(&self) -> (Vec<f64>, Vec<f64>) {
        self.names
            .iter()
            .zip(&self.ranges)
            .map(|(n, r)| r.coordinate_box(n.kind))
            .unzip()
    }

    /// Physical values of the coordinates `s` (one per parameter), each `s` clamped into its
    /// box first: strictly inside the range for any `s`, ±∞ included (NaN stays NaN).
    pub fn physical(&self, s: &[f64]) -> Vec<f64> {
        assert_eq!(s.len(), self.len(), "one coordinate per parameter");
        let (lo, hi) = self.coordinate_box();
        self.names
            .iter()
            .zip(s)
            .enumerate()
            .map(|(k, (n, &s))| n.kind.to_physical(s.clamp(lo[k], hi[k])))
            .collect()
    }

    /// Checks that `value` is admissible for parameter `k`; the error names the parameter and
    /// its range.
    pub fn check(&self, k: usize, value: f64) -> Result<()> {
        let (name, range) = (&self.names[k], &self.ranges[k]);
        if range.contains(name.kind, value) {
            return Ok(());
        }
        Err(Error::invalid(
            name.to_string(),
            format!(
                "value {value} is out of range ({})",
                range.describe(name.kind)
            ),
        ))
    }

    /// Coordinates of physical `values`, clamped into the box (a value on a closed end of its
    /// range starts just inside it); an inadmissible value is an error naming it.
    pub fn coordinates(&self, values: &[f64]) -> Result<Vec<f64>> {
        assert_eq!(values.len(), self.len(), "one value per parameter");
        let (lo, hi) = self.coordinate_box();
        let mut out = Vec::with_capacity(values.len());
        for (k, (n, &v)) in self.names.iter().zip(values).enumerate() {
            self.check(k, v)?;
            out.push(n.kind.coordinate(v).clamp(lo[k], hi[k]));
        }
        Ok(out)
    }

    /// The parameters whose coordinate in `s` sits on its box (held by a bound): `(index,
    /// the range's end it is held by)`.
    pub fn at_bound(&self, s: &[f64]) -> Vec<(usize, f64)> {
        let (lo, hi) = self.coordinate_box();
        (0..self.len())
            .filter_map(|k| {
                if s[k] <= lo[k] {
                    Some((k, self.ranges[k].lower))
                } else if s[k] >= hi[k] {
                    Some((k, self.ranges[k].upper))
                } else {
                    None
                }
            })
            .collect()
    }

    /// Turns a Jacobian with respect to the physical values (columns in parameter order) into
    /// the Jacobian with respect to `s`, in place: column `k` is scaled by `d value_k / d s_k`.
    /// Columns after the parameters' (a fit's further coordinates, such as a trial fit's
    /// frame) are left as they are.
    pub fn chain_jacobian(&self, s: &[f64], jacobian: &mut DMat) {
        assert!(jacobian.ncols() >= self.len(), "a column per parameter");
        let (lo, hi) = self.coordinate_box();
        for (k, (n, &sk)) in self.names.iter().zip(s).enumerate() {
            let d = n.kind.derivative(sk.clamp(lo[k], hi[k]));
            jacobian.column_mut(k).scale_mut(d);
        }
    }
}

/// A least-squares problem in physical parameters seen through a [`Parametrisation`]: it
/// evaluates the inner problem at the physical values of `s` and chains its Jacobian, so every
/// evaluation is admissible whatever `s` the optimiser tries.
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
