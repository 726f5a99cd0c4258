//! Control of contact forces (paper 004 §IV-D, Eq. 17): at each step choose the change of the
//! actuation Δλ_a minimising
//!
//! ```text
//! α ‖X_e + J Δλ_a‖² + β ‖λ_c + C Δλ_a‖² + ε ‖Δλ_a‖²,   J = ∂X_e⁺/∂λ_a,  C = ∂λ_c/∂λ_a
//! ```
//!
//! within the actuators' bounds and a maximum change per step, where X_e stacks the offsets of
//! the effectors from their grasp origins (one per finger: the Gripper has two bodies) and λ_c
//! the contact forces on the nodes of every body (N, every contact's three components; the
//! bilateral rows of attachments hold a body rather than touch it and are left out). J and
//! C come from the step just taken (`diff`: the step's forward derivatives in the actuator
//! directions and the NCP's implicit derivative), so the change acts on the next step. The
//! heuristic the paper compares with applies the maximal actuation all along ([`grasp`] with
//! `weights = None`).
//!
//! The actuation λ_a is every force-driven actuator's λ (N, Pa or N·m) and every angle-driven
//! servo's angle target (rad; its horn follows at most `max_angle_step` per step), in the
//! order of [`crate::diff::every_parameter`]. Bounds: a force-driven actuator's from the
//! scene, as for [`super::InverseController`]; an angle-driven servo's between 0 (rest) and the scene's
//! angle, which is its maximal closing (the heuristic's constant command). The optimised
//! strategy starts force-driven actuators at the scene's force (clamped into the bounds) and
//! servos at their angle in the start state.

use crate::actuator::{ActuatorKind, Drive, EmbeddedPoint};
use crate::diff::{
    InputTangent, Parameter, Recorder, StateTangent, StepDerivative, check_differentiable,
    every_parameter,
};
use crate::error::{Error, Result};
use crate::math::{DMat, DVec, Vec3};
use crate::scene::{Scene, State};

use super::setup::StateObserver;

use super::controller::ControlOptions;
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
    /// ‖X_e‖ (m), the effectors' distance to their grasp origins (the norm of the stacked
    /// offsets).
    pub effector_distance: Vec<f64>,
    /// ‖λ_c‖ (N) over every contact of every body.
    pub contact_force: Vec<f64>,
    /// λ_a applied during each step (the actuators' units; rad for an angle target).
    pub actuation: Vec<Vec<f64>>,
    /// The controlled actuators' names, in the order of each actuation row.
    pub actuators: Vec<String>,
    /// Each effector's position after the last step (m, world frame), in the given order.
    pub final_positions: Vec<Vec3>,
    /// The first effector's position after each step (m, world frame).
    pub first_path: Vec<Vec3>,
}

impl GraspReport {
    /// α‖X_e‖² + β‖λ_c‖² after the last step.
    pub fn final_loss(&self, alpha: f64, beta: f64) -> f64 {
        let (d, f) = self.final_terms(alpha, beta);
        d + f
    }

    /// The two terms (α‖X_e‖², β‖λ_c‖²) after the last step (paper 004 Table I).
    pub fn final_terms(&self, alpha: f64, beta: f64) -> (f64, f64) {
        let d = self.effector_distance.last().copied().unwrap_or(0.0);
        let f = self.contact_force.last().copied().unwrap_or(0.0);
        (alpha * d * d, beta * f * f)
    }
}

/// The controlled actuation of a grasp: parameters, bounds, current value.
struct Actuation {
    parameters: Vec<Parameter>,
    lower: Vec<f64>,
    upper: Vec<f64>,
    value: Vec<f64>,
}

impl Actuation {
    /// Every force-driven actuator and angle-driven servo of `scene` (module doc for bounds
    /// and start values). Errors on a scene without any.
    fn new(scene: &Scene) -> Result<Actuation> {
        let mut a = Actuation {
            parameters: Vec::new(),
            lower: Vec::new(),
            upper: Vec::new(),
            value: Vec::new(),
        };
        let start = scene.initial_state();
        for p in every_parameter(scene) {
            let Parameter::Actuator { body, index } = p else {
                continue;
            };
            let act = &scene.body_actuation(body).actuators[index];
            let (lo, hi, now) = match (&act.kind, act.drive) {
                (ActuatorKind::Servo(s), Drive::Target(t)) => (
                    t.min(0.0),
                    t.max(0.0),
                    s.value(&start.bodies[body].positions),
                ),
                (_, Drive::Force(f)) => {
                    let [lo, hi] = act.bounds;
                    (lo, hi, f)
                }
                _ => continue,
            };
            a.parameters.push(p);
            a.lower.push(lo);
            a.upper.push(hi);
            a.value.push(now.clamp(lo, hi));
        }
        if a.parameters.is_empty() {
            return Err(Error::invalid(
                "grasp",
                "the scene has no force-driven actuator or angle-driven servo to control",
            ));
        }
        Ok(a)
    }

    /// The heuristic's command: each actuator at its maximal closing (the scene's angle for a
    /// servo, the upper bound for a force-driven actuator). Errors on a force-driven actuator
    /// without a maximum (naming it and the scene keys or flag that give one).
    fn maximal(&self, scene: &Scene) -> Result<Vec<f64>> {
        self.parameters
            .iter()
            .zip(&self.upper)
            .map(|(p, hi)| {
                let Parameter::Actuator { body, index } = *p else {
                    unreachable!("actuators only")
                };
                let actuator = &scene.body_actuation(body).actuators[index];
                match actuator.drive {
                    Drive::Target(t) => Ok(t),
                    Drive::Force(_) if hi.is_finite() => Ok(*hi),
                    Drive::Force(_) => Err(Error::invalid(
                        format!("actuator `{}`", actuator.name),
                        "has no maximum for the heuristic's maximal actuation: give `max_force` (`max_pressure`, `max_torque`) in the scene or --max-force NAME=VALUE",
                    )),
                }
            })
            .collect()
    }

    fn set(&mut self, value: &[f64]) {
        for ((v, x), (lo, hi)) in self
            .value
            .iter_mut()
            .zip(value)
            .zip(self.lower.iter().zip(&self.upper))
        {
            *v = x.clamp(*lo, *hi);
        }
    }

    fn apply(&self, scene: &mut Scene) -> Result<()> {
        for (p, &v) in self.parameters.iter().zip(&self.value) {
            p.set(scene, v)?;
        }
        Ok(())
    }
}

/// Runs `steps` steps of `scene` driving each effector of `effectors` (name, grasp origin in
/// m) toward its origin while limiting the contact forces of every body (Eq. 17 with
/// `weights`), or with every controlled actuator at its maximal closing (`weights = None`, the
/// heuristic). `options` bound the change of the actuation per step (`max_change`, in the
/// actuators' units: rad for an angle target); the bounds are the scene's. Errors: a scene the
/// derivatives do not cover, an unknown effector, the heuristic on a force-driven actuator
/// without a maximum,
/// no effector, a scene without actuators to control, a QP the solver cannot solve.
pub fn grasp(
    scene: &Scene,
    effectors: &[(&str, Vec3)],
    steps: usize,
    options: ControlOptions,
    weights: Option<ForceLimiting>,
    solver: &mut dyn QpSolver,
) -> Result<GraspReport> {
    grasp_with_progress(
        scene,
        effectors,
        steps,
        options,
        weights,
        solver,
        &mut |_| {},
    )
}

/// [`grasp`], calling `progress` with the number of steps done after each step (for a
/// progress bar).
pub fn grasp_with_progress(
    scene: &Scene,
    effectors: &[(&str, Vec3)],
    steps: usize,
    options: ControlOptions,
    weights: Option<ForceLimiting>,
    solver: &mut dyn QpSolver,
    progress: &mut dyn FnMut(usize),
) -> Result<GraspReport> {
    let mut ignore = |_: &Scene, _: &State, _: &[crate::scene::ContactOutcome]| Ok(());
    let problem = GraspProblem {
        effectors,
        steps,
        options,
        weights,
    };
    grasp_observed(scene, &problem, solver, progress, &mut ignore)
}

/// The problem of [`grasp`]: the effectors with their grasp origins (m), the number of
/// steps, the control options and the weights (`None`: the heuristic).
pub struct GraspProblem<'a> {
    /// `(effector name, grasp origin)` pairs.
    pub effectors: &'a [(&'a str, Vec3)],
    /// Number of steps.
    pub steps: usize,
    /// Bounds and step limits of the inputs.
    pub options: ControlOptions,
    /// α, β and ε of Eq. 17; `None` runs the heuristic.
    pub weights: Option<ForceLimiting>,
}

/// [`grasp_with_progress`], also calling `observe` with the scene as driven and the state, at
/// the start and after each step.
pub fn grasp_observed(
    scene: &Scene,
    problem: &GraspProblem<'_>,
    solver: &mut dyn QpSolver,
    progress: &mut dyn FnMut(usize),
    observe: &mut StateObserver<'_>,
) -> Result<GraspReport> {
    let GraspProblem {
        effectors,
        steps,
        options,
        weights,
    } = *problem;
    check_differentiable(scene)?;
    if effectors.is_empty() {
        return Err(Error::invalid("grasp", "give at least one effector"));
    }
    let mut points: Vec<(usize, EmbeddedPoint, Vec3)> = Vec::new();
    for &(name, origin) in effectors {
        let found = (0..scene.bodies.len()).find_map(|b| {
            scene
                .body_actuation(b)
                .effectors
                .iter()
                .find(|e| e.name == name)
                .map(|e| (b, e.point, origin))
        });
        points.push(found.ok_or_else(|| {
            Error::invalid(
                format!("effector `{name}`"),
                "the scene has no such effector",
            )
        })?);
    }
    let mut scene = scene.clone();
    let mut act = Actuation::new(&scene)?;
    if weights.is_none() {
        let max = act.maximal(&scene)?;
        act.set(&max);
    }
    let params = act.parameters.clone();
    let m = params.len();
    let units: Vec<InputTangent> = (0..m)
        .map(|p| InputTangent {
            state: StateTangent::zeros(&scene),
            parameters: (0..m).map(|q| if p == q { 1.0 } else { 0.0 }).collect(),
        })
        .collect();
    let mut recorder = Recorder::new(&scene)?;
    let mut derivative = StepDerivative::new(&scene);
    let mut state = scene.initial_state();
    observe(&scene, &state, &[])?;
    let mut report = GraspReport {
        effector_distance: Vec::with_capacity(steps),
        contact_force: Vec::with_capacity(steps),
        actuation: Vec::with_capacity(steps),
        actuators: params
            .iter()
            .map(|p| match *p {
                Parameter::Actuator { body, index } => {
                    scene.body_actuation(body).actuators[index].name.clone()
                }
                _ => unreachable!("actuators only"),
            })
            .collect(),
        final_positions: Vec::new(),
        first_path: Vec::with_capacity(steps),
    };
    let ne = points.len();
    for step in 0..steps {
        act.apply(&mut scene)?;
        report.actuation.push(act.value.clone());
        let (step_report, record) = recorder.step(&scene, &mut state)?;
        observe(&scene, &state, &step_report.contact)?;
        let x = DVec::from_fn(3 * ne, |r, _| {
            let (b, p, o) = &points[r / 3];
            (p.position(&state.bodies[*b].positions) - o)[r % 3]
        });
        // Each body's rows of its NCP's λ_c, bodies in scene order (the order of
        // `contact_force_tangents`; a contact between two bodies appears for both).
        let lambda_c: Vec<f64> = (0..record.bodies.len())
            .filter_map(|b| record.contact(b).map(|c| c.body_lambda(b)))
            .flatten()
            .collect();
        report.effector_distance.push(x.norm());
        if let Some((b, p, _)) = points.first() {
            report
                .first_path
                .push(p.position(&state.bodies[*b].positions));
        }
        report
            .contact_force
            .push(lambda_c.iter().map(|l| l * l).sum::<f64>().sqrt());
        if let Some(w) = weights {
            let tangents = derivative.jvp(&scene, &record, &params, &units)?;
            let j = DMat::from_fn(3 * ne, m, |r, c| {
                let (b, p, _) = &points[r / 3];
                p.position(&tangents[c].bodies[*b].positions)[r % 3]
            });
            // C = ∂λ_c/∂λ_a, the bodies' contact-force tangents stacked in λ_c's order.
            let rows: usize = (0..scene.bodies.len())
                .map(|b| derivative.contact_force_tangents(b).nrows())
                .sum();
            let mut cmat = DMat::zeros(rows, m);
            let mut r0 = 0;
            for b in 0..scene.bodies.len() {
                let t = derivative.contact_force_tangents(b);
                if t.nrows() > 0 {
                    cmat.view_mut((r0, 0), (t.nrows(), m)).copy_from(t);
                    r0 += t.nrows();
                }
            }
            let lc = DVec::from_column_slice(&lambda_c);
            let mut p = 2.0 * (w.alpha * j.transpose() * &j);
            let mut q = 2.0 * w.alpha * j.transpose() * &x;
            if rows > 0 {
                p += 2.0 * w.beta * cmat.transpose() * &cmat;
                q += 2.0 * w.beta * cmat.transpose() * &lc;
            }
            for i in 0..m {
                p[(i, i)] += 2.0 * w.regularisation;
            }
            let now = act.value.clone();
            let lo = DVec::from_fn(m, |i, _| (act.lower[i] - now[i]).max(-options.max_change));
            let hi = DVec::from_fn(m, |i, _| (act.upper[i] - now[i]).min(options.max_change));
            let solution = solver.solve(&Qp::new(p, q).with_bounds(lo, hi))?;
            if !solution.status.is_solved() {
                return Err(Error::invalid(
                    "grasp QP",
                    format!("the QP solver stopped with {:?}", solution.status),
                ));
            }
            let next: Vec<f64> = now
                .iter()
                .zip(solution.x.iter())
                .map(|(l, d)| l + d)
                .collect();
            act.set(&next);
        }
        recorder.recycle(record);
        progress(step + 1);
    }
    report.final_positions = points
        .iter()
        .map(|(b, p, _)| p.position(&state.bodies[*b].positions))
        .collect();
    Ok(report)
}
