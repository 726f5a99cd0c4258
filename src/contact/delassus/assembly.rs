//! The Delassus matrix `G = h H_c A⁻¹ H_cᵀ` ((m/s)/N) of one soft body, assembled with the
//! step's factorisation of `A = M + hD + h²K` (docs/step.md; the Jacobian `H_c` in
//! [`crate::contact::ContactJacobian`]).
//!
//! Two ways, both on the factor at hand (never a second factorisation, never an inverse of
//! `A`):
//! - **the forward half of a solve** (an `L Lᵀ` factor, either layout, and not too many
//!   rows for the body's size: `FORWARD_RATIO`): with
//!   `P A Pᵀ = L Lᵀ`, `G = h YᵀY` for `Y = L⁻¹ P H_cᵀ` (`NumericFactor::forward_solve_reach`:
//!   each row's column carried only through the supernodes it reaches), exactly symmetric; and
//!   with a trailing block
//!   (`linalg::FactorOrdering::AmdWithLast`: a body's attached nodes eliminated last, a third
//!   of `gripper_lift`'s pads) the rows that read only the block's DOFs have `Y` zero above
//!   it, so theirs is `L_tt⁻¹ B` with `L_tt` the block of `L`
//!   (`NumericFactor::trailing_factor`), a dense triangular solve of the block's size
//!   instead of a sparse substitution through all of `L`;
//! - **a whole solve** otherwise: one multi-right-hand-side solve gives the columns
//!   `A⁻¹ H_cᵀ`, then `G[i, j] = h row_i(H_c) · column_j`.
//!
//! Derivative passes reuse `A⁻¹ H_cᵀ` for every row ([`DelassusWorkspace::solved_columns`]),
//! so a workspace told to keep them ([`DelassusWorkspace::keep_columns`]) takes the second
//! way.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::{Accum, MatMut, MatRef, Par};

use super::jacobian::ContactJacobian;
use crate::error::{Error, Result};
use crate::linalg::{DofMap, FactorKind, ForwardReach, NumericFactor};
use crate::math::DMat;

/// A factor's solve workspace for up to some number of right-hand sides, grown when more are
/// asked for, never shrunk.
#[derive(Default)]
pub(super) struct SolveStack {
    buffer: Option<MemBuffer>,
    columns: usize,
    /// The buffers of the forward solve by reaches (`NumericFactor::forward_solve_reach`).
    reach: ForwardReach,
}

impl SolveStack {
    /// The workspace of `factor`'s solves with `k` right-hand sides.
    pub(super) fn for_columns(&mut self, factor: &NumericFactor, k: usize) -> &mut MemStack {
        if self.buffer.is_none() || self.columns < k {
            self.buffer = Some(MemBuffer::new(factor.solve_scratch(k)));
            self.columns = k;
        }
        MemStack::new(self.buffer.as_mut().expect("allocated above"))
    }
}

/// `Y = L⁻¹ P Bᵀ` into `y` (n × rows.len(), column-major) for the rows `rows` of the CSR
/// (`row_ptr`, `entries` over the reduced DOFs, [`reduced_rows`]), `P A Pᵀ = L Lᵀ` the
/// factor's: the forward half of a solve (`NumericFactor::forward_solve_reach_supported`, or
/// `forward_solve_permuted` for the simplicial layout). False, and `y` unsolved, unless the
/// factor is a factorised `L Lᵀ`.
pub(super) fn forward_rows(
    factor: &NumericFactor,
    (row_ptr, entries): (&[usize], &[(usize, f64)]),
    rows: &[usize],
    y: &mut Vec<f64>,
    stack: &mut SolveStack,
) -> bool {
    let symbolic = factor.symbolic();
    let n = symbolic.n();
    let k = rows.len();
    y.clear();
    y.resize(n * k, 0.0);
    for (c, &j) in rows.iter().enumerate() {
        for &(r, v) in &entries[row_ptr[j]..row_ptr[j + 1]] {
            y[c * n + symbolic.step_of_dof(r)] += v;
        }
    }
    // Each row's column carried through its reach in the supernodal layout (a few non-zeros
    // per column: most of L's leaves skipped), faer's forward solve in the simplicial one.
    // Each column's non-zero rows are those of its row of H, not scanned for.
    let support = |c: usize| {
        entries[row_ptr[rows[c]]..row_ptr[rows[c] + 1]]
            .iter()
            .map(|&(r, _)| symbolic.step_of_dof(r))
    };
    k == 0
        || factor.forward_solve_reach_supported(y, k, support, &mut stack.reach)
        || factor.forward_solve_permuted(y, k, stack.for_columns(factor, k))
}

/// The forward path (module doc) is taken when `k · n ≤ FORWARD_RATIO · nnz(L)` for k rows
/// of H_c and n DOFs: it saves a sparse substitution through L per row (`nnz(L)`
/// multiply-adds) and pays `k n / 2` per row in the dense lower triangle of YᵀY, which runs
/// several times faster per operation. It wins (docs/speed.md) up to `pianist`'s Finger,
/// 171 rows on 420 DOFs with `nnz(L)/n = 46` (k n / nnz(L) = 3.7), and by more below; past 4,
/// untried, the whole solve is kept.
const FORWARD_RATIO: usize = 4;

/// Reusable buffers of [`assemble_delassus`]: the `n_reduced × 3n` right-hand sides (then
/// `A⁻¹ H_cᵀ`, or `L⁻¹ P H_cᵀ` with a trailing block), the block's dense buffers and the solve
/// workspace (grown when the number of contacts grows, never shrunk).
#[derive(Default)]
pub struct DelassusWorkspace {
    columns: Vec<f64>,
    stack: SolveStack,
    /// The rows of H_c over the reduced DOFs: row pointers and (reduced DOF, coefficient).
    row_ptr: Vec<usize>,
    entries: Vec<(usize, f64)>,
    /// Solve every column through all of L (module doc).
    keep_columns: bool,
    /// Whether `columns` holds A⁻¹ H_cᵀ for every row after the last assembly.
    complete: bool,
    /// The rows reading DOFs before the trailing block (or any, without one), and the rows
    /// reading only the block's.
    through_l: Vec<usize>,
    through_tail: Vec<usize>,
    /// L_tt (m × m), the block's rows over it then L_tt⁻¹ of them (m × t), and the products
    /// h YᵀY before they are placed in G.
    tail_factor: Vec<f64>,
    tail_rhs: Vec<f64>,
    tail_g: Vec<f64>,
}

impl DelassusWorkspace {
    /// `A⁻¹ H_cᵀ` over the free DOFs from the last [`assemble_delassus`] (column-major,
    /// one column per row of `H_c`, `n_free` values each): what the step's derivatives reuse
    /// instead of solving again.
    ///
    /// Panics unless the workspace keeps its columns ([`Self::keep_columns`]) or the last
    /// assembly solved every column anyway (an `L D Lᵀ` factor).
    pub fn solved_columns(&self) -> &[f64] {
        assert!(
            self.complete,
            "DelassusWorkspace::solved_columns: the columns are kept only with keep_columns(true)"
        );
        &self.columns
    }

    /// Whether every column `A⁻¹ H_cᵀ` is solved and kept (derivative passes), or an `L Lᵀ`
    /// factor takes the cheaper forward path (the default; module doc).
    pub fn keep_columns(&mut self, keep: bool) {
        self.keep_columns = keep;
    }

    /// Whether [`Self::keep_columns`] is on (a derivative pass will read the columns and G).
    pub fn keeps_columns(&self) -> bool {
        self.keep_columns
    }
}

impl std::fmt::Debug for DelassusWorkspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DelassusWorkspace")
            .field("columns", &self.columns.len())
            .field("keep_columns", &self.keep_columns)
            .finish()
    }
}

/// `G = h H_c A⁻¹ H_cᵀ` ((m/s)/N, 3n×3n, symmetric) into `out`, with `factor` the
/// factorisation of the body's reduced `A` (over the free DOFs of `dofs`) used by the step
/// (module doc: one multi-right-hand-side solve, or with a trailing block the forward half of
/// one and the block's dense path).
///
/// Errors when `h` is not positive and finite, when the Jacobian's node count does not match
/// `dofs`, when `factor` is not factorised or has another size, or when the Jacobian's rows
/// are not a multiple of 3.
pub fn assemble_delassus(
    h: f64,
    jacobian: &ContactJacobian,
    dofs: &DofMap,
    factor: &NumericFactor,
    workspace: &mut DelassusWorkspace,
    out: &mut DMat,
) -> Result<()> {
    if !(h > 0.0) || !h.is_finite() {
        return Err(Error::invalid("time step", format!("{h} must be positive")));
    }
    if 3 * jacobian.node_count() != dofs.n_full() {
        return Err(Error::invalid(
            "contact Jacobian",
            format!(
                "has {} nodes, the DOF map {} DOFs",
                jacobian.node_count(),
                dofs.n_full()
            ),
        ));
    }
    if !factor.is_factorized() || factor.symbolic().n() != dofs.n_reduced() {
        return Err(Error::invalid(
            "Delassus assembly",
            "the factor of A is not computed or does not match the DOF map",
        ));
    }
    if !jacobian.row_count().is_multiple_of(3) {
        return Err(Error::invalid(
            "contact Jacobian",
            format!("{} rows is not 3 per contact", jacobian.row_count()),
        ));
    }
    let k = jacobian.row_count();
    let nr = dofs.n_reduced();
    if out.nrows() != k || out.ncols() != k {
        *out = DMat::zeros(k, k);
    }
    workspace.complete = true;
    if k == 0 {
        workspace.columns.clear();
        return Ok(());
    }
    // The rows over the reduced DOFs (fixed DOFs drop out), split by the path they take.
    let DelassusWorkspace {
        row_ptr,
        entries,
        through_l,
        through_tail,
        ..
    } = workspace;
    reduced_rows(jacobian, dofs, row_ptr, entries);
    let row = |i: usize| &entries[row_ptr[i]..row_ptr[i + 1]];
    let symbolic = factor.symbolic();
    let t0 = symbolic.tail_start();
    // The forward half of a solve is enough unless the columns are kept (an LLᵀ); the
    // trailing block, if any, on top. It saves a substitution through L per row but pays the
    // dense product YᵀY, k²n/2 (module doc: FORWARD_RATIO).
    let forward = !workspace.keep_columns
        && factor.kind() == FactorKind::Llt
        && k * nr <= FORWARD_RATIO * symbolic.factor_len();
    let m = if forward {
        factor.trailing_factor(&mut workspace.tail_factor)
    } else {
        None
    };
    through_l.clear();
    through_tail.clear();
    for i in 0..k {
        let in_tail = m.is_some() && row(i).iter().all(|&(r, _)| symbolic.step_of_dof(r) >= t0);
        if in_tail {
            through_tail.push(i);
        } else {
            through_l.push(i);
        }
    }
    if forward {
        // Every row through the forward half of a solve only, G = h YᵀY. Y = L⁻¹ P B over
        // all of L for the rows reading DOFs before the trailing block (all rows without
        // one), over the block alone (L_tt) for the others (module doc).
        let m = m.unwrap_or(0);
        workspace.complete = false;
        let (kl, kt) = (through_l.len(), through_tail.len());
        let y_l = &mut workspace.columns;
        let solved = forward_rows(
            factor,
            (row_ptr, entries),
            through_l,
            y_l,
            &mut workspace.stack,
        );
        assert!(solved, "a factorised LLᵀ");
        let y_t = &mut workspace.tail_rhs;
        y_t.clear();
        y_t.resize(m * kt, 0.0);
        for (c, &j) in through_tail.iter().enumerate() {
            for &(r, v) in row(j) {
                y_t[c * m + symbolic.step_of_dof(r) - t0] += v;
            }
        }
        if kt > 0 {
            let l_tt = MatRef::from_column_major_slice(&workspace.tail_factor, m, m);
            solve_lower_triangular_in_place(
                l_tt,
                MatMut::from_column_major_slice_mut(y_t, m, kt),
                Par::Seq,
            );
        }
        // [G_LL ·; G_TL G_TT] (the lower blocks; Y_T is zero above the block's first step).
        let k_all = kl + kt;
        let g = &mut workspace.tail_g;
        g.clear();
        g.resize(k_all * k_all, 0.0);
        let y_l = MatRef::from_column_major_slice(y_l, nr, kl);
        let y_t = MatRef::from_column_major_slice(y_t, m, kt);
        // The `rows × cols` block of the k_all × k_all buffer at (row, col).
        fn block(
            g: &mut [f64],
            k_all: usize,
            (row, col): (usize, usize),
            (rows, cols): (usize, usize),
        ) -> MatMut<'_, f64> {
            MatMut::from_column_major_slice_mut(g, k_all, k_all).submatrix_mut(row, col, rows, cols)
        }
        triangular::matmul(
            block(g, k_all, (0, 0), (kl, kl)),
            BlockStructure::TriangularLower,
            Accum::Replace,
            y_l.transpose(),
            BlockStructure::Rectangular,
            y_l,
            BlockStructure::Rectangular,
            h,
            Par::Seq,
        );
        matmul(
            block(g, k_all, (kl, 0), (kt, kl)),
            Accum::Replace,
            y_t.transpose(),
            y_l.subrows(t0, m),
            h,
            Par::Seq,
        );
        triangular::matmul(
            block(g, k_all, (kl, kl), (kt, kt)),
            BlockStructure::TriangularLower,
            Accum::Replace,
            y_t.transpose(),
            BlockStructure::Rectangular,
            y_t,
            BlockStructure::Rectangular,
            h,
            Par::Seq,
        );
        let row_of = |a: usize| {
            if a < kl {
                through_l[a]
            } else {
                through_tail[a - kl]
            }
        };
        for b in 0..k_all {
            let j = row_of(b);
            for a in b..k_all {
                // The lower triangle, mirrored: exactly symmetric.
                let v = g[a + b * k_all];
                let i = row_of(a);
                out[(i, j)] = v;
                out[(j, i)] = v;
            }
        }
        return Ok(());
    }
    // No trailing block: one multi-right-hand-side solve, columns ← A⁻¹ H_cᵀ.
    let kl = through_l.len();
    let columns = &mut workspace.columns;
    columns.clear();
    columns.resize(nr * kl, 0.0);
    for (c, &j) in through_l.iter().enumerate() {
        let col = &mut columns[c * nr..(c + 1) * nr];
        for &(r, v) in row(j) {
            col[r] += v;
        }
    }
    if kl > 0 {
        let stack = workspace.stack.for_columns(factor, kl);
        factor.solve_columns_in_place(columns, kl, stack);
    }
    // G[i, j] = h · row_i(H_c) · column_j, each pair once and mirrored: G is symmetric, and
    // its two triangles computed apart would differ by round-off only.
    for (c, &j) in through_l.iter().enumerate() {
        let col = &columns[c * nr..(c + 1) * nr];
        for &i in &through_l[c..] {
            let sum: f64 = row(i).iter().map(|&(r, v)| v * col[r]).sum();
            out[(i, j)] = h * sum;
            out[(j, i)] = h * sum;
        }
    }
    Ok(())
}

/// The rows of `jacobian` over the reduced DOFs of `dofs` (fixed DOFs drop out: they cannot
/// move), as CSR: `row_ptr` (rows + 1) and `(reduced DOF, coefficient)` `entries`.
pub(super) fn reduced_rows(
    jacobian: &ContactJacobian,
    dofs: &DofMap,
    row_ptr: &mut Vec<usize>,
    entries: &mut Vec<(usize, f64)>,
) {
    row_ptr.clear();
    row_ptr.push(0);
    entries.clear();
    for i in 0..jacobian.row_count() {
        for (node, c) in jacobian.row(i) {
            for p in 0..3 {
                if let Some(r) = dofs.reduced_index(3 * node + p) {
                    entries.push((r, c[p]));
                }
            }
        }
        row_ptr.push(entries.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::test_support::{BoxSystem, box_system, random_frame};
    use crate::linalg::{FactorKind, FactorOrdering, SymbolicFactor, SymbolicOptions};
    use crate::math::SplitMix64;
    use std::sync::Arc;

    /// Contacts: single top nodes, a barycentric point of three top nodes, one point touching
    /// a fixed node (whose entries must drop out) and one reading a node inside the box.
    fn contacts(s: &BoxSystem, rng: &mut SplitMix64) -> ContactJacobian {
        let mut jac = ContactJacobian::new(s.nodes);
        for &t in s.top.iter().take(4) {
            jac.push_point_contact(&random_frame(rng), &[(t, 1.0)])
                .unwrap();
        }
        let top = &s.top;
        jac.push_point_contact(
            &random_frame(rng),
            &[(top[4], 0.2), (top[5], 0.3), (top[6], 0.5)],
        )
        .unwrap();
        jac.push_point_contact(&random_frame(rng), &[(s.bottom, 0.4), (top[0], 0.6)])
            .unwrap();
        jac.push_point_contact(&random_frame(rng), &[(s.inside, 0.7), (top[1], 0.3)])
            .unwrap();
        jac
    }

    /// The dense reference `h H A⁻¹ Hᵀ` (nalgebra's inverse of the dense `A`: a second
    /// method) and the dense `A⁻¹ Hᵀ` over the free DOFs.
    fn dense_reference(s: &BoxSystem, jac: &ContactJacobian, h: f64) -> (DMat, DMat) {
        let hd = s.dense_jacobian(jac);
        let w = s.dense_a().try_inverse().unwrap() * hd.transpose();
        (h * &hd * &w, w)
    }

    #[test]
    fn delassus_equals_dense_inverse_on_a_box_mesh() {
        let mut rng = SplitMix64::new(5);
        let s = box_system(&mut rng);
        let symbolic = Arc::new(SymbolicFactor::new(&s.pattern).unwrap());
        let mut factor = NumericFactor::new(symbolic, FactorKind::Llt);
        factor.factorize(&s.pattern, &s.values).unwrap();
        let jac = contacts(&s, &mut rng);
        let k = jac.row_count();
        assert_eq!(k, 21);
        let h = 0.01;
        let mut g = DMat::zeros(0, 0);
        let mut ws = DelassusWorkspace::default();
        let dofs = s.pattern.dofs();
        assemble_delassus(h, &jac, dofs, &factor, &mut ws, &mut g).unwrap();
        let (reference, w) = dense_reference(&s, &jac, h);
        let err = (&g - &reference).amax() / reference.amax();
        assert!(err < 1e-10, "relative error {err}");
        assert_eq!(g, g.transpose());
        // An LLᵀ takes the forward half of the solve (G = h YᵀY) and keeps no columns; a
        // workspace told to keep them solves every column: A⁻¹ Hᵀ.
        assert!(std::panic::catch_unwind(|| ws.solved_columns().len()).is_err());
        let mut kept = DelassusWorkspace::default();
        kept.keep_columns(true);
        let mut g_kept = DMat::zeros(0, 0);
        assemble_delassus(h, &jac, dofs, &factor, &mut kept, &mut g_kept).unwrap();
        let err = (&g_kept - &reference).amax() / reference.amax();
        assert!(err < 1e-10, "relative error {err}");
        let cols = DMat::from_column_slice(s.pattern.n(), k, kept.solved_columns());
        assert!((&cols - &w).amax() < 1e-10 * w.amax());
        // Reusing the workspace gives the same matrix.
        let mut again = DMat::zeros(0, 0);
        assemble_delassus(h, &jac, dofs, &factor, &mut ws, &mut again).unwrap();
        assert_eq!(again, g);
        // Rows past FORWARD_RATIO for the body's size take the whole solve: every column.
        let n = s.pattern.n();
        let mut many = ContactJacobian::new(s.nodes);
        while many.row_count() * n <= FORWARD_RATIO * factor.symbolic().factor_len() {
            for &t in &s.top {
                many.push_point_contact(&random_frame(&mut rng), &[(t, 1.0)])
                    .unwrap();
            }
        }
        let mut ws_many = DelassusWorkspace::default();
        let mut g_many = DMat::zeros(0, 0);
        assemble_delassus(h, &many, dofs, &factor, &mut ws_many, &mut g_many).unwrap();
        let (reference, w) = dense_reference(&s, &many, h);
        let err = (&g_many - &reference).amax() / reference.amax();
        assert!(err < 1e-10, "relative error {err}");
        let cols = DMat::from_column_slice(n, many.row_count(), ws_many.solved_columns());
        assert!((&cols - &w).amax() < 1e-10 * w.amax());
        // Bad inputs are errors.
        assert!(assemble_delassus(0.0, &jac, dofs, &factor, &mut ws, &mut g).is_err());
        let other = ContactJacobian::new(s.nodes + 1);
        assert!(assemble_delassus(h, &other, dofs, &factor, &mut ws, &mut g).is_err());
    }

    /// With the top face's DOFs eliminated last, the rows on the top face alone take the
    /// trailing block's dense path, the others the solve through all of L: G is the dense
    /// reference either way, and a workspace that keeps its columns has all of A⁻¹ Hᵀ.
    #[test]
    fn rows_within_the_trailing_block_give_the_same_delassus_matrix() {
        let mut rng = SplitMix64::new(11);
        let s = box_system(&mut rng);
        let dofs = s.pattern.dofs();
        let last: Vec<usize> = s
            .top
            .iter()
            .flat_map(|&t| (0..3).filter_map(move |p| dofs.reduced_index(3 * t + p)))
            .collect();
        let symbolic = SymbolicFactor::with_options(
            &s.pattern,
            SymbolicOptions {
                ordering: FactorOrdering::AmdWithLast(&last),
                ..Default::default()
            },
        )
        .unwrap();
        let mut factor = NumericFactor::new(Arc::new(symbolic), FactorKind::Llt);
        factor.factorize(&s.pattern, &s.values).unwrap();
        let jac = contacts(&s, &mut rng);
        let h = 0.01;
        let (reference, w) = dense_reference(&s, &jac, h);
        let mut ws = DelassusWorkspace::default();
        let mut g = DMat::zeros(0, 0);
        assemble_delassus(h, &jac, dofs, &factor, &mut ws, &mut g).unwrap();
        // The four single top nodes and the barycentric top point: 15 rows in the block; the
        // fixed node's entries drop out, so that row is in it too.
        assert_eq!(ws.through_tail.len(), 18);
        assert_eq!(ws.through_l.len(), 3);
        let err = (&g - &reference).amax() / reference.amax();
        assert!(err < 1e-12, "relative error {err}");
        assert_eq!(g, g.transpose());
        let incomplete = std::panic::catch_unwind(|| ws.solved_columns().len());
        assert!(
            incomplete.is_err(),
            "incomplete columns are never handed out"
        );
        let mut kept = DelassusWorkspace::default();
        kept.keep_columns(true);
        let mut g_kept = DMat::zeros(0, 0);
        assemble_delassus(h, &jac, dofs, &factor, &mut kept, &mut g_kept).unwrap();
        let err = (&g_kept - &reference).amax() / reference.amax();
        assert!(err < 1e-12, "relative error {err}");
        let cols = DMat::from_column_slice(s.pattern.n(), jac.row_count(), kept.solved_columns());
        assert!((&cols - &w).amax() < 1e-10 * w.amax());
    }
}
