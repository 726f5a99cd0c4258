//! A PD-driven robot's target as a parameter (`target:ROBOT[k]`, docs/derivatives.md): its
//! coordinate k is read in the tangent space at the neutral configuration
//! (`neutral ⊕ x e_k`'s x, the joint's angle in rad or displacement in m), and setting it
//! shifts the target — and every waypoint of a moving target — by the same constant offset
//! along e_k, which is what the derivative `∂/∂target_k` is taken with respect to.

use crate::scene::{RigidDynamics, RigidInput, Scene};

/// Coordinate `dof` of the target of PD-driven robot `system` (module doc): of its fixed
/// target, or of its last waypoint along a path (0 for another input or a free body).
pub(crate) fn target_coordinate(scene: &Scene, system: usize, dof: usize) -> f64 {
    let sys = &scene.rigid.systems[system];
    let (RigidInput::Pd { target, path, .. }, RigidDynamics::Robot(model)) =
        (&sys.input, &sys.dynamics)
    else {
        return 0.0;
    };
    let at = path.last().map_or(target, |(_, q)| q);
    let mut d = vec![0.0; model.nv];
    model.difference(&model.neutral(), at, &mut d);
    d[dof]
}

/// Shifts the target of PD-driven robot `system` and its waypoints by `shift` along the
/// tangent coordinate `dof` (`q ← q ⊕ shift e_dof`; nothing for another input).
pub(crate) fn shift_target(scene: &mut Scene, system: usize, dof: usize, shift: f64) {
    let sys = &mut scene.rigid.systems[system];
    let (RigidInput::Pd { target, path, .. }, RigidDynamics::Robot(model)) =
        (&mut sys.input, &sys.dynamics)
    else {
        return;
    };
    let mut e = vec![0.0; model.nv];
    e[dof] = shift;
    for q in std::iter::once(target).chain(path.iter_mut().map(|(_, q)| q)) {
        let mut out = q.clone();
        model.integrate(q, &e, &mut out);
        *q = out;
    }
}
