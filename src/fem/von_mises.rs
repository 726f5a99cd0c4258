//! The von Mises stress of a soft body's deformed state, per node, for output (the frames'
//! `von_mises` field, docs/outputs.md).

use crate::math::{Mat3, Vec3};

use super::soft_body::SoftBody;

/// The von Mises stress (Pa) of the Cauchy stress σ: √(3/2 s:s), s = σ − tr(σ)/3 I.
pub fn von_mises(sigma: &Mat3) -> f64 {
    let s = sigma - Mat3::identity() * (sigma.trace() / 3.0);
    (1.5 * s.component_mul(&s).sum()).sqrt()
}

impl SoftBody {
    /// Per node, the rest-volume-weighted mean over its tetrahedra of each tetrahedron's von
    /// Mises stress (Pa) at node positions `x` (m): σ = P Fᵀ / det F from the body's material
    /// (P the first Piola-Kirchhoff stress). An element the law cannot evaluate (inverted)
    /// is left out; a node with no evaluated element gets 0.
    pub fn nodal_von_mises(&self, x: &[Vec3]) -> Vec<f64> {
        let n = self.node_count();
        let (mut sum, mut weight) = (vec![0.0; n], vec![0.0; n]);
        for (e, t) in self.elements().iter().enumerate() {
            let Ok(point) = self.material_point(e, x) else {
                continue;
            };
            let f = t.deformation_gradient(x);
            let j = f.determinant();
            if !(j > 0.0) {
                continue;
            }
            let value = von_mises(&(point.stress() * f.transpose() / j));
            for &node in &t.nodes {
                sum[node] += t.volume * value;
                weight[node] += t.volume;
            }
        }
        sum.iter()
            .zip(&weight)
            .map(|(s, w)| if *w > 0.0 { s / w } else { 0.0 })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn von_mises_of_uniaxial_stress_is_its_magnitude_and_of_pressure_zero() {
        let uniaxial = Mat3::new(2.5e5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        assert!((von_mises(&uniaxial) - 2.5e5).abs() < 1e-9);
        assert!(von_mises(&(Mat3::identity() * -7.0e4)).abs() < 1e-9);
        // Pure shear τ: √3 τ.
        let shear = Mat3::new(0.0, 1.0e3, 0.0, 1.0e3, 0.0, 0.0, 0.0, 0.0, 0.0);
        assert!((von_mises(&shear) - 3f64.sqrt() * 1.0e3).abs() < 1e-9);
    }
}
