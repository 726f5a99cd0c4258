//! One run under actuation knots: the effector's path, its positions at the waypoints'
//! times and, when asked, their Jacobian with respect to the knot values (forward
//! sensitivities, [`KnotSensitivity`]).
//!
//! The time base is that of a run under logged commands: time 0 is the start, step k applies
//! the inputs at (k + 1)·dt and ends at that time, so the state after s steps is at s·dt; the
//! effector at a waypoint time t is linear between the states after ⌊t/dt⌋ and ⌊t/dt⌋ + 1
//! steps.

use std::collections::BTreeMap;

use crate::diff::{ActuationKnots, KnotSensitivity};
use crate::error::{Error, Result};
use crate::math::{DMat, Vec3};
use crate::scene::{RunStart, Scene, State, StaticOptions, Stepper, solve_static};

use super::setup::OptimizeSetup;

/// What [`run_knots`] gives.
#[derive(Debug, Clone)]
pub struct KnotRun {
    /// The effector's position (m) after each step: entry s is the state after s steps (s·dt),
    /// entry 0 the start.
    pub path: Vec<Vec3>,
    /// The effector's position (m) at each waypoint's time.
    pub at_waypoints: Vec<Vec3>,
    /// ∂(effector at waypoint w)/∂q_{a,j}: rows 3w..3w+3, column a·K + j (with tangents).
    pub jacobian: Option<DMat>,
    /// The final state.
    pub state: State,
}

/// Where a waypoint time t falls: the states after `a` and `a + 1` steps and the weight of
/// the second (t = (a + w)·dt).
fn bracket(t: f64, dt: f64, steps: usize) -> (usize, f64) {
    let s = (t / dt).clamp(0.0, steps as f64);
    let a = (s.floor() as usize).min(steps.saturating_sub(1));
    (a, s - a as f64)
}

/// Runs `scene` under `knots` from the setup's start for its steps (module doc), calling
/// `observe` with the scene and each state (the start included) and `progress` with the
/// steps done; with `tangents`, carries the knot sensitivities. Errors: a start that cannot
/// be taken (a static start with contact or rigid bodies and tangents), a step that fails.
pub fn run_knots(
    scene: &Scene,
    setup: &OptimizeSetup,
    knots: &ActuationKnots,
    tangents: bool,
    observe: &mut dyn FnMut(&Scene, &State) -> Result<()>,
    progress: &mut dyn FnMut(usize),
) -> Result<KnotRun> {
    let mut scene = scene.clone();
    knots.apply(&mut scene, 0.0);
    let mut state = scene.initial_state();
    if setup.start == RunStart::Static {
        if scene.contact.is_active() {
            return Err(Error::invalid(
                "the static start (--start static)",
                "solves the equilibrium under the inputs at t = 0, and statics with contact is not supported yet: start from the scene's initial state instead (--start scene)",
            ));
        }
        solve_static(&scene, &mut state, StaticOptions::default())?;
    }
    let (_, body, index) = setup.effector;
    let point = scene.body_actuation(body).effectors[index].point;
    let dt = scene.simulation.dt;
    let brackets: Vec<(usize, f64)> = setup
        .waypoints
        .times
        .iter()
        .map(|&t| bracket(t, dt, setup.steps))
        .collect();
    // The steps whose effector tangent a waypoint reads.
    let mut read: BTreeMap<usize, DMat> = BTreeMap::new();
    for &(a, _) in &brackets {
        read.insert(a, DMat::zeros(0, 0));
        read.insert(a + 1, DMat::zeros(0, 0));
    }
    let mut sensitivity = match tangents {
        true => Some(KnotSensitivity::new(
            &scene,
            knots,
            &state,
            setup.start,
            &[],
        )?),
        false => None,
    };
    let mut stepper = match sensitivity {
        Some(_) => None,
        None => Some(Stepper::new(&scene)?),
    };
    let mut path = Vec::with_capacity(setup.steps + 1);
    let mut record = |s: usize, state: &State, sensitivity: &Option<KnotSensitivity>| {
        path.push(point.position(&state.bodies[body].positions));
        if let (Some(sens), Some(slot)) = (sensitivity, read.get_mut(&s)) {
            let mut j = DMat::zeros(3, sens.columns());
            for (c, t) in sens.tangents().enumerate() {
                let d = point.position(&t.bodies[body].positions);
                for r in 0..3 {
                    j[(r, c)] = d[r];
                }
            }
            *slot = j;
        }
    };
    record(0, &state, &sensitivity);
    observe(&scene, &state)?;
    for k in 0..setup.steps {
        match (&mut sensitivity, &mut stepper) {
            (Some(sens), _) => {
                sens.step(&mut scene, &mut state)?;
            }
            (None, Some(stepper)) => {
                knots.apply(&mut scene, ActuationKnots::step_time(dt, k));
                stepper.step(&scene, &mut state)?;
            }
            (None, None) => unreachable!("a run has a stepper"),
        }
        record(k + 1, &state, &sensitivity);
        observe(&scene, &state)?;
        progress(k + 1);
    }
    let at_waypoints = brackets
        .iter()
        .map(|&(a, w)| path[a] * (1.0 - w) + path[a + 1] * w)
        .collect();
    let jacobian = sensitivity.map(|sens| {
        let mut j = DMat::zeros(3 * brackets.len(), sens.columns());
        for (i, &(a, w)) in brackets.iter().enumerate() {
            let rows = &read[&a] * (1.0 - w) + &read[&(a + 1)] * w;
            j.rows_mut(3 * i, 3).copy_from(&rows);
        }
        j
    });
    Ok(KnotRun {
        path,
        at_waypoints,
        jacobian,
        state,
    })
}

#[cfg(test)]
mod tests {
    use super::bracket;

    #[test]
    fn a_waypoint_time_falls_between_the_states_around_it() {
        // 0.25 s with dt = 0.1 s: between the states after 2 and 3 steps, half way.
        let (a, w) = bracket(0.25, 0.1, 10);
        assert_eq!(a, 2);
        assert!((w - 0.5).abs() < 1e-12);
        // The run's end: the last step, weight 1.
        assert_eq!(bracket(1.0, 0.1, 10), (9, 1.0));
        assert_eq!(bracket(0.0, 0.1, 10), (0, 0.0));
    }
}
