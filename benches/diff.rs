//! Cost of the derivatives on the Trunk (scenes/trunk.toml, 8 cables pulled with 0.2 N),
//! against the forward step they differentiate (the speed goals of docs/speed.md: the step
//! Jacobian within 0.4× a step, a VJP within 0.3×, an adjoint sweep within 1.0× the rollout):
//! - `step` vs `jacobian_10_params` (the step Jacobian with respect to the 8 cables, E and ν,
//!   from the step's own factorisation) and `vjp_10_params` (one reverse-mode pass);
//! - `rollout_100` vs `adjoint_100` (record 100 steps and sweep back for a scalar loss);
//! - `rollout_300_knots` vs `gradient_300_knots` (the gradient of a tracking loss over
//!   300 steps — the tip against a path at every step — with respect to 5 knots of each of
//!   the 8 cables, E and ν: record the run, then one reverse sweep; the goal is ≤ 2× the
//!   rollout);
//! - `position_jacobian` (d v⁺/d x, all 3n free columns) vs `fd_column` (one column of the
//!   same Jacobian by central differences: two steps; the full FD Jacobian is 3n columns).
//!
//! Run briefly: `cargo bench --bench diff -- --warm-up-time 1 --measurement-time 5`.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group};
use diffsoro::diff::{
    ActuationKnots, InputTangent, Recorder, StateTangent, StepDerivative, TapeOptions, adjoint,
    adjoint_series, every_parameter, record_trajectory, record_trajectory_with,
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

    // A tracking loss over 300 steps: L = ½ Σ_s ‖p_tip(s) − y(s)‖², y(s) 5 mm off the tip.
    let names: Vec<String> = (1..=8).map(|i| format!("c{i}")).collect();
    let mut knots =
        ActuationKnots::at_current_inputs(&scene, &names, ActuationKnots::uniform_times(3.0, 5))
            .unwrap();
    for (a, row) in knots.values.iter_mut().enumerate() {
        for (j, q) in row.iter_mut().enumerate() {
            *q = 0.1 + 0.05 * ((a + 2 * j) % 5) as f64;
        }
    }
    let (tip_body, tip) = scene.effector("tip").unwrap();
    let point = tip.point;
    let dt = scene.simulation.dt;
    let list: Vec<_> = params[8..]
        .iter()
        .chain(&knots.actuators)
        .copied()
        .collect();
    let columns: Vec<usize> = (2..list.len()).collect();
    let mut group = c.benchmark_group("trunk_trajectory_loss");
    group.sample_size(10);
    group.bench_function("rollout_300_knots", |b| {
        b.iter(|| {
            let mut sc = scene.clone();
            let mut s = sc.initial_state();
            let mut stepper = Stepper::new(&sc).unwrap();
            for k in 0..300 {
                knots.apply(&mut sc, ActuationKnots::step_time(dt, k));
                stepper.step(&sc, &mut s).unwrap();
            }
            black_box(s);
        })
    });
    group.bench_function("gradient_300_knots", |b| {
        b.iter(|| {
            let mut sc = scene.clone();
            let mut s = sc.initial_state();
            let mut tape = record_trajectory_with(
                &mut sc,
                &mut s,
                300,
                TapeOptions::default(),
                &mut |k, sc| {
                    knots.apply(sc, ActuationKnots::step_time(dt, k));
                    Ok(())
                },
                &mut |_| {},
            )
            .unwrap();
            let offset = Vec3::new(0.005, 0.0, 0.0);
            let result = adjoint_series(
                &sc,
                &mut tape,
                &list,
                // ∂L/∂x_s = Eᵀ(p_tip − y); the path lies 5 mm off the tip at every step, so
                // the residual is the constant −offset and reading the states is not timed.
                &mut |t| {
                    (t > 0).then(|| {
                        let mut c = StateTangent::zeros(&sc);
                        point.spread(-offset, &mut c.bodies[tip_body].positions);
                        c
                    })
                },
                true,
            )
            .unwrap();
            black_box(knots.chain(&result.per_step, &columns, dt));
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
