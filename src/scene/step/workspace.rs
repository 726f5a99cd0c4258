//! One soft body's buffers for every stage of the step ([`BodyWorkspace`]): its free step's
//! (`free::FreeWorkspace`, with the factorisation of A), its contact stage's, and v⁺; sized
//! once when the stepper is built and reused by every step.

use crate::contact::ContactPoints;
use crate::error::Result;
use crate::fem::SoftBody;
use crate::linalg::NumericFactor;
use crate::math::Vec3;
use crate::scene::model::actuation::BodyActuation;

use super::contact::workspace::ContactWorkspace;
use super::free::workspace::FreeWorkspace;

/// One soft body's buffers of the step, allocated once and reused by every step.
pub struct BodyWorkspace {
    /// Stages 1–4: forces, A, its factorisation, the right-hand side and v_free.
    pub(in crate::scene) free: FreeWorkspace,
    /// The contact stage: the body's contact points, rows and Delassus buffers.
    pub(in crate::scene) contact: ContactWorkspace,
    /// v⁺ per node (stage 5).
    pub(in crate::scene) v_new: Vec<Vec3>,
}

impl BodyWorkspace {
    /// Buffers for `body` without actuators, with the symbolic analysis of its pattern.
    pub fn new(body: &SoftBody) -> Result<BodyWorkspace> {
        BodyWorkspace::with_actuation(body, &BodyActuation::default(), ContactPoints::Nodes, &[])
    }

    /// Buffers for `body` driven by the actuators of `act`, meeting obstacles and rigid
    /// shapes at `points`, with its `attached` nodes (held to rigid bodies; ascending, each
    /// once, `SoftRigid::attached_nodes`) eliminated last in its factorisation, so that their
    /// Delassus rows come from the factor's trailing block (`contact::assemble_delassus`).
    /// Errors when a node pinned by an angle-driven servo is not fixed in the body.
    pub fn with_actuation(
        body: &SoftBody,
        act: &BodyActuation,
        points: ContactPoints,
        attached: &[usize],
    ) -> Result<BodyWorkspace> {
        let free = FreeWorkspace::new(body, act, attached)?;
        let contact = ContactWorkspace::new(body, points, &free.factor);
        Ok(BodyWorkspace {
            free,
            contact,
            v_new: vec![Vec3::zeros(); body.node_count()],
        })
    }
}

impl BodyWorkspace {
    /// The factorisation of the last step's matrix A = M + hD + h²K(xₙ) over the free DOFs
    /// (with full Newton, of the last iteration's Jacobian).
    pub fn factor(&self) -> &NumericFactor {
        &self.free.factor
    }

    /// The last step's matrix A (lower triangle on the body's pattern, the values its
    /// [`Self::factor`] factorised; kg): `diffsoro bench` times a bare refactorisation of it.
    pub fn step_matrix(&self) -> &[f64] {
        &self.free.a
    }

    /// K(xₙ) of the last linearised step on the body's pattern (N/m): the stiffness the
    /// step's derivatives need (with full Newton, K at the last iterate).
    pub fn stiffness(&self) -> &[f64] {
        &self.free.elastic.stiffness
    }

    /// f(xₙ), the elastic forces of the last linearised step (N, every node).
    pub fn forces(&self) -> &[Vec3] {
        &self.free.elastic.forces
    }

    /// The contact stage's buffers after the last step (its contacts, λ, Delassus matrix).
    pub fn contact(&self) -> &ContactWorkspace {
        &self.contact
    }

    /// Exchanges the factorisation with `other` (built on the same symbolic analysis), so a
    /// caller can keep a step's factor without copying it; the next step refactorises.
    ///
    /// Panics if `other` was analysed for another pattern.
    pub fn swap_factor(&mut self, other: &mut NumericFactor) {
        assert!(
            std::sync::Arc::ptr_eq(self.free.factor.symbolic(), other.symbolic()),
            "swap_factor: another symbolic analysis"
        );
        std::mem::swap(&mut self.free.factor, other);
    }

    /// Whether the step keeps what derivative passes reuse instead of computing again (a
    /// `diff::Recorder`'s stepper): every element's material point
    /// ([`crate::fem::ElasticState::keep_material_points`]) and every column `A⁻¹ H_cᵀ` of its
    /// Delassus matrices ([`crate::contact::DelassusWorkspace::keep_columns`]).
    pub fn keep_for_derivatives(&mut self, keep: bool) {
        self.free.elastic.keep_material_points(keep);
        self.contact.delassus_ws.keep_columns(keep);
    }

    /// Exchanges the kept material points of the last step with `other`, like
    /// [`Self::swap_factor`] (the next step refills them).
    pub fn swap_material_points(&mut self, other: &mut Vec<crate::material::MaterialPoint>) {
        std::mem::swap(&mut self.free.elastic.points, other);
    }

    /// Exchanges the stiffness values with `other` (same length), like [`Self::swap_factor`].
    pub fn swap_stiffness(&mut self, other: &mut Vec<f64>) {
        assert_eq!(
            other.len(),
            self.free.elastic.stiffness.len(),
            "swap_stiffness"
        );
        std::mem::swap(&mut self.free.elastic.stiffness, other);
    }
}
