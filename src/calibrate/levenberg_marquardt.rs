//! Levenberg–Marquardt minimisation of a nonlinear least-squares loss `L(θ) = ½‖r(θ)‖²`.
//!
//! The algorithm is Madsen, Nielsen & Tingleff, *Methods for non-linear least squares
//! problems* (2nd ed., 2004), Algorithm 3.16, with Nielsen's damping schedule:
//!
//! ```text
//!   g = Jᵀr,  A = JᵀJ,  μ₀ = τ · max diag(A),  ν = 2
//!   repeat:  (A + μI) h = −g
//!            ρ = (L(θ) − L(θ + h)) / (½ hᵀ(μh − g))          gain ratio: actual / predicted
//!            ρ > 0 (success):  θ ← θ + h,  μ ← μ · max(1/3, 1 − (2ρ − 1)³),  ν ← 2
//!            ρ ≤ 0 (failure):  μ ← μ · ν,  ν ← 2ν
//! ```
//!
//! A trial point where the residual or Jacobian is not finite counts as a failure (the damping
//! grows and the step shrinks). The loss never increases from one accepted point to the next.
//!
//! In a box `lo ≤ θ ≤ hi` ([`levenberg_marquardt_in_box`]) the step is projected: the trial
//! point is `clamp(θ + h, lo, hi)`, its step `h_p` and the predicted decrease that of the
//! linear model, `−gᵀh_p − ½ h_pᵀ A h_p` (equal to `½ hᵀ(μh − g)` when nothing is clamped),
//! and the gradient in the stopping rule is the projected one (a component on a face of the
//! box whose descent direction leaves it counts 0). Such a held component also stays out of
//! the step: the free ones F solve `(A_FF + μI) h_F = −g_F` (the active-set projected
//! Newton step of Bertsekas, "Projected Newton methods for optimization problems with simple
//! constraints", SIAM J. Control Optim. 20(2), 1982), so that a fit ending on a face converges
//! there at the rate of the reduced problem. (Solved with the held components
//! in, the free ones' step would assume the held ones move, and the fit would creep along
//! the face at a linear rate.)
//!
//! Stopping rules ([`LmOptions`]): the (projected) gradient `‖g‖∞ ≤ ε_g`; the step
//! `‖h‖₂ ≤ ε_s (‖θ‖₂ + ε_s)`; the relative loss decrease of an accepted step
//! `(L_old − L_new) ≤ ε_L · L_old`; and the iteration limit (every iteration, accepted or not,
//! costs one evaluation and counts).

use crate::error::{Error, Result};
use crate::math::{DMat, DVec};

/// A nonlinear least-squares problem `min ½‖r(θ)‖²` over parameters θ ∈ ℝⁿ.
pub trait LeastSquares {
    /// The residual `r(θ)` (m) and its Jacobian `∂r/∂θ` (m×n) at `params` (n). Errors are bad
    /// input and stop the fit; a non-finite residual is a failed trial step, not an error.
    fn evaluate(&mut self, params: &[f64]) -> Result<(DVec, DMat)>;
}

/// Settings of [`levenberg_marquardt`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LmOptions {
    /// Iteration limit (accepted and rejected steps alike; each costs one evaluation).
    pub max_iterations: usize,
    /// Stop when `‖Jᵀr‖∞ ≤ gradient_tolerance` (projected onto the box).
    pub gradient_tolerance: f64,
    /// Stop when the step `‖h‖₂ ≤ step_tolerance · (‖θ‖₂ + step_tolerance)`.
    pub step_tolerance: f64,
    /// Stop when an accepted step lowers the loss by at most `loss_tolerance · L`.
    pub loss_tolerance: f64,
    /// τ of the initial damping `μ₀ = τ · max diag(JᵀJ)` (small when θ₀ is believed good).
    pub initial_damping: f64,
}

impl Default for LmOptions {
    /// 50 iterations, `ε_g = 1e-12`, `ε_s = 1e-12`, `ε_L = 1e-12`, `τ = 1e-3`.
    fn default() -> Self {
        LmOptions {
            max_iterations: 50,
            gradient_tolerance: 1e-12,
            step_tolerance: 1e-12,
            loss_tolerance: 1e-12,
            initial_damping: 1e-3,
        }
    }
}

/// Why [`levenberg_marquardt`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LmStop {
    /// The gradient `‖Jᵀr‖∞` fell below its tolerance.
    Gradient,
    /// The step fell below its tolerance.
    Step,
    /// An accepted step lowered the loss by less than its relative tolerance.
    Loss,
    /// The iteration limit was reached first.
    MaxIterations,
}

/// One entry of the history: the current (accepted) point after an iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct LmIteration {
    /// The loss `½‖r‖²` at the current point.
    pub loss: f64,
    /// The current parameters.
    pub params: Vec<f64>,
    /// The damping μ used for this iteration's step (μ₀ for entry 0).
    pub damping: f64,
    /// Whether this iteration's step was accepted (true for entry 0).
    pub accepted: bool,
    /// `‖Jᵀr‖∞` at the current point (projected onto the box, module doc).
    pub gradient: f64,
}

/// The result of [`levenberg_marquardt`].
#[derive(Debug, Clone, PartialEq)]
pub struct LmResult {
    /// The final (best) parameters.
    pub params: Vec<f64>,
    /// The loss `½‖r‖²` there.
    pub loss: f64,
    /// Iterations taken (accepted and rejected).
    pub iterations: usize,
    /// Why the iteration stopped.
    pub stop: LmStop,
    /// Entry 0 is the initial point, then one entry per iteration.
    pub history: Vec<LmIteration>,
}

impl LmResult {
    /// True when a tolerance (gradient, step or loss), not the iteration limit, stopped it.
    pub fn converged(&self) -> bool {
        self.stop != LmStop::MaxIterations
    }
}

/// Minimises `½‖r(θ)‖²` from `initial` by Levenberg–Marquardt with Nielsen's damping (module
/// doc). Errors: a mis-sized residual or Jacobian, a non-finite residual or Jacobian at the
/// initial point, bad options, or an error of `problem.evaluate`.
pub fn levenberg_marquardt(
    problem: &mut impl LeastSquares,
    initial: &[f64],
    options: &LmOptions,
) -> Result<LmResult> {
    let n = initial.len();
    let lower = vec![f64::NEG_INFINITY; n];
    let upper = vec![f64::INFINITY; n];
    levenberg_marquardt_in_box(problem, initial, &lower, &upper, options)
}

/// [`levenberg_marquardt`] with every iterate in the box `lower ≤ θ ≤ upper` (the projected
/// step of the module doc). Errors as [`levenberg_marquardt`], plus a box of another size, a
/// NaN or empty box, or an initial point outside it.
pub fn levenberg_marquardt_in_box(
    problem: &mut impl LeastSquares,
    initial: &[f64],
    lower: &[f64],
    upper: &[f64],
    options: &LmOptions,
) -> Result<LmResult> {
    let n = initial.len();
    if lower.len() != n || upper.len() != n {
        return Err(Error::invalid(
            "Levenberg-Marquardt box",
            format!(
                "has {} lower and {} upper ends for {n} parameters",
                lower.len(),
                upper.len()
            ),
        ));
    }
    if let Some(i) = (0..n).find(|&i| !(lower[i] <= upper[i])) {
        return Err(Error::invalid(
            format!("Levenberg-Marquardt box of parameter {i}"),
            format!("[{}, {}] is empty or NaN", lower[i], upper[i]),
        ));
    }
    if let Some(i) = (0..n).find(|&i| !(initial[i] >= lower[i] && initial[i] <= upper[i])) {
        return Err(Error::invalid(
            format!("Levenberg-Marquardt initial parameter {i}"),
            format!(
                "{} is outside its box [{}, {}]",
                initial[i], lower[i], upper[i]
            ),
        ));
    }
    if !(options.initial_damping > 0.0) {
        return Err(Error::invalid(
            "Levenberg-Marquardt initial_damping",
            "must be positive",
        ));
    }
    if let Some(i) = initial.iter().position(|v| !v.is_finite()) {
        return Err(Error::invalid(
            format!("Levenberg-Marquardt initial parameter {i}"),
            format!("is {} (must be finite)", initial[i]),
        ));
    }
    let mut theta = DVec::from_column_slice(initial);
    let (r, j) = problem.evaluate(theta.as_slice())?;
    check_shapes(&r, &j, n)?;
    if !finite(&r, &j) {
        return Err(Error::invalid(
            "Levenberg-Marquardt initial point",
            "the residual or its Jacobian is not finite there",
        ));
    }
    let mut loss = 0.5 * r.norm_squared();
    let mut a = j.transpose() * &j;
    let mut g = j.transpose() * &r;
    let mut mu = options.initial_damping * a.diagonal().max().max(f64::MIN_POSITIVE);
    let mut nu = 2.0;
    let lo = DVec::from_column_slice(lower);
    let hi = DVec::from_column_slice(upper);
    let projected = |theta: &DVec, g: &DVec| projected_gradient(theta, g, &lo, &hi);
    let mut history = vec![LmIteration {
        loss,
        params: theta.as_slice().to_vec(),
        damping: mu,
        accepted: true,
        gradient: projected(&theta, &g),
    }];
    let finish = |theta: &DVec, loss, iterations, stop, history| {
        Ok(LmResult {
            params: theta.as_slice().to_vec(),
            loss,
            iterations,
            stop,
            history,
        })
    };
    if projected(&theta, &g) <= options.gradient_tolerance {
        return finish(&theta, loss, 0, LmStop::Gradient, history);
    }
    let mut damped = a.clone();
    for iteration in 1..=options.max_iterations {
        damped.copy_from(&a);
        let mut rhs = -&g;
        for i in 0..n {
            damped[(i, i)] += mu;
        }
        // A parameter held on a face of the box (its descent leaves the box) does not move:
        // the others step on the face, by the reduced system (A_FF + μI) h_F = −g_F.
        for i in (0..n).filter(|&i| held(&theta, &g, &lo, &hi, i)) {
            damped.row_mut(i).fill(0.0);
            damped.column_mut(i).fill(0.0);
            damped[(i, i)] = 1.0;
            rhs[i] = 0.0;
        }
        let used = mu;
        let step = damped.clone().cholesky().map(|c| c.solve(&rhs));
        let accepted = match step {
            None => false, // A + μI not positive definite numerically: damp more.
            Some(h) => {
                let trial = DVec::from_fn(n, |i, _| (theta[i] + h[i]).clamp(lo[i], hi[i]));
                let h = &trial - &theta;
                if h.norm() <= options.step_tolerance * (theta.norm() + options.step_tolerance) {
                    let gradient = projected(&theta, &g);
                    history.push(entry(loss, &theta, used, false, gradient));
                    return finish(&theta, loss, iteration, LmStop::Step, history);
                }
                let (r_new, j_new) = problem.evaluate(trial.as_slice())?;
                check_shapes(&r_new, &j_new, n)?;
                let loss_new = 0.5 * r_new.norm_squared();
                let predicted = -g.dot(&h) - 0.5 * h.dot(&(&a * &h));
                let rho = if finite(&r_new, &j_new) && predicted > 0.0 {
                    (loss - loss_new) / predicted
                } else {
                    f64::NEG_INFINITY
                };
                if rho > 0.0 {
                    let decrease = loss - loss_new;
                    let previous = loss;
                    theta = trial;
                    loss = loss_new;
                    a = j_new.transpose() * &j_new;
                    g = j_new.transpose() * &r_new;
                    mu *= (1.0 / 3.0f64).max(1.0 - (2.0 * rho - 1.0).powi(3));
                    nu = 2.0;
                    let gradient = projected(&theta, &g);
                    history.push(entry(loss, &theta, used, true, gradient));
                    if gradient <= options.gradient_tolerance {
                        return finish(&theta, loss, iteration, LmStop::Gradient, history);
                    }
                    if decrease <= options.loss_tolerance * previous {
                        return finish(&theta, loss, iteration, LmStop::Loss, history);
                    }
                    true
                } else {
                    false
                }
            }
        };
        if !accepted {
            mu *= nu;
            nu *= 2.0;
            let gradient = projected(&theta, &g);
            history.push(entry(loss, &theta, used, false, gradient));
        }
    }
    let iterations = options.max_iterations;
    finish(&theta, loss, iterations, LmStop::MaxIterations, history)
}

fn entry(loss: f64, theta: &DVec, damping: f64, accepted: bool, gradient: f64) -> LmIteration {
    LmIteration {
        loss,
        params: theta.as_slice().to_vec(),
        damping,
        accepted,
        gradient,
    }
}

/// Whether parameter `i` is held by the box: on a face whose descent direction `−gᵢ` leaves it.
fn held(theta: &DVec, g: &DVec, lo: &DVec, hi: &DVec, i: usize) -> bool {
    (theta[i] <= lo[i] && g[i] > 0.0) || (theta[i] >= hi[i] && g[i] < 0.0)
}

/// `‖g‖∞` over the components free to descend: a held one ([`held`]) counts 0.
fn projected_gradient(theta: &DVec, g: &DVec, lo: &DVec, hi: &DVec) -> f64 {
    (0..g.len())
        .map(|i| {
            if held(theta, g, lo, hi, i) {
                0.0
            } else {
                g[i].abs()
            }
        })
        .fold(0.0, f64::max)
}

fn finite(r: &DVec, j: &DMat) -> bool {
    r.iter().chain(j.iter()).all(|v| v.is_finite())
}

fn check_shapes(r: &DVec, j: &DMat, n: usize) -> Result<()> {
    if j.shape() != (r.len(), n) {
        return Err(Error::invalid(
            "least-squares problem",
            format!(
                "Jacobian has shape {:?}, expected ({}, {n}) for {} residuals and {n} parameters",
                j.shape(),
                r.len(),
                r.len()
            ),
        ));
    }
    Ok(())
}
