//! The step's Jacobian with respect to parameters by central finite differences of the
//! forward step: the reference the analytical derivatives are checked and timed against
//! (`diffsoro bench`'s `finite_difference_ms`).

use crate::error::Result;
use crate::scene::{Scene, State, Stepper};

use super::parameter::Parameter;
use super::tangent::{BodyTangent, StateTangent};

/// d(x⁺, v⁺)/dp for each parameter by central differences of one step from `state`, with
/// step `relative_step · max(|p|, 1e-2)` per parameter; `stepper` is reused for every
/// evaluation (it must have been built for `scene`'s bodies). 2 steps per parameter.
pub fn step_parameter_jacobian_fd(
    scene: &Scene,
    state: &State,
    parameters: &[Parameter],
    stepper: &mut Stepper,
    relative_step: f64,
) -> Result<Vec<StateTangent>> {
    let mut out = Vec::with_capacity(parameters.len());
    let mut shifted = scene.clone();
    for p in parameters {
        let p0 = p.value(scene);
        let eps = relative_step * p0.abs().max(1e-2);
        let mut run = |value: f64| -> Result<State> {
            p.set(&mut shifted, value)?;
            let mut s = state.clone();
            stepper.step(&shifted, &mut s)?;
            Ok(s)
        };
        let plus = run(p0 + eps)?;
        let minus = run(p0 - eps)?;
        p.set(&mut shifted, p0)?;
        out.push(StateTangent {
            bodies: plus
                .bodies
                .iter()
                .zip(&minus.bodies)
                .map(|(a, b)| BodyTangent {
                    positions: a
                        .positions
                        .iter()
                        .zip(&b.positions)
                        .map(|(u, v)| (u - v) / (2.0 * eps))
                        .collect(),
                    velocities: a
                        .velocities
                        .iter()
                        .zip(&b.velocities)
                        .map(|(u, v)| (u - v) / (2.0 * eps))
                        .collect(),
                })
                .collect(),
            rigid: StateTangent::rigid_difference(scene, &minus, &plus, 2.0 * eps),
        });
    }
    Ok(out)
}
