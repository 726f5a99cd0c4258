//! An assembled group NCP solved (`scene::step::contact::group`): its attachment rows eliminated
//! exactly first (`contact::BilateralElimination`, docs/rigid.md), then ADMM or PGS
//! (`[contact] solver`) on the contacts left, and the whole problem's solution rebuilt.

use crate::contact::{
    AdmmSolver, AttachedReduction, BilateralElimination, ContactProblem, FrictionCone, NcpSolution,
    PgsSettings, PgsSolver,
};
use crate::error::Result;
use crate::math::DMat;

use crate::scene::file::contact::{ContactSection, ContactSolverKind};

/// The solvers of a group's NCPs and the elimination's buffers, kept between steps.
#[derive(Debug, Default)]
pub(in crate::scene) struct GroupSolvers {
    pub(in crate::scene) admm: AdmmSolver,
    pub(in crate::scene) pgs: PgsSolver,
    /// The attachments' rows eliminated from an assembled NCP before it is solved.
    elimination: BilateralElimination,
    /// The warm start restricted to the contacts left after the elimination.
    reduced_warm: Vec<f64>,
    /// The attachments eliminated through the bodies' factors (G not formed), and the rigid
    /// term `U C Uᵀ` it reads.
    pub(in crate::scene) attached: AttachedReduction,
    pub(in crate::scene) rigid_u: DMat,
    pub(in crate::scene) rigid_c: DMat,
}

/// Solves `problem` with the solver of `settings` from `warm` (λ of the whole problem, 3 per
/// contact), its bilateral rows eliminated first when they can be (module doc). Returns the
/// whole problem's solution and whether a solver iterated (not when the elimination left no
/// contact: an NCP of attachments alone is one linear solve).
///
/// `solvers.admm.settings` must already hold this NCP's settings.
pub(in crate::scene) fn solve_assembled(
    problem: &ContactProblem,
    settings: &ContactSection,
    solvers: &mut GroupSolvers,
    warm: Option<&[f64]>,
) -> Result<(NcpSolution, bool)> {
    let GroupSolvers {
        admm,
        pgs,
        elimination,
        reduced_warm,
        ..
    } = solvers;
    let reduced = elimination.reduce(problem);
    let (target, warm) = match &reduced {
        Some(r) => {
            let warm = warm.map(|w| {
                elimination.restrict(w, reduced_warm);
                reduced_warm.as_slice()
            });
            (r, warm)
        }
        None => (problem, warm),
    };
    let solution = solve_if_any(target, settings, admm, pgs, warm)?;
    let iterated = solution.is_some();
    let solution = match (&reduced, solution) {
        (Some(_), solution) => {
            let (lambda, iterations) = solution
                .as_ref()
                .map_or((&[][..], 0), |s| (s.lambda.as_slice(), s.iterations));
            elimination.expand(problem, lambda, iterations, settings.tolerance)
        }
        (None, solution) => solution.expect("a problem with contacts"),
    };
    Ok((solution, iterated))
}

/// Solves `problem`, the NCP `solvers.attached` reduced a group's to, from `warm` (λ of the
/// whole group's contacts) and rebuilds the whole group's solution (its contacts' `cones`).
/// Returns it and whether a solver iterated, as [`solve_assembled`].
pub(in crate::scene) fn solve_reduced(
    problem: &ContactProblem,
    cones: &[FrictionCone],
    settings: &ContactSection,
    solvers: &mut GroupSolvers,
    warm: Option<&[f64]>,
) -> Result<(NcpSolution, bool)> {
    let GroupSolvers {
        admm,
        pgs,
        reduced_warm,
        attached,
        ..
    } = solvers;
    let warm = warm.map(|w| {
        attached.restrict(w, reduced_warm);
        reduced_warm.as_slice()
    });
    let solution = solve_if_any(problem, settings, admm, pgs, warm)?;
    let iterated = solution.is_some();
    Ok((
        attached.expand(solution.as_ref(), cones, settings.tolerance),
        iterated,
    ))
}

/// `problem` solved by the solver of `settings` from `warm`; `None`, and no solver run, when
/// it has no contact (an elimination left none).
fn solve_if_any(
    problem: &ContactProblem,
    settings: &ContactSection,
    admm: &mut AdmmSolver,
    pgs: &mut PgsSolver,
    warm: Option<&[f64]>,
) -> Result<Option<NcpSolution>> {
    if problem.contact_count() == 0 {
        return Ok(None);
    }
    Ok(Some(match settings.solver {
        ContactSolverKind::Admm => admm.solve(problem, warm)?,
        ContactSolverKind::Pgs => {
            pgs.settings = PgsSettings {
                tolerance: settings.tolerance,
                max_iterations: settings.max_iterations,
            };
            pgs.solve(problem, warm)?
        }
    }))
}
