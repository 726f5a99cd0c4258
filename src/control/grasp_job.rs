//! The `control` job in its contact-force-limiting form (paper 004 Eq. 17, `diffsoro control
//! … --contact-weight β`): effectors and their grasp origins checked against the scene, the
//! weights, and the entry point that runs [`grasp`] and reports it in the `control` output
//! (docs/outputs.md: the contract's keys, plus the contact forces and the two terms of the loss).

use serde::Serialize;

use super::contact_force::{ForceLimiting, GraspProblem, grasp_observed};
use super::controller::ControlOptions;
use super::qp::QpSolver;
use super::report::ControlReport;
use super::setup::{StateObserver, check_effector, parse_target};
use crate::error::{Error, Result};
use crate::math::Vec3;
use crate::scene::Scene;

/// A checked Eq. 17 problem.
#[derive(Debug, Clone, PartialEq)]
pub struct GraspSetup {
    /// Each effector and the point it is driven toward (its grasp origin, m, world frame).
    pub effectors: Vec<(String, Vec3)>,
    /// Number of control steps.
    pub steps: usize,
    /// Bounds of the actuation and its change per step.
    pub options: ControlOptions,
    /// α, β and the regularisation of Eq. 17.
    pub weights: ForceLimiting,
    /// Whether to run the paper's heuristic (every actuator at its maximal closing all
    /// along) instead of the optimised strategy; the loss is reported with the same weights.
    pub heuristic: bool,
}

/// What the Eq. 17 form adds to the `control` output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GraspSummary {
    /// `"optimised"` (Eq. 17) or `"heuristic"` (maximal actuation all along).
    pub strategy: String,
    /// The effectors, in the order of `targets` and `final_positions`.
    pub effectors: Vec<String>,
    /// Each effector's grasp origin (m).
    pub targets: Vec<[f64; 3]>,
    /// Each effector's position after the last step (m).
    pub final_positions: Vec<[f64; 3]>,
    /// ‖λ_c‖ over every contact of every body after each step (N).
    pub contact_force_history: Vec<f64>,
    /// α (1/m²).
    pub alpha: f64,
    /// β (1/N²).
    pub beta: f64,
    /// α‖X_e‖² after the last step (X_e the stacked offsets; `final_error` is ‖X_e‖).
    pub effector_term: f64,
    /// β‖λ_c‖² after the last step.
    pub contact_term: f64,
    /// The loss α‖X_e‖² + β‖λ_c‖² after the last step.
    pub loss: f64,
}

impl GraspSetup {
    /// Builds and checks the setup of `diffsoro control SCENE --effector NAME --target X,Y,Z
    /// [--effector NAME --target X,Y,Z …] --contact-weight β [--effector-weight α]
    /// [--max-change D] [--heuristic] [--steps N]`: as many targets as effectors, each
    /// effector in `scene`, each target three finite numbers, α > 0, β ≥ 0, a positive
    /// change per step (default [`ControlOptions::default`]'s, in the actuators' units: rad
    /// for an angle-driven servo), `steps` (default: the scene's `simulation.steps`) ≥ 1.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        scene: &Scene,
        effectors: &[String],
        targets: &[String],
        steps: Option<usize>,
        alpha: f64,
        beta: f64,
        max_change: Option<f64>,
        heuristic: bool,
    ) -> Result<GraspSetup> {
        if effectors.is_empty() || effectors.len() != targets.len() {
            return Err(Error::invalid(
                "--effector/--target",
                format!(
                    "give one --target per --effector ({} effector(s), {} target(s))",
                    effectors.len(),
                    targets.len()
                ),
            ));
        }
        let mut pairs = Vec::with_capacity(effectors.len());
        for (name, target) in effectors.iter().zip(targets) {
            check_effector(scene, name)?;
            pairs.push((name.clone(), parse_target(target)?));
        }
        if !(alpha > 0.0) || !alpha.is_finite() {
            return Err(Error::invalid(
                "--effector-weight",
                format!("{alpha} must be a positive number (1/m²)"),
            ));
        }
        if !(beta >= 0.0) || !beta.is_finite() {
            return Err(Error::invalid(
                "--contact-weight",
                format!("{beta} must be a non-negative number (1/N²)"),
            ));
        }
        let mut options = ControlOptions::for_scene(scene);
        if let Some(d) = max_change {
            if !(d > 0.0) || !d.is_finite() {
                return Err(Error::invalid(
                    "--max-change",
                    format!("{d} must be a positive number (the actuators' units per step)"),
                ));
            }
            options.max_change = d;
        }
        let steps = steps.unwrap_or(scene.simulation.steps);
        if steps == 0 {
            return Err(Error::invalid("--steps", "must be at least 1"));
        }
        Ok(GraspSetup {
            effectors: pairs,
            steps,
            options,
            weights: ForceLimiting {
                alpha,
                beta,
                regularisation: options.regularisation,
            },
            heuristic,
        })
    }
}

/// Runs [`super::grasp`] on `scene` with `setup` (the optimised strategy, or the heuristic) and
/// reports it as a [`ControlReport`]: `target`/`final_position` of the first effector,
/// `final_error` and `error_history` the norm ‖X_e‖ of the stacked offsets, and the
/// [`GraspSummary`]; `progress` gets the number of steps done after each step. Errors as
/// [`super::grasp`].
pub fn grasp_scene(
    scene: &Scene,
    setup: &GraspSetup,
    solver: &mut dyn QpSolver,
    progress: &mut dyn FnMut(usize),
) -> Result<ControlReport> {
    grasp_scene_observed(scene, setup, solver, progress, &mut |_, _, _| Ok(()))
}

/// [`grasp_scene`], also calling `observe` with the scene as driven and the state, at the
/// start and after each step.
pub fn grasp_scene_observed(
    scene: &Scene,
    setup: &GraspSetup,
    solver: &mut dyn QpSolver,
    progress: &mut dyn FnMut(usize),
    observe: &mut StateObserver<'_>,
) -> Result<ControlReport> {
    let effectors: Vec<(&str, Vec3)> = setup
        .effectors
        .iter()
        .map(|(n, t)| (n.as_str(), *t))
        .collect();
    let problem = GraspProblem {
        effectors: &effectors,
        steps: setup.steps,
        options: setup.options,
        weights: (!setup.heuristic).then_some(setup.weights),
    };
    let run = grasp_observed(scene, &problem, solver, progress, observe)?;
    let (alpha, beta) = (setup.weights.alpha, setup.weights.beta);
    let (effector_term, contact_term) = run.final_terms(alpha, beta);
    let first = run.final_positions[0];
    Ok(ControlReport {
        target: setup.effectors[0].1.as_slice().to_vec(),
        final_position: first.as_slice().to_vec(),
        final_error: run.effector_distance.last().copied().unwrap_or(0.0),
        error_history: run.effector_distance.clone(),
        position_history: run
            .first_path
            .iter()
            .map(|p| p.as_slice().to_vec())
            .collect(),
        actuation_history: run.actuation.clone(),
        actuators: run.actuators.clone(),
        actuator_units: super::report::actuation_units(scene, &run.actuators),
        tracking_rms: None,
        grasp: Some(GraspSummary {
            strategy: if setup.heuristic {
                "heuristic"
            } else {
                "optimised"
            }
            .to_string(),
            effectors: setup.effectors.iter().map(|(n, _)| n.clone()).collect(),
            targets: setup.effectors.iter().map(|(_, t)| (*t).into()).collect(),
            final_positions: run.final_positions.iter().map(|p| (*p).into()).collect(),
            contact_force_history: run.contact_force,
            alpha,
            beta,
            effector_term,
            contact_term,
            loss: effector_term + contact_term,
        }),
        joint: None,
    })
}
