//! Shared fixtures of the contact module's unit tests: a clamped box with a random SPD step
//! matrix, random contact frames, and the dense matrices a second method computes with.

use crate::contact::ContactJacobian;
use crate::linalg::SymmetricPattern;
use crate::linalg::test_support::{random_spd_values, to_dense};
use crate::math::{DMat, Mat3, SplitMix64};
use crate::mesh::box_mesh;

/// An orthonormal frame from a random rotation (QR of a random matrix).
pub(crate) fn random_frame(rng: &mut SplitMix64) -> Mat3 {
    let m = Mat3::from_fn(|_, _| rng.uniform());
    let q = m.qr().q();
    if q.determinant() < 0.0 { -q } else { q }
}

/// A 0.1 × 0.1 × 0.15 m box mesh (2 × 2 × 3 cells) with its bottom face fixed, a random SPD
/// `A` on its pattern, the nodes of its top face, one of its bottom face, and one inside it
/// that can move.
pub(crate) struct BoxSystem {
    pub(crate) pattern: SymmetricPattern,
    pub(crate) values: Vec<f64>,
    pub(crate) top: Vec<usize>,
    pub(crate) bottom: usize,
    pub(crate) inside: usize,
    pub(crate) nodes: usize,
}

pub(crate) fn box_system(rng: &mut SplitMix64) -> BoxSystem {
    let mesh = box_mesh([2, 2, 3], [0.0, 0.0, 0.0], [0.1, 0.1, 0.15]).unwrap();
    let nodes = mesh.node_count();
    let x = mesh.positions();
    let mut removed = vec![false; 3 * nodes];
    for (i, p) in x.iter().enumerate() {
        if p.z < 1e-12 {
            removed[3 * i..3 * i + 3].fill(true);
        }
    }
    let pattern = SymmetricPattern::new(nodes, 3, mesh.tetrahedra(), &removed).unwrap();
    let values = random_spd_values(&pattern, rng);
    let top: Vec<usize> = (0..nodes).filter(|&i| x[i].z > 0.15 - 1e-12).collect();
    let inside = (0..nodes)
        .find(|&i| !top.contains(&i) && pattern.dofs().reduced_index(3 * i).is_some())
        .unwrap();
    BoxSystem {
        bottom: (0..nodes).find(|&i| x[i].z < 1e-12).unwrap(),
        top,
        inside,
        pattern,
        values,
        nodes,
    }
}

impl BoxSystem {
    /// The dense `A` over the free DOFs.
    pub(crate) fn dense_a(&self) -> DMat {
        to_dense(&self.pattern, &self.values)
    }

    /// The dense `H` of `jac` over the free DOFs (fixed DOFs' entries dropped).
    pub(crate) fn dense_jacobian(&self, jac: &ContactJacobian) -> DMat {
        let dofs = self.pattern.dofs();
        let mut hd = DMat::zeros(jac.row_count(), self.pattern.n());
        for i in 0..jac.row_count() {
            for (node, c) in jac.row(i) {
                for p in 0..3 {
                    if let Some(r) = dofs.reduced_index(3 * node + p) {
                        hd[(i, r)] += c[p];
                    }
                }
            }
        }
        hd
    }
}
