//! The Cholesky factor of the joint-space inertia matrix, `M(q) = L Lᵀ` (dense, in place in
//! a buffer allocated once): the rigid step's `M⁻¹ J_cᵀ` (the rigid part of the Delassus
//! matrix `G = h J_c M⁻¹ J_cᵀ`, paper 002 Eq. 3) and its contact correction are solves with
//! it, one factorisation per step; `M` is never inverted.

use super::crba::crba;
use super::data::Data;
use super::model::Model;
use crate::error::{Error, Result};
use crate::math::DMat;

/// `L` with `M = L Lᵀ` (lower triangle of `l`; the strict upper triangle is not read).
#[derive(Debug, Clone)]
pub struct MassFactor {
    l: DMat,
}

impl MassFactor {
    /// A buffer for `model` (nv × nv).
    pub fn new(model: &Model) -> MassFactor {
        MassFactor {
            l: DMat::zeros(model.nv, model.nv),
        }
    }

    /// Computes `M(q)` by CRBA (also leaving `oMi` and the joint Jacobian columns of `data`
    /// current for `q`) and factorises it. Errors, naming the robot and the coordinate, when a
    /// pivot is not positive (a massless moving subtree).
    pub fn factorize(&mut self, model: &Model, data: &mut Data, q: &[f64]) -> Result<()> {
        let m = crba(model, data, q);
        self.l.copy_from(m);
        let n = self.l.nrows();
        for j in 0..n {
            let mut d = self.l[(j, j)];
            for k in 0..j {
                d -= self.l[(j, k)] * self.l[(j, k)];
            }
            if !(d > 0.0) || !d.is_finite() {
                return Err(Error::invalid(
                    format!("robot {}", model.name),
                    format!(
                        "the joint-space inertia matrix is not positive definite at velocity coordinate {j} (joint {})",
                        model.joints[model.dof_joint[j]].name
                    ),
                ));
            }
            let d = d.sqrt();
            self.l[(j, j)] = d;
            for i in j + 1..n {
                let mut s = self.l[(i, j)];
                for k in 0..j {
                    s -= self.l[(i, k)] * self.l[(j, k)];
                }
                self.l[(i, j)] = s / d;
            }
        }
        Ok(())
    }

    /// `x ← M⁻¹ x` (forward then backward substitution).
    pub fn solve_in_place(&self, x: &mut [f64]) {
        let n = self.l.nrows();
        assert_eq!(x.len(), n, "MassFactor::solve_in_place: length");
        for i in 0..n {
            let mut s = x[i];
            for k in 0..i {
                s -= self.l[(i, k)] * x[k];
            }
            x[i] = s / self.l[(i, i)];
        }
        for i in (0..n).rev() {
            let mut s = x[i];
            for k in i + 1..n {
                s -= self.l[(k, i)] * x[k];
            }
            x[i] = s / self.l[(i, i)];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rigid::{Base, compute_minverse, load_urdf};
    use std::path::Path;

    #[test]
    fn solves_agree_with_the_inverse_by_the_aba_recursion() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("urdf/ur5.urdf");
        let model = load_urdf(&path, Base::Fixed).unwrap();
        let mut data = Data::new(&model);
        let q: Vec<f64> = (0..model.nq).map(|k| 0.3 * k as f64 - 0.7).collect();
        let mut factor = MassFactor::new(&model);
        factor.factorize(&model, &mut data, &q).unwrap();
        let minv = compute_minverse(&model, &mut data, &q).clone();
        for c in 0..model.nv {
            let mut x = vec![0.0; model.nv];
            x[c] = 1.0;
            factor.solve_in_place(&mut x);
            for r in 0..model.nv {
                assert!(
                    (x[r] - minv[(r, c)]).abs() < 1e-10 * minv.amax(),
                    "M⁻¹[{r},{c}]: {} vs {}",
                    x[r],
                    minv[(r, c)]
                );
            }
        }
    }
}
