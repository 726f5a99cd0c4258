//! Levenberg–Marquardt on fits whose answers are known: an exponential decay, the Rosenbrock
//! residual, and an elastic-moduli fit whose true Poisson's ratio sits near either edge of
//! its range; the box-constrained fit whose minimum lies outside its box; plus the
//! parametrisation's maps, ranges, derivatives and name errors.

use super::*;
use crate::math::{DMat, DVec, central_difference_jacobian, relative_error};

/// `r_i = a exp(−k t_i) − y_i` with `y_i` generated from `(a*, k*)`.
struct Decay {
    t: Vec<f64>,
    y: Vec<f64>,
}

impl Decay {
    fn new(a: f64, k: f64) -> Decay {
        let t: Vec<f64> = (0..25).map(|i| 0.2 * i as f64).collect();
        let y = t.iter().map(|t| a * (-k * t).exp()).collect();
        Decay { t, y }
    }
}

impl LeastSquares for Decay {
    fn evaluate(&mut self, p: &[f64]) -> crate::Result<(DVec, DMat)> {
        let (a, k) = (p[0], p[1]);
        let m = self.t.len();
        let r = DVec::from_fn(m, |i, _| a * (-k * self.t[i]).exp() - self.y[i]);
        let j = DMat::from_fn(m, 2, |i, c| {
            let e = (-k * self.t[i]).exp();
            if c == 0 { e } else { -a * self.t[i] * e }
        });
        Ok((r, j))
    }
}

/// `r = [10 (x₂ − x₁²), 1 − x₁]`, minimum 0 at (1, 1).
struct Rosenbrock;

impl LeastSquares for Rosenbrock {
    fn evaluate(&mut self, p: &[f64]) -> crate::Result<(DVec, DMat)> {
        let r = DVec::from_vec(vec![10.0 * (p[1] - p[0] * p[0]), 1.0 - p[0]]);
        let j = DMat::from_row_slice(2, 2, &[-20.0 * p[0], 10.0, -1.0, 0.0]);
        Ok((r, j))
    }
}

/// Observed bulk and shear moduli `K = E / (3(1 − 2ν))`, `G = E / (2(1 + ν))`, fitted in
/// physical `(E, ν)` through logs: `r = [ln K − ln K*, ln G − ln G*]`.
struct Moduli {
    log_k: f64,
    log_g: f64,
}

fn log_moduli(e: f64, nu: f64) -> (f64, f64) {
    (
        e.ln() - (3.0 * (1.0 - 2.0 * nu)).ln(),
        e.ln() - (2.0 * (1.0 + nu)).ln(),
    )
}

impl LeastSquares for Moduli {
    fn evaluate(&mut self, p: &[f64]) -> crate::Result<(DVec, DMat)> {
        let (e, nu) = (p[0], p[1]);
        let (lk, lg) = log_moduli(e, nu);
        let r = DVec::from_vec(vec![lk - self.log_k, lg - self.log_g]);
        let j = DMat::from_row_slice(
            2,
            2,
            &[1.0 / e, 2.0 / (1.0 - 2.0 * nu), 1.0 / e, -1.0 / (1.0 + nu)],
        );
        Ok((r, j))
    }
}

fn assert_recovered(what: &str, result: &LmResult, truth: &[f64], max_iterations: usize) {
    assert!(result.converged(), "{what}: stopped by {:?}", result.stop);
    assert!(
        result.iterations <= max_iterations,
        "{what}: {} iterations",
        result.iterations
    );
    for (got, want) in result.params.iter().zip(truth) {
        assert!(
            (got - want).abs() <= 1e-8 * want.abs(),
            "{what}: {got} vs {want} (relative {:.2e})",
            (got - want).abs() / want.abs()
        );
    }
    assert_eq!(result.history.len(), result.iterations + 1);
    for pair in result.history.windows(2) {
        assert!(
            pair[1].loss <= pair[0].loss,
            "{what}: the loss went up: {} → {}",
            pair[0].loss,
            pair[1].loss
        );
        if !pair[1].accepted {
            assert_eq!(
                pair[1].params, pair[0].params,
                "a rejected step moves nothing"
            );
        }
    }
}

#[test]
fn recovers_an_exponential_decay_from_both_sides() {
    let truth = [2.0, 0.7];
    for factor in [1.0 / 3.0, 3.0] {
        let start = [truth[0] * factor, truth[1] * factor];
        let result = levenberg_marquardt(&mut Decay::new(2.0, 0.7), &start, &LmOptions::default())
            .expect("a valid fit");
        assert_recovered(&format!("decay from ×{factor}"), &result, &truth, 20);
    }
}

#[test]
fn recovers_the_rosenbrock_minimum_from_both_sides() {
    for start in [[1.0 / 3.0, 1.0 / 3.0], [3.0, 3.0]] {
        let result = levenberg_marquardt(&mut Rosenbrock, &start, &LmOptions::default())
            .expect("a valid fit");
        assert_recovered(
            &format!("Rosenbrock from {start:?}"),
            &result,
            &[1.0, 1.0],
            20,
        );
    }
}

#[test]
fn recovers_moduli_at_the_edges_of_the_poisson_range() {
    // The whole physical range −1 < ν < 0.5 (the default is 0 ≤ ν < 0.5).
    let map = Parametrisation::parse(&["young_modulus:body", "poisson_ratio:body"])
        .unwrap()
        .with_bounds(&["poisson_ratio:body=-1,0.5"])
        .unwrap();
    let (lower, upper) = map.coordinate_box();
    // Nearly incompressible (ν → 0.5) and nearly auxetic-limit (ν → −1) materials, each from
    // E 3× too small and 3× too large, ν starting far inside the range.
    for (e, nu, nu_start) in [(2.0e5, 0.499, 0.3), (2.0e5, -0.99, -0.33)] {
        let (log_k, log_g) = log_moduli(e, nu);
        for factor in [1.0 / 3.0, 3.0] {
            let mut inner = Moduli { log_k, log_g };
            let mut problem = Reparametrised {
                problem: &mut inner,
                map: &map,
            };
            let start = map.coordinates(&[e * factor, nu_start]).unwrap();
            let mut result = levenberg_marquardt_in_box(
                &mut problem,
                &start,
                &lower,
                &upper,
                &LmOptions::default(),
            )
            .expect("fit");
            for h in &result.history {
                for k in 0..2 {
                    assert!(h.params[k] >= lower[k] && h.params[k] <= upper[k]);
                }
            }
            let s = result.params.clone();
            result.params = map.physical(&s);
            // ν is its own coordinate: the approach to ν = 0.499, next to the singularity of
            // ln K at 0.5, takes more damped steps than a logistic map did (about 33).
            assert_recovered(
                &format!("E = {e}, ν = {nu} from ×{factor}"),
                &result,
                &[e, nu],
                40,
            );
        }
    }
}

/// `r = θ − 2` in the box [−1, 1]: the minimum is outside, the fit ends on the face θ = 1
/// (never beyond), stopped by the projected gradient, its loss ½(1 − 2)² = 0.5.
#[test]
fn a_minimum_outside_the_box_ends_on_its_face_never_beyond() {
    struct Shifted;
    impl LeastSquares for Shifted {
        fn evaluate(&mut self, p: &[f64]) -> crate::Result<(DVec, DMat)> {
            assert!(
                (-1.0..=1.0).contains(&p[0]),
                "evaluated outside the box: {}",
                p[0]
            );
            Ok((DVec::from_element(1, p[0] - 2.0), DMat::identity(1, 1)))
        }
    }
    for start in [-1.0, 0.0, 0.5, 1.0] {
        let result = levenberg_marquardt_in_box(
            &mut Shifted,
            &[start],
            &[-1.0],
            &[1.0],
            &LmOptions::default(),
        )
        .unwrap();
        assert_eq!(result.params, [1.0], "from {start}");
        assert_eq!(result.loss, 0.5);
        assert_eq!(result.stop, LmStop::Gradient);
        assert!(result.history.iter().all(|h| h.params[0] <= 1.0));
    }
    let e =
        levenberg_marquardt_in_box(&mut Shifted, &[1.5], &[-1.0], &[1.0], &LmOptions::default())
            .unwrap_err();
    assert!(e.to_string().contains("outside its box"), "{e}");
    let e =
        levenberg_marquardt_in_box(&mut Shifted, &[0.0], &[1.0], &[-1.0], &LmOptions::default())
            .unwrap_err();
    assert!(e.to_string().contains("empty"), "{e}");
}

/// r = Mθ − b, M = [[2, 1], [1, 1]], b = M (1, 2), in the box θ₁ ≤ 1: the minimum (1, 2) is
/// outside, and on the face θ₁ = 1 the loss ½((2θ₀ − 3)² + (θ₀ − 2)²) is least at θ₀ = 8/5,
/// where ∂L/∂θ₁ = (2θ₀ − 3) + (θ₀ − 2) = −1/5 still pushes out of the box, the loss 1/10. The
/// residual is linear, so once on the face the reduced Gauss-Newton step lands on the answer:
/// a few iterations, however the start lies.
#[test]
fn a_minimum_on_a_face_is_reached_in_a_few_iterations() {
    struct Coupled;
    impl LeastSquares for Coupled {
        fn evaluate(&mut self, p: &[f64]) -> crate::Result<(DVec, DMat)> {
            let m = DMat::from_row_slice(2, 2, &[2.0, 1.0, 1.0, 1.0]);
            let theta = DVec::from_column_slice(p);
            let b = &m * DVec::from_column_slice(&[1.0, 2.0]);
            Ok((&m * theta - b, m))
        }
    }
    for start in [[0.0, 0.0], [5.0, 1.0], [-3.0, -4.0], [1.6, 0.5]] {
        let result = levenberg_marquardt_in_box(
            &mut Coupled,
            &start,
            &[f64::NEG_INFINITY, f64::NEG_INFINITY],
            &[f64::INFINITY, 1.0],
            &LmOptions::default(),
        )
        .unwrap();
        assert!(result.converged(), "from {start:?}: {result:?}");
        assert!(result.iterations <= 12, "from {start:?}: {result:?}");
        assert_eq!(result.params[1], 1.0, "from {start:?}");
        assert!(
            (result.params[0] - 1.6).abs() < 1e-9,
            "from {start:?}: {result:?}"
        );
        assert!(
            (result.loss - 0.1).abs() < 1e-12,
            "from {start:?}: {result:?}"
        );
    }
}

#[test]
fn a_zero_gradient_start_stops_at_once_and_a_tiny_limit_is_reported() {
    let result = levenberg_marquardt(&mut Rosenbrock, &[1.0, 1.0], &LmOptions::default()).unwrap();
    assert_eq!((result.stop, result.iterations), (LmStop::Gradient, 0));
    let options = LmOptions {
        max_iterations: 1,
        ..LmOptions::default()
    };
    let result = levenberg_marquardt(&mut Rosenbrock, &[3.0, 3.0], &options).unwrap();
    assert_eq!(result.stop, LmStop::MaxIterations);
    assert!(!result.converged());
}

#[test]
fn a_non_finite_trial_is_a_rejected_step_and_bad_input_is_an_error() {
    // r = √x − 1 is NaN for x < 0. From x = 9 (r = 2, J = 1/6) the Gauss–Newton step
    // −r/J = −12 lands at x = −3: a nearly undamped trial there must be rejected, not fatal.
    struct Sqrt;
    impl LeastSquares for Sqrt {
        fn evaluate(&mut self, p: &[f64]) -> crate::Result<(DVec, DMat)> {
            let s = p[0].sqrt();
            Ok((
                DVec::from_element(1, s - 1.0),
                DMat::from_element(1, 1, 0.5 / s),
            ))
        }
    }
    let result = levenberg_marquardt(&mut Sqrt, &[9.0], &LmOptions::default()).unwrap();
    assert!(result.converged());
    assert!((result.params[0] - 1.0).abs() < 1e-8);
    assert!(
        result.history.iter().any(|h| !h.accepted),
        "the step into x < 0 was tried and rejected"
    );
    let e = levenberg_marquardt(&mut Sqrt, &[-1.0], &LmOptions::default()).unwrap_err();
    assert!(e.to_string().contains("not finite"), "{e}");
    let e = levenberg_marquardt(&mut Sqrt, &[f64::NAN], &LmOptions::default()).unwrap_err();
    assert!(e.to_string().contains("initial parameter 0"), "{e}");
    struct WrongShape;
    impl LeastSquares for WrongShape {
        fn evaluate(&mut self, _: &[f64]) -> crate::Result<(DVec, DMat)> {
            Ok((DVec::zeros(3), DMat::zeros(2, 1)))
        }
    }
    let e = levenberg_marquardt(&mut WrongShape, &[1.0], &LmOptions::default()).unwrap_err();
    assert!(e.to_string().contains("Jacobian has shape"), "{e}");
}

#[test]
fn coordinates_round_trip_and_their_derivatives_match_finite_differences() {
    for kind in ParameterKind::ALL {
        let values: &[f64] = match kind {
            ParameterKind::YoungModulus => &[1e-3, 1.0, 3e5, 2e11],
            ParameterKind::PoissonRatio => &[0.0001, 0.1, 0.3, 0.4999],
            ParameterKind::Actuator => &[-2.0, 0.0, 0.5],
            ParameterKind::Friction => &[1e-3, 0.2, 1.5],
            ParameterKind::Mass => &[1e-4, 0.0156, 40.0],
            ParameterKind::RayleighMass => &[1e-3, 0.5, 20.0],
            ParameterKind::RayleighStiffness => &[1e-5, 0.01, 0.3],
            ParameterKind::Density => &[1.0, 580.0, 1200.0],
            ParameterKind::Gain => &[-3.0, 0.02, 1.5],
            ParameterKind::Offset => &[-0.5, 0.0, 2.0],
            ParameterKind::TimeConstant => &[1e-3, 0.05, 2.0],
        };
        let map = Parametrisation::parse(&[format!("{}:b", kind.prefix())]).unwrap();
        for &v in values {
            let s = map.coordinates(&[v]).expect("admissible")[0];
            let back = map.physical(&[s])[0];
            assert!(
                (back - v).abs() <= 1e-12 * v.abs().max(1.0),
                "{kind:?} {v} → {back}"
            );
            let f = |x: &DVec| DVec::from_element(1, kind.to_physical(x[0]));
            let fd = central_difference_jacobian(f, &DVec::from_element(1, s), 1e-6);
            let err = relative_error(&[kind.derivative(s)], &[fd[(0, 0)]], 1e-300);
            assert!(err < 1e-6, "{kind:?} at {v}: relative error {err:.2e}");
        }
    }
}

/// Whatever the coordinate (±1e300, ±∞, huge or tiny), the physical value is strictly inside
/// the range: the default ones (E > 0, 0 ≤ ν < 0.5, any finite actuator input) and
/// user-given ones; NaN stays NaN (a failed trial for the fit).
#[test]
fn no_coordinate_maps_onto_or_outside_a_bound() {
    let cases: [(&str, Option<&str>, f64, f64); 8] = [
        ("friction:floor", None, 0.0, f64::INFINITY),
        ("young_modulus:b", None, 0.0, f64::INFINITY),
        ("young_modulus:b", Some("1e5,1e7"), 1e5, 1e7),
        ("young_modulus:b", Some("2e4,"), 2e4, f64::INFINITY),
        ("poisson_ratio:b", None, 0.0, 0.5),
        ("poisson_ratio:b", Some("0.1,0.4"), 0.1, 0.4),
        ("poisson_ratio:b", Some("-1,"), -1.0, 0.5),
        ("actuator:c", Some("0,"), 0.0, f64::INFINITY),
    ];
    for (name, bounds, lo, hi) in cases {
        let mut map = Parametrisation::parse(&[name]).unwrap();
        if let Some(b) = bounds {
            map = map.with_bounds(&[format!("{name}={b}")]).unwrap();
        }
        for s in [
            f64::NEG_INFINITY,
            -1e300,
            -1e10,
            -745.0,
            -1.0,
            0.0,
            0.3,
            1.0,
            745.0,
            1e10,
            1e300,
            f64::INFINITY,
        ] {
            let v = map.physical(&[s])[0];
            assert!(
                v.is_finite() && v > lo && v < hi,
                "{name} {bounds:?}: s = {s} → {v} not strictly inside ({lo}, {hi})"
            );
        }
        assert!(map.physical(&[f64::NAN])[0].is_nan());
    }
    let unbounded = Parametrisation::parse(&["actuator:c"]).unwrap();
    for s in [f64::NEG_INFINITY, f64::INFINITY] {
        assert!(unbounded.physical(&[s])[0].is_finite());
    }
}

/// A start on a closed end (ν = 0, a bound given by --bounds) starts just inside it; an open
/// end (ν = 0.5, E = 0) or a value outside the range is an error naming the range.
#[test]
fn starts_on_closed_ends_move_inside_and_ranges_are_checked() {
    let map = Parametrisation::parse(&["poisson_ratio:b"]).unwrap();
    let s = map.coordinates(&[0.0]).unwrap();
    let nu = map.physical(&s)[0];
    assert!(nu > 0.0 && nu <= 0.5 * RELATIVE_MARGIN * 1.000001, "{nu}");
    for (value, range) in [(0.5, "0 ≤ ν < 0.5"), (-0.1, "0 ≤ ν < 0.5")] {
        let e = map.coordinates(&[value]).unwrap_err().to_string();
        assert!(e.contains("out of range") && e.contains(range), "{e}");
    }
    let bounded = map
        .clone()
        .with_bounds(&["poisson_ratio:b=0.2,0.4"])
        .unwrap();
    let e = bounded.coordinates(&[0.45]).unwrap_err().to_string();
    assert!(e.contains("0.2 ≤ ν ≤ 0.4"), "{e}");
    let top = bounded.physical(&bounded.coordinates(&[0.4]).unwrap())[0];
    assert!(top < 0.4 && top > 0.4 - 1e-6, "{top}");
    let e_map = Parametrisation::parse(&["young_modulus:b"]).unwrap();
    let e = e_map.coordinates(&[0.0]).unwrap_err().to_string();
    assert!(e.contains("0 < E"), "{e}");
    for (entry, expected) in [
        ("poisson_ratio:b=0.5", "NAME=LO,HI"),
        ("poisson_ratio:b=0,0.6", "leaves the admissible"),
        ("poisson_ratio:b=-1.5,", "leaves the admissible"),
        ("poisson_ratio:b=0.4,0.2", "must be below"),
        ("poisson_ratio:b=x,0.2", "`x` is not a number"),
        ("young_modulus:b=-1,", "leaves the admissible"),
        ("young_modulus:b=1e305,", "no room"),
        ("actuator:b=1,2", "not one of the --param"),
    ] {
        let both = Parametrisation::parse(&["poisson_ratio:b", "young_modulus:b"]).unwrap();
        let e = both.with_bounds(&[entry]).unwrap_err().to_string();
        assert!(e.contains(entry) && e.contains(expected), "{entry}: {e}");
    }
    let e = map
        .with_bounds(&["poisson_ratio:b=0,0.4", "poisson_ratio:b=0,0.3"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("given twice"), "{e}");
}

#[test]
fn chained_jacobian_matches_finite_differences_in_s() {
    let map =
        Parametrisation::parse(&["young_modulus:a", "poisson_ratio:a", "actuator:c1"]).unwrap();
    // r(E, ν, a) = [E ν, E + a², ν a]
    struct Toy;
    impl LeastSquares for Toy {
        fn evaluate(&mut self, p: &[f64]) -> crate::Result<(DVec, DMat)> {
            let (e, nu, a) = (p[0], p[1], p[2]);
            let r = DVec::from_vec(vec![e * nu, e + a * a, nu * a]);
            let j = DMat::from_row_slice(3, 3, &[nu, e, 0.0, 1.0, 0.0, 2.0 * a, 0.0, a, nu]);
            Ok((r, j))
        }
    }
    let s = map.coordinates(&[3.0, 0.2, -0.7]).unwrap();
    let mut toy = Toy;
    let mut problem = Reparametrised {
        problem: &mut toy,
        map: &map,
    };
    let (_, j) = problem.evaluate(&s).unwrap();
    let fd = central_difference_jacobian(
        |x: &DVec| {
            let mut toy = Toy;
            let mut fresh = Reparametrised {
                problem: &mut toy,
                map: &map,
            };
            fresh.evaluate(x.as_slice()).unwrap().0
        },
        &DVec::from_column_slice(&s),
        1e-6,
    );
    let err = relative_error(j.as_slice(), fd.as_slice(), 1e-12);
    assert!(err < 1e-6, "relative error {err:.2e}");
}

#[test]
fn names_parse_and_bad_names_or_values_are_clear_errors() {
    let name = ParameterName::parse("young_modulus:beam").unwrap();
    assert_eq!(name.kind, ParameterKind::YoungModulus);
    assert_eq!(name.target, "beam");
    assert_eq!(name.to_string(), "young_modulus:beam");
    assert_eq!(
        "actuator:c3".parse::<ParameterName>().unwrap().kind,
        ParameterKind::Actuator
    );
    for (bad, expected) in [
        ("viscosity:beam", "unknown kind `viscosity`"),
        ("young_modulus", "not of the form KIND:NAME"),
        ("poisson_ratio:", "empty"),
    ] {
        let e = ParameterName::parse(bad).unwrap_err().to_string();
        assert!(e.contains(bad) && e.contains(expected), "{e}");
        if !bad.ends_with(':') {
            assert!(
                e.contains("young_modulus:NAME"),
                "lists the known kinds: {e}"
            );
        }
    }
    let e = Parametrisation::parse(&["young_modulus:b", "young_modulus:b"]).unwrap_err();
    assert!(e.to_string().contains("more than once"), "{e}");
    for (text, value) in [
        ("young_modulus:b", 0.0),
        ("young_modulus:b", -1.0),
        ("poisson_ratio:b", 0.5),
        ("poisson_ratio:b", -1.0),
        ("poisson_ratio:b", f64::NAN),
        ("rayleigh_mass:b", 0.0),
        ("rayleigh_stiffness:b", -0.01),
        ("density:b", -1000.0),
    ] {
        let e = Parametrisation::parse(&[text])
            .unwrap()
            .coordinates(&[value])
            .unwrap_err();
        assert!(
            e.to_string().contains(text) && e.to_string().contains("out of range"),
            "{e}"
        );
    }
}
