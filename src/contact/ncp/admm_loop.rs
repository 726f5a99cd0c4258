//! The stages of one ADMM iteration (`super::admm`, "The loop"), in their order: the ADMM
//! updates, the polish of faces that held, the stopping test and the polish of a converged
//! iterate, stall detection and Anderson's extrapolation, and the penalty update; each a
//! method of the solver over the solve's [`LoopState`], which also gathers the iteration's
//! trace entry.

use super::admm::AdmmSolver;
use super::admm_penalty::Penalty;
use super::admm_settings::{POLISH_MATRIX_FREE_AFTER, STALLED_CHECKS};
use super::admm_trace::AdmmTraceEntry;
use super::cone::FrictionCone;
use super::delassus_operator::DelassusOperator;
use crate::error::Result;

/// One solve's iterations: their count, the penalty, the stall watch, and what the stages
/// found of the current iteration (scalars only: the vectors are the solver's).
pub(super) struct LoopState {
    pub(super) iterations: usize,
    penalty: Penalty,
    stall: StallWatch,
    /// Whether G is assembled (then the polish runs by LU, from any iteration).
    assembled: bool,
    /// ADMM's own primal and dual residuals after the iteration's plain step, and the
    /// target of its polish and stopping test.
    primal: f64,
    dual: f64,
    target: f64,
    /// The iteration's trace entry (kept only where the settings ask for a trace).
    pub(super) entry: AdmmTraceEntry,
}

impl LoopState {
    /// Before the first iteration, at `penalty`, with or without an assembled G.
    pub(super) fn new(penalty: Penalty, assembled: bool) -> LoopState {
        LoopState {
            iterations: 0,
            penalty,
            stall: StallWatch::default(),
            assembled,
            primal: f64::NAN,
            dual: f64::NAN,
            target: f64::NAN,
            entry: AdmmTraceEntry::start(),
        }
    }

    /// Starts the next iteration (and its trace entry, at the current penalty).
    pub(super) fn begin_iteration(&mut self) {
        self.iterations += 1;
        self.entry = AdmmTraceEntry::iteration(self.iterations, self.penalty.rho);
    }
}

/// The smallest NCP residual scored so far and the residual checks since: an accelerated
/// solve whose checks stop improving for [`STALLED_CHECKS`] goes on plain.
#[derive(Debug, Clone, Copy)]
struct StallWatch {
    best: f64,
    since_best: usize,
}

impl Default for StallWatch {
    fn default() -> StallWatch {
        StallWatch {
            best: f64::INFINITY,
            since_best: 0,
        }
    }
}

impl StallWatch {
    /// Records a check's `score`; true if the checks have stalled.
    fn stalled(&mut self, score: f64) -> bool {
        if score < self.best {
            (self.best, self.since_best) = (score, 0);
            return false;
        }
        self.since_best += 1;
        self.since_best >= STALLED_CHECKS
    }
}

/// What the stopping test found.
enum Check {
    /// The NCP residuals were not scored at this iteration.
    Skipped,
    /// Scored above the target: the largest residual.
    Unmet(f64),
    /// Scored within the target: converged.
    Met,
}

impl AdmmSolver {
    /// One iteration's stages; true if the solve ends there (a polished point kept, or the
    /// stopping test met).
    pub(super) fn iteration(
        &mut self,
        delassus: &mut impl DelassusOperator,
        g: &[f64],
        cones: &[FrictionCone],
        state: &mut LoopState,
    ) -> Result<bool> {
        self.admm_updates(delassus, g, cones, state);
        if self.polish_held_faces(delassus, g, cones, state) {
            return Ok(true);
        }
        match self.stopping_test(delassus, g, cones, state) {
            Check::Met => {
                self.polish_converged(delassus, g, cones, state);
                return Ok(true);
            }
            Check::Unmet(score) => self.detect_stall(state, score),
            Check::Skipped => self.score_for_trace(delassus, g, cones, state),
        }
        self.accelerate(state);
        self.update_penalty(delassus, state)?;
        Ok(false)
    }

    /// The x-, y- and z-updates (the faces tracked on the way), ADMM's own residuals, and
    /// the target of this iteration's tests: the tolerance, a fraction of it while
    /// accelerated.
    fn admm_updates(
        &mut self,
        delassus: &mut impl DelassusOperator,
        g: &[f64],
        cones: &[FrictionCone],
        state: &mut LoopState,
    ) {
        let it = state.iterations;
        let (primal, dual) =
            self.iterate
                .update(delassus, g, cones, &state.penalty, &mut self.faces, it);
        let settings = &self.settings;
        let target = if self.anderson.is_on() {
            settings.accelerated_margin * settings.tolerance
        } else {
            settings.tolerance
        };
        (state.primal, state.dual, state.target) = (primal, dual, target);
        (state.entry.primal, state.entry.dual, state.entry.target) = (primal, dual, target);
    }

    /// Polishes the iterate once per set of faces that held long enough, a few times at most
    /// while iterating (`FaceTracker::polish_due`; without an assembled G, only from
    /// [`POLISH_MATRIX_FREE_AFTER`] iterations on: its polish costs a sparse factorisation
    /// and Newton steps); true if the polished point is kept.
    fn polish_held_faces(
        &mut self,
        delassus: &mut impl DelassusOperator,
        g: &[f64],
        cones: &[FrictionCone],
        state: &mut LoopState,
    ) -> bool {
        let allowed = state.assembled || state.iterations >= POLISH_MATRIX_FREE_AFTER;
        if !self.faces.polish_due(state.iterations, allowed) {
            return false;
        }
        let mu_prox = state.penalty.mu_prox;
        state.entry.polish = self.polish(delassus, g, cones, state.target, mu_prox);
        state.entry.polish.accepted()
    }

    /// The stopping test on the NCP residuals of `(y, G y + g)`, scored (one product with G)
    /// when ADMM's own residuals are both within the target, every `check_period`
    /// iterations, and at the limit.
    fn stopping_test(
        &mut self,
        delassus: &mut impl DelassusOperator,
        g: &[f64],
        cones: &[FrictionCone],
        state: &mut LoopState,
    ) -> Check {
        let (settings, it) = (&self.settings, state.iterations);
        if !((state.primal <= state.target && state.dual <= state.target)
            || it % settings.check_period.max(1) == 0
            || it == settings.max_iterations)
        {
            return Check::Skipped;
        }
        let residuals = self.iterate.score(delassus, g, cones);
        (state.entry.residuals, state.entry.checked) = (residuals, true);
        let score = residuals.max();
        if score <= state.target {
            Check::Met
        } else {
            Check::Unmet(score)
        }
    }

    /// Where the solve is traced, the NCP residuals of the plain step's iterate that the
    /// stopping test did not score (`super::admm_trace`).
    fn score_for_trace(
        &mut self,
        delassus: &mut impl DelassusOperator,
        g: &[f64],
        cones: &[FrictionCone],
        state: &mut LoopState,
    ) {
        if self.settings.trace {
            state.entry.residuals = self.trace.score(delassus, g, cones, &self.iterate.y);
        }
    }

    /// Polishes a converged iterate on its faces, where G is assembled and these faces were
    /// not polished already: the solution is then exact to round-off, wherever the
    /// iterations stopped (what the derivatives' finite-difference checks see of the solve).
    fn polish_converged(
        &mut self,
        delassus: &mut impl DelassusOperator,
        g: &[f64],
        cones: &[FrictionCone],
        state: &mut LoopState,
    ) {
        if !self.faces.polished() && state.assembled {
            let mu_prox = state.penalty.mu_prox;
            state.entry.polish = self.polish(delassus, g, cones, state.target, mu_prox);
        }
    }

    /// Turns Anderson acceleration off for the rest of the solve once the scored NCP
    /// residuals stop improving (`StallWatch`); `score` is this check's.
    fn detect_stall(&mut self, state: &mut LoopState, score: f64) {
        if state.stall.stalled(score) && self.anderson.is_on() {
            self.anderson.give_up();
        }
    }

    /// Anderson's extrapolation of the next iterate from the plain step, while accelerated
    /// and not at the last iteration.
    fn accelerate(&mut self, state: &mut LoopState) {
        if self.anderson.is_on() && state.iterations < self.settings.max_iterations {
            let tr = state.penalty.tau_rho();
            self.iterate.extrapolate(&mut self.anderson, tr);
            state.entry.accelerated = self.anderson.extrapolated();
        }
    }

    /// The spectral penalty rule, every `rho_update_period` iterations; held through a
    /// factor until the matrix-free polish may run, and while the faces settle before the
    /// first polish (module documentation). A change clears Anderson's memory and
    /// factorises the shifted system again.
    fn update_penalty(
        &mut self,
        delassus: &mut impl DelassusOperator,
        state: &mut LoopState,
    ) -> Result<()> {
        let settings = &self.settings;
        let period_end = state
            .iterations
            .is_multiple_of(settings.rho_update_period.max(1));
        let settling = self.faces.settling(period_end);
        let held = !state.assembled
            && settings.polish
            && (state.iterations < POLISH_MATRIX_FREE_AFTER || settling);
        let ratio = settings.ratio_primal_dual;
        if state
            .penalty
            .update(period_end && !held, state.primal, state.dual, ratio)
        {
            self.anderson.clear_memory();
            self.factorizations += 1;
            delassus.factorize_shifted(state.penalty.shift())?;
        }
        Ok(())
    }
}
