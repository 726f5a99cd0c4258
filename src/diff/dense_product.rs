//! A dense product `C = A B` (or `C += A B`) of the small column-major matrices of the rigid
//! step's derivative by faer's matrix product, which needs no allocation (nalgebra's general
//! product packs its operands into fresh buffers through `matrixmultiply`) and picks its SIMD
//! kernel at run time.

use crate::math::DMat;
use faer::{Accum, MatMut, MatRef, Par};

/// `c = a b`, or `c += a b` when `accumulate`; `a` column-major with `c.nrows()` rows and
/// `b.nrows()` columns (c already `c.nrows() × b.ncols()`).
pub(crate) fn mul_into(c: &mut DMat, a: &[f64], b: &DMat, accumulate: bool) {
    let (m, k, n) = (c.nrows(), b.nrows(), b.ncols());
    assert_eq!(a.len(), m * k, "mul_into: inner dimensions");
    assert_eq!(c.ncols(), n, "mul_into: result shape");
    let lhs = MatRef::from_column_major_slice(a, m, k);
    let rhs = MatRef::from_column_major_slice(b.as_slice(), k, n);
    let dst = MatMut::from_column_major_slice_mut(c.as_mut_slice(), m, n);
    let beta = if accumulate {
        Accum::Add
    } else {
        Accum::Replace
    };
    faer::linalg::matmul::matmul(dst, beta, lhs, rhs, 1.0, Par::Seq);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equals_nalgebra_s_product() {
        let a = DMat::from_fn(5, 4, |r, c| (r as f64 - 1.5) * (c as f64 + 0.5) + 0.25);
        let mut b = DMat::from_fn(4, 3, |r, c| (r * 3 + c) as f64 * 0.3 - 1.0);
        b[(2, 1)] = 0.0;
        let mut c = DMat::from_element(5, 3, 7.0);
        mul_into(&mut c, a.as_slice(), &b, false);
        assert!((&c - &a * &b).amax() < 1e-14);
        mul_into(&mut c, a.as_slice(), &b, true);
        assert!((&c - 2.0 * (&a * &b)).amax() < 1e-13);
    }
}
