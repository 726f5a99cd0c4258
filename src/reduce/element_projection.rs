//! One tetrahedron of a reduced model: its deformation gradient as an affine function of the
//! reduced coordinates, F = F̄ + Σⱼ qⱼ Dⱼ (F̄ = I + Σₙ ū_n gₙᵀ, Dⱼ = Σₙ V_n[·, j] gₙᵀ, constant
//! since F is linear in x = X + ū + Vq), and its generalised force and stiffness, Vₑᵀfₑ = −V Dᵀ vec(P) and
//! VₑᵀKₑVₑ = V Dᵀ (∂P/∂F) D (paper 004 Eq. 3 projected; Goury & Duriez 2018 Eq. 9).

use crate::error::Result;
use crate::fem::{SoftBody, negative_part};
use crate::math::{DMat, DVec, Mat3};

use super::nodal_basis::NodalBasis;

/// D of one element: vec(Dⱼ) in column j (9 × K, vec column-major: row a + 3l is F[(a, l)]).
#[derive(Debug, Clone)]
pub struct ElementProjection {
    /// The element's index in the body.
    pub element: usize,
    /// F̄, the deformation gradient at q = 0.
    pub f0: Mat3,
    /// vec(∂F/∂qⱼ) per mode (1 per unit mode).
    pub d: DMat,
    /// Rest volume (m³).
    pub volume: f64,
}

/// Which stiffness [`ElementProjection::add_to`] adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tangent {
    /// None: the generalised force only.
    Skip,
    /// V Dᵀ T D with the law's T = ∂P/∂F.
    Exact,
    /// With T cut to its positive part first (as the full step's fallback,
    /// `fem::tangent_projection`).
    PositivePart,
}

/// The reduced terms summed over elements: the generalised force f̂ (N per unit mode) and
/// the stiffness K̂ (N/m per unit mode squared), with the scratch of each element's product.
#[derive(Debug, Clone)]
pub struct ReducedTerms {
    /// f̂.
    pub force: DVec,
    /// K̂ (filled when asked).
    pub stiffness: DMat,
    td: DMat,
}

impl ReducedTerms {
    /// Zero terms of a basis of `modes` modes.
    pub fn new(modes: usize) -> ReducedTerms {
        ReducedTerms {
            force: DVec::zeros(modes),
            stiffness: DMat::zeros(modes, modes),
            td: DMat::zeros(9, modes),
        }
    }

    /// Sets both terms to zero.
    pub fn clear(&mut self) {
        self.force.fill(0.0);
        self.stiffness.fill(0.0);
    }
}

impl ElementProjection {
    /// D of element `e` of `body` for the basis `basis`.
    pub fn new(body: &SoftBody, basis: &NodalBasis, e: usize) -> ElementProjection {
        let tet = &body.elements()[e];
        let k = basis.modes();
        let mut d = DMat::zeros(9, k);
        let mut f0 = Mat3::identity();
        for (n, g) in tet.nodes.iter().zip(&tet.gradients) {
            f0 += basis.offset(*n) * g.transpose();
            for a in 0..3 {
                let row = basis.row(*n, a);
                for l in 0..3 {
                    for (j, v) in row.iter().enumerate() {
                        d[(a + 3 * l, j)] += v * g[l];
                    }
                }
            }
        }
        ElementProjection {
            element: e,
            f0,
            d,
            volume: tet.volume,
        }
    }

    /// F = F̄ + Σⱼ qⱼ Dⱼ at reduced coordinates `q`.
    pub fn deformation_gradient(&self, q: &[f64]) -> Mat3 {
        let mut f = self.f0;
        let fs = f.as_mut_slice();
        for (j, qj) in q.iter().enumerate() {
            for (r, fr) in fs.iter_mut().enumerate() {
                *fr += self.d[(r, j)] * qj;
            }
        }
        f
    }

    /// Adds `weight` times the element's generalised force −V Dᵀ vec(P) (N per unit mode)
    /// and, unless `tangent` is [`Tangent::Skip`], its stiffness V Dᵀ T D at `q` into
    /// `terms`. Errors: the law cannot be evaluated at F (an inverted element), naming the
    /// element.
    pub fn add_to(
        &self,
        body: &SoftBody,
        q: &[f64],
        weight: f64,
        tangent: Tangent,
        terms: &mut ReducedTerms,
    ) -> Result<()> {
        let f = self.deformation_gradient(q);
        let point = body
            .material_at(self.element, &f)
            .map_err(|err| err.at_element(self.element))?;
        let scale = weight * self.volume;
        if tangent == Tangent::Skip {
            let p = point.stress();
            add_projected(&self.d, p.as_slice(), -scale, terms.force.as_mut_slice());
            return Ok(());
        }
        let (p, mut t) = point.stress_and_tangent();
        add_projected(&self.d, p.as_slice(), -scale, terms.force.as_mut_slice());
        if tangent == Tangent::PositivePart {
            let (negative, beyond) = negative_part(&t);
            if beyond {
                t -= negative;
            }
        }
        terms.td.gemm(1.0, &t, &self.d, 0.0);
        terms.stiffness.gemm_tr(scale, &self.d, &terms.td, 1.0);
        Ok(())
    }
}

/// out += scale · Dᵀ p (p a vec of 9).
#[inline]
fn add_projected(d: &DMat, p: &[f64], scale: f64, out: &mut [f64]) {
    for (j, o) in out.iter_mut().enumerate() {
        let col = d.column(j);
        let mut s = 0.0;
        for r in 0..9 {
            s += col[r] * p[r];
        }
        *o += scale * s;
    }
}
