//! Full Newton on the step's equation (`newton_iterations > 1`): after the linearised step,
//! which is Newton's first iteration from v⁺ = 0, iterate on
//!
//! ```text
//! R(v⁺) = M(v⁺ − v) − h (f_ext + f(x + h v⁺) − D v⁺) = 0,   D = αM + β(K + K_a)(xₙ)
//! J = (1 + hα) M + hβ (K + K_a)(xₙ) + h² (K + K_a)(xₖ)
//! ```
//!
//! with a backtracking line search on ‖R‖₂. With displacement-driven actuators, R also holds
//! −h Σ σλ H(xₙ)ᵀ of the solved ones and each iteration re-solves their λ so that
//! δ(xₖ) + h H(xₖ) d meets the targets; a full step is always tried then, and iterating stops
//! once the targets are met and R no longer halves (its round-off floor).

use faer::dyn_stack::MemStack;

use crate::error::Result;
use crate::fem::{SoftBody, Stiffness};
use crate::linalg::axpby;
use crate::math::Vec3;
use crate::scene::model::BodyState;
use crate::scene::model::actuation::BodyActuation;

use super::actuation::{TargetSolve, add_force_driven, solve_target_driven, targets_met};
use super::free_step::{StepConstants, factorize, weight_and_elastic_impulse};
use super::prescribed::add_newton_coupling;
use super::workspace::FreeWorkspace;

/// Newton's iterations after the linearised step, from v⁺ in `ws.vp_red` with A's factor and
/// λ in `forces` as that step left them; returns (iterations, ‖R‖₂ at the end, N·s).
pub(super) fn refine(
    body: &SoftBody,
    act: &BodyActuation,
    ws: &mut FreeWorkspace,
    bs: &BodyState,
    forces: &mut [f64],
    k: &StepConstants,
    newton: usize,
) -> Result<(usize, Option<f64>)> {
    let (h, g) = (k.h, k.g);
    let dofs = body.pattern().dofs();
    let mut iterations = 1;
    if k.beta != 0.0 {
        // The damping's stiffness K(xₙ) + K_a(xₙ) (`actuator_tangent`).
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
        && (r_norm > 1e-13 * scale || !targets_met(act, &ws.actuation, &ws.x_trial, forces, 1e-12))
    {
        // Jacobian J = (1 + hα) M + hβ (K + K_a)(xₙ) + h² (K + K_a)(xₖ), with K(xₖ) from
        // the residual.
        ws.a.copy_from_slice(&ws.elastic.stiffness);
        axpby(k.c_m, body.mass_values(), h * h, &mut ws.a);
        ws.tangent.add(act, &ws.x_trial, forces, h * h, &mut ws.a);
        if k.beta != 0.0 {
            axpby(h * k.beta, &ws.k_start, 1.0, &mut ws.a);
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
    Ok((iterations.min(newton), Some(r_norm)))
}

/// Evaluates R(v⁺) = M(v⁺ − v) − h (f_ext + f(x + h v⁺) − D v⁺) into `ws.rhs` (reduced, N·s)
/// with D = αM + β(K + K_a)(xₙ) and f_ext including the actuators (λ from `forces`, at x + h v⁺) and
/// the coupling to prescribed nodes, K(x + h v⁺) into `ws.elastic.stiffness`, and returns ‖R‖₂.
fn newton_residual(
    body: &SoftBody,
    act: &BodyActuation,
    ws: &mut FreeWorkspace,
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
