//! A small dense convex quadratic program and the one trait its solvers implement.
//!
//! The problem is
//!
//! ```text
//!     minimise    ½ xᵀ P x + qᵀ x
//!     subject to  lo ≤ x ≤ hi            (bounds; ±∞ allowed)
//!                 l  ≤ C x ≤ u           (optional linear inequalities; l = u is an equality)
//! ```
//!
//! with `P` symmetric positive semidefinite, the shape of the inverse-control QP of paper 004
//! (Eq. 15-16: a least-squares effector objective, actuator bounds and a bounded change per
//! step). Sizes are small (tens of variables), so matrices are dense.
//!
//! Multipliers follow the OSQP sign convention: the solution satisfies
//! `P x + q + y_b + Cᵀ y_c = 0`, with `y > 0` on a row at its upper bound, `y < 0` at its lower
//! bound and `y = 0` on an inactive row.

use crate::error::{Error, Result};
use crate::math::{DMat, DVec};

/// A convex QP `min ½xᵀPx + qᵀx` s.t. `lo ≤ x ≤ hi`, `l ≤ Cx ≤ u` (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct Qp {
    /// The Hessian `P` (n×n, symmetric positive semidefinite).
    pub p: DMat,
    /// The linear cost `q` (n).
    pub q: DVec,
    /// Lower bounds on `x` (n; `-∞` for none).
    pub lower: DVec,
    /// Upper bounds on `x` (n; `+∞` for none).
    pub upper: DVec,
    /// The constraint matrix `C` (m×n; m = 0 for none).
    pub c: DMat,
    /// Lower bounds on `Cx` (m; `-∞` for none).
    pub c_lower: DVec,
    /// Upper bounds on `Cx` (m; `+∞` for none).
    pub c_upper: DVec,
}

impl Qp {
    /// The unconstrained QP `min ½xᵀPx + qᵀx` (infinite bounds, no constraint rows).
    pub fn new(p: DMat, q: DVec) -> Qp {
        let n = q.len();
        Qp {
            p,
            q,
            lower: DVec::from_element(n, f64::NEG_INFINITY),
            upper: DVec::from_element(n, f64::INFINITY),
            c: DMat::zeros(0, n),
            c_lower: DVec::zeros(0),
            c_upper: DVec::zeros(0),
        }
    }

    /// Sets the bounds `lower ≤ x ≤ upper`.
    pub fn with_bounds(mut self, lower: DVec, upper: DVec) -> Qp {
        self.lower = lower;
        self.upper = upper;
        self
    }

    /// Sets the linear inequalities `c_lower ≤ C x ≤ c_upper`.
    pub fn with_constraints(mut self, c: DMat, c_lower: DVec, c_upper: DVec) -> Qp {
        self.c = c;
        self.c_lower = c_lower;
        self.c_upper = c_upper;
        self
    }

    /// Number of variables n.
    pub fn variables(&self) -> usize {
        self.q.len()
    }

    /// Number of constraint rows m (the rows of `C`).
    pub fn constraints(&self) -> usize {
        self.c.nrows()
    }

    /// Checks the problem's shape and values: consistent dimensions, finite `P`, `q`, `C`,
    /// symmetric `P` (to 1e-12 relative), bounds that are not NaN with `lower ≤ upper` and
    /// `c_lower ≤ c_upper`. An empty feasible set that is not visible row by row (bounds and
    /// rows that contradict each other) is not an error: solvers report it as
    /// [`QpStatus::PrimalInfeasible`].
    pub fn validate(&self) -> Result<()> {
        let n = self.variables();
        let m = self.constraints();
        let shape = |what: &str, got: String, want: String| {
            Err(Error::invalid(
                format!("QP {what}"),
                format!("has shape {got}, expected {want}"),
            ))
        };
        if self.p.shape() != (n, n) {
            return shape("P", format!("{:?}", self.p.shape()), format!("({n}, {n})"));
        }
        if self.lower.len() != n || self.upper.len() != n {
            return shape(
                "bounds",
                format!("({}, {})", self.lower.len(), self.upper.len()),
                format!("({n}, {n})"),
            );
        }
        if self.c.ncols() != n {
            return shape("C", format!("{:?}", self.c.shape()), format!("(m, {n})"));
        }
        if self.c_lower.len() != m || self.c_upper.len() != m {
            return shape(
                "constraint bounds",
                format!("({}, {})", self.c_lower.len(), self.c_upper.len()),
                format!("({m}, {m})"),
            );
        }
        let finite = |what: &str, values: &[f64]| match values.iter().position(|v| !v.is_finite()) {
            Some(i) => Err(Error::invalid(
                format!("QP {what}"),
                format!("entry {i} is {} (must be finite)", values[i]),
            )),
            None => Ok(()),
        };
        finite("P", self.p.as_slice())?;
        finite("q", self.q.as_slice())?;
        finite("C", self.c.as_slice())?;
        let scale = self.p.amax().max(f64::MIN_POSITIVE);
        let asymmetry = (&self.p - self.p.transpose()).amax();
        if asymmetry > 1e-12 * scale {
            return Err(Error::invalid(
                "QP P",
                format!("is not symmetric (max |P - Pᵀ| = {asymmetry:.3e})"),
            ));
        }
        let ordered = |what: &str, lo: &DVec, hi: &DVec| {
            for i in 0..lo.len() {
                if !(lo[i] <= hi[i]) {
                    return Err(Error::invalid(
                        format!("QP {what} {i}"),
                        format!(
                            "lower bound {} is not below upper bound {} (or is NaN)",
                            lo[i], hi[i]
                        ),
                    ));
                }
            }
            Ok(())
        };
        ordered("bound", &self.lower, &self.upper)?;
        ordered("constraint", &self.c_lower, &self.c_upper)
    }

    /// The objective `½xᵀPx + qᵀx` at `x`.
    pub fn objective(&self, x: &DVec) -> f64 {
        0.5 * x.dot(&(&self.p * x)) + self.q.dot(x)
    }

    /// The KKT residuals of `(x, y_bounds, y_constraints)` in the sign convention of the module
    /// doc. A point solves the QP exactly when all four are zero.
    pub fn kkt_residual(&self, x: &DVec, y_bounds: &DVec, y_constraints: &DVec) -> KktResidual {
        let gradient = &self.p * x + &self.q + y_bounds + self.c.transpose() * y_constraints;
        let cx = &self.c * x;
        let mut primal: f64 = 0.0;
        let mut dual: f64 = 0.0;
        let mut complementarity: f64 = 0.0;
        let mut row = |value: f64, lo: f64, hi: f64, y: f64| {
            primal = primal.max(lo - value).max(value - hi);
            // y⁺ pairs with the upper bound, y⁻ with the lower one; an infinite bound takes no
            // multiplier.
            let (up, down) = (y.max(0.0), (-y).max(0.0));
            if hi.is_finite() {
                complementarity = complementarity.max(up * (hi - value).abs());
            } else {
                dual = dual.max(up);
            }
            if lo.is_finite() {
                complementarity = complementarity.max(down * (value - lo).abs());
            } else {
                dual = dual.max(down);
            }
        };
        for i in 0..x.len() {
            row(x[i], self.lower[i], self.upper[i], y_bounds[i]);
        }
        for i in 0..cx.len() {
            row(cx[i], self.c_lower[i], self.c_upper[i], y_constraints[i]);
        }
        KktResidual {
            stationarity: gradient.amax(),
            primal,
            dual,
            complementarity,
        }
    }
}

/// How far a point is from satisfying the KKT conditions of a [`Qp`] (∞-norms).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KktResidual {
    /// `‖P x + q + y_b + Cᵀ y_c‖∞`.
    pub stationarity: f64,
    /// The largest bound or constraint violation.
    pub primal: f64,
    /// The largest multiplier on an infinite bound (a multiplier with no bound to push on).
    pub dual: f64,
    /// The largest product of a multiplier and its bound's slack.
    pub complementarity: f64,
}

impl KktResidual {
    /// The largest of the four residuals.
    pub fn max(&self) -> f64 {
        self.stationarity
            .max(self.primal)
            .max(self.dual)
            .max(self.complementarity)
    }
}

/// The numerical outcome of a QP solve (a status, never an error: docs/design.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QpStatus {
    /// Solved to the requested tolerance.
    Solved,
    /// The backend stopped with a solution of reduced accuracy.
    SolvedInaccurate,
    /// The iteration (or time) limit was reached; `x` is the last iterate.
    MaxIterations,
    /// The constraints admit no point; `x` and the multipliers are NaN.
    PrimalInfeasible,
    /// The objective is unbounded below on the feasible set; `x` and the multipliers are NaN.
    DualInfeasible,
    /// The backend failed numerically; `x` is its last iterate.
    NumericalError,
}

impl QpStatus {
    /// True for [`QpStatus::Solved`].
    pub fn is_solved(self) -> bool {
        self == QpStatus::Solved
    }
}

/// A QP solver's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct QpSolution {
    /// The outcome.
    pub status: QpStatus,
    /// The minimiser (meaningful when `status` is solved).
    pub x: DVec,
    /// Bound multipliers `y_b` (n), sign convention of the module doc.
    pub bound_multipliers: DVec,
    /// Constraint multipliers `y_c` (m), sign convention of the module doc.
    pub constraint_multipliers: DVec,
    /// The objective `½xᵀPx + qᵀx` at `x`.
    pub objective: f64,
    /// Iterations of the backend's algorithm (interior-point or ADMM iterations).
    pub iterations: usize,
}

impl QpSolution {
    /// The answer for a problem without any feasible point or with an unbounded objective:
    /// every number is NaN.
    pub(crate) fn failed(status: QpStatus, qp: &Qp, iterations: usize) -> QpSolution {
        QpSolution {
            status,
            x: DVec::from_element(qp.variables(), f64::NAN),
            bound_multipliers: DVec::from_element(qp.variables(), f64::NAN),
            constraint_multipliers: DVec::from_element(qp.constraints(), f64::NAN),
            objective: f64::NAN,
            iterations,
        }
    }
}

/// Settings every backend understands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QpSettings {
    /// Absolute and relative tolerance on the primal and dual residuals and the duality gap.
    pub tolerance: f64,
    /// Iteration limit of the backend's algorithm (interior-point iterations for clarabel,
    /// ADMM iterations for OSQP).
    pub max_iterations: usize,
}

impl Default for QpSettings {
    /// `tolerance = 1e-9`, `max_iterations = 10 000`.
    fn default() -> Self {
        QpSettings {
            tolerance: 1e-9,
            max_iterations: 10_000,
        }
    }
}

/// A QP solver backend. `solve` validates the problem ([`Qp::validate`]) and returns an error
/// only for bad input; every numerical outcome (infeasible, iteration limit) is a
/// [`QpStatus`]. A backend may keep state between calls to warm-start the next solve.
pub trait QpSolver {
    /// Solves `qp`.
    fn solve(&mut self, qp: &Qp) -> Result<QpSolution>;

    /// The backend's name (`clarabel`, `osqp`).
    fn name(&self) -> &'static str;
}

/// The default backend (clarabel, pure Rust) with `settings`.
pub fn default_qp_solver(settings: QpSettings) -> Box<dyn QpSolver> {
    Box::new(super::ClarabelSolver::new(settings))
}
