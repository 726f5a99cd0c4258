//! Unrolled 3 × 3 products for the recursions' inner loops. nalgebra forms these products with
//! loops over columns that the compiler does not always flatten; written out, each entry is the
//! same sum in the same order (`(a₀b₀ + a₁b₁) + a₂b₂`), so the results are bit-for-bit
//! nalgebra's.

use crate::math::{Mat3, Vec3};

/// The product `a b` of two 3 × 3 matrices.
#[inline(always)]
pub(crate) fn mul(a: &Mat3, b: &Mat3) -> Mat3 {
    let e =
        |r: usize, c: usize| a[(r, 0)] * b[(0, c)] + a[(r, 1)] * b[(1, c)] + a[(r, 2)] * b[(2, c)];
    Mat3::new(
        e(0, 0),
        e(0, 1),
        e(0, 2),
        e(1, 0),
        e(1, 1),
        e(1, 2),
        e(2, 0),
        e(2, 1),
        e(2, 2),
    )
}

/// The product `a v` of a 3 × 3 matrix and a 3-vector.
#[inline(always)]
pub(crate) fn mul_vec(a: &Mat3, v: &Vec3) -> Vec3 {
    let e = |r: usize| a[(r, 0)] * v[0] + a[(r, 1)] * v[1] + a[(r, 2)] * v[2];
    Vec3::new(e(0), e(1), e(2))
}

/// The product `aᵀ v` (each entry the dot product of a column of `a` with `v`).
#[inline(always)]
pub(crate) fn tr_mul_vec(a: &Mat3, v: &Vec3) -> Vec3 {
    let e = |c: usize| a[(0, c)] * v[0] + a[(1, c)] * v[1] + a[(2, c)] * v[2];
    Vec3::new(e(0), e(1), e(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_equal_nalgebra_bit_for_bit() {
        let mut x = 0.37f64;
        let mut next = || {
            x = (x * 9301.0 + 0.49297).fract();
            x * 2.0 - 1.0
        };
        for _ in 0..200 {
            let a = Mat3::from_fn(|_, _| next());
            let b = Mat3::from_fn(|_, _| next());
            let v = Vec3::new(next(), next(), next());
            assert_eq!(mul(&a, &b), a * b);
            assert_eq!(mul_vec(&a, &v), a * v);
            assert_eq!(tr_mul_vec(&a, &v), a.transpose() * v);
        }
    }
}
