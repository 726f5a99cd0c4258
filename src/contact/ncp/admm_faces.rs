//! Which face of its cone each contact's force lies on through ADMM's iterations, and what
//! the solver decides from it (`super::admm`, "Polish" and "Adaptive penalty"): when the
//! faces have held long enough to polish the iterate on them, and when they are settling, so
//! that a penalty change through a factor is held.

use super::admm_settings::{FACES_SETTLING_RATIO, POLISH_ATTEMPTS, POLISH_STABLE_ITERATIONS};
use super::cone::ConeFace;

/// The face of its cone each contact's plain-step force lies on, when one last changed, and
/// the face changes counted over the penalty periods. The faces' buffer is kept by the
/// solver between solves.
#[derive(Debug, Default)]
pub(super) struct FaceTracker {
    /// One face per contact: those of the y-update's projections while iterating (those of
    /// a warm start's Moreau decomposition for its polish).
    pub(super) faces: Vec<ConeFace>,
    /// The iteration at which a contact last changed face.
    since: usize,
    /// Whether the current faces were polished already.
    polished: bool,
    /// Polishes tried while iterating.
    attempts: usize,
    /// Face changes over the current penalty period, and over the one before (`None` before
    /// the first period ends).
    changed: usize,
    changed_before: Option<usize>,
}

impl FaceTracker {
    /// Starts the iterations of a solve over `n` contacts: every force at its cone's apex,
    /// nothing counted.
    pub(super) fn restart(&mut self, n: usize) {
        self.faces.clear();
        self.faces.resize(n, ConeFace::Apex);
        (self.since, self.polished, self.attempts) = (0, false, 0);
        (self.changed, self.changed_before) = (0, None);
    }

    /// Contact `i`'s force lies on `face` at iteration `iteration`.
    pub(super) fn track(&mut self, i: usize, face: ConeFace, iteration: usize) {
        if face != self.faces[i] {
            self.changed += 1;
            self.faces[i] = face;
            (self.since, self.polished) = (iteration, false);
        }
    }

    /// Whether to polish at iteration `iteration`, once per set of faces that held for
    /// [`POLISH_STABLE_ITERATIONS`] iterations and up to [`POLISH_ATTEMPTS`] times while
    /// iterating, where `allowed` (with an assembled G, or from
    /// [`POLISH_MATRIX_FREE_AFTER`](super::admm_settings::POLISH_MATRIX_FREE_AFTER) iterations
    /// on); a yes counts as an attempt on these faces.
    pub(super) fn polish_due(&mut self, iteration: usize, allowed: bool) -> bool {
        let due = !self.polished
            && iteration - self.since >= POLISH_STABLE_ITERATIONS
            && self.attempts < POLISH_ATTEMPTS
            && allowed;
        if due {
            self.polished = true;
            self.attempts += 1;
        }
        due
    }

    /// Whether the current faces were polished already (then a converged iterate is not
    /// polished again).
    pub(super) fn polished(&self) -> bool {
        self.polished
    }

    /// At the end of an iteration, `period_end` if a penalty period ends there: whether the
    /// faces are settling before any polish was tried (the period's face changes fewer than
    /// 1/[`FACES_SETTLING_RATIO`] of the period before's); a period's end starts the next
    /// count.
    pub(super) fn settling(&mut self, period_end: bool) -> bool {
        let settling = period_end
            && self.attempts == 0
            && self
                .changed_before
                .is_some_and(|before| self.changed.saturating_mul(FACES_SETTLING_RATIO) < before);
        if period_end {
            (self.changed_before, self.changed) = (Some(self.changed), 0);
        }
        settling
    }
}
