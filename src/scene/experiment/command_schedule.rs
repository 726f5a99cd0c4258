//! The schedule of a command log over a run's steps (docs/cli.md#commands-over-time):
//! simulation time 0 is the log's first row time t₀; step k (0-based) applies the command at
//! file time t₀ + (k + 1)·dt (linear between rows, held outside them), mapped to the
//! actuator's input by its `gain` and `offset`, lagged by its `time_constant` τ,
//!
//! > u_k = a·u_{k−1} + (1 − a)·ū_k,  a = exp(−dt/τ),  ū_k = gain·c(t₀ + (k+1)·dt) + offset,
//!
//! from u_{−1} = gain·c(t₀) + offset (exact for a command held constant over each step: the
//! solution of τ u̇ = ū − u over one step), and clamped to the actuator's input bounds
//! (`scene::model::actuator_input`) before it is given to the actuator; the lag's state is
//! the unclamped u_k. Clamps are counted per actuator and step; the first of each actuator
//! is reported as a warning.

use std::collections::BTreeMap;

use crate::error::{Error, Location, Result};
use crate::scene::model::Scene;
use crate::scene::model::actuator_input::{CommandMap, input_unit};
use crate::scene::output::final_state::InputsOutput;

use super::command_log::CommandLog;

/// File time (s) at which step `k` (0-based) of a run of time step `dt` (s) takes its command
/// when simulation time 0 is file time `t0`: t₀ + (k + 1)·dt, the end of the step.
pub fn step_time(t0: f64, dt: f64, k: usize) -> f64 {
    t0 + (k as f64 + 1.0) * dt
}

/// The derivative of a channel's input (or of its lag's state) with respect to the actuator's
/// command map: ∂u/∂gain (the input's unit per unit of gain), ∂u/∂offset (dimensionless),
/// ∂u/∂τ (the input's unit per s).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MapTangent {
    /// ∂u/∂gain.
    pub gain: f64,
    /// ∂u/∂offset.
    pub offset: f64,
    /// ∂u/∂time_constant.
    pub time_constant: f64,
}

/// One actuator's path from command to input: its command map, the lag's state u_{k−1}
/// (unclamped, in the input's unit), its input bounds and its clamp count.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandChannel {
    map: CommandMap,
    /// a = exp(−dt/τ) (0 without lag).
    lag: f64,
    bounds: [f64; 2],
    state: f64,
    clamped: usize,
}

/// The input given to the actuator by [`CommandChannel::start`] or [`CommandChannel::step`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChannelInput {
    /// The lagged input before clamping (the input's unit).
    pub unclamped: f64,
    /// The input given: `unclamped` clamped to the bounds.
    pub given: f64,
}

impl ChannelInput {
    /// Whether the input was clamped.
    pub fn clamped(&self) -> bool {
        self.given != self.unclamped
    }
}

impl CommandChannel {
    /// A channel of `map` over steps of `dt` (s), its inputs clamped to `bounds` (the input's
    /// unit), started at command `c0` (u_{−1} = gain·c0 + offset).
    pub fn new(map: CommandMap, dt: f64, bounds: [f64; 2], c0: f64) -> CommandChannel {
        CommandChannel {
            map,
            lag: map.lag_factor(dt),
            bounds,
            state: map.input(c0),
            clamped: 0,
        }
    }

    /// The start input u_{−1}, clamped (not counted: the count is per step).
    pub fn start(&self) -> ChannelInput {
        self.give(self.state)
    }

    /// The next step's input from its command `command`: u_k = a·u_{k−1} + (1 − a)·ū_k
    /// (u_k = ū_k exactly without lag), clamped, and counted when clamped.
    pub fn step(&mut self, command: f64) -> ChannelInput {
        let target = self.map.input(command);
        self.state = if self.lag == 0.0 {
            target
        } else {
            self.lag * self.state + (1.0 - self.lag) * target
        };
        let input = self.give(self.state);
        if input.clamped() {
            self.clamped += 1;
        }
        input
    }

    /// Steps whose input was clamped.
    pub fn clamped(&self) -> usize {
        self.clamped
    }

    /// The tangent of the start input u_{−1} = gain·c₀ + offset with respect to the map:
    /// (c₀, 1, 0) for the start command `c0`.
    pub fn start_tangent(c0: f64) -> MapTangent {
        MapTangent {
            gain: c0,
            offset: 1.0,
            time_constant: 0.0,
        }
    }

    /// The tangent of the next lag state u_k from that of u_{k−1}, `previous`, for the command
    /// `command` of step k; call it before [`Self::step`] (it reads u_{k−1}). Differentiating
    /// u_k = a u_{k−1} + (1 − a)(gain·c_k + offset), a = exp(−dt/τ), ∂a/∂τ = a dt/τ²:
    ///
    /// ```text
    /// ∂u_k/∂gain = a ∂u_{k−1}/∂gain + (1 − a) c_k,   ∂u_k/∂offset = a ∂u_{k−1}/∂offset + (1 − a)
    /// ∂u_k/∂τ = a ∂u_{k−1}/∂τ + (a dt/τ²)(u_{k−1} − ū_k)
    /// ```
    ///
    /// Without lag (τ = 0) u_k = ū_k: (c_k, 1, 0), the limit τ → 0⁺ of the above.
    pub fn step_tangent(&self, command: f64, previous: MapTangent, dt: f64) -> MapTangent {
        let a = self.lag;
        if a == 0.0 {
            return MapTangent {
                gain: command,
                offset: 1.0,
                time_constant: 0.0,
            };
        }
        let tau = self.map.time_constant;
        MapTangent {
            gain: a * previous.gain + (1.0 - a) * command,
            offset: a * previous.offset + (1.0 - a),
            time_constant: a * previous.time_constant
                + a * dt / (tau * tau) * (self.state - self.map.input(command)),
        }
    }

    fn give(&self, u: f64) -> ChannelInput {
        let [lo, hi] = self.bounds;
        ChannelInput {
            unclamped: u,
            given: u.max(lo).min(hi),
        }
    }
}

/// One scheduled actuator: where it is in the scene and its channel.
#[derive(Debug, Clone)]
struct Scheduled {
    name: String,
    body: usize,
    index: usize,
    channel: CommandChannel,
    warned: bool,
}

/// A command log scheduled over a scene's steps: applies each step's inputs to the scene
/// ([`CommandSchedule::apply_start`], then [`CommandSchedule::apply_next`] before each step).
/// Actuators the log does not name keep their scene inputs.
#[derive(Debug, Clone)]
pub struct CommandSchedule {
    log: CommandLog,
    dt: f64,
    actuators: Vec<Scheduled>,
    next_step: usize,
    warnings: Vec<String>,
}

impl CommandSchedule {
    /// The schedule of `log` in `scene` (its `simulation.dt`). Errors, naming the log's file
    /// and line 1: a name that is no actuator of the scene (listing the scene's), or that
    /// several soft bodies' actuators share.
    pub fn new(scene: &Scene, log: CommandLog) -> Result<CommandSchedule> {
        let dt = scene.simulation.dt;
        let mut actuators = Vec::with_capacity(log.names.len());
        for (j, name) in log.names.iter().enumerate() {
            let found: Vec<(usize, usize)> = (0..scene.bodies.len())
                .flat_map(|b| {
                    scene
                        .body_actuation(b)
                        .actuators
                        .iter()
                        .enumerate()
                        .filter(|(_, a)| &a.name == name)
                        .map(move |(i, _)| (b, i))
                })
                .collect();
            let (body, index) = match found.as_slice() {
                [one] => *one,
                [] => {
                    let known: Vec<&str> = (0..scene.bodies.len())
                        .flat_map(|b| scene.body_actuation(b).actuators.iter())
                        .map(|a| a.name.as_str())
                        .collect();
                    return Err(Error::parse(
                        &log.file,
                        Location::Line(1),
                        format!(
                            "column {}: the scene has no actuator `{name}` (it has {known:?})",
                            j + 2
                        ),
                    ));
                }
                _ => {
                    return Err(Error::parse(
                        &log.file,
                        Location::Line(1),
                        format!(
                            "column {}: several soft bodies have an actuator `{name}`",
                            j + 2
                        ),
                    ));
                }
            };
            let act = scene.body_actuation(body);
            let spec = act.input_spec(index);
            actuators.push(Scheduled {
                name: name.clone(),
                body,
                index,
                channel: CommandChannel::new(
                    spec.command,
                    dt,
                    act.input_bounds(index),
                    log.columns[j][0],
                ),
                warned: false,
            });
        }
        Ok(CommandSchedule {
            log,
            dt,
            actuators,
            next_step: 0,
            warnings: Vec::new(),
        })
    }

    /// The log's first row time t₀ (s, the file's clock): simulation time 0.
    pub fn t0(&self) -> f64 {
        self.log.t0()
    }

    /// The log's file name, as given.
    pub fn file(&self) -> &str {
        &self.log.file
    }

    /// The file time (s) of simulation time `time` (s): t₀ + `time`.
    pub fn file_time(&self, time: f64) -> f64 {
        self.log.t0() + time
    }

    /// The whole steps that reach the last row: ⌈(t_last − t₀)/dt − 1e-9⌉ (the 1e-9 keeps
    /// a log sampled at dt from gaining a step to rounding).
    pub fn steps_to_last_row(&self) -> usize {
        let steps = ((self.log.last_time() - self.log.t0()) / self.dt - 1e-9).ceil();
        steps.max(0.0) as usize
    }

    /// What the final state says of the run's command file: its name, t₀, the steps applied
    /// and the clamped inputs per actuator.
    pub fn output(&self) -> InputsOutput {
        InputsOutput {
            file: self.file().to_string(),
            t0: self.t0(),
            steps: self.steps_applied(),
            clamped: self.clamped(),
        }
    }

    /// Steps whose inputs were applied ([`CommandSchedule::apply_next`] calls).
    pub fn steps_applied(&self) -> usize {
        self.next_step
    }

    /// Per scheduled actuator (by name), the steps whose input was clamped.
    pub fn clamped(&self) -> BTreeMap<String, usize> {
        self.actuators
            .iter()
            .map(|s| (s.name.clone(), s.channel.clamped()))
            .collect()
    }

    /// The warnings of clamps since the last call, one per actuator over the whole run.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// Sets the start inputs u_{−1} (the first row's commands mapped, clamped) on `scene`.
    pub fn apply_start(&mut self, scene: &mut Scene) {
        assert_eq!(self.next_step, 0, "the start inputs come before the steps");
        let t0 = self.log.t0();
        for s in &mut self.actuators {
            let input = s.channel.start();
            scene.actuation[s.body].set_input(s.index, input.given);
            if input.clamped() && !s.warned {
                s.warned = true;
                self.warnings.push(clamp_warning(
                    &self.log.file,
                    scene,
                    s,
                    input,
                    format!("the start input (file time {t0} s)"),
                ));
            }
        }
    }

    /// The scheduled actuators in the log's column order: (name, soft body, index among the
    /// body's actuators).
    pub fn channels(&self) -> impl Iterator<Item = (&str, usize, usize)> {
        self.actuators
            .iter()
            .map(|s| (s.name.as_str(), s.body, s.index))
    }

    /// Per scheduled actuator, the tangent of its lag state u_{−1} with respect to its map,
    /// and that of the start input given to it (zero where the start input is clamped: the
    /// derivative from inside the bounds).
    pub fn start_tangents(&self) -> (Vec<MapTangent>, Vec<MapTangent>) {
        self.actuators
            .iter()
            .enumerate()
            .map(|(j, s)| {
                let t = CommandChannel::start_tangent(self.log.columns[j][0]);
                let given = if s.channel.start().clamped() {
                    MapTangent::default()
                } else {
                    t
                };
                (t, given)
            })
            .unzip()
    }

    /// Sets the inputs of the next step k (the commands at file time t₀ + (k + 1)·dt,
    /// mapped, lagged, clamped) on `scene`; call it before each step.
    pub fn apply_next(&mut self, scene: &mut Scene) {
        self.apply_next_with_tangents(scene, &mut [], &mut []);
    }

    /// [`Self::apply_next`], carrying the tangents of the channels' lag states with respect to
    /// their maps (`states`, from [`Self::start_tangents`] or the last call, one per channel:
    /// updated to step k's) and writing those of the inputs given in step k into `given` (zero
    /// where an input is clamped). Both empty: no tangents.
    pub fn apply_next_with_tangents(
        &mut self,
        scene: &mut Scene,
        states: &mut [MapTangent],
        given: &mut [MapTangent],
    ) {
        let tangents = !states.is_empty();
        assert!(
            !tangents || (states.len() == self.actuators.len() && given.len() == states.len()),
            "one tangent per scheduled actuator"
        );
        let k = self.next_step;
        let t = step_time(self.log.t0(), self.dt, k);
        for (j, s) in self.actuators.iter_mut().enumerate() {
            let command = self.log.command(j, t);
            if tangents {
                states[j] = s.channel.step_tangent(command, states[j], self.dt);
            }
            let input = s.channel.step(command);
            if tangents {
                given[j] = if input.clamped() {
                    MapTangent::default()
                } else {
                    states[j]
                };
            }
            scene.actuation[s.body].set_input(s.index, input.given);
            if input.clamped() && !s.warned {
                s.warned = true;
                self.warnings.push(clamp_warning(
                    &self.log.file,
                    scene,
                    s,
                    input,
                    format!("the input of step {} (file time {t} s)", k + 1),
                ));
            }
        }
        self.next_step += 1;
    }
}

/// The one warning of an actuator's first clamp.
fn clamp_warning(
    file: &str,
    scene: &Scene,
    s: &Scheduled,
    input: ChannelInput,
    which: String,
) -> String {
    let act = scene.body_actuation(s.body);
    let unit = input_unit(&act.actuators[s.index]);
    let [lo, hi] = act.input_bounds(s.index);
    format!(
        "{file}: actuator `{}`: {which}, {} {unit}, lies outside its bounds [{lo}, {hi}] {unit}: clamped to {} (the steps it is clamped in are counted in the final state's inputs.clamped, not repeated here)",
        s.name, input.unclamped, input.given
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNBOUNDED: [f64; 2] = [f64::NEG_INFINITY, f64::INFINITY];

    #[test]
    fn a_step_takes_the_command_at_the_end_of_the_step() {
        // Rows at 2.0 s and 2.1 s, dt = 0.01: step k takes c(2.0 + (k+1)·0.01), the command
        // rising 0.1 per 0.1 s, so step k's command is 0.01·(k+1) until the last row.
        let log = CommandLog::parse("c.csv", "time,a\n2.0,0.0\n2.1,0.1\n").unwrap();
        for k in 0..9 {
            let c = log.command(0, step_time(2.0, 0.01, k));
            assert!((c - 0.01 * (k + 1) as f64).abs() < 1e-14, "{k}: {c}");
        }
        // Held after the last row.
        assert_eq!(log.command(0, step_time(2.0, 0.01, 20)), 0.1);
    }

    #[test]
    fn gain_and_offset_map_the_command() {
        let map = CommandMap {
            gain: 1.5,
            offset: 0.25,
            time_constant: 0.0,
        };
        let mut ch = CommandChannel::new(map, 0.01, UNBOUNDED, 2.0);
        assert_eq!(ch.start().given, 1.5 * 2.0 + 0.25);
        assert_eq!(ch.step(-1.0).given, -1.25);
        assert_eq!(ch.step(0.5).given, 1.0);
    }

    #[test]
    fn the_lag_follows_the_closed_form_of_its_recursion() {
        // A step command from 0 to 1 at t = 0 with τ = 0.05 s, dt = 0.01 s: u₋₁ = 0, ū = 1,
        // so u_k = ū + (u₋₁ − ū)·a^(k+1) = 1 − a^(k+1), a = e^(−0.2).
        let (tau, dt) = (0.05, 0.01);
        let map = CommandMap {
            gain: 1.0,
            offset: 0.0,
            time_constant: tau,
        };
        let mut ch = CommandChannel::new(map, dt, UNBOUNDED, 0.0);
        let a = (-0.2f64).exp();
        for k in 0..50 {
            let u = ch.step(1.0).given;
            let closed = 1.0 - a.powi(k + 1);
            assert!((u - closed).abs() < 1e-14, "{k}: {u} vs {closed}");
        }
        // With gain and offset: ū = 2·1 − 1 = 1 from u₋₁ = 2·3 − 1 = 5.
        let map = CommandMap {
            gain: 2.0,
            offset: -1.0,
            time_constant: tau,
        };
        let mut ch = CommandChannel::new(map, dt, UNBOUNDED, 3.0);
        for k in 0..20 {
            let u = ch.step(1.0).given;
            let closed = 1.0 + (5.0 - 1.0) * a.powi(k + 1);
            assert!((u - closed).abs() < 1e-13, "{k}: {u} vs {closed}");
        }
    }

    #[test]
    fn a_fine_lag_approaches_the_continuous_first_order_response() {
        // τ u̇ = 1 − u from u(0) = 0: u(t) = 1 − e^(−t/τ). The discrete recursion is exact at
        // the step ends for a command constant over each step; sampled at t = (k+1)·dt it
        // equals 1 − e^(−t/τ) to rounding, whatever dt. Its only discretisation error is the
        // command's sampling: a command switched on at t = 0 is taken as constant over the
        // first step, and a ramp is taken as a staircase. For the ramp c(t) = t/T the
        // continuous response is t/T − (τ/T)(1 − e^(−t/τ)); the staircase lags it by at most
        // dt/T, so the error falls linearly with dt.
        let tau = 0.05;
        for dt in [1e-3, 1e-4] {
            let map = CommandMap {
                gain: 1.0,
                offset: 0.0,
                time_constant: tau,
            };
            let mut ch = CommandChannel::new(map, dt, UNBOUNDED, 0.0);
            let n = (0.2 / dt).round() as usize;
            let mut worst: f64 = 0.0;
            for k in 0..n {
                let t = (k + 1) as f64 * dt;
                let u = ch.step(1.0).given;
                worst = worst.max((u - (1.0 - (-t / tau).exp())).abs());
            }
            assert!(worst < 1e-12, "step command, dt {dt}: {worst}");
            let big_t = 0.2;
            let log = CommandLog::parse("r.csv", "time,a\n0.0,0.0\n0.2,1.0\n").unwrap();
            let mut ch = CommandChannel::new(map, dt, UNBOUNDED, 0.0);
            let mut worst: f64 = 0.0;
            for k in 0..n {
                let t = step_time(0.0, dt, k);
                let u = ch.step(log.command(0, t)).given;
                let exact = t / big_t - tau / big_t * (1.0 - (-t / tau).exp());
                worst = worst.max((u - exact).abs());
            }
            // The staircase's lag dt/T bounds the error (dt/T = 5e-3, then 5e-4).
            assert!(
                worst <= dt / big_t,
                "ramp, dt {dt}: {worst} > {}",
                dt / big_t
            );
            assert!(
                worst > 0.1 * dt / big_t,
                "ramp, dt {dt}: {worst} (first order)"
            );
        }
    }

    #[test]
    fn clamps_are_counted_per_step_on_the_input_given() {
        // Bounds [0, 1]; commands 0.5, 1.2, 1.0, −0.1, 3 with gain 1: the 2nd, 4th and 5th
        // steps are clamped (1.0 lies on the bound: not clamped). The start at −2 is clamped
        // but not counted (the count is per step).
        let mut ch = CommandChannel::new(CommandMap::default(), 0.01, [0.0, 1.0], -2.0);
        assert!(ch.start().clamped());
        assert_eq!(ch.start().given, 0.0);
        let given: Vec<f64> = [0.5, 1.2, 1.0, -0.1, 3.0]
            .iter()
            .map(|c| ch.step(*c).given)
            .collect();
        assert_eq!(given, [0.5, 1.0, 1.0, 0.0, 1.0]);
        assert_eq!(ch.clamped(), 3);
        // With a lag the state is the unclamped input: from u₋₁ = 0 towards ū = 2 with
        // a = e^(−1) (τ = dt): u₀ = 2(1 − e^(−1)) = 1.264 > 1 (clamped), u₁ = 2(1 − e^(−2))
        // clamped too; back towards ū = 0: u₂ = 2(1 − e^(−2))e^(−1) = 0.636 (not clamped).
        let map = CommandMap {
            time_constant: 0.01,
            ..CommandMap::default()
        };
        let mut ch = CommandChannel::new(map, 0.01, [0.0, 1.0], 0.0);
        assert_eq!(ch.step(2.0).given, 1.0);
        assert_eq!(ch.step(2.0).given, 1.0);
        let u2 = ch.step(0.0);
        let e = (-1.0f64).exp();
        assert!((u2.given - 2.0 * (1.0 - e * e) * e).abs() < 1e-15, "{u2:?}");
        assert_eq!(ch.clamped(), 2);
    }
}
