//! Speed of the contact module: the NCP solve (ADMM with and without its Anderson
//! acceleration, and PGS, cold start) against the number of contacts (10, 100, 1,000), and the Delassus assembly `G = h H A⁻¹ Hᵀ` by one
//! multi-right-hand-side solve with the step's factorisation.
//!
//! The problems are physical: a soft slab (neo-Hookean, E = 1 MPa, ν = 0.45, 1000 kg/m³) lies
//! on the floor; its first n bottom nodes are point contacts (z = normal, μ = 0.5); A =
//! M + h²K at rest with h = 10 ms; g is one step of gravity plus a sideways velocity that makes
//! some contacts slide.
//!
//! Run briefly: `cargo bench --bench contact -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use diffsoro::contact::{
    AdmmSettings, AdmmSolver, ContactJacobian, ContactProblem, DelassusWorkspace, PgsSettings,
    PgsSolver, assemble_delassus, free_contact_velocity,
};
use diffsoro::fem::{MassKind, SoftBody, SoftBodyOptions, Stiffness};
use diffsoro::linalg::{FactorKind, NumericFactor, SymbolicFactor, axpby};
use diffsoro::material::{Law, Material};
use diffsoro::math::{DMat, DVec, Mat3, Vec3};
use diffsoro::mesh::box_mesh;

const H: f64 = 0.01;

/// The slab, the factor of its A, and the Jacobian of its first `n` bottom nodes.
struct Setup {
    body: SoftBody,
    factor: NumericFactor,
    jacobian: ContactJacobian,
}

fn setup(n: usize) -> Setup {
    // Enough bottom nodes: (cells + 1)² ≥ n.
    let cells = ((n as f64).sqrt().ceil() as usize).max(2) - 1;
    let cells = cells.max(1);
    let side = 0.01 * cells as f64;
    let mesh = box_mesh([cells, cells, 2], [0.0; 3], [side, side, 0.02]).unwrap();
    let nodes = mesh.node_count();
    let options = SoftBodyOptions {
        material: Material::new(Law::NeoHookean, 1e6, 0.45).unwrap(),
        density: 1000.0,
        mass: MassKind::Lumped,
        rayleigh_mass: 0.0,
        rayleigh_stiffness: 0.0,
        fixed: vec![false; nodes],
    };
    let body = SoftBody::new("slab", mesh, options).unwrap();
    let mut state = body.elastic_state();
    body.evaluate_elastic(body.rest_positions(), Stiffness::Assemble, &mut state)
        .unwrap();
    let mut a = state.stiffness.clone();
    axpby(1.0, body.mass_values(), H * H, &mut a);
    let symbolic = Arc::new(SymbolicFactor::new(body.pattern()).unwrap());
    let mut factor = NumericFactor::new(symbolic, FactorKind::Llt);
    factor.factorize(body.pattern(), &a).unwrap();
    let mut jacobian = ContactJacobian::new(nodes);
    let bottom: Vec<usize> = (0..nodes)
        .filter(|&i| body.rest_positions()[i].z < 1e-12)
        .take(n)
        .collect();
    assert_eq!(bottom.len(), n);
    for &b in &bottom {
        jacobian
            .push_point_contact(&Mat3::identity(), &[(b, 1.0)])
            .unwrap();
    }
    Setup {
        body,
        factor,
        jacobian,
    }
}

fn problem(s: &Setup) -> ContactProblem {
    let mut g_mat = DMat::zeros(0, 0);
    assemble_delassus(
        H,
        &s.jacobian,
        s.body.pattern().dofs(),
        &s.factor,
        &mut DelassusWorkspace::default(),
        &mut g_mat,
    )
    .unwrap();
    // Free velocity: falling at 0.1 m/s plus one step of gravity, pushed sideways in x
    // by 0.02 m/s on the nodes with x < 0.3·side (some slide, some stick).
    let x = s.body.rest_positions();
    let side = x.iter().map(|p| p.x).fold(0.0, f64::max);
    let v_free: Vec<Vec3> = x
        .iter()
        .map(|p| {
            let push = if p.x < 0.3 * side { 0.02 } else { 0.0 };
            Vec3::new(push, 0.0, -0.1 - 9.81 * H)
        })
        .collect();
    let mut g = vec![0.0; s.jacobian.row_count()];
    free_contact_velocity(&s.jacobian, &v_free, &mut g);
    let n = s.jacobian.contact_count();
    ContactProblem::new(g_mat, DVec::from_vec(g), &vec![0.5; n]).unwrap()
}

fn bench_contact(c: &mut Criterion) {
    let mut group = c.benchmark_group("contact");
    group.sample_size(10);
    for n in [10usize, 100, 1000] {
        let s = setup(n);
        let p = problem(&s);
        let mut admm = AdmmSolver::default();
        // The same ADMM without Anderson acceleration, to measure what the acceleration buys
        // in the same run.
        let mut plain = AdmmSolver::new(AdmmSettings {
            anderson_memory: 0,
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
            "n = {n}: ADMM without acceleration {} iterations, {} factorisations (converged {}, residual {:.1e}); max |λ_admm − λ_plain| = {:.1e} N",
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
