//! The settings of the ADMM contact solver ([`AdmmSolver`](crate::contact::AdmmSolver)) and the
//! constants of its stopping, acceleration and polish rules (docs/step.md).

use crate::error::{Error, Result};

/// While accelerated, the solver stops at this fraction of the tolerance by default
/// ([`AdmmSettings::accelerated_margin`]). Extrapolated iterates move in larger steps than
/// plain ADMM's slowly converging ones, so where they cross the tolerance varies more with the
/// problem's data; the step derivatives, checked against central differences of whole steps
/// to 1e-6, see that variation (2–3e-6 at the tolerance itself). Two more decades cost about
/// a third more accelerated iterations.
pub const ACCELERATED_MARGIN: f64 = 1e-2;

/// Residual checks (every [`AdmmSettings::check_period`] iterations) without a new smallest
/// NCP residual after which an accelerated solve goes on without Anderson extrapolation.
/// Anderson's own safeguard counts its steps since the last penalty change only, and a
/// penalty that changes every few checks restarts it for ever: on a nearly singular G (six
/// ball rows under a free steel ball, their normals within 4e-4 rad) the extrapolated iterates
/// stall far from the tolerance through any number of iterations and penalty changes, where
/// plain ADMM converges in a few hundred (`tests/contact_ncp.rs`).
pub const STALLED_CHECKS: usize = 30;

/// Iterations for which every contact's force must have stayed on the same face of its cone
/// (apex, interior, boundary) before the iterate is polished ([`AdmmSettings::polish`]).
pub const POLISH_STABLE_ITERATIONS: usize = 5;

/// Iterations before an iterate is polished without an assembled G (`contact::ncp::polish_krylov`,
/// whose sparse factorisation and Newton steps cost tens of ADMM iterations): a warm-started
/// solve that converges sooner never pays for a polish.
pub const POLISH_MATRIX_FREE_AFTER: usize = 20;

/// Through a factor with the polish on, ADMM's penalty is also held at an update while no
/// polish has been tried and the faces are settling: the face changes over the last
/// `rho_update_period` iterations number less than 1/`FACES_SETTLING_RATIO` of those over the
/// period before. A polish is then a few iterations away, and a change of the penalty would
/// cost a sparse factorisation that the polish makes useless (docs/speed.md).
pub const FACES_SETTLING_RATIO: usize = 10;

/// Polishes tried while iterating, at most, in one solve (each up to three LUs of the reduced
/// system); one more is tried at convergence, on the converged iterate's faces.
pub const POLISH_ATTEMPTS: usize = 3;

/// Settings of [`AdmmSolver`](crate::contact::AdmmSolver) (defaults from the paper's reference implementation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdmmSettings {
    /// Absolute tolerance on each residual measure (N, m/s, W).
    pub tolerance: f64,
    /// Iteration limit.
    pub max_iterations: usize,
    /// Proximal weight relative to the largest eigenvalue of G: `μ_prox = prox_ratio · L`.
    pub prox_ratio: f64,
    /// Scaling τ ∈ (0, 1] of the penalty.
    pub tau: f64,
    /// Initial penalty exponent: `ρ₀ = √(L m) · cond^rho_power`.
    pub rho_power: f64,
    /// Penalty update factor exponent: `ρ ← ρ · cond^(±rho_power_factor)`.
    pub rho_power_factor: f64,
    /// Primal/dual residual ratio that triggers a penalty update.
    pub ratio_primal_dual: f64,
    /// Iterations between two applications of the penalty rule (≥ 1).
    pub rho_update_period: usize,
    /// Lanczos steps (products with G) to estimate the largest eigenvalue L of G from the
    /// all-ones vector (`crate::linalg::largest_eigenpair`).
    pub lanczos_steps: usize,
    /// The NCP residuals (one product with G, as costly as the iteration's solve) are scored
    /// at least every `check_period` iterations, and whenever ADMM's own primal and dual
    /// residuals are both below the tolerance.
    pub check_period: usize,
    /// Anderson acceleration (type II, Walker and Ni 2011): how many past differences of the
    /// iterate `(y, z/τρ)` extrapolate the next one (0 = plain ADMM). Cleared at each
    /// penalty change and whenever the fixed-point residual more than doubles.
    pub anderson_memory: usize,
    /// While accelerated, the solver aims at `accelerated_margin × tolerance`, in (0, 1]
    /// (default [`ACCELERATED_MARGIN`], for derivatives that move smoothly with the data;
    /// 1 for forward runs, which need the tolerance only).
    pub accelerated_margin: f64,
    /// Whether an iterate whose contacts have kept their cone faces for
    /// [`POLISH_STABLE_ITERATIONS`] iterations, a converged one and, with an assembled G, a
    /// warm start before the first iteration are polished: the NCP
    /// solved on those faces by Newton's method (`contact::ncp::polish` with an assembled G,
    /// `contact::ncp::polish_krylov` without, from [`POLISH_MATRIX_FREE_AFTER`] iterations on), kept
    /// only if its residuals meet the target. Default true.
    pub polish: bool,
    /// Whether a solve records its iterations
    /// ([`AdmmSolver::last_trace`](crate::contact::AdmmSolver::last_trace): ADMM's residuals,
    /// ρ, the NCP residuals where scored, acceleration and polishes), for debugging a solve's
    /// convergence. Changes nothing else of the solve. Default false.
    pub trace: bool,
}

impl Default for AdmmSettings {
    fn default() -> Self {
        AdmmSettings {
            tolerance: 1e-10,
            max_iterations: 1000,
            prox_ratio: 1e-6,
            tau: 0.5,
            rho_power: 0.2,
            rho_power_factor: 0.05,
            ratio_primal_dual: 10.0,
            rho_update_period: 10,
            lanczos_steps: 8,
            check_period: 10,
            anderson_memory: 5,
            accelerated_margin: ACCELERATED_MARGIN,
            polish: true,
            trace: false,
        }
    }
}

impl AdmmSettings {
    /// Errors naming the first setting out of its range.
    pub(super) fn validate(&self) -> Result<()> {
        let check = |ok: bool, what: &str, msg: &str| {
            if ok {
                Ok(())
            } else {
                Err(Error::invalid(format!("ADMM setting {what}"), msg))
            }
        };
        check(
            self.tolerance >= 0.0 && self.tolerance.is_finite(),
            "tolerance",
            "must be finite and non-negative",
        )?;
        check(
            self.prox_ratio > 0.0 && self.prox_ratio < 1.0,
            "prox_ratio",
            "must lie in (0, 1)",
        )?;
        check(
            self.accelerated_margin > 0.0 && self.accelerated_margin <= 1.0,
            "accelerated_margin",
            "must lie in (0, 1]",
        )?;
        check(
            self.tau > 0.0 && self.tau <= 1.0,
            "tau",
            "must lie in (0, 1]",
        )?;
        check(
            self.rho_power.is_finite() && self.rho_power_factor.is_finite(),
            "rho_power",
            "must be finite",
        )?;
        check(
            self.ratio_primal_dual >= 1.0 && self.ratio_primal_dual.is_finite(),
            "ratio_primal_dual",
            "must be finite and ≥ 1",
        )
    }
}
