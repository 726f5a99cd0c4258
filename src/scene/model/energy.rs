//! The mechanical energy of a scene's state (J): kinetic, elastic, gravity and the potential
//! of the force-driven actuators at their current input. With constant actuation, a
//! dissipative step (Rayleigh damping, friction) never increases the total; a step that does
//! feeds energy in (what `scene::step::free::actuator_tangent` cures for cables).

use crate::error::Result;
use crate::fem::{MassKind, Stiffness};

use crate::scene::model::{Scene, State};

/// The energy of a state, summed over the soft bodies (J).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Energy {
    /// ½ vᵀMv over the free degrees of freedom (diagonal mass: every node).
    pub kinetic: f64,
    /// Σₑ VₑΨ(Fₑ), the elastic energy.
    pub elastic: f64,
    /// −Σₙ mₙ g·xₙ, with the lumped nodal masses (the gravity-load weights).
    pub gravity: f64,
    /// −Σₐ σλₐδₐ(x) of the force-driven actuators at the state's λ: λL(x) for a cable at
    /// tension λ, −pV(x) for a cavity at pressure p, −τθ(x) for a servo at torque τ
    /// (`actuator::kind`: f_a = ∂(σλδ)/∂x = −∂(this)/∂x).
    pub actuators: f64,
}

impl Energy {
    /// kinetic + elastic + gravity + actuators (J).
    pub fn total(&self) -> f64 {
        self.kinetic + self.elastic + self.gravity + self.actuators
    }
}

impl Scene {
    /// The energy of `state` (J). Errors: an element the law cannot evaluate (inverted).
    pub fn energy(&self, state: &State) -> Result<Energy> {
        let g = self.gravity();
        let mut e = Energy {
            kinetic: 0.0,
            elastic: 0.0,
            gravity: 0.0,
            actuators: 0.0,
        };
        for (i, (body, bs)) in self.bodies.iter().zip(&state.bodies).enumerate() {
            let mut elastic = body.elastic_state();
            body.evaluate_elastic(&bs.positions, Stiffness::Skip, &mut elastic)?;
            e.elastic += elastic.energy;
            let masses = body.node_masses();
            e.gravity -= masses
                .iter()
                .zip(&bs.positions)
                .map(|(m, x)| m * g.dot(x))
                .sum::<f64>();
            e.kinetic += match body.options().mass {
                MassKind::Lumped | MassKind::Uniform => {
                    0.5 * masses
                        .iter()
                        .zip(&bs.velocities)
                        .map(|(m, v)| m * v.norm_squared())
                        .sum::<f64>()
                }
                MassKind::Consistent => {
                    let pattern = body.pattern();
                    let flat: Vec<f64> =
                        bs.velocities.iter().flat_map(|v| [v.x, v.y, v.z]).collect();
                    let mut v = vec![0.0; pattern.n()];
                    pattern.dofs().reduce(&flat, &mut v);
                    let mut mv = vec![0.0; pattern.n()];
                    pattern.symmetric_product(body.mass_values(), &v, &mut mv);
                    0.5 * v.iter().zip(&mv).map(|(a, b)| a * b).sum::<f64>()
                }
            };
            if let Some(forces) = state.actuator_forces.get(i) {
                e.actuators -= self.body_actuation(i).driven_work(&bs.positions, forces);
            }
        }
        Ok(e)
    }
}
