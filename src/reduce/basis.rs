//! The reduced basis: proper orthogonal decomposition (POD) of displacement snapshots by the
//! method of snapshots (Goury & Duriez, IEEE T-RO 2018, Sec. III-A): the eigenvectors of the
//! snapshots' Gram matrix YᵀY give the left singular vectors of Y = [u₁ … u_S], whose leading
//! ones are the modes.

use crate::error::{Error, Result};
use crate::math::DMat;

/// How many modes to keep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ModeChoice {
    /// Exactly this many (at most the snapshots' rank).
    Count(usize),
    /// The fewest whose discarded share of the snapshots' energy Σσ² is at most this
    /// (dimensionless, e.g. 1e-6).
    Tolerance(f64),
}

/// The basis found by [`pod`].
#[derive(Debug, Clone)]
pub struct Pod {
    /// The modes, one per column, orthonormal (N × K, N the free degrees of freedom).
    pub modes: DMat,
    /// σₖ² of every mode of the snapshots, descending (m²): the energy each carries.
    pub energies: Vec<f64>,
    /// The share of Σσ² the kept modes leave out (dimensionless).
    pub discarded: f64,
}

/// The POD of the snapshots `y` (N × S, one displacement per column, m). Errors: no
/// snapshot, snapshots all zero, or a tolerance outside (0, 1).
pub fn pod(y: &DMat, choice: ModeChoice) -> Result<Pod> {
    if y.ncols() == 0 || y.nrows() == 0 {
        return Err(Error::invalid(
            "reduce",
            "no snapshot to build a basis from",
        ));
    }
    let gram = y.transpose() * y;
    let eigen = gram.symmetric_eigen();
    let mut order: Vec<usize> = (0..eigen.eigenvalues.len()).collect();
    order.sort_by(|&a, &b| eigen.eigenvalues[b].total_cmp(&eigen.eigenvalues[a]));
    let energies: Vec<f64> = order
        .iter()
        .map(|&k| eigen.eigenvalues[k].max(0.0))
        .collect();
    let total: f64 = energies.iter().sum();
    if total <= 0.0 {
        return Err(Error::invalid(
            "reduce",
            "the training runs never leave their start: nothing to build a basis from",
        ));
    }
    // Modes past round-off of the largest are not modes of the snapshots.
    let rank = energies
        .iter()
        .take_while(|&&e| e > 1e-13 * energies[0])
        .count();
    let k = match choice {
        ModeChoice::Count(0) => {
            return Err(Error::invalid("--modes", "must be at least 1"));
        }
        ModeChoice::Count(k) => k.min(rank),
        ModeChoice::Tolerance(t) if !(t > 0.0 && t < 1.0) => {
            return Err(Error::invalid(
                "--basis-tolerance",
                format!("must lie in (0, 1), got {t}"),
            ));
        }
        ModeChoice::Tolerance(t) => {
            let mut kept = 0.0;
            let mut k = 0;
            while k < rank && (total - kept) > t * total {
                kept += energies[k];
                k += 1;
            }
            k.max(1)
        }
    };
    let mut modes = DMat::zeros(y.nrows(), k);
    for (c, &j) in order.iter().take(k).enumerate() {
        let u = eigen.eigenvectors.column(j);
        let mut m = modes.column_mut(c);
        m.copy_from(&(y * u));
        let norm = m.norm();
        m /= norm;
    }
    // One more Gram–Schmidt pass: the snapshot products lose orthogonality in the small modes.
    let modes = modes.qr().q();
    let kept: f64 = energies[..k].iter().sum();
    Ok(Pod {
        modes,
        discarded: ((total - kept) / total).max(0.0),
        energies,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Snapshots spanned by two known orthonormal directions with amplitudes of energies
    /// 9·S/2 and 1·S/2 (sines of unit and third amplitude), plus nothing else.
    fn two_directions() -> (DMat, DMat) {
        let n = 12;
        let mut dirs = DMat::zeros(n, 2);
        for i in 0..n {
            dirs[(i, 0)] = if i % 2 == 0 { 1.0 } else { 0.0 };
            dirs[(i, 1)] = if i % 3 == 0 { 1.0 } else { -0.5 };
        }
        let dirs = dirs.qr().q();
        let s = 40;
        let y = DMat::from_fn(n, s, |i, j| {
            let t = j as f64 / s as f64 * std::f64::consts::TAU;
            3.0 * t.sin() * dirs[(i, 0)] + t.cos() * dirs[(i, 1)]
        });
        (y, dirs)
    }

    #[test]
    fn the_modes_span_the_snapshots_directions_ordered_by_energy() {
        let (y, dirs) = two_directions();
        let p = pod(&y, ModeChoice::Count(2)).unwrap();
        // Σ over the samples of sin² and cos² on a full period is S/2 each.
        let s = y.ncols() as f64;
        assert!((p.energies[0] - 9.0 * s / 2.0).abs() < 1e-9 * s);
        assert!((p.energies[1] - s / 2.0).abs() < 1e-9 * s);
        // The first mode is the first direction up to sign, the second the second.
        for k in 0..2 {
            let c = p.modes.column(k).dot(&dirs.column(k)).abs();
            assert!((c - 1.0).abs() < 1e-12, "{k}: {c}");
        }
        assert!(p.discarded < 1e-12);
    }

    #[test]
    fn a_tolerance_keeps_the_fewest_modes_that_meet_it() {
        let (y, _) = two_directions();
        // The second mode carries 1/10 of the energy.
        assert_eq!(
            pod(&y, ModeChoice::Tolerance(0.2)).unwrap().modes.ncols(),
            1
        );
        let p = pod(&y, ModeChoice::Tolerance(0.05)).unwrap();
        assert_eq!(p.modes.ncols(), 2);
        // Asking for more modes than the snapshots have gives their rank.
        assert_eq!(pod(&y, ModeChoice::Count(5)).unwrap().modes.ncols(), 2);
        assert!(pod(&y, ModeChoice::Tolerance(1.5)).is_err());
        assert!(pod(&DMat::zeros(4, 3), ModeChoice::Count(1)).is_err());
    }
}
