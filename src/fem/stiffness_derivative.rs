//! The directional derivative of the stiffness the step's gradients need (docs/derivatives.md,
//! paper 004 Eq. 10): `T_V = ∂(K(x) V)/∂x` for a fixed nodal field `V`, assembled on the
//! body's pattern or applied to a vector — never the third-order tensor.
//!
//! Per element, with `dF_V = Σₙ Vₙ gₙᵀ`, `T_V,e = V_e Bᵀ d²P[dF_V, ·] B`: the stiffness
//! formula of [`Tetrahedron::stiffness`] with the tangent ∂P/∂F replaced by its derivative in
//! the direction dF_V ([`crate::material::MaterialPoint::tangent_derivative_matrix`]).
//! Since `K = ∂²E/∂x²`, `(T_V)ᵢⱼ = Σₖ ∂³E/∂xᵢ∂xⱼ∂xₖ Vₖ` is symmetric: the same matrix serves
//! forward mode (`T_V dx`) and reverse mode (`T_Vᵀ w = T_V w`). Units: N/m² per unit of `V`
//! (N·s/m² when `V` is a velocity in m/s).

use rayon::prelude::*;

use crate::error::Result;
use crate::material::{DeformationError, Lame, MaterialPoint, frobenius};
use crate::math::{Mat3, Vec3};

use super::parameter_derivative::{MaterialParameter, ParameterPairing};
use super::soft_body::SoftBody;
use super::tetrahedron::Tetrahedron;

/// Buffers of the stiffness-derivative routines, allocated once per body and reused.
#[derive(Debug, Clone)]
pub struct StiffnessDerivativeState {
    /// Values of `T_V` on the body's pattern (free DOFs, lower triangle), after
    /// [`SoftBody::assemble_stiffness_derivative`].
    pub values: Vec<f64>,
    blocks: Vec<f64>,
    first: Vec<[Vec3; 4]>,
    second: Vec<[Vec3; 4]>,
    /// Per element, the two pairings of up to two material parameters
    /// ([`SoftBody::stiffness_actions_at`]).
    pairings: Vec<[ParameterPairing; 2]>,
}

fn element_field(tet: &Tetrahedron, v: &[Vec3]) -> [Vec3; 4] {
    tet.nodes.map(|n| v[n])
}

/// The lowest-index element error of a parallel element loop, as the crate's error.
pub(super) fn first_failure(
    failures: impl ParallelIterator<Item = (usize, DeformationError)>,
) -> Result<()> {
    match failures.min_by_key(|(e, _)| *e) {
        Some((e, err)) => Err(err.at_element(e)),
        None => Ok(()),
    }
}

impl SoftBody {
    /// Buffers for [`SoftBody::assemble_stiffness_derivative`] and
    /// [`SoftBody::stiffness_actions`].
    pub fn stiffness_derivative_state(&self) -> StiffnessDerivativeState {
        let ne = self.elements().len();
        StiffnessDerivativeState {
            values: vec![0.0; self.pattern().nnz()],
            blocks: vec![0.0; self.pattern().plan().block_buffer_len()],
            first: vec![[Vec3::zeros(); 4]; ne],
            second: vec![[Vec3::zeros(); 4]; ne],
            pairings: vec![[ParameterPairing::default(); 2]; ne],
        }
    }

    /// Assembles `T_V = ∂(K(x) V)/∂x` (module doc) at positions `x` (m) for the nodal field
    /// `v` into `state.values`, on the body's pattern (free DOFs), in parallel over elements.
    /// Errors name the first element the law cannot evaluate.
    pub fn assemble_stiffness_derivative(
        &self,
        x: &[Vec3],
        v: &[Vec3],
        state: &mut StiffnessDerivativeState,
    ) -> Result<()> {
        assert!(
            x.len() == self.node_count() && v.len() == self.node_count(),
            "assemble_stiffness_derivative: field lengths"
        );
        first_failure(
            self.elements()
                .par_iter()
                .zip(state.blocks.par_chunks_mut(144))
                .enumerate()
                .filter_map(|(e, (tet, block))| match self.material_point(e, x) {
                    Ok(point) => {
                        let dfv = tet.deformation_gradient_variation(element_field(tet, v));
                        tet.stiffness(&point.tangent_derivative_matrix(&dfv), block);
                        None
                    }
                    Err(err) => Some((e, err)),
                }),
        )?;
        self.pattern().assemble(&state.blocks, &mut state.values);
        Ok(())
    }

    /// `K(x) w` and `T_V w = ∂(K(x) V)/∂x · w` per node (N and N·(unit of V)/m), over all
    /// nodes (fixed ones included), in one parallel pass over elements without assembly:
    /// `(K w)ₑ = V_e (∂P/∂F : dF_w) gₙ` and `(T_V w)ₑ = V_e d²P[dF_V, dF_w] gₙ`. The reverse
    /// sweep's per-step work. Errors name the first element the law cannot evaluate.
    pub fn stiffness_actions(
        &self,
        x: &[Vec3],
        v: &[Vec3],
        w: &[Vec3],
        state: &mut StiffnessDerivativeState,
        k_w: &mut [Vec3],
        t_w: &mut [Vec3],
    ) -> Result<()> {
        let n = self.node_count();
        assert!(
            x.len() == n && v.len() == n && w.len() == n && k_w.len() == n && t_w.len() == n,
            "stiffness_actions: field lengths"
        );
        first_failure(
            self.elements()
                .par_iter()
                .zip(state.first.par_iter_mut())
                .zip(state.second.par_iter_mut())
                .enumerate()
                .filter_map(|(e, ((tet, kw), tw))| match self.material_point(e, x) {
                    Ok(point) => {
                        let dfv = tet.deformation_gradient_variation(element_field(tet, v));
                        let dfw = tet.deformation_gradient_variation(element_field(tet, w));
                        (*kw, *tw) = element_actions(tet, &point, &dfv, &dfw, &[], &mut []);
                        None
                    }
                    Err(err) => Some((e, err)),
                }),
        )?;
        self.gather(&state.first, k_w);
        self.gather(&state.second, t_w);
        Ok(())
    }

    /// As [`SoftBody::stiffness_actions`], from the material points of the positions
    /// (`points`, one per element, e.g. kept by the step's own force pass) instead of
    /// re-evaluating the law: no SVD for the co-rotational law.
    ///
    /// In the same pass, for each of `parameters` (at most two), the pairings
    /// `⟨∂f/∂p, w⟩ = −Σₑ V_e (∂P/∂p) : dF_w` and `⟨∂(K V)/∂p, w⟩ = Σₑ V_e dF_V : (∂²P/∂F∂p) : dF_w`
    /// summed over elements in element order (the elements of a material region give zero,
    /// as in [`SoftBody::evaluate_parameter_derivatives`]): what a reverse sweep needs of
    /// `∂f/∂p` and `∂(K V)/∂p`, without forming them per node. Returned in the order of
    /// `parameters`; the unused entries are zero.
    ///
    /// Panics if `points` does not have one entry per element, or with more than two
    /// parameters.
    #[allow(clippy::too_many_arguments)]
    pub fn stiffness_actions_at(
        &self,
        points: &[MaterialPoint],
        v: &[Vec3],
        w: &[Vec3],
        parameters: &[MaterialParameter],
        state: &mut StiffnessDerivativeState,
        k_w: &mut [Vec3],
        t_w: &mut [Vec3],
    ) -> [ParameterPairing; 2] {
        assert_eq!(points.len(), self.elements().len(), "one point per element");
        assert!(parameters.len() <= 2, "at most two material parameters");
        let material = self.material();
        let derivative_lames: [Lame; 2] = std::array::from_fn(|k| {
            parameters.get(k).map_or(
                Lame {
                    mu: 0.0,
                    lambda: 0.0,
                },
                |p| p.lame_derivative(material),
            )
        });
        self.elements()
            .par_iter()
            .zip(points)
            .zip(state.first.par_iter_mut())
            .zip(state.second.par_iter_mut())
            .zip(state.pairings.par_iter_mut())
            .enumerate()
            .for_each(|(e, ((((tet, point), kw), tw), pairing))| {
                let dfv = tet.deformation_gradient_variation(element_field(tet, v));
                let dfw = tet.deformation_gradient_variation(element_field(tet, w));
                // The parameters' Lamé derivatives (none inside a material region), whose
                // forms dF_V : (∂²P/∂F∂p) : dF_w come with the element's other terms.
                let lames = if self.in_region(e) {
                    &[][..]
                } else {
                    &derivative_lames[..parameters.len()]
                };
                let mut forms = [0.0; 2];
                (*kw, *tw) =
                    element_actions(tet, point, &dfv, &dfw, lames, &mut forms[..lames.len()]);
                *pairing = [ParameterPairing::default(); 2];
                for ((out, lame), form) in pairing.iter_mut().zip(lames).zip(forms) {
                    *out = ParameterPairing {
                        forces: -tet.volume * frobenius(&point.stress_with(lame), &dfw),
                        stiffness_action: tet.volume * form,
                    };
                }
            });
        self.gather(&state.first, k_w);
        self.gather(&state.second, t_w);
        let mut sums = [ParameterPairing::default(); 2];
        for pairing in &state.pairings {
            for (sum, p) in sums.iter_mut().zip(pairing) {
                sum.forces += p.forces;
                sum.stiffness_action += p.stiffness_action;
            }
        }
        sums
    }
}

/// One element's `(K w)ₑ = V_e (∂P/∂F : dF_w) gₙ` and `(T_V w)ₑ = V_e d²P[dF_V, dF_w] gₙ`, from
/// the variations `dfv = dF_V`, `dfw = dF_w` of its deformation gradient; and with them, for
/// each Lamé pair of `forms`, dF_V : (∂P/∂F) : dF_w into `out` (Pa; `MaterialPoint::reverse_terms`).
fn element_actions(
    tet: &Tetrahedron,
    point: &MaterialPoint,
    dfv: &Mat3,
    dfw: &Mat3,
    forms: &[Lame],
    out: &mut [f64],
) -> ([Vec3; 4], [Vec3; 4]) {
    let (dp, ddp) = point.reverse_terms(dfv, dfw, forms, out);
    (tet.stress_action(&dp), tet.stress_action(&ddp))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fem::{SoftBodyOptions, Stiffness};
    use crate::material::{Law, Material};
    use crate::math::{DVec, SplitMix64, central_difference_jacobian, relative_error};
    use crate::mesh::box_mesh;

    fn body(law: Law, fix_first: bool) -> (SoftBody, Vec<Vec3>) {
        let mesh = box_mesh([3, 1, 2], [0.0; 3], [0.03, 0.01, 0.012]).unwrap();
        let n = mesh.node_count();
        let fixed = (0..n)
            .map(|i| fix_first && mesh.positions()[i].x < 1e-9)
            .collect();
        let body = SoftBody::new(
            "b",
            mesh,
            SoftBodyOptions::for_tests(Material::new(law, 2e5, 0.35).unwrap(), fixed),
        )
        .unwrap();
        let mut rng = SplitMix64::new(7);
        let x = body
            .rest_positions()
            .iter()
            .map(|p| p + 1e-3 * Vec3::new(rng.uniform(), rng.uniform(), rng.uniform()))
            .collect();
        (body, x)
    }

    fn random_field(n: usize, seed: u64) -> Vec<Vec3> {
        let mut rng = SplitMix64::new(seed);
        (0..n)
            .map(|_| Vec3::new(rng.uniform(), rng.uniform(), rng.uniform()))
            .collect()
    }

    /// K(x)V on the free DOFs, by the assembled stiffness (the step's own K).
    fn k_times(body: &SoftBody, x: &[Vec3], v: &[f64]) -> DVec {
        let mut es = body.elastic_state();
        body.evaluate_elastic(x, Stiffness::Assemble, &mut es)
            .unwrap();
        let mut out = vec![0.0; v.len()];
        body.pattern().symmetric_product(&es.stiffness, v, &mut out);
        DVec::from_vec(out)
    }

    fn reduce(body: &SoftBody, v: &[Vec3]) -> Vec<f64> {
        let full: Vec<f64> = v.iter().flat_map(|p| [p.x, p.y, p.z]).collect();
        let mut red = vec![0.0; body.pattern().n()];
        body.pattern().dofs().reduce(&full, &mut red);
        red
    }

    /// T_V equals the central finite-difference Jacobian of x ↦ K(x)V (free DOFs), and is
    /// symmetric; for every law, with fixed nodes.
    #[test]
    fn assembled_derivative_matches_finite_differences() {
        for law in [Law::StVK, Law::NeoHookean, Law::Corotational] {
            let (body, x) = body(law, true);
            // V vanishes on fixed nodes, as the step's velocities do.
            let mut v = random_field(body.node_count(), 3);
            for (i, vi) in v.iter_mut().enumerate() {
                if body.is_fixed(i) {
                    *vi = Vec3::zeros();
                }
            }
            let v_red = reduce(&body, &v);
            let dofs = body.pattern().dofs().clone();
            let x0: Vec<f64> = reduce(&body, &x);
            let fd = central_difference_jacobian(
                |xr: &DVec| {
                    let mut full: Vec<f64> = x.iter().flat_map(|p| [p.x, p.y, p.z]).collect();
                    dofs.expand(xr.as_slice(), &mut full);
                    let xs: Vec<Vec3> = full
                        .chunks_exact(3)
                        .map(|c| Vec3::new(c[0], c[1], c[2]))
                        .collect();
                    k_times(&body, &xs, &v_red)
                },
                &DVec::from_vec(x0),
                1e-6,
            );
            let mut st = body.stiffness_derivative_state();
            body.assemble_stiffness_derivative(&x, &v, &mut st).unwrap();
            let n = body.pattern().n();
            let mut t = crate::math::DMat::zeros(n, n);
            for j in 0..n {
                let mut e = vec![0.0; n];
                e[j] = 1.0;
                let mut col = vec![0.0; n];
                body.pattern().symmetric_product(&st.values, &e, &mut col);
                t.set_column(j, &DVec::from_vec(col));
            }
            let err = relative_error(t.as_slice(), fd.as_slice(), 0.0);
            assert!(err < 1e-6, "{law:?}: T_V vs FD {err:e}");
            let asym = (&t - t.transpose()).norm() / t.norm();
            assert!(asym < 1e-12, "{law:?}: T_V not symmetric ({asym:e})");
        }
    }

    /// The element-wise actions equal the assembled K and T_V applied to w (free DOFs).
    #[test]
    fn actions_match_the_assembled_matrices() {
        for law in [Law::Corotational, Law::StVK, Law::NeoHookean] {
            let (body, x) = body(law, true);
            let n = body.node_count();
            let v = random_field(n, 11);
            let mut w = random_field(n, 12);
            for (i, wi) in w.iter_mut().enumerate() {
                if body.is_fixed(i) {
                    *wi = Vec3::zeros();
                }
            }
            let w_red = reduce(&body, &w);
            let mut st = body.stiffness_derivative_state();
            let (mut kw, mut tw) = (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
            body.stiffness_actions(&x, &v, &w, &mut st, &mut kw, &mut tw)
                .unwrap();
            // From kept material points: the same actions.
            let mut es = body.elastic_state();
            es.keep_material_points(true);
            body.evaluate_elastic(&x, Stiffness::Skip, &mut es).unwrap();
            let (mut kw2, mut tw2) = (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
            let pairings = body.stiffness_actions_at(
                &es.points,
                &v,
                &w,
                &MaterialParameter::ALL,
                &mut st,
                &mut kw2,
                &mut tw2,
            );
            assert_eq!(
                (&kw, &tw),
                (&kw2, &tw2),
                "kept points give the same actions"
            );
            // The pairings against the per-node ∂f/∂p and ∂(K V)/∂p (themselves checked
            // against finite differences in parameter_derivative), dotted with w.
            let mut derivatives = body.parameter_derivatives_state();
            for (p, pairing) in MaterialParameter::ALL.iter().zip(&pairings) {
                body.evaluate_parameter_derivatives(&x, &v, *p, &mut derivatives)
                    .unwrap();
                let dot = |a: &[Vec3]| a.iter().zip(&w).map(|(a, b)| a.dot(b)).sum::<f64>();
                let scale = |a: &[Vec3]| {
                    a.iter().map(|a| a.norm()).sum::<f64>()
                        * w.iter().map(|w| w.norm()).fold(0.0, f64::max)
                };
                let (f, k) = (&derivatives.forces, &derivatives.stiffness_action);
                assert!(
                    (pairing.forces - dot(f)).abs() <= 1e-13 * scale(f)
                        && (pairing.stiffness_action - dot(k)).abs() <= 1e-13 * scale(k),
                    "{law:?} {p:?}: pairings {pairing:?} against {} and {}",
                    dot(f),
                    dot(k)
                );
            }
            // Only the first of one parameter; nothing without parameters.
            let one = body.stiffness_actions_at(
                &es.points,
                &v,
                &w,
                &[MaterialParameter::PoissonRatio],
                &mut st,
                &mut kw2,
                &mut tw2,
            );
            assert_eq!(one, [pairings[1], ParameterPairing::default()]);
            let kw_ref = k_times(&body, &x, &w_red);
            body.assemble_stiffness_derivative(&x, &v, &mut st).unwrap();
            let mut tw_ref = vec![0.0; w_red.len()];
            body.pattern()
                .symmetric_product(&st.values, &w_red, &mut tw_ref);
            let e1 = relative_error(&reduce(&body, &kw), kw_ref.as_slice(), 0.0);
            let e2 = relative_error(&reduce(&body, &tw), &tw_ref, 0.0);
            assert!(e1 < 1e-12 && e2 < 1e-12, "{law:?}: {e1:e} {e2:e}");
        }
    }
}
