//! The tangent of a run's static start: a run started at rest at the static equilibrium
//! x*(θ) under its first inputs starts with position tangent dx*/dθ (one solve with the
//! equilibrium's tangent, `scene::StaticTangent`) and zero velocity tangent. Shared by the
//! runs under logged commands ([`super::CommandSensitivity`]) and under actuation knots
//! ([`super::KnotSensitivity`]).

use crate::error::{Error, Result};
use crate::fem::MassDampingParameter;
use crate::math::Vec3;
use crate::scene::{Scene, State, StaticInput, StaticTangent};

use super::parameter::Parameter;
use super::tangent::StateTangent;

/// What a unit step of the step parameter `p` moves in the static equilibrium: E or ν, an
/// actuator's start input, the density (through the weights); nothing for the damping
/// coefficients (damping does not move an equilibrium). Errors name `p`: a parameter the
/// static start's derivative does not take.
pub(crate) fn static_direction(scene: &Scene, p: Parameter) -> Result<Vec<(StaticInput, f64)>> {
    Ok(match p {
        Parameter::Material { body, parameter } => {
            vec![(StaticInput::Material { body, parameter }, 1.0)]
        }
        Parameter::Actuator { body, index } => vec![(StaticInput::Actuator { body, index }, 1.0)],
        Parameter::MassDamping { body, parameter } => match parameter {
            MassDampingParameter::Density => vec![(StaticInput::Density { body }, 1.0)],
            _ => Vec::new(),
        },
        p => {
            return Err(Error::invalid(
                p.name(scene),
                "has no derivative through a static start here: start from the scene's initial state (--start scene)",
            ));
        }
    })
}

/// The start's tangent (dx*/dθ, zero velocity) along `direction` (static inputs and their
/// components), from the equilibrium `state`'s tangent `tangent`.
pub(crate) fn start_tangent(
    tangent: &mut StaticTangent,
    scene: &Scene,
    state: &State,
    direction: &[(StaticInput, f64)],
) -> Result<StateTangent> {
    let dx = tangent.tangent(scene, state, direction)?;
    let mut t = StateTangent::zeros(scene);
    for (b, d) in t.bodies.iter_mut().zip(dx) {
        b.positions = d;
        b.velocities = vec![Vec3::zeros(); b.positions.len()];
    }
    Ok(t)
}
