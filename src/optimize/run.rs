//! One run under actuation knots: the effector's path, its positions at the waypoints'
//! times and, when asked, their Jacobian with respect to the knot values (forward
//! sensitivities, [`KnotSensitivity`]).
//!
//! The time base is that of a run under logged commands: time 0 is the start, step k applies
//! the inputs at (k + 1)·dt and ends at that time, so the state after s steps is at s·dt; the
//! effector at a waypoint time t is linear between the states after ⌊t/dt⌋ and ⌊t/dt⌋ + 1
//! steps.

use crate::diff::{ActuationKnots, KnotSensitivity};
use crate::error::Result;
use crate::math::{DMat, Vec3};
use crate::scene::{Scene, State, Stepper};

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
    let (mut state, _) = setup.start.state(&scene)?;
    let (body, point) = setup.point;
    let dt = scene.simulation.dt;
    let brackets: Vec<(usize, f64)> = setup
        .waypoints
        .times
        .iter()
        .map(|&t| bracket(t, dt, setup.steps))
        .collect();
    let mut stepping = match tangents {
        true => Stepping::Tangents(KnotSensitivity::new(
            &scene,
            knots,
            &state,
            setup.start,
            &[],
        )?),
        false => Stepping::Plain(Stepper::new(&scene)?),
    };
    let mut jacobian = match &stepping {
        Stepping::Tangents(sens) => Some(DMat::zeros(3 * brackets.len(), sens.columns())),
        Stepping::Plain(_) => None,
    };
    let mut path = Vec::with_capacity(setup.steps + 1);
    for s in 0..=setup.steps {
        if s > 0 {
            stepping.step(&mut scene, &mut state, knots, s - 1)?;
            progress(s);
        }
        path.push(point.position(&state.bodies[body].positions));
        observe(&scene, &state)?;
        // Each waypoint reads the states after a and a + 1 steps, weighted 1 − w and w.
        if let (Some(j), Stepping::Tangents(sens)) = (jacobian.as_mut(), &stepping) {
            for (i, &(a, w)) in brackets.iter().enumerate() {
                let weight = match s {
                    _ if s == a => 1.0 - w,
                    _ if s == a + 1 => w,
                    _ => continue,
                };
                for (c, t) in sens.tangents().enumerate() {
                    let d = point.position(&t.bodies[body].positions) * weight;
                    for r in 0..3 {
                        j[(3 * i + r, c)] += d[r];
                    }
                }
            }
        }
    }
    let at_waypoints = brackets
        .iter()
        .map(|&(a, w)| path[a] * (1.0 - w) + path[a + 1] * w)
        .collect();
    Ok(KnotRun {
        path,
        at_waypoints,
        jacobian,
        state,
    })
}

/// How a run steps: plainly, or carrying the knot sensitivities.
enum Stepping {
    Plain(Stepper),
    Tangents(KnotSensitivity),
}

impl Stepping {
    /// Step k (0-based) under `knots`: the inputs at (k + 1)·dt set on `scene`, then the step.
    fn step(
        &mut self,
        scene: &mut Scene,
        state: &mut State,
        knots: &ActuationKnots,
        k: usize,
    ) -> Result<()> {
        match self {
            Stepping::Plain(stepper) => {
                knots.apply(scene, ActuationKnots::step_time(scene.simulation.dt, k));
                stepper.step(scene, state)?;
            }
            // KnotSensitivity sets the inputs of its own step count.
            Stepping::Tangents(sens) => {
                sens.step(scene, state)?;
            }
        }
        Ok(())
    }
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
