//! A run against a held-out recording (`simulate --inputs … --observed-markers FILE.csv`):
//! every observed sample inside the run compared with the simulated marker at its time (linear
//! between the saved states around it, as a fit compares), absolute or relative to each
//! track's first sample, after the best camera → scene frame for this run when registering
//! (the least-squares translation, the mean offset, or rigid map, Kabsch: both exact, since
//! the run does not move with the frame), summarised as RMS residuals overall and per marker.

use crate::math::Vec3;
use crate::scene::{FrameOutput, MarkerErrorOutput, MarkerTracks, Track};

use super::frame::Registration;
use super::residuals::{Comparison, SimulatedMarkers, TrialTracks, assemble, best_frame};
use super::statistics::{rms, rms_per_marker};

/// The marker error of `simulated` (every marker at every saved state, times in s on the
/// file clock, as `simulate` records them from `t0`, its time 0) against `observed` (m, the
/// camera's frame, scene marker order), under `comparison` and `registration`. Samples before
/// the run's start or after its last state are left out and counted in `outside`.
pub fn marker_error(
    observed: &MarkerTracks,
    simulated: &MarkerTracks,
    t0: f64,
    comparison: Comparison,
    registration: Registration,
) -> MarkerErrorOutput {
    assert_eq!(
        observed.names, simulated.names,
        "tracks in the scene's order"
    );
    // The run as saved states: every marker has a sample at every state.
    let markers = simulated.tracks.len();
    let times = simulated
        .tracks
        .first()
        .map(|t| t.times.clone())
        .unwrap_or_default();
    let mut run = SimulatedMarkers::new(markers, 0);
    for (k, &t) in times.iter().enumerate() {
        let positions: Vec<Vec3> = simulated.tracks.iter().map(|t| t.positions[k]).collect();
        run.push(t - t0, &positions, |_, _| Vec3::zeros());
    }
    let (first, last) = (
        times.first().copied().unwrap_or(f64::INFINITY),
        times.last().copied().unwrap_or(f64::NEG_INFINITY),
    );
    let mut outside = 0;
    let inside = MarkerTracks {
        names: observed.names.clone(),
        tracks: observed
            .tracks
            .iter()
            .map(|track| {
                let mut kept = Track::default();
                for (&t, &p) in track.times.iter().zip(&track.positions) {
                    if t >= first && t <= last {
                        kept.times.push(t);
                        kept.positions.push(p);
                    } else {
                        outside += 1;
                    }
                }
                kept
            })
            .collect(),
    };
    let tracks = [TrialTracks {
        observed: &inside,
        t0,
        simulated: &run,
    }];
    let frame = best_frame(&tracks, comparison, registration);
    let residuals = assemble(&tracks, comparison, registration, &frame, 0);
    MarkerErrorOutput {
        rms: rms(residuals.values.iter().copied()),
        per_marker: rms_per_marker(&residuals.samples, &observed.names),
        samples: residuals.samples.len(),
        outside,
        compare: comparison.label().to_string(),
        register: registration.label().to_string(),
        frame: (registration != Registration::None).then(|| FrameOutput {
            translation: frame.translation.into(),
            rotation: frame.rotation.into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two markers, the run at 0, 0.1, 0.2 s after t₀ = 5 s; observed samples between the
    /// states (one after the run: outside), shifted by a camera translation: without a frame
    /// the RMS is the shift's, with a translation registered it is the residual left after the
    /// mean offset, computed by hand.
    #[test]
    fn the_marker_error_of_a_hand_computed_case() {
        let names = vec!["a".to_string(), "b".to_string()];
        let mut simulated = MarkerTracks::new(names.clone());
        for k in 0..3 {
            let t = 5.0 + 0.1 * k as f64;
            simulated.record(
                t,
                &[
                    Vec3::new(k as f64, 0.0, 0.0),
                    Vec3::new(0.0, 2.0 * k as f64, 0.0),
                ],
            );
        }
        let shift = Vec3::new(0.0, 0.0, 0.3);
        let observed = MarkerTracks {
            names,
            tracks: vec![
                Track {
                    // a at 5.05 s: (0.5, 0, 0); at 5.2: (2, 0, 0); at 5.3: outside.
                    times: vec![5.05, 5.2, 5.3],
                    positions: vec![
                        Vec3::new(0.5, 0.0, 0.0) - shift + Vec3::new(0.1, 0.0, 0.0),
                        Vec3::new(2.0, 0.0, 0.0) - shift - Vec3::new(0.1, 0.0, 0.0),
                        Vec3::zeros(),
                    ],
                },
                Track {
                    // b at 5.15 s: (0, 3, 0).
                    times: vec![5.15],
                    positions: vec![Vec3::new(0.0, 3.0, 0.0) - shift],
                },
            ],
        };
        let e = marker_error(
            &observed,
            &simulated,
            5.0,
            Comparison::Absolute,
            Registration::None,
        );
        assert_eq!((e.samples, e.outside), (3, 1));
        // Residuals: a (0.1, 0, −0.3), (−0.1, 0, −0.3); b (0, 0, −0.3): Σr² = 0.02 + 0.27.
        assert!((e.rms.unwrap() - (0.29f64 / 9.0).sqrt()).abs() < 1e-14);
        assert!((e.per_marker["b"] - (0.09f64 / 3.0).sqrt()).abs() < 1e-14);
        let e = marker_error(
            &observed,
            &simulated,
            5.0,
            Comparison::Absolute,
            Registration::Translation,
        );
        // The mean offset is (0, 0, 0.3): left are ±0.1 in a's x.
        let frame = e.frame.unwrap();
        assert!((frame.translation[2] - 0.3).abs() < 1e-14 && frame.translation[0].abs() < 1e-14);
        assert!((e.rms.unwrap() - (0.02f64 / 9.0).sqrt()).abs() < 1e-14);
        let e = marker_error(
            &observed,
            &simulated,
            5.0,
            Comparison::Displacement,
            Registration::None,
        );
        // a relative to its first sample: observed (1.3, 0, 0) against simulated (1.5, 0, 0);
        // the first samples themselves are not compared.
        assert_eq!(e.samples, 1);
        assert!((e.rms.unwrap() - (0.04f64 / 3.0).sqrt()).abs() < 1e-14);
        assert!(!e.per_marker.contains_key("b"));
    }
}
