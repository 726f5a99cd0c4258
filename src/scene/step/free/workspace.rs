//! The buffers of stages 1–4 of one soft body's step ([`FreeWorkspace`]), sized once when the
//! stepper is built, and the wall time of each of those stages ([`FreeStageTimes`]).

use faer::dyn_stack::MemBuffer;

use crate::error::Result;
use crate::fem::{ElasticState, SoftBody};
use crate::linalg::{FactorKind, FactorOrdering, NumericFactor, SymbolicFactor, SymbolicOptions};
use crate::math::Vec3;
use crate::scene::model::actuation::BodyActuation;

use super::actuation::ActuationWorkspace;
use super::actuator_tangent::ActuatorTangent;
use super::prescribed::PrescribedWorkspace;

/// The buffers of one body's free step, with the symbolic analysis of its pattern (done once)
/// and the last step's factorisation of A, which the contact stage and every derivative reuse.
pub struct FreeWorkspace {
    pub(in crate::scene) elastic: ElasticState,
    /// K(xₙ) at the start of the step (Rayleigh damping term), when Newton iterates.
    pub(in crate::scene) k_start: Vec<f64>,
    /// A's values on the body's pattern.
    pub(in crate::scene) a: Vec<f64>,
    pub(in crate::scene) factor: NumericFactor,
    pub(in crate::scene) solve_buffer: MemBuffer,
    /// Reduced (free-DOF) vectors: the right-hand side (then Δv), v, v⁺ and Newton's scratch.
    pub(in crate::scene) rhs: Vec<f64>,
    pub(in crate::scene) v_red: Vec<f64>,
    pub(in crate::scene) vp_red: Vec<f64>,
    pub(in crate::scene) tmp: Vec<f64>,
    pub(in crate::scene) direction: Vec<f64>,
    pub(in crate::scene) base: Vec<f64>,
    /// Every DOF's velocity (3n), and the positions x + h v⁺ (n).
    pub(in crate::scene) full: Vec<f64>,
    pub(in crate::scene) x_trial: Vec<Vec3>,
    pub(in crate::scene) actuation: ActuationWorkspace,
    /// Where the force-driven cables' tangent K_a goes in A (`actuator_tangent`).
    pub(in crate::scene) tangent: ActuatorTangent,
    /// Nodal scratch: the free velocities, and K_a applied to them.
    pub(in crate::scene) nodal_v: Vec<Vec3>,
    pub(in crate::scene) nodal_f: Vec<Vec3>,
    pub(in crate::scene) prescribed: PrescribedWorkspace,
    /// The parts of the last free step.
    pub(in crate::scene) parts: FreeStageTimes,
}

/// Wall time (s) of the parts of the soft bodies' step without contact (`StageTimes::free`),
/// summed over the bodies: where a linearised implicit step spends its time beside the
/// factorisation it cannot avoid.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FreeStageTimes {
    /// Stage 1: every element's forces and stiffness at xₙ (the material law, the
    /// co-rotational polar factor) and their scatter into K.
    pub elastic: f64,
    /// Stages 1b–3: actuator inputs, A = (1 + hα) M + (hβ + h²)(K + K_a) and the right-hand
    /// side b (products with M and K). b is assembled while A is factorised: on two threads
    /// at once, so that this part and [`FreeStageTimes::factorisation`] overlap.
    pub assembly: f64,
    /// Stage 4: the numeric factorisation of A (on the symbolic analysis done once).
    pub factorisation: f64,
    /// Stage 4: the triangular solves for Δv, the displacement-driven actuators' solves, and
    /// Newton's further iterations when `newton_iterations` > 1.
    pub solve: f64,
}

impl FreeStageTimes {
    /// Adds `other`'s times to these, part by part.
    pub fn add(&mut self, other: &FreeStageTimes) {
        self.elastic += other.elastic;
        self.assembly += other.assembly;
        self.factorisation += other.factorisation;
        self.solve += other.solve;
    }
}

impl FreeWorkspace {
    /// Buffers for `body` driven by the actuators of `act`, with its `attached` nodes (ascending,
    /// each once) eliminated last in its factorisation (their Delassus rows then come from the
    /// factor's trailing block). Errors when a node pinned by an angle-driven servo is not
    /// fixed in the body.
    pub fn new(body: &SoftBody, act: &BodyActuation, attached: &[usize]) -> Result<FreeWorkspace> {
        let pattern = body.pattern();
        let dofs = pattern.dofs();
        // Ascending and each once, as the nodes are.
        let last: Vec<usize> = attached
            .iter()
            .flat_map(|&node| (0..3).filter_map(move |p| dofs.reduced_index(3 * node + p)))
            .collect();
        let options = SymbolicOptions {
            ordering: if last.is_empty() {
                FactorOrdering::Amd
            } else {
                FactorOrdering::AmdWithLast(&last)
            },
            ..Default::default()
        };
        let symbolic = std::sync::Arc::new(SymbolicFactor::with_options(pattern, options)?);
        let factor = NumericFactor::new(symbolic, FactorKind::Llt);
        let solve_buffer = MemBuffer::new(factor.solve_scratch(1));
        let n = pattern.n();
        let actuation = ActuationWorkspace::new(act, body.node_count(), &factor);
        let prescribed = PrescribedWorkspace::new(body, act)?;
        let tangent = ActuatorTangent::new(
            act,
            pattern,
            body.rest_positions(),
            &format!("soft_body.{}", body.name()),
        )?;
        Ok(FreeWorkspace {
            elastic: body.elastic_state(),
            k_start: vec![0.0; pattern.nnz()],
            a: vec![0.0; pattern.nnz()],
            factor,
            solve_buffer,
            rhs: vec![0.0; n],
            v_red: vec![0.0; n],
            vp_red: vec![0.0; n],
            tmp: vec![0.0; n],
            direction: vec![0.0; n],
            base: vec![0.0; n],
            full: vec![0.0; 3 * body.node_count()],
            x_trial: vec![Vec3::zeros(); body.node_count()],
            actuation,
            tangent,
            nodal_v: vec![Vec3::zeros(); body.node_count()],
            nodal_f: vec![Vec3::zeros(); body.node_count()],
            prescribed,
            parts: FreeStageTimes::default(),
        })
    }
}
