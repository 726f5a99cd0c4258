//! Derivatives of the elastic force and of the stiffness action with respect to the
//! material parameters (docs/derivatives.md; the ∂f/∂p and ∂K/∂p · V terms of paper 004 Eq. 10-11):
//! `∂f/∂p` and `∂(K(x) V)/∂p` for p ∈ {E, ν}, both in one parallel pass over elements.
//!
//! Every law's outputs are linear in the Lamé pair (μ, λ), so `∂X/∂p` is X evaluated with
//! the Lamé pair (∂μ/∂p, ∂λ/∂p) ([`crate::material::Material::d_young_modulus`]); per element
//! `∂fₑ/∂p = −V_e (∂P/∂p) gₙ` and `∂(K V)ₑ/∂p = V_e (∂(∂P/∂F : dF_V)/∂p) gₙ`. The elements
//! of a [`super::MaterialRegion`] have their own E and ν, so they contribute zero.

use rayon::prelude::*;

use crate::error::Result;
use crate::material::{Lame, Material, MaterialPoint};
use crate::math::{Mat3, Vec3};

use super::elastic::LANES;
use super::rest_frame::consecutive_elements;
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
    /// Both parameters.
    pub const ALL: [MaterialParameter; 2] = [
        MaterialParameter::YoungModulus,
        MaterialParameter::PoissonRatio,
    ];

    /// The name used in sensitivity and calibration parameter names (`young_modulus`,
    /// `poisson_ratio`).
    pub fn name(self) -> &'static str {
        match self {
            MaterialParameter::YoungModulus => "young_modulus",
            MaterialParameter::PoissonRatio => "poisson_ratio",
        }
    }

    /// (∂μ/∂p, ∂λ/∂p) of `material` (dimensionless for E, Pa for ν): every law's outputs at
    /// this Lamé pair are their derivatives in p.
    pub fn lame_derivative(self, material: &Material) -> Lame {
        let d = material.lame_derivatives();
        match self {
            MaterialParameter::YoungModulus => d.young_modulus,
            MaterialParameter::PoissonRatio => d.poisson_ratio,
        }
    }
}

/// `∂f/∂p` and `∂(K V)/∂p` per node for one parameter p; units N per unit of p, and
/// N·(unit of V)/m per unit of p. Written by [`SoftBody::evaluate_parameter_derivatives`].
#[derive(Debug, Clone)]
pub struct ParameterDerivatives {
    /// `∂f/∂p` on every node.
    pub forces: Vec<Vec3>,
    /// `∂(K(x) V)/∂p` on every node.
    pub stiffness_action: Vec<Vec3>,
    /// `K(x) V` itself on every node (N·(unit of V)/m), each element at its own material:
    /// filled by [`SoftBody::evaluate_parameter_derivatives_and_action_at`] only (empty
    /// until then).
    pub action: Vec<Vec3>,
    element_forces: Vec<[Vec3; 4]>,
    element_actions: Vec<[Vec3; 4]>,
    element_own: Vec<[Vec3; 4]>,
}

/// A material parameter p paired with a nodal field w, summed over all nodes: what a reverse
/// sweep needs of [`ParameterDerivatives`] (filled by [`SoftBody::stiffness_actions_at`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ParameterPairing {
    /// `⟨∂f/∂p, w⟩` (N·(unit of w) per unit of p).
    pub forces: f64,
    /// `⟨∂(K V)/∂p, w⟩` (N·(unit of V)·(unit of w)/m per unit of p).
    pub stiffness_action: f64,
}

impl SoftBody {
    /// Buffers for [`SoftBody::evaluate_parameter_derivatives`].
    pub fn parameter_derivatives_state(&self) -> ParameterDerivatives {
        let (n, ne) = (self.node_count(), self.elements().len());
        ParameterDerivatives {
            forces: vec![Vec3::zeros(); n],
            stiffness_action: vec![Vec3::zeros(); n],
            action: Vec::new(),
            element_forces: vec![[Vec3::zeros(); 4]; ne],
            element_actions: vec![[Vec3::zeros(); 4]; ne],
            element_own: Vec::new(),
        }
    }

    /// Evaluates `∂f/∂p` and `∂(K(x) V)/∂p` for `parameter` at positions `x` (m) for the nodal
    /// field `v` (module doc), in one parallel pass over elements. Errors name the first
    /// element the law cannot evaluate.
    pub fn evaluate_parameter_derivatives(
        &self,
        x: &[Vec3],
        v: &[Vec3],
        parameter: MaterialParameter,
        out: &mut ParameterDerivatives,
    ) -> Result<()> {
        assert!(
            x.len() == self.node_count() && v.len() == self.node_count(),
            "evaluate_parameter_derivatives: field lengths"
        );
        let lame = parameter.lame_derivative(self.material());
        first_failure(
            self.elements()
                .par_chunks(LANES)
                .zip(out.element_forces.par_chunks_mut(LANES))
                .zip(out.element_actions.par_chunks_mut(LANES))
                .enumerate()
                .filter_map(|(group, ((tets, forces), actions))| {
                    // A short last group is padded with F = I (evaluated, then ignored).
                    let mut fs = [crate::math::Mat3::identity(); LANES];
                    for (f, tet) in fs.iter_mut().zip(tets) {
                        *f = tet.deformation_gradient(x);
                    }
                    let mut failure = None;
                    self.material_lanes(
                        consecutive_elements(group * LANES),
                        fs.each_ref(),
                        None,
                        |k, point| {
                            let Some(tet) = tets.get(k) else { return };
                            match point {
                                Ok(point) => {
                                    (forces[k], actions[k]) = if self.in_region(group * LANES + k) {
                                        Default::default()
                                    } else {
                                        let dp = point
                                            .tangent_action_with(&lame, &field_gradient(tet, v));
                                        element_terms(tet, point, &lame, &dp)
                                    };
                                }
                                Err(err) => {
                                    failure.get_or_insert((group * LANES + k, err));
                                }
                            }
                        },
                    );
                    failure
                }),
        )?;
        self.gather(&out.element_forces, &mut out.forces);
        self.gather(&out.element_actions, &mut out.stiffness_action);
        Ok(())
    }

    /// As [`SoftBody::evaluate_parameter_derivatives`], from the material points of the
    /// positions (`points`, one per element, e.g. kept by the step's own force pass with
    /// [`super::ElasticState::keep_material_points`]) instead of re-evaluating the law: no
    /// SVD for the co-rotational law.
    ///
    /// Panics if `points` does not have one entry per element.
    pub fn evaluate_parameter_derivatives_at(
        &self,
        points: &[MaterialPoint],
        v: &[Vec3],
        parameter: MaterialParameter,
        out: &mut ParameterDerivatives,
    ) {
        assert_eq!(points.len(), self.elements().len(), "one point per element");
        let lame = parameter.lame_derivative(self.material());
        self.elements()
            .par_iter()
            .zip(points)
            .zip(out.element_forces.par_iter_mut())
            .zip(out.element_actions.par_iter_mut())
            .enumerate()
            .for_each(|(e, (((tet, point), f), a))| {
                (*f, *a) = if self.in_region(e) {
                    Default::default()
                } else {
                    let dp = point.tangent_action_with(&lame, &field_gradient(tet, v));
                    element_terms(tet, point, &lame, &dp)
                };
            });
        self.gather(&out.element_forces, &mut out.forces);
        self.gather(&out.element_actions, &mut out.stiffness_action);
    }

    /// As [`SoftBody::evaluate_parameter_derivatives_at`], and `K(x) V` itself in
    /// `out.action` from the same element pass (each element's dF_V and, for the
    /// co-rotational law, its dR serve both; [`MaterialPoint::tangent_actions_with`]): what
    /// a forward derivative with respect to both E and ν needs, since ∂(K V)/∂E = K V / E.
    ///
    /// Panics if `points` does not have one entry per element.
    pub fn evaluate_parameter_derivatives_and_action_at(
        &self,
        points: &[MaterialPoint],
        v: &[Vec3],
        parameter: MaterialParameter,
        out: &mut ParameterDerivatives,
    ) {
        assert_eq!(points.len(), self.elements().len(), "one point per element");
        let lame = parameter.lame_derivative(self.material());
        out.element_own
            .resize(self.elements().len(), [Vec3::zeros(); 4]);
        out.action.resize(self.node_count(), Vec3::zeros());
        self.elements()
            .par_iter()
            .zip(points)
            .zip(out.element_forces.par_iter_mut())
            .zip(out.element_actions.par_iter_mut())
            .zip(out.element_own.par_iter_mut())
            .enumerate()
            .for_each(|(e, ((((tet, point), f), a), own))| {
                let [dp, action] =
                    point.tangent_actions_with([&lame, &point.lame()], &field_gradient(tet, v));
                *own = tet.stress_action(&action);
                (*f, *a) = if self.in_region(e) {
                    Default::default()
                } else {
                    element_terms(tet, point, &lame, &dp)
                };
            });
        self.gather(&out.element_forces, &mut out.forces);
        self.gather(&out.element_actions, &mut out.stiffness_action);
        self.gather(&out.element_own, &mut out.action);
    }
}

// The two helpers below are inlined into the passes' element closures: called out of line,
// their returned arrays went through memory (the Trunk's 10-column JVP 0.77 → 0.80–0.82 ms).

/// One element's dF_V = Σₙ Vₙ gₙᵀ for the nodal field `v`.
#[inline(always)]
fn field_gradient(tet: &super::Tetrahedron, v: &[Vec3]) -> Mat3 {
    tet.deformation_gradient_variation(tet.nodes.map(|n| v[n]))
}

/// One element's `∂fₑ/∂p` and `∂(K V)ₑ/∂p` at its material point, from the parameter's Lamé
/// pair `lame` and `dp` = ∂P/∂F : dF_V weighted with it.
#[inline(always)]
fn element_terms(
    tet: &super::Tetrahedron,
    point: &MaterialPoint,
    lame: &Lame,
    dp: &Mat3,
) -> ([Vec3; 4], [Vec3; 4]) {
    (tet.forces(&point.stress_with(lame)), tet.stress_action(dp))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fem::{SoftBodyOptions, Stiffness};
    use crate::material::{Law, Material};
    use crate::math::{SplitMix64, relative_error};
    use crate::mesh::box_mesh;

    /// A 2 × 2 × 1-cell box (20 × 20 × 10 mm), its nodes moved by up to 1 mm, and a random
    /// nodal field V: the tests' configuration, drawn from `seed`.
    fn perturbed_box(seed: u64) -> (crate::mesh::Mesh, Vec<Vec3>, Vec<Vec3>) {
        let mesh = box_mesh([2, 2, 1], [0.0; 3], [0.02, 0.02, 0.01]).unwrap();
        let mut rng = SplitMix64::new(seed);
        let x: Vec<Vec3> = mesh
            .positions()
            .iter()
            .map(|p| p + 1e-3 * Vec3::new(rng.uniform(), rng.uniform(), rng.uniform()))
            .collect();
        let v: Vec<Vec3> = (0..mesh.node_count())
            .map(|_| Vec3::new(rng.uniform(), rng.uniform(), rng.uniform()))
            .collect();
        (mesh, x, v)
    }

    /// ∂f/∂p and ∂(KV)/∂p equal central differences of f and of K V (computed by the
    /// assembled stiffness on the free DOFs, and element-wise on all nodes) in E and ν.
    #[test]
    fn parameter_derivatives_match_finite_differences() {
        let (mesh, x, v) = perturbed_box(5);
        let n = mesh.node_count();
        for law in [Law::Corotational, Law::StVK, Law::NeoHookean] {
            let (e0, nu0) = (3e5, 0.3);
            let make = |e: f64, nu: f64| {
                SoftBody::new(
                    "b",
                    mesh.clone(),
                    SoftBodyOptions::for_tests(Material::new(law, e, nu).unwrap(), vec![false; n]),
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
                // From kept material points: the same values (checked below against FD too).
                let mut es = body.elastic_state();
                es.keep_material_points(true);
                body.evaluate_elastic(&x, Stiffness::Skip, &mut es).unwrap();
                body.evaluate_parameter_derivatives_at(
                    &es.points,
                    &v,
                    MaterialParameter::ALL[p],
                    &mut out,
                );
                let kept: Vec<Vec3> = out.forces.clone();
                body.evaluate_parameter_derivatives(&x, &v, MaterialParameter::ALL[p], &mut out)
                    .unwrap();
                assert_eq!(kept, out.forces, "kept points give the same derivative");
                let df: Vec<f64> = out.forces.iter().flat_map(|q| [q.x, q.y, q.z]).collect();
                let dk: Vec<f64> = out
                    .stiffness_action
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

    /// The pass that also gives K V: its derivatives are the plain pass's bit for bit, and
    /// K V is the assembled stiffness's product (a second method) to 1e-12, with a region of
    /// stiffer elements (each element at its own material) and for all three laws.
    #[test]
    fn the_action_from_the_derivative_pass_is_the_assembled_product() {
        let (mesh, x, v) = perturbed_box(9);
        let n = mesh.node_count();
        for law in [Law::Corotational, Law::StVK, Law::NeoHookean] {
            let mut body = SoftBody::new(
                "b",
                mesh.clone(),
                SoftBodyOptions::for_tests(Material::new(law, 3e5, 0.3).unwrap(), vec![false; n]),
            )
            .unwrap();
            body.set_material_regions(&[crate::fem::MaterialRegion {
                material: Material::new(law, 9e5, 0.4).unwrap(),
                elements: vec![0, 3, 4],
            }])
            .unwrap();
            let mut es = body.elastic_state();
            es.keep_material_points(true);
            body.evaluate_elastic(&x, Stiffness::Assemble, &mut es)
                .unwrap();
            let vf: Vec<f64> = v.iter().flat_map(|p| [p.x, p.y, p.z]).collect();
            let mut kv = vec![0.0; vf.len()];
            body.pattern()
                .symmetric_product(&es.stiffness, &vf, &mut kv);
            for parameter in MaterialParameter::ALL {
                let mut plain = body.parameter_derivatives_state();
                body.evaluate_parameter_derivatives_at(&es.points, &v, parameter, &mut plain);
                let mut both = body.parameter_derivatives_state();
                body.evaluate_parameter_derivatives_and_action_at(
                    &es.points, &v, parameter, &mut both,
                );
                assert_eq!(both.forces, plain.forces, "{law:?} {parameter:?}");
                assert_eq!(both.stiffness_action, plain.stiffness_action);
                let action: Vec<f64> = both.action.iter().flat_map(|q| [q.x, q.y, q.z]).collect();
                let e = relative_error(&action, &kv, 0.0);
                assert!(e < 1e-12, "{law:?} {parameter:?}: K V relative error {e:e}");
            }
        }
    }
}
