//! Analytical derivatives of ABA (Carpentier & Mansard, RSS 2018, Sec. III-C): since
//! `M(q) q̈ + b(q, v) = τ`, the forward-dynamics derivatives are `∂q̈/∂q = −M⁻¹ ∂τ/∂q`,
//! `∂q̈/∂v = −M⁻¹ ∂τ/∂v` with the RNEA derivatives evaluated at `a = q̈`, and `∂q̈/∂τ = M⁻¹`.
//! One ABA sweep yields q̈, the world kinematics (velocities and accelerations with gravity)
//! and, on the same articulated inertias, `M⁻¹`; the RNEA-derivative passes reuse them.

use super::aba::{aba_backward_joint, aba_first_pass, aba_forward_joint};
use super::crba_world::symmetrize_from_upper;
use super::data::Data;
use super::minverse::{minv_backward_joint, minv_forward_joint};
use super::model::Model;
use super::rnea_derivatives::rnea_derivative_passes;
use crate::math::DMat;

/// Fills `data.ddq` (= ABA(q, v, τ)), `data.ddq_dq`, `data.ddq_dv` (tangent space, nv × nv) and
/// `data.minv` (= ∂q̈/∂τ, full symmetric); also leaves `data.dtau_dq`, `data.dtau_dv` at
/// `(q, v, q̈)`.
pub fn compute_aba_derivatives(model: &Model, data: &mut Data, q: &[f64], v: &[f64], tau: &[f64]) {
    assert!(q.len() == model.nq && v.len() == model.nv && tau.len() == model.nv);
    let n = model.njoints();
    aba_first_pass(model, data, q, v);
    data.fcrb.fill(0.0);
    for i in (1..n).rev() {
        aba_backward_joint(model, data, i, tau);
        minv_backward_joint(model, data, i);
    }
    data.oa[0] = -model.gravity;
    for i in 1..n {
        aba_forward_joint(model, data, i);
        minv_forward_joint(model, data, i);
    }
    symmetrize_from_upper(&mut data.minv);
    // data.oa now holds the accelerations a − g of the motion q̈: RNEA at (q, v, q̈).
    rnea_derivative_passes(model, data);
    minus_product_skipping_zeros(&data.minv, &data.dtau_dq, &mut data.ddq_dq);
    minus_product_skipping_zeros(&data.minv, &data.dtau_dv, &mut data.ddq_dv);
}

/// `out = −A B` for square column-major matrices, skipping the exact zeros of `B`: the RNEA
/// derivatives of a tree are sparse (row i is non-zero only on the ancestors and the subtree of
/// i), so column j of `out` sums only the columns of `A` that matter, four at a time.
/// Allocation-free (a BLAS-style GEMM would allocate packing buffers) and as fast as one here.
fn minus_product_skipping_zeros(a: &DMat, b: &DMat, out: &mut DMat) {
    let n = a.nrows();
    assert!(a.ncols() == n && b.nrows() == n && b.ncols() == n && out.shape() == (n, n));
    let (a, b) = (a.as_slice(), b.as_slice());
    let out = out.as_mut_slice();
    let mut idx = [0usize; 4];
    let col = |r: usize| &a[r * n..(r + 1) * n];
    for j in 0..n {
        let oc = &mut out[j * n..(j + 1) * n];
        oc.fill(0.0);
        let bc = &b[j * n..(j + 1) * n];
        let mut cnt = 0;
        for r in 0..n {
            if bc[r] != 0.0 {
                idx[cnt] = r;
                cnt += 1;
                if cnt == 4 {
                    let (s0, s1, s2, s3) = (bc[idx[0]], bc[idx[1]], bc[idx[2]], bc[idx[3]]);
                    let (a0, a1, a2, a3) = (col(idx[0]), col(idx[1]), col(idx[2]), col(idx[3]));
                    for t in 0..n {
                        oc[t] -= s0 * a0[t] + s1 * a1[t] + s2 * a2[t] + s3 * a3[t];
                    }
                    cnt = 0;
                }
            }
        }
        for &r in &idx[..cnt] {
            let s = bc[r];
            for (o, x) in oc.iter_mut().zip(col(r)) {
                *o -= s * x;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sparse_product_equals_the_dense_one() {
        for n in [1, 3, 7, 18] {
            let a = DMat::from_fn(n, n, |r, c| ((r * 31 + c * 17) % 13) as f64 - 6.0);
            // A sparse right factor with runs of zeros and non-zeros of every length.
            let b = DMat::from_fn(n, n, |r, c| {
                if (r * 7 + c * 3) % 5 < 2 {
                    0.0
                } else {
                    (r as f64 - c as f64) * 0.5 + 1.0
                }
            });
            let mut out = DMat::zeros(n, n);
            minus_product_skipping_zeros(&a, &b, &mut out);
            assert!((out + &a * &b).amax() < 1e-12, "n = {n}");
        }
    }
}
