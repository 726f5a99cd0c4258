//! Derivatives of the elastic force and of the stiffness action with respect to the
//! material parameters (DESIGN.md §2; the ∂f/∂p and ∂K/∂p · V terms of paper 004 Eq. 10-11):
//! `∂f/∂p` and `∂(K(x) V)/∂p` for p ∈ {E, ν}, both in one parallel pass over elements.
//!
//! Every law's outputs are linear in the Lamé pair (μ, λ), so `∂X/∂p` is X evaluated with
//! the Lamé pair (∂μ/∂p, ∂λ/∂p) ([`crate::material::Material::d_young_modulus`]); per element
//! `∂fₑ/∂p = −V_e (∂P/∂p) gₙ` and `∂(K V)ₑ/∂p = V_e (∂(∂P/∂F : dF_V)/∂p) gₙ`.

use rayon::prelude::*;

use crate::error::Result;
use crate::math::Vec3;

use super::soft_body::SoftBody;
use super::stiffness_derivative::first_failure;

/// A differentiable material parameter of a soft body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MaterialParameter {
    /// Young's modulus E (Pa).
    YoungModulus,
    /// Poisson's ratio ν (dimensionless).
    PoissonRatio,
}

impl MaterialParameter {
    /// Both parameters, in the order of [`ParameterDerivatives`]' arrays.
    pub const ALL: [MaterialParameter; 2] = [
        MaterialParameter::YoungModulus,
        MaterialParameter::PoissonRatio,
    ];

    /// The index of this parameter in [`ParameterDerivatives`]' arrays.
    pub fn index(self) -> usize {
        match self {
            MaterialParameter::YoungModulus => 0,
            MaterialParameter::PoissonRatio => 1,
        }
    }

    /// The name used in sensitivity and calibration parameter names (`young_modulus`,
    /// `poisson_ratio`).
    pub fn name(self) -> &'static str {
        match self {
            MaterialParameter::YoungModulus => "young_modulus",
            MaterialParameter::PoissonRatio => "poisson_ratio",
        }
    }
}

/// `∂f/∂p` and `∂(K V)/∂p` per node for both parameters (index by
/// [`MaterialParameter::index`]); units N per unit of p, and N·(unit of V)/m per unit of p.
/// Written by [`SoftBody::evaluate_parameter_derivatives`].
#[derive(Debug, Clone)]
pub struct ParameterDerivatives {
    /// `∂f/∂p` on every node.
    pub forces: [Vec<Vec3>; 2],
    /// `∂(K(x) V)/∂p` on every node.
    pub stiffness_action: [Vec<Vec3>; 2],
    element: [Vec<[Vec3; 4]>; 4],
}

impl SoftBody {
    /// Buffers for [`SoftBody::evaluate_parameter_derivatives`].
    pub fn parameter_derivatives_state(&self) -> ParameterDerivatives {
        let (n, ne) = (self.node_count(), self.elements().len());
        let nodal = || vec![Vec3::zeros(); n];
        let element = || vec![[Vec3::zeros(); 4]; ne];
        ParameterDerivatives {
            forces: [nodal(), nodal()],
            stiffness_action: [nodal(), nodal()],
            element: [element(), element(), element(), element()],
        }
    }

    /// Evaluates `∂f/∂p` and `∂(K(x) V)/∂p` for p = E and ν at positions `x` (m) for the
    /// nodal field `v` (module doc). Errors name the first element the law cannot evaluate.
    pub fn evaluate_parameter_derivatives(
        &self,
        x: &[Vec3],
        v: &[Vec3],
        out: &mut ParameterDerivatives,
    ) -> Result<()> {
        assert!(
            x.len() == self.node_count() && v.len() == self.node_count(),
            "evaluate_parameter_derivatives: field lengths"
        );
        let material = *self.material();
        let [fe, kve, fnu, kvnu] = &mut out.element;
        first_failure(
            self.elements()
                .par_iter()
                .zip(fe.par_iter_mut())
                .zip(kve.par_iter_mut())
                .zip(fnu.par_iter_mut())
                .zip(kvnu.par_iter_mut())
                .enumerate()
                .filter_map(|(e, ((((tet, fe), kve), fnu), kvnu))| {
                    match material.at(&tet.deformation_gradient(x)) {
                        Ok(point) => {
                            let ve = tet.nodes.map(|n| v[n]);
                            let de = material.d_young_modulus(&point);
                            let dnu = material.d_poisson_ratio(&point);
                            *fe = tet.forces(&de.stress());
                            *kve = tet.stiffness_action(&de, ve);
                            *fnu = tet.forces(&dnu.stress());
                            *kvnu = tet.stiffness_action(&dnu, ve);
                            None
                        }
                        Err(err) => Some((e, err)),
                    }
                }),
        )?;
        let [f0, f1] = &mut out.forces;
        let [k0, k1] = &mut out.stiffness_action;
        self.gather(&out.element[0], f0);
        self.gather(&out.element[1], k0);
        self.gather(&out.element[2], f1);
        self.gather(&out.element[3], k1);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fem::{MassKind, SoftBodyOptions, Stiffness};
    use crate::material::{Law, Material};
    use crate::math::{SplitMix64, relative_error};
    use crate::mesh::box_mesh;

    /// ∂f/∂p and ∂(KV)/∂p equal central differences of f and of K V (computed by the
    /// assembled stiffness on the free DOFs, and element-wise on all nodes) in E and ν.
    #[test]
    fn parameter_derivatives_match_finite_differences() {
        let mesh = box_mesh([2, 2, 1], [0.0; 3], [0.02, 0.02, 0.01]).unwrap();
        let n = mesh.node_count();
        let mut rng = SplitMix64::new(5);
        let x: Vec<Vec3> = mesh
            .positions()
            .iter()
            .map(|p| p + 1e-3 * Vec3::new(rng.uniform(), rng.uniform(), rng.uniform()))
            .collect();
        let v: Vec<Vec3> = (0..n)
            .map(|_| Vec3::new(rng.uniform(), rng.uniform(), rng.uniform()))
            .collect();
        for law in [Law::Corotational, Law::StVK, Law::NeoHookean] {
            let (e0, nu0) = (3e5, 0.3);
            let make = |e: f64, nu: f64| {
                SoftBody::new(
                    "b",
                    mesh.clone(),
                    SoftBodyOptions {
                        material: Material::new(law, e, nu).unwrap(),
                        density: 1000.0,
                        mass: MassKind::Lumped,
                        rayleigh_mass: 0.0,
                        rayleigh_stiffness: 0.0,
                        fixed: vec![false; n],
                    },
                )
                .unwrap()
            };
            // (f, K v) flattened, K v from the assembled stiffness (no fixed node here).
            let outputs = |e: f64, nu: f64| -> (Vec<f64>, Vec<f64>) {
                let b = make(e, nu);
                let mut es = b.elastic_state();
                b.evaluate_elastic(&x, Stiffness::Assemble, &mut es)
                    .unwrap();
                let vf: Vec<f64> = v.iter().flat_map(|p| [p.x, p.y, p.z]).collect();
                let mut kv = vec![0.0; vf.len()];
                b.pattern().symmetric_product(&es.stiffness, &vf, &mut kv);
                (es.forces.iter().flat_map(|p| [p.x, p.y, p.z]).collect(), kv)
            };
            let body = make(e0, nu0);
            let mut out = body.parameter_derivatives_state();
            body.evaluate_parameter_derivatives(&x, &v, &mut out)
                .unwrap();
            for (p, (dp, (ep, np), (em, nm))) in [
                (1.0, (e0 + 1.0, nu0), (e0 - 1.0, nu0)),
                (1e-6, (e0, nu0 + 1e-6), (e0, nu0 - 1e-6)),
            ]
            .into_iter()
            .enumerate()
            {
                let (fp, kp) = outputs(ep, np);
                let (fm, km) = outputs(em, nm);
                let fd_f: Vec<f64> = fp
                    .iter()
                    .zip(&fm)
                    .map(|(a, b)| (a - b) / (2.0 * dp))
                    .collect();
                let fd_k: Vec<f64> = kp
                    .iter()
                    .zip(&km)
                    .map(|(a, b)| (a - b) / (2.0 * dp))
                    .collect();
                let df: Vec<f64> = out.forces[p].iter().flat_map(|q| [q.x, q.y, q.z]).collect();
                let dk: Vec<f64> = out.stiffness_action[p]
                    .iter()
                    .flat_map(|q| [q.x, q.y, q.z])
                    .collect();
                let (ef, ek) = (
                    relative_error(&df, &fd_f, 0.0),
                    relative_error(&dk, &fd_k, 0.0),
                );
                assert!(ef < 1e-6 && ek < 1e-6, "{law:?} p{p}: {ef:e} {ek:e}");
            }
        }
    }
}
