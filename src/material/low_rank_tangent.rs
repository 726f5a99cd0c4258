//! A tangent ∂P/∂F with the structure `a I₉ + Σₖ αₖ vec(Qₖ) vec(Qₖ)ᵀ`: a multiple of the
//! identity plus four symmetric rank-one terms. The co-rotational law's exact tangent has this
//! form (`a = 2μ`, Q₀ = R with α₀ = λ, and the three rotation generators qᵢⱼ with weights
//! 2(λ(tr S − 3) − 2μ)/(σᵢ + σⱼ)), which lets an element build its 12×12 stiffness block from
//! four 12-vectors (`fem::Tetrahedron::stiffness_low_rank`) without forming the 9×9 matrix.

use super::tensor::Mat9;
use crate::math::Mat3;

/// ∂P/∂F = `identity` I₉ + Σₖ `weights[k]` vec(`directions[k]`) vec(`directions[k]`)ᵀ (Pa), in
/// the column-major vec convention of [`Mat9`] (`vec(Q)[i + 3j] = Q[(i, j)]`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LowRankTangent {
    /// The coefficient a of I₉ (Pa).
    pub identity: f64,
    /// The weights αₖ of the rank-one terms (Pa).
    pub weights: [f64; 4],
    /// The directions Qₖ (dimensionless).
    pub directions: [Mat3; 4],
}

impl LowRankTangent {
    /// The 9×9 matrix this tangent stands for (a second way to the same numbers, for tests and
    /// for code that wants the dense form).
    pub fn to_dense(&self) -> Mat9 {
        let mut h = Mat9::identity() * self.identity;
        for (alpha, q) in self.weights.iter().zip(&self.directions) {
            let v = q.as_slice();
            for b in 0..9 {
                for a in 0..9 {
                    h[(a, b)] += alpha * v[a] * v[b];
                }
            }
        }
        h
    }
}
