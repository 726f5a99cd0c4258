//! The ADMM contact solver of Carpentier, Le Lidec and Montaut ("From compliant to rigid
//! contact simulation: a unified and efficient approach", RSS 2024; paper 002 ref. [8]), the
//! primary NCP solver (docs/step.md).
//!
//! For a fixed De Saxcé shift `s = Γ_μ(σ)`, the NCP of [`ContactProblem`] is the optimality
//! system of the convex cone program `min ½ λᵀGλ + (g + s)ᵀλ  s.t. λ ∈ K_μ`. ADMM splits it
//! into an unconstrained copy `x`, a cone copy `y` and a multiplier `z` (a velocity), adds a
//! proximal term `μ_prox/2 ‖x − x_k‖²` (so a singular `G` is fine), and refreshes the shift
//! from `z` every iteration:
//!
//! ```text
//! s   ← Γ_μ(z)
//! x   ← (G + (μ_prox + τρ) I)⁻¹ (−g − s + τρ y + μ_prox x + z)
//! y   ← Π_K(x − z / (τρ))
//! z   ← z − τρ (x − y)
//! ```
//!
//! At a fixed point `x = y = λ`, `z = Gλ + g + Γ(σ) = σ + Γ(σ) ∈ K*` and `⟨λ, z⟩ = 0`: the NCP.
//!
//! **Adaptive penalty** (the spectral rule of the paper, `super::admm_penalty`): with `L` the
//! largest eigenvalue of `G` (Lanczos, `crate::linalg::largest_eigenpair`: `lanczos_steps`
//! products from the all-ones vector, or [`HINTED_LANCZOS_STEPS`] from a hint such as the
//! previous step's eigenvector, [`AdmmSolver::set_spectrum_hint`], which the contact stage
//! gives when an NCP's contacts are those of the last step) and `m = μ_prox` the smallest
//! eigenvalue of the proximal system, `cond = L/m`, the penalty starts at
//! `ρ = √(L m) · cond^rho_power` and is multiplied by `cond^rho_power_factor` when the primal
//! residual `‖x − y‖∞` exceeds `ratio_primal_dual` times the dual residual
//! `‖τρ(y − y_prev) + μ_prox (x − x_prev)‖∞`, divided by it in the opposite case; each change
//! refactorises `G + (μ_prox + τρ) I` (the dense LLᵀ of [`crate::contact::DenseDelassus`], or
//! the sparse one of [`crate::contact::FactoredDelassus`]). The rule is applied every
//! `rho_update_period` iterations only: applied every iteration it can flip ρ up and down
//! forever on problems with sliding contacts (the De Saxcé shift moves with z) and pays one
//! O(m³) factorisation per iteration. Through a factor (G not assembled) with the polish on, ρ
//! is held for the first [`POLISH_MATRIX_FREE_AFTER`](crate::contact::POLISH_MATRIX_FREE_AFTER)
//! iterations: there a change costs a sparse factorisation and restarts Anderson's memory,
//! which also delays the faces settling, while the solve is finished by the polish from that
//! iteration on. Past those iterations ρ is still held at an update while no polish has been
//! tried and the faces are settling (a tenth as many face changes over the last period as over
//! the one before, [`FACES_SETTLING_RATIO`](crate::contact::FACES_SETTLING_RATIO),
//! `super::admm_faces`): the polish is then a few iterations away, and the factorisation a
//! change would cost is one the polish makes useless. Here `μ_prox = prox_ratio · L`, so the
//! solver is invariant to the units of `G`.
//!
//! **Anderson acceleration** (`anderson_memory`, default 5; `super::anderson`): the three
//! updates above are a fixed-point map of `u = (y, z/τρ)` (both in N; `x` follows from them up
//! to the small proximal term, and extrapolating it too takes more iterations); type-II
//! Anderson acceleration extrapolates the next `u` from the last few iterates' differences (the
//! least-squares combination that best cancels the fixed-point residual), as Zhang, O'Donoghue
//! and Boyd do for ADMM (SIAM J. Optim. 2020), with their restart safeguard. It changes the
//! path, not the fixed point: the stopping rule below scores the plain step's `y` (in the
//! cone), aiming at [`ACCELERATED_MARGIN`](crate::contact::ACCELERATED_MARGIN) × the tolerance
//! while accelerated (so that where the iterates stop varies smoothly enough with the data for
//! the derivatives' finite-difference checks). Where extrapolation stalls (a singular G, a box
//! on four corners) it gives up, by its own count of steps without progress or after
//! [`STALLED_CHECKS`](crate::contact::STALLED_CHECKS) residual checks without a new smallest
//! NCP residual, and plain ADMM carries on.
//!
//! **Polish** (`polish`, default on; `super::polish`): the cone projection of the y-update
//! tells on which face of its cone each contact's force lies (apex: open; interior: sticking;
//! boundary: sliding). Once no contact has changed face for
//! [`POLISH_STABLE_ITERATIONS`](crate::contact::POLISH_STABLE_ITERATIONS) iterations, Newton's
//! method solves the NCP restricted to those faces from the iterate, and the result replaces it
//! if its NCP residuals meet the target (up to
//! [`POLISH_ATTEMPTS`](crate::contact::POLISH_ATTEMPTS) sets of faces per solve); a converged
//! iterate is polished too, and, with an assembled G, so is a warm start before any iteration
//! (on the faces of `λ − c σ̂`), so that solutions are exact to round-off rather than wherever
//! the iterations stopped: otherwise a resting body's steps, each warm-started from the last,
//! carry errors of the tolerance's size from step to step. With an assembled G, only where one
//! LU of the reduced system costs at most a hundred iterations; with G never formed (a
//! [`crate::contact::FactoredDelassus`]), by Newton–Krylov steps through its factor
//! (`super::polish_krylov`), while iterating only and from
//! [`POLISH_MATRIX_FREE_AFTER`](crate::contact::POLISH_MATRIX_FREE_AFTER) iterations on. The
//! figures of these choices are in docs/speed.md.
//!
//! **Stopping rule**: the iterate `λ = y` (in the cone by construction) and `σ = Gλ + g` are
//! scored with [`ContactProblem::residuals`] whenever ADMM's own primal and dual residuals are
//! both ≤ `tolerance`, and at least every `check_period` iterations (scoring costs a product
//! with the dense G, as much as the iteration itself); the solver stops as soon as all three
//! measures are ≤ `tolerance` (`converged = true`), or after `max_iterations`
//! (`converged = false`, the last iterate returned).
//!
//! **The loop.** An iteration runs these stages in this order, each a method of the solver over
//! the solve's `LoopState`: the ADMM updates (`super::admm_iterate`, telling
//! `super::admm_faces` each contact's face), the polish of faces that held, the stopping test
//! (and the polish of a converged iterate), stall detection and Anderson's extrapolation, and
//! the penalty update (`super::admm_penalty`). With [`AdmmSettings::trace`] each iteration's
//! [`AdmmTraceEntry`] is kept ([`AdmmSolver::last_trace`], `super::admm_trace`).

use super::admm_faces::FaceTracker;
use super::admm_iterate::AdmmIterate;
use super::admm_loop::LoopState;
use super::admm_penalty::Penalty;
use super::admm_settings::AdmmSettings;
use super::admm_trace::{AdmmTraceEntry, Trace, TracedPolish};
use super::anderson::Anderson;
use super::cone::FrictionCone;
use super::delassus_operator::{DelassusOperator, DenseDelassus, DenseShiftedFactor};
use super::polish::{Iterate, Polisher};
use super::problem::{ContactProblem, NcpSolution, block, cone_residuals};
use crate::error::{Error, Result};
use crate::linalg::{LanczosWorkspace, largest_eigenpair};
use crate::math::DVec;

/// The ADMM solver and its reusable buffers (sized on first use, reused while the number of
/// contacts does not grow).
#[derive(Default)]
pub struct AdmmSolver {
    /// Settings used by [`solve`](Self::solve).
    pub settings: AdmmSettings,
    /// Dense LLᵀ factor of `G + (μ_prox + τρ) I` for [`solve`](Self::solve).
    dense: DenseShiftedFactor,
    /// The iterates x, y, z and their work vectors.
    pub(super) iterate: AdmmIterate,
    pub(super) factorizations: usize,
    pub(super) anderson: Anderson,
    /// The face of its cone each contact's plain-step force lies on, and the polisher.
    pub(super) faces: FaceTracker,
    polisher: Polisher,
    polished: bool,
    /// The start of the next solve's Lanczos steps (one solve only; empty: none).
    hint: Vec<f64>,
    /// The last solve's estimate of G's leading eigenvector (unit norm; empty if none).
    eigenvector: Vec<f64>,
    lanczos: LanczosWorkspace,
    /// The last solve's iterations, where [`AdmmSettings::trace`] asked for them.
    pub(super) trace: Trace,
}

impl std::fmt::Debug for AdmmSolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdmmSolver")
            .field("settings", &self.settings)
            .finish()
    }
}

/// Lanczos steps from a hint ([`AdmmSolver::set_spectrum_hint`]): the previous NCP's vector
/// is already close to the new G's leading eigenvector, and the estimate only seeds the
/// penalty. A fixed count, so that the estimate moves smoothly with G.
pub const HINTED_LANCZOS_STEPS: usize = 3;

impl AdmmSolver {
    /// A solver with the given settings.
    pub fn new(settings: AdmmSettings) -> AdmmSolver {
        AdmmSolver {
            settings,
            ..Default::default()
        }
    }

    /// Starts the next solve's estimate of G's largest eigenvalue (which seeds the penalty)
    /// from `vector`, e.g. the [`eigenvector`](Self::eigenvector) of the previous step's NCP
    /// over the same contacts, with [`HINTED_LANCZOS_STEPS`] Lanczos steps instead of
    /// `settings.lanczos_steps` from the all-ones vector. Ignored if its length is not the
    /// next problem's or it is zero or not finite. Changes the iterates' path (through ρ),
    /// not the solution.
    pub fn set_spectrum_hint(&mut self, vector: Option<&[f64]>) {
        self.hint.clear();
        self.hint.extend_from_slice(vector.unwrap_or_default());
    }

    /// The last solve's estimate of G's leading eigenvector (unit norm), or the hint it was
    /// given if it needed none (its start already solved the problem); empty otherwise.
    pub fn eigenvector(&self) -> &[f64] {
        &self.eigenvector
    }

    /// Whether the last solve ended on a polished iterate ([`AdmmSettings::polish`]).
    pub fn last_polished(&self) -> bool {
        self.polished
    }

    /// Number of factorisations of `G + (μ_prox + τρ) I` made by the last solve (one, plus
    /// one per penalty change; zero if the starting point already solved the problem).
    pub fn last_factorizations(&self) -> usize {
        self.factorizations
    }

    /// The last solve's iterations where [`AdmmSettings::trace`] was on (empty otherwise):
    /// entry 0 the starting point, then one entry per iteration, the last one with the
    /// returned solution's NCP residuals ([`AdmmTraceEntry`]).
    pub fn last_trace(&self) -> &[AdmmTraceEntry] {
        &self.trace.entries
    }

    /// Polishes the plain step's iterate `y` on its cones' faces (`super::polish`, or
    /// `super::polish_krylov` for a G that is not assembled, with the proximal weight
    /// `mu_prox` as its preconditioner's shift) if the settings ask for it; if its point is
    /// kept, `y` becomes the polished forces.
    pub(super) fn polish(
        &mut self,
        delassus: &mut impl DelassusOperator,
        g: &[f64],
        cones: &[FrictionCone],
        target: f64,
        mu_prox: f64,
    ) -> TracedPolish {
        if !self.settings.polish {
            return TracedPolish::NotTried;
        }
        let iterate = Iterate {
            faces: &self.faces.faces,
            forces: &self.iterate.y,
        };
        let polished = match delassus.assembled() {
            Some(assembled) => self.polisher.polish(assembled, g, cones, iterate, target),
            None => self
                .polisher
                .polish_matrix_free(delassus, g, cones, iterate, target, mu_prox),
        };
        if !polished {
            return TracedPolish::Rejected;
        }
        self.iterate.y.copy_from_slice(&self.polisher.lambda);
        self.polished = true;
        TracedPolish::Accepted
    }

    /// Polishes the warm start `y` (with `z = Π_K*(σ̂)` at it) on the faces of Moreau's
    /// decomposition, where G is assembled: at a solution `λ = Π_K(λ − c σ̂)` for any
    /// `c > 0` (σ̂ = σ + Γ(σ) ∈ K*, orthogonal to λ), and the point projected lies off the
    /// faces' boundaries by `c σ̂` where λ itself does not (a sliding force lies on its
    /// cone's boundary). `c = m / tr G` (N per m/s) puts both terms in the forces' scale.
    /// Accepted if the polished point meets `tolerance` (then it is in `y`).
    fn polish_warm_start(
        &mut self,
        delassus: &mut impl DelassusOperator,
        g: &[f64],
        cones: &[FrictionCone],
        tolerance: f64,
    ) -> TracedPolish {
        let Some(assembled) = delassus.assembled() else {
            return TracedPolish::NotTried;
        };
        let m = 3 * cones.len();
        let trace: f64 = (0..m).map(|j| assembled[(j, j)]).sum();
        let c = if trace > 0.0 { m as f64 / trace } else { 1.0 };
        self.faces.faces.clear();
        for (i, cone) in cones.iter().enumerate() {
            let point = block(&self.iterate.y, i) - c * block(&self.iterate.z, i);
            self.faces.faces.push(cone.project_with_face(&point).1);
        }
        // (The proximal shift only preconditions the matrix-free polish.)
        self.polish(delassus, g, cones, tolerance, 0.0)
    }

    /// Solves the NCP of `problem`, starting from `warm_start` (a previous λ, 3 per contact)
    /// when given, from λ = 0 otherwise; `G` is used as assembled ([`DenseDelassus`]).
    ///
    /// Errors: a `warm_start` of the wrong length or not finite, invalid settings, or a
    /// Delassus matrix that is not positive semi-definite. Not converging is a status
    /// (`converged = false`), not an error.
    pub fn solve(
        &mut self,
        problem: &ContactProblem,
        warm_start: Option<&[f64]>,
    ) -> Result<NcpSolution> {
        let mut dense = std::mem::take(&mut self.dense);
        let result = self.solve_with(
            &mut DenseDelassus::new(problem.delassus(), &mut dense),
            problem.free_velocity().as_slice(),
            problem.cones(),
            warm_start,
        );
        self.dense = dense;
        result
    }

    /// As [`solve`](Self::solve) for the NCP with Delassus operator `delassus` (e.g. a
    /// [`crate::contact::FactoredDelassus`], never assembled), free contact velocity `free_velocity`
    /// (m/s, 3 per contact) and one cone per contact.
    ///
    /// Errors as [`solve`](Self::solve), and when the sizes disagree or `free_velocity` is
    /// not finite.
    pub fn solve_with(
        &mut self,
        delassus: &mut impl DelassusOperator,
        free_velocity: &[f64],
        cones: &[FrictionCone],
        warm_start: Option<&[f64]>,
    ) -> Result<NcpSolution> {
        self.settings.validate()?;
        let settings = self.settings;
        check_sizes(delassus.dim(), free_velocity, cones.len(), warm_start)?;
        let hinted = self.prepare(cones.len());
        let g = free_velocity;
        if cones.is_empty() {
            return Ok(self.finish(&mut |_, _| {}, cones, 0));
        }
        if self.start(delassus, g, cones, warm_start) {
            return Ok(self.finish(&mut |x, out| delassus.velocity(g, x, out), cones, 0));
        }
        let mut state = self.start_iterations(delassus, cones.len(), hinted)?;
        while state.iterations < settings.max_iterations {
            state.begin_iteration();
            let done = self.iteration(delassus, g, cones, &mut state)?;
            if settings.trace {
                self.trace.entries.push(state.entry);
            }
            if done {
                break;
            }
        }
        Ok(self.finish(
            &mut |x, out| delassus.velocity(g, x, out),
            cones,
            state.iterations,
        ))
    }

    /// Sizes the buffers for `n` contacts and resets the last solve's record; true if the
    /// hint ([`Self::set_spectrum_hint`], used once) will start the Lanczos steps, else the
    /// all-ones vector.
    fn prepare(&mut self, n: usize) -> bool {
        let m = 3 * n;
        self.iterate.resize(m);
        self.factorizations = 0;
        self.polished = false;
        self.trace.restart(m, self.settings.trace);
        let h = &self.hint;
        let hinted =
            h.len() == m && m > 0 && h.iter().all(|x| x.is_finite()) && h.iter().any(|&x| x != 0.0);
        self.eigenvector.clear();
        if hinted {
            self.eigenvector.extend_from_slice(h);
        }
        self.hint.clear();
        hinted
    }

    /// The starting point: `y = Π_K(warm start)`, `z = Π_K*(σ + Γ(σ))` at `σ = G y + g`, a
    /// warm start polished on its own faces first where G is assembled. True if it solves
    /// the NCP to the tolerance.
    fn start(
        &mut self,
        delassus: &mut impl DelassusOperator,
        g: &[f64],
        cones: &[FrictionCone],
        warm_start: Option<&[f64]>,
    ) -> bool {
        let tolerance = self.settings.tolerance;
        let cold = self.iterate.start(delassus, g, cones, warm_start);
        let mut entry = AdmmTraceEntry::start();
        // Polished, a step that keeps its contacts (a resting body) is solved exactly, to
        // round-off, without an iteration. Kept as it is because it meets the tolerance, a
        // resting body's next step would start from forces off by up to the tolerance, and
        // the errors add up over the steps into a motion that never decays (docs/step.md).
        if !cold {
            entry.polish = self.polish_warm_start(delassus, g, cones, tolerance);
        }
        let solved = entry.polish.accepted() || {
            let residuals = cone_residuals(cones, &self.iterate.y, &self.iterate.sigma);
            (entry.residuals, entry.checked) = (residuals, true);
            residuals.max() <= tolerance
        };
        if self.settings.trace {
            self.trace.entries.push(entry);
        }
        solved
    }

    /// Before the first iteration: the penalty from the spectrum of G, the shifted system's
    /// first factorisation, `x = y`, Anderson's memory and the faces' count restarted.
    fn start_iterations(
        &mut self,
        delassus: &mut impl DelassusOperator,
        n: usize,
        hinted: bool,
    ) -> Result<LoopState> {
        let l = self.largest_eigenvalue(delassus, hinted);
        let penalty = Penalty::from_spectrum(l, &self.settings);
        self.factorizations += 1;
        delassus.factorize_shifted(penalty.shift())?;
        self.iterate.x.copy_from_slice(&self.iterate.y);
        // Anderson's iterate u = (y, z/τρ): two vectors of 3 per contact.
        self.anderson
            .reset(self.settings.anderson_memory, 2 * (3 * n));
        self.faces.restart(n);
        Ok(LoopState::new(penalty, delassus.assembled().is_some()))
    }

    /// G's largest eigenvalue by Lanczos steps from the hint or the all-ones vector (1 where
    /// it is not positive and finite: G = 0, any scale will do). Lanczos normalises its start
    /// in place, so the eigenvector kept is a unit vector, also where G v = 0.
    fn largest_eigenvalue(&mut self, delassus: &mut impl DelassusOperator, hinted: bool) -> f64 {
        let start = &mut self.iterate.rhs;
        let steps = if hinted {
            start.copy_from_slice(&self.eigenvector);
            HINTED_LANCZOS_STEPS
        } else {
            start.fill(1.0);
            self.settings.lanczos_steps
        };
        let l = largest_eigenpair(
            |x, out| delassus.apply(x, out),
            start,
            steps,
            &mut self.lanczos,
        );
        self.eigenvector.clear();
        self.eigenvector.extend_from_slice(start);
        if !(l > 0.0) || !l.is_finite() { 1.0 } else { l }
    }

    /// The solution at the iterate `y` after `iterations` iterations: with the polisher's
    /// σ where it was polished, else `σ = G y + g` by `velocity`; its NCP residuals also go
    /// to the trace's last entry.
    fn finish(
        &mut self,
        velocity: &mut dyn FnMut(&[f64], &mut [f64]),
        cones: &[FrictionCone],
        iterations: usize,
    ) -> NcpSolution {
        let lambda = DVec::from_column_slice(&self.iterate.y);
        // A polished point comes with its σ = G λ + g, computed as `delassus` would.
        let sigma = if self.polished {
            DVec::from_column_slice(&self.polisher.sigma)
        } else {
            let mut sigma = DVec::zeros(lambda.len());
            velocity(lambda.as_slice(), sigma.as_mut_slice());
            sigma
        };
        let residuals = cone_residuals(cones, lambda.as_slice(), sigma.as_slice());
        if self.settings.trace {
            self.trace.end(residuals);
        }
        NcpSolution {
            converged: residuals.max() <= self.settings.tolerance,
            lambda,
            sigma,
            residuals,
            iterations,
        }
    }
}

/// Errors unless `dim` (G's rows), `free_velocity` and a `warm_start` have 3 entries per
/// contact of `n` and `free_velocity` and the warm start are finite.
fn check_sizes(
    dim: usize,
    free_velocity: &[f64],
    n: usize,
    warm_start: Option<&[f64]>,
) -> Result<()> {
    let m = 3 * n;
    if dim != m || free_velocity.len() != m {
        return Err(Error::invalid(
            "contact problem",
            format!(
                "{n} contacts, but G has {dim} rows and g {} entries",
                free_velocity.len()
            ),
        ));
    }
    if let Some(i) = free_velocity.iter().position(|x| !x.is_finite()) {
        return Err(Error::invalid(
            format!("free contact velocity entry {i}"),
            "not finite",
        ));
    }
    if let Some(w) = warm_start {
        if w.len() != m {
            return Err(Error::invalid(
                "ADMM warm start",
                format!("has {} entries, expected {m}", w.len()),
            ));
        }
        if w.iter().any(|x| !x.is_finite()) {
            return Err(Error::invalid("ADMM warm start", "not finite"));
        }
    }
    Ok(())
}
