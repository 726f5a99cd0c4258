//! The clarabel backend of [`QpSolver`] (pure Rust interior point; the default).
//!
//! Clarabel solves `min ½xᵀPx + qᵀx` s.t. `A x + s = b`, `s ∈ K` with `K` a product of a zero
//! cone (equalities) and a nonnegative cone (inequalities). Each finite bound of the [`Qp`]
//! becomes one row: `x_i ≤ hi` is `( e_i, hi)`, `x_i ≥ lo` is `(-e_i, -lo)`, and a row whose
//! two bounds are equal goes into the zero cone; infinite bounds give no row. Clarabel's
//! multipliers `z ≥ 0` satisfy `P x + q + Aᵀ z = 0`, so the QP's multiplier of a row is
//! `z_upper − z_lower` (or `z` of its equality row). An interior-point method cannot use a
//! warm start: every solve starts afresh.

use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettings, DefaultSolver, IPSolver, NonnegativeConeT, SolverStatus, SupportedConeT,
    ZeroConeT,
};

use super::qp::{Qp, QpSettings, QpSolution, QpSolver, QpStatus};
use crate::error::{Error, Result};
use crate::math::DVec;

/// Where one bounded quantity (a variable or a row of `C`) went in clarabel's rows.
#[derive(Debug, Clone, Copy, Default)]
struct Rows {
    upper: Option<usize>,
    lower: Option<usize>,
    equal: Option<usize>,
}

/// The clarabel backend.
#[derive(Debug, Clone)]
pub struct ClarabelSolver {
    settings: QpSettings,
}

impl ClarabelSolver {
    /// A solver with `settings` (tolerance on gaps and feasibility, interior-point iteration
    /// limit).
    pub fn new(settings: QpSettings) -> ClarabelSolver {
        ClarabelSolver { settings }
    }
}

impl QpSolver for ClarabelSolver {
    fn solve(&mut self, qp: &Qp) -> Result<QpSolution> {
        qp.validate()?;
        let n = qp.variables();
        let m = qp.constraints();

        // Rows: (coefficients as (column, value) pairs, right-hand side, is equality).
        let mut equalities: Vec<(Vec<(usize, f64)>, f64)> = Vec::new();
        let mut inequalities: Vec<(Vec<(usize, f64)>, f64)> = Vec::new();
        let mut places = vec![Rows::default(); n + m];
        let mut add = |place: &mut Rows, row: Vec<(usize, f64)>, lo: f64, hi: f64| {
            if lo == hi {
                place.equal = Some(equalities.len());
                equalities.push((row, hi));
                return;
            }
            if hi.is_finite() {
                place.upper = Some(inequalities.len());
                inequalities.push((row.clone(), hi));
            }
            if lo.is_finite() {
                place.lower = Some(inequalities.len());
                inequalities.push((row.into_iter().map(|(j, v)| (j, -v)).collect(), -lo));
            }
        };
        for (i, place) in places[..n].iter_mut().enumerate() {
            add(place, vec![(i, 1.0)], qp.lower[i], qp.upper[i]);
        }
        for r in 0..m {
            let row = (0..n).map(|j| (j, qp.c[(r, j)])).collect();
            add(&mut places[n + r], row, qp.c_lower[r], qp.c_upper[r]);
        }
        let equal_count = equalities.len();
        let rows: Vec<_> = equalities.into_iter().chain(inequalities).collect();
        let total = rows.len();

        // A in CSC (columns of the row list), b, cones.
        let mut columns: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
        for (r, (coefficients, _)) in rows.iter().enumerate() {
            for &(j, v) in coefficients {
                columns[j].push((r, v));
            }
        }
        let a = csc(total, n, &columns);
        let b: Vec<f64> = rows.iter().map(|(_, rhs)| *rhs).collect();
        let mut cones: Vec<SupportedConeT<f64>> = Vec::new();
        if equal_count > 0 {
            cones.push(ZeroConeT(equal_count));
        }
        if total > equal_count {
            cones.push(NonnegativeConeT(total - equal_count));
        }
        // P: upper triangle, dense pattern.
        let upper: Vec<Vec<(usize, f64)>> = (0..n)
            .map(|j| (0..=j).map(|i| (i, qp.p[(i, j)])).collect())
            .collect();
        let p = csc(n, n, &upper);

        let settings = DefaultSettings::<f64> {
            verbose: false,
            max_iter: u32::try_from(self.settings.max_iterations).unwrap_or(u32::MAX),
            tol_gap_abs: self.settings.tolerance,
            tol_gap_rel: self.settings.tolerance,
            tol_feas: self.settings.tolerance,
            ..DefaultSettings::default()
        };
        let mut solver = DefaultSolver::new(&p, qp.q.as_slice(), &a, &b, &cones, settings)
            .map_err(|e| Error::invalid("QP (clarabel setup)", e.to_string()))?;
        solver.solve();
        let solution = &solver.solution;
        let iterations = solution.iterations as usize;
        let status = match solution.status {
            SolverStatus::Solved => QpStatus::Solved,
            SolverStatus::AlmostSolved => QpStatus::SolvedInaccurate,
            SolverStatus::MaxIterations | SolverStatus::MaxTime => QpStatus::MaxIterations,
            SolverStatus::PrimalInfeasible | SolverStatus::AlmostPrimalInfeasible => {
                return Ok(QpSolution::failed(
                    QpStatus::PrimalInfeasible,
                    qp,
                    iterations,
                ));
            }
            SolverStatus::DualInfeasible | SolverStatus::AlmostDualInfeasible => {
                return Ok(QpSolution::failed(QpStatus::DualInfeasible, qp, iterations));
            }
            _ => QpStatus::NumericalError,
        };
        let x = DVec::from_column_slice(&solution.x);
        let z = &solution.z;
        let multiplier = |place: &Rows| {
            if let Some(r) = place.equal {
                return z[r];
            }
            place.upper.map_or(0.0, |r| z[r]) - place.lower.map_or(0.0, |r| z[r])
        };
        let bound_multipliers = DVec::from_iterator(n, places[..n].iter().map(multiplier));
        let constraint_multipliers = DVec::from_iterator(m, places[n..].iter().map(multiplier));
        Ok(QpSolution {
            status,
            objective: qp.objective(&x),
            x,
            bound_multipliers,
            constraint_multipliers,
            iterations,
        })
    }

    fn name(&self) -> &'static str {
        "clarabel"
    }
}

/// A `rows × cols` CSC matrix from per-column `(row, value)` lists (rows ascending).
fn csc(rows: usize, cols: usize, columns: &[Vec<(usize, f64)>]) -> CscMatrix<f64> {
    let mut colptr = Vec::with_capacity(cols + 1);
    let mut rowval = Vec::new();
    let mut nzval = Vec::new();
    colptr.push(0);
    for column in columns {
        for &(r, v) in column {
            rowval.push(r);
            nzval.push(v);
        }
        colptr.push(rowval.len());
    }
    CscMatrix::new(rows, cols, colptr, rowval, nzval)
}
