//! One NCP of the last step as the contact stage keeps it ([`GroupNcp`]): the bodies it
//! couples, G, λ, σ and each contact's friction, what the step's derivatives
//! (`diff::group_ncp_derivative`) and the reports read. `scene::step::contact::group` builds and
//! solves it.

use crate::error::{Error, Result};
use crate::math::DMat;

/// One NCP of the last step: the bodies it couples (scene indices, increasing) and what was
/// solved: G (s/kg), λ (N) and σ = G λ + g (m/s) in the contacts' frames, and each contact's
/// Coulomb coefficient, in the NCP's row order (module doc).
#[derive(Debug, Clone, Default)]
pub struct GroupNcp {
    pub(in crate::scene) members: Vec<usize>,
    pub(in crate::scene) delassus: DMat,
    pub(in crate::scene) lambda: Vec<f64>,
    pub(in crate::scene) sigma: Vec<f64>,
    pub(in crate::scene) friction: Vec<f64>,
    pub(in crate::scene) friction_obstacle: Vec<Option<usize>>,
    pub(in crate::scene) bilateral: Vec<bool>,
    /// Whether G was formed; the step's derivatives need it. Not with `[contact] delassus =
    /// "factored"`, nor in a forward step whose attachment rows were eliminated through their
    /// bodies' factors (`contact::AttachedReduction`; a recording stepper forms G).
    pub(in crate::scene) assembled: bool,
}

impl GroupNcp {
    /// The bodies of the NCP (scene indices, increasing).
    pub fn members(&self) -> &[usize] {
        &self.members
    }

    /// G = Σ_b P_b h H_b A_b⁻¹ H_bᵀ P_bᵀ ((m/s)/N); empty (0×0) when it was not assembled
    /// (see [`Self::is_assembled`]).
    pub fn delassus(&self) -> &DMat {
        &self.delassus
    }

    /// Whether [`Self::delassus`] holds G: false when the NCP was solved through the body's
    /// factor (`[contact] delassus = "factored"`), or its attachment rows were eliminated
    /// through the bodies' factors in a step that keeps nothing for derivatives
    /// ([`crate::scene::BodyWorkspace::keep_for_derivatives`] off); the step's derivatives
    /// cannot use either.
    pub fn is_assembled(&self) -> bool {
        self.assembled
    }

    /// G, or the error a derivative of this NCP reports when it was not assembled.
    pub fn assembled_delassus(&self) -> Result<&DMat> {
        if self.assembled {
            Ok(&self.delassus)
        } else {
            Err(Error::invalid(
                "contact.delassus",
                "this NCP kept no Delassus matrix for the step's derivatives (\"factored\", or \
                 attachments eliminated in a step not recorded for derivatives): use \
                 \"assembled\" (the default) and a recording stepper (diff::Recorder) for \
                 sensitivities, gradients, calibrate and control",
            ))
        }
    }

    /// λ (N, 3 per contact).
    pub fn lambda(&self) -> &[f64] {
        &self.lambda
    }

    /// σ = G λ + g (m/s, 3 per contact), as the solver returned it.
    pub fn sigma(&self) -> &[f64] {
        &self.sigma
    }

    /// The Coulomb coefficient of each contact.
    pub fn friction(&self) -> &[f64] {
        &self.friction
    }

    /// Whether each contact is a bilateral row block (an attachment, K = ℝ³: always
    /// sticking for the NCP derivative).
    pub fn bilateral(&self) -> &[bool] {
        &self.bilateral
    }

    /// Per contact, the obstacle whose Coulomb coefficient it uses (`friction:OBSTACLE`):
    /// a soft node against an obstacle, or a rigid body without its own `friction` against
    /// one; `None` for every other contact.
    pub fn friction_obstacle(&self) -> &[Option<usize>] {
        &self.friction_obstacle
    }
}
