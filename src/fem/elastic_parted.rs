//! The element loop of a step on more than one thread: each thread evaluates the elements of
//! its slab of the mesh and adds their stiffness blocks into the values it owns
//! ([`crate::linalg::PartedAssembly`]), while they are still in cache; the elements across
//! two slabs are evaluated by both. The same sums in the same order as the one-thread loop,
//! so the same bits, without writing every block to a buffer and gathering it after. The
//! slabs' shares of the elements follow the threads' measured timings
//! ([`super::slab_balance`]), so that the threads finish together.

use rayon::prelude::*;

use crate::linalg::PartedAssembly;
use crate::material::{DeformationError, WarmRotation};
use crate::math::Vec3;

use super::elastic::{ElasticState, GroupSinks, LANES};
use super::node_slabs::node_slabs;
use super::slab_balance::{PartTiming, SlabBalance};
use super::soft_body::SoftBody;

/// The parts of a body's element loop for one thread count, each part's buffers, and the
/// balance of their shares.
#[derive(Debug, Clone)]
pub(super) struct PartedElastic {
    assembly: PartedAssembly,
    buffers: Vec<PartBuffers>,
    balance: SlabBalance,
}

/// What one part writes while the parts run, copied into the [`ElasticState`] after.
#[derive(Debug, Clone, Default)]
struct PartBuffers {
    /// The stiffness values the part owns (N/m), in its slot order.
    values: Vec<f64>,
    /// The results of the elements whose home is this part, in increasing element order.
    homes: Vec<HomeResult>,
    /// The part's first element (lowest index) whose law failed.
    failure: Option<(usize, DeformationError)>,
    /// When the part started and how long it took, in the last evaluation.
    timing: PartTiming,
}

/// One element's energy (J), nodal forces (N) and new kept rotation.
#[derive(Debug, Clone)]
struct HomeResult {
    element: usize,
    energy: f64,
    forces: [Vec3; 4],
    rotation: WarmRotation,
}

impl PartedElastic {
    /// The loop of `body` split into `parts` slabs of equal element counts across its longest
    /// axis.
    pub(super) fn new(body: &SoftBody, parts: usize) -> PartedElastic {
        PartedElastic::with_balance(body, SlabBalance::new(parts))
    }

    /// The loop of `body` split into slabs with the element shares `shares`, one per part, as
    /// the balance of timings may choose.
    #[cfg(test)]
    pub(super) fn with_shares(body: &SoftBody, shares: &[f64]) -> PartedElastic {
        PartedElastic::with_balance(body, SlabBalance::with_shares(shares.to_vec()))
    }

    fn with_balance(body: &SoftBody, mut balance: SlabBalance) -> PartedElastic {
        let parts = balance.shares().len();
        let assembly = parted_assembly(body, &mut balance);
        PartedElastic {
            assembly,
            buffers: vec![PartBuffers::default(); parts],
            balance,
        }
    }

    /// The number of parts.
    pub(super) fn parts(&self) -> usize {
        self.buffers.len()
    }
}

/// The assembly of `body`'s elements split into slabs with the element shares of `balance`,
/// which learns how long that took.
fn parted_assembly(body: &SoftBody, balance: &mut SlabBalance) -> PartedAssembly {
    let clock = std::time::Instant::now();
    let shares = balance.shares();
    let slabs = node_slabs(body.rest_positions(), body.elements(), shares);
    let assembly = body.pattern().parted_assembly(&slabs, shares.len());
    balance.set_build_time(clock.elapsed().as_secs_f64());
    assembly
}

impl SoftBody {
    /// Energies, forces and stiffness of every element at positions `x` (m), the parts of
    /// `parted` in parallel, written into `state` (its kept rotations read, when `warm`, and
    /// replaced). Returns the first element (lowest index) whose law failed. Each part's
    /// timing goes to the balance of the shares, which may split the slabs anew for the next
    /// evaluation.
    pub(super) fn evaluate_parted(
        &self,
        x: &[Vec3],
        warm: bool,
        parted: &mut PartedElastic,
        state: &mut ElasticState,
    ) -> Option<(usize, DeformationError)> {
        let kept_rotations = &state.rotations;
        let clock = std::time::Instant::now();
        let caller = rayon::current_thread_index();
        parted
            .buffers
            .par_iter_mut()
            .zip(parted.assembly.parts())
            .for_each(|(buffers, part)| {
                let start = clock.elapsed().as_secs_f64();
                buffers.values.clear();
                buffers.values.resize(part.value_count(), 0.0);
                buffers.homes.clear();
                buffers.failure = None;
                let mut energies = [0.0; LANES];
                let mut forces = [[Vec3::zeros(); 4]; LANES];
                let mut blocks = [0.0; 144 * LANES];
                for (g, group) in part.cliques().chunks(LANES).enumerate() {
                    let mut lanes = [usize::MAX; LANES];
                    for (lane, &e) in lanes.iter_mut().zip(group) {
                        *lane = e as usize;
                    }
                    let mut rotations = [WarmRotation::COLD; LANES];
                    if warm {
                        for (r, &e) in rotations.iter_mut().zip(group) {
                            *r = kept_rotations[e as usize];
                        }
                    }
                    let sinks = GroupSinks {
                        energies: &mut energies,
                        forces: &mut forces,
                        blocks: &mut blocks,
                        kept: None,
                        rotations: warm.then_some(&mut rotations[..group.len()]),
                    };
                    let failure = self.evaluate_group(x, true, lanes, group.len(), sinks);
                    buffers.failure = buffers.failure.or(failure);
                    for k in 0..group.len() {
                        let i = g * LANES + k;
                        part.scatter_add(i, &blocks[144 * k..144 * (k + 1)], &mut buffers.values);
                        if part.is_home(i) {
                            buffers.homes.push(HomeResult {
                                element: lanes[k],
                                energy: energies[k],
                                forces: forces[k],
                                rotation: rotations[k],
                            });
                        }
                    }
                }
                buffers.timing = PartTiming {
                    start,
                    busy: clock.elapsed().as_secs_f64() - start,
                    elements: part.cliques().len(),
                    caller: caller.is_some() && rayon::current_thread_index() == caller,
                };
            });
        let end = clock.elapsed().as_secs_f64();
        // Two copies into different buffers, side by side on two threads (the other thread
        // has just finished its part and is still awake): K's values from the parts' own, and
        // every element's results from its home part.
        let ElasticState {
            stiffness,
            element_energy,
            element_forces,
            rotations,
            ..
        } = state;
        let (assembly, buffers) = (&parted.assembly, &parted.buffers);
        rayon::join(
            || assembly.write(buffers.iter().map(|b| b.values.as_slice()), stiffness),
            || {
                for home in buffers.iter().flat_map(|b| &b.homes) {
                    element_energy[home.element] = home.energy;
                    element_forces[home.element] = home.forces;
                    if warm {
                        rotations[home.element] = home.rotation;
                    }
                }
            },
        );
        let timings = parted.buffers.iter().map(|b| b.timing);
        if parted.balance.record(timings, end) {
            parted.assembly = parted_assembly(self, &mut parted.balance);
        }
        parted
            .buffers
            .iter_mut()
            .filter_map(|b| b.failure.take())
            .min_by_key(|(e, _)| *e)
    }
}
