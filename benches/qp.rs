//! Cost of one inverse-control QP of the Trunk's size (8 cable tensions, 3 effector rows):
//! `min ½‖W Δλ − e‖² + ½ε‖Δλ‖²` with pull-only, maximum-force and maximum-change bounds, for
//! the clarabel backend (cold: an interior point cannot warm start) and, with
//! `--features osqp`, the OSQP backend warm-started from the previous step's QP.
//!
//! Run briefly: `cargo bench --bench qp [--features osqp] -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use diffsoro::control::{ClarabelSolver, Qp, QpSettings, QpSolver};
use diffsoro::math::{DMat, DVec, SplitMix64};

/// The QP of one control step with a random effector Jacobian `W` (3×8, m/N) and error `e`.
fn control_qp(rng: &mut SplitMix64, lambda: &DVec) -> Qp {
    let n = 8;
    let w = DMat::from_fn(3, n, |_, _| 0.01 * rng.uniform());
    let e = DVec::from_fn(3, |_, _| 0.005 * rng.uniform());
    let p = w.transpose() * &w + DMat::identity(n, n) * 1e-6;
    let q = -(w.transpose() * e);
    // Δλ with 0 ≤ λ + Δλ ≤ 5 N and |Δλ| ≤ 0.5 N.
    let lower = DVec::from_fn(n, |i, _| (-lambda[i]).max(-0.5));
    let upper = DVec::from_fn(n, |i, _| (5.0 - lambda[i]).min(0.5));
    Qp::new(p, q).with_bounds(lower, upper)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("control_qp_8");
    let lambda = DVec::from_element(8, 1.0);
    let mut rng = SplitMix64::new(1);
    let qps: Vec<Qp> = (0..64).map(|_| control_qp(&mut rng, &lambda)).collect();
    let mut clarabel = ClarabelSolver::new(QpSettings::default());
    let mut k = 0;
    group.bench_function("clarabel", |b| {
        b.iter(|| {
            k = (k + 1) % qps.len();
            black_box(clarabel.solve(&qps[k]).unwrap());
        })
    });
    #[cfg(feature = "osqp")]
    {
        // Successive control steps differ a little: warm starts from the previous step.
        let base = &qps[0];
        let nearby: Vec<Qp> = (0..64)
            .map(|i| {
                let mut qp = base.clone();
                qp.q *= 1.0 + 1e-4 * i as f64;
                qp
            })
            .collect();
        let mut osqp = diffsoro::control::OsqpSolver::new(QpSettings::default());
        let mut k = 0;
        group.bench_function("osqp_warm", |b| {
            b.iter(|| {
                k = (k + 1) % nearby.len();
                black_box(osqp.solve(&nearby[k]).unwrap());
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
