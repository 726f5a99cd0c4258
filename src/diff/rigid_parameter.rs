//! Names of the rigid inputs sensitivities are taken with respect to (docs/derivatives.md):
//! `q:ROBOT`, `v:ROBOT`, `tau:ROBOT`, `target:ROBOT` (a robot's initial configuration
//! tangent, initial velocity, constant torque added to its input before the effort clamp,
//! constant offset added to its PD target over the run), `position:BODY`, `velocity:BODY`,
//! `angular_velocity:BODY` (a free body's initial centre, velocity and angular velocity, world
//! axes). A name stands for every component; `velocity:cube[2]` names one.

use crate::error::{Error, Result};
use crate::math::DMat;
use crate::scene::{RigidInput, RigidKind, Scene};

/// Which seed a rigid parameter moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RigidSeed {
    /// The initial configuration (tangent).
    Configuration,
    /// The initial velocity.
    Velocity,
    /// A constant input added to the robot's.
    Input,
    /// A constant offset added to a PD robot's target (tangent of the target's joint, rad
    /// or m): with τ = kp ∘ (target ⊖ q) − kd ∘ v on revolute and prismatic joints it moves
    /// the input before the clamp by kp_k per unit, so it seeds the input's seed scaled by kp
    /// ([`RigidParameter::input_gain`]).
    Target,
}

/// One scalar rigid parameter: its name with its component (`velocity:cube[0]`), which seed
/// it moves and where in the stacked coordinates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RigidParameter {
    /// The name with its component.
    pub name: String,
    /// The seed it moves.
    pub seed: RigidSeed,
    /// Its row in the stacked rigid coordinates.
    pub index: usize,
}

/// The rigid parameters `name` stands for, `None` when `name` is not of a rigid kind. Errors
/// name an unknown body or robot and a component out of range. `mass:BODY` and
/// `friction:OBSTACLE` are not initial-state names but parameters of the step:
/// [`crate::diff::Parameter::parse`] reads them.
pub fn parse_rigid_parameter(scene: &Scene, name: &str) -> Result<Option<Vec<RigidParameter>>> {
    let what = || format!("parameter `{name}`");
    let Some((kind, target)) = name.split_once(':') else {
        return Ok(None);
    };
    let (want, seed, first, len) = match kind {
        "q" => (RigidKind::Robot, RigidSeed::Configuration, 0, None),
        "v" => (RigidKind::Robot, RigidSeed::Velocity, 0, None),
        "tau" => (RigidKind::Robot, RigidSeed::Input, 0, None),
        "target" => (RigidKind::Robot, RigidSeed::Target, 0, None),
        "position" => (RigidKind::FreeBody, RigidSeed::Configuration, 0, Some(3)),
        "velocity" => (RigidKind::FreeBody, RigidSeed::Velocity, 0, Some(3)),
        "angular_velocity" => (RigidKind::FreeBody, RigidSeed::Velocity, 3, Some(3)),
        _ => return Ok(None),
    };
    let (body, component) = match target.split_once('[') {
        Some((b, rest)) => {
            let k = rest
                .strip_suffix(']')
                .and_then(|k| k.parse::<usize>().ok())
                .ok_or_else(|| {
                    Error::invalid(what(), "expected NAME or NAME[k], k a component index")
                })?;
            (b, Some(k))
        }
        None => (target, None),
    };
    let systems = &scene.rigid.systems;
    let s = systems
        .iter()
        .position(|x| x.name == body && x.kind() == want)
        .ok_or_else(|| {
            let known: Vec<&str> = systems
                .iter()
                .filter(|x| x.kind() == want)
                .map(|x| x.name.as_str())
                .collect();
            let noun = if want == RigidKind::Robot {
                "robot"
            } else {
                "free rigid body"
            };
            Error::invalid(
                what(),
                format!("the scene has no {noun} `{body}` (it has {known:?})"),
            )
        })?;
    if seed == RigidSeed::Target && !matches!(systems[s].input, RigidInput::Pd { .. }) {
        return Err(Error::invalid(
            what(),
            format!(
                "robot `{body}` has no PD input (kp, kd, target): `target:` is a parameter of PD-driven robots"
            ),
        ));
    }
    let len = len.unwrap_or(systems[s].nv());
    let offset: usize = systems[..s].iter().map(|x| x.nv()).sum::<usize>() + first;
    let base = format!("{kind}:{body}");
    let components: Vec<usize> = match component {
        Some(k) if k < len => vec![k],
        Some(k) => {
            return Err(Error::invalid(
                what(),
                format!("component {k} is out of range (0 to {})", len - 1),
            ));
        }
        None => (0..len).collect(),
    };
    Ok(Some(
        components
            .into_iter()
            .map(|k| RigidParameter {
                name: format!("{base}[{k}]"),
                seed,
                index: offset + k,
            })
            .collect(),
    ))
}

impl RigidParameter {
    /// The rigid system its stacked index falls in and the coordinate within that system
    /// (`(system, k)`: `index` = the earlier systems' nv + k).
    pub fn system_coordinate(&self, scene: &Scene) -> (usize, usize) {
        let mut offset = 0;
        for (s, sys) in scene.rigid.systems.iter().enumerate() {
            if self.index < offset + sys.nv() {
                return (s, self.index - offset);
            }
            offset += sys.nv();
        }
        unreachable!("parse_rigid_parameter gives an index among the coordinates")
    }

    /// The input's change before the effort clamp per unit of the parameter: kp_k (N·m/rad,
    /// N/m) for `target:ROBOT[k]`, 1 for `tau:` (and the other seeds).
    pub fn input_gain(&self, scene: &Scene) -> f64 {
        if self.seed != RigidSeed::Target {
            return 1.0;
        }
        let (s, k) = self.system_coordinate(scene);
        pd_gain(&scene.rigid.systems[s].input, k)
    }
}

/// kp_k of a PD input (0 for another input).
pub(crate) fn pd_gain(input: &RigidInput, k: usize) -> f64 {
    match input {
        RigidInput::Pd { kp, .. } => kp[k],
        _ => 0.0,
    }
}

/// The seeds `[S_q, S_v, S_τ]` (N × k) of `params`, one column each
/// (`diff::RigidSensitivityStepper::new`); a `target:` column is S_τ scaled by kp.
pub fn rigid_seeds(scene: &Scene, params: &[RigidParameter]) -> [DMat; 3] {
    let n: usize = scene.rigid.systems.iter().map(|s| s.nv()).sum();
    let mut seeds = [
        DMat::zeros(n, params.len()),
        DMat::zeros(n, params.len()),
        DMat::zeros(n, params.len()),
    ];
    for (c, p) in params.iter().enumerate() {
        let which = match p.seed {
            RigidSeed::Configuration => 0,
            RigidSeed::Velocity => 1,
            RigidSeed::Input | RigidSeed::Target => 2,
        };
        seeds[which][(p.index, c)] = p.input_gain(scene);
    }
    seeds
}
