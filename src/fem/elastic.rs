//! Internal elastic forces, energy and stiffness of a soft body at given node positions,
//! computed per element in parallel (rayon) and assembled into the body's fixed pattern.

use rayon::iter::Either;
use rayon::prelude::*;

use crate::error::Result;
use crate::material::MaterialPoint;
use crate::math::{Mat3, Vec3};

/// Elements evaluated together (see [`SoftBody::evaluate_elastic`]).
const LANES: usize = 4;

use super::soft_body::SoftBody;

/// Buffers written by [`SoftBody::evaluate_elastic`], allocated once per body and reused.
#[derive(Debug, Clone)]
pub struct ElasticState {
    /// Elastic energy Σₑ VₑΨ(Fₑ) (J).
    pub energy: f64,
    /// Internal force on every node, f = −∂E/∂x (N); zero on nodes of no tetrahedron.
    pub forces: Vec<Vec3>,
    /// Values of the stiffness K = ∂²E/∂x² (N/m) on the body's pattern (free DOFs), when
    /// requested.
    pub stiffness: Vec<f64>,
    /// The material point of every element at the last evaluation, when kept
    /// ([`ElasticState::keep_material_points`]): what derivative passes reuse instead of
    /// re-evaluating the law (for the co-rotational law, its SVD).
    pub points: Vec<MaterialPoint>,
    keep_points: bool,
    element_energy: Vec<f64>,
    element_forces: Vec<[Vec3; 4]>,
    blocks: Vec<f64>,
}

impl ElasticState {
    /// Whether [`SoftBody::evaluate_elastic`] keeps every element's material point in
    /// [`ElasticState::points`] (off by default; about 0.6 kB per co-rotational element).
    pub fn keep_material_points(&mut self, keep: bool) {
        self.keep_points = keep;
        if !keep {
            self.points = Vec::new();
        }
    }
}

/// Whether [`SoftBody::evaluate_elastic`] also assembles the stiffness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stiffness {
    /// Forces and energy only.
    Skip,
    /// Forces, energy and stiffness.
    Assemble,
}

impl SoftBody {
    /// Buffers for [`SoftBody::evaluate_elastic`].
    pub fn elastic_state(&self) -> ElasticState {
        let ne = self.elements().len();
        ElasticState {
            energy: 0.0,
            forces: vec![Vec3::zeros(); self.node_count()],
            stiffness: vec![0.0; self.pattern().nnz()],
            points: Vec::new(),
            keep_points: false,
            element_energy: vec![0.0; ne],
            element_forces: vec![[Vec3::zeros(); 4]; ne],
            blocks: vec![0.0; self.pattern().plan().block_buffer_len()],
        }
    }

    /// Evaluates the elastic energy, the internal forces f(x) = −∂E/∂x (paper 004 Eq. 3,
    /// fₑ,ₙ = −Vₑ P(Fₑ) gₙ) and, if asked, the stiffness K(x) = ∂²E/∂x² at positions `x` (m),
    /// in parallel over elements. Errors name the first element (lowest index) where the law
    /// cannot be evaluated (an inverted element under Neo-Hookean, a non-finite F).
    pub fn evaluate_elastic(
        &self,
        x: &[Vec3],
        stiffness: Stiffness,
        state: &mut ElasticState,
    ) -> Result<()> {
        assert_eq!(
            x.len(),
            self.node_count(),
            "evaluate_elastic: positions length"
        );
        let material = *self.material();
        let with_k = stiffness == Stiffness::Assemble;
        // Elements go by groups of LANES, whose material points are evaluated together
        // (`Material::at_lanes`: the co-rotational SVDs overlap); every element's result is
        // bit for bit the same as alone, so grouping changes nothing but speed.
        let ne = self.elements().len();
        if state.keep_points && state.points.len() != ne {
            let identity = material
                .at(&Mat3::identity())
                .expect("every law evaluates at F = I");
            state.points = vec![identity; ne];
        }
        let kept = if state.keep_points {
            Either::Left(state.points.par_chunks_mut(LANES).map(Some))
        } else {
            Either::Right((0..ne.div_ceil(LANES)).into_par_iter().map(|_| None))
        };
        let failures: Option<(usize, crate::material::DeformationError)> = self
            .elements()
            .par_chunks(LANES)
            .zip(state.element_energy.par_chunks_mut(LANES))
            .zip(state.element_forces.par_chunks_mut(LANES))
            .zip(state.blocks.par_chunks_mut(144 * LANES))
            .zip(kept)
            .enumerate()
            .filter_map(
                |(group, ((((tets, energies), forces), blocks), mut kept))| {
                    // A short last group is padded with F = I (evaluated, then ignored).
                    let mut fs = [Mat3::identity(); LANES];
                    for (f, tet) in fs.iter_mut().zip(tets) {
                        *f = tet.deformation_gradient(x);
                    }
                    let mut failure = None;
                    self.material_lanes(group * LANES, fs.each_ref(), |k, point| {
                        let Some(tet) = tets.get(k) else { return };
                        let point = match point {
                            Ok(p) => p,
                            Err(err) => {
                                failure.get_or_insert((group * LANES + k, err));
                                return;
                            }
                        };
                        if let Some(points) = kept.as_deref_mut() {
                            points[k] = *point;
                        }
                        energies[k] = tet.volume * point.energy_density();
                        if with_k {
                            let block = &mut blocks[144 * k..144 * (k + 1)];
                            if let Some(low_rank) = point.low_rank_tangent() {
                                forces[k] = tet.forces(&point.stress());
                                tet.stiffness_low_rank(&low_rank, block);
                            } else {
                                let (p, t) = point.stress_and_tangent();
                                forces[k] = tet.forces(&p);
                                tet.stiffness(&t, block);
                            }
                        } else {
                            forces[k] = tet.forces(&point.stress());
                        }
                    });
                    failure
                },
            )
            .min_by_key(|(e, _)| *e);
        if let Some((e, err)) = failures {
            return Err(err.at_element(e));
        }
        state.energy = state.element_energy.iter().sum();
        self.gather(&state.element_forces, &mut state.forces);
        if with_k {
            self.pattern().assemble(&state.blocks, &mut state.stiffness);
        }
        Ok(())
    }
}
