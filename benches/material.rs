//! Per-element material cost: P + ∂P/∂F (the force and stiffness hot path of the FEM
//! assembly), and the second directional derivative used by the gradients, per law.

use criterion::{Criterion, criterion_group, criterion_main};
use diffsoro::material::{Law, Material};
use diffsoro::math::Mat3;
use std::hint::black_box;

fn material(c: &mut Criterion) {
    let f = Mat3::new(1.05, 0.1, -0.02, 0.03, 0.97, 0.08, -0.05, 0.02, 1.1);
    let df1 = Mat3::new(0.3, -0.1, 0.2, 0.0, 0.5, -0.4, 0.1, 0.2, -0.3);
    let df2 = Mat3::new(-0.2, 0.4, 0.1, 0.3, -0.1, 0.0, 0.5, -0.2, 0.2);
    for law in [Law::Corotational, Law::StVK, Law::NeoHookean] {
        let m = Material::new(law, 1.0e6, 0.3).unwrap();
        c.bench_function(&format!("{law}/stress_and_tangent"), |b| {
            b.iter(|| m.at(black_box(&f)).unwrap().stress_and_tangent())
        });
        c.bench_function(&format!("{law}/tangent_derivative"), |b| {
            b.iter(|| {
                m.at(black_box(&f))
                    .unwrap()
                    .tangent_derivative(black_box(&df1), black_box(&df2))
            })
        });
    }
}

criterion_group!(benches, material);
criterion_main!(benches);
