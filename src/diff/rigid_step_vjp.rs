//! The reverse sweep of one rigid step: the transpose of the chain of `diff::rigid_step`
//! (paper 002 Eq. 3 and Appendix D), through the NCP's own cotangent
//! (`contact::NcpDerivative::cotangent`), so that a complementarity-aware boundary (paper 003
//! §IV-D, `contact::BoundaryGradient`) picks each tied contact's side for the loss at hand.
//! For output cotangents (q̄⁺, v̄⁺) and the inputs z = [dq; dv; dτ; dp]:
//!
//! ```text
//! ṽ = v̄⁺ + J_vᵀ q̄⁺                           (dq⁺ = J_q dq + J_v dv⁺)
//! λ̄ = (h M⁻¹ Jᵀ)ᵀ ṽ,   σ̄ = Lᵀ λ̄                (dv⁺ = dv⁺|_λ + h M⁻¹ Jᵀ dλ, dλ = L dσ|_λ + ∂λ/∂p dp)
//! z̄ = (∂v⁺|_λ/∂z)ᵀ ṽ + (∂σ|_λ/∂z)ᵀ σ̄,   p̄ = z̄_p + (∂λ/∂p)ᵀ λ̄
//! τ̄ = z̄_τ,   q̄ = z̄_q + J_qᵀ q̄⁺ + ∂τ/∂q ∘ τ̄,   v̄ = z̄_v + ∂τ/∂v ∘ τ̄
//! ```

use crate::contact::CotangentSide;
use crate::math::DVec;

use super::rigid_step::RigidStepParts;

/// The input cotangents of one rigid step (n each, P for the parameters).
pub(crate) struct RigidStepCotangent {
    /// q̄ (tangent spaces).
    pub(crate) q: DVec,
    /// v̄.
    pub(crate) v: DVec,
    /// τ̄ of the applied input.
    pub(crate) tau: DVec,
    /// p̄ of the parameters the step was differentiated for.
    pub(crate) parameters: DVec,
    /// Which side the NCP's cotangent took.
    pub(crate) side: CotangentSide,
}

impl RigidStepParts {
    /// The input cotangents for the output cotangents `q_bar`, `v_bar` (n each; module doc).
    pub(crate) fn vjp(&self, q_bar: &DVec, v_bar: &DVec) -> RigidStepCotangent {
        let n = self.n();
        let v_total = v_bar + self.jv.tr_mul(q_bar);
        let mut z = self.dvl.tr_mul(&v_total);
        let mut parameters = DVec::zeros(self.dlambda_dp.ncols());
        let mut side = CotangentSide::Classified;
        if let Some(ncp) = self.ncp() {
            let lambda_bar = self.response.tr_mul(&v_total);
            let mut sigma_bar = DVec::zeros(lambda_bar.len());
            side = ncp.cotangent(lambda_bar.as_slice(), sigma_bar.as_mut_slice());
            z += self.dsigma.tr_mul(&sigma_bar);
            parameters += self.dlambda_dp.tr_mul(&lambda_bar);
        }
        parameters += z.rows(3 * n, parameters.len());
        let tau: DVec = z.rows(2 * n, n).into_owned();
        let mut q: DVec = z.rows(0, n) + self.jq.tr_mul(q_bar);
        let mut v: DVec = z.rows(n, n).into_owned();
        for k in 0..n {
            q[k] += self.dtau_dq[k] * tau[k];
            v[k] += self.dtau_dv[k] * tau[k];
        }
        RigidStepCotangent {
            q,
            v,
            tau,
            parameters,
            side,
        }
    }
}
