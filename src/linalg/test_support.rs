//! Test support of the `linalg` tests: the cliques of a structured grid of tetrahedra (the
//! `mesh` module's box mesher is a layer-1 sibling, so these tests build their own), the
//! dense form of a stored lower triangle, and a pool of a given number of threads.

use std::sync::Arc;

use super::{FactorMethod, SymbolicFactor, SymbolicOptions, SymmetricPattern};
use crate::math::{DMat, SplitMix64, Vec3};

/// `f()` run on a rayon pool of `threads` threads: what the thread-count tests compare.
pub(crate) fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a rayon pool")
        .install(f)
}

/// Tetrahedra of an `nx × ny × nz`-cell grid with unit spacing, each cube split in 6
/// tetrahedra around its main diagonal, node `(i, j, k)` numbered
/// `first + i + (nx + 1)(j + (ny + 1) k)`; coordinates shifted by `offset` along x.
pub(crate) fn grid_tetrahedra(
    cells: [usize; 3],
    first: usize,
    offset: f64,
) -> (Vec<Vec3>, Vec<[usize; 4]>) {
    let [nx, ny, nz] = cells;
    let id = |i: usize, j: usize, k: usize| first + (k * (ny + 1) + j) * (nx + 1) + i;
    let mut tets = Vec::with_capacity(6 * nx * ny * nz);
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let c = [
                    id(i, j, k),
                    id(i + 1, j, k),
                    id(i + 1, j + 1, k),
                    id(i, j + 1, k),
                    id(i, j, k + 1),
                    id(i + 1, j, k + 1),
                    id(i + 1, j + 1, k + 1),
                    id(i, j + 1, k + 1),
                ];
                for path in [[1, 2], [2, 3], [3, 7], [7, 4], [4, 5], [5, 1]] {
                    tets.push([c[0], c[path[0]], c[path[1]], c[6]]);
                }
            }
        }
    }
    let mut xyz = Vec::with_capacity((nx + 1) * (ny + 1) * (nz + 1));
    for k in 0..=nz {
        for j in 0..=ny {
            for i in 0..=nx {
                xyz.push(Vec3::new(i as f64 + offset, j as f64, k as f64));
            }
        }
    }
    (xyz, tets)
}

/// The full symmetric dense matrix of lower-triangle `values` on pattern `p`.
pub(crate) fn to_dense(p: &SymmetricPattern, values: &[f64]) -> DMat {
    let mut a = DMat::zeros(p.n(), p.n());
    for c in 0..p.n() {
        let column = p.col_ptr()[c]..p.col_ptr()[c + 1];
        for (&r, &value) in p.row_idx()[column.clone()].iter().zip(&values[column]) {
            a[(r, c)] = value;
            a[(c, r)] = value;
        }
    }
    a
}

/// Random symmetric clique blocks on `plan` (the flat buffer of
/// [`super::AssemblyPlan`]): each entry uniform in [−1, 1), times 10ᵏ with k uniform in
/// −`decades`..=`decades` (mixed magnitudes, so that sums in another order differ in their
/// last bits); with `decades = 0` one draw per entry.
pub(crate) fn random_symmetric_blocks(
    plan: &super::AssemblyPlan,
    decades: u64,
    rng: &mut SplitMix64,
) -> Vec<f64> {
    let mut blocks = vec![0.0; plan.block_buffer_len()];
    for e in 0..plan.n_cliques() {
        let kb = plan.block_dim(e);
        let o = plan.block_offset(e);
        for r in 0..kb {
            for c in 0..=r {
                let mut x = rng.uniform();
                if decades > 0 {
                    x *= 10f64.powi((rng.next_u64() % (2 * decades + 1)) as i32 - decades as i32);
                }
                blocks[o + r * kb + c] = x;
                blocks[o + c * kb + r] = x;
            }
        }
    }
    blocks
}

/// Random SPD clique blocks (`GᵀG` per clique) plus a positive diagonal: an SPD matrix.
pub(crate) fn random_spd_values(p: &SymmetricPattern, rng: &mut SplitMix64) -> Vec<f64> {
    let plan = p.plan();
    let mut blocks = vec![0.0; plan.block_buffer_len()];
    for e in 0..plan.n_cliques() {
        let kb = plan.block_dim(e);
        let g = DMat::from_fn(kb, kb, |_, _| rng.uniform());
        let b = g.transpose() * g;
        let o = plan.block_offset(e);
        for r in 0..kb {
            for c in 0..kb {
                blocks[o + r * kb + c] = b[(r, c)];
            }
        }
    }
    let mut values = vec![0.0; p.nnz()];
    p.assemble(&blocks, &mut values);
    let diag: Vec<f64> = (0..p.n()).map(|_| 0.1 + rng.uniform().abs()).collect();
    p.add_diagonal(&mut values, 1.0, &diag);
    values
}

/// The grid of `cells` (3 DOFs per node, all free) and random SPD values on its pattern,
/// drawn from `rng`.
pub(crate) fn free_grid_system(
    cells: [usize; 3],
    rng: &mut SplitMix64,
) -> (SymmetricPattern, Vec<f64>) {
    let (xyz, tets) = grid_tetrahedra(cells, 0, 0.0);
    let pattern = SymmetricPattern::new(xyz.len(), 3, &tets, &vec![false; 3 * xyz.len()])
        .expect("a grid's pattern");
    let values = random_spd_values(&pattern, rng);
    (pattern, values)
}

/// The symbolic analysis of `pattern` with the default ordering and the layout `method`.
pub(crate) fn symbolic_with_layout(
    pattern: &SymmetricPattern,
    method: FactorMethod,
) -> Arc<SymbolicFactor> {
    let options = SymbolicOptions {
        method,
        ..Default::default()
    };
    Arc::new(SymbolicFactor::with_options(pattern, options).expect("an analysis"))
}
