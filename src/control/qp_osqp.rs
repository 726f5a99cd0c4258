//! The OSQP 0.6 backend of [`QpSolver`] (ADMM, C library; cargo feature `osqp`).
//!
//! OSQP solves `min ½xᵀPx + qᵀx` s.t. `l ≤ A x ≤ u`; the [`Qp`] maps to `A = [I; C]`,
//! `l = [lo; c_lower]`, `u = [hi; c_upper]` (infinities clamped to OSQP's ±1e30), and OSQP's
//! multipliers `y` already follow the module convention (`y = [y_b; y_c]`).
//!
//! Warm start: the solver keeps its OSQP workspace. When the next problem has the same sizes,
//! its data is updated in place (the matrices are stored with a dense pattern, so the
//! sparsity never changes) and ADMM starts from the previous primal and dual iterate, which is
//! what makes the per-step re-solves of inverse control cheap. [`OsqpSolver::reset`] drops it.
//!
//! The ρ adaptation runs every [`OsqpSolver::ADAPTIVE_RHO_INTERVAL`] iterations (OSQP's default
//! ties it to the measured setup time), so iteration counts are reproducible; the ADMM
//! solution is polished (an active-set solve) to reach the requested tolerance.

use osqp::{CscMatrix, Problem, Settings, Status};

use super::qp::{Qp, QpSettings, QpSolution, QpSolver, QpStatus};
use crate::error::{Error, Result};
use crate::math::DVec;

/// OSQP's infinity.
const OSQP_INFINITY: f64 = 1e30;

/// The OSQP backend, with its warm-start workspace.
pub struct OsqpSolver {
    settings: QpSettings,
    /// The workspace of the previous solve and its sizes `(n, m)`.
    cached: Option<(Problem, usize, usize)>,
}

impl OsqpSolver {
    /// Iterations between two ρ adaptations (fixed for reproducible iteration counts).
    pub const ADAPTIVE_RHO_INTERVAL: u32 = 25;

    /// A solver with `settings` (absolute and relative tolerance, ADMM iteration limit).
    pub fn new(settings: QpSettings) -> OsqpSolver {
        OsqpSolver {
            settings,
            cached: None,
        }
    }

    /// Forgets the previous solve: the next one starts cold.
    pub fn reset(&mut self) {
        self.cached = None;
    }

    fn osqp_settings(&self) -> Settings {
        Settings::default()
            .verbose(false)
            .eps_abs(self.settings.tolerance)
            .eps_rel(self.settings.tolerance)
            .max_iter(u32::try_from(self.settings.max_iterations).unwrap_or(u32::MAX))
            .adaptive_rho_interval(Some(Self::ADAPTIVE_RHO_INTERVAL))
            .polish(true)
            .polish_refine_iter(10)
            .warm_start(true)
    }
}

impl QpSolver for OsqpSolver {
    fn solve(&mut self, qp: &Qp) -> Result<QpSolution> {
        qp.validate()?;
        let n = qp.variables();
        let m = qp.constraints();
        // P: upper triangle, dense pattern (column-major).
        let mut p_ptr = Vec::with_capacity(n + 1);
        let mut p_idx = Vec::with_capacity(n * (n + 1) / 2);
        let mut p_val = Vec::with_capacity(n * (n + 1) / 2);
        p_ptr.push(0);
        for j in 0..n {
            for i in 0..=j {
                p_idx.push(i);
                p_val.push(qp.p[(i, j)]);
            }
            p_ptr.push(p_idx.len());
        }
        // A = [I; C]: per column j, the identity entry then the m entries of C's column.
        let mut a_ptr = Vec::with_capacity(n + 1);
        let mut a_idx = Vec::with_capacity(n * (m + 1));
        let mut a_val = Vec::with_capacity(n * (m + 1));
        a_ptr.push(0);
        for j in 0..n {
            a_idx.push(j);
            a_val.push(1.0);
            for r in 0..m {
                a_idx.push(n + r);
                a_val.push(qp.c[(r, j)]);
            }
            a_ptr.push(a_idx.len());
        }
        let clamp = |v: f64| v.clamp(-OSQP_INFINITY, OSQP_INFINITY);
        let l: Vec<f64> = qp
            .lower
            .iter()
            .chain(qp.c_lower.iter())
            .map(|&v| clamp(v))
            .collect();
        let u: Vec<f64> = qp
            .upper
            .iter()
            .chain(qp.c_upper.iter())
            .map(|&v| clamp(v))
            .collect();
        let p = CscMatrix {
            nrows: n,
            ncols: n,
            indptr: p_ptr.into(),
            indices: p_idx.into(),
            data: p_val.into(),
        };
        let a = CscMatrix {
            nrows: n + m,
            ncols: n,
            indptr: a_ptr.into(),
            indices: a_idx.into(),
            data: a_val.into(),
        };

        match &mut self.cached {
            Some((problem, cn, cm)) if *cn == n && *cm == m => {
                problem.update_P_A(p, a);
                problem.update_lin_cost(qp.q.as_slice());
                problem.update_bounds(&l, &u);
            }
            _ => {
                self.cached = None;
                let problem = Problem::new(p, qp.q.as_slice(), a, &l, &u, &self.osqp_settings())
                    .map_err(|e| {
                        Error::invalid(
                            "QP (OSQP setup)",
                            format!("{e:?} (is P positive semidefinite?)"),
                        )
                    })?;
                self.cached = Some((problem, n, m));
            }
        }
        let (problem, _, _) = self.cached.as_mut().expect("set just above");
        let outcome = problem.solve();
        let iterations = outcome.iter() as usize;
        let solved = match &outcome {
            Status::Solved(s) => Ok((QpStatus::Solved, s)),
            Status::SolvedInaccurate(s) => Ok((QpStatus::SolvedInaccurate, s)),
            Status::MaxIterationsReached(s) | Status::TimeLimitReached(s) => {
                Ok((QpStatus::MaxIterations, s))
            }
            Status::PrimalInfeasible(_) | Status::PrimalInfeasibleInaccurate(_) => {
                Err(QpStatus::PrimalInfeasible)
            }
            Status::DualInfeasible(_) | Status::DualInfeasibleInaccurate(_) => {
                Err(QpStatus::DualInfeasible)
            }
            _ => Err(QpStatus::NumericalError),
        };
        let (status, x, y) = match solved {
            Ok((status, s)) => (status, DVec::from_column_slice(s.x()), s.y().to_vec()),
            Err(status) => {
                // A certificate of infeasibility or a failure is no warm start.
                self.reset();
                return Ok(QpSolution::failed(status, qp, iterations));
            }
        };
        let bound_multipliers = DVec::from_column_slice(&y[..n]);
        let constraint_multipliers = DVec::from_column_slice(&y[n..]);
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
        "osqp"
    }
}
