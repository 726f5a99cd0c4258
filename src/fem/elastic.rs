//! Internal elastic forces, energy and stiffness of a soft body at given node positions,
//! computed per element in parallel (rayon) and assembled into the body's fixed pattern.

use rayon::iter::Either;
use rayon::prelude::*;

use crate::error::Result;
use crate::material::{DeformationError, Law, MaterialPoint, WarmRotation};
use crate::math::{Mat3, Vec3};

/// Elements evaluated together (see [`SoftBody::evaluate_elastic`]).
pub(super) const LANES: usize = 4;

use super::elastic_parted::PartedElastic;
use super::rest_frame::consecutive_elements;
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
    pub(super) keep_points: bool,
    /// Every co-rotational element's rotation at the last evaluation, when the material
    /// points are not kept: where the next evaluation's polar decomposition starts
    /// (`Material::at_lanes_warm`).
    pub(super) rotations: Vec<WarmRotation>,
    pub(super) element_energy: Vec<f64>,
    pub(super) element_forces: Vec<[Vec3; 4]>,
    blocks: Vec<f64>,
    /// The slabs of the element loop on more than one thread, built for the thread count of
    /// the last evaluation that used them.
    parted: Option<PartedElastic>,
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

/// The per-element buffer `items` in groups of [`LANES`] when `on`, else a `None` for each
/// of the groups of `elements` elements: what the element loop zips with its groups.
fn lanes_of<T: Send>(
    items: &mut [T],
    on: bool,
    elements: usize,
) -> impl IndexedParallelIterator<Item = Option<&mut [T]>> {
    if on {
        Either::Left(items.par_chunks_mut(LANES).map(Some))
    } else {
        Either::Right((0..elements.div_ceil(LANES)).into_par_iter().map(|_| None))
    }
}

/// The sequential counterpart of [`lanes_of`], for the one-thread loop.
fn lane_groups<T>(
    items: &mut [T],
    on: bool,
    elements: usize,
) -> impl Iterator<Item = Option<&mut [T]>> {
    if on {
        Either::Left(items.chunks_mut(LANES).map(Some))
    } else {
        Either::Right((0..elements.div_ceil(LANES)).map(|_| None))
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
            rotations: Vec::new(),
            element_energy: vec![0.0; ne],
            element_forces: vec![[Vec3::zeros(); 4]; ne],
            blocks: vec![0.0; self.pattern().plan().block_buffer_len()],
            parted: None,
        }
    }

    /// Evaluates the elastic energy, the internal forces f(x) = −∂E/∂x (paper 004 Eq. 3,
    /// fₑ,ₙ = −Vₑ P(Fₑ) gₙ) and, if asked, the stiffness K(x) = ∂²E/∂x² at positions `x` (m),
    /// in parallel over elements. Errors name the first element (lowest index) where the law
    /// cannot be evaluated (an inverted element under Neo-Hookean, a non-finite F); after an
    /// error the state's energy, forces and stiffness are not meaningful (every element was
    /// still evaluated, so the rotations kept for the next evaluation are).
    ///
    /// On one thread each element's stiffness block is added into K as soon as it is computed
    /// ([`crate::linalg::AssemblyPlan::scatter_add`]). On more, each thread evaluates the
    /// elements of one slab of the mesh across its longest axis and adds their blocks into the
    /// values of K it owns ([`crate::linalg::PartedAssembly`]; the few elements across two
    /// slabs are evaluated by both); with material points kept, every block is written to a
    /// buffer and gathered ([`crate::linalg::SymmetricPattern::assemble`]). All sum in the
    /// same order: the same bits for any thread count.
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
        // Without kept points (a plain step), co-rotational elements start their polar
        // decomposition from their last rotation instead of factoring F by SVD; derivative
        // passes keep the SVD's points, whose singular frames their second derivatives need.
        let warm = !state.keep_points && material.law() == Law::Corotational;
        if warm && state.rotations.len() != ne {
            state.rotations = vec![WarmRotation::COLD; ne];
        }
        let failure = if with_k && rayon::current_num_threads() == 1 {
            // One thread: each group's blocks are added into K while still in cache
            // (`AssemblyPlan::scatter_add`, the gather's sums bit for bit), not written to the
            // block buffer and gathered after.
            let plan = self.pattern().plan();
            state.stiffness.fill(0.0);
            let mut blocks = [0.0; 144 * LANES];
            let mut first_failure = None;
            let groups = self
                .elements()
                .chunks(LANES)
                .zip(state.element_energy.chunks_mut(LANES))
                .zip(state.element_forces.chunks_mut(LANES))
                .zip(lane_groups(&mut state.points, state.keep_points, ne))
                .zip(lane_groups(&mut state.rotations, warm, ne))
                .enumerate();
            for (group, ((((tets, energies), forces), kept), rotations)) in groups {
                // Every group is evaluated, as by the parallel loop, so that the rotations
                // kept for the next evaluation are the same whatever the thread count.
                let sinks = GroupSinks {
                    energies,
                    forces,
                    blocks: &mut blocks,
                    kept,
                    rotations,
                };
                let lanes = consecutive_elements(group * LANES);
                let failure = self.evaluate_group(x, with_k, lanes, tets.len(), sinks);
                first_failure = first_failure.or(failure);
                for (k, block) in blocks.chunks_exact(144).take(tets.len()).enumerate() {
                    plan.scatter_add(group * LANES + k, block, &mut state.stiffness);
                }
            }
            first_failure
        } else if with_k && !state.keep_points {
            let threads = rayon::current_num_threads();
            let mut parted = match state.parted.take() {
                Some(parted) if parted.parts() == threads => parted,
                _ => PartedElastic::new(self, threads),
            };
            let failure = self.evaluate_parted(x, warm, &mut parted, state);
            state.parted = Some(parted);
            failure
        } else {
            let failure = self
                .elements()
                .par_chunks(LANES)
                .zip(state.element_energy.par_chunks_mut(LANES))
                .zip(state.element_forces.par_chunks_mut(LANES))
                .zip(state.blocks.par_chunks_mut(144 * LANES))
                .zip(lanes_of(&mut state.points, state.keep_points, ne))
                .zip(lanes_of(&mut state.rotations, warm, ne))
                .enumerate()
                .filter_map(
                    |(group, (((((tets, energies), forces), blocks), kept), rotations))| {
                        let sinks = GroupSinks {
                            energies,
                            forces,
                            blocks,
                            kept,
                            rotations,
                        };
                        let lanes = consecutive_elements(group * LANES);
                        self.evaluate_group(x, with_k, lanes, tets.len(), sinks)
                    },
                )
                .min_by_key(|(e, _)| *e);
            if failure.is_none() && with_k {
                self.pattern().assemble(&state.blocks, &mut state.stiffness);
            }
            failure
        };
        if let Some((e, err)) = failure {
            return Err(err.at_element(e));
        }
        state.energy = state.element_energy.iter().sum();
        self.gather(&state.element_forces, &mut state.forces);
        Ok(())
    }

    /// Evaluates the elements `lanes[..count]` together (`Material::at_lanes`: the
    /// co-rotational SVDs or polar iterations overlap; a short group is padded with F = I,
    /// evaluated, then ignored) and writes lane `k`'s energy (J), forces (N), stiffness block
    /// (144 values, row-major, N/m; if `with_k`) and material point (if kept) at index `k` of
    /// `sinks`. `sinks.rotations`, when given, holds the lanes' kept rotations and receives
    /// the new ones. Returns the first lane whose law failed, by element index.
    pub(super) fn evaluate_group(
        &self,
        x: &[Vec3],
        with_k: bool,
        lanes: [usize; LANES],
        count: usize,
        sinks: GroupSinks<'_>,
    ) -> Option<(usize, DeformationError)> {
        let GroupSinks {
            energies,
            forces,
            blocks,
            mut kept,
            rotations,
        } = sinks;
        let elements = self.elements();
        let mut fs = [Mat3::identity(); LANES];
        for (f, &e) in fs.iter_mut().zip(&lanes[..count]) {
            *f = elements[e].deformation_gradient(x);
        }
        let mut failure = None;
        self.material_lanes(lanes, fs.each_ref(), rotations, |k, point| {
            if k >= count {
                return;
            }
            let tet = &elements[lanes[k]];
            let point = match point {
                Ok(p) => p,
                Err(err) => {
                    failure.get_or_insert((lanes[k], err));
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
    }
}

/// Where [`SoftBody::evaluate_group`] writes its lanes' results (lane `k` at index `k`).
pub(super) struct GroupSinks<'a> {
    /// Element energies (J).
    pub energies: &'a mut [f64],
    /// Element nodal forces (N).
    pub forces: &'a mut [[Vec3; 4]],
    /// Stiffness blocks, 144 values per lane (N/m), written when the stiffness is asked.
    pub blocks: &'a mut [f64],
    /// Material points, when kept.
    pub kept: Option<&'a mut [MaterialPoint]>,
    /// Kept rotations, read and replaced, for a warm co-rotational evaluation.
    pub rotations: Option<&'a mut [WarmRotation]>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fem::SoftBodyOptions;
    use crate::linalg::test_support::on_threads;
    use crate::material::Material;
    use crate::math::SplitMix64;
    use crate::mesh::box_mesh;

    /// A co-rotational beam (60 × 10 × 10 mm) bent, twisted about its length by `twist` (rad)
    /// from end to end, every node jittered by up to 1 mm, and its node positions (m).
    fn twisted_beam(twist: f64) -> (SoftBody, Vec<Vec3>) {
        let mesh = box_mesh([6, 2, 2], [0.0; 3], [0.06, 0.01, 0.01]).unwrap();
        let fixed = vec![false; mesh.node_count()];
        let body = SoftBody::new(
            "beam",
            mesh,
            SoftBodyOptions::for_tests(Material::new(Law::Corotational, 2e5, 0.45).unwrap(), fixed),
        )
        .unwrap();
        let mut rng = SplitMix64::new(5);
        let x = body
            .rest_positions()
            .iter()
            .map(|p| {
                let (c, s) = ((twist * p.x / 0.06).cos(), (twist * p.x / 0.06).sin());
                let (y, z) = (p.y - 0.005, p.z - 0.005);
                Vec3::new(p.x, c * y - s * z, s * y + c * z + 2.0 * p.x * p.x)
                    + 1e-3 * Vec3::new(rng.uniform(), rng.uniform(), rng.uniform())
            })
            .collect();
        (body, x)
    }

    /// Energy, forces and stiffness of `x`, by SVD (material points kept).
    fn by_svd(body: &SoftBody, x: &[Vec3]) -> ElasticState {
        let mut state = body.elastic_state();
        state.keep_material_points(true);
        body.evaluate_elastic(x, Stiffness::Assemble, &mut state)
            .unwrap();
        state
    }

    fn assert_same(a: &ElasticState, b: &ElasticState) {
        assert!((a.energy - b.energy).abs() < 1e-12 * b.energy, "energy");
        let scale = b.forces.iter().map(|f| f.norm()).fold(0.0, f64::max);
        for (fa, fb) in a.forces.iter().zip(&b.forces) {
            assert!((fa - fb).norm() < 1e-12 * scale, "force {fa} against {fb}");
        }
        let scale = b.stiffness.iter().fold(0.0, |m: f64, k| m.max(k.abs()));
        for (ka, kb) in a.stiffness.iter().zip(&b.stiffness) {
            assert!(
                (ka - kb).abs() < 1e-11 * scale,
                "stiffness {ka} against {kb}"
            );
        }
    }

    #[test]
    fn a_step_warm_started_from_the_last_rotations_is_the_svd_evaluation() {
        // A plain state starts cold (SVD), keeps every element's rotation, and the next
        // evaluations, 0.2 rad of twist further each, run Newton's polar from them: the same
        // energy, forces and stiffness as the SVD's to round-off, at every step.
        let mut state = {
            let (body, _) = twisted_beam(0.0);
            body.elastic_state()
        };
        for step in 0..4 {
            let (body, x) = twisted_beam(0.2 * step as f64);
            body.evaluate_elastic(&x, Stiffness::Assemble, &mut state)
                .unwrap();
            assert_eq!(state.rotations.len(), body.elements().len());
            assert!(state.rotations.iter().all(WarmRotation::is_warm));
            assert_same(&state, &by_svd(&body, &x));
        }
    }

    /// The energy's, forces' and stiffness's bits of `body` over three evaluations of the
    /// beam twisted by 0, 0.3 and 0.6 rad, each starting from the last one's kept state.
    fn twisting_bits(body: &SoftBody, state: &mut ElasticState) -> Vec<u64> {
        let mut bits = Vec::new();
        for step in 0..3 {
            let (_, x) = twisted_beam(0.3 * step as f64);
            body.evaluate_elastic(&x, Stiffness::Assemble, state)
                .unwrap();
            bits.push(state.energy.to_bits());
            bits.extend(
                state
                    .forces
                    .iter()
                    .flat_map(|f| f.iter().map(|v| v.to_bits())),
            );
            bits.extend(state.stiffness.iter().map(|v| v.to_bits()));
        }
        bits
    }

    #[test]
    fn one_thread_and_two_give_the_same_bits() {
        // One thread adds every element's block into K as it goes (`scatter_add`); two and
        // three split the beam into slabs along its length, each adding into the values it
        // owns (`PartedAssembly`), or, with material points kept, write the blocks and gather
        // them: the same sums in the same order, so the same bits, warm or by SVD, over
        // successive evaluations (the kept rotations the same too: the third evaluation
        // starts from the second's). Nodes 0 and 5 are pinned.
        let run = |threads: usize, keep: bool| {
            on_threads(threads, || {
                let pinned = |body: SoftBody| {
                    let mut fixed = vec![false; body.node_count()];
                    fixed[0] = true;
                    fixed[5] = true;
                    let mut options = body.options().clone();
                    options.fixed = fixed;
                    SoftBody::new("beam", body.mesh().clone(), options).unwrap()
                };
                let body = pinned(twisted_beam(0.0).0);
                let mut state = body.elastic_state();
                state.keep_material_points(keep);
                twisting_bits(&body, &mut state)
            })
        };
        for keep in [false, true] {
            let one = run(1, keep);
            for threads in [2, 3] {
                let other = run(threads, keep);
                assert_eq!(one.len(), other.len());
                let differing = one.iter().zip(&other).filter(|(a, b)| a != b).count();
                assert_eq!(
                    differing, 0,
                    "keep points {keep}, {threads} threads: {differing} values differ"
                );
            }
        }
    }

    #[test]
    fn uneven_slabs_give_the_one_thread_bits() {
        // The shares the balance of timings may choose (`slab_balance`) move elements between
        // the slabs; the sums, the forces and the kept rotations stay those of one thread,
        // over successive warm evaluations.
        let run = |threads: usize, shares: Option<&[f64]>| {
            on_threads(threads, || {
                let body = twisted_beam(0.0).0;
                let mut state = body.elastic_state();
                if let Some(shares) = shares {
                    state.parted = Some(PartedElastic::with_shares(&body, shares));
                }
                twisting_bits(&body, &mut state)
            })
        };
        let one = run(1, None);
        for shares in [&[0.8, 0.2][..], &[0.15, 0.85], &[0.1, 0.3, 0.6]] {
            let other = run(shares.len(), Some(shares));
            assert_eq!(one, other, "shares {shares:?}");
        }
    }

    #[test]
    fn the_first_failing_element_is_named_on_any_thread_count() {
        // Neo-Hookean cannot evaluate an inverted element. Nodes at both ends of the beam
        // pushed through their elements' opposite faces: the error names the inverted element
        // of lowest index (found here from det F), on one thread and on slabs of two and three.
        let (beam, mut x) = twisted_beam(0.0);
        let mut options = beam.options().clone();
        options.material = Material::new(Law::NeoHookean, 2e5, 0.45).unwrap();
        let body = SoftBody::new("beam", beam.mesh().clone(), options).unwrap();
        let last = body.node_count() - 1;
        x[0] += Vec3::new(0.02, 0.012, 0.011);
        x[last] -= Vec3::new(0.02, 0.012, 0.011);
        let inverted: Vec<usize> = (0..body.elements().len())
            .filter(|&e| body.elements()[e].deformation_gradient(&x).determinant() <= 0.0)
            .collect();
        let (first, latest) = (inverted[0], inverted[inverted.len() - 1]);
        assert!(first < body.elements().len() / 2 && latest >= body.elements().len() / 2);
        for threads in [1, 2, 3] {
            let err = on_threads(threads, || {
                let mut state = body.elastic_state();
                body.evaluate_elastic(&x, Stiffness::Assemble, &mut state)
                    .unwrap_err()
            });
            let expected = format!("tetrahedron {first}:");
            assert!(
                err.to_string().contains(&expected),
                "{threads} threads: {err}"
            );
        }
    }

    #[test]
    fn inverted_elements_get_the_svds_law() {
        // Node 0 pushed through the opposite face of its elements: some are inside out
        // (det F < 0). Newton finds the rotation-variant R where σ₂ + σ₃ > 0 and gives up
        // to the SVD near σ₂ + σ₃ = 0; either way the law is the SVD's.
        let (body, mut x) = twisted_beam(0.1);
        let mut state = body.elastic_state();
        body.evaluate_elastic(&x, Stiffness::Assemble, &mut state)
            .unwrap();
        x[0] += Vec3::new(0.02, 0.012, 0.011);
        let inverted = body
            .elements()
            .iter()
            .filter(|t| t.deformation_gradient(&x).determinant() < 0.0)
            .count();
        assert!(inverted > 0);
        body.evaluate_elastic(&x, Stiffness::Assemble, &mut state)
            .unwrap();
        assert_same(&state, &by_svd(&body, &x));
    }
}
