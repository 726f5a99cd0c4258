//! Stages 1–4 of a soft body's step (the module doc of `scene::step`): the free velocity
//! v_free = v + Δv from A Δv = h (f_ext + f(x) − D v) − h² K̂ v, one linearised Newton iteration
//! by default, full Newton with a line search when `newton_iterations > 1` (`newton`); and the
//! factorisation of A that the contact stage and every derivative reuse. [`free_step`] reads
//! as the list of its stages.

use faer::dyn_stack::MemStack;

use crate::error::{Error, Result};
use crate::fem::{SoftBody, Stiffness};
use crate::linalg::{NumericFactor, axpby};
use crate::math::Vec3;
use crate::scene::model::BodyState;
use crate::scene::model::actuation::BodyActuation;
use crate::scene::step::clock::{StageClock, timed};

use super::actuation::{TargetSolve, add_force_driven, begin_step, solve_target_driven};
use super::actuator_tangent::add_tangent_action;
use super::newton::refine;
use super::prescribed::{add_linear_coupling, prescribe};
use super::workspace::FreeWorkspace;

/// The step's constants of one body: h, gravity, and the Rayleigh coefficients as they scale
/// M and K in A = c_m M + c_k K̂ (c_m = 1 + hα, c_k = hβ + h²).
#[derive(Debug, Clone, Copy)]
pub(in crate::scene) struct StepConstants {
    pub h: f64,
    pub g: Vec3,
    pub alpha: f64,
    pub beta: f64,
    pub c_m: f64,
    pub c_k: f64,
}

impl StepConstants {
    /// The constants of `body` for a step of `h` (s) under gravity `g` (m/s²).
    pub fn new(body: &SoftBody, h: f64, g: Vec3) -> StepConstants {
        let opts = body.options();
        let (alpha, beta) = (opts.rayleigh_mass, opts.rayleigh_stiffness);
        StepConstants {
            h,
            g,
            alpha,
            beta,
            c_m: 1.0 + h * alpha,
            c_k: h * beta + h * h,
        }
    }
}

/// Stages 1–4 of one body: its free velocity v_free (reduced) in `ws.vp_red`, the actuators'
/// λ of this step in `forces`; K(xₙ) in `ws.elastic.stiffness` is the projected K̂ when the
/// exact one left A indefinite (`SoftBody::project_stiffness`); returns (Newton iterations, final residual if evaluated).
#[allow(clippy::too_many_arguments)]
pub(in crate::scene) fn free_step(
    body: &SoftBody,
    act: &BodyActuation,
    ws: &mut FreeWorkspace,
    bs: &BodyState,
    forces: &mut [f64],
    h: f64,
    g: Vec3,
    newton: usize,
) -> Result<(usize, Option<f64>)> {
    let k = StepConstants::new(body, h, g);
    let mut clock = StageClock::start();
    // Stage 1: forces and stiffness at xₙ.
    body.evaluate_elastic(&bs.positions, Stiffness::Assemble, &mut ws.elastic)?;
    ws.parts.elastic = clock.lap();
    // Stage 1b: this step's actuator inputs (ramped forces, targets), and the prescribed
    // motion of pinned servo horns, v_p⁺ (`prescribed`).
    begin_step(act, &mut ws.actuation, &bs.positions, forces);
    prescribe(
        body,
        act,
        &mut ws.prescribed,
        &bs.positions,
        &bs.velocities,
        h,
    )?;
    // Stage 2: A.
    assemble_matrix(body, act, ws, bs, forces, &k);
    ws.parts.assembly = clock.lap();
    // Stages 3 and 4: the right-hand side b while A is factorised. When A is not positive
    // definite (the exact elastic tangent of elements under compression, `fem::tangent_projection`),
    // the step is taken again with every element's tangent projected onto its positive part,
    // K̂ in A and in b alike: a step that factorises is never changed.
    if let Err(indefinite) = factorise_and_assemble_rhs(body, act, ws, bs, forces, &k) {
        if body.project_stiffness(&bs.positions, &mut ws.elastic.stiffness)? == 0 {
            return Err(indefinite);
        }
        assemble_matrix(body, act, ws, bs, forces, &k);
        factorise_and_assemble_rhs(body, act, ws, bs, forces, &k)?;
    }
    clock.lap();
    // Stage 4: Δv = A⁻¹ b with the displacement-driven actuators' λ, v_free = v + Δv.
    solve_free_velocity(body, act, ws, bs, forces, h);
    // Full Newton's further iterations on the same equation.
    let outcome = if newton > 1 {
        refine(body, act, ws, bs, forces, &k, newton)?
    } else {
        (1, None)
    };
    ws.parts.solve = clock.lap();
    Ok(outcome)
}

/// Stage 2: A = (1 + hα) M + (hβ + h²)(K + K_a), K_a(xₙ) the force-driven cables' tangent
/// (`actuator_tangent`), into `ws.a`.
fn assemble_matrix(
    body: &SoftBody,
    act: &BodyActuation,
    ws: &mut FreeWorkspace,
    bs: &BodyState,
    forces: &[f64],
    k: &StepConstants,
) {
    ws.a.copy_from_slice(&ws.elastic.stiffness);
    axpby(k.c_m, body.mass_values(), k.c_k, &mut ws.a);
    ws.tangent.add(act, &bs.positions, forces, k.c_k, &mut ws.a);
}

/// Stages 3 and 4, independent: the right-hand side b into `ws.rhs` while A is factorised, on
/// two threads at once (in turn on one). Each part is timed on its own thread, so on two
/// threads the assembly and the factorisation overlap.
fn factorise_and_assemble_rhs(
    body: &SoftBody,
    act: &BodyActuation,
    ws: &mut FreeWorkspace,
    bs: &BodyState,
    forces: &[f64],
    k: &StepConstants,
) -> Result<()> {
    let FreeWorkspace {
        a,
        factor,
        elastic,
        rhs,
        v_red,
        actuation,
        tangent,
        nodal_v,
        nodal_f,
        prescribed,
        ..
    } = &mut *ws;
    let dofs = body.pattern().dofs();
    // Stage 3, b = h (f_ext + f − αMv) − (hβ + h²) K v over the free DOFs (K_a below).
    let assemble_rhs = || {
        weight_and_elastic_impulse(body, &elastic.forces, k.h, k.g, rhs);
        dofs.gather_nodal(&bs.velocities, v_red);
        body.pattern().symmetric_product_add_pair(
            body.mass_values(),
            -k.h * k.alpha,
            &elastic.stiffness,
            -k.c_k,
            v_red,
            rhs,
        );
        // Stage 3b: force-driven actuators, + h H_aᵀλ_a at xₙ.
        add_force_driven(act, actuation, dofs, &bs.positions, forces, None, k.h, rhs);
        // Stage 3b': − (hβ + h²) K_a v over the free DOFs.
        if !tangent.is_empty() {
            dofs.scatter_nodal(v_red, nodal_v);
            nodal_f.iter_mut().for_each(|f| *f = Vec3::zeros());
            add_tangent_action(act, &bs.positions, forces, nodal_v, 1.0, nodal_f);
            dofs.add_nodal(nodal_f, -k.c_k, rhs);
        }
        // Stage 3c: coupling of the free rows to the prescribed velocities.
        add_linear_coupling(prescribed, dofs, k.c_m, k.c_k, rhs);
    };
    let ((factored, factorisation), ((), assembly)) = rayon::join(
        || timed(|| factorize(body, factor, a)),
        || timed(assemble_rhs),
    );
    ws.parts.assembly += assembly;
    ws.parts.factorisation = factorisation;
    factored
}

/// Stage 4: Δv = A⁻¹ b in `ws.rhs`, with the displacement-driven actuators' λ solved so that
/// δ(x⁺) reaches its target (stage 4b, into `forces`), and v_free = v + Δv in `ws.vp_red`.
fn solve_free_velocity(
    body: &SoftBody,
    act: &BodyActuation,
    ws: &mut FreeWorkspace,
    bs: &BodyState,
    forces: &mut [f64],
    h: f64,
) {
    let stack = MemStack::new(&mut ws.solve_buffer);
    ws.factor.solve_vec_in_place(&mut ws.rhs, stack);
    solve_target_driven(
        act,
        &mut ws.actuation,
        body.pattern().dofs(),
        &ws.factor,
        &bs.positions,
        TargetSolve::Step { v: &ws.v_red },
        h,
        &mut ws.rhs,
        forces,
    );
    for ((vp, v), dv) in ws.vp_red.iter_mut().zip(&ws.v_red).zip(&ws.rhs) {
        *vp = v + dv;
    }
}

/// Factorises `a` into `factor`; a non-positive pivot becomes an error naming the body and
/// node.
pub(super) fn factorize(body: &SoftBody, factor: &mut NumericFactor, a: &[f64]) -> Result<()> {
    factor.factorize(body.pattern(), a).map_err(|e| {
        Error::invalid(
            format!("soft_body.{}", body.name()),
            format!("the step matrix A = M + hD + h²K is not positive definite ({e}); reduce simulation.dt or check for inverted elements"),
        )
    })
}

/// `out = scale (mₙ g + fₙ)` over the free DOFs (reduced order): the weight and elastic
/// forces `forces` (N) as an impulse (N·s for `scale = h`).
pub(super) fn weight_and_elastic_impulse(
    body: &SoftBody,
    forces: &[Vec3],
    scale: f64,
    g: Vec3,
    out: &mut [f64],
) {
    let masses = body.node_masses();
    for (o, (n, k)) in out.iter_mut().zip(body.pattern().dofs().free_components()) {
        *o = scale * (masses[n] * g[k] + forces[n][k]);
    }
}
