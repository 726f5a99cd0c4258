//! SOFA's co-rotational tetrahedron (`TetrahedronFEMForceField`, method `polar` / `svd`), the
//! law `corotational_sofa`: an element-level law, since its rotation is not a function of F.
//!
//! For a tetrahedron with nodes in file order (a, b, c, d), let D_m and D_s be the rest and
//! current edge matrices (columns x_b − x_a, x_c − x_a, x_d − x_a; F = D_s D_m⁻¹) and Q_m, Q_s
//! their orthogonal polar factors (Q_m once at rest). SOFA takes
//!
//! ```text
//! R = Q_s Q_mᵀ                       (not the polar factor of F)
//! ε = sym(RᵀF) − I,  σ = 2μ ε + λ tr(ε) I,  P = R σ
//! Ψ = μ ε:ε + (λ/2) tr(ε)²           (with R held fixed: P = ∂Ψ/∂F at fixed R)
//! K_e = R K₀ Rᵀ                      (R fixed; K₀ the linear-elastic element stiffness at rest)
//! ```
//!
//! and the nodal forces are the crate's fₙ = −V P gₙ. Since R ≠ polar(F) whenever the
//! element is sheared (RᵀF is then not symmetric):
//!
//! - the result depends on which node is listed first (the edges span from node a);
//! - the forces are not the gradient of an energy of x and their exact tangent −∂f/∂x (with
//!   the derivative of R) is not symmetric; the step, like SOFA, uses the symmetric R K₀ Rᵀ;
//! - P Fᵀ is not symmetric, so each element exerts a small net torque
//!   −V Σₙ xₙ × (P gₙ) ≠ 0 (the net force Σₙ fₙ is still 0).
//!
//! The `corotational` law (polar(F), exact tangent, torque-free) stays the default; this one
//! exists to reproduce SOFA scenes. Its second derivatives are not implemented: the
//! derivative layer refuses it (`diff::check_differentiable`).
//!
//! The polar factors come from the rotation-variant SVD (as `corotational`): Q = U Vᵀ with
//! det Q = +1, which is the orthogonal polar factor for det D > 0 (for an inverted element it
//! is the nearest proper rotation).

use super::svd3::Svd3;
use super::tensor::Mat9;
use super::{DeformationError, HyperelasticPoint, Lame, check_finite};
use crate::math::Mat3;

/// The rest-shape data of one tetrahedron the `corotational_sofa` law needs: its rest edge
/// matrix D_m (m) and D_m's orthogonal polar factor Q_m.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SofaRestFrame {
    edges: Mat3,
    rotation: Mat3,
}

impl SofaRestFrame {
    /// The frame of an element whose rest edges are orthonormal (D_m = Q_m = I): then
    /// R = polar(F), as for `corotational`.
    pub fn identity() -> SofaRestFrame {
        SofaRestFrame {
            edges: Mat3::identity(),
            rotation: Mat3::identity(),
        }
    }

    /// The frame of the rest edge matrix `edges` = D_m = [X_b − X_a, X_c − X_a, X_d − X_a]
    /// (m). Errors when D_m is not finite or its SVD does not converge.
    pub fn new(edges: &Mat3) -> Result<SofaRestFrame, DeformationError> {
        Ok(SofaRestFrame {
            edges: *edges,
            rotation: polar_rotation(edges)?,
        })
    }

    /// D_m (m).
    pub fn edges(&self) -> Mat3 {
        self.edges
    }

    /// Q_m, the orthogonal polar factor of D_m.
    pub fn rotation(&self) -> Mat3 {
        self.rotation
    }
}

/// The orthogonal polar factor Q = U Vᵀ of `d` (rotation-variant SVD, det Q = +1).
fn polar_rotation(d: &Mat3) -> Result<Mat3, DeformationError> {
    check_finite(d)?;
    let svd = Svd3::new(d).ok_or(DeformationError::SvdNotConverged)?;
    Ok(svd.u * svd.v.transpose())
}

/// The `corotational_sofa` state at one element: F and SOFA's rotation R = Q_s Q_mᵀ.
#[derive(Debug, Clone, Copy)]
pub struct CorotationalSofaPoint {
    f: Mat3,
    r: Mat3,
}

impl CorotationalSofaPoint {
    /// The state at the deformation gradient `f` of an element of rest frame `frame`:
    /// D_s = F D_m, R = polar(D_s) Q_mᵀ.
    pub fn in_frame(f: &Mat3, frame: &SofaRestFrame) -> Result<Self, DeformationError> {
        check_finite(f)?;
        let qs = polar_rotation(&(f * frame.edges))?;
        Ok(CorotationalSofaPoint {
            f: *f,
            r: qs * frame.rotation.transpose(),
        })
    }

    /// SOFA's element rotation R = Q_s Q_mᵀ.
    pub fn rotation(&self) -> Mat3 {
        self.r
    }

    /// The small strain in the rotated frame, ε = sym(RᵀF) − I.
    pub fn strain(&self) -> Mat3 {
        let a = self.r.transpose() * self.f;
        (a + a.transpose()) * 0.5 - Mat3::identity()
    }

    /// Linear isotropic stress of a strain-like matrix e: 2μ sym(e) + λ tr(e) I (Pa).
    fn hooke(lame: &Lame, e: &Mat3) -> Mat3 {
        (e + e.transpose()) * lame.mu + Mat3::identity() * (lame.lambda * e.trace())
    }
}

impl HyperelasticPoint for CorotationalSofaPoint {
    /// The state of an element whose rest edges are orthonormal ([`SofaRestFrame::identity`]):
    /// R = polar(F). Elements use [`CorotationalSofaPoint::in_frame`].
    fn at(f: &Mat3) -> Result<Self, DeformationError> {
        Self::in_frame(f, &SofaRestFrame::identity())
    }

    /// Ψ = μ ε:ε + (λ/2) tr(ε)² (J/m³), R fixed.
    fn energy_density(&self, lame: &Lame) -> f64 {
        let e = self.strain();
        lame.mu * e.component_mul(&e).sum() + 0.5 * lame.lambda * e.trace().powi(2)
    }

    /// P = R σ, σ = 2μ ε + λ tr(ε) I (Pa).
    fn stress(&self, lame: &Lame) -> Mat3 {
        let e = self.strain();
        self.r * (e * (2.0 * lame.mu) + Mat3::identity() * (lame.lambda * e.trace()))
    }

    /// ∂P/∂F with R held fixed (Pa), symmetric: column `k + 3l` is
    /// R (2μ sym(Rᵀ e_k e_lᵀ) + λ tr(Rᵀ e_k e_lᵀ) I). Gives the element block R K₀ Rᵀ.
    fn tangent(&self, lame: &Lame) -> Mat9 {
        let mut out = Mat9::zeros();
        for b in 0..9 {
            let mut e = Mat3::zeros();
            e[b] = 1.0;
            let column = self.tangent_action(lame, &e);
            out.column_mut(b).copy_from_slice(column.as_slice());
        }
        out
    }

    /// dP = R (2μ sym(RᵀdF) + λ tr(RᵀdF) I) (Pa), R held fixed.
    fn tangent_action(&self, lame: &Lame, df: &Mat3) -> Mat3 {
        self.r * Self::hooke(lame, &(self.r.transpose() * df))
    }

    /// Not implemented: the law has no exact tangent (see the module documentation).
    ///
    /// # Panics
    /// Always; the derivative layer refuses the law before reaching here.
    fn tangent_derivative(&self, _lame: &Lame, _df1: &Mat3, _df2: &Mat3) -> Mat3 {
        panic!("{}", super::Law::CorotationalSofa.no_exact_tangent())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Vec3;

    fn rotation(axis: Vec3, angle: f64) -> Mat3 {
        *nalgebra::Rotation3::from_axis_angle(&nalgebra::Unit::new_normalize(axis), angle).matrix()
    }

    #[test]
    fn a_rotated_rest_shape_has_no_stress_and_r_is_the_rotation() {
        let dm = Mat3::new(1.0, 0.3, 0.2, 0.1, 0.9, 0.1, 0.0, 0.2, 1.1);
        let frame = SofaRestFrame::new(&dm).unwrap();
        let q = rotation(Vec3::new(0.3, -1.0, 0.5), 2.5);
        // D_s = Q D_m, so F = Q.
        let p = CorotationalSofaPoint::in_frame(&q, &frame).unwrap();
        assert!((p.rotation() - q).norm() < 1e-13);
        let lame = Lame::from_young_poisson(1e5, 0.3).unwrap();
        assert!(p.stress(&lame).norm() < 1e-8);
        assert!(p.energy_density(&lame).abs() < 1e-20);
    }

    #[test]
    fn the_tangent_is_symmetric_and_its_action_matches_it() {
        let dm = Mat3::new(1.0, 0.3, 0.2, 0.1, 0.9, 0.1, 0.0, 0.2, 1.1);
        let frame = SofaRestFrame::new(&dm).unwrap();
        let f = rotation(Vec3::new(1.0, 0.2, 0.1), 0.7)
            * Mat3::new(1.1, 0.2, 0.0, 0.0, 0.9, 0.1, 0.05, 0.0, 1.0);
        let p = CorotationalSofaPoint::in_frame(&f, &frame).unwrap();
        let lame = Lame::from_young_poisson(1e5, 0.3).unwrap();
        let t = p.tangent(&lame);
        assert!((t - t.transpose()).norm() < 1e-9 * t.norm());
        let df = Mat3::new(0.1, -0.2, 0.3, 0.0, 0.5, -0.1, -0.3, 0.2, 0.2);
        let by_matrix = t * nalgebra::SVector::<f64, 9>::from_column_slice(df.as_slice());
        let action = p.tangent_action(&lame, &df);
        assert!(
            (by_matrix - nalgebra::SVector::<f64, 9>::from_column_slice(action.as_slice())).norm()
                < 1e-9 * t.norm()
        );
    }
}
