//! Control of contact forces (paper 004 §IV-D, Eq. 17): at each step choose the change of the
//! actuation Δλ_a minimising
//!
//! ```text
//! α ‖X_e + J Δλ_a‖² + β ‖λ_c + C Δλ_a‖² + ε ‖Δλ_a‖²,   J = ∂X_e⁺/∂λ_a,  C = ∂λ_c/∂λ_a
//! ```
//!
//! within the actuators' bounds and a maximum change per step, where X_e is the effector's
//! offset from the grasp origin and λ_c the contact forces on the body's nodes (N, every
//! contact's three components). J and C come from the step just taken (`diff`: the step's
//! forward derivatives in the actuator directions and the NCP's implicit derivative), so the
//! change acts on the next step. The heuristic the paper compares with applies the maximal
//! actuation all along ([`grasp`] with `weights = None`).

use crate::diff::{InputTangent, Recorder, StateTangent, StepDerivative};
use crate::error::{Error, Result};
use crate::math::{DMat, DVec, Vec3};
use crate::scene::Scene;

use super::controller::{ControlOptions, InverseController};
use super::qp::{Qp, QpSolver};

/// The weights of Eq. 17.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForceLimiting {
    /// α (1/m²): weight of the effector's squared distance to the grasp origin.
    pub alpha: f64,
    /// β (1/N²): weight of the squared contact forces.
    pub beta: f64,
    /// ε (per squared actuation unit): regularisation of the change.
    pub regularisation: f64,
}

/// The history of a grasp: per step, after the step.
#[derive(Debug, Clone, PartialEq)]
pub struct GraspReport {
    /// ‖X_e‖ (m), the effector's distance to the grasp origin.
    pub effector_distance: Vec<f64>,
    /// ‖λ_c‖ (N) over every contact of the effector's body.
    pub contact_force: Vec<f64>,
    /// λ_a applied during each step.
    pub actuation: Vec<Vec<f64>>,
}

impl GraspReport {
    /// α‖X_e‖² + β‖λ_c‖² after the last step.
    pub fn final_loss(&self, alpha: f64, beta: f64) -> f64 {
        let d = self.effector_distance.last().copied().unwrap_or(0.0);
        let f = self.contact_force.last().copied().unwrap_or(0.0);
        alpha * d * d + beta * f * f
    }
}

/// Runs `steps` steps of `scene` driving `effector` toward `origin` (m) while limiting the
/// contact forces (Eq. 17 with `weights`), or with every controlled actuator at its maximum
/// (`weights = None`, the heuristic). `options` bound the actuation (cap, change per step) as
/// for [`super::control_scene`]. Errors: a scene the derivatives do not cover, an unknown
/// effector, a QP the solver cannot solve.
pub fn grasp(
    scene: &Scene,
    effector: &str,
    origin: Vec3,
    steps: usize,
    options: ControlOptions,
    weights: Option<ForceLimiting>,
    solver: &mut dyn QpSolver,
) -> Result<GraspReport> {
    let mut scene = scene.clone();
    let mut ctrl = InverseController::new(&scene, effector, options)?;
    let (lower, upper) = {
        let (l, u) = ctrl.bounds();
        (l.to_vec(), u.to_vec())
    };
    if weights.is_none() {
        ctrl.set_actuation(&upper);
    }
    let params = ctrl.parameters().to_vec();
    let m = params.len();
    let body = ctrl.effector_body();
    let units: Vec<InputTangent> = (0..m)
        .map(|p| InputTangent {
            state: StateTangent::zeros(&scene),
            parameters: (0..m).map(|q| if p == q { 1.0 } else { 0.0 }).collect(),
        })
        .collect();
    let mut recorder = Recorder::new(&scene)?;
    let mut derivative = StepDerivative::new(&scene);
    let mut state = scene.initial_state();
    let mut report = GraspReport {
        effector_distance: Vec::with_capacity(steps),
        contact_force: Vec::with_capacity(steps),
        actuation: Vec::with_capacity(steps),
    };
    for _ in 0..steps {
        ctrl.apply(&mut scene)?;
        report.actuation.push(ctrl.actuation().to_vec());
        let (_, record) = recorder.step(&scene, &mut state)?;
        let x = ctrl.effector_position(&state) - origin;
        let lambda_c: Vec<f64> = record.bodies[body]
            .contact()
            .map(|c| c.lambda().to_vec())
            .unwrap_or_default();
        report.effector_distance.push(x.norm());
        report
            .contact_force
            .push(lambda_c.iter().map(|l| l * l).sum::<f64>().sqrt());
        if let Some(w) = weights {
            let tangents = derivative.jvp(&scene, &record, &params, &units)?;
            let j = DMat::from_fn(3, m, |r, c| {
                ctrl.effector_at(&tangents[c].bodies[body].positions)[r]
            });
            let cmat = derivative.contact_force_tangents(body);
            let lc = DVec::from_column_slice(&lambda_c);
            let mut p = 2.0 * (w.alpha * j.transpose() * &j);
            let mut q = 2.0 * w.alpha * j.transpose() * x;
            if cmat.nrows() > 0 {
                p += 2.0 * w.beta * cmat.transpose() * cmat;
                q += 2.0 * w.beta * cmat.transpose() * &lc;
            }
            for i in 0..m {
                p[(i, i)] += 2.0 * w.regularisation;
            }
            let lambda = ctrl.actuation().to_vec();
            let lo = DVec::from_fn(m, |i, _| (lower[i] - lambda[i]).max(-options.max_change));
            let hi = DVec::from_fn(m, |i, _| (upper[i] - lambda[i]).min(options.max_change));
            let solution = solver.solve(&Qp::new(p, q).with_bounds(lo, hi))?;
            if !solution.status.is_solved() {
                return Err(Error::invalid(
                    "grasp QP",
                    format!("the QP solver stopped with {:?}", solution.status),
                ));
            }
            let next: Vec<f64> = lambda
                .iter()
                .zip(solution.x.iter())
                .map(|(l, d)| l + d)
                .collect();
            ctrl.set_actuation(&next);
        }
        recorder.recycle(record);
    }
    Ok(report)
}
