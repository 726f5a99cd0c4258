//! Actuation knots: each driven actuator's input as a piecewise-linear function of time,
//!
//! ```text
//! u_a(t) = Σ_j φ_j(t) q_{a,j},   φ_j the hat function of knot j on the knot times τ_0 < … < τ_{K−1}
//! ```
//!
//! (held at q_{a,0} before τ_0 and at q_{a,K−1} after τ_{K−1}), in the actuator's own unit
//! (`scene::model::actuator_input`: N for a cable's tension, Pa, N·m). Step k applies the input
//! at t = (k + 1)·dt, the end of the step, as a command log does. The knot values are the
//! parameters of trajectory optimisation: a step's derivative takes u_a(t_k) as the parameter
//! `actuator:NAME`, so ∂L/∂q_{a,j} = Σ_k φ_j(t_k) ∂L/∂u_a(t_k) from each step's cotangent
//! ([`crate::diff::SeriesAdjoint::per_step`]), and a forward direction along q_{a,j} has the
//! component φ_j(t_k) along `actuator:NAME` at step k.

use crate::error::{Error, Result};
use crate::scene::Scene;

use super::parameter::Parameter;

/// Knots of the inputs of some actuators of a scene (module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct ActuationKnots {
    /// Knot times τ_j (s, simulation time), strictly increasing, at least one.
    pub times: Vec<f64>,
    /// The driven actuators as step parameters (`Parameter::Actuator`), in the order of
    /// `values`.
    pub actuators: Vec<Parameter>,
    /// `values[a][j]` = q_{a,j}: actuator a's input at knot j, in its unit.
    pub values: Vec<Vec<f64>>,
}

impl ActuationKnots {
    /// Knots at `times` (s) for the actuators named `names` of `scene`, every value the
    /// actuator's current input. Errors name the argument: an unknown or angle-driven
    /// actuator, times empty, not finite or not increasing.
    pub fn at_current_inputs(
        scene: &Scene,
        names: &[String],
        times: Vec<f64>,
    ) -> Result<ActuationKnots> {
        if times.is_empty() {
            return Err(Error::invalid("knot times", "at least one knot is needed"));
        }
        for (j, w) in times.windows(2).enumerate() {
            if !(w[1] > w[0]) {
                return Err(Error::invalid(
                    format!("knot times[{}]", j + 1),
                    format!("{} does not follow {}: knot times increase", w[1], w[0]),
                ));
            }
        }
        if let Some(t) = times.iter().find(|t| !t.is_finite()) {
            return Err(Error::invalid("knot times", format!("{t} is not finite")));
        }
        let mut actuators = Vec::with_capacity(names.len());
        let mut values = Vec::with_capacity(names.len());
        for name in names {
            let p = Parameter::parse(scene, &format!("actuator:{name}"))?;
            let Parameter::Actuator { body, index } = p else {
                unreachable!("an actuator name parses to an actuator")
            };
            let actuation = scene.body_actuation(body);
            if crate::scene::input_unit(&actuation.actuators[index]) == "rad" {
                return Err(Error::invalid(
                    format!("actuator `{name}`"),
                    "is an angle-driven servo: knots drive forces, pressures, torques and lengths",
                ));
            }
            let u = actuation.input(index);
            actuators.push(p);
            values.push(vec![u; times.len()]);
        }
        Ok(ActuationKnots {
            times,
            actuators,
            values,
        })
    }

    /// `count` knots spread evenly over [0, `duration`] s (one knot: at 0).
    pub fn uniform_times(duration: f64, count: usize) -> Vec<f64> {
        match count {
            0 => Vec::new(),
            1 => vec![0.0],
            n => (0..n)
                .map(|j| duration * j as f64 / (n - 1) as f64)
                .collect(),
        }
    }

    /// The hat functions at `t`: the (knot, weight) pairs with nonzero weight φ_j(t), at most
    /// two, weights summing to 1.
    pub fn weights(&self, t: f64) -> [(usize, f64); 2] {
        let k = self.times.len();
        if k == 1 || t <= self.times[0] {
            return [(0, 1.0), (0, 0.0)];
        }
        if t >= self.times[k - 1] {
            return [(k - 1, 1.0), (k - 1, 0.0)];
        }
        let j = self.times.partition_point(|&s| s <= t) - 1;
        let w = (t - self.times[j]) / (self.times[j + 1] - self.times[j]);
        [(j, 1.0 - w), (j + 1, w)]
    }

    /// φ_j(t): knot j's hat function at time `t` (s).
    pub fn hat(&self, j: usize, t: f64) -> f64 {
        self.weights(t)
            .iter()
            .filter(|(i, _)| *i == j)
            .map(|(_, w)| w)
            .sum()
    }

    /// Actuator a's input at time `t` (s).
    pub fn input(&self, a: usize, t: f64) -> f64 {
        self.weights(t)
            .iter()
            .map(|&(j, w)| w * self.values[a][j])
            .sum()
    }

    /// The time (s) whose inputs step k (0-based) of time step `dt` applies: (k + 1)·dt.
    pub fn step_time(dt: f64, k: usize) -> f64 {
        (k as f64 + 1.0) * dt
    }

    /// Sets every driven actuator's input at time `t` (s) on `scene`.
    pub fn apply(&self, scene: &mut Scene, t: f64) {
        for (a, p) in self.actuators.iter().enumerate() {
            let Parameter::Actuator { body, index } = *p else {
                unreachable!("knots drive actuators")
            };
            scene.actuation[body].set_input(index, self.input(a, t));
        }
    }

    /// ∂L/∂q_{a,j} (per unit of the input) from each step's cotangents `per_step[k]` of the
    /// parameter list whose entry `column[a]` is actuator a's `actuator:NAME`, for steps of
    /// `dt` (s): Σ_k φ_j(t_k) ∂L/∂u_a(t_k).
    pub fn chain(&self, per_step: &[Vec<f64>], column: &[usize], dt: f64) -> Vec<Vec<f64>> {
        let mut out = vec![vec![0.0; self.times.len()]; self.actuators.len()];
        for (k, cotangents) in per_step.iter().enumerate() {
            let t = Self::step_time(dt, k);
            for (a, row) in out.iter_mut().enumerate() {
                let g = cotangents[column[a]];
                for (j, w) in self.weights(t) {
                    row[j] += w * g;
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knots(times: Vec<f64>, values: Vec<f64>) -> ActuationKnots {
        ActuationKnots {
            times,
            actuators: vec![Parameter::Actuator { body: 0, index: 0 }],
            values: vec![values],
        }
    }

    #[test]
    fn the_input_is_linear_between_knots_and_held_outside() {
        let k = knots(vec![0.1, 0.3, 0.4], vec![1.0, 3.0, -1.0]);
        // Hand-computed: a quarter of the way from 0.1 to 0.3 is 1.5; half way from 0.3 to
        // 0.4 is 1.0; before and after, the end values.
        assert!((k.input(0, 0.15) - 1.5).abs() < 1e-15);
        assert!((k.input(0, 0.35) - 1.0).abs() < 1e-15);
        assert_eq!(k.input(0, 0.0), 1.0);
        assert_eq!(k.input(0, 0.9), -1.0);
        assert_eq!(k.input(0, 0.3), 3.0);
    }

    #[test]
    fn chaining_step_cotangents_gives_the_input_s_gradient_along_each_knot() {
        // ∂L/∂q_j = Σ_k φ_j(t_k) g_k: with g_k = 1 at every step, the hat functions' sums at
        // the step times (k + 1)·0.1 for knots at 0, 0.2 and 0.4 and 4 steps: t = 0.1, 0.2,
        // 0.3, 0.4 → knot 0: 0.5; knot 1: 0.5 + 1 + 0.5 = 2; knot 2: 0.5 + 1 = 1.5.
        let k = knots(vec![0.0, 0.2, 0.4], vec![0.0; 3]);
        let per_step = vec![vec![1.0]; 4];
        let g = k.chain(&per_step, &[0], 0.1);
        let expected = [0.5, 2.0, 1.5];
        for (a, b) in g[0].iter().zip(expected) {
            assert!((a - b).abs() < 1e-14, "{:?}", g[0]);
        }
    }

    #[test]
    fn uniform_times_span_the_duration() {
        assert_eq!(
            ActuationKnots::uniform_times(2.0, 5),
            vec![0.0, 0.5, 1.0, 1.5, 2.0]
        );
        assert_eq!(ActuationKnots::uniform_times(2.0, 1), vec![0.0]);
    }
}
