//! Constitutive laws on the deformation gradient F (layer 1; uses only `math` and `error`):
//! energy density Ψ(F), first Piola-Kirchhoff stress P(F), its derivative ∂P/∂F, directional
//! second derivatives and derivatives with respect to Young's modulus and Poisson's ratio.
//!
//! The FEM layer computes, per tetrahedron, F = Ds Dm⁻¹ and builds the internal forces from
//! P and the stiffness from ∂P/∂F (paper 004, Sec. II-C, Eq. 3: f_e,i = F_e S_e ∇N_i = P_e ∇N_i).
//! The differentiation layer needs ∂(K·V)/∂x, which at the material level is the second
//! directional derivative d²P[dF₁, dF₂] (never the third-order tensor), and ∂/∂E, ∂/∂ν.
//!
//! Every law is linear in the Lamé parameters, Ψ(F) = μ Ψ_μ(F) + λ Ψ_λ(F), hence so are P,
//! ∂P/∂F and all directional derivatives. A law is evaluated in two stages: the point state
//! (SVD, F⁻¹, Green strain, …) is computed once from F ([`HyperelasticPoint::at`]), then every
//! output is evaluated for a given [`Lame`] pair. Evaluating with [`Lame::UNIT_MU`] or
//! [`Lame::UNIT_LAMBDA`] gives the basis terms, and evaluating with a pair of
//! [`LameDerivatives`] gives, by linearity, the exact derivative with respect to E or ν
//! (see [`Material::d_young_modulus`]).
//!
//! Conventions: units are SI (Ψ in J/m³, P and ∂P/∂F in Pa); all quantities are in the
//! reference (material) frame of F; 9×9 derivatives use the column-major vec convention of
//! [`Mat9`] (`H[(i + 3j, k + 3l)] = ∂P_ij/∂F_kl`).

mod corotational;
mod corotational_polar;
mod corotational_sofa;
mod lame;
mod low_rank_tangent;
mod material_point;
mod neo_hookean;
mod polar_newton;
mod stvk;
mod svd3;
mod tensor;
#[cfg(test)]
pub(crate) mod testing;

pub use corotational::CorotationalPoint;
pub use corotational_polar::CorotationalPolarPoint;
pub use corotational_sofa::{CorotationalSofaPoint, SofaRestFrame};
pub use lame::{Lame, LameDerivatives};
pub use low_rank_tangent::LowRankTangent;
use material_point::LawPoint;
pub use material_point::MaterialPoint;
pub use neo_hookean::NeoHookeanPoint;
pub use polar_newton::WarmRotation;
pub use stvk::StVKPoint;
pub use tensor::{Mat9, contract, frobenius};

use crate::math::Mat3;
use crate::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// A constitutive law (scene key `law`): `"corotational"` (the default of the scenes),
/// `"corotational_sofa"`, `"stvk"` or `"neo_hookean"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize, serde::Serialize)]
pub enum Law {
    /// Energy-consistent co-rotational elasticity, Ψ = μ‖F − R‖²_F + (λ/2) tr(RᵀF − I)².
    #[serde(rename = "corotational")]
    Corotational,
    /// Saint-Venant-Kirchhoff, Ψ = μ E:E + (λ/2) tr(E)², E = (FᵀF − I)/2.
    #[serde(rename = "stvk")]
    StVK,
    /// Compressible Neo-Hookean, Ψ = (μ/2)(tr FᵀF − 3) − μ ln J + (λ/2)(ln J)².
    #[serde(rename = "neo_hookean")]
    NeoHookean,
    /// SOFA's `TetrahedronFEMForceField` (`polar`/`svd`): R = Q_s Q_mᵀ from the polar factors
    /// of the current and rest edge matrices (edges from the element's first node, not
    /// polar(F)), ε = sym(RᵀF) − I, P = R(2μ ε + λ tr(ε) I), stiffness R K₀ Rᵀ with R held
    /// fixed. Depends on the node order, its exact tangent is not symmetric (not
    /// implemented: no derivatives), small net torque per element ([`CorotationalSofaPoint`]).
    #[serde(rename = "corotational_sofa")]
    CorotationalSofa,
}

impl Law {
    /// Every law, in declaration order.
    pub const ALL: [Law; 4] = [
        Law::Corotational,
        Law::StVK,
        Law::NeoHookean,
        Law::CorotationalSofa,
    ];

    /// The scene-file name of the law.
    pub fn name(self) -> &'static str {
        match self {
            Law::Corotational => "corotational",
            Law::StVK => "stvk",
            Law::NeoHookean => "neo_hookean",
            Law::CorotationalSofa => "corotational_sofa",
        }
    }

    /// Whether the law's stiffness is the exact, symmetric Hessian of an energy with its second
    /// directional derivatives implemented (what the derivative layer needs): all but
    /// `corotational_sofa`.
    pub fn has_exact_tangent(self) -> bool {
        !matches!(self, Law::CorotationalSofa)
    }

    /// The one-line reason derivatives refuse a law without exact tangent.
    pub fn no_exact_tangent(self) -> String {
        format!(
            "law {self} has no exact tangent; derivatives need corotational, stvk or neo_hookean"
        )
    }
}

impl fmt::Display for Law {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Law {
    type Err = Error;
    /// Parses a scene-file name; an unknown name is an [`Error::Invalid`] naming it.
    fn from_str(s: &str) -> Result<Law> {
        match s {
            "corotational" => Ok(Law::Corotational),
            "stvk" => Ok(Law::StVK),
            "neo_hookean" => Ok(Law::NeoHookean),
            "corotational_sofa" => Ok(Law::CorotationalSofa),
            other => Err(Error::invalid(
                "law",
                format!(
                    "unknown law `{other}` (expected corotational, stvk, neo_hookean or corotational_sofa)"
                ),
            )),
        }
    }
}

/// Why a law cannot be evaluated at a deformation gradient: a numerical outcome of the
/// current configuration, not an input error. The FEM layer turns it into an error (or a
/// status) that names the element with [`DeformationError::at_element`].
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum DeformationError {
    /// F has a NaN or infinite entry.
    #[error("deformation gradient is not finite")]
    NonFinite,
    /// det F = J ≤ 0 where the law needs J > 0 (Neo-Hookean; ln J is undefined). Not clamped.
    #[error("inverted element: det F = {j} ≤ 0 (the neo-Hookean law needs det F > 0)")]
    Inverted {
        /// det F.
        j: f64,
    },
    /// The 3×3 SVD (co-rotational) did not converge or overflowed (entries of F beyond ~1e150).
    #[error("the SVD of the deformation gradient did not converge")]
    SvdNotConverged,
}

impl DeformationError {
    /// An [`Error::Invalid`] naming `tetrahedron {element}` (0-based index of the element).
    pub fn at_element(self, element: usize) -> Error {
        Error::invalid(format!("tetrahedron {element}"), self.to_string())
    }
}

/// The state of one law at one deformation gradient, and its outputs for any Lamé pair.
///
/// All outputs are linear in `lame`. Directions `df`, `df1`, `df2` are 3×3 variations of F.
pub trait HyperelasticPoint: Copy {
    /// Precomputes the law's state at the deformation gradient `f` (dimensionless).
    fn at(f: &Mat3) -> Result<Self, DeformationError>;
    /// Strain energy density Ψ(F) (J/m³ = Pa).
    fn energy_density(&self, lame: &Lame) -> f64;
    /// First Piola-Kirchhoff stress P = ∂Ψ/∂F (Pa).
    fn stress(&self, lame: &Lame) -> Mat3;
    /// ∂P/∂F (Pa) as a 9×9 matrix in the column-major convention of [`Mat9`]; the Hessian of
    /// Ψ, hence symmetric.
    fn tangent(&self, lame: &Lame) -> Mat9;
    /// `(P, ∂P/∂F)` together (the per-element force and stiffness hot path).
    fn stress_and_tangent(&self, lame: &Lame) -> (Mat3, Mat9) {
        (self.stress(lame), self.tangent(lame))
    }
    /// The action ∂P/∂F : dF (Pa), the directional derivative of P in the direction `df`.
    fn tangent_action(&self, lame: &Lame, df: &Mat3) -> Mat3;
    /// [`Self::tangent_action`] for two Lamé pairs at once (Pa), e.g. a parameter's
    /// derivative and the material's own: laws that share work between them (the
    /// co-rotational dR) override it; the same bits as two calls.
    fn tangent_actions(&self, lames: [&Lame; 2], df: &Mat3) -> [Mat3; 2] {
        lames.map(|lame| self.tangent_action(lame, df))
    }
    /// The tangent's bilinear form dF₁ : (∂P/∂F) : dF₂ (Pa), symmetric in its two
    /// directions since ∂P/∂F is the Hessian of Ψ: what a parameter's cotangent through
    /// `∂(K V)/∂p` needs per element (`fem::stiffness_derivative`), one number instead of the
    /// 3×3 action.
    fn tangent_form(&self, lame: &Lame, df1: &Mat3, df2: &Mat3) -> f64 {
        tensor::frobenius(&self.tangent_action(lame, df1), df2)
    }
    /// The second directional derivative d²P[dF₁, dF₂] = ∂(∂P/∂F : dF₁)/∂F : dF₂ (Pa),
    /// symmetric in its two directions: what ∂(K·V)/∂x needs (paper 004, Sec. III-C).
    fn tangent_derivative(&self, lame: &Lame, df1: &Mat3, df2: &Mat3) -> Mat3;
    /// The 9×9 matrix ∂(∂P/∂F : dF₁)/∂F (Pa), column `k + 3l` = d²P[dF₁, e_k e_lᵀ]: the
    /// material block of the per-element matrix ∂(K·V)/∂x (paper 004, Sec. III-C), in the
    /// convention of [`Mat9`]. Nine directional derivatives.
    fn tangent_derivative_matrix(&self, lame: &Lame, df1: &Mat3) -> Mat9 {
        let mut out = Mat9::zeros();
        for b in 0..9 {
            let mut e = Mat3::zeros();
            e[b] = 1.0;
            let column = self.tangent_derivative(lame, df1, &e);
            out.column_mut(b).copy_from_slice(column.as_slice());
        }
        out
    }
    /// A reverse sweep's per-element terms in one call: `(∂P/∂F : dF₂, d²P[dF₁, dF₂])` (Pa)
    /// with `lame`, and, for each Lamé pair of `forms` (a parameter's derivative, e.g.
    /// ∂(μ, λ)/∂E), the form dF₁ : (∂P/∂F) : dF₂ with that pair into `out` (same length).
    /// The default evaluates them one by one; a law whose terms share work (the co-rotational
    /// law's singular frames) computes them together (`fem::stiffness_derivative`).
    fn reverse_terms(
        &self,
        lame: &Lame,
        df1: &Mat3,
        df2: &Mat3,
        forms: &[Lame],
        out: &mut [f64],
    ) -> (Mat3, Mat3) {
        assert_eq!(forms.len(), out.len(), "reverse_terms: one output per form");
        for (o, pair) in out.iter_mut().zip(forms) {
            *o = self.tangent_form(pair, df1, df2);
        }
        (
            self.tangent_action(lame, df2),
            self.tangent_derivative(lame, df1, df2),
        )
    }
}

/// An isotropic material: its law and engineering parameters, with the derived Lamé
/// parameters and their derivatives. Build with [`Material::new`] (validates).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Material {
    law: Law,
    young_modulus: f64,
    poisson_ratio: f64,
    lame: Lame,
    lame_derivatives: LameDerivatives,
}

impl Material {
    /// A material of law `law`, Young's modulus `young_modulus` (E, Pa) and Poisson's ratio
    /// `poisson_ratio` (ν). Errors naming the parameter unless E > 0 finite and −1 < ν < 0.5.
    pub fn new(law: Law, young_modulus: f64, poisson_ratio: f64) -> Result<Material> {
        Ok(Material {
            law,
            young_modulus,
            poisson_ratio,
            lame: Lame::from_young_poisson(young_modulus, poisson_ratio)?,
            lame_derivatives: Lame::derivatives(young_modulus, poisson_ratio)?,
        })
    }

    /// The constitutive law.
    pub fn law(&self) -> Law {
        self.law
    }

    /// Young's modulus E (Pa).
    pub fn young_modulus(&self) -> f64 {
        self.young_modulus
    }

    /// Poisson's ratio ν.
    pub fn poisson_ratio(&self) -> f64 {
        self.poisson_ratio
    }

    /// The Lamé parameters (μ, λ) (Pa).
    pub fn lame(&self) -> Lame {
        self.lame
    }

    /// (∂μ/∂E, ∂λ/∂E) and (∂μ/∂ν, ∂λ/∂ν).
    pub fn lame_derivatives(&self) -> LameDerivatives {
        self.lame_derivatives
    }

    /// The law evaluated at the deformation gradient `f`, with this material's (μ, λ).
    /// Errors: [`DeformationError::NonFinite`] for a NaN/∞ entry,
    /// [`DeformationError::Inverted`] for det F ≤ 0 under the Neo-Hookean law.
    /// For `corotational_sofa`, whose rotation depends on the element's rest edges, this is
    /// the element of orthonormal rest edges ([`SofaRestFrame::identity`]); elements are
    /// evaluated with [`Material::at_in_frame`].
    pub fn at(&self, f: &Mat3) -> Result<MaterialPoint, DeformationError> {
        self.at_in_frame(f, &SofaRestFrame::identity())
    }

    /// [`Material::at`] for an element of rest frame `frame`, which only `corotational_sofa`
    /// reads (the other laws are functions of F alone).
    pub fn at_in_frame(
        &self,
        f: &Mat3,
        frame: &SofaRestFrame,
    ) -> Result<MaterialPoint, DeformationError> {
        let state = match self.law {
            Law::Corotational => LawPoint::Corotational(CorotationalPoint::at(f)?),
            Law::StVK => LawPoint::StVK(StVKPoint::at(f)?),
            Law::NeoHookean => LawPoint::NeoHookean(NeoHookeanPoint::at(f)?),
            Law::CorotationalSofa => {
                LawPoint::CorotationalSofa(CorotationalSofaPoint::in_frame(f, frame)?)
            }
        };
        Ok(MaterialPoint {
            state,
            lame: self.lame,
        })
    }

    /// [`Material::at`] of `N` deformation gradients at once, handed to `each(k, point)` for
    /// k = 0, 1, … (by reference: a point is up to 0.6 kB), each point bit for bit the one of
    /// [`Material::at`] alone. Faster for the co-rotational law, whose SVDs then run side by
    /// side (see `Svd3::new_lanes`); the other laws evaluate one after the other
    /// (`corotational_sofa` in the identity frame, as [`Material::at`]: elements use
    /// [`Material::at_in_frame`]).
    pub(crate) fn at_lanes<const N: usize>(
        &self,
        fs: [&Mat3; N],
        mut each: impl FnMut(usize, Result<&MaterialPoint, DeformationError>),
    ) {
        let lame = self.lame;
        match self.law {
            Law::Corotational => CorotationalPoint::at_lanes(
                fs,
                |p| MaterialPoint {
                    state: LawPoint::Corotational(p),
                    lame,
                },
                each,
            ),
            _ => {
                for (k, f) in fs.iter().enumerate() {
                    each(k, self.at(f).as_ref().map_err(|e| *e));
                }
            }
        }
    }

    /// [`Material::at_lanes`] for a time step's elements, which keep their rotation between
    /// evaluations in `warm` (one per lane; lanes past its end are padding). Under the
    /// co-rotational law a lane with a kept rotation is evaluated from the polar decomposition
    /// that Newton's method finds from it ([`CorotationalPolarPoint`], a few dozen flops where
    /// the SVD costs several hundred); a lane without one, or where Newton gives up (an
    /// element near flat or inside out, or a start too far off), by SVD. Either way the lane's
    /// rotation is kept for next time. The points are the co-rotational law's to round-off
    /// (not bit for bit: the last digits depend on the start). Other laws: as
    /// [`Material::at_lanes`], `warm` untouched.
    pub(crate) fn at_lanes_warm<const N: usize>(
        &self,
        fs: [&Mat3; N],
        warm: &mut [WarmRotation],
        mut each: impl FnMut(usize, Result<&MaterialPoint, DeformationError>),
    ) {
        if self.law != Law::Corotational {
            return self.at_lanes(fs, each);
        }
        let lame = self.lame;
        for (k, f) in fs.into_iter().enumerate() {
            let found = match warm.get(k) {
                Some(w) if check_finite(f).is_ok() => polar_newton::polar_from(f, w),
                _ => None,
            };
            // Each point is built where `each` reads it: moving a point (about 0.4 kB) through
            // temporaries costs a copy each time.
            let state = match found {
                Some((polar, next)) => {
                    if let Some(w) = warm.get_mut(k) {
                        *w = next;
                    }
                    CorotationalPolarPoint::from_polar(f, &polar)
                }
                None => match CorotationalPolarPoint::at(f) {
                    Ok(p) => {
                        if let Some(w) = warm.get_mut(k) {
                            *w = WarmRotation::from_matrix(&p.rotation());
                        }
                        p
                    }
                    Err(err) => {
                        each(k, Err(err));
                        continue;
                    }
                },
            };
            let point = MaterialPoint {
                state: LawPoint::CorotationalPolar(state),
                lame,
            };
            each(k, Ok(&point));
        }
    }

    /// The point whose outputs are the derivatives with respect to E of `point`'s outputs
    /// (`point` must come from [`Material::at`] of this material): since every output is
    /// linear in (μ, λ), ∂X/∂E = X evaluated at (∂μ/∂E, ∂λ/∂E). For example
    /// `m.d_young_modulus(&p).stress()` is ∂P/∂E and `.tangent_action(dF)` is
    /// ∂(∂P/∂F : dF)/∂E.
    pub fn d_young_modulus(&self, point: &MaterialPoint) -> MaterialPoint {
        point.with_lame(self.lame_derivatives.young_modulus)
    }

    /// As [`Material::d_young_modulus`], for the derivatives with respect to ν.
    pub fn d_poisson_ratio(&self, point: &MaterialPoint) -> MaterialPoint {
        point.with_lame(self.lame_derivatives.poisson_ratio)
    }
}

/// All entries of `f` finite, else [`DeformationError::NonFinite`].
fn check_finite(f: &Mat3) -> Result<(), DeformationError> {
    if f.iter().all(|x| x.is_finite()) {
        Ok(())
    } else {
        Err(DeformationError::NonFinite)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn laws_parse_from_their_scene_names_and_unknown_names_are_reported() {
        for law in Law::ALL {
            let json = format!("\"{}\"", law.name());
            assert_eq!(serde_json::from_str::<Law>(&json).unwrap(), law);
            assert_eq!(law.name().parse::<Law>().unwrap(), law);
        }
        let err = serde_json::from_str::<Law>("\"mooney_rivlin\"").unwrap_err();
        assert!(err.to_string().contains("mooney_rivlin"), "{err}");
        #[derive(serde::Deserialize)]
        struct Body {
            #[allow(dead_code)]
            law: Law,
        }
        let err = toml::from_str::<Body>("law = \"StVK\"").err().unwrap();
        assert!(err.to_string().contains("StVK"), "{err}");
        let err = "hooke".parse::<Law>().unwrap_err();
        assert!(err.to_string().contains("hooke"), "{err}");
    }

    #[test]
    fn material_validates_and_names_the_parameter() {
        let bad_e = Material::new(Law::NeoHookean, -3.0, 0.3).unwrap_err();
        assert!(matches!(bad_e, Error::Invalid { ref what, .. } if what == "young_modulus"));
        let bad_nu = Material::new(Law::StVK, 1e5, 0.5).unwrap_err();
        assert!(matches!(bad_nu, Error::Invalid { ref what, .. } if what == "poisson_ratio"));
    }

    #[test]
    fn deformation_errors_name_the_element() {
        let m = Material::new(Law::NeoHookean, 1e5, 0.3).unwrap();
        let f = Mat3::from_diagonal(&crate::math::Vec3::new(1.0, 1.0, -0.5));
        let err = m.at(&f).unwrap_err();
        assert_eq!(err, DeformationError::Inverted { j: -0.5 });
        let e = err.at_element(17);
        assert!(matches!(e, Error::Invalid { ref what, .. } if what == "tetrahedron 17"));
        assert!(e.to_string().contains("-0.5"), "{e}");
        let mut nan = Mat3::identity();
        nan[(1, 2)] = f64::NAN;
        for law in [Law::Corotational, Law::StVK, Law::NeoHookean] {
            let m = Material::new(law, 1e5, 0.3).unwrap();
            assert_eq!(m.at(&nan).unwrap_err(), DeformationError::NonFinite);
        }
    }
}
