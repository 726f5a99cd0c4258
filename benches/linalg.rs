//! Speed of the `linalg` layer on structured 3D grids of tetrahedra (3 DOFs per node, the
//! face z = 0 fixed): symbolic analysis (done once per mesh), numeric LLᵀ factorisation
//! (every step), one solve, a 16-column solve, parallel assembly and the symmetric product.
//!
//! Run briefly: `cargo bench --bench linalg -- --warm-up-time 1 --measurement-time 3`.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use diffsoro::linalg::{
    FactorKind, FactorOrdering, MemBuffer, MemStack, NumericFactor, SymbolicFactor,
    SymbolicOptions, SymmetricPattern,
};
use diffsoro::math::Vec3;
use nalgebra::SMatrix;
use std::hint::black_box;
use std::sync::Arc;

/// Tetrahedra of a grid of `n × n × n` nodes (the project's box mesher: every hexahedral
/// cell split in 6 tetrahedra around its main diagonal). Returns the node coordinates (unit
/// spacing) and the tetrahedra.
fn grid_tetrahedra(n: usize) -> (Vec<Vec3>, Vec<[usize; 4]>) {
    let side = (n - 1) as f64;
    let mesh = diffsoro::mesh::box_mesh([n - 1; 3], [0.0; 3], [side; 3]).unwrap();
    (mesh.positions().to_vec(), mesh.tetrahedra().to_vec())
}

/// Pseudo-random SPD 12×12 clique blocks `GᵀG + I` in the row-major flat buffer.
fn spd_blocks(pattern: &SymmetricPattern) -> Vec<f64> {
    let plan = pattern.plan();
    let mut blocks = vec![0.0; plan.block_buffer_len()];
    let mut state = 1u64;
    for e in 0..plan.n_cliques() {
        let g = SMatrix::<f64, 12, 12>::from_fn(|_, _| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        });
        let b = g.transpose() * g + SMatrix::<f64, 12, 12>::identity();
        let o = plan.block_offset(e);
        for r in 0..12 {
            for c in 0..12 {
                blocks[o + r * 12 + c] = b[(r, c)];
            }
        }
    }
    blocks
}

fn bench_linalg(c: &mut Criterion) {
    let mut group = c.benchmark_group("linalg");
    group.sample_size(10);
    // 10³ nodes ≈ 3k unknowns, 22³ nodes ≈ 32k unknowns.
    for side in [10usize, 22] {
        let (xyz, tets) = grid_tetrahedra(side);
        let n_nodes = xyz.len();
        let removed: Vec<bool> = (0..3 * n_nodes).map(|d| d / 3 < side * side).collect();
        let pattern = SymmetricPattern::new(n_nodes, 3, &tets, &removed).unwrap();
        let n = pattern.n();
        let blocks = spd_blocks(&pattern);
        let mut values = vec![0.0; pattern.nnz()];
        pattern.assemble(&blocks, &mut values);

        group.bench_function(BenchmarkId::new("pattern", n), |b| {
            b.iter(|| SymmetricPattern::new(n_nodes, 3, black_box(&tets), &removed).unwrap())
        });
        group.bench_function(BenchmarkId::new("assemble", n), |b| {
            b.iter(|| pattern.assemble(black_box(&blocks), &mut values))
        });
        group.bench_function(BenchmarkId::new("symbolic", n), |b| {
            b.iter(|| SymbolicFactor::new(black_box(&pattern)).unwrap())
        });
        let symbolic = Arc::new(SymbolicFactor::new(&pattern).unwrap());
        eprintln!(
            "n = {n}, nnz(lower A) = {}, nnz(L) = {}, supernodal = {}",
            pattern.nnz(),
            symbolic.factor_len(),
            symbolic.is_supernodal()
        );
        let mut factor = NumericFactor::new(symbolic.clone(), FactorKind::Llt);
        group.bench_function(BenchmarkId::new("numeric_llt", n), |b| {
            b.iter(|| factor.factorize(&pattern, black_box(&values)).unwrap())
        });
        let mut ldlt = NumericFactor::new(symbolic.clone(), FactorKind::Ldlt);
        group.bench_function(BenchmarkId::new("numeric_ldlt", n), |b| {
            b.iter(|| ldlt.factorize(&pattern, black_box(&values)).unwrap())
        });
        let nd = SymbolicOptions {
            ordering: FactorOrdering::NestedDissection(&xyz),
            ..Default::default()
        };
        group.bench_function(BenchmarkId::new("symbolic_nd", n), |b| {
            b.iter(|| SymbolicFactor::with_options(black_box(&pattern), nd).unwrap())
        });
        let symbolic_nd = Arc::new(SymbolicFactor::with_options(&pattern, nd).unwrap());
        eprintln!(
            "nested dissection: nnz(L) = {}, supernodal = {}",
            symbolic_nd.factor_len(),
            symbolic_nd.is_supernodal()
        );
        let mut factor_nd = NumericFactor::new(symbolic_nd, FactorKind::Llt);
        group.bench_function(BenchmarkId::new("numeric_llt_nd", n), |b| {
            b.iter(|| factor_nd.factorize(&pattern, black_box(&values)).unwrap())
        });
        factor_nd.factorize(&pattern, &values).unwrap();
        factor.factorize(&pattern, &values).unwrap();
        let k = 16;
        let mut buffer = MemBuffer::new(factor.solve_scratch(k));
        let stack = MemStack::new(&mut buffer);
        let mut rhs = vec![1.0; n];
        group.bench_function(BenchmarkId::new("solve_1", n), |b| {
            b.iter(|| factor.solve_vec_in_place(black_box(&mut rhs), stack))
        });
        group.bench_function(BenchmarkId::new("solve_1_nd", n), |b| {
            b.iter(|| factor_nd.solve_vec_in_place(black_box(&mut rhs), stack))
        });
        let mut rhs = vec![1.0; n * k];
        group.bench_function(BenchmarkId::new("solve_16", n), |b| {
            b.iter(|| factor.solve_columns_in_place(black_box(&mut rhs), k, stack))
        });
        let x = vec![1.0; n];
        let mut y = vec![0.0; n];
        group.bench_function(BenchmarkId::new("symmetric_product", n), |b| {
            b.iter(|| pattern.symmetric_product(&values, black_box(&x), &mut y))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_linalg);
criterion_main!(benches);
