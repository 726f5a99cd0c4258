//! The contact NCP solvers on problems whose answer is known independently: Signorini and
//! Coulomb checked directly from G and g on random well-posed problems (ADMM and PGS must
//! agree), closed-form single contacts (breaking, sticking, sliding), a block on an incline
//! (sticks iff tan θ < μ), warm starts and iteration limits.

use diffsoro::contact::{
    AdmmSettings, AdmmSolver, ContactJacobian, ContactProblem, DelassusWorkspace, NcpSolution,
    PgsSettings, PgsSolver, assemble_delassus, free_contact_velocity,
};
use diffsoro::linalg::{FactorKind, NumericFactor, SymbolicFactor, SymmetricPattern};
use diffsoro::math::{DMat, DVec, Mat3, SplitMix64, Vec3};
use std::sync::Arc;

/// The shared test generator, numbers in [-1, 1).
struct Rng(SplitMix64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0.uniform()
    }
}

/// G = JᵀJ + εI from a random (6n × 3n) J, g with mostly approaching normals, μ ∈ [0.1, 0.6].
fn random_problem(n: usize, seed: u64) -> (DMat, DVec, Vec<f64>) {
    let mut rng = Rng(SplitMix64::new(seed));
    let j = DMat::from_fn(6 * n, 3 * n, |_, _| rng.next());
    let g_mat = j.transpose() * &j / (6 * n) as f64 + 1e-3 * DMat::identity(3 * n, 3 * n);
    let g = DVec::from_fn(3 * n, |i, _| {
        if i % 3 == 2 {
            rng.next() - 0.6
        } else {
            rng.next()
        }
    });
    let mu = (0..n).map(|_| 0.35 + 0.25 * rng.next()).collect();
    (g_mat, g, mu)
}

/// Checks Signorini and Coulomb directly from G, g and μ (not through the library's
/// residuals): λ in the cone, σ_N ≥ 0, λ_N σ_N = 0, and maximal dissipation
/// λ_T·σ_T = −μ λ_N ‖σ_T‖.
fn assert_solves(g_mat: &DMat, g: &DVec, mu: &[f64], s: &NcpSolution, tol: f64) {
    let sigma = g_mat * &s.lambda + g;
    assert!((&sigma - &s.sigma).amax() < 1e-12, "returned σ ≠ Gλ + g");
    for (i, &m) in mu.iter().enumerate() {
        let l = Vec3::new(s.lambda[3 * i], s.lambda[3 * i + 1], s.lambda[3 * i + 2]);
        let v = Vec3::new(sigma[3 * i], sigma[3 * i + 1], sigma[3 * i + 2]);
        let lt = l.x.hypot(l.y);
        let vt = v.x.hypot(v.y);
        assert!(l.z >= -tol, "contact {i}: λ_N = {}", l.z);
        assert!(lt <= m * l.z + tol, "contact {i}: outside the cone");
        assert!(v.z >= -tol, "contact {i}: σ_N = {}", v.z);
        assert!(
            (l.z * v.z).abs() <= tol,
            "contact {i}: λ_N σ_N = {}",
            l.z * v.z
        );
        let dissipation = l.x * v.x + l.y * v.y + m * l.z * vt;
        assert!(
            dissipation.abs() <= tol,
            "contact {i}: λ_T·σ_T + μλ_N‖σ_T‖ = {dissipation}"
        );
    }
}

#[test]
fn random_problems_solved_by_admm_and_pgs_alike() {
    for (n, seed) in [(1, 1), (4, 2), (10, 3), (25, 4)] {
        let (g_mat, g, mu) = random_problem(n, seed);
        let p = ContactProblem::new(g_mat.clone(), g.clone(), &mu).unwrap();
        let admm = AdmmSolver::default().solve(&p, None).unwrap();
        let pgs = PgsSolver::default().solve(&p, None).unwrap();
        assert!(admm.converged, "ADMM n = {n}: {:?}", admm.residuals);
        assert!(pgs.converged, "PGS n = {n}: {:?}", pgs.residuals);
        assert_solves(&g_mat, &g, &mu, &admm, 1e-9);
        assert_solves(&g_mat, &g, &mu, &pgs, 1e-9);
        let diff = (&admm.lambda - &pgs.lambda).amax();
        assert!(
            diff < 1e-7 * (1.0 + admm.lambda.amax()),
            "n = {n}: ADMM and PGS differ by {diff}"
        );
        // Not a trivial problem: some contacts push.
        assert!(admm.lambda.amax() > 1e-3);
    }
}

/// One contact, G = diag(a, a, b), g = (gx, gy, gz): breaking when gz ≥ 0; otherwise
/// λ_N = −gz/b, sticking with λ_T = −g_T/a when ‖g_T‖/a ≤ μ λ_N, else sliding with
/// λ_T = −μ λ_N g_T/‖g_T‖ and σ_T = g_T (1 − a μ λ_N/‖g_T‖).
#[test]
fn single_contact_closed_form() {
    let (a, b, mu) = (2.0, 0.5, 0.4);
    let g_mat = DMat::from_diagonal(&DVec::from_vec(vec![a, a, b]));
    for (gx, gy, gz) in [
        (0.3, -0.2, 0.7),  // breaking
        (0.1, 0.15, -0.5), // ‖g_T‖/a ≈ 0.09 ≤ μ λ_N = 0.4
        (0.6, -0.8, -0.5), // ‖g_T‖/a = 0.5 > 0.4: sliding
    ] {
        let g = DVec::from_vec(vec![gx, gy, gz]);
        let (expected_lambda, expected_sigma) = if gz >= 0.0 {
            (Vec3::zeros(), Vec3::new(gx, gy, gz))
        } else {
            let ln = -gz / b;
            let gt = (gx * gx + gy * gy).sqrt();
            if gt / a <= mu * ln {
                (Vec3::new(-gx / a, -gy / a, ln), Vec3::zeros())
            } else {
                let k = 1.0 - a * mu * ln / gt;
                (
                    Vec3::new(-mu * ln * gx / gt, -mu * ln * gy / gt, ln),
                    Vec3::new(gx * k, gy * k, 0.0),
                )
            }
        };
        let p = ContactProblem::new(g_mat.clone(), g, &[mu]).unwrap();
        for s in [
            AdmmSolver::default().solve(&p, None).unwrap(),
            PgsSolver::default().solve(&p, None).unwrap(),
        ] {
            assert!(s.converged);
            let l = Vec3::new(s.lambda[0], s.lambda[1], s.lambda[2]);
            let v = Vec3::new(s.sigma[0], s.sigma[1], s.sigma[2]);
            assert!(
                (l - expected_lambda).norm() < 1e-9,
                "{l:?} vs {expected_lambda:?}"
            );
            assert!(
                (v - expected_sigma).norm() < 1e-9,
                "{v:?} vs {expected_sigma:?}"
            );
        }
    }
}

/// A point mass m at rest on a plane inclined by θ about y, one step of size h under gravity,
/// through the Delassus assembly (A = M = m I on one node): it sticks iff tan θ < μ; when it
/// slides, its velocity points down the slope with speed h g (sin θ − μ cos θ).
#[test]
fn block_on_incline_sticks_iff_tan_theta_below_mu() {
    let (m, h, grav, mu): (f64, f64, f64, f64) = (0.3, 0.01, 9.81, 0.5);
    let pattern = SymmetricPattern::new(1, 3, &[[0usize]], &[false; 3]).unwrap();
    let mut values = vec![0.0; pattern.nnz()];
    pattern.add_diagonal(&mut values, 1.0, &[m; 3]);
    let mut factor = NumericFactor::new(
        Arc::new(SymbolicFactor::new(&pattern).unwrap()),
        FactorKind::Llt,
    );
    factor.factorize(&pattern, &values).unwrap();
    let threshold = mu.atan();
    for (theta, sticks) in [
        (threshold - 0.05, true),
        (threshold - 1e-3, true),
        (threshold + 1e-3, false),
        (threshold + 0.05, false),
    ] {
        let (s, c) = (f64::sin(theta), f64::cos(theta));
        let up_slope = Vec3::new(c, 0.0, s);
        let normal = Vec3::new(-s, 0.0, c);
        let frame = Mat3::from_columns(&[up_slope, Vec3::y(), normal]);
        let mut jac = ContactJacobian::new(1);
        jac.push_point_contact(&frame, &[(0, 1.0)]).unwrap();
        let mut g_mat = DMat::zeros(0, 0);
        assemble_delassus(
            h,
            &jac,
            pattern.dofs(),
            &factor,
            &mut DelassusWorkspace::default(),
            &mut g_mat,
        )
        .unwrap();
        let v_free = [Vec3::new(0.0, 0.0, -h * grav)];
        let mut g = [0.0; 3];
        free_contact_velocity(&jac, &v_free, &mut g);
        let p = ContactProblem::new(g_mat, DVec::from_column_slice(&g), &[mu]).unwrap();
        for sol in [
            AdmmSolver::default().solve(&p, None).unwrap(),
            PgsSolver::default().solve(&p, None).unwrap(),
        ] {
            assert!(sol.converged);
            let v = sol.sigma[0] * up_slope + sol.sigma[1] * Vec3::y() + sol.sigma[2] * normal;
            // The normal force balances the weight's normal part: λ_N h = m h g cos θ / h.
            // A residual ≤ tol (m/s) on σ = (h/m) λ + g bounds the force error by tol·m/h.
            let bound = 1e-10 * m / h;
            let err = (sol.lambda[2] - m * grav * c).abs();
            assert!(err < bound, "θ = {theta}: λ_N error {err} > {bound}");
            if sticks {
                assert!(v.norm() < 1e-10, "θ = {theta}: moves with {v:?}");
            } else {
                let down = -up_slope;
                let speed = h * grav * (s - mu * c);
                assert!(speed > 0.0);
                assert!((v - speed * down).norm() < 1e-10, "θ = {theta}: {v:?}");
                assert!(v.dot(&down) > 0.0);
            }
        }
    }
}

#[test]
fn warm_start_saves_iterations_and_limits_are_a_status() {
    let (g_mat, g, mu) = random_problem(10, 9);
    let p = ContactProblem::new(g_mat.clone(), g.clone(), &mu).unwrap();
    let mut admm = AdmmSolver::default();
    let mut pgs = PgsSolver::default();
    let cold_admm = admm.solve(&p, None).unwrap();
    let cold_pgs = pgs.solve(&p, None).unwrap();
    assert!(cold_admm.converged && cold_pgs.converged);
    assert!(cold_admm.iterations > 1 && cold_pgs.iterations > 1);
    // A nearby problem (the next step): warm starts from the previous λ need fewer iterations.
    let g2 = &g * 1.01;
    let p2 = ContactProblem::new(g_mat, g2.clone(), &mu).unwrap();
    let cold2 = AdmmSolver::default().solve(&p2, None).unwrap();
    let warm2 = admm.solve(&p2, Some(cold_admm.lambda.as_slice())).unwrap();
    assert!(warm2.converged);
    assert!(
        warm2.iterations < cold2.iterations,
        "ADMM warm {} vs cold {}",
        warm2.iterations,
        cold2.iterations
    );
    let cold2 = PgsSolver::default().solve(&p2, None).unwrap();
    let warm2 = pgs.solve(&p2, Some(cold_pgs.lambda.as_slice())).unwrap();
    assert!(warm2.converged);
    assert!(
        warm2.iterations < cold2.iterations,
        "PGS warm {} vs cold {}",
        warm2.iterations,
        cold2.iterations
    );
    // Too few iterations: a status, not a panic.
    let mut admm = AdmmSolver::new(AdmmSettings {
        max_iterations: 2,
        ..Default::default()
    });
    let s = admm.solve(&p, None).unwrap();
    assert!(!s.converged && s.iterations == 2 && s.residuals.max() > 1e-10);
    let mut pgs = PgsSolver::new(PgsSettings {
        max_iterations: 2,
        ..Default::default()
    });
    let s = pgs.solve(&p, None).unwrap();
    assert!(!s.converged && s.iterations == 2);
    // Bad warm starts are errors.
    assert!(AdmmSolver::default().solve(&p, Some(&[0.0; 2])).is_err());
    assert!(
        PgsSolver::default()
            .solve(&p, Some(&[f64::NAN; 30]))
            .is_err()
    );
}

/// Frictionless contacts (μ = 0: the cone is a ray, its dual a half-space) and a singular
/// Delassus matrix (two identical contacts on one point, G = [[W, W], [W, W]]): the NCP
/// conditions still hold at the returned solution (λ is not unique in the second case, so
/// only the conditions are checked).
#[test]
fn frictionless_and_singular_problems() {
    let (g_mat, g, _) = random_problem(6, 21);
    let mu = vec![0.0; 6];
    let p = ContactProblem::new(g_mat.clone(), g.clone(), &mu).unwrap();
    let admm = AdmmSolver::default().solve(&p, None).unwrap();
    let pgs = PgsSolver::default().solve(&p, None).unwrap();
    assert!(admm.converged && pgs.converged);
    assert_solves(&g_mat, &g, &mu, &admm, 1e-9);
    assert_solves(&g_mat, &g, &mu, &pgs, 1e-9);
    assert!((&admm.lambda - &pgs.lambda).amax() < 1e-7 * (1.0 + admm.lambda.amax()));

    let w = DMat::from_row_slice(3, 3, &[2.0, 0.3, 0.1, 0.3, 1.5, -0.2, 0.1, -0.2, 1.0]);
    let mut g_mat = DMat::zeros(6, 6);
    for (r, c) in [(0, 0), (0, 3), (3, 0), (3, 3)] {
        g_mat.view_mut((r, c), (3, 3)).copy_from(&w);
    }
    let g = DVec::from_vec(vec![0.2, -0.1, -1.0, 0.2, -0.1, -1.0]);
    let mu = [0.5, 0.5];
    let p = ContactProblem::new(g_mat.clone(), g.clone(), &mu).unwrap();
    for s in [
        AdmmSolver::default().solve(&p, None).unwrap(),
        PgsSolver::default().solve(&p, None).unwrap(),
    ] {
        assert!(s.converged, "{:?}", s.residuals);
        assert_solves(&g_mat, &g, &mu, &s, 1e-9);
    }
}

/// An NCP on which the Anderson acceleration of ADMM stalls (tests/data/stalled_ball_ncp.txt:
/// six nearly parallel ball rows, G's condition number 3.5e12). The default settings go on
/// plain when the acceleration stalls and solve it at the scene's tolerance in a few hundred
/// iterations, Signorini and Coulomb checked from G and g directly; PGS solves it too.
#[test]
fn an_accelerated_solve_that_stalls_goes_on_plain() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/stalled_ball_ncp.txt");
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let m: usize = lines.next().unwrap().trim().parse().unwrap();
    let mut values = || -> Vec<f64> {
        lines
            .next()
            .unwrap()
            .split_whitespace()
            .map(|x| f64::from_bits(u64::from_str_radix(x, 16).unwrap()))
            .collect()
    };
    let g_mat = DMat::from_column_slice(m, m, &values());
    let g = DVec::from_vec(values());
    let mu = values();
    assert_eq!((g.len(), mu.len()), (m, m / 3));
    let problem = ContactProblem::new(g_mat.clone(), g.clone(), &mu).unwrap();
    let mut admm = AdmmSolver::new(AdmmSettings {
        tolerance: 1e-10,
        max_iterations: 100_000,
        ..Default::default()
    });
    let s = admm.solve(&problem, None).unwrap();
    assert!(
        s.converged,
        "{:?} after {} iterations",
        s.residuals, s.iterations
    );
    assert!(s.iterations < 2_000, "{} iterations", s.iterations);
    assert_solves(&g_mat, &g, &mu, &s, 1e-9);
    let mut pgs = PgsSolver::new(PgsSettings {
        tolerance: 1e-10,
        max_iterations: 100_000,
    });
    let p = pgs.solve(&problem, None).unwrap();
    assert!(p.converged);
    assert_solves(&g_mat, &g, &mu, &p, 1e-9);
}
