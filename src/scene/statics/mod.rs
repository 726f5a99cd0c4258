//! Static equilibrium (`simulate --static`): per body, find x with f(x) + f_ext = 0 on the
//! free degrees of freedom, by Newton's method on the total potential
//! Π(x) = E(x) − Σₙ mₙ g·xₙ (exact tangent K = ∂²E/∂x²), with an Armijo line search on Π (or,
//! near convergence where Π is flat to round-off, a halving of the residual) and
//! load stepping (the load factor s ∈ (0, 1] is halved when Newton fails at s).
//! Force-driven actuators are loads too: f_a = ∂(σλδ)/∂x joins the residual and −σλδ(x) the
//! potential, both scaled by s. A cable's stiffness s K_a = −s ∂f_a/∂x (λ ∂²L/∂x², positive
//! semi-definite) is in the Newton matrix, K + s K_a, as in the step's (the body's pattern
//! holds the cable segments' couplings, `scene::step::free::actuator_tangent`); the other actuators'
//! (a cavity's −p ∂²V/∂x², a torque-driven servo's, a solved λ's) join the Newton step by
//! conjugate gradients preconditioned with that matrix (`refine`).
//! Displacement- and volume-driven actuators are equality constraints δ(x) = δ₀ + s(t − δ₀)
//! with their λ as unknowns (bounds respected): each Newton iteration re-solves λ so that
//! δ(x) + H dx meets the target (`scene::model::actuation::solve_target_driven`, K in place of A), and
//! the line search then works on ‖r‖ instead of Π (a full step is always tried). Angle-driven
//! servos pin their horn nodes at the rigid rotation by θ₀ + s(θ − θ₀) (`scene::step::free::prescribed`);
//! their λ is the reaction torque −Σ ((x − o) × (f + m g + f_a))·a on the horn nodes.
//! Per-step limits (`max_*_step`) do not apply: statics has no steps.
//! A law without exact tangent (`corotational_sofa`) solves its own equilibrium
//! f(x) + f_ext = 0, but its stiffness R K₀ Rᵀ lacks the stress-dependent terms of the
//! rotation's derivative: on a slender body under large rotation (the Trunk sagging 150 mm)
//! those terms are of the order of the soft global modes' stiffness and Newton with R K₀ Rᵀ
//! diverges. Its Newton matrix is therefore the exact tangent of `corotational` (same E, ν) at
//! the same x, whose forces differ from it by O(strain × rotation mismatch); Newton then
//! converges linearly (more iterations are allowed), and Π uses the law's own energy
//! Σ V Ψ(F; R) (R held at each x), with the residual test as fallback.

use std::sync::Arc;

use faer::dyn_stack::{MemBuffer, MemStack};

use crate::actuator::Drive;
use crate::error::{Error, Result};
use crate::fem::{SoftBody, Stiffness};
use crate::linalg::{FactorKind, NumericFactor, SymbolicFactor, axpby, norm};
use crate::material::{Law, Material};
use crate::math::Vec3;

use crate::scene::model::actuation::BodyActuation;
use crate::scene::model::pinned_servo::servo_of;
use crate::scene::model::{BodyState, Scene, State};
use crate::scene::step::free::actuation::{
    ActuationWorkspace, TargetSolve, begin_static, solve_target_driven, targets_met,
};
use crate::scene::step::free::actuator_tangent::{ActuatorTangent, derivative_outside_step};
use crate::scene::step::free::prescribed::place_pinned;

mod derivative;
mod refine;

pub use derivative::{StaticInput, StaticTangent};
use refine::{ActuatedTangent, Refinement};

/// For a law without exact tangent, the body whose stiffness is the Newton matrix: the same
/// body under `corotational` (same E, ν), whose exact tangent includes the stress-dependent
/// (geometric) terms that R K₀ Rᵀ lacks. None for the other laws (their own K).
fn newton_tangent_body(body: &SoftBody) -> Result<Option<SoftBody>> {
    let m = body.material();
    if m.law().has_exact_tangent() {
        return Ok(None);
    }
    let mut twin = body.clone();
    twin.set_material(Material::new(
        Law::Corotational,
        m.young_modulus(),
        m.poisson_ratio(),
    )?);
    Ok(Some(twin))
}

/// Newton iterations per load step, as a multiple of [`StaticOptions::max_iterations`], for a
/// law without exact tangent (linear convergence).
const INEXACT_ITERATIONS_FACTOR: usize = 4;

/// Settings of the static solve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StaticOptions {
    /// Converged when ‖f + s f_ext‖ ≤ tolerance · (‖s f_ext‖ + ‖f‖) on the free DOFs (default
    /// 1e-9; the floor set by round-off in the nodal force sums is about 1e-10).
    pub tolerance: f64,
    /// Also converged when the last Newton increment ‖Δx‖∞ ≤ this · the bounding-box diagonal.
    pub increment_tolerance: f64,
    /// Newton iterations allowed per load step.
    pub max_iterations: usize,
    /// Load steps allowed in all (halvings included).
    pub max_load_steps: usize,
}

impl Default for StaticOptions {
    fn default() -> Self {
        StaticOptions {
            tolerance: 1e-9,
            increment_tolerance: 1e-11,
            max_iterations: 50,
            max_load_steps: 64,
        }
    }
}

/// What the static solve did for one body.
#[derive(Debug, Clone, PartialEq)]
pub struct StaticReport {
    /// Newton iterations in all load steps.
    pub iterations: usize,
    /// Load steps taken (1 when the full load converged at once).
    pub load_steps: usize,
    /// Final relative residual ‖f + f_ext‖ / (‖f_ext‖ + ‖f‖).
    pub residual: f64,
}

/// Solves every body of `scene` for static equilibrium under gravity, starting from `state`
/// (velocities are set to zero), and writes every actuator's λ into `state.actuator_forces`
/// (the given force, the solved one, a servo's reaction torque). Errors when a body does not
/// converge, naming it, and when the scene has contact (obstacles, self-contact or contact
/// between bodies: contact in statics is not supported yet).
pub fn solve_static(
    scene: &Scene,
    state: &mut State,
    options: StaticOptions,
) -> Result<Vec<StaticReport>> {
    if scene.contact.is_active() {
        let what = if !scene.contact.obstacles.is_empty() {
            "obstacle"
        } else if scene.contact.settings.self_contact {
            "contact.self_contact"
        } else {
            "contact.between_bodies"
        };
        return Err(Error::invalid(
            what,
            "static equilibrium with contact is not supported yet: drop --static and step in time with damping (e.g. rayleigh_mass) until the scene settles, or remove the contact ([[obstacle]] sections, self_contact, between_bodies)",
        ));
    }
    let g = scene.gravity();
    if state.actuator_forces.len() != scene.bodies.len() {
        state.actuator_forces = (0..scene.bodies.len())
            .map(|i| scene.body_actuation(i).initial_forces())
            .collect();
    }
    scene
        .bodies
        .iter()
        .zip(&mut state.bodies)
        .zip(&mut state.actuator_forces)
        .enumerate()
        .map(|(i, ((body, bs), forces))| {
            let act = scene.body_actuation(i);
            // Statics applies the given forces in full (no ramp), solved λ from the state.
            for ((f, given), a) in forces
                .iter_mut()
                .zip(act.given_forces())
                .zip(&act.actuators)
            {
                if let Drive::Force(_) = a.drive {
                    *f = given;
                }
            }
            solve_body(body, act, bs, forces, g, options)
        })
        .collect()
}

/// The total potential of one body under the load factor `s`: evaluates
/// Π(x) = E(x) − s Σₙ mₙ g·xₙ and the reduced residual r = f(x) + s m g = −∂Π/∂x.
struct Potential<'a> {
    body: &'a SoftBody,
    act: &'a BodyActuation,
    /// λ of every actuator: force-driven ones scaled by s, solved ones as they are.
    forces: Vec<f64>,
    rows: Vec<(usize, Vec3)>,
    actuator_forces: Vec<Vec3>,
    g: Vec3,
    elastic: crate::fem::ElasticState,
    full: Vec<f64>,
}

impl Potential<'_> {
    /// Writes r into `r` (free DOFs); returns (Π, the force scale ‖f‖ + ‖s m g‖ of the free
    /// nodes). With `Stiffness::Assemble`, K(x) is left in `self.elastic.stiffness`.
    fn evaluate(
        &mut self,
        x: &[Vec3],
        s: f64,
        stiffness: Stiffness,
        r: &mut [f64],
    ) -> Result<(f64, f64)> {
        let body = self.body;
        body.evaluate_elastic(x, stiffness, &mut self.elastic)?;
        self.actuator_forces.fill(Vec3::zeros());
        self.act.add_driven_forces(
            x,
            &self.forces,
            s,
            &mut self.rows,
            &mut self.actuator_forces,
        );
        self.act.add_solved_forces(
            x,
            &self.forces,
            1.0,
            &mut self.rows,
            &mut self.actuator_forces,
        );
        let mut work = s * self.act.driven_work(x, &self.forces);
        let mut force_sq = 0.0;
        for (n, out) in self.full.chunks_exact_mut(3).enumerate() {
            let weight = s * body.node_masses()[n] * self.g;
            let load = weight + self.actuator_forces[n];
            if !body.is_fixed(n) {
                work += weight.dot(&x[n]);
                force_sq += self.elastic.forces[n].norm_squared() + load.norm_squared();
            }
            out.copy_from_slice((self.elastic.forces[n] + load).as_slice());
        }
        body.pattern().dofs().reduce(&self.full, r);
        Ok((self.elastic.energy - work, force_sq.sqrt()))
    }
}

fn solve_body(
    body: &SoftBody,
    act: &BodyActuation,
    bs: &mut BodyState,
    forces: &mut [f64],
    g: Vec3,
    opts: StaticOptions,
) -> Result<StaticReport> {
    let pattern = body.pattern();
    let dofs = pattern.dofs();
    let what = format!("soft_body.{}", body.name());
    let symbolic = Arc::new(SymbolicFactor::new(pattern)?);
    let mut factor = NumericFactor::new(symbolic, FactorKind::Llt);
    let mut buffer = MemBuffer::new(factor.solve_scratch(1));
    let mut actuation = ActuationWorkspace::new(act, body.node_count(), &factor);
    let targets = act.has_targets();
    // A law without exact tangent (`corotational_sofa`): see the module documentation.
    let tangent_body = newton_tangent_body(body)?;
    let mut tangent_state = tangent_body.as_ref().map(SoftBody::elastic_state);
    let max_iterations = if tangent_body.is_none() {
        opts.max_iterations
    } else {
        INEXACT_ITERATIONS_FACTOR * opts.max_iterations
    };
    let mut potential = Potential {
        body,
        act,
        forces: forces.to_vec(),
        rows: Vec::new(),
        actuator_forces: vec![Vec3::zeros(); body.node_count()],
        g,
        elastic: body.elastic_state(),
        full: vec![0.0; 3 * body.node_count()],
    };
    let n = pattern.n();
    let (mut full, mut r, mut dx, mut r_trial) = (
        vec![0.0; 3 * body.node_count()],
        vec![0.0; n],
        vec![0.0; n],
        vec![0.0; n],
    );
    // The cables' stiffness s K_a, added into K to make the Newton matrix T.
    let cable_tangent = ActuatorTangent::new(act, pattern, body.rest_positions(), &what)?;
    let mut k = vec![0.0; pattern.nnz()];
    // Actuators with a stiffness outside T, which conjugate gradients bring in.
    let refine_rest = act.actuators.iter().any(derivative_outside_step);
    // With a tangent twin, the body's own K is not the Newton matrix: not assembled.
    let own_stiffness = if tangent_body.is_some() {
        Stiffness::Skip
    } else {
        Stiffness::Assemble
    };
    let mut refine = Refinement::new(body.node_count(), n);
    let mut x = bs.positions.clone();
    let x0 = bs.positions.clone();
    let [lo, hi] = body.mesh().bounding_box();
    let size = (hi - lo).norm();
    let mut trial = x.clone();
    let (mut s_done, mut s_next) = (0.0, 1.0);
    let (mut iterations, mut load_steps) = (0, 0);
    let mut last_residual = f64::INFINITY;
    while s_done < 1.0 {
        if load_steps >= opts.max_load_steps {
            return Err(Error::invalid(
                &what,
                format!(
                    "static equilibrium not reached in {} load steps (load factor {s_done:.3e}); the load may exceed what the body can carry",
                    opts.max_load_steps
                ),
            ));
        }
        load_steps += 1;
        let s = s_next;
        let start = x.clone();
        let lambda_start = potential.forces.clone();
        place_pinned(body, act, &x0, s, &mut x);
        begin_static(act, &mut actuation, &x0, s);
        let mut converged = false;
        for _ in 0..max_iterations {
            iterations += 1;
            let (pi, scale) = potential.evaluate(&x, s, own_stiffness, &mut r)?;
            last_residual = norm(&r) / scale.max(f64::MIN_POSITIVE);
            let met = targets_met(act, &actuation, &x, &potential.forces, 1e-10);
            if last_residual <= opts.tolerance && met {
                converged = true;
                break;
            }
            // Newton direction T dx = r, T = K + s K_a assembled in place of K; shift T by τM
            // (into `k`) while it is not positive definite.
            let newton = match (&tangent_body, &mut tangent_state) {
                (Some(b), Some(state)) => {
                    b.evaluate_elastic(&x, Stiffness::Assemble, state)?;
                    &mut state.stiffness
                }
                _ => &mut potential.elastic.stiffness,
            };
            cable_tangent.add(act, &x, &potential.forces, s, newton);
            let newton: &[f64] = newton;
            k.copy_from_slice(newton);
            let mut shift = 0.0;
            let mass_scale = k.iter().map(|v| v.abs()).fold(0.0, f64::max)
                / body
                    .mass_values()
                    .iter()
                    .map(|v| v.abs())
                    .fold(0.0, f64::max)
                    .max(f64::MIN_POSITIVE);
            while factor.factorize(pattern, &k).is_err() {
                shift = if shift == 0.0 {
                    1e-8 * mass_scale
                } else {
                    shift * 100.0
                };
                if shift > 1e6 * mass_scale {
                    return Err(Error::invalid(
                        &what,
                        "static solve: the stiffness cannot be made positive definite",
                    ));
                }
                k.copy_from_slice(newton);
                axpby(shift, body.mass_values(), 1.0, &mut k);
            }
            dx.copy_from_slice(&r);
            factor.solve_vec_in_place(&mut dx, MemStack::new(&mut buffer));
            if refine_rest {
                let tangent = ActuatedTangent {
                    act,
                    body,
                    k: newton,
                    x: &x,
                    forces: &potential.forces,
                    s,
                };
                tangent.refine(&factor, &mut buffer, &r, &mut dx, &mut refine);
            }
            solve_target_driven(
                act,
                &mut actuation,
                dofs,
                &factor,
                &x,
                TargetSolve::Static,
                1.0,
                &mut dx,
                &mut potential.forces,
            );
            let slope: f64 = r.iter().zip(&dx).map(|(a, b)| a * b).sum();
            // Armijo backtracking on Π (dx is a descent direction: rᵀdx > 0 with K ≻ 0).
            full.fill(0.0); // fixed nodes do not move
            dofs.expand(&dx, &mut full);
            let mut t = 1.0;
            let accepted = loop {
                for (i, p) in trial.iter_mut().enumerate() {
                    *p = x[i] + t * Vec3::new(full[3 * i], full[3 * i + 1], full[3 * i + 2]);
                }
                match potential.evaluate(&trial, s, Stiffness::Skip, &mut r_trial) {
                    // Near convergence Π changes below its round-off: then accept a step that
                    // reduces the residual instead.
                    Ok((pi_t, _))
                        if (targets && t == 1.0)
                            || (!targets && pi_t <= pi - 1e-4 * t * slope)
                            || norm(&r_trial) < 0.5 * norm(&r) =>
                    {
                        break true;
                    }
                    _ if t < 1e-6 => break false,
                    _ => t *= 0.5,
                }
            };
            if !accepted {
                break;
            }
            std::mem::swap(&mut x, &mut trial);
            // A Newton increment below round-off of the coordinates: converged (the residual
            // of very stiff bodies can sit above `tolerance` from round-off alone).
            let increment = t * dx.iter().fold(0.0f64, |m, d| m.max(d.abs()));
            if increment <= opts.increment_tolerance * size
                && targets_met(act, &actuation, &x, &potential.forces, 1e-10)
            {
                converged = true;
                break;
            }
        }
        if converged {
            s_done = s;
            s_next = 1.0;
        } else {
            x = start;
            potential.forces.copy_from_slice(&lambda_start);
            s_next = s_done + 0.5 * (s - s_done);
            if s_next - s_done < 1e-6 {
                return Err(Error::invalid(
                    &what,
                    format!(
                        "static equilibrium not reached: Newton stalls at load factor {s_done:.3e} (relative residual {last_residual:.3e})"
                    ),
                ));
            }
        }
    }
    // The servos' reaction torques: −Σ ((x − o) × (f + m g + f_a))·a over the horn nodes.
    if !act.pinned.is_empty() {
        potential.evaluate(&x, 1.0, Stiffness::Skip, &mut r)?;
        for p in &act.pinned {
            let (servo, _) = servo_of(act, p);
            potential.forces[p.actuator] = -p
                .nodes
                .iter()
                .map(|&i| {
                    let load = potential.elastic.forces[i]
                        + body.node_masses()[i] * g
                        + potential.actuator_forces[i];
                    (x[i] - servo.origin).cross(&load).dot(&servo.axis)
                })
                .sum::<f64>();
        }
    }
    forces.copy_from_slice(&potential.forces);
    bs.positions = x;
    bs.velocities.iter_mut().for_each(|v| *v = Vec3::zeros());
    Ok(StaticReport {
        iterations,
        load_steps,
        residual: last_residual,
    })
}
