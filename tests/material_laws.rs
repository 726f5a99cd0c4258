//! Physics and contract tests of the material laws through the public API: parameter
//! derivatives against central differences in E and ν, zero stress under rotations, agreement
//! with linear elasticity at small strain, inverted Neo-Hookean elements, Lamé validation.

use diffsoro::Error;
use diffsoro::material::{DeformationError, Law, Material};
use diffsoro::math::{DVec, Mat3, SplitMix64, Vec3, central_difference_jacobian, relative_error};

const LAWS: [Law; 3] = [Law::Corotational, Law::StVK, Law::NeoHookean];

/// Deterministic numbers uniform in [−1, 1).
struct Rng(SplitMix64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0.uniform()
    }
    fn mat3(&mut self) -> Mat3 {
        Mat3::from_fn(|_, _| self.next())
    }
}

fn rotation(w: Vec3) -> Mat3 {
    nalgebra::Rotation3::new(w).into_inner()
}

fn deformations() -> Vec<Mat3> {
    let mut rng = Rng(SplitMix64::new(3));
    vec![
        Mat3::identity() + rng.mat3() * 1e-3,
        rotation(Vec3::new(0.2, 0.9, -0.4))
            * Mat3::from_diagonal(&Vec3::new(2.5, 0.6, 1.4))
            * rotation(Vec3::new(-1.0, 0.3, 0.5)),
        Mat3::new(1.0, 0.8, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0),
        Mat3::identity() + rng.mat3() * 0.3,
        rotation(Vec3::new(0.3, -1.1, 0.4))
            * Mat3::from_diagonal(&Vec3::new(1.4, 0.8, 0.801))
            * rotation(Vec3::new(-0.7, 0.2, 0.9)),
    ]
}

/// Every output of a material at `f`, stacked into one vector: Ψ, P, ∂P/∂F, ∂P/∂F : dF₁,
/// d²P[dF₁, dF₂], ∂(∂P/∂F : dF₁)/∂F.
fn outputs(m: &Material, f: &Mat3, df1: &Mat3, df2: &Mat3) -> DVec {
    let p = m.at(f).unwrap();
    outputs_of(&p, df1, df2)
}

fn outputs_of(p: &diffsoro::material::MaterialPoint, df1: &Mat3, df2: &Mat3) -> DVec {
    let mut v = vec![p.energy_density()];
    v.extend_from_slice(p.stress().as_slice());
    v.extend_from_slice(p.tangent().as_slice());
    v.extend_from_slice(p.tangent_action(df1).as_slice());
    v.extend_from_slice(p.tangent_derivative(df1, df2).as_slice());
    v.extend_from_slice(p.tangent_derivative_matrix(df1).as_slice());
    DVec::from_vec(v)
}

#[test]
fn parameter_derivatives_match_finite_differences() {
    let mut rng = Rng(SplitMix64::new(5));
    let (df1, df2) = (rng.mat3(), rng.mat3());
    for law in LAWS {
        for &(e, nu) in &[(1.0e5, 0.3), (2.0e6, 0.45), (5.0e4, -0.2)] {
            let m = Material::new(law, e, nu).unwrap();
            for f in &deformations() {
                let point = m.at(f).unwrap();
                let d_e = outputs_of(&m.d_young_modulus(&point), &df1, &df2);
                let d_nu = outputs_of(&m.d_poisson_ratio(&point), &df1, &df2);
                let fd_e = central_difference_jacobian(
                    |x| outputs(&Material::new(law, x[0], nu).unwrap(), f, &df1, &df2),
                    &DVec::from_element(1, e),
                    1e-4 * e,
                );
                let fd_nu = central_difference_jacobian(
                    |x| outputs(&Material::new(law, e, x[0]).unwrap(), f, &df1, &df2),
                    &DVec::from_element(1, nu),
                    1e-6,
                );
                // Floors: outputs are O(E) per unit of strain; ∂/∂E outputs are O(1).
                let err_e = relative_error(d_e.as_slice(), fd_e.as_slice(), 1e-6);
                let err_nu = relative_error(d_nu.as_slice(), fd_nu.as_slice(), 1e-6 * e);
                assert!(
                    err_e < 1e-6,
                    "{law} E={e} ν={nu} F={f:?}: ∂/∂E error {err_e:e}"
                );
                assert!(
                    err_nu < 1e-6,
                    "{law} E={e} ν={nu} F={f:?}: ∂/∂ν error {err_nu:e}"
                );
            }
        }
    }
}

#[test]
fn rotations_are_stress_and_energy_free() {
    let e = 1.0e6;
    for law in LAWS {
        let m = Material::new(law, e, 0.35).unwrap();
        for w in [
            Vec3::zeros(),
            Vec3::new(0.3, -0.2, 0.9),
            Vec3::new(2.5, 0.4, -1.0),
            Vec3::new(0.0, 0.0, 3.0),
        ] {
            let p = m.at(&rotation(w)).unwrap();
            assert!(p.energy_density().abs() < 1e-12 * e, "{law} {w:?}");
            assert!(p.stress().norm() < 1e-9 * e, "{law} {w:?}: {}", p.stress());
        }
    }
}

#[test]
fn small_strain_agrees_with_linear_elasticity() {
    // F = I + εG: P = 2μ sym(εG) + λ tr(εG) I + O(ε²), so the relative deviation is O(ε).
    let mut rng = Rng(SplitMix64::new(9));
    for law in LAWS {
        let m = Material::new(law, 3.0e5, 0.4).unwrap();
        let l = m.lame();
        for _ in 0..4 {
            let g = rng.mat3();
            for eps in [1e-6, 1e-4] {
                let strain = (g + g.transpose()) * (0.5 * eps);
                let linear = strain * (2.0 * l.mu) + Mat3::identity() * (l.lambda * strain.trace());
                let p = m.at(&(Mat3::identity() + g * eps)).unwrap().stress();
                let err = relative_error(p.as_slice(), linear.as_slice(), 0.0);
                assert!(
                    err < 10.0 * eps,
                    "{law} ε={eps}: relative deviation {err:e}"
                );
            }
        }
    }
}

#[test]
fn inverted_neo_hookean_elements_are_reported() {
    let m = Material::new(Law::NeoHookean, 1e5, 0.3).unwrap();
    let f = rotation(Vec3::new(0.1, 0.2, 0.3)) * Mat3::from_diagonal(&Vec3::new(1.0, 0.5, -0.2));
    match m.at(&f) {
        Err(DeformationError::Inverted { j }) => assert!((j + 0.1).abs() < 1e-12),
        other => panic!("expected an inverted-element status, got {other:?}"),
    }
    let err = m.at(&Mat3::zeros()).unwrap_err().at_element(4);
    assert!(err.to_string().starts_with("tetrahedron 4:"), "{err}");
    // The other laws stay defined for inverted elements.
    for law in [Law::Corotational, Law::StVK] {
        let m = Material::new(law, 1e5, 0.3).unwrap();
        assert!(m.at(&f).unwrap().energy_density() > 0.0);
    }
}

#[test]
fn invalid_parameters_are_named() {
    for (e, nu, what) in [
        (0.0, 0.3, "young_modulus"),
        (f64::NAN, 0.3, "young_modulus"),
        (f64::INFINITY, 0.3, "young_modulus"),
        (1e5, 0.5, "poisson_ratio"),
        (1e5, -1.0, "poisson_ratio"),
        (1e5, f64::NAN, "poisson_ratio"),
    ] {
        match Material::new(Law::Corotational, e, nu) {
            Err(Error::Invalid { what: w, .. }) => assert_eq!(w, what),
            other => panic!("E={e} ν={nu}: expected an error naming {what}, got {other:?}"),
        }
    }
}
