//! A basis V (free degrees of freedom × K modes) and its offset ū laid out per node, so that a
//! node's position x_n = X_n + ū_n + V_n q (m) and a nodal force's generalised force V_nᵀ f_n (N·m per unit mode)
//! read K contiguous values per component; fixed nodes have zero rows.

use crate::fem::SoftBody;
use crate::math::{DMat, DVec, Vec3};

/// The basis of one body, node-major: `values[(3n + k) K + j]` = V[(3n + k), j].
#[derive(Debug, Clone)]
pub struct NodalBasis {
    values: Vec<f64>,
    offset: Vec<Vec3>,
    modes: usize,
}

impl NodalBasis {
    /// The basis `v` (free DOFs × K, the body's free-DOF order) and offset `offset` (free
    /// DOFs, m) of `body`, per node.
    pub fn new(body: &SoftBody, v: &DMat, offset: &[f64]) -> NodalBasis {
        let k = v.ncols();
        let mut values = vec![0.0; 3 * body.node_count() * k];
        let mut nodal = vec![Vec3::zeros(); body.node_count()];
        for (r, (n, c)) in body.pattern().dofs().free_components().enumerate() {
            for j in 0..k {
                values[(3 * n + c) * k + j] = v[(r, j)];
            }
            nodal[n][c] = offset[r];
        }
        NodalBasis {
            values,
            offset: nodal,
            modes: k,
        }
    }

    /// ū_n (m).
    #[inline]
    pub fn offset(&self, n: usize) -> Vec3 {
        self.offset[n]
    }

    /// K, the number of modes.
    pub fn modes(&self) -> usize {
        self.modes
    }

    /// V[(3n + c), ·]: component `c` of node `n` in every mode (m per unit mode).
    #[inline]
    pub fn row(&self, n: usize, c: usize) -> &[f64] {
        let k = self.modes;
        &self.values[(3 * n + c) * k..(3 * n + c + 1) * k]
    }

    /// ū_n + V_n q (m): node `n`'s displacement at reduced coordinates `q`.
    #[inline]
    pub fn displacement(&self, n: usize, q: &[f64]) -> Vec3 {
        self.offset[n] + self.velocity(n, q)
    }

    /// V_n q̇ (m/s): node `n`'s velocity at reduced velocities `qdot`.
    #[inline]
    pub fn velocity(&self, n: usize, qdot: &[f64]) -> Vec3 {
        Vec3::new(
            dot(self.row(n, 0), qdot),
            dot(self.row(n, 1), qdot),
            dot(self.row(n, 2), qdot),
        )
    }

    /// out += V_nᵀ f: the generalised force of a force `f` (N) on node `n`.
    #[inline]
    pub fn add_force(&self, n: usize, f: &Vec3, out: &mut [f64]) {
        for c in 0..3 {
            for (o, v) in out.iter_mut().zip(self.row(n, c)) {
                *o += v * f[c];
            }
        }
    }

    /// The nodal vectors Vᵀ-projected: Σ_n V_nᵀ f_n over all nodes.
    pub fn project(&self, f: &[Vec3]) -> DVec {
        let mut out = DVec::zeros(self.modes);
        for (n, fn_) in f.iter().enumerate() {
            self.add_force(n, fn_, out.as_mut_slice());
        }
        out
    }
}

/// Σᵢ aᵢ bᵢ.
#[inline]
pub(super) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
