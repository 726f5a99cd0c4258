//! The Newton step of statics with the stiffness of the actuators whose tangent is not in the
//! sparse Newton matrix T = K + s K_a (a cavity's −p ∂²V/∂x², a torque-driven servo's, a
//! solved λ's): conjugate gradients on (T − J_a) dx = r preconditioned with T's factor, the
//! coupling J_a applied matrix-free. Statics' Newton iterations and the static start's
//! derivative (`derivative`) both solve with it.

use faer::dyn_stack::{MemBuffer, MemStack};

use crate::fem::SoftBody;
use crate::linalg::{NumericFactor, dot, norm};
use crate::math::Vec3;
use crate::scene::model::actuation::BodyActuation;
use crate::scene::step::free::actuator_tangent::derivative_outside_step;

/// Buffers of [`refine_with_actuators`].
pub(super) struct Refinement {
    nodes: Vec<Vec3>,
    action: Vec<Vec3>,
    full: Vec<f64>,
    res: Vec<f64>,
    z: Vec<f64>,
    p: Vec<f64>,
    q: Vec<f64>,
}

impl Refinement {
    pub(super) fn new(nodes: usize, n: usize) -> Refinement {
        Refinement {
            nodes: vec![Vec3::zeros(); nodes],
            action: vec![Vec3::zeros(); nodes],
            full: vec![0.0; 3 * nodes],
            res: vec![0.0; n],
            z: vec![0.0; n],
            p: vec![0.0; n],
            q: vec![0.0; n],
        }
    }
}

/// q = (T − J_a) p on the free DOFs: T = K + s K_a the Newton matrix (`k`), J_a = s ∂f_a/∂x of
/// the actuators whose stiffness is not in it (matrix-free: their coupling is not in the
/// sparse pattern).
pub(super) fn tangent_product(
    act: &BodyActuation,
    body: &SoftBody,
    k: &[f64],
    x: &[Vec3],
    forces: &[f64],
    s: f64,
    w: &mut Refinement,
) {
    let dofs = body.pattern().dofs();
    body.pattern().symmetric_product(k, &w.p, &mut w.q);
    w.full.fill(0.0);
    dofs.expand(&w.p, &mut w.full);
    for (i, d) in w.nodes.iter_mut().enumerate() {
        *d = Vec3::new(w.full[3 * i], w.full[3 * i + 1], w.full[3 * i + 2]);
    }
    w.action.fill(Vec3::zeros());
    act.add_driven_force_derivative(
        derivative_outside_step,
        x,
        forces,
        s,
        1.0,
        &w.nodes,
        &mut w.action,
    );
    for (o, a) in w.full.chunks_exact_mut(3).zip(&w.action) {
        o.copy_from_slice(a.as_slice());
    }
    dofs.reduce(&w.full, &mut w.z);
    for (q, j) in w.q.iter_mut().zip(&w.z) {
        *q -= j;
    }
}

/// Brings the stiffness of the actuators outside the Newton matrix T = K + s K_a into the
/// Newton step without putting it in the sparse pattern: solves (T − J_a) dx = r,
/// J_a = s ∂f_a/∂x of those actuators (a cavity, a torque-driven servo, a solved λ), by
/// conjugate gradients preconditioned with the factorisation of T (shifted by τM if it had
/// to be; `k` holds T unshifted), from dx = T⁻¹r. Stops on a direction of non-positive
/// curvature (keeping the last iterate, still a descent direction of the quasi-Newton kind),
/// at 1e-10 relative residual, or after 200 iterations.
#[allow(clippy::too_many_arguments)]
pub(super) fn refine_with_actuators(
    act: &BodyActuation,
    body: &SoftBody,
    k: &[f64],
    x: &[Vec3],
    forces: &[f64],
    s: f64,
    factor: &NumericFactor,
    buffer: &mut MemBuffer,
    r: &[f64],
    dx: &mut [f64],
    w: &mut Refinement,
) {
    let r_norm = norm(r);
    // res = r − T dx
    w.p.copy_from_slice(dx);
    tangent_product(act, body, k, x, forces, s, w);
    for ((res, ri), q) in w.res.iter_mut().zip(r).zip(&w.q) {
        *res = ri - q;
    }
    w.z.copy_from_slice(&w.res);
    factor.solve_vec_in_place(&mut w.z, MemStack::new(buffer));
    w.p.copy_from_slice(&w.z);
    let mut rz = dot(&w.res, &w.z);
    for _ in 0..200 {
        if norm(&w.res) <= 1e-10 * r_norm {
            return;
        }
        tangent_product(act, body, k, x, forces, s, w);
        let curvature = dot(&w.p, &w.q);
        if !(curvature > 0.0) {
            return;
        }
        let alpha = rz / curvature;
        for ((d, p), (res, q)) in dx.iter_mut().zip(&w.p).zip(w.res.iter_mut().zip(&w.q)) {
            *d += alpha * p;
            *res -= alpha * q;
        }
        w.z.copy_from_slice(&w.res);
        factor.solve_vec_in_place(&mut w.z, MemStack::new(buffer));
        let rz_new = dot(&w.res, &w.z);
        let beta = rz_new / rz;
        rz = rz_new;
        for (p, z) in w.p.iter_mut().zip(&w.z) {
            *p = z + beta * *p;
        }
    }
}
