//! The choices and outcomes of a sparse Cholesky factorisation ([`super::SymbolicFactor`],
//! [`super::NumericFactor`]): the numeric layout, the fill-reducing ordering, the kind of
//! factor (L Lᵀ or L D Lᵀ), and why a numeric factorisation stopped.

use crate::error::Error;
use crate::math::Vec3;

/// Which numeric layout faer uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FactorMethod {
    /// A fixed rule on the pattern (never on timings, so results are reproducible):
    /// supernodal when the pattern's nodes carry at least 2 DOFs each, otherwise faer's
    /// choice from the flop count of the symbolic analysis.
    ///
    /// Why: every node of a block pattern contributes a dense `b × b` diagonal block whose
    /// columns share one structure, so the supernodes are at least `b` wide and faer's dense
    /// supernodal kernels beat (or, below ~100 unknowns, tie with) its column-by-column code
    /// at every size we measured on 3-DOF tetrahedral meshes, despite storing more zeros:
    /// about 2× on a 288-unknown box and 2–3× on the 1,972-tet Trunk (n = 1,869), where
    /// faer's flop-ratio rule chose simplicial; 5× on the PneuNet and 10× on a 10k-tet box,
    /// where it already chose supernodal.
    #[default]
    Auto,
    /// Column-by-column (simplicial) factorisation.
    Simplicial,
    /// Supernodal factorisation (dense blocks of columns).
    Supernodal,
}

/// Which fill-reducing ordering the symbolic analysis uses.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum FactorOrdering<'a> {
    /// faer's approximate minimum degree on the DOF graph.
    #[default]
    Amd,
    /// Geometric nested dissection of the node graph from the node coordinates (one point
    /// per node of the pattern, any length unit): less fill and fewer flops than AMD on bulky
    /// 3D meshes from ~30k unknowns; on thin or small meshes AMD may be better.
    NestedDissection(&'a [Vec3]),
    /// AMD, then the listed reduced DOFs (each once) moved to the end of the elimination
    /// order, in AMD's order among themselves: `L`'s trailing block then holds the Cholesky
    /// factor of their Schur complement, which [`super::NumericFactor::trailing_factor`] reads (the
    /// Delassus columns of attached nodes, `contact::assemble_delassus`).
    AmdWithLast(&'a [usize]),
}

/// Options of the symbolic analysis.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SymbolicOptions<'a> {
    /// Simplicial, supernodal, or faer's choice.
    pub method: FactorMethod,
    /// Fill-reducing ordering.
    pub ordering: FactorOrdering<'a>,
}

/// Which numeric factorisation to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FactorKind {
    /// `A = L Lᵀ`; requires `A` positive definite.
    #[default]
    Llt,
    /// `A = L D Lᵀ` without pivoting; accepts symmetric indefinite `A` with nonzero pivots.
    Ldlt,
}

/// Why a numeric factorisation stopped (a numerical outcome, not bad input).
///
/// `dof` is the reduced DOF (index into [`super::SymmetricPattern`]'s free DOFs) whose pivot failed;
/// `step` is its position in the fill-reducing elimination order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FactorError {
    /// LLᵀ met a pivot ≤ 0 (or NaN): the matrix is not positive definite.
    #[error(
        "matrix is not positive definite: non-positive pivot at reduced DOF {dof} (elimination step {step})"
    )]
    NonPositivePivot {
        /// Reduced DOF of the failed pivot.
        dof: usize,
        /// Elimination step (0-based) of the failed pivot.
        step: usize,
    },
    /// LDLᵀ met an exactly zero or non-finite pivot: the matrix is singular (or not finite).
    #[error("zero or non-finite pivot at reduced DOF {dof} (elimination step {step})")]
    ZeroPivot {
        /// Reduced DOF of the failed pivot.
        dof: usize,
        /// Elimination step (0-based) of the failed pivot.
        step: usize,
    },
}

impl From<FactorError> for Error {
    fn from(e: FactorError) -> Self {
        Error::invalid("system matrix factorisation", e.to_string())
    }
}
