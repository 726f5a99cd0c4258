//! Rigid-body dynamics timings (RNEA, CRBA, ABA, ABA derivatives) on UR5, the quadruped on a
//! free-flyer (nv 18) and the humanoid on a free-flyer (nv 38), and the real UR5 and Go1 files of
//! example-robot-data (`urdf/real/`), one core. Pinocchio's figures for the same models on the
//! same machine come from `benches/pinocchio_reference.cpp`; the last side-by-side run is in
//! docs/speed.md ("Rigid bodies").

use criterion::{Criterion, criterion_group, criterion_main};
use diffsoro::rigid::{
    Base, Data, Model, aba, compute_aba_derivatives, compute_minverse, compute_rnea_derivatives,
    crba, crba_world, load_urdf, rnea,
};
use std::hint::black_box;
use std::path::PathBuf;

fn load(name: &str, base: Base) -> Model {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("urdf")
        .join(name);
    load_urdf(&path, base).expect("model loads")
}

/// A deterministic non-trivial state: q = neutral ⊕ δ, with v, a, τ from a fixed sequence.
fn state(m: &Model) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let seq = |k: usize, s: f64| {
        (0..m.nv)
            .map(|i| s * (((i * 7 + k) % 11) as f64 / 5.0 - 1.0))
            .collect::<Vec<_>>()
    };
    let q0 = m.neutral();
    let mut q = q0.clone();
    m.integrate(&q0, &seq(1, 0.8), &mut q);
    (q, seq(2, 1.0), seq(3, 2.0), seq(4, 5.0))
}

fn bench_model(c: &mut Criterion, label: &str, m: &Model) {
    let mut data = Data::new(m);
    let (q, v, a, tau) = state(m);
    let mut g = c.benchmark_group(label);
    g.bench_function("rnea", |b| {
        b.iter(|| black_box(rnea(m, &mut data, &q, &v, &a)[0]))
    });
    g.bench_function("crba", |b| {
        b.iter(|| black_box(crba(m, &mut data, &q)[(0, 0)]))
    });
    // The rigid step's CRBA, which also leaves oMi and the world Jacobian columns current.
    g.bench_function("crba_world", |b| {
        b.iter(|| black_box(crba_world(m, &mut data, &q)[(0, 0)]))
    });
    g.bench_function("aba", |b| {
        b.iter(|| black_box(aba(m, &mut data, &q, &v, &tau)[0]))
    });
    g.bench_function("minverse", |b| {
        b.iter(|| black_box(compute_minverse(m, &mut data, &q)[(0, 0)]))
    });
    g.bench_function("rnea_derivatives", |b| {
        b.iter(|| {
            compute_rnea_derivatives(m, &mut data, &q, &v, &a);
            black_box(data.dtau_dq[(0, 0)])
        })
    });
    g.bench_function("aba_derivatives", |b| {
        b.iter(|| {
            compute_aba_derivatives(m, &mut data, &q, &v, &tau);
            black_box(data.ddq_dq[(0, 0)])
        })
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    bench_model(c, "ur5", &load("ur5.urdf", Base::Fixed));
    bench_model(c, "quadruped_ff", &load("quadruped.urdf", Base::FreeFlyer));
    bench_model(c, "humanoid_ff", &load("humanoid.urdf", Base::FreeFlyer));
    // The real robot files of example-robot-data (urdf/real/), for side-by-side comparisons
    // with Pinocchio on the same URDF.
    bench_model(c, "ur5_real", &load("real/ur5_robot.urdf", Base::Fixed));
    bench_model(c, "go1_ff", &load("real/go1.urdf", Base::FreeFlyer));
}

criterion_group!(rigid, benches);
criterion_main!(rigid);
