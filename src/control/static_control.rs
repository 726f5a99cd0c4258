//! Static inverse control (`diffsoro control --static`): the actuation whose static
//! equilibrium puts the effector on the target, for users who want a pose rather than a
//! trajectory.
//!
//! Each iteration solves the static equilibrium under the current λ (`scene::solve_static`,
//! warm-started from the last equilibrium), linearises the effector there with the static
//! compliance W = J_e (K + K_a)⁻¹ H̃ ([`InverseController::linearise_static`]) and moves λ by
//! the same two QPs as the dynamic controller (module doc of `control::controller`): a
//! Gauss-Newton iteration on λ ↦ p_eq(λ) within the bounds, with at most `max_change` per
//! iteration. It stops when the effector is within [`STATIC_TOLERANCE`] of the target, when
//! the distance has not improved by 1 % in [`PATIENCE`] iterations (the QP solver's accuracy
//! floor, ~1e-7 m on the Trunk, or a target out of reach: the effector then rests at the
//! closest point the linearised problem finds within the bounds), when λ no longer moves,
//! or after `setup.steps` iterations.

use super::controller::InverseController;
use super::qp::QpSolver;
use super::report::ControlReport;
use super::setup::ControlSetup;
use crate::error::Result;
use crate::scene::{Scene, StaticOptions, solve_static};

/// Distance to the target (m) at which static control stops.
pub const STATIC_TOLERANCE: f64 = 1e-9;

/// λ changes (actuator units) below which static control has stopped moving.
const STALL: f64 = 1e-12;

/// Iterations without a 1 % improvement of the best distance after which static control
/// stops.
pub const PATIENCE: usize = 5;

/// Runs static inverse control of `setup` on `scene` with `solver`; `progress` gets the
/// number of iterations done. Row `n` of the report's `actuation_history` is the λ of
/// iteration `n`, `error_history[n]` the distance of its equilibrium to the target; the
/// final position is the last equilibrium's. Errors: a scene the derivatives do not cover
/// (as `control`), an equilibrium the static solver does not reach.
pub fn static_control(
    scene: &Scene,
    setup: &ControlSetup,
    solver: &mut dyn QpSolver,
    progress: &mut dyn FnMut(usize),
) -> Result<ControlReport> {
    let mut scene = scene.clone();
    let mut controller = InverseController::new(&scene, &setup.effector, setup.options)?;
    let mut state = scene.initial_state();
    let mut error_history = Vec::new();
    let mut position_history = Vec::new();
    let mut actuation_history = Vec::new();
    let mut position = controller.effector_position(&state);
    let (mut best, mut since_best) = (f64::INFINITY, 0);
    for iteration in 0..setup.steps {
        controller.apply(&mut scene)?;
        state.actuator_forces = (0..scene.bodies.len())
            .map(|b| scene.body_actuation(b).given_forces())
            .collect();
        solve_static(&scene, &mut state, StaticOptions::default())?;
        actuation_history.push(controller.actuation().to_vec());
        position = controller.effector_position(&state);
        let error = (position - setup.target).norm();
        error_history.push(error);
        position_history.push(position.as_slice().to_vec());
        progress(iteration + 1);
        if error < 0.99 * best {
            (best, since_best) = (error, 0);
        } else {
            since_best += 1;
        }
        if error <= STATIC_TOLERANCE || since_best >= PATIENCE {
            break;
        }
        let before = controller.actuation().to_vec();
        let lin = controller.linearise_static(&scene, &state)?;
        controller.update(&lin, setup.target, solver)?;
        let moved = before
            .iter()
            .zip(controller.actuation())
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        if moved <= STALL {
            break;
        }
    }
    Ok(ControlReport {
        target: setup.target.as_slice().to_vec(),
        final_position: position.as_slice().to_vec(),
        final_error: (position - setup.target).norm(),
        error_history,
        position_history,
        actuation_history,
        actuators: controller.actuators().to_vec(),
        actuator_units: super::report::actuation_units(&scene, controller.actuators()),
        tracking_rms: None,
        grasp: None,
        joint: None,
    })
}
