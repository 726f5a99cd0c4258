//! The NCP derivative against finite differences of the solver, per mode.

use super::*;
use crate::contact::{AdmmSettings, AdmmSolver, ContactProblem, ModeTolerance, classify};
use crate::math::{DVec, SplitMix64, central_difference_jacobian, relative_error};

use ContactMode::{Breaking, Sliding, Sticking};

struct Rng(SplitMix64);
impl Rng {
    /// Uniform in [a, b).
    fn range(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * 0.5 * (self.0.uniform() + 1.0)
    }
    fn vec(&mut self, n: usize) -> DVec {
        DVec::from_fn(n, |_, _| self.0.uniform())
    }
}

/// A well-conditioned SPD Delassus matrix `H Hᵀ/m + 0.5 I`.
fn random_delassus(rng: &mut Rng, m: usize) -> DMat {
    let h = DMat::from_fn(m, m, |_, _| rng.0.uniform());
    let g = &h * h.transpose() / m as f64 + 0.5 * DMat::identity(m, m);
    (&g + g.transpose()) * 0.5
}

/// A solution (λ*, σ*) with the requested modes, each clearly inside its mode (strict
/// complementarity), and the free velocity g = σ* − Gλ* that makes it the NCP's solution.
fn constructed(rng: &mut Rng, g: &DMat, mu: &[f64], modes: &[ContactMode]) -> (DVec, DVec, DVec) {
    let n = modes.len();
    let mut lambda = DVec::zeros(3 * n);
    let mut sigma = DVec::zeros(3 * n);
    for (i, m) in modes.iter().enumerate() {
        let angle = rng.range(0.0, std::f64::consts::TAU);
        let (c, s) = (angle.cos(), angle.sin());
        match m {
            Breaking => {
                sigma[3 * i] = rng.range(-1.0, 1.0);
                sigma[3 * i + 1] = rng.range(-1.0, 1.0);
                sigma[3 * i + 2] = rng.range(0.5, 1.5);
            }
            Sticking => {
                let ln = rng.range(0.5, 1.5);
                let lt = rng.range(0.0, 0.5) * mu[i] * ln;
                lambda[3 * i] = lt * c;
                lambda[3 * i + 1] = lt * s;
                lambda[3 * i + 2] = ln;
            }
            Sliding => {
                let ln = rng.range(0.5, 1.5);
                let st = rng.range(0.5, 1.5);
                sigma[3 * i] = st * c;
                sigma[3 * i + 1] = st * s;
                lambda[3 * i] = -mu[i] * ln * c;
                lambda[3 * i + 1] = -mu[i] * ln * s;
                lambda[3 * i + 2] = ln;
            }
        }
    }
    let free = &sigma - g * &lambda;
    (lambda, sigma, free)
}

/// The natural map of the NCP, `F(λ) = λ − Π_K(λ − ρ(σ + Γ(σ)))`, σ = Gλ + g: zero
/// exactly at a solution, and smooth near a strictly complementary one.
fn natural_map(p: &ContactProblem, rho: f64, lambda: &DVec) -> DVec {
    let sigma = p.delassus() * lambda + p.free_velocity();
    let mut out = DVec::zeros(lambda.len());
    for (i, cone) in p.cones().iter().enumerate() {
        let l = block3(lambda.as_slice(), i);
        let s = cone.corrected(&block3(sigma.as_slice(), i));
        let r = l - cone.project(&(l - rho * s));
        out.as_mut_slice()[3 * i..3 * i + 3].copy_from_slice(r.as_slice());
    }
    out
}

/// λ(g): ADMM at a tight tolerance warm-started at `warm`, then polished by Newton's
/// method on the natural map (Jacobian by central differences of the map — no mode
/// information), an independent method, to round-off.
fn solve(g: &DMat, mu: &[f64], free: &DVec, warm: &DVec) -> DVec {
    let p = ContactProblem::new(g.clone(), free.clone(), mu).unwrap();
    let mut admm = AdmmSolver::new(AdmmSettings {
        tolerance: 1e-13,
        max_iterations: 20_000,
        ..AdmmSettings::default()
    });
    let s = admm.solve(&p, Some(warm.as_slice())).unwrap();
    assert!(s.residuals.max() < 1e-8, "ADMM residual {:?}", s.residuals);
    let rho = 3.0 * g.nrows() as f64 / g.trace();
    let mut l = s.lambda;
    for _ in 0..20 {
        let f = natural_map(&p, rho, &l);
        if f.norm() < 1e-15 {
            break;
        }
        let j = central_difference_jacobian(|x| natural_map(&p, rho, x), &l, 1e-7);
        let Some(step) = j.lu().solve(&(-f)) else {
            break;
        };
        l += step;
    }
    assert!(natural_map(&p, rho, &l).norm() < 1e-13);
    l
}

/// dλ of `NcpDerivative::tangent` against central differences of the solution map
/// g ↦ λ(g) along random directions, and checks the perturbed solutions keep their modes.
fn check_against_finite_differences(seed: u64, modes: &[ContactMode]) -> f64 {
    let mut rng = Rng(SplitMix64::new(seed));
    let n = modes.len();
    let mu: Vec<f64> = (0..n).map(|_| rng.range(0.2, 1.0)).collect();
    let g = random_delassus(&mut rng, 3 * n);
    let (l_star, _, free) = constructed(&mut rng, &g, &mu, modes);
    let lambda = solve(&g, &mu, &free, &l_star);
    assert!(
        (&lambda - &l_star).norm() < 1e-10,
        "another solution was found"
    );
    let sigma = &g * &lambda + &free;
    let classified = classify(
        lambda.as_slice(),
        sigma.as_slice(),
        ModeTolerance::default(),
    );
    assert_eq!(classified, modes);
    let d = NcpDerivative::new(
        &g,
        &mu,
        lambda.as_slice(),
        sigma.as_slice(),
        &classified,
        BoundaryGradient::OneSided,
    )
    .unwrap();
    assert_eq!(d.status(), ReducedStatus::Regular);
    let dirs = DMat::from_fn(3 * n, 3, |_, _| rng.0.uniform());
    let mut many = DMat::zeros(0, 0);
    d.tangent_many(&dirs, &mut many);
    let h = 1e-6 * free.norm();
    let mut worst = 0.0f64;
    for k in 0..3 {
        let dq = dirs.column(k).into_owned();
        let lp = solve(&g, &mu, &(&free + h * &dq), &lambda);
        let lm = solve(&g, &mu, &(&free - h * &dq), &lambda);
        for (l, sign) in [(&lp, 1.0), (&lm, -1.0)] {
            let s = &g * l + &free + sign * h * &dq;
            assert_eq!(
                classify(l.as_slice(), s.as_slice(), ModeTolerance::default()),
                modes
            );
        }
        let fd = (lp - lm) / (2.0 * h);
        let mut dl = vec![0.0; 3 * n];
        d.tangent(dq.as_slice(), &mut dl);
        let e = relative_error(&dl, fd.as_slice(), 1e-12);
        worst = worst.max(e);
        assert!(e < 1e-6, "seed {seed}, direction {k}: relative error {e}");
        assert!(relative_error(&dl, many.column(k).as_slice(), 1e-300) < 1e-14);
    }
    eprintln!("modes {modes:?}: worst FD relative error {worst:.2e}");
    worst
}

#[test]
fn all_sticking_matches_finite_differences() {
    check_against_finite_differences(1, &[Sticking; 4]);
}

#[test]
fn all_sliding_matches_finite_differences() {
    check_against_finite_differences(2, &[Sliding; 4]);
    check_against_finite_differences(3, &[Sliding; 3]);
}

#[test]
fn mixed_modes_with_breaking_match_finite_differences() {
    check_against_finite_differences(
        4,
        &[Breaking, Sticking, Sliding, Sliding, Breaking, Sticking],
    );
    check_against_finite_differences(5, &[Sliding, Breaking, Sticking]);
}

#[test]
fn single_contacts_match_finite_differences() {
    check_against_finite_differences(6, &[Sticking]);
    check_against_finite_differences(7, &[Sliding]);
    // Breaking: dλ = 0, and the solution indeed does not move.
    check_against_finite_differences(8, &[Breaking]);
}

/// ⟨w, L u⟩ = ⟨Lᵀ w, u⟩ for random u, w: the cotangent is the exact transpose, also on a
/// rank-deficient system (duplicated contact).
#[test]
fn cotangent_is_the_transpose_of_the_tangent() {
    let mut rng = Rng(SplitMix64::new(21));
    let modes = [Sliding, Sticking, Breaking, Sliding, Sticking];
    let n = modes.len();
    let mu: Vec<f64> = (0..n).map(|_| rng.range(0.2, 1.0)).collect();
    let mut g = random_delassus(&mut rng, 3 * n);
    let (lambda, sigma, _) = constructed(&mut rng, &g, &mu, &modes);
    let adjoint_error = |d: &NcpDerivative, rng: &mut Rng| {
        let (u, w) = (rng.vec(3 * n), rng.vec(3 * n));
        let (mut lu, mut ltw) = (vec![0.0; 3 * n], vec![0.0; 3 * n]);
        d.tangent(u.as_slice(), &mut lu);
        d.cotangent(w.as_slice(), &mut ltw);
        let a = w.dot(&DVec::from_vec(lu));
        let b = u.dot(&DVec::from_vec(ltw));
        (a - b).abs() / a.abs().max(b.abs())
    };
    let d = NcpDerivative::new(
        &g,
        &mu,
        lambda.as_slice(),
        sigma.as_slice(),
        &modes,
        BoundaryGradient::OneSided,
    )
    .unwrap();
    for _ in 0..10 {
        assert!(adjoint_error(&d, &mut rng) < 1e-10);
    }
    // The batched reverse map is the single one, column by column.
    let w = DMat::from_fn(3 * n, 2, |_, _| rng.0.uniform());
    let mut many = DMat::zeros(0, 0);
    d.cotangent_many(&w, &mut many);
    for j in 0..2 {
        let mut one = vec![0.0; 3 * n];
        d.cotangent(w.column(j).as_slice(), &mut one);
        assert_eq!(one.as_slice(), many.column(j).as_slice());
    }
    // Contact 4 duplicates contact 1 (same rows of H_c): G is singular.
    for r in 0..3 * n {
        for a in 0..3 {
            g[(r, 12 + a)] = g[(r, 3 + a)];
        }
    }
    for a in 0..3 {
        for c in 0..3 * n {
            g[(12 + a, c)] = g[(3 + a, c)];
        }
    }
    let d = NcpDerivative::new(
        &g,
        &mu,
        lambda.as_slice(),
        sigma.as_slice(),
        &modes,
        BoundaryGradient::OneSided,
    )
    .unwrap();
    assert!(matches!(d.status(), ReducedStatus::RankDeficient { .. }));
    for _ in 0..10 {
        assert!(adjoint_error(&d, &mut rng) < 1e-10);
    }
}

/// The linearised mode equations hold for dλ, written in the paper's form (Appendix A,
/// Eq. 18 with 1/α), independently of the scaled rows the code assembles.
#[test]
fn tangent_solves_the_linearised_mode_equations() {
    let mut rng = Rng(SplitMix64::new(31));
    let modes = [Sliding, Sticking, Breaking, Sliding];
    let n = modes.len();
    let mu: Vec<f64> = (0..n).map(|_| rng.range(0.2, 1.0)).collect();
    let g = random_delassus(&mut rng, 3 * n);
    let (lambda, sigma, _) = constructed(&mut rng, &g, &mu, &modes);
    let d = NcpDerivative::new(
        &g,
        &mu,
        lambda.as_slice(),
        sigma.as_slice(),
        &modes,
        BoundaryGradient::OneSided,
    )
    .unwrap();
    let dq = rng.vec(3 * n);
    let mut dl = vec![0.0; 3 * n];
    d.tangent(dq.as_slice(), &mut dl);
    let dl = DVec::from_vec(dl);
    let ds = &g * &dl + &dq;
    for (i, m) in modes.iter().enumerate() {
        let (l, s) = (block3(lambda.as_slice(), i), block3(sigma.as_slice(), i));
        let (dli, dsi) = (block3(dl.as_slice(), i), block3(ds.as_slice(), i));
        match m {
            Breaking => assert_eq!(dli, Vec3::zeros()),
            Sticking => assert!(dsi.norm() < 1e-12),
            Sliding => {
                assert!(dsi.z.abs() < 1e-12);
                let st = s.x.hypot(s.y);
                let u = nalgebra::Vector2::new(s.x, s.y) / st;
                let dst = nalgebra::Vector2::new(dsi.x, dsi.y);
                // dλ_T = −μ dλ_N u − (μλ_N/‖σ_T‖)(I − uuᵀ) dσ_T
                let expect = -mu[i] * dli.z * u - (mu[i] * l.z / st) * (dst - u * u.dot(&dst));
                let got = nalgebra::Vector2::new(dli.x, dli.y);
                assert!((got - expect).norm() < 1e-12, "{got:?} vs {expect:?}");
            }
        }
    }
}

#[test]
fn degenerate_inputs_give_finite_derivatives() {
    let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
    let mut rng = Rng(SplitMix64::new(41));
    let g = random_delassus(&mut rng, 3);
    let dq = rng.vec(3);
    let mut dl = vec![0.0; 3];
    let mut qb = vec![0.0; 3];
    // λ = 0 and σ = 0: classify says breaking; as sticking or sliding (no direction):
    // finite, and sliding without a direction is differentiated as sticking.
    let modes = classify(&[0.0; 3], &[0.0; 3], ModeTolerance::default());
    assert_eq!(modes, vec![Breaking]);
    for m in [Breaking, Sticking, Sliding] {
        let d =
            NcpDerivative::new(&g, &[0.5], &[0.0; 3], &[0.0; 3], &[m], Default::default()).unwrap();
        d.tangent(dq.as_slice(), &mut dl);
        d.cotangent(dq.as_slice(), &mut qb);
        assert!(finite(&dl) && finite(&qb), "{m:?}");
        if m != Breaking {
            // Sticking: dλ = −G⁻¹ dq.
            let expect = -g.clone().lu().solve(&dq).unwrap();
            assert!(relative_error(&dl, expect.as_slice(), 1e-300) < 1e-12);
        }
    }
    // Sliding with a tiny slip speed: finite; the slip direction's velocity is held and
    // dλ stays in the cone's tangent plane.
    let mu = 0.6;
    let lambda = [-mu * 0.8, 0.0, 0.8];
    for st in [1e-14, 1e-300, 0.0] {
        let sigma = [st, 0.0, 0.0];
        let d =
            NcpDerivative::new(&g, &[mu], &lambda, &sigma, &[Sliding], Default::default()).unwrap();
        d.tangent(dq.as_slice(), &mut dl);
        d.cotangent(dq.as_slice(), &mut qb);
        assert!(finite(&dl) && finite(&qb));
        let ds = &g * DVec::from_column_slice(&dl) + &dq;
        assert!(ds[2].abs() < 1e-12 && ds[1].abs() < 1e-12, "{ds:?}");
        // Tangent plane at λ = (−μλ_N, 0, λ_N): −dλ_x... uᵀdλ_T + μ dλ_N = 0, u = +x.
        assert!((dl[0] + mu * dl[2]).abs() < 1e-12);
    }
    // μ = 0 sliding: the tangential force stays zero.
    let d = NcpDerivative::new(
        &g,
        &[0.0],
        &[0.0, 0.0, 1.0],
        &[0.3, -0.4, 0.0],
        &[Sliding],
        Default::default(),
    )
    .unwrap();
    d.tangent(dq.as_slice(), &mut dl);
    assert!(dl[0].abs() < 1e-15 && dl[1].abs() < 1e-15 && dl[2].is_finite());
    // G = 0: rank 0, dλ = 0 (the minimum-norm solution), no NaN.
    let d = NcpDerivative::new(
        &DMat::zeros(3, 3),
        &[0.5],
        &[0.0, 0.0, 1.0],
        &[0.0; 3],
        &[Sticking],
        Default::default(),
    )
    .unwrap();
    assert_eq!(d.status(), ReducedStatus::RankDeficient { rank: 0 });
    d.tangent(dq.as_slice(), &mut dl);
    assert_eq!(dl, vec![0.0; 3]);
    // Bad input is an error naming what.
    let e = NcpDerivative::new(
        &g,
        &[0.5],
        &[0.0; 3],
        &[0.0; 2],
        &[Sticking],
        Default::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("NCP derivative"), "{e}");
    let e = NcpDerivative::new(
        &g,
        &[-0.5],
        &[0.0; 3],
        &[0.0; 3],
        &[Sticking],
        Default::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("friction of contact 0"), "{e}");
}

/// Duplicated contacts (G singular, all sticking): the minimum-norm least-squares
/// solution, checked against −G⁺ dq computed directly from G (A = G when all stick).
#[test]
fn duplicated_contacts_give_the_minimum_norm_derivative() {
    let mut rng = Rng(SplitMix64::new(51));
    let hc = DMat::from_fn(6, 9, |_, _| rng.0.uniform());
    // Rows 6..9 repeat rows 0..3: contact 2 duplicates contact 0.
    let h = DMat::from_fn(9, 9, |r, c| if r < 6 { hc[(r, c)] } else { hc[(r - 6, c)] });
    let g = &h * h.transpose();
    let modes = [Sticking; 3];
    let lambda = [0.1, 0.0, 1.0, 0.0, 0.1, 1.0, 0.1, 0.0, 1.0];
    let d = NcpDerivative::new(
        &g,
        &[0.5; 3],
        &lambda,
        &[0.0; 9],
        &modes,
        Default::default(),
    )
    .unwrap();
    assert_eq!(d.status(), ReducedStatus::RankDeficient { rank: 6 });
    // A consistent perturbation (in the range of G) and an arbitrary one.
    for dq in [&g * rng.vec(9), rng.vec(9)] {
        let mut dl = vec![0.0; 9];
        d.tangent(dq.as_slice(), &mut dl);
        let expect = -g.clone().pseudo_inverse(1e-10).unwrap() * &dq;
        let e = relative_error(&dl, expect.as_slice(), 1e-300);
        assert!(e < 1e-8, "relative error {e}");
        // The duplicated contacts share the force equally.
        for a in 0..3 {
            assert!((dl[a] - dl[6 + a]).abs() < 1e-8 * expect.norm());
        }
    }
}

/// Paper 003 §IV-D: a contact exactly at the boundary (λ = 0, σ = 0, classified breaking)
/// under a loss that wants more normal force gets a zero one-sided gradient; the
/// complementarity-aware one is the derivative from the closing side, checked against a
/// one-sided finite difference of the solver pushed closed.
#[test]
fn complementarity_aware_gradient_opens_a_closed_door() {
    let mut rng = Rng(SplitMix64::new(61));
    let g = DMat::identity(3, 3) + 0.1 * random_delassus(&mut rng, 3);
    let mu = [0.8];
    let zero = [0.0; 3];
    let modes = classify(&zero, &zero, ModeTolerance::default());
    assert_eq!(modes, vec![Breaking]);
    let lambda_bar = [0.0, 0.0, -1.0]; // ℓ = −λ_N: more normal force is better.
    let mut one_sided = vec![0.0; 3];
    let d = NcpDerivative::new(&g, &mu, &zero, &zero, &modes, BoundaryGradient::OneSided).unwrap();
    assert_eq!(
        d.cotangent(&lambda_bar, &mut one_sided),
        CotangentSide::Classified
    );
    assert_eq!(one_sided, vec![0.0; 3]);

    let aware = BoundaryGradient::ComplementarityAware {
        tied_velocity: 1e-8,
    };
    let d = NcpDerivative::new(&g, &mu, &zero, &zero, &modes, aware).unwrap();
    let mut q_bar = vec![0.0; 3];
    assert_eq!(
        d.cotangent(&lambda_bar, &mut q_bar),
        CotangentSide::Relabelled(1)
    );
    assert!(DVec::from_column_slice(&q_bar).norm() > 0.1);
    // Closing directions (g_N decreases, small tangential part): the solution sticks and
    // λ(εu) is linear in ε, so a forward difference gives the closing-side derivative.
    for u in [[0.0, 0.0, -1.0], [0.1, -0.05, -1.0], [-0.2, 0.1, -0.7]] {
        let eps = 1e-3;
        let free = DVec::from_column_slice(&u) * eps;
        let l = solve(&g, &mu, &free, &DVec::zeros(3));
        let directional = -l[2] / eps; // ⟨λ̄, dλ⟩
        let predicted: f64 = q_bar.iter().zip(&u).map(|(a, b)| a * b).sum();
        assert!(
            (directional - predicted).abs() < 1e-6 * directional.abs(),
            "{directional} vs {predicted}"
        );
    }
    // A loss that wants less force keeps the one-sided (zero) gradient.
    assert_eq!(
        d.cotangent(&[0.0, 0.0, 1.0], &mut q_bar),
        CotangentSide::Classified
    );
    assert_eq!(q_bar, vec![0.0; 3]);
    // A breaking contact that is clearly open is not tied.
    let d = NcpDerivative::new(&g, &mu, &zero, &[0.0, 0.0, 0.5], &modes, aware).unwrap();
    assert_eq!(
        d.cotangent(&lambda_bar, &mut q_bar),
        CotangentSide::Classified
    );
    // Tangent mode is the classified one.
    let mut dl = vec![1.0; 3];
    d.tangent(&[0.0, 0.0, -1.0], &mut dl);
    assert_eq!(dl, vec![0.0; 3]);
}

/// dλ/dμ (`friction_tangent`) against central differences of the solver in each contact's
/// friction coefficient, with every mode present; sticking and breaking contacts' own μ do
/// not move λ; the reverse map is its transpose.
#[test]
fn friction_derivatives_match_finite_differences() {
    let modes = [Sliding, Sticking, Breaking, Sliding];
    let n = modes.len();
    let mut rng = Rng(SplitMix64::new(5));
    let mu: Vec<f64> = (0..n).map(|_| rng.range(0.2, 1.0)).collect();
    let g = random_delassus(&mut rng, 3 * n);
    let (l_star, _, free) = constructed(&mut rng, &g, &mu, &modes);
    let lambda = solve(&g, &mu, &free, &l_star);
    let sigma = &g * &lambda + &free;
    let d = NcpDerivative::new(
        &g,
        &mu,
        lambda.as_slice(),
        sigma.as_slice(),
        &modes,
        BoundaryGradient::OneSided,
    )
    .unwrap();
    let h = 1e-6;
    for i in 0..n {
        let mut dmu = vec![0.0; n];
        dmu[i] = 1.0;
        let mut dl = vec![0.0; 3 * n];
        d.friction_tangent(&g, &dmu, &mut dl);
        let (mut up, mut down) = (mu.clone(), mu.clone());
        up[i] += h;
        down[i] -= h;
        let fd = (solve(&g, &up, &free, &lambda) - solve(&g, &down, &free, &lambda)) / (2.0 * h);
        let size = fd.norm();
        if modes[i] == Sliding {
            assert!(size > 1e-3, "contact {i}: μ moves λ ({size:e})");
            let e = relative_error(&dl, fd.as_slice(), 1e-12);
            assert!(e < 1e-6, "contact {i}: relative error {e:e}");
        } else {
            assert!(size < 1e-8, "contact {i} ({:?}): |FD| {size:e}", modes[i]);
            assert!(dl.iter().all(|x| *x == 0.0));
        }
    }
    // ⟨λ̄, dλ⟩ = Σ μ̄_i dμ_i.
    for _ in 0..3 {
        let dmu: Vec<f64> = (0..n).map(|_| rng.0.uniform()).collect();
        let w = rng.vec(3 * n);
        let mut dl = vec![0.0; 3 * n];
        d.friction_tangent(&g, &dmu, &mut dl);
        let mut q_bar = vec![0.0; 3 * n];
        d.cotangent(w.as_slice(), &mut q_bar);
        let mu_bar = d.friction_cotangent(&g, w.as_slice(), &q_bar);
        let a = w.dot(&DVec::from_vec(dl));
        let b: f64 = mu_bar.iter().zip(&dmu).map(|(x, y)| x * y).sum();
        assert!(
            (a - b).abs() <= 1e-10 * a.abs().max(b.abs()),
            "{a:e} vs {b:e}"
        );
    }
}
