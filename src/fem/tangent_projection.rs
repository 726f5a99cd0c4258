//! The elastic stiffness with every element's tangent projected onto the positive
//! semi-definite cone: what the step falls back to when A = (1 + hα) M + (hβ + h²)(K + K_a)
//! is not positive definite.
//!
//! The exact tangent ∂P/∂F of a hyperelastic law is the Hessian of Ψ, which is not convex
//! under compression. For the co-rotational law, ∂P/∂F = 2μ I₉ + λ vec(R) vec(R)ᵀ +
//! Σ_{i<j} 2(λ(tr S − 3) − 2μ)/(σᵢ + σⱼ) qᵢⱼ qᵢⱼᵀ (`material::corotational`) has the
//! eigenvalue 2μ + 2(λ(tr S − 3) − 2μ)/(σᵢ + σⱼ) on each rotation generator qᵢⱼ: zero at rest,
//! negative as soon as an element is compressed (tr S < 3 or σᵢ + σⱼ < 2). A few such
//! elements are harmless (M keeps A definite), but a robot squeezed along its length by
//! co-contracting cables has enough of them that h² K outweighs M along a buckling mode and
//! the step's Cholesky factorisation fails. Replacing each element's tangent by its positive
//! part, H⁺ = Σ max(ηₖ, 0) wₖ wₖᵀ over the eigenpairs (ηₖ, wₖ) of the 9 × 9 ∂P/∂F (Teran et
//! al. 2005, "Robust quasistatic finite elements and flesh simulation"), makes every element
//! block V Bᵀ H⁺ B positive semi-definite and hence A positive definite, while leaving the
//! elements whose tangent is already positive semi-definite exactly as they were. The step
//! with K̂ = Σₑ V Bᵀ H⁺ B is implicit Euler linearised with a convex model of the elastic
//! energy: the same equilibria (f(x) is unchanged), a damped path to them.

use crate::error::Result;
use crate::material::Mat9;
use crate::math::Vec3;

use super::soft_body::SoftBody;

/// The relative size (of an element tangent's largest eigenvalue) below which a negative
/// eigenvalue counts as round-off (an element at rest has exact zeros on its rotations).
const ROUND_OFF: f64 = 1e-12;

/// The negative part N = Σ_{ηₖ<0} ηₖ wₖ wₖᵀ of a symmetric 9 × 9 tangent `t` (Pa), and whether
/// it is beyond round-off (some ηₖ < −1e-12 max|η|).
pub fn negative_part(t: &Mat9) -> (Mat9, bool) {
    let eigen = t.symmetric_eigen();
    let scale = eigen.eigenvalues.amax();
    let mut negative = Mat9::zeros();
    let mut beyond = false;
    for (k, &eta) in eigen.eigenvalues.iter().enumerate() {
        if eta < 0.0 {
            let w = eigen.eigenvectors.column(k);
            negative += w * w.transpose() * eta;
            beyond |= eta < -ROUND_OFF * scale;
        }
    }
    (negative, beyond)
}

impl SoftBody {
    /// Turns `stiffness` (the values of K(x) on the body's pattern, N/m, as
    /// [`SoftBody::evaluate_elastic`] assembles them at positions `x`, m) into K̂(x), the sum
    /// of the elements' blocks V Bᵀ H⁺ B with H⁺ the positive part of each element's ∂P/∂F
    /// (module doc): subtracts the blocks of the negative parts of the elements whose tangent
    /// has a negative eigenvalue beyond round-off, and returns how many there were (0: K
    /// untouched, bit for bit). Laws without an exact tangent (`corotational_sofa`, whose
    /// stiffness R K₀ Rᵀ is positive semi-definite) are left as they are. Errors: an element
    /// the law cannot evaluate, named.
    pub fn project_stiffness(&self, x: &[Vec3], stiffness: &mut [f64]) -> Result<usize> {
        let material = *self.material();
        if !material.law().has_exact_tangent() {
            return Ok(0);
        }
        let plan = self.pattern().plan();
        let mut block = [0.0; 144];
        let mut projected = 0;
        for (e, tet) in self.elements().iter().enumerate() {
            let f = tet.deformation_gradient(x);
            let point = material.at(&f).map_err(|err| err.at_element(e))?;
            let point = self.in_element_material(e, point);
            let (negative, beyond) = negative_part(&point.tangent());
            if !beyond {
                continue;
            }
            projected += 1;
            tet.stiffness(&(-negative), &mut block);
            plan.scatter_add(e, &block, stiffness);
        }
        Ok(projected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fem::SoftBodyOptions;
    use crate::material::{Law, Material};
    use crate::math::{DMat, Mat3};
    use crate::mesh::box_mesh;

    /// The dense symmetric matrix of pattern values `values`.
    fn dense(body: &SoftBody, values: &[f64]) -> DMat {
        let pattern = body.pattern();
        let n = pattern.n();
        let mut a = DMat::zeros(n, n);
        let (cp, ri) = (pattern.col_ptr(), pattern.row_idx());
        for c in 0..n {
            for k in cp[c]..cp[c + 1] {
                a[(ri[k], c)] = values[k];
                a[(c, ri[k])] = values[k];
            }
        }
        a
    }

    /// A free co-rotational bar of 2 × 1 × 1 cells (every node free) and node positions
    /// under the affine map x ↦ `f` x.
    fn bar(law: Law, f: Mat3) -> (SoftBody, Vec<Vec3>) {
        let mesh = box_mesh([2, 1, 1], [0.0; 3], [0.02, 0.01, 0.01]).unwrap();
        let fixed = vec![false; mesh.node_count()];
        let body = SoftBody::new(
            "bar",
            mesh,
            SoftBodyOptions::for_tests(Material::new(law, 4.5e5, 0.45).unwrap(), fixed),
        )
        .unwrap();
        let x = body.rest_positions().iter().map(|p| f * p).collect();
        (body, x)
    }

    fn stiffness(body: &SoftBody, x: &[Vec3]) -> Vec<f64> {
        let mut state = body.elastic_state();
        body.evaluate_elastic(x, crate::fem::Stiffness::Assemble, &mut state)
            .unwrap();
        state.stiffness
    }

    #[test]
    fn compressed_elements_are_indefinite_and_their_projection_is_not() {
        // Uniaxial compression to 80 % along x: the exact K has negative eigenvalues (the
        // rotation generators' 2μ + 2(λ(tr S − 3) − 2μ)/(σᵢ + σⱼ) < 0); K̂ has none, and
        // K̂ − K is positive semi-definite (only negative parts were removed).
        for law in [Law::Corotational, Law::StVK, Law::NeoHookean] {
            let (body, x) = bar(law, Mat3::from_diagonal(&Vec3::new(0.8, 1.0, 1.0)));
            let k = stiffness(&body, &x);
            let mut projected = k.clone();
            let count = body.project_stiffness(&x, &mut projected).unwrap();
            assert_eq!(
                count,
                body.elements().len(),
                "{law}: every element compressed"
            );
            let (kd, pd) = (dense(&body, &k), dense(&body, &projected));
            let scale = kd.norm();
            let before = kd.clone().symmetric_eigenvalues().min();
            let after = pd.clone().symmetric_eigenvalues().min();
            let added = (&pd - &kd).symmetric_eigenvalues().min();
            assert!(
                before < -1e-3 * scale,
                "{law}: K's lowest eigenvalue {before:e}"
            );
            assert!(
                after > -1e-12 * scale,
                "{law}: K̂'s lowest eigenvalue {after:e}"
            );
            assert!(added > -1e-12 * scale, "{law}: K̂ − K lowest {added:e}");
        }
    }

    #[test]
    fn stretched_or_resting_elements_are_left_bit_for_bit() {
        // Corotational at rest, rotated, and stretched by 10 %: every tangent eigenvalue
        // ≥ 0 (2μ + 2(λ·0.1 − 2μ)/2.1 > 0), so nothing changes.
        let r = nalgebra::Rotation3::from_scaled_axis(Vec3::new(0.3, -0.2, 0.5));
        for f in [
            Mat3::identity(),
            *r.matrix(),
            Mat3::from_diagonal(&Vec3::new(1.1, 1.0, 1.0)),
        ] {
            let (body, x) = bar(Law::Corotational, f);
            let k = stiffness(&body, &x);
            let mut projected = k.clone();
            assert_eq!(body.project_stiffness(&x, &mut projected).unwrap(), 0);
            assert!(
                k.iter()
                    .zip(&projected)
                    .all(|(a, b)| a.to_bits() == b.to_bits())
            );
        }
    }

    #[test]
    fn negative_part_is_the_corotational_rotation_eigenvalue() {
        // F = diag(0.8, 1, 1): σ₁ + σ₂ = 1.8 (pairs with the compressed axis) and tr S − 3 =
        // −0.2, so the two generators q₀₁, q₀₂ carry 2μ + 2(−0.2λ − 2μ)/1.8 and q₁₂ carries
        // 2μ + 2(−0.2λ − 2μ)/2; the negative part's trace is their negative sum.
        let material = Material::new(Law::Corotational, 4.5e5, 0.45).unwrap();
        let lame = material.lame();
        let point = material
            .at(&Mat3::from_diagonal(&Vec3::new(0.8, 1.0, 1.0)))
            .unwrap();
        let c = -0.2 * lame.lambda - 2.0 * lame.mu;
        let eta = |sum: f64| 2.0 * lame.mu + 2.0 * c / sum;
        let expected: f64 = [eta(1.8), eta(1.8), eta(2.0)]
            .iter()
            .filter(|e| **e < 0.0)
            .sum();
        let (negative, beyond) = negative_part(&point.tangent());
        assert!(beyond);
        assert!(
            (negative.trace() - expected).abs() < 1e-9 * expected.abs(),
            "{} vs {expected}",
            negative.trace()
        );
    }
}
