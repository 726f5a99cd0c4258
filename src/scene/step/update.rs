//! Stage 5 of a soft body's step, after the contact stage: v⁺ and x⁺ = x + h v⁺ from the
//! corrected reduced velocity, and the reaction torques of the servos that pin their horns.

use crate::fem::SoftBody;
use crate::math::Vec3;
use crate::scene::model::BodyState;
use crate::scene::model::actuation::BodyActuation;

use super::free::prescribed::{ReactionInputs, reaction_torques};
use super::workspace::BodyWorkspace;

/// Stage 5 of one body: v⁺ and x⁺ from `ws.free.vp_red` into `bs`, and the pinned servos'
/// reaction torques (N·m) into `forces`. `linearised`: the step took one Newton iteration.
#[allow(clippy::too_many_arguments)]
pub(super) fn update(
    body: &SoftBody,
    act: &BodyActuation,
    ws: &mut BodyWorkspace,
    bs: &mut BodyState,
    forces: &mut [f64],
    h: f64,
    g: Vec3,
    linearised: bool,
) {
    let BodyWorkspace { free, v_new, .. } = ws;
    let dofs = body.pattern().dofs();
    // Stage 5: v⁺ (fixed nodes keep v = 0, prescribed ones get v_p⁺) and x⁺ = x + h v⁺.
    free.full.fill(0.0); // fixed nodes keep v = 0
    dofs.expand(&free.vp_red, &mut free.full);
    free.prescribed.fill_full(&mut free.full);
    for (n, (v, x)) in v_new.iter_mut().zip(free.x_trial.iter_mut()).enumerate() {
        *v = Vec3::new(free.full[3 * n], free.full[3 * n + 1], free.full[3 * n + 2]);
        *x = bs.positions[n] + h * *v;
    }
    // Stage 5b: the pinned servos' reaction torques (their λ), from the momentum balance of
    // the prescribed nodes.
    reaction_torques(
        body,
        act,
        &mut free.prescribed,
        &ReactionInputs {
            v_old: &bs.velocities,
            v_new,
            x_new: &free.x_trial,
            elastic: &free.elastic.forces,
            actuators: free.actuation.nodal_forces(),
            linearised,
        },
        h,
        g,
        forces,
    );
    bs.velocities.copy_from_slice(v_new);
    bs.positions.copy_from_slice(&free.x_trial);
}
