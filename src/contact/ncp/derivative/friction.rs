//! The derivative of the NCP's solution λ with respect to the friction coefficients μ_i.
//!
//! A sticking contact lies inside its cone and a breaking one carries no force, so to first
//! order μ moves only the sliding contacts. Differentiating the sliding friction law
//! `λ_T = −μ λ_N u` (u = σ_T/‖σ_T‖) gives `uᵀdλ_T + μ dλ_N = −λ_N dμ`, while the other
//! mode equations (dσ_N = 0 and the u⊥ row) do not contain μ. So
//!
//! ```text
//! dλ_i = R x_i + p_i,    p_i = −λ_N (u, μ)/(1 + μ²) dμ_i
//! ```
//!
//! (p_i the particular solution normal to the cone's tangent plane, `R = [r₁, r₂]` as in the
//! module doc) and the reduced system keeps its matrix with the perturbation `dq = G p` on
//! its right-hand side: `dλ = L (G p) + p`. In reverse, with `q̄ = Lᵀ λ̄`, the cotangent of
//! μ_i is `s_iᵀ (λ̄ + G q̄)_i`, s_i = p_i / dμ_i (G is symmetric).

use crate::math::{DMat, Vec3};

use super::reduced_system::Block;
use super::{NcpDerivative, block3};

impl NcpDerivative {
    /// ∂λ_i/∂μ_i at fixed modes for contact i (N per unit μ, contact frame): zero unless
    /// contact i is differentiated as sliding, where the solution moves along the cone.
    pub fn friction_shift(&self, i: usize) -> Vec3 {
        match self.reduced.blocks[i] {
            Block::Sliding { shift, .. } => shift,
            _ => Vec3::zeros(),
        }
    }

    /// Forward mode for a change `dmu` of the friction coefficients (one per contact):
    /// `dlambda = L (G p) + p` (3n, N), `delassus` the NCP's G (3n×3n, (m/s)/N). Panics on
    /// wrong lengths.
    pub fn friction_tangent(&self, delassus: &DMat, dmu: &[f64], dlambda: &mut [f64]) {
        let n = self.contact_count();
        assert!(
            dmu.len() == n && dlambda.len() == 3 * n && delassus.nrows() == 3 * n,
            "NcpDerivative::friction_tangent: lengths"
        );
        let mut p = vec![0.0; 3 * n];
        for (i, d) in dmu.iter().enumerate() {
            let s = self.friction_shift(i) * *d;
            p[3 * i..3 * i + 3].copy_from_slice(s.as_slice());
        }
        let gp = delassus * crate::math::DVec::from_column_slice(&p);
        self.tangent(gp.as_slice(), dlambda);
        for (l, q) in dlambda.iter_mut().zip(&p) {
            *l += q;
        }
    }

    /// Reverse mode: the cotangent of each friction coefficient (one per contact) for the
    /// cotangent `lambda_bar` of λ, given `q_bar` = [`NcpDerivative::cotangent`] of it:
    /// `μ̄_i = s_iᵀ (λ̄ + G q̄)_i`. Panics on wrong lengths.
    pub fn friction_cotangent(
        &self,
        delassus: &DMat,
        lambda_bar: &[f64],
        q_bar: &[f64],
    ) -> Vec<f64> {
        let n = self.contact_count();
        assert!(
            lambda_bar.len() == 3 * n && q_bar.len() == 3 * n && delassus.nrows() == 3 * n,
            "NcpDerivative::friction_cotangent: lengths"
        );
        let gq = delassus * crate::math::DVec::from_column_slice(q_bar);
        (0..n)
            .map(|i| {
                let s = self.friction_shift(i);
                if s == Vec3::zeros() {
                    0.0
                } else {
                    s.dot(&(block3(lambda_bar, i) + block3(gq.as_slice(), i)))
                }
            })
            .collect()
    }
}
