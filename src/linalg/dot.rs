//! The Euclidean inner product and norm of plain `f64` slices, for the matrix-free solvers
//! (`gmres`, `lanczos`) and the static solver's line search.

/// `aᵀb` over the common length of `a` and `b`.
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `‖v‖₂`.
#[inline]
pub fn norm(v: &[f64]) -> f64 {
    dot(v, v).sqrt()
}
