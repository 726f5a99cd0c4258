//! The controlled actuation of inverse control and the two bounded least-squares QPs that
//! move it (paper 004 Eq. 15-16; the formulation and its reasons are in the module doc of
//! `control::controller`), for any effector linearisation `p_eq + W Δλ`: a soft effector's
//! position (3 rows, m) or a rigid joint coordinate (1 row, rad; `control::joint_effector`).

use crate::actuator::Drive;
use crate::diff::Parameter;
use crate::error::{Error, Result};
use crate::math::{DMat, DVec};
use crate::scene::Scene;

use super::controller::ControlOptions;
use super::qp::{Qp, QpSolution, QpSolver, QpStatus};

/// Every force-driven actuator of a scene (in [`crate::diff::every_parameter`] order), its
/// bounds and current λ, and the options of the QPs.
pub struct ActuationQp {
    parameters: Vec<Parameter>,
    names: Vec<String>,
    lower: Vec<f64>,
    upper: Vec<f64>,
    lambda: Vec<f64>,
    options: ControlOptions,
    last: Option<QpSolution>,
}

impl ActuationQp {
    /// The force-driven actuators of `scene`, starting from the scene's forces clamped into
    /// the scene's bounds (the only bounds on λ). Errors: bad options, a scene without
    /// force-driven actuators.
    pub fn new(scene: &Scene, options: ControlOptions) -> Result<Self> {
        if !(options.max_change > 0.0) {
            return Err(Error::invalid(
                "control options",
                format!("max_change ({}) must be positive", options.max_change),
            ));
        }
        if !(options.regularisation >= 0.0) || !options.regularisation.is_finite() {
            return Err(Error::invalid(
                "control options",
                format!(
                    "regularisation ({}) must be finite and ≥ 0",
                    options.regularisation
                ),
            ));
        }
        let mut a = ActuationQp {
            parameters: Vec::new(),
            names: Vec::new(),
            lower: Vec::new(),
            upper: Vec::new(),
            lambda: Vec::new(),
            options,
            last: None,
        };
        for b in 0..scene.bodies.len() {
            for (index, act) in scene.body_actuation(b).actuators.iter().enumerate() {
                let Drive::Force(f) = act.drive else { continue };
                let [lo, hi] = act.bounds;
                a.parameters.push(Parameter::Actuator { body: b, index });
                a.names.push(act.name.clone());
                a.lower.push(lo);
                a.upper.push(hi);
                a.lambda.push(f.clamp(lo, hi));
            }
        }
        if a.parameters.is_empty() {
            return Err(Error::invalid(
                "control",
                "the scene has no force-driven actuator to control (angle-driven servos are controlled through the form of paper 004 Eq. 17: give --contact-weight, 0 for effector tracking alone)",
            ));
        }
        Ok(a)
    }

    /// The controlled actuators' names, in the order of [`ActuationQp::actuation`].
    pub fn actuators(&self) -> &[String] {
        &self.names
    }

    /// The current λ of each controlled actuator (N, Pa or N·m).
    pub fn actuation(&self) -> &[f64] {
        &self.lambda
    }

    /// Sets the λ of each controlled actuator, clamped into its bounds.
    pub fn set_actuation(&mut self, lambda: &[f64]) {
        for ((l, v), (lo, hi)) in self
            .lambda
            .iter_mut()
            .zip(lambda)
            .zip(self.lower.iter().zip(&self.upper))
        {
            *l = v.clamp(*lo, *hi);
        }
    }

    /// The controlled actuators as differentiable parameters (`diff::Parameter::Actuator`).
    pub fn parameters(&self) -> &[Parameter] {
        &self.parameters
    }

    /// The bounds [λ_lo, λ_hi] of each controlled actuator.
    pub fn bounds(&self) -> (&[f64], &[f64]) {
        (&self.lower, &self.upper)
    }

    /// The options in use.
    pub fn options(&self) -> &ControlOptions {
        &self.options
    }

    /// The last QP's solution (None before the first [`ActuationQp::update`]).
    pub fn last_solution(&self) -> Option<&QpSolution> {
        self.last.as_ref()
    }

    /// Whether every λ sits on its upper bound.
    pub fn at_upper_bound(&self) -> bool {
        self.lambda.iter().zip(&self.upper).all(|(l, hi)| l >= hi)
    }

    /// Sets the current λ as the force of each controlled actuator of `scene`.
    pub fn apply(&self, scene: &mut Scene) -> Result<()> {
        for (p, &l) in self.parameters.iter().zip(&self.lambda) {
            p.set(scene, l)?;
        }
        Ok(())
    }

    /// Raises every λ by the largest change per step, within its upper bound: the step of
    /// the "press harder" heuristic when the effector does not yet depend on the actuation
    /// (`control::joint_effector`).
    pub fn raise(&mut self) {
        let step = self.options.max_change;
        for (l, hi) in self.lambda.iter_mut().zip(&self.upper) {
            *l = (*l + step).min(*hi).max(*l);
        }
    }

    /// The change bounds `max(λ_lo − λ, −Δ_max) ≤ Δλ ≤ min(λ_hi − λ, Δ_max)`.
    fn change_bounds(&self) -> (DVec, DVec) {
        let k = self.lambda.len();
        let lower = DVec::from_fn(k, |i, _| {
            (self.lower[i] - self.lambda[i])
                .max(-self.options.max_change)
                .min(0.0)
        });
        let upper = DVec::from_fn(k, |i, _| {
            (self.upper[i] - self.lambda[i])
                .min(self.options.max_change)
                .max(0.0)
        });
        (lower, upper)
    }

    /// The first QP, `½‖r + W Δλ‖² + ½ ε s ‖Δλ‖²` (`w` = W, m × k; `residual` = r =
    /// p_eq − target, m rows) within the change bounds, scaled so that its Hessian has a unit
    /// mean diagonal.
    pub fn qp(&self, w: &DMat, residual: &DVec) -> Qp {
        let k = self.lambda.len();
        let mut p = w.transpose() * w;
        let scale = (p.trace() / k as f64).max(f64::MIN_POSITIVE);
        let eps = self.options.regularisation * scale;
        for i in 0..k {
            p[(i, i)] += eps;
        }
        let q = w.transpose() * residual;
        let (lower, upper) = self.change_bounds();
        let mut p = p / scale;
        // Exact symmetry for the solver's check.
        p = (&p + p.transpose()) * 0.5;
        Qp::new(p, q / scale).with_bounds(lower, upper)
    }

    /// The second QP: the smallest actuation `‖λ + Δλ‖²` (plus ½ε‖Δλ‖²) among the changes
    /// that predict the same effector value as `change` (`W Δλ = W Δλ₁`), within the bounds
    /// of `first`.
    pub fn null_space_qp(&self, first: &Qp, w: &DMat, change: &DVec) -> Qp {
        let k = self.lambda.len();
        let eps = self.options.regularisation;
        let p = DMat::identity(k, k) * (1.0 + eps);
        let q = DVec::from_column_slice(&self.lambda);
        let goal = w * change;
        Qp::new(p, q)
            .with_bounds(first.lower.clone(), first.upper.clone())
            .with_constraints(w.clone(), goal.clone(), goal)
    }

    /// Solves the two QPs for `w` and `residual` with `solver` and moves λ to λ + Δλ
    /// (clamped onto the bounds, which removes the interior point's 1e-10-sized slack). When
    /// the first QP is not solved λ is kept; when only the second fails, the first's change
    /// is used. Returns the first QP's status. Errors only for bad input.
    pub fn update(
        &mut self,
        w: &DMat,
        residual: &DVec,
        solver: &mut dyn QpSolver,
    ) -> Result<QpStatus> {
        let qp = self.qp(w, residual);
        let solution = solver.solve(&qp)?;
        let status = solution.status;
        if matches!(status, QpStatus::Solved | QpStatus::SolvedInaccurate) {
            let first = solution
                .x
                .zip_zip_map(&qp.lower, &qp.upper, |x, lo, hi| x.clamp(lo, hi));
            let second = solver.solve(&self.null_space_qp(&qp, w, &first))?;
            let change = if matches!(second.status, QpStatus::Solved | QpStatus::SolvedInaccurate) {
                second.x
            } else {
                first
            };
            for i in 0..self.lambda.len() {
                let d = change[i].clamp(qp.lower[i], qp.upper[i]);
                self.lambda[i] = (self.lambda[i] + d).clamp(self.lower[i], self.upper[i]);
            }
        }
        self.last = Some(solution);
        Ok(status)
    }
}
