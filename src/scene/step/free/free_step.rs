//! Stages 1–4 of a soft body's step (the module doc of `scene::step`): the free velocity
//! v_free = v + Δv from A Δv = h (f_ext + f(x) − D v) − h² K̂ v, one linearised Newton iteration
//! by default, full Newton with a line search when `newton_iterations > 1`; and the
//! factorisation of A that the contact stage and every derivative reuse.

use faer::dyn_stack::MemStack;

use crate::error::{Error, Result};
use crate::fem::{SoftBody, Stiffness};
use crate::linalg::{NumericFactor, axpby};
use crate::math::Vec3;
use crate::scene::model::BodyState;
use crate::scene::model::actuation::BodyActuation;
use crate::scene::step::free::actuation::{
    TargetSolve, add_force_driven, begin_step, solve_target_driven, targets_met,
};
use crate::scene::step::free::actuator_tangent::add_tangent_action;
use crate::scene::step::free::prescribed::{add_linear_coupling, add_newton_coupling, prescribe};

use crate::scene::step::BodyWorkspace;

/// Stages 1–4 of one body: its free velocity v_free (reduced) in `ws.vp_red`; returns
/// (iterations, final residual if evaluated).
#[allow(clippy::too_many_arguments)]
pub(in crate::scene) fn free_step(
    body: &SoftBody,
    act: &BodyActuation,
    ws: &mut BodyWorkspace,
    bs: &BodyState,
    forces: &mut [f64],
    h: f64,
    g: Vec3,
    newton: usize,
) -> Result<(usize, Option<f64>)> {
    let pattern = body.pattern();
    let dofs = pattern.dofs();
    let opts = body.options();
    let (alpha, beta) = (opts.rayleigh_mass, opts.rayleigh_stiffness);
    let (c_m, c_k) = (1.0 + h * alpha, h * beta + h * h);

    let mut clock = std::time::Instant::now();
    let mut lap = || {
        let now = std::time::Instant::now();
        let dt = (now - clock).as_secs_f64();
        clock = now;
        dt
    };
    // Stage 1: forces and stiffness at xₙ.
    body.evaluate_elastic(&bs.positions, Stiffness::Assemble, &mut ws.elastic)?;
    ws.free_parts.elastic = lap();
    // Stage 1b: this step's actuator inputs (ramped forces, targets), and the prescribed
    // motion of pinned servo horns, v_p⁺ (scene::step::free::prescribed).
    begin_step(act, &mut ws.actuation, &bs.positions, forces);
    prescribe(
        body,
        act,
        &mut ws.prescribed,
        &bs.positions,
        &bs.velocities,
        h,
    )?;
    // Stage 2: A = (1 + hα) M + (hβ + h²)(K + K_a), K_a(xₙ) the force-driven cables'
    // tangent (scene::step::free::actuator_tangent).
    ws.a.copy_from_slice(&ws.elastic.stiffness);
    axpby(c_m, body.mass_values(), c_k, &mut ws.a);
    ws.tangent.add(act, &bs.positions, forces, c_k, &mut ws.a);
    ws.free_parts.assembly = lap();
    // Stages 3 and 4 are independent: b is assembled while A is factorised, on two threads
    // at once (in turn on one). Each part is timed on its own thread, so on two threads the
    // assembly and the factorisation overlap.
    let BodyWorkspace {
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
    let applied = &*forces;
    // Stage 3, b = h (f_ext + f − αMv) − (hβ + h²) K v over the free DOFs (K_a below).
    let assemble_rhs = || {
        weight_and_elastic_impulse(body, &elastic.forces, h, g, rhs);
        dofs.gather_nodal(&bs.velocities, v_red);
        pattern.symmetric_product_add_pair(
            body.mass_values(),
            -h * alpha,
            &elastic.stiffness,
            -c_k,
            v_red,
            rhs,
        );
        // Stage 3b: force-driven actuators, + h H_aᵀλ_a at xₙ.
        add_force_driven(act, actuation, dofs, &bs.positions, applied, None, h, rhs);
        // Stage 3b': − (hβ + h²) K_a v over the free DOFs.
        if !tangent.is_empty() {
            dofs.scatter_nodal(v_red, nodal_v);
            nodal_f.iter_mut().for_each(|f| *f = Vec3::zeros());
            add_tangent_action(act, &bs.positions, applied, nodal_v, 1.0, nodal_f);
            dofs.add_nodal(nodal_f, -c_k, rhs);
        }
        // Stage 3c: coupling of the free rows to the prescribed velocities.
        add_linear_coupling(prescribed, dofs, c_m, c_k, rhs);
    };
    let ((factored, factorisation), ((), assembly)) = rayon::join(
        || timed(|| factorize(body, factor, a)),
        || timed(assemble_rhs),
    );
    ws.free_parts.assembly += assembly;
    ws.free_parts.factorisation = factorisation;
    factored?;
    lap();
    let stack = MemStack::new(&mut ws.solve_buffer);
    ws.factor.solve_vec_in_place(&mut ws.rhs, stack);
    // Stage 4b: displacement-driven actuators, λ_a solved so δ(x⁺) reaches its target.
    solve_target_driven(
        act,
        &mut ws.actuation,
        dofs,
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

    let mut iterations = 1;
    let mut residual = None;
    if newton > 1 {
        if beta != 0.0 {
            // The damping's stiffness K(xₙ) + K_a(xₙ) (scene::step::free::actuator_tangent).
            ws.k_start.copy_from_slice(&ws.elastic.stiffness);
            ws.tangent
                .add(act, &bs.positions, forces, 1.0, &mut ws.k_start);
        }
        let scale = residual_scale(body, bs, h, g, &ws.elastic.forces);
        let targets = act.has_targets();
        let mut r_norm = newton_residual(body, act, ws, bs, forces, h, g)?;
        // The actuators' loads (as given or first solved) are terms of R too.
        let scale = scale
            + h * ws
                .actuation
                .nodal_forces()
                .iter()
                .map(|f| f.norm_squared())
                .sum::<f64>()
                .sqrt();
        let mut at_floor = false;
        while iterations < newton
            && !at_floor
            && (r_norm > 1e-13 * scale
                || !targets_met(act, &ws.actuation, &ws.x_trial, forces, 1e-12))
        {
            // Jacobian J = (1 + hα) M + hβ (K + K_a)(xₙ) + h² (K + K_a)(xₖ), with K(xₖ) from
            // the residual.
            ws.a.copy_from_slice(&ws.elastic.stiffness);
            axpby(c_m, body.mass_values(), h * h, &mut ws.a);
            ws.tangent.add(act, &ws.x_trial, forces, h * h, &mut ws.a);
            if beta != 0.0 {
                axpby(h * beta, &ws.k_start, 1.0, &mut ws.a);
            }
            factorize(body, &mut ws.factor, &ws.a)?;
            // Newton direction d = −J⁻¹R (ws.rhs holds R), with the solved actuators' λ
            // re-solved at xₖ so that δ(xₖ) + h H d meets the targets; backtracking on ‖R‖
            // (a full step is always tried with targets: λ changes R).
            let stack = MemStack::new(&mut ws.solve_buffer);
            ws.factor.solve_vec_in_place(&mut ws.rhs, stack);
            for (d, r) in ws.direction.iter_mut().zip(&ws.rhs) {
                *d = -r;
            }
            solve_target_driven(
                act,
                &mut ws.actuation,
                dofs,
                &ws.factor,
                &bs.positions,
                TargetSolve::Newton { x_k: &ws.x_trial },
                h,
                &mut ws.direction,
                forces,
            );
            ws.base.copy_from_slice(&ws.vp_red);
            let mut step = 1.0;
            loop {
                for ((vp, b), d) in ws.vp_red.iter_mut().zip(&ws.base).zip(&ws.direction) {
                    *vp = b + step * d;
                }
                let trial = newton_residual(body, act, ws, bs, forces, h, g);
                match trial {
                    Ok(r) if r < r_norm || (targets && step == 1.0) => {
                        // With targets, a residual that no longer halves while they are met
                        // sits at its round-off floor: stop.
                        if targets
                            && r > 0.5 * r_norm
                            && targets_met(act, &ws.actuation, &ws.x_trial, forces, 1e-12)
                        {
                            at_floor = true;
                        }
                        r_norm = r;
                        break;
                    }
                    _ if step < 1e-4 => {
                        ws.vp_red.copy_from_slice(&ws.base);
                        r_norm = newton_residual(body, act, ws, bs, forces, h, g)?;
                        iterations = newton; // no progress: stop iterating
                        break;
                    }
                    _ => step *= 0.5,
                }
            }
            iterations += 1;
        }
        iterations = iterations.min(newton);
        residual = Some(r_norm);
    }

    ws.free_parts.solve = lap();
    Ok((iterations, residual))
}

/// `f()` and its wall time (s).
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let start = std::time::Instant::now();
    let out = f();
    (out, start.elapsed().as_secs_f64())
}

/// Factorises `a` into `factor`; a non-positive pivot becomes an error naming the body and
/// node.
fn factorize(body: &SoftBody, factor: &mut NumericFactor, a: &[f64]) -> Result<()> {
    factor.factorize(body.pattern(), a).map_err(|e| {
        Error::invalid(
            format!("soft_body.{}", body.name()),
            format!("the step matrix A = M + hD + h²K is not positive definite ({e}); reduce simulation.dt or check for inverted elements"),
        )
    })
}

/// Evaluates R(v⁺) = M(v⁺ − v) − h (f_ext + f(x + h v⁺) − D v⁺) into `ws.rhs` (reduced, N·s)
/// with D = αM + β(K + K_a)(xₙ) and f_ext including the actuators (λ from `forces`, at x + h v⁺) and
/// the coupling to prescribed nodes, K(x + h v⁺) into `ws.elastic.stiffness`, and returns ‖R‖₂.
fn newton_residual(
    body: &SoftBody,
    act: &BodyActuation,
    ws: &mut BodyWorkspace,
    bs: &BodyState,
    forces: &[f64],
    h: f64,
    g: Vec3,
) -> Result<f64> {
    let pattern = body.pattern();
    let dofs = pattern.dofs();
    let opts = body.options();
    ws.full.fill(0.0);
    dofs.expand(&ws.vp_red, &mut ws.full);
    ws.prescribed.fill_full(&mut ws.full);
    for (n, x) in ws.x_trial.iter_mut().enumerate() {
        *x =
            bs.positions[n] + h * Vec3::new(ws.full[3 * n], ws.full[3 * n + 1], ws.full[3 * n + 2]);
    }
    body.evaluate_elastic(&ws.x_trial, Stiffness::Assemble, &mut ws.elastic)?;
    weight_and_elastic_impulse(body, &ws.elastic.forces, -h, g, &mut ws.rhs);
    add_force_driven(
        act,
        &mut ws.actuation,
        dofs,
        &ws.x_trial,
        forces,
        Some(&bs.positions),
        -h,
        &mut ws.rhs,
    );
    add_newton_coupling(
        &ws.prescribed,
        dofs,
        h,
        opts.rayleigh_mass,
        opts.rayleigh_stiffness,
        &mut ws.rhs,
    );
    // + M(v⁺ − v) + hα M v⁺ + hβ K(xₙ) v⁺
    for ((t, vp), v) in ws.tmp.iter_mut().zip(&ws.vp_red).zip(&ws.v_red) {
        *t = (1.0 + h * opts.rayleigh_mass) * vp - v;
    }
    pattern.symmetric_product_add(body.mass_values(), 1.0, &ws.tmp, &mut ws.rhs);
    if opts.rayleigh_stiffness != 0.0 {
        pattern.symmetric_product_add(
            &ws.k_start,
            h * opts.rayleigh_stiffness,
            &ws.vp_red,
            &mut ws.rhs,
        );
    }
    Ok(ws.rhs.iter().map(|r| r * r).sum::<f64>().sqrt())
}

/// The size of the terms of R (N·s), to make the Newton tolerance relative.
fn residual_scale(body: &SoftBody, bs: &BodyState, h: f64, g: Vec3, forces: &[Vec3]) -> f64 {
    let m = body.node_masses();
    let elastic: f64 = forces
        .iter()
        .map(|f| (h * f).norm_squared())
        .sum::<f64>()
        .sqrt();
    let momentum: f64 = bs
        .velocities
        .iter()
        .zip(m)
        .map(|(v, m)| (*m * v).norm_squared())
        .sum::<f64>()
        .sqrt();
    let weight: f64 = m
        .iter()
        .map(|m| (h * m * g).norm_squared())
        .sum::<f64>()
        .sqrt();
    momentum + weight + elastic + f64::MIN_POSITIVE.sqrt()
}

/// `out = scale (mₙ g + fₙ)` over the free DOFs (reduced order): the weight and elastic
/// forces `forces` (N) as an impulse (N·s for `scale = h`).
fn weight_and_elastic_impulse(
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
