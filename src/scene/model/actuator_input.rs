//! An actuator's input in its own unit, and how a logged command becomes it
//! (docs/scene-file.md#commands-over-time): the one place that knows how an input maps to the
//! actuator's [`Drive`], used by `--inputs` schedules (`scene::experiment`), by
//! `diff::Parameter::set` / `value` for `actuator:NAME`, and by the Python bindings.
//!
//! The input of a force-driven actuator is its λ (a cable's tension in N, a cavity's pressure
//! in Pa, a servo's torque in N·m): `Drive::Force(u)`. A target-driven actuator keeps its
//! drive and its input is what the scene file gives: a cable's shortening `displacement` (m),
//! `Drive::Target(rest − u)`; a cavity's `volume_change` (m³), `Drive::Target(rest + u)`; a
//! servo's `angle` (rad from rest), `Drive::Target(u)`.

use crate::actuator::{Actuator, ActuatorKind, Drive};

use super::actuation::BodyActuation;

/// How a logged command becomes an actuator's input (the section's `gain`, `offset`,
/// `time_constant`): ū = `gain` · command + `offset`, in the input's unit, followed by a
/// first-order lag of time constant `time_constant` (s; 0: none).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CommandMap {
    /// Input per unit of command (the input's unit per command unit), finite, ≠ 0.
    pub gain: f64,
    /// Input at command 0 (the input's unit), finite.
    pub offset: f64,
    /// τ (s) ≥ 0 of the lag u_k = a u_{k−1} + (1 − a) ū_k, a = exp(−dt/τ); 0: u_k = ū_k.
    pub time_constant: f64,
}

impl Default for CommandMap {
    /// Gain 1, offset 0, no lag: the command is the input.
    fn default() -> Self {
        CommandMap {
            gain: 1.0,
            offset: 0.0,
            time_constant: 0.0,
        }
    }
}

impl CommandMap {
    /// ū = gain · `command` + offset (the input's unit).
    pub fn input(&self, command: f64) -> f64 {
        self.gain * command + self.offset
    }

    /// The lag's factor a = exp(−dt/τ) over a step of `dt` (s); 0 without lag (τ = 0).
    pub fn lag_factor(&self, dt: f64) -> f64 {
        if self.time_constant > 0.0 {
            (-dt / self.time_constant).exp()
        } else {
            0.0
        }
    }
}

/// What an actuator's input is, kept beside it in [`BodyActuation::inputs`] (model data).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ActuatorInput {
    /// How a logged command becomes the input.
    pub command: CommandMap,
    /// δ at the rest positions: a cable's rest length (m), a cavity's rest volume (m³); 0 for
    /// a servo (its angle is measured from rest).
    pub rest: f64,
    /// Bounds [lo, hi] of the input of a target-driven actuator, in its unit: a cable's
    /// [`min_displacement`, `max_displacement`] (m of shortening; unbounded where not given),
    /// a cavity's volume change unbounded (m³), a servo's angle within (−π, π) (rad: the
    /// largest doubles inside it). A force-driven one's are the actuator's
    /// [`Actuator::bounds`].
    pub target_bounds: [f64; 2],
}

/// The largest double below π: the bound of a servo's angle, |angle| < π.
const BELOW_PI: f64 = std::f64::consts::PI.next_down();

/// [`ActuatorInput::target_bounds`] of an angle-driven servo (rad).
pub(in crate::scene) const ANGLE_BOUNDS: [f64; 2] = [-BELOW_PI, BELOW_PI];

impl ActuatorInput {
    /// The input of `a` (the actuator this describes) as its drive stands: λ of a
    /// force-driven one; a cable's shortening rest − target (m), a cavity's volume change
    /// target − rest (m³), a servo's angle (rad) for a target-driven one. The target's
    /// rounding aside (one subtraction), this is the value [`ActuatorInput::drive`] was given.
    pub fn input(&self, a: &Actuator) -> f64 {
        match (a.drive, &a.kind) {
            (Drive::Force(f), _) => f,
            (Drive::Target(t), ActuatorKind::Cable(_)) => self.rest - t,
            (Drive::Target(t), ActuatorKind::Pneumatic(_)) => t - self.rest,
            (Drive::Target(t), ActuatorKind::Servo(_)) => t,
        }
    }

    /// The drive of `a` for input `u` in its unit, keeping the kind of drive:
    /// `Force(u)`; `Target(rest − u)` for a cable's shortening (m), `Target(rest + u)` for a
    /// cavity's volume change (m³), `Target(u)` for a servo's angle (rad).
    pub fn drive(&self, a: &Actuator, u: f64) -> Drive {
        match (a.drive, &a.kind) {
            (Drive::Force(_), _) => Drive::Force(u),
            (Drive::Target(_), ActuatorKind::Cable(_)) => Drive::Target(self.rest - u),
            (Drive::Target(_), ActuatorKind::Pneumatic(_)) => Drive::Target(self.rest + u),
            (Drive::Target(_), ActuatorKind::Servo(_)) => Drive::Target(u),
        }
    }

    /// Bounds [lo, hi] of the input of `a` in its unit: its force bounds when force-driven (a
    /// cable's [min_force or 0, max_force or ∞] N, a cavity's [min_pressure, max_pressure]
    /// Pa, a servo's ±max_torque N·m), [`ActuatorInput::target_bounds`] when target-driven.
    pub fn bounds(&self, a: &Actuator) -> [f64; 2] {
        match a.drive {
            Drive::Force(_) => a.bounds,
            Drive::Target(_) => self.target_bounds,
        }
    }
}

/// The unit of the input of `a`: `N`, `Pa`, `N·m` when force-driven; `m` (a cable's
/// shortening), `m³` (a cavity's volume change), `rad` (a servo's angle) when target-driven.
pub fn input_unit(a: &Actuator) -> &'static str {
    match (a.drive, &a.kind) {
        (Drive::Force(_), ActuatorKind::Cable(_)) => "N",
        (Drive::Force(_), ActuatorKind::Pneumatic(_)) => "Pa",
        (Drive::Force(_), ActuatorKind::Servo(_)) => "N·m",
        (Drive::Target(_), ActuatorKind::Cable(_)) => "m",
        (Drive::Target(_), ActuatorKind::Pneumatic(_)) => "m³",
        (Drive::Target(_), ActuatorKind::Servo(_)) => "rad",
    }
}

impl BodyActuation {
    /// The [`ActuatorInput`] of actuator `index`. Panics when `inputs` has no entry for it
    /// (a `BodyActuation` assembled by hand must give one per actuator).
    pub fn input_spec(&self, index: usize) -> &ActuatorInput {
        assert_eq!(
            self.inputs.len(),
            self.actuators.len(),
            "BodyActuation::inputs holds one entry per actuator"
        );
        &self.inputs[index]
    }

    /// The input of actuator `index` in its unit ([`ActuatorInput::input`]).
    pub fn input(&self, index: usize) -> f64 {
        self.input_spec(index).input(&self.actuators[index])
    }

    /// Sets the input of actuator `index` to `u` in its unit, keeping its kind of drive
    /// ([`ActuatorInput::drive`]); `u` is not clamped (see [`BodyActuation::input_bounds`]).
    pub fn set_input(&mut self, index: usize, u: f64) {
        let drive = self.input_spec(index).drive(&self.actuators[index], u);
        self.actuators[index].drive = drive;
    }

    /// Bounds [lo, hi] of the input of actuator `index` in its unit
    /// ([`ActuatorInput::bounds`]).
    pub fn input_bounds(&self, index: usize) -> [f64; 2] {
        self.input_spec(index).bounds(&self.actuators[index])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actuator::{Cable, Servo};
    use crate::math::Vec3;

    fn actuator(kind: ActuatorKind, drive: Drive) -> Actuator {
        Actuator {
            name: "a".into(),
            kind,
            drive,
            bounds: [0.0, 2.0],
            value_bounds: [f64::NEG_INFINITY, f64::INFINITY],
            max_value_step: f64::INFINITY,
            max_force_step: f64::INFINITY,
        }
    }

    fn cable() -> ActuatorKind {
        ActuatorKind::Cable(Cable {
            points: Vec::new(),
            pull_point: Some(Vec3::zeros()),
        })
    }

    #[test]
    fn a_displacement_driven_cable_keeps_its_drive_and_its_input_is_the_shortening() {
        let spec = ActuatorInput {
            command: CommandMap::default(),
            rest: 0.25,
            target_bounds: [-0.01, 0.02],
        };
        let mut act = BodyActuation {
            actuators: vec![actuator(cable(), Drive::Target(0.25 - 0.004))],
            inputs: vec![spec],
            ..BodyActuation::default()
        };
        // 0.25 − 0.004 = 0.246 and back: one rounding each way.
        assert!((act.input(0) - 0.004).abs() <= 2.0 * f64::EPSILON * 0.25);
        act.set_input(0, 0.01);
        assert_eq!(act.actuators[0].drive, Drive::Target(0.25 - 0.01));
        assert_eq!(act.input_bounds(0), [-0.01, 0.02]);
        assert_eq!(input_unit(&act.actuators[0]), "m");
        // Force-driven: the input is λ, the bounds the force bounds.
        act.actuators[0].drive = Drive::Force(0.5);
        assert_eq!(act.input(0), 0.5);
        act.set_input(0, 1.5);
        assert_eq!(act.actuators[0].drive, Drive::Force(1.5));
        assert_eq!(act.input_bounds(0), [0.0, 2.0]);
        assert_eq!(input_unit(&act.actuators[0]), "N");
    }

    #[test]
    fn a_cavity_takes_its_volume_change_and_a_servo_its_angle() {
        let cavity = ActuatorKind::Pneumatic(crate::actuator::Cavity::on_nodes(Vec::new()));
        let spec = ActuatorInput {
            command: CommandMap::default(),
            rest: 2.0e-6,
            target_bounds: [f64::NEG_INFINITY, f64::INFINITY],
        };
        let a = actuator(cavity, Drive::Target(3.0e-6));
        assert_eq!(spec.drive(&a, 5.0e-7), Drive::Target(2.0e-6 + 5.0e-7));
        assert_eq!(spec.input(&a), 3.0e-6 - 2.0e-6);
        assert_eq!(input_unit(&a), "m³");
        let x = [Vec3::new(1.0, 0.0, 0.0)];
        let servo = Servo::new(Vec3::zeros(), Vec3::z(), &[0], &x).unwrap();
        let a = actuator(ActuatorKind::Servo(servo), Drive::Target(0.1));
        let spec = ActuatorInput {
            rest: 0.0,
            target_bounds: ANGLE_BOUNDS,
            ..spec
        };
        assert_eq!(spec.input(&a), 0.1);
        assert_eq!(spec.drive(&a, -0.2), Drive::Target(-0.2));
        const { assert!(ANGLE_BOUNDS[1] < std::f64::consts::PI) };
        assert_eq!(ANGLE_BOUNDS[1].next_up(), std::f64::consts::PI);
        assert_eq!(input_unit(&a), "rad");
    }

    #[test]
    fn the_command_map_is_affine_and_its_lag_factor_exponential() {
        let m = CommandMap {
            gain: 2.0,
            offset: -0.5,
            time_constant: 0.1,
        };
        assert_eq!(m.input(0.25), 0.0);
        assert_eq!(m.input(1.0), 1.5);
        assert_eq!(m.lag_factor(0.1), (-1.0f64).exp());
        assert_eq!(CommandMap::default().lag_factor(0.01), 0.0);
        assert_eq!(CommandMap::default().input(0.3), 0.3);
    }
}
