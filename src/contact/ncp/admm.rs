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
//! **Adaptive penalty** (the spectral rule of the paper): with `L` the largest eigenvalue of
//! `G` (Lanczos, `crate::linalg::largest_eigenpair`: 8 products from the all-ones vector, or 3
//! from a hint such as the previous step's eigenvector, [`AdmmSolver::set_spectrum_hint`],
//! which the contact stage gives when an NCP's contacts are those of the last step; 8 Lanczos
//! steps estimate L better than the 20 power iterations they replaced, 6.086 against 6.036
//! on the 1,000-contact slab whose L is 6.12) and `m = μ_prox` the smallest
//! eigenvalue of the proximal system,
//! `cond = L/m`, the penalty starts at `ρ = √(L m) · cond^rho_power` and is multiplied by
//! `cond^rho_power_factor` when the primal residual `‖x − y‖∞` exceeds `ratio_primal_dual`
//! times the dual residual `‖τρ(y − y_prev) + μ_prox (x − x_prev)‖∞`, divided by it in the
//! opposite case; each change refactorises `G + (μ_prox + τρ) I` (the dense LLᵀ of
//! [`crate::contact::DenseDelassus`], or the sparse one of [`crate::contact::FactoredDelassus`]). The
//! rule is applied every `rho_update_period` iterations only: applied every iteration it can
//! flip ρ up and down forever on problems with sliding contacts (the De Saxcé shift moves
//! with z) and pays one O(m³) factorisation per iteration. Through a factor (G not assembled)
//! with the polish on, ρ is held for the first [`POLISH_MATRIX_FREE_AFTER`] iterations: there
//! a change costs a sparse factorisation (as much as ten iterations on the 1,000-contact slab)
//! and restarts Anderson's memory, which also delays the faces settling, while the solve is
//! finished by the polish from that iteration on. On the slab the faces then settle by
//! iteration 20 instead of 30 and the solve takes 144–155 ms instead of 174–183 ms; the coarse
//! PneuNet on the floor's contact stage 7.92–8.11 ms instead of 8.83–8.90 ms (docs/speed.md).
//! Past those iterations ρ is still held at an update while no polish has been tried and the
//! faces are settling (a tenth as many face changes over the last period as over the one
//! before, [`FACES_SETTLING_RATIO`]): the polish is then a few iterations away. On the
//! 1,000-contact slab, 1,337 and then 71 contacts change face over iterations 1–10 and 11–20,
//! and the change of ρ at iteration 20 (a factorisation, 15 ms) came five iterations before
//! the polish that ended the solve; held, one factorisation instead of two, and the slab
//! bench's median 136 ms instead of 144 ms (docs/speed.md).
//! Here `μ_prox = prox_ratio · L`, so the solver is invariant to the units of `G`.
//!
//! **Anderson acceleration** (`anderson_memory`, default 5): the three updates above are a
//! fixed-point map of `u = (y, z/τρ)` (both in N; `x` follows from them up to the small
//! proximal term, and extrapolating it too took more iterations); type-II Anderson acceleration
//! extrapolates the next `u` from the last few iterates' differences (the least-squares
//! combination that best cancels the fixed-point residual), as Zhang, O'Donoghue and Boyd do
//! for ADMM (SIAM J. Optim. 2020), with their restart safeguard. It changes the path, not the
//! fixed point: the stopping rule below scores the plain step's `y` (in the cone), aiming at
//! 1e-2 × the tolerance while accelerated (so that where the iterates stop varies smoothly
//! enough with the data for the derivatives' finite-difference checks). Where extrapolation
//! stalls (a singular G, a box on four corners) it gives up after 30 steps without progress
//! and plain ADMM carries on. On the slab benchmark (`benches/contact.rs`) it cuts the
//! iterations from 293 / 490 / 590 (plain, to 1e-10) to 135 / 110 / 210 (to 1e-12) at
//! 10 / 100 / 1,000 contacts (docs/speed.md).
//!
//! **Polish** (`polish`, default on; `super::polish`): the cone projection of the y-update
//! tells on which face of its cone each contact's force lies (apex: open; interior: sticking;
//! boundary: sliding). Once no contact has changed face for [`POLISH_STABLE_ITERATIONS`]
//! iterations, Newton's method solves the NCP restricted to those faces from the iterate,
//! and the result replaces it if its NCP residuals meet the target (up to
//! [`POLISH_ATTEMPTS`] sets of faces per solve); a converged iterate is polished too, and,
//! with an assembled G, so is a warm start before any iteration (on the faces of
//! `λ − c σ̂`), so that solutions are exact to round-off rather than wherever the iterations
//! stopped: a resting body's steps, each warm-started from the last, otherwise carried errors
//! of the tolerance's size from step to step (a cube on the soft block kept moving at 1e-9
//! rad/s; polished, 1e-14). On the 100-contact slab benchmark: 22 iterations and a polish
//! instead of 110 iterations (docs/speed.md). With an assembled G, only where one LU of the
//! reduced system costs at most a hundred iterations; with G never formed (a
//! [`crate::contact::FactoredDelassus`]), by Newton–Krylov steps through its factor
//! (`super::polish_krylov`), while iterating only and from [`POLISH_MATRIX_FREE_AFTER`]
//! iterations on: 25 iterations and a polish instead of 210 on the 1,000-contact slab
//! (docs/speed.md).
//!
//! **Stopping rule**: the iterate `λ = y` (in the cone by construction) and `σ = Gλ + g` are
//! scored with [`ContactProblem::residuals`] whenever ADMM's own primal and dual residuals are
//! both ≤ `tolerance`, and at least every `check_period` iterations (scoring costs a product
//! with the dense G, as much as the iteration itself); the solver stops as soon as all three
//! measures are ≤ `tolerance` (`converged = true`), or after `max_iterations`
//! (`converged = false`, the last iterate returned).

use super::admm_settings::{
    AdmmSettings, FACES_SETTLING_RATIO, POLISH_ATTEMPTS, POLISH_MATRIX_FREE_AFTER,
    POLISH_STABLE_ITERATIONS, STALLED_CHECKS,
};
use super::anderson::Anderson;
use super::cone::{ConeFace, FrictionCone};
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
    x: Vec<f64>,
    y: Vec<f64>,
    z: Vec<f64>,
    x_prev: Vec<f64>,
    y_prev: Vec<f64>,
    z_prev: Vec<f64>,
    rhs: Vec<f64>,
    sigma: Vec<f64>,
    factorizations: usize,
    anderson: Anderson,
    /// The face of its cone each contact's plain-step force lies on, and the polisher.
    faces: Vec<ConeFace>,
    polisher: Polisher,
    polished: bool,
    /// The start of the next solve's Lanczos steps (one solve only; empty: none).
    hint: Vec<f64>,
    /// The last solve's estimate of G's leading eigenvector (unit norm; empty if none).
    eigenvector: Vec<f64>,
    lanczos: LanczosWorkspace,
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

    fn resize(&mut self, m: usize) {
        for v in [
            &mut self.x,
            &mut self.y,
            &mut self.z,
            &mut self.x_prev,
            &mut self.y_prev,
            &mut self.z_prev,
            &mut self.rhs,
            &mut self.sigma,
        ] {
            v.resize(m, 0.0);
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

    /// Polishes the plain step's iterate `y` on its cones' faces (`super::polish`, or
    /// `super::polish_krylov` for a G that is not assembled, with the proximal weight
    /// `mu_prox` as its preconditioner's shift) if the settings ask for it; on success `y`
    /// becomes the polished forces.
    fn polish(
        &mut self,
        delassus: &mut impl DelassusOperator,
        g: &[f64],
        cones: &[FrictionCone],
        target: f64,
        mu_prox: f64,
    ) -> bool {
        if !self.settings.polish {
            return false;
        }
        let iterate = Iterate {
            faces: &self.faces,
            forces: &self.y,
        };
        let polished = match delassus.assembled() {
            Some(assembled) => self.polisher.polish(assembled, g, cones, iterate, target),
            None => self
                .polisher
                .polish_matrix_free(delassus, g, cones, iterate, target, mu_prox),
        };
        if !polished {
            return false;
        }
        self.y.copy_from_slice(&self.polisher.lambda);
        self.polished = true;
        true
    }

    /// Polishes the warm start `y` (with `z = Π_K*(σ̂)` at it) on the faces of Moreau's
    /// decomposition, where G is assembled: at a solution `λ = Π_K(λ − c σ̂)` for any
    /// `c > 0` (σ̂ = σ + Γ(σ) ∈ K*, orthogonal to λ), and the point projected lies off the
    /// faces' boundaries by `c σ̂` where λ itself does not (a sliding force lies on its
    /// cone's boundary). `c = m / tr G` (N per m/s) puts both terms in the forces' scale.
    /// True if the polished point meets `tolerance` (then it is in `y`).
    fn polish_warm_start(
        &mut self,
        delassus: &mut impl DelassusOperator,
        g: &[f64],
        cones: &[FrictionCone],
        tolerance: f64,
    ) -> bool {
        let Some(assembled) = delassus.assembled() else {
            return false;
        };
        let m = 3 * cones.len();
        let trace: f64 = (0..m).map(|j| assembled[(j, j)]).sum();
        let c = if trace > 0.0 { m as f64 / trace } else { 1.0 };
        self.faces.clear();
        for (i, cone) in cones.iter().enumerate() {
            let point = block(&self.y, i) - c * block(&self.z, i);
            self.faces.push(cone.project_with_face(&point).1);
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
        let n = cones.len();
        let m = 3 * n;
        if delassus.dim() != m || free_velocity.len() != m {
            return Err(Error::invalid(
                "contact problem",
                format!(
                    "{n} contacts, but G has {} rows and g {} entries",
                    delassus.dim(),
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
        self.resize(m);
        self.factorizations = 0;
        self.polished = false;
        // The Lanczos steps' start: the hint (one solve only) if usable, else all ones.
        let h = &self.hint;
        let hinted =
            h.len() == m && m > 0 && h.iter().all(|x| x.is_finite()) && h.iter().any(|&x| x != 0.0);
        self.eigenvector.clear();
        if hinted {
            self.eigenvector.extend_from_slice(h);
        }
        self.hint.clear();
        let g = free_velocity;
        let finish = |this: &mut AdmmSolver,
                      delassus: &mut dyn FnMut(&[f64], &mut [f64]),
                      iterations: usize| {
            let lambda = DVec::from_column_slice(&this.y);
            // A polished point comes with its σ = G λ + g, computed as `delassus` would.
            let sigma = if this.polished {
                DVec::from_column_slice(&this.polisher.sigma)
            } else {
                let mut sigma = DVec::zeros(m);
                delassus(lambda.as_slice(), sigma.as_mut_slice());
                sigma
            };
            let residuals = cone_residuals(cones, lambda.as_slice(), sigma.as_slice());
            NcpSolution {
                converged: residuals.max() <= settings.tolerance,
                lambda,
                sigma,
                residuals,
                iterations,
            }
        };
        if n == 0 {
            return Ok(finish(self, &mut |_, _| {}, 0));
        }

        // Initial iterate: y = Π_K(warm start), z = Π_K*(σ + Γ(σ)) at σ = G y + g.
        match warm_start {
            Some(w) => self.x.copy_from_slice(w),
            None => self.x.fill(0.0),
        }
        for (i, cone) in cones.iter().enumerate() {
            let y = cone.project(&block(&self.x, i));
            self.y[3 * i..3 * i + 3].copy_from_slice(y.as_slice());
        }
        // A cold start (or a warm start that projects to zero) has y = 0, so σ = g with no
        // product: one sparse solve fewer through a factor.
        let cold = self.y.iter().all(|&y| y == 0.0);
        if cold {
            self.sigma.copy_from_slice(g);
        } else {
            delassus.velocity(g, &self.y, &mut self.sigma);
        }
        for (i, cone) in cones.iter().enumerate() {
            let z = cone.project_dual(&cone.corrected(&block(&self.sigma, i)));
            self.z[3 * i..3 * i + 3].copy_from_slice(z.as_slice());
        }
        let assembled = delassus.assembled().is_some();
        // A warm start is polished on its own faces first where G is assembled: a step that
        // keeps its contacts (a resting body) is then solved exactly, to round-off, without
        // an iteration. Kept as it is because it met the tolerance, a resting body's next
        // step started from forces off by up to the tolerance, and the errors added up over
        // the steps that accepted them into a motion that never decayed (docs/step.md).
        if (!cold && self.polish_warm_start(delassus, g, cones, settings.tolerance))
            || cone_residuals(cones, &self.y, &self.sigma).max() <= settings.tolerance
        {
            return Ok(finish(self, &mut |x, out| delassus.velocity(g, x, out), 0));
        }

        // Penalty from the spectrum of G (Lanczos normalises the start in place, so the
        // eigenvector kept is a unit vector, also where G v = 0).
        let steps = if hinted {
            self.rhs.copy_from_slice(&self.eigenvector);
            HINTED_LANCZOS_STEPS
        } else {
            self.rhs.fill(1.0);
            settings.lanczos_steps
        };
        let mut l = largest_eigenpair(
            |x, out| delassus.apply(x, out),
            &mut self.rhs,
            steps,
            &mut self.lanczos,
        );
        self.eigenvector.clear();
        self.eigenvector.extend_from_slice(&self.rhs);
        if !(l > 0.0) || !l.is_finite() {
            l = 1.0; // G = 0: any scale will do.
        }
        let mu_prox = settings.prox_ratio * l;
        let cond = l / mu_prox;
        let mut rho = (l * mu_prox).sqrt() * cond.powf(settings.rho_power);
        // The spectral updates move ρ within 1e±8 of its start: unbounded, a long stall
        // (a rank-deficient G asked for a tolerance near round-off) grew it to infinity and the
        // iterate to NaN.
        let rho_range = (rho * 1e-8, rho * 1e8);
        let increment = cond.powf(settings.rho_power_factor);
        let tau = settings.tau;
        self.factorizations += 1;
        delassus.factorize_shifted(mu_prox + tau * rho)?;
        self.x.copy_from_slice(&self.y);
        self.anderson.reset(settings.anderson_memory, 2 * m);

        let mut iterations = 0;
        // The smallest NCP residual scored so far, and the checks since (module constant
        // STALLED_CHECKS).
        let (mut best, mut since_best) = (f64::INFINITY, 0);
        // The iteration at which a contact last changed face, and whether these faces were
        // polished already.
        self.faces.clear();
        self.faces.resize(n, ConeFace::Apex);
        let (mut faces_since, mut faces_polished, mut attempts) = (0, false, 0);
        // Face changes over the current penalty period and over the one before (None before
        // the first period ends).
        let (mut changed, mut changed_before) = (0usize, None);
        // Without an assembled G a polish costs a sparse factorisation and Newton steps: only
        // while iterating, and only for solves that take long (POLISH_MATRIX_FREE_AFTER).
        while iterations < settings.max_iterations {
            iterations += 1;
            let tr = tau * rho;
            self.x_prev.copy_from_slice(&self.x);
            self.y_prev.copy_from_slice(&self.y);
            self.z_prev.copy_from_slice(&self.z);
            // x-update: rhs = −g − Γ(z) + τρ y + μ_prox x + z.
            for (i, cone) in cones.iter().enumerate() {
                let z = block(&self.z, i);
                let s = cone.de_saxce(&z);
                for k in 0..3 {
                    let j = 3 * i + k;
                    self.rhs[j] = -g[j] - s[k] + tr * self.y[j] + mu_prox * self.x[j] + z[k];
                }
            }
            delassus.solve_shifted(&mut self.rhs);
            self.x.copy_from_slice(&self.rhs);
            // y-update (cone projection) and z-update (multiplier).
            for (i, cone) in cones.iter().enumerate() {
                let x = block(&self.x, i);
                let z = block(&self.z, i);
                let (y, face) = cone.project_with_face(&(x - z / tr));
                if face != self.faces[i] {
                    changed += 1;
                    self.faces[i] = face;
                    (faces_since, faces_polished) = (iterations, false);
                }
                let z = z - tr * (x - y);
                self.y[3 * i..3 * i + 3].copy_from_slice(y.as_slice());
                self.z[3 * i..3 * i + 3].copy_from_slice(z.as_slice());
            }
            // ADMM's own primal and dual residuals.
            let mut primal = 0.0f64;
            let mut dual = 0.0f64;
            for j in 0..m {
                primal = primal.max((self.x[j] - self.y[j]).abs());
                dual = dual.max(
                    (tr * (self.y[j] - self.y_prev[j]) + mu_prox * (self.x[j] - self.x_prev[j]))
                        .abs(),
                );
            }
            let target = if self.anderson.is_on() {
                settings.accelerated_margin * settings.tolerance
            } else {
                settings.tolerance
            };
            // Polish once per set of faces that held for POLISH_STABLE_ITERATIONS, up to
            // POLISH_ATTEMPTS times while iterating.
            if !faces_polished
                && iterations - faces_since >= POLISH_STABLE_ITERATIONS
                && attempts < POLISH_ATTEMPTS
                && (assembled || iterations >= POLISH_MATRIX_FREE_AFTER)
            {
                faces_polished = true;
                attempts += 1;
                if self.polish(delassus, g, cones, target, mu_prox) {
                    break;
                }
            }
            // Stopping rule on the NCP residuals of (y, G y + g), scored (one product with G)
            // when ADMM's own residuals are both below the tolerance, every
            // `check_period` iterations, and at the limit.
            if (primal <= target && dual <= target)
                || iterations % settings.check_period.max(1) == 0
                || iterations == settings.max_iterations
            {
                delassus.velocity(g, &self.y, &mut self.sigma);
                let score = cone_residuals(cones, &self.y, &self.sigma).max();
                if score <= target {
                    // Converged: polished on its faces where that works, the solution is exact
                    // to round-off, wherever the iterations stopped (what the derivatives'
                    // finite-difference checks see of the solve).
                    if !faces_polished && assembled {
                        self.polish(delassus, g, cones, target, mu_prox);
                    }
                    break;
                }
                if score < best {
                    (best, since_best) = (score, 0);
                } else {
                    since_best += 1;
                    if since_best >= STALLED_CHECKS && self.anderson.is_on() {
                        self.anderson.give_up();
                    }
                }
            }
            // Anderson extrapolation of u = (y, z/τρ) (both in N) from the plain step.
            if self.anderson.is_on() && iterations < settings.max_iterations {
                let (input, image) = self.anderson.slots();
                for (k, (prev, now)) in [(&self.y_prev, &self.y), (&self.z_prev, &self.z)]
                    .into_iter()
                    .enumerate()
                {
                    let scale = if k == 1 { 1.0 / tr } else { 1.0 };
                    for (j, (p, q)) in prev.iter().zip(now.iter()).enumerate() {
                        input[k * m + j] = p * scale;
                        image[k * m + j] = q * scale;
                    }
                }
                let next = self.anderson.extrapolate();
                self.y.copy_from_slice(&next[..m]);
                for (z, v) in self.z.iter_mut().zip(&next[m..]) {
                    *z = v * tr;
                }
            }
            // Spectral penalty update, every `rho_update_period` iterations; held through a
            // factor until the matrix-free polish may run, and while the faces settle before
            // the first polish (module documentation).
            let update = iterations % settings.rho_update_period.max(1) == 0;
            let settling = update
                && attempts == 0
                && changed_before
                    .is_some_and(|before| changed.saturating_mul(FACES_SETTLING_RATIO) < before);
            if update {
                (changed_before, changed) = (Some(changed), 0);
            }
            let held = !assembled
                && settings.polish
                && (iterations < POLISH_MATRIX_FREE_AFTER || settling);
            let new_rho = if held || !update {
                rho
            } else if primal > settings.ratio_primal_dual * dual {
                rho * increment
            } else if dual > settings.ratio_primal_dual * primal {
                rho / increment
            } else {
                rho
            };
            let new_rho = new_rho.clamp(rho_range.0, rho_range.1);
            if new_rho != rho {
                rho = new_rho;
                self.anderson.clear_memory();
                self.factorizations += 1;
                delassus.factorize_shifted(mu_prox + tau * rho)?;
            }
        }
        Ok(finish(
            self,
            &mut |x, out| delassus.velocity(g, x, out),
            iterations,
        ))
    }
}
