//! The least-squares problem of `optimize` (module doc of [`crate::optimize`]) and its
//! solution by projected Levenberg–Marquardt.
//!
//! The residual stacks the waypoint errors p(t_w) − y_w (m, three rows each) over √W q (one
//! row per knot value), so ½‖r‖² is the loss and its Jacobian stacks the waypoints' rows of
//! the run's sensitivities over √W I.

use crate::calibrate::{LeastSquares, LmResult, levenberg_marquardt_in_box};
use crate::diff::ActuationKnots;
use crate::error::Result;
use crate::math::{DMat, DVec};
use crate::scene::{Scene, State};

use super::report::OptimizeReport;
use super::run::{KnotRun, run_knots};
use super::setup::OptimizeSetup;

/// The problem for the Levenberg–Marquardt loop.
struct KnotFit<'a> {
    scene: &'a Scene,
    setup: &'a OptimizeSetup,
    /// Called with the evaluation (1 = the start point) and the steps done of its run.
    progress: &'a mut dyn FnMut(usize, usize),
    evaluations: usize,
}

impl KnotFit<'_> {
    /// The knots with values `q` (actuator by actuator, knot by knot).
    fn knots(&self, q: &[f64]) -> ActuationKnots {
        let mut knots = self.setup.knots.clone();
        let k = knots.times.len();
        for (a, row) in knots.values.iter_mut().enumerate() {
            row.copy_from_slice(&q[a * k..(a + 1) * k]);
        }
        knots
    }

    /// The residual and Jacobian of `run` at `q` (module doc).
    fn residual(&self, run: &KnotRun, q: &[f64]) -> (DVec, DMat) {
        let w = self.setup.waypoints.len();
        let n = q.len();
        let root = self.setup.effort.sqrt();
        let mut r = DVec::zeros(3 * w + n);
        for (i, (p, y)) in run
            .at_waypoints
            .iter()
            .zip(&self.setup.waypoints.positions)
            .enumerate()
        {
            r.rows_mut(3 * i, 3).copy_from(&(p - y));
        }
        for (i, v) in q.iter().enumerate() {
            r[3 * w + i] = root * v;
        }
        let mut j = DMat::zeros(3 * w + n, n);
        if let Some(s) = &run.jacobian {
            j.rows_mut(0, 3 * w).copy_from(s);
        }
        for i in 0..n {
            j[(3 * w + i, i)] = root;
        }
        (r, j)
    }
}

impl LeastSquares for KnotFit<'_> {
    /// One run with sensitivities. A run that fails at a trial point (a step matrix that is
    /// not positive definite, a static start that does not converge) gives a non-finite
    /// residual: a rejected step. At the start point its error stops the optimisation.
    fn evaluate(&mut self, q: &[f64]) -> Result<(DVec, DMat)> {
        self.evaluations += 1;
        let evaluation = self.evaluations;
        let knots = self.knots(q);
        let progress = &mut *self.progress;
        let run = run_knots(
            self.scene,
            self.setup,
            &knots,
            true,
            &mut |_, _| Ok(()),
            &mut |s| progress(evaluation, s),
        );
        match run {
            Ok(run) => Ok(self.residual(&run, q)),
            Err(e) if evaluation == 1 => Err(e),
            Err(_) => {
                let n = q.len();
                let rows = 3 * self.setup.waypoints.len() + n;
                Ok((DVec::from_element(rows, f64::NAN), DMat::zeros(rows, n)))
            }
        }
    }
}

/// Optimises the setup's knots on `scene` (module doc of [`crate::optimize`]) and runs the
/// result once more, calling `progress` with each evaluation's number (1 = the start point)
/// and the steps its run has done, and `observe` with the scene and each state of the last
/// run (the frames of `--view`). Errors: the start point's run fails, bad setup.
pub fn optimize(
    scene: &Scene,
    setup: &OptimizeSetup,
    progress: &mut dyn FnMut(usize, usize),
    observe: &mut dyn FnMut(&Scene, &State) -> Result<()>,
) -> Result<OptimizeReport> {
    let initial: Vec<f64> = setup.knots.values.iter().flatten().copied().collect();
    let k = setup.knots.times.len();
    let lower: Vec<f64> = setup
        .bounds
        .iter()
        .flat_map(|b| std::iter::repeat_n(b[0], k))
        .collect();
    let upper: Vec<f64> = setup
        .bounds
        .iter()
        .flat_map(|b| std::iter::repeat_n(b[1], k))
        .collect();
    let start: Vec<f64> = initial
        .iter()
        .zip(lower.iter().zip(&upper))
        .map(|(v, (lo, hi))| v.clamp(*lo, *hi))
        .collect();
    let mut fit = KnotFit {
        scene,
        setup,
        progress,
        evaluations: 0,
    };
    let result: LmResult =
        levenberg_marquardt_in_box(&mut fit, &start, &lower, &upper, &setup.options)?;
    let evaluations = fit.evaluations;
    let knots = fit.knots(&result.params);
    let run = run_knots(scene, setup, &knots, false, observe, &mut |_| {})?;
    Ok(OptimizeReport::new(
        scene,
        setup,
        &knots,
        &run,
        &result,
        evaluations,
    ))
}
