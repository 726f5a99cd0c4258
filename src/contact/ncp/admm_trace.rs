//! The per-iteration trace of an ADMM solve
//! ([`AdmmSettings::trace`](crate::contact::AdmmSettings::trace),
//! [`AdmmSolver::last_trace`](crate::contact::AdmmSolver::last_trace)): what one debugging a
//! solve's convergence looks at, one entry per iteration. The trace reads what the solver
//! computes and, where the solver does not score an iterate itself, scores it for the trace
//! alone (one more product with `G`, into a buffer of the trace's own): a traced solve
//! returns the same forces, bit for bit, as an untraced one. Off, nothing is recorded,
//! computed or allocated.

use super::cone::FrictionCone;
use super::delassus_operator::DelassusOperator;
use super::problem::{Residuals, cone_residuals};

/// Whether a polish of the iterate on its cones' faces
/// ([`AdmmSettings::polish`](crate::contact::AdmmSettings::polish)) was tried at an iteration,
/// and whether its point was kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TracedPolish {
    /// No polish at this iteration.
    #[default]
    NotTried,
    /// Tried; its point missed the target and the iterations went on.
    Rejected,
    /// Tried and kept: the polished point replaced the iterate (and ended the solve).
    Accepted,
}

impl TracedPolish {
    /// Whether the polished point was kept.
    pub fn accepted(self) -> bool {
        self == TracedPolish::Accepted
    }
}

/// One iteration of a traced ADMM solve. Entry 0 is the starting point (the warm start or
/// λ = 0, projected on the cones, and its polish), before any iteration: its ADMM residuals,
/// ρ and target are NaN (not defined yet).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdmmTraceEntry {
    /// The iteration, from 1 (0: the starting point).
    pub iteration: usize,
    /// The penalty ρ of this iteration's updates; a change by the spectral rule shows in the
    /// next entry.
    pub rho: f64,
    /// ADMM's primal residual `‖x − y‖∞` (N) after the plain step.
    pub primal: f64,
    /// ADMM's dual residual `‖τρ(y − y_prev) + μ_prox (x − x_prev)‖∞` (m/s) after the plain
    /// step.
    pub dual: f64,
    /// The target the iteration's stopping test and polish aimed at: the tolerance, or a
    /// fraction of it while accelerated
    /// ([`AdmmSettings::accelerated_margin`](crate::contact::AdmmSettings::accelerated_margin)).
    pub target: f64,
    /// The NCP residuals (primal, dual, complementarity) of the point the iteration ended
    /// on: the plain step's `y` with `σ = G y + g`, or the polished point where a polish was
    /// kept; in the last entry, those of the returned solution.
    pub residuals: Residuals,
    /// Whether the solver's stopping test scored `residuals` itself at this iteration (a
    /// residual check, every `check_period` iterations and where ADMM's residuals are within
    /// the target); false: scored for the trace alone.
    pub checked: bool,
    /// Whether the next iterate was extrapolated by Anderson acceleration (false: the plain
    /// step, also while acceleration is on but its memory is empty or restarting).
    pub accelerated: bool,
    /// The polish tried at this iteration, if any.
    pub polish: TracedPolish,
}

impl AdmmTraceEntry {
    /// The entry of the starting point: nothing measured yet.
    pub(super) fn start() -> AdmmTraceEntry {
        AdmmTraceEntry {
            iteration: 0,
            rho: f64::NAN,
            primal: f64::NAN,
            dual: f64::NAN,
            target: f64::NAN,
            residuals: Residuals {
                primal: f64::NAN,
                dual: f64::NAN,
                complementarity: f64::NAN,
            },
            checked: false,
            accelerated: false,
            polish: TracedPolish::NotTried,
        }
    }

    /// The entry of iteration `iteration` at penalty `rho`, before its stages fill it in.
    pub(super) fn iteration(iteration: usize, rho: f64) -> AdmmTraceEntry {
        AdmmTraceEntry {
            iteration,
            rho,
            ..AdmmTraceEntry::start()
        }
    }
}

/// The solver's trace: the last solve's entries, and the velocity of the iterates it scores
/// for itself. Kept by the solver between solves.
#[derive(Debug, Default)]
pub(super) struct Trace {
    pub(super) entries: Vec<AdmmTraceEntry>,
    sigma: Vec<f64>,
}

impl Trace {
    /// Forgets the last solve's entries; sized for `m` rows where the next solve is traced
    /// (`on`).
    pub(super) fn restart(&mut self, m: usize, on: bool) {
        self.entries.clear();
        if on {
            self.sigma.resize(m, 0.0);
        }
    }

    /// The NCP residuals of forces `y` (one product with `G`, into the trace's own buffer).
    pub(super) fn score(
        &mut self,
        delassus: &mut impl DelassusOperator,
        g: &[f64],
        cones: &[FrictionCone],
        y: &[f64],
    ) -> Residuals {
        delassus.velocity(g, y, &mut self.sigma);
        cone_residuals(cones, y, &self.sigma)
    }

    /// Gives the last entry (the starting point's if there is none yet) the residuals of the
    /// returned solution.
    pub(super) fn end(&mut self, residuals: Residuals) {
        if self.entries.is_empty() {
            self.entries.push(AdmmTraceEntry::start());
        }
        if let Some(last) = self.entries.last_mut() {
            last.residuals = residuals;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::{
        AdmmSettings, AdmmSolver, ContactProblem, DelassusOperator, DenseDelassus,
        DenseShiftedFactor,
    };
    use crate::error::Result;
    use crate::math::{DMat, DVec, SplitMix64};

    /// G = JᵀJ/6n + 1e-3 I from a random (6n × 3n) J, g with mostly approaching normals,
    /// μ ∈ [0.1, 0.6].
    fn random_problem(n: usize, seed: u64) -> ContactProblem {
        let mut rng = SplitMix64::new(seed);
        let j = DMat::from_fn(6 * n, 3 * n, |_, _| rng.uniform());
        let g_mat = j.transpose() * &j / (6 * n) as f64 + 1e-3 * DMat::identity(3 * n, 3 * n);
        let g_mat = (&g_mat + g_mat.transpose()) * 0.5;
        let g = DVec::from_fn(3 * n, |i, _| {
            let u = rng.uniform();
            if i % 3 == 2 { u - 0.6 } else { u }
        });
        let mu: Vec<f64> = (0..n).map(|_| 0.35 + 0.25 * rng.uniform()).collect();
        ContactProblem::new(g_mat, g, &mu).unwrap()
    }

    /// An assembled G that the solver must not see as assembled: the matrix-free path (no
    /// polish by LU, the penalty held while the faces settle).
    struct Unassembled<'a>(DenseDelassus<'a>);

    impl DelassusOperator for Unassembled<'_> {
        fn dim(&self) -> usize {
            self.0.dim()
        }
        fn apply(&mut self, x: &[f64], out: &mut [f64]) {
            self.0.apply(x, out);
        }
        fn velocity(&mut self, g: &[f64], x: &[f64], sigma: &mut [f64]) {
            self.0.velocity(g, x, sigma);
        }
        fn factorize_shifted(&mut self, shift: f64) -> Result<()> {
            self.0.factorize_shifted(shift)
        }
        fn solve_shifted(&mut self, rhs: &mut [f64]) {
            self.0.solve_shifted(rhs);
        }
    }

    fn bits(v: &DVec) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// Solves `problem` with `settings` from `warm`, untraced and traced (through an operator
    /// that hides G where `unassembled`): the same solution bit for bit, one entry per
    /// iteration after the starting point's, and the last entry's NCP residuals those of the
    /// returned forces, recomputed here from G and g. Returns the trace.
    fn traced_alike(
        problem: &ContactProblem,
        settings: AdmmSettings,
        warm: Option<&[f64]>,
        unassembled: bool,
    ) -> Vec<AdmmTraceEntry> {
        let solve = |settings: AdmmSettings| {
            let mut solver = AdmmSolver::new(settings);
            let solution = if unassembled {
                let mut factor = DenseShiftedFactor::default();
                let mut op = Unassembled(DenseDelassus::new(problem.delassus(), &mut factor));
                let g = problem.free_velocity().as_slice();
                solver.solve_with(&mut op, g, problem.cones(), warm)
            } else {
                solver.solve(problem, warm)
            };
            (solution.unwrap(), solver.last_trace().to_vec())
        };
        let (plain, untraced) = solve(settings);
        let (traced, trace) = solve(AdmmSettings {
            trace: true,
            ..settings
        });
        assert!(untraced.is_empty(), "a trace kept with the trace off");
        assert_eq!(
            bits(&traced.lambda),
            bits(&plain.lambda),
            "λ differs when traced"
        );
        assert_eq!(
            bits(&traced.sigma),
            bits(&plain.sigma),
            "σ differs when traced"
        );
        assert_eq!(traced.iterations, plain.iterations);
        assert_eq!(traced.converged, plain.converged);
        assert_eq!(trace.len(), traced.iterations + 1);
        for (k, entry) in trace.iter().enumerate() {
            assert_eq!(entry.iteration, k);
            assert!(
                entry.residuals.max().is_finite(),
                "iteration {k} not scored"
            );
        }
        let lambda = traced.lambda.as_slice();
        let mut sigma = vec![0.0; lambda.len()];
        problem.velocity(lambda, &mut sigma);
        let recomputed = problem.residuals(lambda, &sigma);
        assert_eq!(trace.last().unwrap().residuals, recomputed);
        trace
    }

    /// The trace changes nothing of a solve, and its last residuals are the solution's: on
    /// solves that end by a polish, by the stopping test with and without acceleration, at
    /// the iteration limit, at a warm start that already solves the problem, through an
    /// operator without an assembled G, and with no contact.
    #[test]
    fn a_traced_solve_returns_the_untraced_solution_and_its_residuals() {
        let defaults = AdmmSettings::default();
        let plain = AdmmSettings {
            polish: false,
            anderson_memory: 0,
            ..defaults
        };
        let unpolished = AdmmSettings {
            polish: false,
            ..defaults
        };
        let problem = random_problem(20, 2);
        // Polished: one polish rejected, the next kept, which ends the solve.
        let trace = traced_alike(&problem, defaults, None, false);
        let polishes: Vec<_> = trace.iter().map(|e| e.polish).collect();
        assert!(polishes.contains(&TracedPolish::Rejected));
        assert_eq!(trace.last().unwrap().polish, TracedPolish::Accepted);
        assert!(trace.iter().any(|e| e.accelerated), "never accelerated");
        assert!(
            trace[1..]
                .iter()
                .all(|e| e.rho > 0.0 && e.primal >= 0.0 && e.dual >= 0.0)
        );
        // Plain ADMM, to the stopping test.
        let trace = traced_alike(&problem, plain, None, false);
        assert!(
            trace
                .iter()
                .all(|e| !e.accelerated && e.polish == TracedPolish::NotTried)
        );
        assert!(trace.last().unwrap().checked);
        assert!(trace.iter().any(|e| !e.checked));
        let last = trace.last().unwrap();
        assert!(last.residuals.max() <= last.target && last.target == defaults.tolerance);
        traced_alike(&problem, unpolished, None, false);
        // At the iteration limit.
        let limited = AdmmSettings {
            max_iterations: 7,
            ..defaults
        };
        assert_eq!(traced_alike(&problem, limited, None, false).len(), 8);
        // From a solution's own forces, polished on their faces before any iteration.
        let solution = AdmmSolver::default().solve(&problem, None).unwrap();
        let warm = Some(solution.lambda.as_slice());
        let trace = traced_alike(&problem, defaults, warm, false);
        assert_eq!(trace.len(), 1);
        assert_eq!(trace[0].polish, TracedPolish::Accepted);
        // Without an assembled G (the penalty held, no polish by LU).
        for seed in [3, 11] {
            traced_alike(&random_problem(40, seed), defaults, None, true);
        }
        let empty = ContactProblem::new(DMat::zeros(0, 0), DVec::zeros(0), &[]).unwrap();
        let trace = traced_alike(&empty, defaults, None, false);
        assert_eq!(trace[0].residuals, Residuals::default());
    }
}
