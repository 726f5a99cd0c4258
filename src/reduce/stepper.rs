//! The reduced step: the full step's linearised implicit Euler (`scene::step`, paper 004
//! Eq. 1) projected on the basis (Galerkin, Goury & Duriez 2018 Eq. 8–10) with the elastic
//! forces and stiffness summed over the sampled elements (`ecsw`):
//!
//! ```text
//! Â Δq̇ = h (ĝ + f̂(q) + f̂_a(q) − α M̂ q̇) − (hβ + h²) K̂ q̇,   Â = (1 + hα) M̂ + (hβ + h²) K̂
//! q̇⁺ = q̇ + Δq̇,   q⁺ = q + h q̇⁺,   x = X + ū + V q,   v = V q̇
//! ```
//!
//! with M̂ = VᵀMV, ĝ = Vᵀ(M g), f̂ = Σₑ wₑ Vₑᵀfₑ, f̂_a = Vᵀ H_aᵀ σλ (cables on their embedded
//! points, `cable`; other actuators on the nodes they touch, rebuilt) and
//! K̂ = Σₑ wₑ VₑᵀKₑVₑ + VᵀK_aV. Â is K × K: one dense Cholesky
//! per step. As in the full step, when Â is not positive definite the step is taken again with
//! every sampled element's tangent cut to its positive part.

use nalgebra::Cholesky;

use crate::actuator::ActuatorKind;
use crate::error::{Error, Result};
use crate::fem::SoftBody;
use crate::math::{DMat, DVec, Vec3};
use crate::scene::{
    BodyActuation, Scene, State, actuator_is_solved as is_solved, add_tangent_action,
};

use super::cable::ReducedCable;
use super::element_projection::{ElementProjection, ReducedTerms, Tangent};
use super::fingerprint::fingerprint;
use super::model::ReducedModel;
use super::nodal_basis::NodalBasis;

/// The reduced coordinates of a state: q (m per unit mode) and q̇ (m/s per unit mode).
#[derive(Debug, Clone, PartialEq)]
pub struct ReducedState {
    /// q.
    pub q: DVec,
    /// q̇.
    pub qdot: DVec,
}

/// A reduced model bound to a scene: its precomputed projections and step buffers.
pub struct ReducedStepper {
    basis: NodalBasis,
    /// V (free DOFs × K), for projections of whole states.
    v: DMat,
    elements: Vec<(ElementProjection, f64)>,
    /// M̂ = VᵀMV (kg).
    mass: DMat,
    /// Vᵀ M per unit gravity, one column per axis (kg).
    weight: DMat,
    /// The cables, by actuator index (evaluated on their points, `cable`).
    cables: Vec<(usize, ReducedCable)>,
    /// The nodes the other actuators touch.
    actuator_nodes: Vec<usize>,
    /// Whether some actuator adds its tangent to the step.
    actuator_tangent: bool,
    q_range: Vec<[f64; 2]>,
    // Buffers.
    x: Vec<Vec3>,
    w: Vec<Vec3>,
    nodal: Vec<Vec3>,
    rows: Vec<(usize, Vec3)>,
    other: Vec<f64>,
    terms: ReducedTerms,
}

impl ReducedStepper {
    /// Binds `model` to `scene`. Errors, one line naming what: another body or mesh (the
    /// fingerprint), or what reduced models do not take yet (contact, rigid bodies, several
    /// soft bodies, actuators solved in the step, servos, full Newton).
    pub fn new(scene: &Scene, model: &ReducedModel) -> Result<ReducedStepper> {
        check_scene(scene, model)?;
        let body = &scene.bodies[0];
        let act = scene.body_actuation(0);
        let v = model.basis_matrix();
        let basis = NodalBasis::new(body, &v, &model.offset);
        let k = model.modes;
        let elements = model
            .elements
            .iter()
            .zip(&model.weights)
            .map(|(&e, &w)| (ElementProjection::new(body, &basis, e), w))
            .collect();
        let (mass, weight) = mass_projections(body, &basis, &v);
        let mut actuator_nodes: Vec<usize> = Vec::new();
        let mut rows = Vec::new();
        let mut cables = Vec::new();
        for (i, a) in act.actuators.iter().enumerate() {
            if let ActuatorKind::Cable(c) = &a.kind {
                cables.push((i, ReducedCable::new(c, body.rest_positions(), &basis)));
                continue;
            }
            rows.clear();
            a.kind.jacobian(body.rest_positions(), &mut rows);
            actuator_nodes.extend(rows.iter().map(|(n, _)| *n));
        }
        actuator_nodes.sort_unstable();
        actuator_nodes.dedup();
        let n = body.node_count();
        Ok(ReducedStepper {
            basis,
            v,
            elements,
            mass,
            weight,
            cables,
            actuator_tangent: act
                .actuators
                .iter()
                .any(|a| a.kind.tangent_in_step() && !matches!(a.kind, ActuatorKind::Cable(_))),
            actuator_nodes,
            q_range: model.q_range.clone(),
            x: body.rest_positions().to_vec(),
            w: vec![Vec3::zeros(); n],
            nodal: vec![Vec3::zeros(); n],
            rows,
            other: Vec::new(),
            terms: ReducedTerms::new(k),
        })
    }

    /// K, the number of modes.
    pub fn modes(&self) -> usize {
        self.basis.modes()
    }

    /// The number of sampled elements.
    pub fn sampled_elements(&self) -> usize {
        self.elements.len()
    }

    /// The reduced coordinates closest to the scene state `state` (its soft body's positions
    /// and velocities projected on the orthonormal basis: q = Vᵀ(x − X − ū), q̇ = Vᵀv).
    pub fn project(&self, scene: &Scene, state: &State) -> ReducedState {
        let body = &scene.bodies[0];
        let bs = &state.bodies[0];
        let dofs = body.pattern().dofs();
        let mut u = vec![0.0; dofs.n_reduced()];
        let mut vel = vec![0.0; dofs.n_reduced()];
        let rest = body.rest_positions();
        for (r, (n, c)) in dofs.free_components().enumerate() {
            u[r] = bs.positions[n][c] - rest[n][c] - self.basis.offset(n)[c];
            vel[r] = bs.velocities[n][c];
        }
        ReducedState {
            q: self.v.tr_mul(&DVec::from_vec(u)),
            qdot: self.v.tr_mul(&DVec::from_vec(vel)),
        }
    }

    /// Writes x = X + ū + Vq and v = V q̇ of every node into the soft body of `state` (fixed nodes
    /// keep their rest position and v = 0).
    pub fn expand(&self, scene: &Scene, r: &ReducedState, state: &mut State) {
        let body = &scene.bodies[0];
        let bs = &mut state.bodies[0];
        let rest = body.rest_positions();
        for (n, (x, v)) in bs.positions.iter_mut().zip(&mut bs.velocities).enumerate() {
            *x = rest[n] + self.basis.displacement(n, r.q.as_slice());
            *v = self.basis.velocity(n, r.qdot.as_slice());
        }
    }

    /// One reduced step of `scene` (its actuators' inputs as set for this step) from `r`,
    /// with λ in `forces` (ramped as the full step ramps them). Errors: an element the law
    /// cannot evaluate, or Â not positive definite even with positive-part tangents.
    pub fn step(&mut self, scene: &Scene, r: &mut ReducedState, forces: &mut [f64]) -> Result<()> {
        let body = &scene.bodies[0];
        let act = scene.body_actuation(0);
        act.ramp_forces(forces);
        let h = scene.simulation.dt;
        let opts = body.options();
        let (alpha, beta) = (opts.rayleigh_mass, opts.rayleigh_stiffness);
        let (c_m, c_k) = (1.0 + h * alpha, h * beta + h * h);
        let g = Vec3::from(scene.simulation.gravity);
        let mut positive_part = false;
        loop {
            self.forces_and_stiffness(body, act, r.q.as_slice(), forces, positive_part)?;
            // Â and b̂.
            let mut a = &self.mass * c_m;
            a += &self.terms.stiffness * c_k;
            let mut b = (&self.weight * g + &self.terms.force) * h;
            b.gemv(-h * alpha, &self.mass, &r.qdot, 1.0);
            b.gemv(-c_k, &self.terms.stiffness, &r.qdot, 1.0);
            match Cholesky::new(a) {
                Some(c) => {
                    let dv = c.solve(&b);
                    r.qdot += dv;
                    r.q.axpy(h, &r.qdot, 1.0);
                    return Ok(());
                }
                None if !positive_part => positive_part = true,
                None => {
                    return Err(Error::invalid(
                        format!("soft_body.{} (reduced)", body.name()),
                        "the reduced step matrix Â = VᵀAV is not positive definite even with positive-part element tangents; reduce simulation.dt",
                    ));
                }
            }
        }
    }

    /// The reduced static equilibrium under the actuators' current λ `forces` (N, Pa),
    /// from `r` by Newton's method on ĝ + f̂(q) + f̂_a(q) = 0 with the reduced tangent; q̇ = 0.
    /// Returns the iterations. Errors: no convergence in 50 iterations, named.
    pub fn settle(&mut self, scene: &Scene, r: &mut ReducedState, forces: &[f64]) -> Result<usize> {
        let body = &scene.bodies[0];
        let act = scene.body_actuation(0);
        let g = Vec3::from(scene.simulation.gravity);
        r.qdot.fill(0.0);
        let mut scale = 0.0f64;
        for it in 1..=50 {
            self.forces_and_stiffness(body, act, r.q.as_slice(), forces, false)?;
            let residual = &self.weight * g + &self.terms.force;
            scale = scale.max((&self.weight * g).norm()).max(residual.norm());
            let k = self.terms.stiffness.clone();
            let dq = match Cholesky::new(k) {
                Some(c) => c.solve(&residual),
                None => {
                    self.forces_and_stiffness(body, act, r.q.as_slice(), forces, true)?;
                    Cholesky::new(self.terms.stiffness.clone())
                        .ok_or_else(|| {
                            Error::invalid(
                                format!("soft_body.{} (reduced)", body.name()),
                                "the reduced stiffness is not positive definite at the static start",
                            )
                        })?
                        .solve(&residual)
                }
            };
            r.q += &dq;
            if residual.norm() <= 1e-10 * scale.max(f64::MIN_POSITIVE) || dq.norm() < 1e-15 {
                return Ok(it);
            }
        }
        Err(Error::invalid(
            format!("soft_body.{} (reduced)", body.name()),
            "the reduced static equilibrium did not converge in 50 Newton iterations",
        ))
    }

    /// The first reduced coordinate of `r` outside its training range widened by a tenth of
    /// the range on each side: (mode, value, [min, max]).
    pub fn outside_training(&self, r: &ReducedState) -> Option<(usize, f64, [f64; 2])> {
        r.q.iter()
            .zip(&self.q_range)
            .enumerate()
            .find_map(|(j, (&q, &[lo, hi]))| {
                let margin = 0.1 * (hi - lo);
                (q < lo - margin || q > hi + margin).then_some((j, q, [lo, hi]))
            })
    }

    /// f̂ + f̂_a and K̂ + VᵀK_aV into `self.terms` at `q`.
    fn forces_and_stiffness(
        &mut self,
        body: &SoftBody,
        act: &BodyActuation,
        q: &[f64],
        forces: &[f64],
        positive_part: bool,
    ) -> Result<()> {
        self.terms.clear();
        let tangent = if positive_part {
            Tangent::PositivePart
        } else {
            Tangent::Exact
        };
        for (e, w) in &self.elements {
            e.add_to(body, q, *w, tangent, &mut self.terms)?;
        }
        self.terms.mirror_stiffness();
        for (i, c) in &mut self.cables {
            let lambda = forces[*i];
            if lambda != 0.0 {
                let tangent = act.actuators[*i].kind.tangent_in_step();
                let ReducedTerms {
                    force, stiffness, ..
                } = &mut self.terms;
                c.add(q, lambda, tangent, force, stiffness);
            }
        }
        if self.actuator_nodes.is_empty() || forces.iter().all(|f| *f == 0.0) {
            return Ok(());
        }
        // The other actuators' λ (the cables' were added above).
        self.other.clear();
        self.other
            .extend(act.actuators.iter().zip(forces).map(|(a, f)| match a.kind {
                ActuatorKind::Cable(_) => 0.0,
                _ => *f,
            }));
        let forces = &self.other[..];
        let rest = body.rest_positions();
        for &n in &self.actuator_nodes {
            self.x[n] = rest[n] + self.basis.displacement(n, q);
            self.nodal[n] = Vec3::zeros();
        }
        for (a, f) in act.actuators.iter().zip(forces) {
            if *f != 0.0 {
                self.rows.clear();
                a.add_forces(&self.x, *f, &mut self.rows, &mut self.nodal);
            }
        }
        for &n in &self.actuator_nodes {
            self.basis
                .add_force(n, &self.nodal[n], self.terms.force.as_mut_slice());
        }
        if self.actuator_tangent {
            for j in 0..self.modes() {
                for &n in &self.actuator_nodes {
                    self.w[n] = Vec3::from_fn(|c, _| self.basis.row(n, c)[j]);
                    self.nodal[n] = Vec3::zeros();
                }
                add_tangent_action(act, &self.x, forces, &self.w, 1.0, &mut self.nodal);
                for &n in &self.actuator_nodes {
                    let f = self.nodal[n];
                    for c in 0..3 {
                        for (i, v) in self.basis.row(n, c).iter().enumerate() {
                            self.terms.stiffness[(i, j)] += v * f[c];
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// a ← (a + aᵀ)/2.
fn symmetrise(a: &mut DMat) {
    let k = a.nrows();
    for i in 0..k {
        for j in 0..i {
            let m = 0.5 * (a[(i, j)] + a[(j, i)]);
            a[(i, j)] = m;
            a[(j, i)] = m;
        }
    }
}

/// M̂ = VᵀMV (the body's mass on its pattern) and VᵀM per unit gravity (lumped node masses,
/// as the full step's weight).
fn mass_projections(body: &SoftBody, basis: &NodalBasis, v: &DMat) -> (DMat, DMat) {
    let k = v.ncols();
    let pattern = body.pattern();
    let mut mass = DMat::zeros(k, k);
    let mut mv = vec![0.0; v.nrows()];
    for j in 0..k {
        mv.fill(0.0);
        pattern.symmetric_product(body.mass_values(), v.column(j).as_slice(), &mut mv);
        for i in 0..k {
            mass[(i, j)] = v.column(i).dot(&DVec::from_column_slice(&mv));
        }
    }
    symmetrise(&mut mass);
    let mut weight = DMat::zeros(k, 3);
    for (n, m) in body.node_masses().iter().enumerate() {
        for c in 0..3 {
            for (j, b) in basis.row(n, c).iter().enumerate() {
                weight[(j, c)] += m * b;
            }
        }
    }
    (mass, weight)
}

/// What a reduced model needs of the scene it steps: [`check_reducible`], the same body and
/// the same fingerprint.
fn check_scene(scene: &Scene, model: &ReducedModel) -> Result<()> {
    check_reducible(scene)?;
    let body = &scene.bodies[0];
    if body.name() != model.body {
        return Err(Error::invalid(
            "--reduced",
            format!(
                "the model reduces soft body `{}`, the scene's body is `{}`",
                model.body,
                body.name()
            ),
        ));
    }
    let print = fingerprint(body, scene.body_actuation(0));
    if print != model.fingerprint || body.pattern().dofs().n_reduced() != model.dofs {
        return Err(Error::invalid(
            "--reduced",
            format!(
                "the model was built for another mesh, fixed nodes, actuators or law of `{}` (fingerprint {} against the scene's {print}): run `diffsoro reduce` on this scene",
                body.name(),
                model.fingerprint
            ),
        ));
    }
    Ok(())
}

/// What reduced models take: one soft body, no contact or rigid bodies, the linearised step,
/// force-driven actuators without value bounds. Errors name what is not taken.
pub fn check_reducible(scene: &Scene) -> Result<()> {
    let unsupported = |what: &str| {
        Err(Error::invalid(
            "the scene",
            format!("reduced models do not take {what} yet: run the full model"),
        ))
    };
    if scene.bodies.len() != 1 {
        return unsupported("scenes of several soft bodies");
    }
    if scene.contact.is_active() || !scene.rigid.systems.is_empty() {
        return unsupported("contact or rigid bodies");
    }
    if scene.simulation.newton_iterations > 1 {
        return unsupported("full Newton (simulation.newton_iterations > 1)");
    }
    let act = scene.body_actuation(0);
    for a in &act.actuators {
        if matches!(a.kind, ActuatorKind::Servo(_)) || is_solved(a) {
            return Err(Error::invalid(
                format!("actuator {}", a.name),
                "reduced models take force-driven actuators without value bounds only, so far (a displacement target, value bounds or a servo is solved in the full step)",
            ));
        }
    }
    Ok(())
}
