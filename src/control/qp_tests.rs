//! Both QP backends on problems with closed-form answers: an unconstrained QP (a dense
//! Cholesky solve), a separable box-constrained QP (clamping), projections onto a half-space
//! and a hyperplane, plus KKT checks, infeasible and unbounded problems, the iteration limit
//! and bad input.

use super::*;
use crate::math::{DMat, DVec, SplitMix64};

fn backends() -> Vec<Box<dyn QpSolver>> {
    let settings = QpSettings::default();
    #[allow(unused_mut)]
    let mut out: Vec<Box<dyn QpSolver>> = vec![Box::new(ClarabelSolver::new(settings))];
    #[cfg(feature = "osqp")]
    out.push(Box::new(OsqpSolver::new(settings)));
    out
}

/// A vector with entries uniform in `[lo, hi)` (`SplitMix64::uniform` is uniform in [-1, 1)).
fn random_vector(rng: &mut SplitMix64, n: usize, lo: f64, hi: f64) -> DVec {
    DVec::from_fn(n, |_, _| lo + (hi - lo) * 0.5 * (rng.uniform() + 1.0))
}

/// A random symmetric positive definite matrix `BᵀB + I`.
fn random_spd(rng: &mut SplitMix64, n: usize) -> DMat {
    let b = DMat::from_fn(n, n, |_, _| 0.5 * rng.uniform());
    b.transpose() * &b + DMat::identity(n, n)
}

fn assert_close(what: &str, got: &DVec, want: &DVec, tol: f64) {
    let err = (got - want).amax();
    assert!(
        err <= tol * (1.0 + want.amax()),
        "{what}: |got - want|∞ = {err:.3e}\n got  {got}\n want {want}"
    );
}

#[test]
fn unconstrained_qp_matches_a_dense_solve() {
    let mut rng = SplitMix64::new(7);
    for n in [1, 10, 30] {
        let p = random_spd(&mut rng, n);
        let q = random_vector(&mut rng, n, -1.0, 1.0);
        let exact = -p.clone().cholesky().expect("SPD").solve(&q);
        let qp = Qp::new(p, q);
        for mut solver in backends() {
            let s = solver.solve(&qp).expect("valid QP");
            assert_eq!(s.status, QpStatus::Solved, "{} n={n}", solver.name());
            assert_close(solver.name(), &s.x, &exact, 1e-7);
            assert_close("multipliers", &s.bound_multipliers, &DVec::zeros(n), 1e-7);
            let kkt = qp.kkt_residual(&s.x, &s.bound_multipliers, &s.constraint_multipliers);
            assert!(kkt.max() < 1e-7, "{}: {kkt:?}", solver.name());
            let objective = 0.5 * exact.dot(&(&qp.p * &exact)) + qp.q.dot(&exact);
            assert!((s.objective - objective).abs() < 1e-9 * (1.0 + objective.abs()));
        }
    }
}

#[test]
fn separable_box_qp_matches_clamping() {
    // min Σ ½ d_i x_i² + q_i x_i on [lo_i, hi_i]: x_i = clamp(-q_i/d_i), multiplier
    // y_i = -(d_i x_i + q_i) (positive at the upper bound, negative at the lower one).
    let mut rng = SplitMix64::new(11);
    let n = 20;
    let d = random_vector(&mut rng, n, 0.5, 3.0);
    let q = random_vector(&mut rng, n, -2.0, 2.0);
    let lower = random_vector(&mut rng, n, -0.6, -0.1);
    let upper = random_vector(&mut rng, n, 0.1, 0.6);
    let exact = DVec::from_fn(n, |i, _| (-q[i] / d[i]).clamp(lower[i], upper[i]));
    let at_lower = (0..n).filter(|&i| exact[i] == lower[i]).count();
    let at_upper = (0..n).filter(|&i| exact[i] == upper[i]).count();
    assert!(
        at_lower > 0 && at_upper > 0 && at_lower + at_upper < n,
        "a mix of active sets"
    );
    let multipliers = DVec::from_fn(n, |i, _| -(d[i] * exact[i] + q[i]));
    let qp = Qp::new(DMat::from_diagonal(&d), q).with_bounds(lower, upper);
    for mut solver in backends() {
        let s = solver.solve(&qp).expect("valid QP");
        assert_eq!(s.status, QpStatus::Solved, "{}", solver.name());
        assert_close(solver.name(), &s.x, &exact, 1e-7);
        assert_close("multipliers", &s.bound_multipliers, &multipliers, 1e-6);
        let kkt = qp.kkt_residual(&s.x, &s.bound_multipliers, &s.constraint_multipliers);
        assert!(kkt.max() < 1e-7, "{}: {kkt:?}", solver.name());
    }
}

#[test]
fn coupled_box_qp_satisfies_kkt_and_backends_agree() {
    let mut rng = SplitMix64::new(3);
    let n = 15;
    let p = random_spd(&mut rng, n);
    let q = random_vector(&mut rng, n, -3.0, 3.0);
    let qp = Qp::new(p, q).with_bounds(DVec::from_element(n, -0.2), DVec::from_element(n, 0.3));
    let mut answers = Vec::new();
    for mut solver in backends() {
        let s = solver.solve(&qp).expect("valid QP");
        assert_eq!(s.status, QpStatus::Solved, "{}", solver.name());
        let kkt = qp.kkt_residual(&s.x, &s.bound_multipliers, &s.constraint_multipliers);
        assert!(kkt.max() < 1e-7, "{}: {kkt:?}", solver.name());
        let active = (0..n)
            .filter(|&i| s.bound_multipliers[i].abs() > 1e-6)
            .count();
        assert!(
            active > 0,
            "the bounds must bind for this test to mean something"
        );
        answers.push(s.x);
    }
    for x in &answers[1..] {
        assert_close("backends agree", x, &answers[0], 1e-6);
    }
}

#[test]
fn projection_onto_a_half_space_and_a_hyperplane() {
    // min ½‖x - a‖² s.t. Σx ≤ s (or Σx = s): x = a - t·1 with t = (Σa - s)/n (clamped at 0
    // for the inequality when the constraint is inactive); the multiplier is t.
    let mut rng = SplitMix64::new(5);
    let n = 8;
    let a = random_vector(&mut rng, n, 0.0, 1.0);
    let sum: f64 = a.sum();
    let ones = DMat::from_element(1, n, 1.0);
    for (s, equality) in [(0.5 * sum, false), (2.0 * sum, false), (2.0 * sum, true)] {
        let t = (sum - s) / n as f64;
        let t = if equality { t } else { t.max(0.0) };
        let exact = a.map(|ai| ai - t);
        let lower = if equality { s } else { f64::NEG_INFINITY };
        let qp = Qp::new(DMat::identity(n, n), -&a).with_constraints(
            ones.clone(),
            DVec::from_element(1, lower),
            DVec::from_element(1, s),
        );
        for mut solver in backends() {
            let sol = solver.solve(&qp).expect("valid QP");
            assert_eq!(sol.status, QpStatus::Solved, "{}", solver.name());
            assert_close(solver.name(), &sol.x, &exact, 1e-7);
            assert!(
                (sol.constraint_multipliers[0] - t).abs() < 1e-6,
                "{}: multiplier {} vs {t}",
                solver.name(),
                sol.constraint_multipliers[0]
            );
            let kkt = qp.kkt_residual(&sol.x, &sol.bound_multipliers, &sol.constraint_multipliers);
            assert!(kkt.max() < 1e-7, "{}: {kkt:?}", solver.name());
        }
    }
}

#[test]
fn contradictory_constraints_are_reported_infeasible() {
    // x ∈ [0, 1]², x₁ + x₂ ≥ 3.
    let qp = Qp::new(DMat::identity(2, 2), DVec::zeros(2))
        .with_bounds(DVec::zeros(2), DVec::from_element(2, 1.0))
        .with_constraints(
            DMat::from_element(1, 2, 1.0),
            DVec::from_element(1, 3.0),
            DVec::from_element(1, f64::INFINITY),
        );
    for mut solver in backends() {
        let s = solver.solve(&qp).expect("a valid (if infeasible) QP");
        assert_eq!(s.status, QpStatus::PrimalInfeasible, "{}", solver.name());
        assert!(s.x.iter().all(|v| v.is_nan()));
    }
}

#[test]
fn an_unbounded_objective_is_reported_dual_infeasible() {
    // min x₁ with x₁ free, x₂ ∈ [0, 1].
    let qp = Qp::new(DMat::zeros(2, 2), DVec::from_vec(vec![1.0, 0.0])).with_bounds(
        DVec::from_vec(vec![f64::NEG_INFINITY, 0.0]),
        DVec::from_vec(vec![f64::INFINITY, 1.0]),
    );
    for mut solver in backends() {
        let s = solver.solve(&qp).expect("a valid (if unbounded) QP");
        assert_eq!(s.status, QpStatus::DualInfeasible, "{}", solver.name());
    }
}

#[test]
fn the_iteration_limit_is_a_status() {
    let mut rng = SplitMix64::new(9);
    let n = 10;
    let qp = Qp::new(
        random_spd(&mut rng, n),
        random_vector(&mut rng, n, -3.0, 3.0),
    )
    .with_bounds(DVec::from_element(n, -0.1), DVec::from_element(n, 0.1));
    let settings = QpSettings {
        max_iterations: 1,
        ..QpSettings::default()
    };
    #[allow(unused_mut)]
    let mut solvers: Vec<Box<dyn QpSolver>> = vec![Box::new(ClarabelSolver::new(settings))];
    #[cfg(feature = "osqp")]
    solvers.push(Box::new(OsqpSolver::new(settings)));
    for mut solver in solvers {
        let s = solver.solve(&qp).expect("valid QP");
        assert_eq!(s.status, QpStatus::MaxIterations, "{}", solver.name());
        assert!(s.iterations <= 1);
    }
}

#[test]
fn bad_problems_are_errors_naming_the_part() {
    let good = Qp::new(DMat::identity(2, 2), DVec::zeros(2));
    let cases = [
        (
            good.clone()
                .with_bounds(DVec::from_element(2, 1.0), DVec::from_element(2, 0.0)),
            "bound 0",
        ),
        (
            Qp::new(DMat::identity(2, 2), DVec::from_vec(vec![0.0, f64::NAN])),
            "q",
        ),
        (
            Qp::new(
                DMat::from_row_slice(2, 2, &[1.0, 0.5, 0.0, 1.0]),
                DVec::zeros(2),
            ),
            "P",
        ),
        (Qp::new(DMat::identity(3, 3), DVec::zeros(2)), "P"),
        (
            good.clone()
                .with_constraints(DMat::zeros(1, 3), DVec::zeros(1), DVec::zeros(1)),
            "C",
        ),
        (
            good.with_constraints(
                DMat::zeros(1, 2),
                DVec::from_element(1, 1.0),
                DVec::zeros(1),
            ),
            "constraint 0",
        ),
    ];
    for (qp, what) in cases {
        for mut solver in backends() {
            let e = solver.solve(&qp).expect_err("bad input");
            assert!(e.to_string().contains(what), "{}: {e}", solver.name());
        }
    }
}

#[cfg(feature = "osqp")]
#[test]
fn osqp_warm_start_cuts_iterations_of_a_nearby_problem() {
    let mut rng = SplitMix64::new(13);
    let n = 20;
    let p = random_spd(&mut rng, n);
    let q = random_vector(&mut rng, n, -3.0, 3.0);
    let bounds = (DVec::from_element(n, -0.2), DVec::from_element(n, 0.3));
    let first = Qp::new(p.clone(), q.clone()).with_bounds(bounds.0.clone(), bounds.1.clone());
    let nearby = Qp::new(p, q.map(|v| v * (1.0 + 1e-6))).with_bounds(bounds.0, bounds.1);
    let mut cold = OsqpSolver::new(QpSettings::default());
    let cold_answer = cold.solve(&nearby).expect("valid");
    let mut warm = OsqpSolver::new(QpSettings::default());
    warm.solve(&first).expect("valid");
    let warm_answer = warm.solve(&nearby).expect("valid");
    assert_eq!(cold_answer.status, QpStatus::Solved);
    assert_eq!(warm_answer.status, QpStatus::Solved);
    assert_close("warm = cold", &warm_answer.x, &cold_answer.x, 1e-7);
    assert!(
        warm_answer.iterations < cold_answer.iterations,
        "warm {} vs cold {}",
        warm_answer.iterations,
        cold_answer.iterations
    );
    // Reproducible: the same cold solve twice takes the same number of iterations.
    let mut again = OsqpSolver::new(QpSettings::default());
    assert_eq!(
        again.solve(&nearby).expect("valid").iterations,
        cold_answer.iterations
    );
}
