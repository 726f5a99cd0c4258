//! Sparse Cholesky factorisation of the reduced system matrix with faer: the symbolic
//! analysis (AMD fill-reducing ordering, elimination tree, simplicial or supernodal layout)
//! is done once per [`SymmetricPattern`]; the numeric factorisation is refreshed every step
//! into reused buffers, and reused for many solves (the step, the Delassus matrix
//! `G = h H_c A⁻¹ H_cᵀ` column by column, derivative solves; docs/step.md, docs/derivatives.md).
//!
//! Two numeric kinds:
//! - [`FactorKind::Llt`]: `A = L Lᵀ`, for symmetric positive definite `A`. A pivot that is not
//!   strictly positive stops the factorisation with [`FactorError::NonPositivePivot`].
//! - [`FactorKind::Ldlt`]: `A = L D Lᵀ` without pivoting (D diagonal). It accepts a mildly
//!   indefinite `A` (some materials under compression); it stops only on an exactly zero or
//!   non-finite pivot ([`FactorError::ZeroPivot`]). [`NumericFactor::negative_pivots`] counts
//!   the negative entries of `D` (the number of negative eigenvalues of `A`, by Sylvester's
//!   law of inertia), so a caller can tell an indefinite system from a definite one.
//!
//! Factorisation and solves run single-threaded (`Par::Seq`): on 2 cores that was faster
//! (docs/design.md). No dense inverse is ever formed.

use super::factor_options::{
    FactorError, FactorKind, FactorMethod, FactorOrdering, SymbolicOptions,
};
use super::forward_reach::SupernodeTree;
use super::pattern::SymmetricPattern;
use super::permuted_pattern::PermutedPattern;
use crate::error::{Error, Result};
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::ldlt::factor::{LdltError, LdltRegularization};
use faer::linalg::cholesky::llt::factor::{LltError, LltRegularization};
use faer::perm::PermRef;
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::linalg::cholesky::{
    CholeskySymbolicParams, LdltRef, LltRef, SymbolicCholesky, SymbolicCholeskyRaw,
    SymmetricOrdering, factorize_symbolic_cholesky,
};
use faer::{Conj, MatMut, Par, Side, Spec};
use std::sync::Arc;

/// Symbolic Cholesky analysis of one [`SymmetricPattern`]: AMD ordering, elimination tree,
/// and the structure of `L`. Done once; shared (through an `Arc`) by the numeric factors.
#[derive(Debug)]
pub struct SymbolicFactor {
    /// faer's analysis of `P A Pᵀ` with the identity ordering.
    pub(super) inner: SymbolicCholesky<usize>,
    /// The structure of `P A Pᵀ` in the triangle faer's numeric code reads.
    pub(super) permuted: PermutedPattern,
    n: usize,
    nnz: usize,
    /// The first elimination step of the trailing block (`n` when there is none).
    pub(super) tail_start: usize,
    /// Each reduced DOF's elimination step (the inverse of the ordering).
    step: Vec<usize>,
    /// The supernodal elimination tree (`None` for the simplicial layout).
    pub(super) supernode_tree: Option<SupernodeTree>,
    /// The most rows below any supernode (0 for the simplicial layout): the gathered rows an
    /// interleaved solve needs (`super::interleaved_solve`).
    pub(super) longest_pattern: usize,
}

impl SymbolicFactor {
    /// Analyses `pattern` with the default [`SymbolicOptions`] (AMD ordering, layout by the
    /// rule of [`FactorMethod::Auto`]).
    pub fn new(pattern: &SymmetricPattern) -> Result<Self> {
        Self::with_options(pattern, SymbolicOptions::default())
    }

    /// Analyses `pattern` with the given ordering and layout.
    ///
    /// Errors if the coordinates of a nested dissection are not one finite point per node, or
    /// if faer runs out of memory or the index type overflows.
    pub fn with_options(pattern: &SymmetricPattern, options: SymbolicOptions<'_>) -> Result<Self> {
        let threshold = match options.method {
            FactorMethod::Auto if pattern.block_size() >= 2 => {
                SupernodalThreshold::FORCE_SUPERNODAL
            }
            FactorMethod::Auto => SupernodalThreshold::AUTO,
            FactorMethod::Simplicial => SupernodalThreshold::FORCE_SIMPLICIAL,
            FactorMethod::Supernodal => SupernodalThreshold::FORCE_SUPERNODAL,
        };
        let params = CholeskySymbolicParams {
            supernodal_flop_ratio_threshold: threshold,
            ..Default::default()
        };
        let analyse = |a, side, ordering, params| {
            factorize_symbolic_cholesky(a, side, ordering, params)
                .map_err(|e| Error::invalid("symbolic Cholesky analysis", format!("{e:?}")))
        };
        // The ordering faer analyses with: its own AMD, or a permutation of ours.
        let custom = super::ordering::custom_order(pattern, options.ordering, params)?;
        let custom_inverse = custom.as_ref().map(|forward| {
            let mut inverse = vec![0usize; forward.len()];
            for (k, &r) in forward.iter().enumerate() {
                inverse[r] = k;
            }
            inverse
        });
        let ordering = match (&custom, &custom_inverse) {
            (Some(forward), Some(inverse)) => {
                SymmetricOrdering::Custom(PermRef::new_checked(forward, inverse, pattern.n()))
            }
            _ => SymmetricOrdering::Amd,
        };
        // 1. The ordering (and the layout) on A itself.
        let first = analyse(pattern.faer_symbolic(), Side::Lower, ordering, params)?;
        let n = pattern.n();
        let (forward, inverse): (Vec<usize>, Vec<usize>) = match first.perm() {
            Some(perm) => {
                let (f, i) = perm.arrays();
                (f.to_vec(), i.to_vec())
            }
            None => ((0..n).collect(), (0..n).collect()),
        };
        let supernodal = matches!(first.raw(), SymbolicCholeskyRaw::Supernodal(_));
        // Where the DOFs asked to come last begin (faer's postorder may have moved some of
        // the others among them): the trailing block starts there.
        let tail_start = match options.ordering {
            FactorOrdering::AmdWithLast(last) => {
                last.iter().map(|&r| inverse[r]).min().unwrap_or(n)
            }
            _ => n,
        };
        // 2. The same analysis of P A Pᵀ with the identity ordering (faer then reads the
        //    upper triangle), so that a numeric factorisation needs no permutation; the
        //    numeric code reads the lower triangle (supernodal) or the upper (simplicial).
        let params = CholeskySymbolicParams {
            supernodal_flop_ratio_threshold: if supernodal {
                SupernodalThreshold::FORCE_SUPERNODAL
            } else {
                SupernodalThreshold::FORCE_SIMPLICIAL
            },
            ..Default::default()
        };
        let upper = PermutedPattern::new(pattern, &forward, &inverse, Side::Upper);
        let inner = analyse(
            upper.symbolic(),
            Side::Upper,
            SymmetricOrdering::Identity,
            params,
        )?;
        let permuted = if supernodal {
            PermutedPattern::new(pattern, &forward, &inverse, Side::Lower)
        } else {
            upper
        };
        let longest_pattern = match inner.raw() {
            SymbolicCholeskyRaw::Supernodal(s) => s
                .col_ptr_for_row_idx()
                .windows(2)
                .map(|w| w[1] - w[0])
                .max()
                .unwrap_or(0),
            SymbolicCholeskyRaw::Simplicial(_) => 0,
        };
        Ok(Self {
            supernode_tree: SupernodeTree::of(&inner),
            longest_pattern,
            inner,
            permuted,
            n,
            nnz: pattern.nnz(),
            tail_start,
            step: inverse,
        })
    }

    /// Size of the matrix.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The elimination step where the trailing block of [`FactorOrdering::AmdWithLast`]
    /// begins: `n` without one. Every DOF eliminated from there on is in the block.
    pub fn tail_start(&self) -> usize {
        self.tail_start
    }

    /// The elimination step of reduced DOF `dof` (its row in `P A Pᵀ`).
    pub fn step_of_dof(&self, dof: usize) -> usize {
        self.step[dof]
    }

    /// Whether faer chose (or was told) the supernodal layout.
    pub fn is_supernodal(&self) -> bool {
        matches!(self.inner.raw(), SymbolicCholeskyRaw::Supernodal(_))
    }

    /// Number of stored values of the factor `L` (fill included).
    pub fn factor_len(&self) -> usize {
        self.inner.len_val()
    }

    /// The reduced DOF eliminated at step `step`.
    fn dof_of_step(&self, step: usize) -> usize {
        self.permuted.forward()[step.min(self.n.saturating_sub(1))]
    }

    /// The side of `P A Pᵀ` faer's numeric code reads.
    fn side(&self) -> Side {
        if self.is_supernodal() {
            Side::Lower
        } else {
            Side::Upper
        }
    }
}

/// Numeric factor of `A` on a [`SymbolicFactor`], refreshed in place every step; owns its
/// factorisation workspace. Solves take `&self` and an explicit workspace (see
/// [`NumericFactor::solve_scratch`]), so several threads may solve with one factor at once,
/// each with its own workspace (e.g. the columns of the Delassus matrix).
pub struct NumericFactor {
    pub(super) symbolic: Arc<SymbolicFactor>,
    kind: FactorKind,
    pub(super) values: Vec<f64>,
    /// The values of `P A Pᵀ` handed to faer.
    permuted_values: Vec<f64>,
    workspace: MemBuffer,
    factorized: bool,
}

impl std::fmt::Debug for NumericFactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NumericFactor")
            .field("symbolic", &self.symbolic)
            .field("kind", &self.kind)
            .field("factor_len", &self.values.len())
            .field("factorized", &self.factorized)
            .finish()
    }
}

impl NumericFactor {
    /// Allocates the factor values and the factorisation workspace for `kind`.
    pub fn new(symbolic: Arc<SymbolicFactor>, kind: FactorKind) -> Self {
        let req = match kind {
            FactorKind::Llt => symbolic
                .inner
                .factorize_numeric_llt_scratch::<f64>(Par::Seq, Spec::default()),
            FactorKind::Ldlt => symbolic
                .inner
                .factorize_numeric_ldlt_scratch::<f64>(Par::Seq, Spec::default()),
        };
        Self {
            values: vec![0.0; symbolic.factor_len()],
            permuted_values: vec![0.0; symbolic.permuted.nnz()],
            workspace: MemBuffer::new(req),
            symbolic,
            kind,
            factorized: false,
        }
    }

    /// The shared symbolic analysis.
    pub fn symbolic(&self) -> &Arc<SymbolicFactor> {
        &self.symbolic
    }

    /// The numeric kind.
    pub fn kind(&self) -> FactorKind {
        self.kind
    }

    /// Whether the last [`factorize`](Self::factorize) succeeded (solves are allowed).
    pub fn is_factorized(&self) -> bool {
        self.factorized
    }

    /// Factorises the matrix with lower-triangle `values` on `pattern` (the pattern the
    /// symbolic analysis was made from). No allocation.
    ///
    /// On error the factor is unusable until the next successful call.
    /// Panics if `pattern` does not have the analysed size or `values.len() != pattern.nnz()`.
    pub fn factorize(
        &mut self,
        pattern: &SymmetricPattern,
        values: &[f64],
    ) -> Result<(), FactorError> {
        assert!(
            pattern.n() == self.symbolic.n && pattern.nnz() == self.symbolic.nnz,
            "factorize: pattern differs from the one analysed"
        );
        self.factorized = false;
        assert_eq!(values.len(), pattern.nnz(), "factorize: values length");
        self.symbolic
            .permuted
            .gather(values, &mut self.permuted_values);
        let a = self.symbolic.permuted.matrix(&self.permuted_values);
        let side = self.symbolic.side();
        let stack = MemStack::new(&mut self.workspace);
        let supernodal = self.symbolic.is_supernodal();
        // faer counts the failed step from 1 in the simplicial code and from 0 in the
        // supernodal one; bring both to a 0-based step.
        let step_of = |index: usize| {
            if supernodal {
                index
            } else {
                index.saturating_sub(1)
            }
        };
        match self.kind {
            FactorKind::Llt => {
                match self.symbolic.inner.factorize_numeric_llt(
                    &mut self.values,
                    a,
                    side,
                    LltRegularization::default(),
                    Par::Seq,
                    stack,
                    Spec::default(),
                ) {
                    Ok(_) => {}
                    Err(LltError::NonPositivePivot { index }) => {
                        let step = step_of(index);
                        return Err(FactorError::NonPositivePivot {
                            dof: self.symbolic.dof_of_step(step),
                            step,
                        });
                    }
                }
            }
            FactorKind::Ldlt => {
                match self.symbolic.inner.factorize_numeric_ldlt(
                    &mut self.values,
                    a,
                    side,
                    LdltRegularization::default(),
                    Par::Seq,
                    stack,
                    Spec::default(),
                ) {
                    Ok(_) => {}
                    Err(LdltError::ZeroPivot { index }) => {
                        let step = step_of(index);
                        return Err(FactorError::ZeroPivot {
                            dof: self.symbolic.dof_of_step(step),
                            step,
                        });
                    }
                }
            }
        }
        self.factorized = true;
        Ok(())
    }

    /// For an LDLᵀ factor, the number of negative pivots in `D` (= number of negative
    /// eigenvalues of `A`); `None` for LLᵀ. Panics if not factorised.
    pub fn negative_pivots(&self) -> Option<usize> {
        assert!(self.factorized, "negative_pivots: no valid factorisation");
        if self.kind != FactorKind::Ldlt {
            return None;
        }
        let count = match self.symbolic.inner.raw() {
            SymbolicCholeskyRaw::Simplicial(s) => {
                let col_ptr = s.col_ptr();
                (0..s.ncols())
                    .filter(|&j| self.values[col_ptr[j]] < 0.0)
                    .count()
            }
            SymbolicCholeskyRaw::Supernodal(s) => {
                let begin = s.supernode_begin();
                let end = s.supernode_end();
                let val_ptr = s.col_ptr_for_val();
                let mut count = 0;
                for k in 0..s.n_supernodes() {
                    let ncols = end[k] - begin[k];
                    let block = &self.values[val_ptr[k]..val_ptr[k + 1]];
                    let nrows = block.len() / ncols;
                    count += (0..ncols).filter(|&j| block[j * nrows + j] < 0.0).count();
                }
                count
            }
        };
        Some(count)
    }

    /// Workspace needed by a solve with `ncols` right-hand sides:
    /// `MemBuffer::new(factor.solve_scratch(k))`, then `MemStack::new(&mut buffer)`.
    pub fn solve_scratch(&self, ncols: usize) -> StackReq {
        let n = self.symbolic.n;
        let faer = StackReq::all_of(&[
            StackReq::new::<f64>(n * ncols),
            self.symbolic
                .inner
                .solve_in_place_scratch::<f64>(ncols, Par::Seq),
        ]);
        if !super::INTERLEAVED_COLUMNS.contains(&ncols) {
            return faer;
        }
        // The interleaved solve's rows and gathered pattern rows, padded to whole vectors of
        // up to 8 lanes (`super::interleaved_solve`).
        let rows = n + self.symbolic.longest_pattern;
        StackReq::any_of(&[faer, StackReq::new::<f64>(rows * ncols.next_multiple_of(8))])
    }

    /// Solves `A X = B` in place: `rhs` holds `B` (`n × k`, any strides) on entry and `X` on
    /// exit. `stack` must hold at least [`solve_scratch`](Self::solve_scratch)`(k)`.
    ///
    /// Panics if the last factorisation failed or `rhs` has the wrong number of rows.
    pub fn solve_in_place(&self, mut rhs: MatMut<'_, f64>, stack: &mut MemStack) {
        assert!(self.factorized, "solve: no valid factorisation");
        let n = self.symbolic.n;
        assert_eq!(rhs.nrows(), n, "solve: rhs rows");
        let k = rhs.ncols();
        // The factor is that of P A Pᵀ: solve (P A Pᵀ)(P x) = P b.
        let forward = self.symbolic.permuted.forward();
        let (mut y, stack) = stack.make_with::<f64>(n * k, |_| 0.0);
        for j in 0..k {
            for (i, &f) in forward.iter().enumerate() {
                y[j * n + i] = rhs[(f, j)];
            }
        }
        self.solve_permuted(MatMut::from_column_major_slice_mut(&mut y, n, k), stack);
        for j in 0..k {
            for (i, &f) in forward.iter().enumerate() {
                rhs[(f, j)] = y[j * n + i];
            }
        }
    }

    /// Solves `(P A Pᵀ) Y = B` in place for a right-hand side already permuted.
    pub(super) fn solve_permuted(&self, y: MatMut<'_, f64>, stack: &mut MemStack) {
        match self.kind {
            FactorKind::Llt => LltRef::new(&self.symbolic.inner, &self.values)
                .solve_in_place_with_conj(Conj::No, y, Par::Seq, stack),
            FactorKind::Ldlt => LdltRef::new(&self.symbolic.inner, &self.values)
                .solve_in_place_with_conj(Conj::No, y, Par::Seq, stack),
        }
    }

    /// Solves `A x = b` in place for one right-hand side (`rhs` has `n` entries).
    pub fn solve_vec_in_place(&self, rhs: &mut [f64], stack: &mut MemStack) {
        let n = rhs.len();
        self.solve_in_place(MatMut::from_column_major_slice_mut(rhs, n, 1), stack);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::test_support::{grid_tetrahedra, random_spd_values, to_dense};
    use crate::math::SplitMix64;
    use crate::math::{DVec, Vec3};

    /// A 6 × 6 × 5-cell grid (big enough for nested dissection to split it) with the face
    /// z = 0 fixed and one more DOF removed.
    fn grid_pattern() -> (SymmetricPattern, Vec<Vec3>) {
        let (nx, ny, nz) = (6, 6, 5);
        let (xyz, tets) = grid_tetrahedra([nx, ny, nz], 0, 0.0);
        let n_nodes = xyz.len();
        let mut removed = vec![false; n_nodes * 3];
        for d in removed.iter_mut().take((nx + 1) * (ny + 1) * 3) {
            *d = true;
        }
        removed[n_nodes * 3 - 2] = true;
        (
            SymmetricPattern::new(n_nodes, 3, &tets, &removed).unwrap(),
            xyz,
        )
    }

    fn relative(a: &DVec, b: &DVec) -> f64 {
        (a - b).norm() / b.norm()
    }

    /// Every layout × ordering combination.
    fn all_options(coordinates: &[Vec3]) -> Vec<SymbolicOptions<'_>> {
        let mut out = Vec::new();
        for method in [FactorMethod::Simplicial, FactorMethod::Supernodal] {
            for ordering in [
                FactorOrdering::Amd,
                FactorOrdering::NestedDissection(coordinates),
            ] {
                out.push(SymbolicOptions { method, ordering });
            }
        }
        out
    }
    const KINDS: [FactorKind; 2] = [FactorKind::Llt, FactorKind::Ldlt];

    #[test]
    fn solves_match_dense_cholesky_and_refactorisation_reuses_the_analysis() {
        let (p, xyz) = grid_pattern();
        let n = p.n();
        let mut rng = SplitMix64::new(42);
        for method in all_options(&xyz) {
            let symbolic = Arc::new(SymbolicFactor::with_options(&p, method).unwrap());
            assert_eq!(
                symbolic.is_supernodal(),
                method.method == FactorMethod::Supernodal
            );
            for kind in KINDS {
                let mut factor = NumericFactor::new(symbolic.clone(), kind);
                let mut buffer = MemBuffer::new(factor.solve_scratch(4));
                let stack = MemStack::new(&mut buffer);
                // Two different matrices on the same symbolic analysis.
                for _ in 0..2 {
                    let values = random_spd_values(&p, &mut rng);
                    factor.factorize(&p, &values).unwrap();
                    if kind == FactorKind::Ldlt {
                        assert_eq!(factor.negative_pivots(), Some(0));
                    }
                    let dense = to_dense(&p, &values);
                    let chol = dense.clone().cholesky().expect("SPD by construction");
                    let b = DVec::from_fn(n, |_, _| rng.uniform());
                    let reference = chol.solve(&b);
                    let mut x = b.as_slice().to_vec();
                    factor.solve_vec_in_place(&mut x, stack);
                    let err = relative(&DVec::from_column_slice(&x), &reference);
                    assert!(err < 1e-12, "{method:?} {kind:?}: relative error {err}");

                    // Four right-hand sides at once equal four single solves.
                    let k = 4;
                    let rhs: Vec<f64> = (0..n * k).map(|_| rng.uniform()).collect();
                    let mut multi = rhs.clone();
                    factor.solve_columns_in_place(&mut multi, k, stack);
                    for j in 0..k {
                        let mut single = rhs[j * n..(j + 1) * n].to_vec();
                        factor.solve_vec_in_place(&mut single, stack);
                        let col = DVec::from_column_slice(&multi[j * n..(j + 1) * n]);
                        let err = relative(&col, &DVec::from_column_slice(&single));
                        assert!(err < 1e-14, "{method:?} {kind:?} column {j}: {err}");
                        let dense_col =
                            chol.solve(&DVec::from_column_slice(&rhs[j * n..(j + 1) * n]));
                        assert!(relative(&col, &dense_col) < 1e-12);
                    }
                }
            }
        }
    }

    /// The SPD matrix with reduced DOF `dof` decoupled (row and column zeroed) and its
    /// diagonal set to `diagonal`.
    fn with_decoupled_dof(
        p: &SymmetricPattern,
        values: &[f64],
        dof: usize,
        diagonal: f64,
    ) -> Vec<f64> {
        let mut out = values.to_vec();
        for i in 0..p.n() {
            if let Some(v) = p.value_index(i, dof) {
                out[v] = 0.0;
            }
        }
        out[p.diagonal_index(dof)] = diagonal;
        out
    }

    #[test]
    fn factors_can_be_shared_between_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<SymbolicFactor>();
        shareable::<NumericFactor>();
        shareable::<SymmetricPattern>();
    }

    #[test]
    fn a_non_positive_definite_matrix_gives_the_documented_error() {
        let (p, xyz) = grid_pattern();
        let mut rng = SplitMix64::new(5);
        let spd = random_spd_values(&p, &mut rng);
        let dof = p.n() / 2 + 1;
        let indefinite = with_decoupled_dof(&p, &spd, dof, -2.0);
        let singular = with_decoupled_dof(&p, &spd, dof, 0.0);
        for method in all_options(&xyz) {
            let symbolic = Arc::new(SymbolicFactor::with_options(&p, method).unwrap());
            let mut llt = NumericFactor::new(symbolic.clone(), FactorKind::Llt);
            match llt.factorize(&p, &indefinite) {
                Err(FactorError::NonPositivePivot { dof: d, .. }) => {
                    assert_eq!(d, dof, "{method:?}")
                }
                other => panic!("{method:?}: expected a non-positive pivot, got {other:?}"),
            }
            assert!(!llt.is_factorized());
            // The error converts to the library error with a message naming the DOF.
            let message = crate::Error::from(llt.factorize(&p, &singular).unwrap_err()).to_string();
            assert!(message.contains(&format!("reduced DOF {dof}")), "{message}");

            // LDLᵀ factorises the indefinite matrix, counts one negative pivot, and solves it.
            let mut ldlt = NumericFactor::new(symbolic.clone(), FactorKind::Ldlt);
            ldlt.factorize(&p, &indefinite).unwrap();
            assert_eq!(ldlt.negative_pivots(), Some(1));
            let b = DVec::from_fn(p.n(), |_, _| rng.uniform());
            let reference = to_dense(&p, &indefinite).lu().solve(&b).unwrap();
            let mut x = b.as_slice().to_vec();
            let mut buffer = MemBuffer::new(ldlt.solve_scratch(1));
            ldlt.solve_vec_in_place(&mut x, MemStack::new(&mut buffer));
            assert!(relative(&DVec::from_column_slice(&x), &reference) < 1e-12);
            // An exactly zero pivot stops LDLᵀ.
            match ldlt.factorize(&p, &singular) {
                Err(FactorError::ZeroPivot { dof: d, .. }) => assert_eq!(d, dof, "{method:?}"),
                other => panic!("{method:?}: expected a zero pivot, got {other:?}"),
            }
        }
    }
}
