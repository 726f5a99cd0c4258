//! The complementarity-aware variant of the sliding derivative (paper 003).

use super::*;
use crate::contact::{AdmmSettings, AdmmSolver, ContactProblem};
use crate::math::DVec;

/// A tied contact that slips tangentially (λ = 0, σ_N = 0, σ_T ≠ 0) closes into sliding
/// at the cone's apex: the complementarity-aware cotangent equals the closing-side
/// derivative, measured by Richardson-extrapolated forward differences of ADMM solves.
#[test]
fn tied_slipping_contact_closes_into_sliding() {
    let g = DMat::from_row_slice(3, 3, &[1.0, 0.1, -0.05, 0.1, 0.8, 0.02, -0.05, 0.02, 1.2]);
    let mu = [0.6];
    let sigma = [0.3, -0.1, 0.0];
    let aware = BoundaryGradient::ComplementarityAware {
        tied_velocity: 1e-8,
    };
    let d =
        NcpDerivative::new(&g, &mu, &[0.0; 3], &sigma, &[ContactMode::Breaking], aware).unwrap();
    let lambda_bar = [0.2, 0.1, -1.0];
    let mut q_bar = [0.0; 3];
    assert_eq!(
        d.cotangent(&lambda_bar, &mut q_bar),
        CotangentSide::Relabelled(1)
    );
    let solve = |free: &DVec| {
        let p = ContactProblem::new(g.clone(), free.clone(), &mu).unwrap();
        let mut admm = AdmmSolver::new(AdmmSettings {
            tolerance: 1e-14,
            max_iterations: 100_000,
            ..AdmmSettings::default()
        });
        admm.solve(&p, None).unwrap()
    };
    let u = DVec::from_vec(vec![0.05, 0.02, -1.0]);
    let free0 = DVec::from_column_slice(&sigma);
    let l0 = solve(&free0).lambda;
    assert!(l0.norm() < 1e-12);
    let diff = |eps: f64| {
        let s = solve(&(&free0 + eps * &u));
        assert!(s.residuals.max() < 1e-12, "{:?}", s.residuals);
        (s.lambda - &l0) / eps
    };
    let eps = 1e-3;
    let dl = 2.0 * diff(eps / 2.0) - diff(eps);
    let directional = DVec::from_column_slice(&lambda_bar).dot(&dl);
    let predicted = DVec::from_column_slice(&q_bar).dot(&u);
    assert!(
        (directional - predicted).abs() < 1e-6 * directional.abs(),
        "{directional} vs {predicted}"
    );
}
