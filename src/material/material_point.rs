//! A material evaluated at one deformation gradient ([`MaterialPoint`]): the law's state,
//! built once per element and step by [`super::Material`], and the Lamé pair its outputs are
//! weighted with; every output dispatches to the law's [`HyperelasticPoint`].

use super::{
    CorotationalPoint, CorotationalPolarPoint, CorotationalSofaPoint, HyperelasticPoint, Lame,
    LowRankTangent, Mat9, NeoHookeanPoint, StVKPoint,
};
use crate::math::Mat3;

/// The per-law state at one deformation gradient (closed set: dispatch by `match`).
/// The co-rotational state (SVD factors, R, rotation generators) is larger than the others;
/// boxing it would allocate per element in the assembly loop, so the size gap is accepted.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy)]
pub(super) enum LawPoint {
    Corotational(CorotationalPoint),
    /// The co-rotational law from a polar decomposition (a step's elements, warm-started).
    CorotationalPolar(CorotationalPolarPoint),
    StVK(StVKPoint),
    NeoHookean(NeoHookeanPoint),
    CorotationalSofa(CorotationalSofaPoint),
}

/// A material evaluated at one deformation gradient: the law's state plus the Lamé pair
/// its outputs are weighted with. Outputs are in SI units, in the reference frame of F.
#[derive(Debug, Clone, Copy)]
pub struct MaterialPoint {
    pub(super) state: LawPoint,
    pub(super) lame: Lame,
}

macro_rules! dispatch {
    ($self:ident, $p:ident => $e:expr) => {
        match &$self.state {
            LawPoint::Corotational($p) => $e,
            LawPoint::CorotationalPolar($p) => $e,
            LawPoint::StVK($p) => $e,
            LawPoint::NeoHookean($p) => $e,
            LawPoint::CorotationalSofa($p) => $e,
        }
    };
}

impl MaterialPoint {
    /// The Lamé pair the outputs are weighted with.
    #[inline]
    pub fn lame(&self) -> Lame {
        self.lame
    }

    /// The same state weighted with another Lamé pair: [`Lame::UNIT_MU`] /
    /// [`Lame::UNIT_LAMBDA`] give the basis terms, a [`super::LameDerivatives`] field gives the
    /// parameter derivative.
    #[inline]
    pub fn with_lame(&self, lame: Lame) -> MaterialPoint {
        MaterialPoint {
            state: self.state,
            lame,
        }
    }

    /// Strain energy density Ψ(F) (J/m³).
    #[inline]
    pub fn energy_density(&self) -> f64 {
        let lame = &self.lame;
        dispatch!(self, p => p.energy_density(lame))
    }

    /// First Piola-Kirchhoff stress P(F) = ∂Ψ/∂F (Pa).
    #[inline]
    pub fn stress(&self) -> Mat3 {
        self.stress_with(&self.lame)
    }

    /// [`Self::stress`] weighted with another Lamé pair, as [`Self::with_lame`] would give
    /// without copying the state (a co-rotational point is about 0.6 kB): with a
    /// [`super::LameDerivatives`] field, ∂P/∂E or ∂P/∂ν (Pa per unit of the parameter).
    #[inline]
    pub fn stress_with(&self, lame: &Lame) -> Mat3 {
        dispatch!(self, p => p.stress(lame))
    }

    /// ∂P/∂F (Pa), 9×9 in the column-major convention of [`Mat9`].
    #[inline]
    pub fn tangent(&self) -> Mat9 {
        let lame = &self.lame;
        dispatch!(self, p => p.tangent(lame))
    }

    /// `(P, ∂P/∂F)` together.
    #[inline]
    pub fn stress_and_tangent(&self) -> (Mat3, Mat9) {
        let lame = &self.lame;
        dispatch!(self, p => p.stress_and_tangent(lame))
    }

    /// ∂P/∂F (Pa) as `a I₉ + Σₖ αₖ vec(Qₖ) vec(Qₖ)ᵀ` when the law's tangent has that structure
    /// (the co-rotational law), else `None`: what lets an element build its stiffness block
    /// without the 9×9 matrix (`fem::Tetrahedron::stiffness_low_rank`).
    #[inline]
    pub fn low_rank_tangent(&self) -> Option<LowRankTangent> {
        match &self.state {
            LawPoint::Corotational(p) => Some(p.low_rank_tangent(&self.lame)),
            LawPoint::CorotationalPolar(p) => Some(p.low_rank_tangent(&self.lame)),
            _ => None,
        }
    }

    /// ∂P/∂F : dF (Pa).
    #[inline]
    pub fn tangent_action(&self, df: &Mat3) -> Mat3 {
        self.tangent_action_with(&self.lame, df)
    }

    /// [`Self::tangent_action`] weighted with another Lamé pair (see [`Self::stress_with`]).
    #[inline]
    pub fn tangent_action_with(&self, lame: &Lame, df: &Mat3) -> Mat3 {
        dispatch!(self, p => p.tangent_action(lame, df))
    }

    /// [`Self::tangent_action_with`] for two Lamé pairs at once
    /// ([`HyperelasticPoint::tangent_actions`]).
    #[inline]
    pub fn tangent_actions_with(&self, lames: [&Lame; 2], df: &Mat3) -> [Mat3; 2] {
        dispatch!(self, p => p.tangent_actions(lames, df))
    }

    /// dF₁ : (∂P/∂F) : dF₂ (Pa), symmetric ([`HyperelasticPoint::tangent_form`]).
    #[inline]
    pub fn tangent_form(&self, df1: &Mat3, df2: &Mat3) -> f64 {
        self.tangent_form_with(&self.lame, df1, df2)
    }

    /// [`Self::tangent_form`] weighted with another Lamé pair (see [`Self::stress_with`]).
    #[inline]
    pub fn tangent_form_with(&self, lame: &Lame, df1: &Mat3, df2: &Mat3) -> f64 {
        dispatch!(self, p => p.tangent_form(lame, df1, df2))
    }

    /// d²P[dF₁, dF₂] = ∂(∂P/∂F : dF₁)/∂F : dF₂ (Pa).
    #[inline]
    pub fn tangent_derivative(&self, df1: &Mat3, df2: &Mat3) -> Mat3 {
        let lame = &self.lame;
        dispatch!(self, p => p.tangent_derivative(lame, df1, df2))
    }

    /// ∂(∂P/∂F : dF₁)/∂F (Pa) as a 9×9 matrix ([`HyperelasticPoint::tangent_derivative_matrix`]).
    #[inline]
    pub fn tangent_derivative_matrix(&self, df1: &Mat3) -> Mat9 {
        let lame = &self.lame;
        dispatch!(self, p => p.tangent_derivative_matrix(lame, df1))
    }

    /// `(∂P/∂F : dF₂, d²P[dF₁, dF₂])` (Pa), and dF₁ : (∂P/∂F) : dF₂ weighted with each Lamé
    /// pair of `forms` into `out` ([`HyperelasticPoint::reverse_terms`]).
    #[inline]
    pub fn reverse_terms(
        &self,
        df1: &Mat3,
        df2: &Mat3,
        forms: &[Lame],
        out: &mut [f64],
    ) -> (Mat3, Mat3) {
        let lame = &self.lame;
        dispatch!(self, p => p.reverse_terms(lame, df1, df2, forms, out))
    }
}
