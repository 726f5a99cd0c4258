//! Projected Gauss-Seidel on the contact blocks, the second NCP solver (docs/step.md).
//!
//! One sweep visits the contacts in order. For contact `i` with diagonal block `W = G_ii`
//! and current velocity `σ_i = g_i + Σ_j G_ij λ_j` (latest λ_j), it updates
//!
//! ```text
//! λ_N ← max(0, λ_N − σ_N / W_NN)                      then σ_i is refreshed, and
//! λ_T ← Π_{‖·‖ ≤ μ λ_N}(λ_T − σ_T / w_T),   w_T = largest eigenvalue of W_TT
//! ```
//!
//! This per-contact update is De Saxcé-correct: its fixed points are exactly the solutions
//! of the NCP of one contact (normal: `λ_N ≥ 0, σ_N ≥ 0, λ_N σ_N = 0`; tangential: either
//! `σ_T = 0` inside the disc, or λ_T on the rim opposite to σ_T, maximal dissipation),
//! unlike a projection of the whole 3-vector onto `K_μ`, whose fixed points solve the
//! convex relaxation (which lifts sliding contacts off the surface). The scalar tangential
//! step keeps that property for an anisotropic `W_TT`. A contact whose `W_NN` is not
//! positive (all its nodes fixed) keeps its λ.
//!
//! **Stopping rule**: after every sweep, σ = Gλ + g is recomputed and the pair is scored with
//! [`ContactProblem::residuals`]; the solver stops when all three measures are ≤ `tolerance`
//! (`converged = true`) or after `max_iterations` sweeps (`converged = false`).

use super::problem::{ContactProblem, NcpSolution, block};
use crate::error::{Error, Result};
use crate::math::{DVec, Vec3};

/// Settings of [`PgsSolver`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PgsSettings {
    /// Absolute tolerance on each residual measure (N, m/s, W).
    pub tolerance: f64,
    /// Sweep limit.
    pub max_iterations: usize,
}

impl Default for PgsSettings {
    fn default() -> Self {
        PgsSettings {
            tolerance: 1e-10,
            max_iterations: 10_000,
        }
    }
}

/// The PGS solver and its reusable buffers.
#[derive(Debug, Default)]
pub struct PgsSolver {
    /// Settings used by [`solve`](Self::solve).
    pub settings: PgsSettings,
    lambda: Vec<f64>,
    sigma: Vec<f64>,
}

/// Largest eigenvalue of the symmetric 2×2 matrix `[[a, b], [b, c]]`.
#[inline]
fn largest_eigenvalue_2x2(a: f64, b: f64, c: f64) -> f64 {
    0.5 * (a + c) + (0.5 * (a - c)).hypot(b)
}

impl PgsSolver {
    /// A solver with the given settings.
    pub fn new(settings: PgsSettings) -> PgsSolver {
        PgsSolver {
            settings,
            ..Default::default()
        }
    }

    /// Solves the NCP of `problem` from `warm_start` (a previous λ) or from λ = 0.
    ///
    /// Errors: a warm start of the wrong length or not finite, or a negative tolerance. Not
    /// converging is a status (`converged = false`), not an error.
    pub fn solve(
        &mut self,
        problem: &ContactProblem,
        warm_start: Option<&[f64]>,
    ) -> Result<NcpSolution> {
        let settings = self.settings;
        if !(settings.tolerance >= 0.0) || !settings.tolerance.is_finite() {
            return Err(Error::invalid(
                "PGS setting tolerance",
                "must be finite and non-negative",
            ));
        }
        let n = problem.contact_count();
        let m = 3 * n;
        self.lambda.resize(m, 0.0);
        self.sigma.resize(m, 0.0);
        match warm_start {
            Some(w) if w.len() != m => {
                return Err(Error::invalid(
                    "PGS warm start",
                    format!("has {} entries, expected {m}", w.len()),
                ));
            }
            Some(w) if w.iter().any(|x| !x.is_finite()) => {
                return Err(Error::invalid("PGS warm start", "not finite"));
            }
            Some(w) => self.lambda.copy_from_slice(w),
            None => self.lambda.fill(0.0),
        }
        let g = problem.delassus();
        let gs = g.as_slice();
        let free = problem.free_velocity().as_slice();

        problem.velocity(&self.lambda, &mut self.sigma);
        let mut iterations = 0;
        let mut residual = problem.residuals(&self.lambda, &self.sigma).max();
        while residual > settings.tolerance && iterations < settings.max_iterations {
            iterations += 1;
            for (i, cone) in problem.cones().iter().enumerate() {
                let r = 3 * i;
                // σ_i = g_i + Σ_j G[r.., j] λ_j  (G symmetric: row r = column r).
                let mut s = Vec3::new(free[r], free[r + 1], free[r + 2]);
                for k in 0..3 {
                    let col = &gs[(r + k) * m..(r + k + 1) * m];
                    s[k] += col
                        .iter()
                        .zip(&self.lambda)
                        .map(|(a, b)| a * b)
                        .sum::<f64>();
                }
                let w = g.fixed_view::<3, 3>(r, r).into_owned();
                if !(w[(2, 2)] > 0.0) {
                    continue;
                }
                let mut l = block(&self.lambda, i);
                if cone.is_bilateral() {
                    // K = ℝ³: the block's own solve, σ_i = 0.
                    if let Some(winv) = w.try_inverse() {
                        l -= winv * s;
                        self.lambda[r..r + 3].copy_from_slice(l.as_slice());
                    }
                    continue;
                }
                // Normal.
                let ln = (l.z - s.z / w[(2, 2)]).max(0.0);
                s += w.column(2) * (ln - l.z);
                l.z = ln;
                // Tangential, scalar step, projected on the disc of radius μ λ_N.
                let wt = largest_eigenvalue_2x2(w[(0, 0)], w[(0, 1)], w[(1, 1)]);
                if wt > 0.0 {
                    let mut tx = l.x - s.x / wt;
                    let mut ty = l.y - s.y / wt;
                    let radius = cone.mu() * l.z;
                    let norm = tx.hypot(ty);
                    if norm > radius {
                        let k = if norm > 0.0 { radius / norm } else { 0.0 };
                        tx *= k;
                        ty *= k;
                    }
                    l.x = tx;
                    l.y = ty;
                }
                self.lambda[r..r + 3].copy_from_slice(l.as_slice());
            }
            problem.velocity(&self.lambda, &mut self.sigma);
            residual = problem.residuals(&self.lambda, &self.sigma).max();
        }
        Ok(problem.solution(
            DVec::from_column_slice(&self.lambda),
            iterations,
            settings.tolerance,
        ))
    }
}
