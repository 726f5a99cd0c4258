//! The 9×9 fourth-order-tensor convention of this module: column-major vec of 3×3 matrices.
//!
//! `vec(A)[i + 3j] = A[(i, j)]` (the storage order of nalgebra's `Matrix3`, so
//! `a.as_slice()` is `vec(A)`), and `∂P/∂F` is stored as the 9×9 matrix
//! `H[(i + 3j, k + 3l)] = ∂P_ij / ∂F_kl`, so that `vec(∂P/∂F : dF) = H · vec(dF)`.

use crate::math::Mat3;
use nalgebra::SMatrix;

/// A 9×9 matrix: the derivative of a 3×3 matrix function with respect to a 3×3 matrix, in
/// the column-major vec convention of this module (`H[(i + 3j, k + 3l)] = ∂P_ij / ∂F_kl`).
pub type Mat9 = SMatrix<f64, 9, 9>;

/// `H : dF`, the action of a 9×9 derivative on a 3×3 direction, as a 3×3 matrix
/// (`vec(result) = H · vec(dF)`).
pub fn contract(h: &Mat9, df: &Mat3) -> Mat3 {
    let mut out = Mat3::zeros();
    for b in 0..9 {
        let d = df[b];
        if d != 0.0 {
            for a in 0..9 {
                out[a] += h[(a, b)] * d;
            }
        }
    }
    out
}

/// The Frobenius inner product `A : B = Σ_ij A_ij B_ij`.
#[inline]
pub fn frobenius(a: &Mat3, b: &Mat3) -> f64 {
    a.dot(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contraction_follows_the_column_major_convention() {
        // H = ∂(A F)/∂F for a fixed A: (A F)_ij = A_ik F_kj, so H[(i+3j, k+3l)] = A_ik δ_jl.
        let a = Mat3::new(1.0, 2.0, 3.0, -1.0, 0.5, 4.0, 0.0, 2.0, -3.0);
        let h = Mat9::from_fn(|r, c| {
            let (i, j, k, l) = (r % 3, r / 3, c % 3, c / 3);
            if j == l { a[(i, k)] } else { 0.0 }
        });
        let df = Mat3::new(0.3, -1.0, 2.0, 1.5, 0.0, -0.7, 0.2, 0.9, 1.1);
        assert!((contract(&h, &df) - a * df).norm() < 1e-14);
        assert_eq!(df.as_slice()[1], df[(1, 0)]);
        assert!((frobenius(&a, &df) - (a.transpose() * df).trace()).abs() < 1e-14);
    }
}
