//! Test support for the laws: a deterministic tiny PRNG, sample deformation gradients and the
//! finite-difference checks every law must pass (docs/derivatives.md: 1e-6 relative, norm-wise).

use super::{HyperelasticPoint, Lame, Mat9};
use crate::math::{DVec, Mat3, SplitMix64, Vec3, central_difference_jacobian, relative_error};

/// Derivative agreement bar (norm-wise relative).
pub const TOLERANCE: f64 = 1e-6;
/// Central-difference step in F (dimensionless entries of order one).
const STEP: f64 = 1e-5;
/// Floor of the relative error (in units of the Lamé pair): a stress that vanishes exactly
/// (P_λ at tr S = 3 or J = 1) is compared in absolute terms, where the O(h²) truncation of
/// the central difference (~1e-11) must stay below 1e-6 × 1e-4. The smallest nonzero
/// stresses of the samples are ~1e-3, so they are still judged relatively.
const FLOOR: f64 = 1e-4;

/// The shared deterministic generator ([`SplitMix64`]) with the sampling these tests need.
pub struct Rng(SplitMix64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed))
    }

    /// The next number in [−1, 1).
    pub fn next(&mut self) -> f64 {
        self.0.uniform()
    }

    /// A 3×3 matrix with entries in [−1, 1).
    pub fn mat3(&mut self) -> Mat3 {
        Mat3::from_fn(|_, _| self.next())
    }
}

/// The rotation of axis-angle vector `w` (rad).
pub fn rotation(w: Vec3) -> Mat3 {
    nalgebra::Rotation3::new(w).into_inner()
}

/// Deformation gradients with det F > 0: near identity, large stretch, shear, random.
pub fn sample_deformations() -> Vec<Mat3> {
    let mut rng = Rng::new(7);
    let mut fs = vec![
        Mat3::identity() + rng.mat3() * 1e-3,
        rotation(Vec3::new(0.2, 0.9, -0.4))
            * Mat3::from_diagonal(&Vec3::new(2.5, 0.6, 1.4))
            * rotation(Vec3::new(-1.0, 0.3, 0.5)),
        Mat3::new(1.0, 0.8, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0),
    ];
    for _ in 0..3 {
        fs.push(Mat3::identity() + rng.mat3() * 0.35);
    }
    for f in &fs {
        assert!(f.determinant() > 0.1);
    }
    fs
}

fn mat(x: &DVec) -> Mat3 {
    Mat3::from_column_slice(x.as_slice())
}

fn vec9(m: &Mat3) -> DVec {
    DVec::from_column_slice(m.as_slice())
}

/// Asserts that `a` and `b` agree to [`TOLERANCE`], with a message.
#[track_caller]
pub fn assert_close(a: &[f64], b: &[f64], what: &str) {
    let e = relative_error(a, b, FLOOR);
    assert!(e < TOLERANCE, "{what}: relative error {e:e}");
}

/// All finite-difference checks of a law at `f`, for the two basis pairs and a mixed pair:
/// P = ∂Ψ/∂F, ∂P/∂F = ∂P/∂F by FD (and symmetric), the action equals the 9×9 product,
/// d²P[dF₁, dF₂] = FD of ∂P/∂F : dF₁ in dF₂ (and symmetric in the directions), its 9×9
/// matrix = the FD Jacobian of ∂P/∂F : dF₁, the terms of `reverse_terms` equal those one by
/// one, and the outputs are linear in (μ, λ).
#[track_caller]
pub fn check_law<P: HyperelasticPoint>(f: &Mat3) {
    let mut rng = Rng::new(11);
    let mixed = Lame {
        mu: 1.3,
        lambda: 2.1,
    };
    let x = vec9(f);
    let point = P::at(f).unwrap();
    for lame in [Lame::UNIT_MU, Lame::UNIT_LAMBDA, mixed] {
        let ctx = format!("F = {f:?}, lame = {lame:?}");
        let at = |x: &DVec| P::at(&mat(x)).unwrap();

        // P = ∂Ψ/∂F.
        let grad = central_difference_jacobian(
            |x| DVec::from_element(1, at(x).energy_density(&lame)),
            &x,
            STEP,
        );
        let p = point.stress(&lame);
        assert_close(
            p.as_slice(),
            grad.as_slice(),
            &format!("P vs FD of Ψ, {ctx}"),
        );

        // ∂P/∂F by FD of P, the combined call, and symmetry (a Hessian).
        let jac = central_difference_jacobian(|x| vec9(&at(x).stress(&lame)), &x, STEP);
        let h: Mat9 = point.tangent(&lame);
        assert_close(h.as_slice(), jac.as_slice(), &format!("∂P/∂F vs FD, {ctx}"));
        assert_close(
            h.as_slice(),
            h.transpose().as_slice(),
            &format!("∂P/∂F symmetry, {ctx}"),
        );
        let (p2, h2) = point.stress_and_tangent(&lame);
        assert_eq!(p2, p);
        assert_eq!(h2, h);

        // Action and second directional derivative.
        let df1 = rng.mat3();
        let df2 = rng.mat3();
        let action = point.tangent_action(&lame, &df1);
        let by_matrix = super::contract(&h, &df1);
        assert_close(
            action.as_slice(),
            by_matrix.as_slice(),
            &format!("∂P/∂F:dF vs 9×9 product, {ctx}"),
        );
        // Two pairs at once: each the single call's bits.
        let pair = point.tangent_actions([&lame, &mixed], &df1);
        assert_eq!(pair, [action, point.tangent_action(&mixed, &df1)], "{ctx}");
        // The bilinear form against vec(dF₂)ᵀ H vec(dF₁), and its symmetry.
        let h_df1 = h * nalgebra::SVector::<f64, 9>::from_column_slice(df1.as_slice());
        let by_matrix_form: f64 = h_df1.iter().zip(df2.as_slice()).map(|(a, b)| a * b).sum();
        let scale = h.norm() * df1.norm() * df2.norm();
        for form in [
            point.tangent_form(&lame, &df1, &df2),
            point.tangent_form(&lame, &df2, &df1),
        ] {
            assert!(
                (form - by_matrix_form).abs() <= 1e-12 * scale,
                "dF1:∂P/∂F:dF2 = {form} against the 9×9 product's {by_matrix_form}, {ctx}"
            );
        }
        let t = DVec::from_element(1, 0.0);
        let fd = central_difference_jacobian(
            |t| {
                vec9(
                    &P::at(&(f + df2 * t[0]))
                        .unwrap()
                        .tangent_action(&lame, &df1),
                )
            },
            &t,
            STEP,
        );
        let d2 = point.tangent_derivative(&lame, &df1, &df2);
        assert_close(
            d2.as_slice(),
            fd.as_slice(),
            &format!("d²P[dF1,dF2] vs FD, {ctx}"),
        );
        let fd_matrix =
            central_difference_jacobian(|x| vec9(&at(x).tangent_action(&lame, &df1)), &x, STEP);
        assert_close(
            point.tangent_derivative_matrix(&lame, &df1).as_slice(),
            fd_matrix.as_slice(),
            &format!("∂(∂P/∂F:dF1)/∂F vs FD, {ctx}"),
        );
        let d2_swapped = point.tangent_derivative(&lame, &df2, &df1);
        assert_close(
            d2.as_slice(),
            d2_swapped.as_slice(),
            &format!("d²P symmetry, {ctx}"),
        );

        // The reverse sweep's terms in one call against the calls one by one (checked
        // above), to round-off.
        let forms = [Lame::UNIT_LAMBDA, mixed];
        let mut out = [0.0; 2];
        let (dp, ddp) = point.reverse_terms(&lame, &df1, &df2, &forms, &mut out);
        let close = |a: &Mat3, b: &Mat3, what: &str| {
            let e = (a - b).amax() / b.amax().max(FLOOR);
            assert!(
                e < 1e-12,
                "{what} in reverse_terms: relative error {e:e}, {ctx}"
            );
        };
        close(&dp, &point.tangent_action(&lame, &df2), "∂P/∂F:dF2");
        close(&ddp, &d2, "d²P[dF1,dF2]");
        for (form, pair) in out.iter().zip(&forms) {
            let alone = point.tangent_form(pair, &df1, &df2);
            let scale = point.tangent(pair).norm() * df1.norm() * df2.norm();
            assert!(
                (form - alone).abs() <= 1e-12 * scale,
                "form {form} in reverse_terms against {alone} alone, {ctx}"
            );
        }
    }

    // Linearity in (μ, λ): the mixed outputs are the weighted basis outputs.
    let (mu, la) = (mixed.mu, mixed.lambda);
    let lin = point.stress(&Lame::UNIT_MU) * mu + point.stress(&Lame::UNIT_LAMBDA) * la;
    assert_close(
        point.stress(&mixed).as_slice(),
        lin.as_slice(),
        "P linear in (μ, λ)",
    );
    let psi =
        mu * point.energy_density(&Lame::UNIT_MU) + la * point.energy_density(&Lame::UNIT_LAMBDA);
    assert_close(
        &[point.energy_density(&mixed)],
        &[psi],
        "Ψ linear in (μ, λ)",
    );
}
