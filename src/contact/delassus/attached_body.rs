//! One soft body's part in the elimination of its attachment rows through its factor
//! (`crate::contact::AttachedReduction`, whose module doc has the algebra): its attachments' 3 × 3
//! blocks of B over the trailing block of its factor, `L_tt`, the forward solves `Y` of its
//! other rows, and the products with `E = L_ttᵀ B⁻¹`.

use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::{Accum, MatMut, MatRef, Par};

use super::assembly::{SolveStack, forward_rows, reduced_rows};
use super::attached_reduction::ReductionBody;
use crate::math::{DMat, Mat3, Vec3};

/// One attachment (3 rows): its contact in the group, the trailing-block positions of the
/// three DOFs it reads, and the inverse of its 3 × 3 block of B.
#[derive(Debug, Clone, Copy)]
struct Block {
    group: usize,
    pos: [usize; 3],
    f_inv: Mat3,
}

/// The buffers of one body with attachment rows.
#[derive(Default)]
pub(super) struct AttachedBody {
    blocks: Vec<Block>,
    /// Its other contacts: (its own index, the reduced problem's index).
    pub(super) others: Vec<(usize, usize)>,
    /// Size of A, first step of the trailing block, size of the block.
    n: usize,
    t0: usize,
    pub(super) m: usize,
    covered: Vec<bool>,
    l_tt: Vec<f64>,
    /// Y = L⁻¹ P H_cᵀ for the other rows (n × 3·others), column-major.
    y: Vec<f64>,
    /// h Y_oᵀ Y_o (3·others square, column-major).
    pub(super) gram: Vec<f64>,
    /// [V e] = E [U_b g_b] (m × (r + 1), column-major).
    pub(super) v: Vec<f64>,
    row_ptr: Vec<usize>,
    entries: Vec<(usize, f64)>,
    /// The other contacts' rows of H (3 each), and the forward solve's workspace.
    rows: Vec<usize>,
    stack: SolveStack,
}

impl AttachedBody {
    /// `[V e] = E [U_b g_b] = L_ttᵀ B⁻¹ [U_b g_b]` (m × (r + 1), column-major, into `self.v`),
    /// `U_b` and `g_b` the blocks' rows of `u` (3k × r) and `g`; `x` is scratch.
    pub(super) fn project(&mut self, u: &DMat, g: &[f64], x: &mut Vec<f64>) {
        let (m, r) = (self.m, u.ncols());
        x.clear();
        x.resize(m * (r + 1), 0.0);
        for b in &self.blocks {
            let rows = 3 * b.group..3 * b.group + 3;
            for kappa in 0..=r {
                let v = if kappa < r {
                    Vec3::from_fn(|i, _| u[(rows.start + i, kappa)])
                } else {
                    Vec3::from_column_slice(&g[rows.clone()])
                };
                let s = b.f_inv * v;
                for d in 0..3 {
                    x[kappa * m + b.pos[d]] = s[d];
                }
            }
        }
        self.v.clear();
        self.v.resize(m * (r + 1), 0.0);
        matmul(
            MatMut::from_column_major_slice_mut(&mut self.v, m, r + 1),
            Accum::Replace,
            MatRef::from_column_major_slice(&self.l_tt, m, m).transpose(),
            MatRef::from_column_major_slice(x, m, r + 1),
            1.0,
            Par::Seq,
        );
    }

    /// e = E g_b (after [`Self::project`]).
    pub(super) fn e(&self) -> &[f64] {
        &self.v[self.v.len() - self.m..]
    }

    /// `λ_b = −Eᵀ z = −B⁻ᵀ L_tt z` into `lambda` at the blocks' rows.
    pub(super) fn apply_minus_et(&self, z: &[f64], y: &mut Vec<f64>, lambda: &mut [f64]) {
        let m = self.m;
        y.clear();
        y.resize(m, 0.0);
        for (j, &zj) in z.iter().enumerate() {
            for (yi, l) in y[j..].iter_mut().zip(&self.l_tt[j * m + j..(j + 1) * m]) {
                *yi += l * zj;
            }
        }
        for b in &self.blocks {
            let v = Vec3::new(y[b.pos[0]], y[b.pos[1]], y[b.pos[2]]);
            let l = -(b.f_inv.transpose() * v);
            lambda[3 * b.group..3 * b.group + 3].copy_from_slice(l.as_slice());
        }
    }

    /// The trailing block's rows of Y: T (m × 3·others), column-major with stride n.
    pub(super) fn tail(&self) -> MatRef<'_, f64> {
        let k = 3 * self.others.len();
        MatRef::from_column_major_slice(&self.y, self.n, k).subrows(self.t0, self.m)
    }

    /// Reads `body` (its contacts' group indices in `body.rows`, `bilateral` and
    /// `reduced_index` per contact of the group) and solves its other rows forward: Y, h Y_oᵀ Y_o
    /// and L_tt. False when its structure does not allow the reduction (module doc).
    pub(super) fn prepare(
        &mut self,
        h: f64,
        body: &ReductionBody,
        bilateral: &[bool],
        reduced_index: &[usize],
    ) -> bool {
        let a = self;
        let symbolic = body.factor.symbolic();
        let (n, t0) = (symbolic.n(), symbolic.tail_start());
        let Some(m) = body.factor.trailing_factor(&mut a.l_tt) else {
            return false;
        };
        if 3 * body.jacobian.node_count() != body.dofs.n_full() || body.dofs.n_reduced() != n {
            return false;
        }
        (a.n, a.t0, a.m) = (n, t0, m);
        reduced_rows(body.jacobian, body.dofs, &mut a.row_ptr, &mut a.entries);
        let row = |i: usize| &a.entries[a.row_ptr[i]..a.row_ptr[i + 1]];
        a.blocks.clear();
        a.others.clear();
        a.covered.clear();
        a.covered.resize(m, false);
        for (j, &gi) in body.rows.iter().enumerate() {
            if !bilateral[gi] {
                a.others.push((j, reduced_index[gi]));
                continue;
            }
            // The three DOFs its rows read, and its 3 × 3 block of B over them.
            let mut dofs = [usize::MAX; 3];
            let mut count = 0;
            for r in 0..3 {
                for &(dof, _) in row(3 * j + r) {
                    if !dofs[..count].contains(&dof) {
                        if count == 3 {
                            return false;
                        }
                        dofs[count] = dof;
                        count += 1;
                    }
                }
            }
            if count != 3 {
                return false;
            }
            let mut f = Mat3::zeros();
            for r in 0..3 {
                for &(dof, v) in row(3 * j + r) {
                    let d = dofs
                        .iter()
                        .position(|&x| x == dof)
                        .expect("collected above");
                    f[(r, d)] += v;
                }
            }
            let scale = f.norm();
            if !(f.determinant().abs() > 1e-12 * scale * scale * scale) {
                return false;
            }
            let Some(f_inv) = f.try_inverse() else {
                return false;
            };
            let mut pos = [0; 3];
            for d in 0..3 {
                let step = symbolic.step_of_dof(dofs[d]);
                if step < t0 || a.covered[step - t0] {
                    return false;
                }
                a.covered[step - t0] = true;
                pos[d] = step - t0;
            }
            a.blocks.push(Block {
                group: gi,
                pos,
                f_inv,
            });
        }
        if 3 * a.blocks.len() != m {
            return false;
        }
        // Y = L⁻¹ P H_cᵀ for the other rows, and h Y_oᵀ Y_o mirrored from its lower triangle.
        let kp = 3 * a.others.len();
        a.rows.clear();
        a.rows
            .extend(a.others.iter().flat_map(|&(j, _)| 3 * j..3 * j + 3));
        if !forward_rows(
            body.factor,
            (&a.row_ptr, &a.entries),
            &a.rows,
            &mut a.y,
            &mut a.stack,
        ) {
            return false;
        }
        a.gram.clear();
        a.gram.resize(kp * kp, 0.0);
        if kp == 0 {
            return true;
        }
        let y_o = MatRef::from_column_major_slice(&a.y, n, kp).subrows(0, t0);
        triangular::matmul(
            MatMut::from_column_major_slice_mut(&mut a.gram, kp, kp),
            BlockStructure::TriangularLower,
            Accum::Replace,
            y_o.transpose(),
            BlockStructure::Rectangular,
            y_o,
            BlockStructure::Rectangular,
            h,
            Par::Seq,
        );
        for j in 0..kp {
            for i in j + 1..kp {
                a.gram[j + i * kp] = a.gram[i + j * kp];
            }
        }
        true
    }
}
