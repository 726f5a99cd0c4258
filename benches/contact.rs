//! Speed of the contact module: the NCP solve (ADMM with and without its polish and its
//! Anderson acceleration, and PGS, cold start) against the number of contacts (10, 100, 1,000), and
//! the Delassus assembly `G = h H A⁻¹ Hᵀ` by one multi-right-hand-side solve with the step's
//! factorisation; and ADMM with G never assembled (`FactoredDelassus`: products through the
//! sparse factor of A, shifted solves by the Woodbury identity), which needs neither, with and
//! without its polish.
//!
//! The problems are physical (`tests/slab_ncp`, shared with `tests/contact_acceleration.rs`):
//! a soft slab (neo-Hookean, E = 1 MPa, ν = 0.45, 1000 kg/m³) lies on the floor; its first n
//! bottom nodes are point contacts (z = normal, μ = 0.5); A = M + h²K at rest with h = 10 ms;
//! g is one step of gravity plus a sideways velocity that makes some contacts slide.
//!
//! Run briefly: `cargo bench --bench contact -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use diffsoro::contact::{
    AdmmSettings, AdmmSolver, DelassusWorkspace, FactoredDelassusWorkspace, PgsSettings, PgsSolver,
    assemble_delassus,
};
use diffsoro::math::DMat;

#[path = "../tests/slab_ncp/mod.rs"]
mod slab_ncp;
use slab_ncp::{H, SlabContacts};

fn bench_contact(c: &mut Criterion) {
    let mut group = c.benchmark_group("contact");
    group.sample_size(10);
    for n in [10usize, 100, 1000] {
        let s = SlabContacts::new(n);
        let p = s.problem();
        let mut admm = AdmmSolver::default();
        // The same solver stopping at the tolerance itself (what a forward run needs), not
        // at the hundredth of it the derivatives' smoothness asks for.
        let mut to_tolerance = AdmmSolver::new(AdmmSettings {
            accelerated_margin: 1.0,
            ..Default::default()
        });
        // The same ADMM without polishing (`AdmmSettings::polish`), to measure what the
        // polish buys in the same run.
        let mut unpolished = AdmmSolver::new(AdmmSettings {
            polish: false,
            ..Default::default()
        });
        // Plain ADMM, neither accelerated nor polished: the baseline, in the same run.
        let mut plain = AdmmSolver::new(AdmmSettings {
            anderson_memory: 0,
            polish: false,
            ..Default::default()
        });
        // PGS needs thousands of sweeps on these coupled problems: at 1,000 contacts the
        // bench times a capped run of 100 sweeps (reported as not converged).
        let mut pgs = PgsSolver::new(PgsSettings {
            max_iterations: if n >= 1000 { 100 } else { 10_000 },
            ..Default::default()
        });
        let a = admm.solve(&p, None).unwrap();
        let b = pgs.solve(&p, None).unwrap();
        let c = plain.solve(&p, None).unwrap();
        eprintln!(
            "n = {n}: ADMM neither accelerated nor polished {} iterations, {} factorisations (converged {}, residual {:.1e}); max |λ_admm − λ_plain| = {:.1e} N",
            c.iterations,
            plain.last_factorizations(),
            c.converged,
            c.residuals.max(),
            (&a.lambda - &c.lambda).amax()
        );
        eprintln!(
            "n = {n}: ADMM {} iterations, {} factorisations (converged {}, residual {:.1e}); PGS {} sweeps (converged {}, residual {:.1e}); max |λ_admm − λ_pgs| = {:.1e} N",
            a.iterations,
            admm.last_factorizations(),
            a.converged,
            a.residuals.max(),
            b.iterations,
            b.converged,
            b.residuals.max(),
            (&a.lambda - &b.lambda).amax()
        );
        group.bench_with_input(BenchmarkId::new("admm", n), &p, |bench, p| {
            bench.iter(|| black_box(admm.solve(p, None).unwrap().iterations))
        });
        let u = unpolished.solve(&p, None).unwrap();
        eprintln!(
            "n = {n}: ADMM polished: {} (after {} iterations); unpolished {} iterations (residual {:.1e}); max |λ_polished − λ_unpolished| = {:.1e} N",
            admm.last_polished(),
            a.iterations,
            u.iterations,
            u.residuals.max(),
            (&a.lambda - &u.lambda).amax()
        );
        group.bench_with_input(BenchmarkId::new("admm_unpolished", n), &p, |bench, p| {
            bench.iter(|| black_box(unpolished.solve(p, None).unwrap().iterations))
        });
        let mut factored_admm = AdmmSolver::default();
        // The same through the factor without the polish (`polish_krylov`), in the same run.
        let mut factored_unpolished = AdmmSolver::new(AdmmSettings {
            polish: false,
            ..Default::default()
        });
        let mut work = FactoredDelassusWorkspace::default();
        let mut factored_solve = |solver: &mut AdmmSolver| {
            let mut op = s.factored(&mut work);
            solver
                .solve_with(&mut op, p.free_velocity().as_slice(), p.cones(), None)
                .unwrap()
        };
        let f = factored_solve(&mut factored_admm);
        eprintln!(
            "n = {n}: ADMM through the factor {} iterations, {} factorisations, polished {} (converged {}, residual {:.1e}); max |λ_factored − λ_dense| = {:.1e} N",
            f.iterations,
            factored_admm.last_factorizations(),
            factored_admm.last_polished(),
            f.converged,
            f.residuals.max(),
            (&a.lambda - &f.lambda).amax()
        );
        let u = factored_solve(&mut factored_unpolished);
        eprintln!(
            "n = {n}: ADMM through the factor, unpolished, {} iterations (residual {:.1e})",
            u.iterations,
            u.residuals.max()
        );
        group.bench_function(BenchmarkId::new("admm_factored", n), |bench| {
            bench.iter(|| black_box(factored_solve(&mut factored_admm).iterations))
        });
        group.bench_function(BenchmarkId::new("admm_factored_unpolished", n), |bench| {
            bench.iter(|| black_box(factored_solve(&mut factored_unpolished).iterations))
        });
        let t = to_tolerance.solve(&p, None).unwrap();
        eprintln!(
            "n = {n}: ADMM to the tolerance itself {} iterations (converged {}, residual {:.1e})",
            t.iterations,
            t.converged,
            t.residuals.max()
        );
        group.bench_with_input(BenchmarkId::new("admm_to_tolerance", n), &p, |bench, p| {
            bench.iter(|| black_box(to_tolerance.solve(p, None).unwrap().iterations))
        });
        group.bench_with_input(BenchmarkId::new("admm_plain", n), &p, |bench, p| {
            bench.iter(|| black_box(plain.solve(p, None).unwrap().iterations))
        });
        group.bench_with_input(BenchmarkId::new("pgs", n), &p, |bench, p| {
            bench.iter(|| black_box(pgs.solve(p, None).unwrap().iterations))
        });
        let mut ws = DelassusWorkspace::default();
        let mut g_mat = DMat::zeros(0, 0);
        eprintln!(
            "n = {n}: slab of {} nodes ({} free DOFs)",
            s.body.node_count(),
            s.body.pattern().n()
        );
        group.bench_function(BenchmarkId::new("delassus", n), |bench| {
            bench.iter(|| {
                assemble_delassus(
                    H,
                    &s.jacobian,
                    s.body.pattern().dofs(),
                    &s.factor,
                    &mut ws,
                    &mut g_mat,
                )
                .unwrap();
                black_box(g_mat[(0, 0)])
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_contact);
criterion_main!(benches);
