//! A read-only view of a step's mixed contact rows (the rows with a rigid part: soft nodes
//! against rigid shapes, rigid corners against soft triangles, rigid edges crossing soft
//! surface edges, attachments, and the rigid
//! stage's own contacts and limits; `diff::row_chain`), for the quasi-static analyses of
//! `control` (the coupled compliance of a rigid joint coordinate, `control::joint_effector`).
//!
//! Row block i has three rows in its frame `[t₁, t₂, n]`: the relative velocity
//! `σ_i = H_i v_soft + J_i v_rigid` (m/s), and the forces its λ_i (N) puts on the bodies are
//! `H_iᵀ λ_i` on the soft nodes and `J_iᵀ λ_i` on the rigid coordinates (N, N·m).

use crate::math::DMat;

use super::contact_chain::ContactRecord;
use super::row_chain::RowChain;

/// What a row block of [`MixedRows`] stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MixedRowKind {
    /// A unilateral contact (with friction) between a soft body and a rigid shape, or
    /// between rigid shapes.
    Contact,
    /// A joint limit of a robot.
    Limit,
    /// An attachment (bilateral, a soft node held to a rigid body or link).
    Attachment,
}

/// The mixed rows of one NCP of a step ([`ContactRecord::mixed_rows`]).
pub struct MixedRows<'a> {
    chain: &'a RowChain,
}

impl ContactRecord {
    /// The NCP's rows with a rigid part, `None` when it has none.
    pub fn mixed_rows(&self) -> Option<MixedRows<'_>> {
        self.chain.as_ref().map(|chain| MixedRows { chain })
    }
}

impl MixedRows<'_> {
    /// Number of row blocks (three rows each).
    pub fn len(&self) -> usize {
        self.chain.rows.len()
    }

    /// Whether there is no row block.
    pub fn is_empty(&self) -> bool {
        self.chain.rows.is_empty()
    }

    /// What block `i` is.
    pub fn kind(&self, i: usize) -> MixedRowKind {
        let row = &self.chain.rows[i];
        if row.limit.is_some() {
            MixedRowKind::Limit
        } else if row.attachment.is_some() {
            MixedRowKind::Attachment
        } else {
            MixedRowKind::Contact
        }
    }

    /// The rigid systems (scene order) block `i` has a side on.
    pub fn systems(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        self.chain.rows[i].sides.iter().map(|s| s.system)
    }

    /// The soft nodes the rows touch, (body, node), in the order of
    /// [`MixedRows::soft_jacobian`]'s column triples.
    pub fn soft_nodes(&self) -> &[(usize, usize)] {
        &self.chain.local
    }

    /// H (3·blocks × 3·soft nodes; columns xyz per node of [`MixedRows::soft_nodes`]).
    pub fn soft_jacobian(&self) -> &DMat {
        &self.chain.soft_jac
    }

    /// J (3·blocks × n, n the stacked coordinates of every rigid system, in scene order).
    pub fn rigid_jacobian(&self) -> &DMat {
        &self.chain.jac
    }

    /// ∂(Jᵀλ)/∂z (n × (n + 3·soft nodes)) at the step's λ, z = [q; x of the soft nodes]: how
    /// the generalised force of the rows on the rigid coordinates turns with the rigid
    /// coordinates and the soft nodes' positions (the contact points and frames move).
    pub fn force_derivative(&self) -> &DMat {
        &self.chain.dforce
    }

    /// ∂(Hᵀλ)/∂z (3·soft nodes × (n + 3·soft nodes)) at the step's λ: the same for the rows'
    /// forces on the soft nodes.
    pub fn soft_force_derivative(&self) -> &DMat {
        &self.chain.dsoft_force
    }

    /// λ of the step (N, 3 per block in its frame `[t₁, t₂, n]`).
    pub fn lambda(&self) -> &[f64] {
        &self.chain.lambda
    }
}
