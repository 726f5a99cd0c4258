//! The actuation stage of the step (docs/step.md): the actuators and effectors of each body
//! built from the scene file, the force-driven actuators' h f_a added to the right-hand side,
//! and the displacement-driven actuators' λ solved inside the same step.
//!
//! With the step's factorisation A, Δv = A⁻¹(b + h Σⱼ Gⱼ λⱼ), Gⱼ = σⱼ Hⱼᵀ (the nodal force of a
//! unit λⱼ, `actuator::kind`). A target-driven actuator i asks δᵢ(x⁺) = tᵢ to first order,
//! δᵢ(x) + h Hᵢ v⁺ = tᵢ, i.e. with Δv₀ = A⁻¹b:
//!
//! ```text
//! Σⱼ h² σᵢσⱼ (Hᵢ A⁻¹ Hⱼᵀ) λⱼ = σᵢ (tᵢ − δᵢ(x) − h Hᵢ (v + Δv₀)),   λ ∈ [lo, hi]
//! ```
//!
//! a small symmetric positive semi-definite system built from one multi-right-hand-side solve
//! A⁻¹[G₁ … G_k], solved with the bounds by `actuator::bounded_solve`. Actuator forces use H at
//! the start of the step (xₙ), as SOFA's constraint forces do; ∂(Hᵀλ)/∂x is not in A.
//! Angle-driven servos are not solved here: they pin their horn (`scene::step::free::prescribed`).
//! The same solve serves full Newton (J in place of A, δ(xₖ) + h H(xₖ) d = t, λ re-solved at
//! each iteration) and statics (K in place of A, δ(x) + H dx = t), see [`TargetSolve`].
//! Per-step limits: each step aims at the target moved from δ(xₙ) by at most
//! `max_value_step`, and λ stays within λₙ ± `max_force_step` ([`begin_step`]).
//!
//! A force-driven actuator with bounds on its value (a cable's `max_displacement` /
//! `min_displacement`, [`Actuator::value_bounds`]) is solved in the same system: it keeps its
//! given λ while the predicted δ(x⁺) stays within the bounds, and otherwise takes the λ that
//! holds δ(x⁺) at the bound it would cross (`actuator::window_solve`: a complementarity
//! decided inside the step, not by switching between steps). Its force, like a
//! displacement-driven cable's, is taken at xₙ (its tangent is not in A).

use faer::dyn_stack::{MemBuffer, MemStack};

use crate::actuator::{Actuator, Drive, window_solve};
use crate::linalg::{DofMap, NumericFactor};
use crate::math::{DMat, DVec, Vec3};
use crate::scene::model::actuation::{BodyActuation, is_solved};

/// Reusable buffers of the actuation stage of one body.
pub struct ActuationWorkspace {
    rows: Vec<(usize, Vec3)>,
    /// Per solved actuator: its index, its H rows, this step's window of δ (a target: the
    /// file's target moved from δ(xₙ) by at most `max_value_step`, as [t, t]; a force-driven
    /// one: its value bounds), its preferred λ (a force-driven one's given λ, ramped) and
    /// bounds on λ (λₙ ± `max_force_step` within the actuator's bounds).
    targets: Vec<usize>,
    target_rows: Vec<Vec<(usize, Vec3)>>,
    step_targets: Vec<[f64; 2]>,
    preferred: Vec<f64>,
    bounds: Vec<[f64; 2]>,
    /// The windows of (Sλ)ᵢ of the solve (`actuator::window_solve`).
    windows: Vec<[f64; 2]>,
    /// A⁻¹Gⱼ, column-major (n_reduced × k).
    columns: Vec<f64>,
    buffer: MemBuffer,
    s: DMat,
    lambda: DVec,
    /// The actuator forces of the last [`add_force_driven`] (N per node, unscaled).
    nodal: Vec<Vec3>,
}

impl ActuationWorkspace {
    /// Buffers for `act` on a body of `nodes` nodes whose step factorisation is `factor`.
    pub fn new(act: &BodyActuation, nodes: usize, factor: &NumericFactor) -> ActuationWorkspace {
        let k = act.actuators.iter().filter(|a| is_solved(a)).count();
        let n = factor.symbolic().n();
        ActuationWorkspace {
            rows: Vec::new(),
            targets: Vec::with_capacity(k),
            target_rows: vec![Vec::new(); k],
            step_targets: Vec::with_capacity(k),
            preferred: Vec::with_capacity(k),
            bounds: Vec::with_capacity(k),
            windows: vec![[0.0; 2]; k],
            columns: vec![0.0; n * k],
            buffer: MemBuffer::new(factor.solve_scratch(k.max(1))),
            s: DMat::zeros(k, k),
            lambda: DVec::zeros(k),
            nodal: vec![Vec3::zeros(); nodes],
        }
    }

    /// The actuator forces (N per node) of the last `add_force_driven` call, unscaled.
    pub fn nodal_forces(&self) -> &[Vec3] {
        &self.nodal
    }
}

/// The actuators whose λ the step solves: (index, actuator).
fn solved_targets(act: &BodyActuation) -> impl Iterator<Item = (usize, &Actuator)> {
    act.actuators
        .iter()
        .enumerate()
        .filter(|(_, a)| is_solved(a))
}

/// Starts a step: moves the force-driven λ in `forces` towards their inputs (`max_force_step`)
/// and sets each solved actuator's target and bounds for the step from δ(xₙ) at `x` and λₙ.
pub fn begin_step(
    act: &BodyActuation,
    ws: &mut ActuationWorkspace,
    x: &[Vec3],
    forces: &mut [f64],
) {
    act.ramp_forces(forces);
    ws.targets.clear();
    ws.step_targets.clear();
    ws.preferred.clear();
    ws.bounds.clear();
    for (i, a) in solved_targets(act) {
        let l = forces[i];
        match a.drive {
            Drive::Target(target) => {
                let now = a.kind.value(x);
                let [vlo, vhi] = a.value_bounds;
                let t = target
                    .clamp(vlo, vhi)
                    .clamp(now - a.max_value_step, now + a.max_value_step);
                ws.step_targets.push([t, t]);
                ws.preferred.push(0.0);
            }
            Drive::Force(f) => {
                ws.step_targets.push(a.value_bounds);
                ws.preferred
                    .push(f.clamp(l - a.max_force_step, l + a.max_force_step));
            }
        }
        let [lo, hi] = a.bounds;
        let lo_step = lo.max(l - a.max_force_step).min(hi);
        ws.bounds
            .push([lo_step, hi.min(l + a.max_force_step).max(lo_step)]);
        ws.targets.push(i);
    }
}

/// Sets the solved actuators' targets for static equilibrium at load factor `s`:
/// δ(x₀) + s(t − δ(x₀)), δ(x₀) their values at `start`, within their bounds (no per-step
/// limits: statics has no steps); a force-driven one with value bounds prefers s times its
/// given λ within its value bounds.
pub fn begin_static(act: &BodyActuation, ws: &mut ActuationWorkspace, start: &[Vec3], s: f64) {
    ws.targets.clear();
    ws.step_targets.clear();
    ws.preferred.clear();
    ws.bounds.clear();
    for (i, a) in solved_targets(act) {
        match a.drive {
            Drive::Target(target) => {
                let now = a.kind.value(start);
                let [vlo, vhi] = a.value_bounds;
                let t = now + s * (target.clamp(vlo, vhi) - now);
                ws.step_targets.push([t, t]);
                ws.preferred.push(0.0);
            }
            Drive::Force(f) => {
                ws.step_targets.push(a.value_bounds);
                ws.preferred.push(s * f);
            }
        }
        ws.bounds.push(a.bounds);
        ws.targets.push(i);
    }
}

/// Adds `scale` · Σ f_a at `x` (the step passes h, the Newton residual −h) to the reduced
/// right-hand side `rhs`: the force-driven actuators' with their λ in `forces`, and with
/// `solved_at` = Some(xₙ) the solved ones' too, at xₙ (their λ in `forces`; the Newton
/// residual, whose solved forces keep H at the start of the step as the linearised step).
#[allow(clippy::too_many_arguments)]
pub fn add_force_driven(
    act: &BodyActuation,
    ws: &mut ActuationWorkspace,
    dofs: &DofMap,
    x: &[Vec3],
    forces: &[f64],
    solved_at: Option<&[Vec3]>,
    scale: f64,
    rhs: &mut [f64],
) {
    if act.actuators.is_empty() {
        return;
    }
    ws.nodal.iter_mut().for_each(|f| *f = Vec3::zeros());
    act.add_driven_forces(x, forces, 1.0, &mut ws.rows, &mut ws.nodal);
    if let Some(xn) = solved_at {
        act.add_solved_forces(xn, forces, 1.0, &mut ws.rows, &mut ws.nodal);
    }
    dofs.add_nodal(&ws.nodal, scale, rhs);
}

fn dot_rows(dofs: &DofMap, rows: &[(usize, Vec3)], v: &[f64]) -> f64 {
    let mut s = 0.0;
    for (n, g) in rows {
        for k in 0..3 {
            if let Some(r) = dofs.reduced_index(3 * n + k) {
                s += g[k] * v[r];
            }
        }
    }
    s
}

/// Whether the solved actuators meet this step's targets at `x`: δ within the window [t⁻, t⁺]
/// (a target: t⁻ = t⁺ = t) up to `tolerance` · max(|t⁻|, |t⁺|, 1) (finite sides) for every one
/// whose λ is strictly inside its bounds (one held at a bound, a cable asked to push, need not).
pub fn targets_met(
    act: &BodyActuation,
    ws: &ActuationWorkspace,
    x: &[Vec3],
    forces: &[f64],
    tolerance: f64,
) -> bool {
    ws.targets.iter().enumerate().all(|(j, &i)| {
        let [lo, hi] = ws.bounds[j];
        let l = forces[i];
        let [t0, t1] = ws.step_targets[j];
        let scale = [t0, t1]
            .iter()
            .filter(|t| t.is_finite())
            .fold(1.0f64, |m, t| m.max(t.abs()));
        let v = act.actuators[i].kind.value(x);
        l <= lo || l >= hi || (v >= t0 - tolerance * scale && v <= t1 + tolerance * scale)
    })
}

/// How the right-hand side of [`solve_target_driven`] is posed.
pub enum TargetSolve<'a> {
    /// The linearised step: `dv` holds Δv₀ = A⁻¹b, `v` is the reduced velocity at the start
    /// (δ(x⁺) ≈ δ(x) + h H (v + Δv)); H at x = xₙ.
    Step {
        /// The reduced velocity at the start of the step (m/s).
        v: &'a [f64],
    },
    /// A Newton iteration at xₖ (G taken at x = xₙ, as the forces in R): `dv` holds
    /// −J⁻¹R(vₖ) where R already includes the solved actuators' forces with the λ in
    /// `forces`; δ(x⁺) ≈ δ(xₖ) + h H(xₖ) dv (a fixed point meets δ(x⁺) = t exactly); λ is
    /// re-solved as a whole.
    Newton {
        /// The current iterate's positions xₖ = xₙ + h vₖ (m).
        x_k: &'a [Vec3],
    },
    /// A static Newton iteration at x: `dv` holds the displacement K⁻¹r (r with the solved
    /// forces of the λ in `forces`), δ(x + dx) ≈ δ(x) + H dx; the actuator columns are
    /// K⁻¹Gⱼ (no h).
    Static,
}

/// Solves the λ of the solved actuators (module doc) and adds h A⁻¹ Σ Gⱼλⱼ to `dv`. `factor`
/// is the factorisation of A (or J, or K), `forces` the body's λ (updated for the solved
/// ones); targets and bounds come from [`begin_step`].
#[allow(clippy::too_many_arguments)]
pub fn solve_target_driven(
    act: &BodyActuation,
    ws: &mut ActuationWorkspace,
    dofs: &DofMap,
    factor: &NumericFactor,
    x: &[Vec3],
    mode: TargetSolve,
    h: f64,
    dv: &mut [f64],
    forces: &mut [f64],
) {
    let n = dv.len();
    let k = ws.s.nrows();
    if k == 0 {
        return;
    }
    assert_eq!(ws.targets.len(), k, "begin_step sets the solved actuators");
    // h of the columns: the static solve has none.
    let hc = if matches!(mode, TargetSolve::Static) {
        1.0
    } else {
        h
    };
    ws.columns.fill(0.0);
    for (j, &i) in ws.targets.iter().enumerate() {
        let a = &act.actuators[i];
        let rows = &mut ws.target_rows[j];
        a.kind.jacobian(x, rows);
        let sigma = a.kind.sign();
        let col = &mut ws.columns[j * n..(j + 1) * n];
        for (node, g) in rows.iter() {
            for c in 0..3 {
                if let Some(r) = dofs.reduced_index(3 * node + c) {
                    col[r] += sigma * g[c];
                }
            }
        }
    }
    factor.solve_columns_in_place(&mut ws.columns, k, MemStack::new(&mut ws.buffer));
    // The Newton and static right-hand sides hold the forces of the current λ: take them
    // out, λ is solved whole.
    if !matches!(mode, TargetSolve::Step { .. }) {
        for (j, &i) in ws.targets.iter().enumerate() {
            let col = &ws.columns[j * n..(j + 1) * n];
            for (d, c) in dv.iter_mut().zip(col) {
                *d -= hc * forces[i] * c;
            }
        }
    }
    // Newton linearises the constraint at xₖ (H(xₖ)), the forces keep G at xₙ: S is then
    // not symmetric (the bounded Gauss-Seidel solve does not need it to be).
    if let TargetSolve::Newton { x_k } = mode {
        for (j, &i) in ws.targets.iter().enumerate() {
            act.actuators[i].kind.jacobian(x_k, &mut ws.target_rows[j]);
        }
    }
    for (j, &i) in ws.targets.iter().enumerate() {
        let a = &act.actuators[i];
        let rows = &ws.target_rows[j];
        let predicted = match mode {
            TargetSolve::Step { v } => {
                a.kind.value(x) + h * (dot_rows(dofs, rows, v) + dot_rows(dofs, rows, dv))
            }
            TargetSolve::Newton { x_k } => a.kind.value(x_k) + h * dot_rows(dofs, rows, dv),
            TargetSolve::Static => a.kind.value(x) + dot_rows(dofs, rows, dv),
        };
        // c = σ(t − δ_predicted) at each side of the window, in increasing order.
        let [c0, c1] = ws.step_targets[j].map(|t| a.kind.sign() * (t - predicted));
        ws.windows[j] = [c0.min(c1), c0.max(c1)];
        ws.lambda[j] = forces[i];
    }
    // S = h hc σᵢσⱼ Hᵢ A⁻¹ Hⱼᵀ (the step's displacement is h Δv; statics' is dx).
    let hd = if matches!(mode, TargetSolve::Static) {
        1.0
    } else {
        h
    };
    for (i, (ai, rows)) in ws.targets.iter().zip(&ws.target_rows).enumerate() {
        let si = act.actuators[*ai].kind.sign();
        for j in 0..k {
            ws.s[(i, j)] = hd * hc * si * dot_rows(dofs, rows, &ws.columns[j * n..(j + 1) * n]);
        }
    }
    // Symmetrise round-off.
    for i in 0..k * usize::from(!matches!(mode, TargetSolve::Newton { .. })) {
        for j in 0..i {
            let m = 0.5 * (ws.s[(i, j)] + ws.s[(j, i)]);
            ws.s[(i, j)] = m;
            ws.s[(j, i)] = m;
        }
    }
    window_solve(
        &ws.s,
        &ws.windows,
        &ws.preferred,
        &ws.bounds,
        &mut ws.lambda,
        1e-14,
        10_000,
    );
    for (j, ai) in ws.targets.iter().enumerate() {
        forces[*ai] = ws.lambda[j];
        let col = &ws.columns[j * n..(j + 1) * n];
        for (d, c) in dv.iter_mut().zip(col) {
            *d += hc * ws.lambda[j] * c;
        }
    }
}
