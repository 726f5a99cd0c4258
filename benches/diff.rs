//! Cost of the derivatives on the Trunk (scenes/trunk.toml, 8 cables pulled with 0.2 N),
//! against the forward step they differentiate (the speed goals of docs/speed.md: the step
//! Jacobian within 0.4× a step, a VJP within 0.3×, an adjoint sweep within 1.0× the rollout):
//! - `step` vs `jacobian_10_params` (the step Jacobian with respect to the 8 cables, E and ν,
//!   from the step's own factorisation) and `vjp_10_params` (one reverse-mode pass);
//! - `rollout_100` vs `adjoint_100` (record 100 steps and sweep back for a scalar loss);
//! - `position_jacobian` (d v⁺/d x, all 3n free columns) vs `fd_column` (one column of the
//!   same Jacobian by central differences: two steps; the full FD Jacobian is 3n columns).
//!
//! Run briefly: `cargo bench --bench diff -- --warm-up-time 1 --measurement-time 5`.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group};
use diffsoro::diff::{
    InputTangent, Recorder, StateTangent, StepDerivative, TapeOptions, adjoint, every_parameter,
    record_trajectory,
};
use diffsoro::math::Vec3;
use diffsoro::scene::{Scene, Stepper};

fn trunk() -> Scene {
    Scene::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/trunk.toml"),
        &(1..=8)
            .map(|i| format!("soft_body.trunk.cable.c{i}.force=0.2"))
            .collect::<Vec<_>>(),
    )
    .unwrap()
}

fn bench(c: &mut Criterion) {
    let scene = trunk();
    let params = every_parameter(&scene);
    assert_eq!(params.len(), 10);
    let mut group = c.benchmark_group("trunk_derivatives");
    group.sample_size(20);

    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    for _ in 0..5 {
        stepper.step(&scene, &mut state).unwrap();
    }
    let start = state.clone();
    group.bench_function("step", |b| {
        b.iter(|| {
            let mut s = start.clone();
            stepper.step(&scene, &mut s).unwrap();
            black_box(s);
        })
    });

    let mut recorder = Recorder::new(&scene).unwrap();
    let mut s = start.clone();
    let (_, record) = recorder.step(&scene, &mut s).unwrap();
    let mut derivative = StepDerivative::new(&scene);
    let units: Vec<InputTangent> = (0..params.len())
        .map(|p| InputTangent {
            state: StateTangent::zeros(&scene),
            parameters: (0..params.len()).map(|q| (p == q) as u8 as f64).collect(),
        })
        .collect();
    group.bench_function("jacobian_10_params", |b| {
        b.iter(|| black_box(derivative.jvp(&scene, &record, &params, &units).unwrap()))
    });
    let mut w = StateTangent::zeros(&scene);
    w.bodies[0].positions.fill(Vec3::new(0.0, 0.0, 1.0));
    group.bench_function("vjp_10_params", |b| {
        b.iter(|| black_box(derivative.vjp(&scene, &record, &params, &w).unwrap()))
    });
    group.bench_function("position_jacobian", |b| {
        b.iter(|| black_box(derivative.position_jacobian(&scene, &record, 0).unwrap()))
    });
    group.bench_function("fd_column", |b| {
        b.iter(|| {
            for sign in [1.0, -1.0] {
                let mut s = start.clone();
                s.bodies[0].positions[100].x += sign * 1e-7;
                stepper.step(&scene, &mut s).unwrap();
                black_box(s);
            }
        })
    });
    group.finish();

    let mut group = c.benchmark_group("trunk_trajectory");
    group.sample_size(10);
    group.bench_function("rollout_100", |b| {
        b.iter(|| {
            let mut s = scene.initial_state();
            for _ in 0..100 {
                stepper.step(&scene, &mut s).unwrap();
            }
            black_box(s);
        })
    });
    group.bench_function("adjoint_100", |b| {
        b.iter(|| {
            let mut s = scene.initial_state();
            let mut tape =
                record_trajectory(&scene, &mut s, 100, TapeOptions::default(), &mut |_| {})
                    .unwrap();
            black_box(adjoint(&scene, &mut tape, &params, &w).unwrap());
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
#[path = "support/worker.rs"]
mod worker;

/// `criterion_main!`, with the group run on a pool worker (`support/worker.rs`).
fn main() {
    worker::on_worker(benches);
    Criterion::default().configure_from_args().final_summary();
}
