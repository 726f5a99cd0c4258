//! The Delassus operator applied through the sparse factor of A (`contact::FactoredDelassus`)
//! against the assembled matrix (`contact::assemble_delassus`, a second method): the same
//! products, shifted solves that invert `G + c I` (checked by multiplying back with the
//! assembled G), and ADMM on it finding the NCP's forces as the dense ADMM does; ADMM's
//! spectrum hint, counted through an operator that counts its products; and the projected
//! solves and the polish without an assembled G.

use diffsoro::contact::{
    AdmmSettings, AdmmSolver, ContactJacobian, DelassusOperator, FactoredDelassusWorkspace,
    POLISH_MATRIX_FREE_AFTER, ProjectedRow,
};
use diffsoro::math::{DVec, Mat3};

use crate::slab_ncp;
use slab_ncp::{H, SlabContacts};

/// A deterministic vector with entries in (−1, 1).
fn pseudo_random(m: usize, seed: u64) -> Vec<f64> {
    let mut s = seed;
    (0..m)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

#[test]
fn products_and_shifted_solves_match_the_assembled_matrix() {
    for n in [10, 100] {
        let s = SlabContacts::new(n);
        let p = s.problem();
        let g = p.delassus();
        let m = 3 * n;
        let mut work = FactoredDelassusWorkspace::default();
        let mut op = s.factored(&mut work);
        assert_eq!(op.dim(), m);
        let x = pseudo_random(m, 7 + n as u64);
        let mut gx = vec![0.0; m];
        op.apply(&x, &mut gx);
        let dense = g * DVec::from_column_slice(&x);
        let scale = dense.amax();
        let error = (DVec::from_column_slice(&gx) - &dense).amax();
        assert!(
            error <= 1e-12 * scale,
            "n = {n}: G x off by {error:e} of {scale:e}"
        );

        // Shifts across ADMM's range, from the proximal term (1e-6 L) to above L.
        let l = g.symmetric_eigenvalues().max();
        for c in [1e-6 * l, 1e-2 * l, 10.0 * l] {
            op.factorize_shifted(c).unwrap();
            let r = pseudo_random(m, 11 + n as u64);
            let mut y = r.clone();
            op.solve_shifted(&mut y);
            let y = DVec::from_column_slice(&y);
            let back = g * &y + c * &y;
            let residual = (back - DVec::from_column_slice(&r)).amax();
            // Backward error of a solve with condition number (L + c)/c: round-off times it.
            let bound = 1e-13 * (l + c) / c;
            assert!(
                residual <= bound,
                "n = {n}, c = {c:e}: (G + cI) y − r = {residual:e} (bound {bound:e})"
            );
        }
    }
}

#[test]
fn admm_through_the_factor_finds_the_dense_solvers_forces() {
    for n in [10, 100] {
        let s = SlabContacts::new(n);
        let p = s.problem();
        let tolerance = 1e-10;
        let settings = AdmmSettings {
            tolerance,
            ..AdmmSettings::default()
        };
        let dense = AdmmSolver::new(settings).solve(&p, None).unwrap();
        let mut work = FactoredDelassusWorkspace::default();
        let mut op = s.factored(&mut work);
        let factored = AdmmSolver::new(settings)
            .solve_with(&mut op, p.free_velocity().as_slice(), p.cones(), None)
            .unwrap();
        assert!(dense.converged && factored.converged, "n = {n}");
        // Scored against the assembled G: σ = G λ + g from the dense matrix.
        let sigma = p.delassus() * &factored.lambda + p.free_velocity();
        let residuals = p.residuals(factored.lambda.as_slice(), sigma.as_slice());
        assert!(
            residuals.max() <= 1.01 * tolerance,
            "n = {n}: residuals {residuals:?} with the assembled G"
        );
        // λ is unique (G positive definite); the reference is dense plain ADMM to 1e-13, and
        // a residual of 1e-10 leaves each solver within ~1e-7 N of it (forces ~1e-2 N).
        let exact = slab_ncp::reference(&p);
        let dense_error = (&dense.lambda - &exact.lambda).amax();
        let factored_error = (&factored.lambda - &exact.lambda).amax();
        assert!(
            factored_error <= 10.0 * dense_error.max(1e-9),
            "n = {n}: factored λ within {factored_error:e} N, dense within {dense_error:e} N"
        );
    }
}

#[test]
fn rows_coupling_distant_nodes_are_refused_by_name() {
    let s = SlabContacts::new(10);
    let nodes = s.body.node_count();
    let mut jacobian = ContactJacobian::new(nodes);
    jacobian
        .push_point_contact(&Mat3::identity(), &[(0, 1.0)])
        .unwrap();
    // A point halfway between the first and the last node: no element holds both.
    jacobian
        .push_point_contact(&Mat3::identity(), &[(0, 0.5), (nodes - 1, 0.5)])
        .unwrap();
    let mut work = FactoredDelassusWorkspace::default();
    let message = work
        .prepare(H, &jacobian, s.body.pattern())
        .expect_err("refused")
        .to_string();
    assert!(
        message.contains("contact row 3") && message.contains("does not couple"),
        "{message}"
    );
}

/// A Delassus operator around another that counts its products (`apply`) before its first
/// shifted factorisation and records, at each shifted factorisation after the first, how many
/// shifted solves (one per ADMM iteration) came before it: the iteration at which ADMM
/// changed its penalty.
struct Counting<O> {
    inner: O,
    products: usize,
    before_factorising: Option<usize>,
    solves: usize,
    changed_at: Vec<usize>,
}

impl<O: DelassusOperator> Counting<O> {
    fn new(inner: O) -> Self {
        Counting {
            inner,
            products: 0,
            before_factorising: None,
            solves: 0,
            changed_at: Vec::new(),
        }
    }
}

impl<O: DelassusOperator> DelassusOperator for Counting<O> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn apply(&mut self, x: &[f64], out: &mut [f64]) {
        self.products += 1;
        self.inner.apply(x, out)
    }
    fn factorize_shifted(&mut self, shift: f64) -> diffsoro::Result<()> {
        if self.before_factorising.is_some() {
            self.changed_at.push(self.solves);
        }
        self.before_factorising.get_or_insert(self.products);
        self.inner.factorize_shifted(shift)
    }
    fn solve_shifted(&mut self, rhs: &mut [f64]) {
        self.solves += 1;
        self.inner.solve_shifted(rhs)
    }
    fn factorize_projected(
        &mut self,
        rows: &[ProjectedRow],
        shifts: &[f64],
    ) -> diffsoro::Result<bool> {
        self.inner.factorize_projected(rows, shifts)
    }
    fn solve_projected(&mut self, rhs: &mut [f64]) {
        self.inner.solve_projected(rhs)
    }
}

/// The spectrum hint (`AdmmSolver::set_spectrum_hint`) replaces the cold start's 8 Lanczos
/// steps by 3 and leaves the solution where the cold solve finds it. Before its first
/// factorisation ADMM applies G once per Lanczos step, and for the start's σ = G y + g (the
/// default `velocity` goes through `apply`) only when y ≠ 0: a cold start has y = 0 and
/// σ = g, so 8 cold and at most 3 hinted (fewer when the hint is G's eigenvector to
/// round-off: the Krylov space closes, and the estimate is exact); a warm start in the cone
/// takes 1 + 8.
#[test]
fn a_spectrum_hint_takes_three_lanczos_steps_and_keeps_the_solution() {
    let s = SlabContacts::new(100);
    let p = s.problem();
    let mut dense = diffsoro::contact::DenseShiftedFactor::default();
    let mut solve = |hint: Option<&[f64]>, warm: Option<&[f64]>| {
        let mut solver = AdmmSolver::new(AdmmSettings::default());
        solver.set_spectrum_hint(hint);
        let mut op = Counting::new(diffsoro::contact::DenseDelassus::new(
            p.delassus(),
            &mut dense,
        ));
        let solution = solver
            .solve_with(&mut op, p.free_velocity().as_slice(), p.cones(), warm)
            .unwrap();
        (
            solution,
            op.before_factorising,
            solver.eigenvector().to_vec(),
        )
    };
    let (cold, cold_products, eigenvector) = solve(None, None);
    assert_eq!(cold_products, Some(8));
    assert_eq!(eigenvector.len(), 300);
    let norm = eigenvector.iter().map(|x| x * x).sum::<f64>().sqrt();
    assert!((norm - 1.0).abs() < 1e-12, "unit eigenvector, norm {norm}");
    let (hinted, hinted_products, _) = solve(Some(&eigenvector), None);
    assert!(
        matches!(hinted_products, Some(1..=3)),
        "{hinted_products:?} products"
    );
    assert!(cold.converged && hinted.converged);
    // The same NCP solved to 1e-10 twice: λ within 1e-7 N (forces ~1e-2 N), as in
    // `admm_through_the_factor_finds_the_dense_solvers_forces`.
    let d = (&cold.lambda - &hinted.lambda).amax();
    assert!(d < 1e-7, "{d:e} N apart");
    // A hint of the wrong length is ignored: the cold start.
    let (_, ignored_products, _) = solve(Some(&eigenvector[..3]), None);
    assert_eq!(ignored_products, Some(8));
    // Warm-started at half the cold solution (forces in their cones, not all zero, not the
    // solution): σ = G y + g is one product more.
    assert!(cold.lambda.iter().any(|&l| l != 0.0));
    let half: Vec<f64> = cold.lambda.iter().map(|l| 0.5 * l).collect();
    let (warm, warm_products, _) = solve(None, Some(&half));
    assert_eq!(warm_products, Some(9));
    assert!(warm.converged);
}

/// The projected system `E G Eᵀ + diag(shifts)` solved through the factor
/// (`DelassusOperator::factorize_projected`, what the matrix-free polish preconditions with)
/// against the assembled G: rows of every kind the polish makes (a contact's three axes, its
/// normal alone, its normal and a rotated tangential direction, none), shifts from the
/// proximal weight (1e-6 L) to L; the solution multiplied back by the assembled matrix.
#[test]
fn projected_solves_invert_the_projected_assembled_matrix() {
    for n in [10, 100] {
        let s = SlabContacts::new(n);
        let p = s.problem();
        let g = p.delassus();
        let l = g.symmetric_eigenvalues().max();
        let mut rows = Vec::new();
        for i in 0..n {
            let angle = 0.7 * i as f64;
            match i % 4 {
                0 => rows.extend((0..3).map(|k| {
                    let mut direction = [0.0; 3];
                    direction[k] = 1.0;
                    ProjectedRow {
                        contact: i,
                        direction,
                    }
                })),
                1 => rows.push(ProjectedRow {
                    contact: i,
                    direction: [0.0, 0.0, 1.0],
                }),
                2 => rows.extend([
                    ProjectedRow {
                        contact: i,
                        direction: [0.0, 0.0, 1.0],
                    },
                    ProjectedRow {
                        contact: i,
                        direction: [-angle.sin(), angle.cos(), 0.0],
                    },
                ]),
                _ => {}
            }
        }
        let r = rows.len();
        let shifts: Vec<f64> = pseudo_random(r, 5)
            .iter()
            .map(|u| l * 10f64.powf(-3.0 * (1.0 + u)))
            .collect();
        let smallest = shifts.iter().cloned().fold(f64::INFINITY, f64::min);
        let e = diffsoro::math::DMat::from_fn(r, 3 * n, |k, j| {
            if j / 3 == rows[k].contact {
                rows[k].direction[j % 3]
            } else {
                0.0
            }
        });
        let mut projected = &e * g * e.transpose();
        for (k, c) in shifts.iter().enumerate() {
            projected[(k, k)] += c;
        }
        let mut work = FactoredDelassusWorkspace::default();
        let mut op = s.factored(&mut work);
        assert!(op.factorize_projected(&rows, &shifts).unwrap());
        let rhs = pseudo_random(r, 13 + n as u64);
        let mut y = rhs.clone();
        op.solve_projected(&mut y);
        let back = &projected * DVec::from_column_slice(&y);
        let residual = (back - DVec::from_column_slice(&rhs)).amax();
        // Backward error of a solve with condition number (L + c_min)/c_min (the Woodbury
        // form divides by the shifts), as for the shifted solves above.
        let bound = 1e-13 * (l + smallest) / smallest;
        assert!(
            residual <= bound,
            "n = {n}: (E G Eᵀ + D) y − r = {residual:e} (bound {bound:e})"
        );
    }
}

#[test]
fn bad_projected_systems_are_refused_by_name() {
    let s = SlabContacts::new(10);
    let mut work = FactoredDelassusWorkspace::default();
    let mut op = s.factored(&mut work);
    let row = |contact| ProjectedRow {
        contact,
        direction: [0.0, 0.0, 1.0],
    };
    let message = |r: diffsoro::Result<bool>| r.expect_err("refused").to_string();
    let m = message(op.factorize_projected(&[row(0), row(1)], &[1.0]));
    assert!(m.contains("2 rows but 1 shifts"), "{m}");
    let m = message(op.factorize_projected(&[row(0), row(10)], &[1.0, 1.0]));
    assert!(m.contains("row 1") && m.contains("contact 10 of 10"), "{m}");
    let m = message(op.factorize_projected(&[row(0), row(1)], &[1.0, 0.0]));
    assert!(
        m.contains("shift 1") && m.contains("must be positive"),
        "{m}"
    );
}

/// ADMM through the factor polishes its iterate on its cones' faces (Newton's method with
/// BiCGSTAB steps preconditioned by the projected system, `contact::ncp::polish_krylov`): the
/// forces meet the accelerated target scored with the assembled G, equal the dense solver's
/// polished forces (exact to round-off) within what that residual allows (λ moves by at most
/// residual / σ_min(G) per unit of equation residual on fixed faces; ten times that), in under
/// half the iterations of the unpolished solve through the factor.
#[test]
fn admm_through_the_factor_is_polished_to_the_dense_polished_forces() {
    for n in [10, 100] {
        let s = SlabContacts::new(n);
        let p = s.problem();
        let sigma_min = p.delassus().symmetric_eigenvalues().min();
        let mut dense_solver = AdmmSolver::default();
        let dense = dense_solver.solve(&p, None).unwrap();
        assert!(dense_solver.last_polished(), "n = {n}: dense not polished");
        let mut work = FactoredDelassusWorkspace::default();
        let mut solve = |polish: bool| {
            let mut op = s.factored(&mut work);
            let mut solver = AdmmSolver::new(AdmmSettings {
                polish,
                ..AdmmSettings::default()
            });
            let solution = solver
                .solve_with(&mut op, p.free_velocity().as_slice(), p.cones(), None)
                .unwrap();
            (solution, solver.last_polished())
        };
        let (polished, was_polished) = solve(true);
        let (unpolished, _) = solve(false);
        assert!(was_polished, "n = {n}: never polished");
        let sigma = p.delassus() * &polished.lambda + p.free_velocity();
        let off = (&sigma - &polished.sigma).amax();
        assert!(off <= 1e-12 * sigma.amax(), "n = {n}: σ off by {off:e}");
        let residuals = p.residuals(polished.lambda.as_slice(), sigma.as_slice());
        let target = AdmmSettings::default().tolerance * AdmmSettings::default().accelerated_margin;
        assert!(
            residuals.max() <= target,
            "n = {n}: residuals {residuals:?} with the assembled G"
        );
        let bound = 10.0 * (residuals.max() + dense.residuals.max()) / sigma_min;
        let d = (&polished.lambda - &dense.lambda).amax();
        assert!(
            d <= bound,
            "n = {n}: {d:e} N from the dense polish (bound {bound:e})"
        );
        assert!(
            2 * polished.iterations < unpolished.iterations,
            "n = {n}: {} polished iterations against {} unpolished",
            polished.iterations,
            unpolished.iterations
        );
    }
}

/// Through a factor with the polish on, ADMM holds its penalty until the matrix-free polish
/// may run (`POLISH_MATRIX_FREE_AFTER` iterations), and past that while the faces settle before
/// the first polish (`FACES_SETTLING_RATIO`); without the polish the spectral rule changes it
/// earlier on the same problem (checked first, so that the test can fail), and both find the
/// same forces. On this slab the faces settle over iterations 11–20 (1,337 changes, then 71)
/// and the polish ends the solve at iteration 25: ρ never changes (without the settling rule
/// it changed at iteration 20).
#[test]
fn through_the_factor_the_penalty_waits_for_the_polish() {
    // 1,000 contacts (G never assembled): on 100 the rule changes nothing before iteration 20.
    let s = SlabContacts::new(1000);
    let (g, cones) = (s.free_velocity(), s.cones());
    let mut work = FactoredDelassusWorkspace::default();
    let mut run = |polish: bool| {
        let mut op = Counting::new(s.factored(&mut work));
        let mut solver = AdmmSolver::new(AdmmSettings {
            polish,
            ..AdmmSettings::default()
        });
        let solution = solver.solve_with(&mut op, &g, &cones, None).unwrap();
        assert!(solution.converged, "polish {polish}: not converged");
        (solution.lambda, op.changed_at)
    };
    let (free, unheld) = run(false);
    assert!(
        unheld.iter().any(|&k| k < POLISH_MATRIX_FREE_AFTER),
        "without the polish the penalty changed at iterations {unheld:?}"
    );
    let (polished, held) = run(true);
    assert!(
        held.is_empty(),
        "with the polish the penalty changed at iterations {held:?}"
    );
    // The same NCP solved twice to 1e-10: λ within 1e-7 N (forces ~1e-2 N), as above.
    let d = (&free - &polished).amax();
    assert!(d < 1e-7, "{d:e} N apart");
}
