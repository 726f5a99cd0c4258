//! [`NcpDerivative::refill`] and the `_with` solves reuse their buffers without changing a
//! bit of the result: one derivative refilled through NCPs of varying size, modes and rank
//! against a fresh [`NcpDerivative::new`] each time.

use super::*;
use crate::math::{DVec, SplitMix64};

use ContactMode::{Breaking, Sliding, Sticking};

/// An SPD Delassus matrix `H Hᵀ + 0.1 I` (n contacts); with `duplicate`, contact n − 1
/// repeats contact 0 (G singular, the reduced system rank deficient when both stick).
fn delassus(rng: &mut SplitMix64, n: usize, duplicate: bool) -> DMat {
    let h = DMat::from_fn(3 * n, 3 * n, |_, _| rng.uniform());
    let h = DMat::from_fn(3 * n, 3 * n, |r, c| {
        if duplicate && r >= 3 * (n - 1) {
            h[(r - 3 * (n - 1), c)]
        } else {
            h[(r, c)]
        }
    });
    let shift = if duplicate { 0.0 } else { 0.1 };
    &h * h.transpose() + shift * DMat::identity(3 * n, 3 * n)
}

#[test]
fn refilled_derivative_equals_a_fresh_one_bit_for_bit() {
    let mut rng = SplitMix64::new(7);
    let aware = BoundaryGradient::ComplementarityAware {
        tied_velocity: 1e-6,
    };
    let cases: [(&[ContactMode], bool, BoundaryGradient); 5] = [
        (
            &[Sticking, Sliding, Breaking],
            false,
            BoundaryGradient::OneSided,
        ),
        (&[Sliding, Sliding], false, BoundaryGradient::OneSided),
        (
            &[Sticking, Sticking, Sliding, Sticking],
            false,
            BoundaryGradient::OneSided,
        ),
        (
            &[Sticking, Sliding, Sticking],
            true,
            BoundaryGradient::OneSided,
        ),
        (&[Breaking, Sticking, Sliding], false, aware),
    ];
    let mut refilled = NcpDerivative::default();
    let mut scratch = NcpSolveScratch::default();
    let (mut dl_refilled, mut dl_fresh) = (DMat::zeros(0, 0), DMat::zeros(0, 0));
    let mut statuses = Vec::new();
    for (modes, duplicate, boundary) in cases {
        let n = modes.len();
        let g = delassus(&mut rng, n, duplicate);
        let friction: Vec<f64> = (0..n).map(|_| 0.3 + 0.2 * rng.uniform()).collect();
        let mut lambda: Vec<f64> = (0..3 * n).map(|_| rng.uniform()).collect();
        let mut sigma: Vec<f64> = (0..3 * n).map(|_| rng.uniform()).collect();
        for (i, m) in modes.iter().enumerate() {
            match m {
                Breaking => {
                    lambda[3 * i..3 * i + 3].fill(0.0);
                    // A tied contact: touching (σ_N = 0).
                    sigma[3 * i + 2] = 0.0;
                }
                _ => lambda[3 * i + 2] = 1.0 + lambda[3 * i + 2].abs(),
            }
        }
        let fresh = NcpDerivative::new(&g, &friction, &lambda, &sigma, modes, boundary).unwrap();
        refilled
            .refill(&g, &friction, &lambda, &sigma, modes, boundary)
            .unwrap();
        assert_eq!(refilled.status(), fresh.status());
        assert_eq!(refilled.reduced_size(), fresh.reduced_size());
        statuses.push(fresh.status());
        let dq = DMat::from_fn(3 * n, 4, |_, _| rng.uniform());
        refilled.tangent_many_with(&dq, &mut dl_refilled, &mut scratch);
        fresh.tangent_many(&dq, &mut dl_fresh);
        assert_eq!(dl_refilled, dl_fresh);
        // λ̄ with a negative normal entry at each tied contact: asks them to close.
        let lambda_bar = DVec::from_fn(3 * n, |k, _| if k % 3 == 2 { -1.0 } else { 0.5 });
        let (mut q_refilled, mut q_fresh) = (vec![0.0; 3 * n], vec![0.0; 3 * n]);
        let side_refilled =
            refilled.cotangent_with(lambda_bar.as_slice(), &mut q_refilled, &mut scratch);
        let side_fresh = fresh.cotangent(lambda_bar.as_slice(), &mut q_fresh);
        assert_eq!(side_refilled, side_fresh);
        assert_eq!(q_refilled, q_fresh);
    }
    // The cases cover the QR and the pseudo-inverse paths.
    assert!(statuses.contains(&ReducedStatus::Regular));
    assert!(
        statuses
            .iter()
            .any(|s| matches!(s, ReducedStatus::RankDeficient { .. }))
    );
}

/// A refill with bad input errors and leaves the derivative as it was.
#[test]
fn a_failed_refill_leaves_the_derivative_unchanged() {
    let g = DMat::identity(3, 3);
    let lambda = [0.1, 0.0, 1.0];
    let mut d = NcpDerivative::new(
        &g,
        &[0.5],
        &lambda,
        &[0.0; 3],
        &[Sticking],
        Default::default(),
    )
    .unwrap();
    let dq = [0.3, -0.2, 0.1];
    let mut before = [0.0; 3];
    d.tangent(&dq, &mut before);
    assert!(
        d.refill(
            &g,
            &[-1.0],
            &lambda,
            &[0.0; 3],
            &[Sticking],
            Default::default()
        )
        .is_err()
    );
    let mut after = [0.0; 3];
    d.tangent(&dq, &mut after);
    assert_eq!(before, after);
}
