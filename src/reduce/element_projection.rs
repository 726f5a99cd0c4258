//! One tetrahedron of a reduced model: its deformation gradient as an affine function of the
//! reduced coordinates, F = F̄ + Σⱼ qⱼ Dⱼ (F̄ = I + Σₙ ū_n gₙᵀ, Dⱼ = Σₙ V_n[·, j] gₙᵀ, constant
//! since F is linear in x = X + ū + Vq), and its generalised force and stiffness, Vₑᵀfₑ = −V Dᵀ vec(P) and
//! VₑᵀKₑVₑ = V Dᵀ (∂P/∂F) D (paper 004 Eq. 3 projected; Goury & Duriez 2018 Eq. 9).

use crate::error::Result;
use crate::fem::{SoftBody, negative_part};
use crate::math::{DMat, DVec, Mat3};

use super::nodal_basis::NodalBasis;

/// One column vec(Dⱼ) of D (vec column-major: entry a + 3l is F[(a, l)]).
pub type Column9 = nalgebra::SVector<f64, 9>;

/// D of one element: vec(Dⱼ) per mode j.
#[derive(Debug, Clone)]
pub struct ElementProjection {
    /// The element's index in the body.
    pub element: usize,
    /// F̄, the deformation gradient at q = 0.
    pub f0: Mat3,
    /// vec(∂F/∂qⱼ) per mode (1 per unit mode).
    pub d: Vec<Column9>,
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
    td: Vec<Column9>,
}

impl ReducedTerms {
    /// Zero terms of a basis of `modes` modes.
    pub fn new(modes: usize) -> ReducedTerms {
        ReducedTerms {
            force: DVec::zeros(modes),
            stiffness: DMat::zeros(modes, modes),
            td: vec![Column9::zeros(); modes],
        }
    }

    /// Sets both terms to zero.
    pub fn clear(&mut self) {
        self.force.fill(0.0);
        self.stiffness.fill(0.0);
    }

    /// Copies K̂'s upper triangle (the only one [`ElementProjection::add_to`] fills) onto its
    /// lower one.
    pub fn mirror_stiffness(&mut self) {
        let k = self.stiffness.nrows();
        for j in 0..k {
            for i in 0..j {
                self.stiffness[(j, i)] = self.stiffness[(i, j)];
            }
        }
    }
}

impl ElementProjection {
    /// D of element `e` of `body` for the basis `basis`.
    pub fn new(body: &SoftBody, basis: &NodalBasis, e: usize) -> ElementProjection {
        let tet = &body.elements()[e];
        let k = basis.modes();
        let mut d = vec![Column9::zeros(); k];
        let mut f0 = Mat3::identity();
        for (n, g) in tet.nodes.iter().zip(&tet.gradients) {
            f0 += basis.offset(*n) * g.transpose();
            for a in 0..3 {
                let row = basis.row(*n, a);
                for l in 0..3 {
                    for (dj, v) in d.iter_mut().zip(row) {
                        dj[a + 3 * l] += v * g[l];
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
        let mut v = Column9::from_column_slice(self.f0.as_slice());
        for (dj, qj) in self.d.iter().zip(q) {
            v.axpy(*qj, dj, 1.0);
        }
        Mat3::from_column_slice(v.as_slice())
    }

    /// Adds `weight` times the element's generalised force −V Dᵀ vec(P) (N per unit mode)
    /// and, unless `tangent` is [`Tangent::Skip`], its stiffness V Dᵀ T D (upper triangle
    /// only: [`ReducedTerms::mirror_stiffness`]) at `q` into `terms`. Errors: the law cannot be evaluated at F (an inverted element), naming the
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
        for (td, d) in terms.td.iter_mut().zip(&self.d) {
            *td = t * d;
        }
        let k = self.d.len();
        let ks = terms.stiffness.as_mut_slice();
        for (j, td) in terms.td.iter().enumerate() {
            for (i, d) in self.d[..=j].iter().enumerate() {
                ks[j * k + i] += scale * d.dot(td);
            }
        }
        Ok(())
    }
}

/// out += scale · Dᵀ p (p a vec of 9).
#[inline]
fn add_projected(d: &[Column9], p: &[f64], scale: f64, out: &mut [f64]) {
    let p = Column9::from_column_slice(p);
    for (o, dj) in out.iter_mut().zip(d) {
        *o += scale * dj.dot(&p);
    }
}
