//! Speed of the FEM core on structured box meshes of about 1k, 10k and 100k tetrahedra:
//! element assembly of forces and stiffness (per law, on 1 and 2 threads), one linearised
//! implicit-Euler step, and — for the split — the bare numeric factorisation of the same A;
//! before timing each step it prints a row of docs/speed.md's scaling table (fill of the
//! factor, the free step's parts, peak memory).
//!
//! Run briefly: `cargo bench --bench fem -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group};
use diffsoro::fem::{MassKind, SoftBody, SoftBodyOptions, Stiffness, fixed_nodes};
use diffsoro::linalg::{FactorKind, NumericFactor, SymbolicFactor, axpby};
use diffsoro::material::{Law, Material};
use diffsoro::mesh::box_mesh;
use diffsoro::scene::{Scene, SimulationSection, Stepper};

/// Box meshes (cells; tetrahedra = 6 × cells): 1,200, 10,800 and 100,800 tetrahedra.
const SIZES: [(&str, [usize; 3]); 3] = [
    ("1k", [10, 5, 4]),
    ("10k", [20, 10, 9]),
    ("100k", [40, 20, 21]),
];

fn body(cells: [usize; 3], law: Law) -> SoftBody {
    let mesh = box_mesh(cells, [0.0; 3], [0.2, 0.1, 0.1]).unwrap();
    let fixed = fixed_nodes(&mesh, None, Some("xmin"), "box").unwrap();
    let options = SoftBodyOptions {
        material: Material::new(law, 1e6, 0.45).unwrap(),
        density: 1000.0,
        mass: MassKind::Lumped,
        rayleigh_mass: 0.1,
        rayleigh_stiffness: 0.1,
        fixed,
    };
    SoftBody::new("box", mesh, options).unwrap()
}

/// A deformed configuration (a smooth bend) so that co-rotational rotations are not trivial.
fn deformed(b: &SoftBody) -> Vec<diffsoro::math::Vec3> {
    b.rest_positions()
        .iter()
        .map(|p| p + diffsoro::math::Vec3::new(0.0, 0.05 * p.x * p.x, 0.02 * p.x * p.y))
        .collect()
}

fn assembly(c: &mut Criterion) {
    let mut group = c.benchmark_group("assembly");
    group.sample_size(10);
    for (name, cells) in SIZES {
        for law in [Law::NeoHookean, Law::Corotational, Law::StVK] {
            let b = body(cells, law);
            let x = deformed(&b);
            let mut state = b.elastic_state();
            for threads in [1, 2] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let id = BenchmarkId::new(format!("{}/{threads}t", law.name()), name);
                group.bench_function(id, |bench| {
                    pool.install(|| {
                        bench.iter(|| {
                            b.evaluate_elastic(black_box(&x), Stiffness::Assemble, &mut state)
                                .unwrap()
                        })
                    })
                });
            }
        }
    }
    group.finish();
}

/// One row of docs/speed.md's scaling table on stderr: the mesh, the fill of the factor, the
/// medians of the free step's parts over `steps` steps (`scene::FreeStageTimes`), and the process's
/// peak resident memory so far (`VmHWM`; the sizes run in increasing order, so it is this
/// size's, plus the smaller ones' freed pages the allocator kept).
fn scaling_row(
    name: &str,
    scene: &Scene,
    stepper: &mut Stepper,
    state: &mut diffsoro::scene::State,
    steps: usize,
) {
    let parts: Vec<diffsoro::scene::FreeStageTimes> = (0..steps)
        .map(|_| stepper.step(scene, state).unwrap().times.free_parts)
        .collect();
    // The median of one part over the steps, ms.
    let median = |part: fn(&diffsoro::scene::FreeStageTimes) -> f64| {
        let mut values: Vec<f64> = parts.iter().map(part).collect();
        values.sort_by(f64::total_cmp);
        1e3 * values[values.len() / 2]
    };
    let body = &scene.bodies[0];
    let symbolic = stepper.body(0).factor().symbolic();
    let peak_kib: f64 = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
        })
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN);
    let tets = body.elements().len();
    eprintln!(
        "scaling {name}: {} nodes, {tets} tets, {} DOFs; nnz(A) {} (lower), nnz(L) {} (fill {:.1}×); elastic {:.3} ms, assembly {:.3} ms, factorisation {:.3} ms, solve {:.3} ms; peak memory {:.0} MiB ({:.1} KiB per tet)",
        body.node_count(),
        symbolic.n(),
        body.pattern().nnz(),
        symbolic.factor_len(),
        symbolic.factor_len() as f64 / body.pattern().nnz() as f64,
        median(|t| t.elastic),
        median(|t| t.assembly),
        median(|t| t.factorisation),
        median(|t| t.solve),
        peak_kib / 1024.0,
        peak_kib / tets as f64,
    );
}

/// A scene of one co-rotational box of `cells` (`body`), 10 ms steps under gravity.
fn box_scene(cells: [usize; 3]) -> Scene {
    Scene::new(
        SimulationSection {
            dt: 0.01,
            steps: 0,
            gravity: [0.0, 0.0, -9.81],
            newton_iterations: 1,
        },
        vec![body(cells, Law::Corotational)],
    )
}

/// The scaling table's 1M-tetrahedron row (80 × 40 × 52 cells, 998,400 tetrahedra), printed
/// only when `DIFFSORO_SCALING_1M` is set: about 15 GB of factor and minutes per
/// factorisation, so one step, cold, and no criterion timing.
fn scaling_million() {
    if std::env::var_os("DIFFSORO_SCALING_1M").is_none() {
        return;
    }
    let scene = box_scene([80, 40, 52]);
    let mut state = scene.initial_state();
    let start = std::time::Instant::now();
    let mut stepper = Stepper::new(&scene).unwrap();
    eprintln!(
        "scaling 1M: symbolic analysis {:.1} s",
        start.elapsed().as_secs_f64()
    );
    scaling_row("1M", &scene, &mut stepper, &mut state, 1);
}

fn step(c: &mut Criterion) {
    scaling_million();
    let mut group = c.benchmark_group("step");
    group.sample_size(10);
    for (name, cells) in SIZES {
        let scene = box_scene(cells);
        let mut state = scene.initial_state();
        let mut stepper = Stepper::new(&scene).unwrap();
        stepper.step(&scene, &mut state).unwrap();
        scaling_row(name, &scene, &mut stepper, &mut state, 5);
        group.bench_function(BenchmarkId::new("corotational", name), |bench| {
            bench.iter(|| stepper.step(&scene, &mut state).unwrap())
        });
        // The split: faer's bare numeric factorisation of the same A.
        let b = &scene.bodies[0];
        let mut es = b.elastic_state();
        b.evaluate_elastic(&state.bodies[0].positions, Stiffness::Assemble, &mut es)
            .unwrap();
        let mut a = es.stiffness.clone();
        axpby(1.0 + 0.01 * 0.1, b.mass_values(), 0.01 * 0.1 + 1e-4, &mut a);
        let symbolic = std::sync::Arc::new(SymbolicFactor::new(b.pattern()).unwrap());
        let mut factor = NumericFactor::new(symbolic, FactorKind::Llt);
        group.bench_function(BenchmarkId::new("factorisation_only", name), |bench| {
            bench.iter(|| factor.factorize(b.pattern(), black_box(&a)).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, assembly, step);
#[path = "support/worker.rs"]
mod worker;

/// `criterion_main!`, with the group run on a pool worker (`support/worker.rs`).
fn main() {
    worker::on_worker(benches);
    Criterion::default().configure_from_args().final_summary();
}
