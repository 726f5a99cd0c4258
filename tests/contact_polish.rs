//! Polishing an ADMM iterate on its contacts' cone faces (`contact::AdmmSettings::polish`,
//! `[contact] polish`): Newton's method on the NCP restricted to those faces. It changes how
//! fast a solution is found, not the solution: the references are closed-form solutions and
//! plain ADMM (neither extrapolated nor polished) to 1e-13.

use diffsoro::contact::{AdmmSettings, AdmmSolver, ContactProblem};
use diffsoro::math::{DMat, DVec};

use crate::slab_ncp;
use slab_ncp::SlabContacts;

/// Three decoupled contacts, G = diag(d) per contact, μ = 0.5, and their closed-form
/// solution: open (g_N > 0): λ = 0; sticking (‖g_T‖ ≤ μ(−g_N)): λ = −g/d; sliding:
/// λ_N = −g_N/d and λ_T = −μ λ_N g_T/‖g_T‖ (the sliding velocity σ_T = g_T + d λ_T keeps
/// g_T's direction).
fn three_contacts() -> (ContactProblem, [f64; 9]) {
    let mu = 0.5;
    let d = [2.0, 0.5, 3.0];
    let g = [
        0.1, -0.2, 1.0, // open
        0.2, 0.1, -1.0, // ‖g_T‖ ≈ 0.22 < 0.5: sticking
        1.0, 0.5, -1.0, // ‖g_T‖ ≈ 1.12 > 0.5: sliding
    ];
    let mut delassus = DMat::zeros(9, 9);
    for i in 0..9 {
        delassus[(i, i)] = d[i / 3];
    }
    let p = ContactProblem::new(delassus, DVec::from_column_slice(&g), &[mu; 3]).unwrap();
    let (gt, gn) = (1.0f64.hypot(0.5), -1.0);
    let lambda_n = -gn / d[2];
    let exact = [
        0.0,
        0.0,
        0.0,
        -0.2 / d[1],
        -0.1 / d[1],
        1.0 / d[1],
        -mu * lambda_n * 1.0 / gt,
        -mu * lambda_n * 0.5 / gt,
        lambda_n,
    ];
    (p, exact)
}

/// The three contacts of [`three_contacts`], solved cold: polished to the closed form.
#[test]
fn polished_forces_are_the_closed_form_ones_to_round_off() {
    let (p, exact) = three_contacts();
    let mut solver = AdmmSolver::default();
    let s = solver.solve(&p, None).unwrap();
    assert!(s.converged && solver.last_polished());
    for (k, (a, b)) in s.lambda.iter().zip(exact).enumerate() {
        assert!((a - b).abs() <= 1e-14, "λ[{k}] = {a:e}, closed form {b:e}");
    }
    assert!(s.residuals.max() <= 1e-14, "{:?}", s.residuals);
}

/// A warm start that meets the tolerance but is not exact (the closed-form forces of
/// [`three_contacts`], each moved by 1e-12 N, so σ is off by at most 3e-12 m/s, under the
/// 1e-10 tolerance) is polished on its faces without an iteration, to the closed form: a
/// resting body's steps, each warm-started from the last, then carry no error forward. The
/// sliding contact's force lies on its cone's boundary, where the force alone cannot tell
/// sliding from sticking; the faces come from λ − c σ̂ (Moreau's decomposition).
#[test]
fn a_warm_start_within_the_tolerance_is_polished_to_the_exact_forces() {
    let (p, exact) = three_contacts();
    // Off by about 1e-12 N: the open contact pushes a little, the sticking one pushes a
    // little less, and the sliding one's friction force is a little short of its cone's
    // boundary, so that the force alone would call it sticking.
    let warm: Vec<f64> = exact
        .iter()
        .enumerate()
        .map(|(k, x)| match k {
            0..=2 => [0.0, 0.0, 1e-12][k],
            3..=7 => x * (1.0 - 1e-12),
            _ => *x,
        })
        .collect();
    let mut solver = AdmmSolver::default();
    let s = solver.solve(&p, Some(&warm)).unwrap();
    assert!(s.converged && solver.last_polished() && s.iterations == 0);
    for (k, (a, b)) in s.lambda.iter().zip(exact).enumerate() {
        assert!((a - b).abs() <= 1e-15, "λ[{k}] = {a:e}, closed form {b:e}");
    }
    assert!(s.residuals.max() <= 1e-15, "{:?}", s.residuals);
}

/// The slab on the floor (coupled, ill-conditioned G; a quarter of the contacts sticking,
/// the others sliding): the polished forces are at least as close to plain ADMM's to 1e-13
/// as unpolished accelerated ADMM's, their residuals within the accelerated target, in under
/// half the iterations.
#[test]
fn polished_and_unpolished_admm_find_the_same_forces_on_the_slab() {
    for n in [10, 100] {
        let p = SlabContacts::new(n).problem();
        let exact = slab_ncp::reference(&p);
        let solve = |polish: bool| {
            let mut solver = AdmmSolver::new(AdmmSettings {
                polish,
                ..AdmmSettings::default()
            });
            let s = solver.solve(&p, None).unwrap();
            (s, solver.last_polished())
        };
        let (polished, was_polished) = solve(true);
        let (unpolished, _) = solve(false);
        assert!(was_polished, "n = {n}: never polished");
        assert!(polished.converged && unpolished.converged, "n = {n}");
        let target = AdmmSettings::default().tolerance * AdmmSettings::default().accelerated_margin;
        assert!(
            polished.residuals.max() <= target,
            "n = {n}: {:?}",
            polished.residuals
        );
        // The returned σ is the polished λ's (the polisher's, not recomputed).
        let sigma = p.delassus() * &polished.lambda + p.free_velocity();
        let off = (&sigma - &polished.sigma).amax();
        assert!(off <= 1e-13 * sigma.amax(), "n = {n}: σ off by {off:e}");
        let polished_error = (&polished.lambda - &exact.lambda).amax();
        let unpolished_error = (&unpolished.lambda - &exact.lambda).amax();
        assert!(
            polished_error <= unpolished_error.max(1e-10),
            "n = {n}: polished λ within {polished_error:e} N of the reference, unpolished within {unpolished_error:e} N"
        );
        assert!(
            2 * polished.iterations < unpolished.iterations,
            "n = {n}: {} polished iterations against {} unpolished",
            polished.iterations,
            unpolished.iterations
        );
    }
}
