//! The Newton step of statics with the stiffness of the actuators whose tangent is not in the
//! sparse Newton matrix T = K + s K_a (a cavity's −p ∂²V/∂x², a torque-driven servo's, a
//! solved λ's): conjugate gradients on (T − J_a) dx = r preconditioned with T's factor, the
//! coupling J_a applied matrix-free. Statics' Newton iterations and the static start's
//! derivative (`derivative`) both solve with it ([`ActuatedTangent::refine`]).

use faer::dyn_stack::{MemBuffer, MemStack};

use crate::fem::SoftBody;
use crate::linalg::{NumericFactor, dot, norm};
use crate::math::Vec3;
use crate::scene::model::actuation::BodyActuation;
use crate::scene::step::free::actuator_tangent::derivative_outside_step;

/// Buffers of [`ActuatedTangent::refine`].
pub(super) struct Refinement {
    nodes: Vec<Vec3>,
    action: Vec<Vec3>,
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
            res: vec![0.0; n],
            z: vec![0.0; n],
            p: vec![0.0; n],
            q: vec![0.0; n],
        }
    }
}

/// The operator T − J_a on the free DOFs of `body`: T = K + s K_a the Newton matrix (`k`,
/// its values on the body's pattern), J_a = s ∂f_a/∂x of the actuators of `act` whose
/// stiffness is not in it, at the positions `x` (m) and actuator forces `forces`, load
/// factor `s`.
pub(super) struct ActuatedTangent<'a> {
    pub(super) act: &'a BodyActuation,
    pub(super) body: &'a SoftBody,
    pub(super) k: &'a [f64],
    pub(super) x: &'a [Vec3],
    pub(super) forces: &'a [f64],
    pub(super) s: f64,
}

impl ActuatedTangent<'_> {
    /// q = (T − J_a) p (`w.q`, `w.p`), J_a applied matrix-free (its coupling is not in the
    /// sparse pattern).
    fn product(&self, w: &mut Refinement) {
        let dofs = self.body.pattern().dofs();
        self.body
            .pattern()
            .symmetric_product(self.k, &w.p, &mut w.q);
        dofs.scatter_nodal(&w.p, &mut w.nodes);
        w.action.fill(Vec3::zeros());
        self.act.add_driven_force_derivative(
            derivative_outside_step,
            self.x,
            self.forces,
            self.s,
            1.0,
            &w.nodes,
            &mut w.action,
        );
        dofs.add_nodal(&w.action, -1.0, &mut w.q);
    }

    /// Brings the stiffness of the actuators outside the Newton matrix T into the Newton step
    /// without putting it in the sparse pattern: solves (T − J_a) dx = r by conjugate
    /// gradients preconditioned with `factor`, the factorisation of T (shifted by τM if it
    /// had to be; `k` holds T unshifted), from dx = T⁻¹r. Stops on a direction of
    /// non-positive curvature (keeping the last iterate, still a descent direction of the
    /// quasi-Newton kind), at 1e-10 relative residual, or after 200 iterations.
    pub(super) fn refine(
        &self,
        factor: &NumericFactor,
        buffer: &mut MemBuffer,
        r: &[f64],
        dx: &mut [f64],
        w: &mut Refinement,
    ) {
        let r_norm = norm(r);
        // res = r − T dx
        w.p.copy_from_slice(dx);
        self.product(w);
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
            self.product(w);
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
}
