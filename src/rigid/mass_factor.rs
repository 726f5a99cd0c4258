//! The factorisation of the joint-space inertia matrix that follows the kinematic tree,
//! `M(q) = Lᵀ D L` (Featherstone, "Rigid Body Dynamics Algorithms", §6.5, the LTDL
//! factorisation; Pinocchio's `cholesky::decompose`): L is unit lower-triangular with non-zeros
//! only where a coordinate's ancestor is (`Model::parent_dof`), so there is no fill-in and a
//! factorisation costs O(nv·d²), a solve O(nv·d), d the depth of the tree. The rigid step's
//! `M⁻¹ J_cᵀ` (the rigid part of the Delassus matrix `G = h J_c M⁻¹ J_cᵀ`, paper 002 Eq. 3)
//! and its contact correction are solves with it, one factorisation per step; `M` is never
//! inverted.

use super::crba_world::crba_world;
use super::data::Data;
use super::model::Model;
use crate::error::{Error, Result};
use crate::math::DMat;

/// `L` and `D` of `M = Lᵀ D L`, in place in one matrix: the strict lower triangle holds L
/// (at (k, i) for i an ancestor of k), the diagonal holds D. Other entries are not read.
#[derive(Debug, Clone)]
pub struct MassFactor {
    h: DMat,
    /// Each coordinate's ancestors, nearest first (`Model::parent_dof` followed to the root),
    /// concatenated: coordinate k's are `ancestors[start[k]..start[k + 1]]`. Listed once, so
    /// the loops read them from a slice instead of chasing the parent links.
    ancestors: Vec<usize>,
    start: Vec<usize>,
}

impl MassFactor {
    /// A buffer for `model` (nv × nv).
    pub fn new(model: &Model) -> MassFactor {
        let mut ancestors = Vec::new();
        let mut start = vec![0];
        for k in 0..model.nv {
            let mut i = model.parent_dof[k];
            while let Some(ii) = i {
                ancestors.push(ii);
                i = model.parent_dof[ii];
            }
            start.push(ancestors.len());
        }
        MassFactor {
            h: DMat::zeros(model.nv, model.nv),
            ancestors,
            start,
        }
    }

    /// Coordinate k's ancestors, nearest first.
    #[inline(always)]
    fn ancestors(&self, k: usize) -> &[usize] {
        &self.ancestors[self.start[k]..self.start[k + 1]]
    }

    /// Computes `M(q)` by CRBA (also leaving `oMi` and the joint Jacobian columns of `data`
    /// current for `q`) and factorises it. Errors, naming the robot and the coordinate, when a
    /// pivot is not positive (a massless moving subtree).
    pub fn factorize(&mut self, model: &Model, data: &mut Data, q: &[f64]) -> Result<()> {
        let m = crba_world(model, data, q);
        self.h.copy_from(m);
        let n = self.h.nrows();
        // Column-major: entry (r, c) at c n + r.
        let h = self.h.as_mut_slice();
        for k in (0..n).rev() {
            let d = h[k * n + k];
            if !(d > 0.0) || !d.is_finite() {
                return Err(Error::invalid(
                    format!("robot {}", model.name),
                    format!(
                        "the joint-space inertia matrix is not positive definite at velocity coordinate {k} (joint {})",
                        model.joints[model.dof_joint[k]].name
                    ),
                ));
            }
            // The ancestors of an ancestor ii of k are the ones after it in k's list.
            let chain = &self.ancestors[self.start[k]..self.start[k + 1]];
            for (m, &ii) in chain.iter().enumerate() {
                let a = h[ii * n + k] / d;
                for &jj in &chain[m..] {
                    h[jj * n + ii] -= a * h[jj * n + k];
                }
                h[ii * n + k] = a;
            }
        }
        Ok(())
    }

    /// `x ← M⁻¹ x`: `L⁻ᵀ`, then `D⁻¹`, then `L⁻¹`, each along the tree. The first sweep skips
    /// the zero entries of x (a contact row's force reaches only the coordinates that move its
    /// body: their products are zeros).
    pub fn solve_in_place(&self, x: &mut [f64]) {
        let n = self.h.nrows();
        assert_eq!(x.len(), n, "MassFactor::solve_in_place: length");
        let h = self.h.as_slice();
        for i in (0..n).rev() {
            let xi = x[i];
            if xi == 0.0 {
                continue;
            }
            for &jj in self.ancestors(i) {
                x[jj] -= h[jj * n + i] * xi;
            }
        }
        for i in 0..n {
            x[i] /= h[i * n + i];
        }
        for i in 0..n {
            let mut xi = x[i];
            for &jj in self.ancestors(i) {
                xi -= h[jj * n + i] * x[jj];
            }
            x[i] = xi;
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
        for (file, base) in [
            ("ur5.urdf", Base::Fixed),
            ("quadruped.urdf", Base::FreeFlyer),
        ] {
            check(file, base);
        }
    }

    fn check(file: &str, base: Base) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("urdf")
            .join(file);
        let model = load_urdf(&path, base).unwrap();
        let mut data = Data::new(&model);
        let mut q: Vec<f64> = (0..model.nq).map(|k| 0.3 * k as f64 - 0.7).collect();
        if base == Base::FreeFlyer {
            // A unit quaternion for the base.
            q[3..7].copy_from_slice(&[0.1, -0.2, 0.3, (1.0f64 - 0.14).sqrt()]);
        }
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
