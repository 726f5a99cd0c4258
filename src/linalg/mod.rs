//! Sparse linear algebra without physics (layer 1; uses only `math` and `error`): the fixed
//! symmetric pattern of the system matrix `A = M + hD + h²K` over the free DOFs, its
//! deterministic parallel assembly from per-clique blocks, the symmetric sparse product, and
//! the symbolic-once / numeric-per-step sparse Cholesky factorisation (faer), and the trailing
//! block of a factor whose ordering eliminates chosen DOFs last.

mod assembly;
mod cholesky;
mod dof_map;
mod dot;
mod factor_options;
mod forward_reach;
mod gmres;
mod interleaved_solve;
mod lanczos;
mod nested_dissection;
mod ordering;
mod parted_assembly;
mod pattern;
mod permuted_pattern;
mod symmetric_product;
#[cfg(test)]
pub(crate) mod test_support;
mod tet_runs;
mod trailing_block;

pub use assembly::{AssemblyPlan, axpby};
pub use cholesky::{NumericFactor, SymbolicFactor};
pub use dof_map::DofMap;
pub use dot::{dot, norm};
pub use factor_options::{FactorError, FactorKind, FactorMethod, FactorOrdering, SymbolicOptions};
pub use forward_reach::ForwardReach;
pub use gmres::{GmresInfo, GmresWorkspace, PreconditionedOperator, gmres};
pub use interleaved_solve::INTERLEAVED_COLUMNS;
pub use lanczos::{LanczosWorkspace, largest_eigenpair};
pub use parted_assembly::{AssemblyPart, PartedAssembly};
pub use pattern::SymmetricPattern;

/// faer's workspace types, re-exported so callers of the solves need not name faer.
pub use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
/// faer's dense matrix views, for multi-right-hand-side solves.
pub use faer::{MatMut, MatRef};
