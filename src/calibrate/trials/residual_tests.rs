//! The residual assembly against a case computed by hand: two markers, three saved states, a
//! few samples between and on them, with and without a frame, absolute and relative to the
//! first sample.

use super::*;
use crate::math::Vec3;
use crate::scene::{MarkerTracks, Track};

/// States at simulation times 0, 0.01, 0.02 s; one parameter column.
fn simulated() -> SimulatedMarkers {
    let mut s = SimulatedMarkers::new(2, 1);
    let p0 = [
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(1.0, 2.0, 3.0),
        Vec3::new(3.0, 2.0, 1.0),
    ];
    let p1 = [
        Vec3::new(1.0, 1.0, 1.0),
        Vec3::new(1.0, 1.0, 2.0),
        Vec3::new(1.0, 1.0, 4.0),
    ];
    let d0 = [
        Vec3::zeros(),
        Vec3::new(10.0, 0.0, 0.0),
        Vec3::new(0.0, 10.0, 0.0),
    ];
    let d1 = [
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(2.0, 0.0, 0.0),
        Vec3::new(4.0, 0.0, 0.0),
    ];
    for k in 0..3 {
        s.push(0.01 * k as f64, &[p0[k], p1[k]], |m, _| {
            if m == 0 { d0[k] } else { d1[k] }
        });
    }
    s
}

/// Marker `a` at file times 1.0, 1.005, 1.02 s; marker `b` at 1.015 s (t₀ = 1.0 s).
fn observed() -> MarkerTracks {
    MarkerTracks {
        names: vec!["a".into(), "b".into()],
        tracks: vec![
            Track {
                times: vec![1.0, 1.005, 1.02],
                positions: vec![
                    Vec3::new(0.1, 0.0, 0.0),
                    Vec3::new(0.0, 0.0, 0.0),
                    Vec3::new(3.0, 2.0, 1.0),
                ],
            },
            Track {
                times: vec![1.015],
                positions: vec![Vec3::new(1.0, 1.0, 1.0)],
            },
        ],
    }
}

/// The one trial of `observed` (t₀ = 1.0 s) against `simulated`.
fn trial<'a>(observed: &'a MarkerTracks, simulated: &'a SimulatedMarkers) -> TrialTracks<'a> {
    TrialTracks {
        observed,
        t0: 1.0,
        simulated,
    }
}

/// [`assemble`] with one parameter column.
fn residuals(
    tracks: &[TrialTracks<'_>],
    comparison: Comparison,
    registration: Registration,
    frame: &Frame,
) -> Residuals {
    assemble(tracks, comparison, registration, frame, 1)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

fn assert_rows(r: &Residuals, values: &[[f64; 3]], jacobian: &[[f64; 3]]) {
    assert_eq!(r.values.len(), 3 * values.len());
    for (i, (v, j)) in values.iter().zip(jacobian).enumerate() {
        for c in 0..3 {
            assert!(
                close(r.values[3 * i + c], v[c]),
                "r[{i}][{c}] = {} vs {}",
                r.values[3 * i + c],
                v[c]
            );
            assert!(
                close(r.jacobian[(3 * i + c, 0)], j[c]),
                "J[{i}][{c}] = {} vs {}",
                r.jacobian[(3 * i + c, 0)],
                j[c]
            );
        }
    }
}

#[test]
fn absolute_residuals_interpolate_positions_and_tangents_linearly() {
    let (sim, obs) = (simulated(), observed());
    let tracks = [trial(&obs, &sim)];
    let r = residuals(
        &tracks,
        Comparison::Absolute,
        Registration::None,
        &Frame::default(),
    );
    // a at 1.0: state 0 itself; at 1.005: halfway to state 1, p = (0.5, 1, 1.5), ∂p = (5, 0, 0);
    // at 1.02: state 2. b at 1.015: halfway between states 1 and 2, p = (1, 1, 3), ∂p = (3, 0, 0).
    // r = y − p, ∂r/∂θ = −∂p.
    assert_rows(
        &r,
        &[
            [0.1, 0.0, 0.0],
            [-0.5, -1.0, -1.5],
            [0.0, 0.0, 0.0],
            [0.0, 0.0, -2.0],
        ],
        &[
            [0.0, 0.0, 0.0],
            [-5.0, 0.0, 0.0],
            [0.0, -10.0, 0.0],
            [-3.0, 0.0, 0.0],
        ],
    );
    assert_eq!(r.jacobian.ncols(), 1);
    let markers: Vec<usize> = r.samples.iter().map(|s| s.marker).collect();
    assert_eq!(markers, [0, 0, 0, 1]);
    assert!(close(r.samples[3].simulated.z, 3.0) && r.samples[3].time == 1.015);

    // A translation τ = (1, −1, 2) moves every measured point by τ; its columns are I.
    let frame = Frame {
        translation: Vec3::new(1.0, -1.0, 2.0),
        rotation: Vec3::zeros(),
    };
    let r = residuals(
        &tracks,
        Comparison::Absolute,
        Registration::Translation,
        &frame,
    );
    assert_rows(
        &r,
        &[
            [1.1, -1.0, 2.0],
            [0.5, -2.0, 0.5],
            [1.0, -1.0, 2.0],
            [1.0, -1.0, 0.0],
        ],
        &[
            [0.0, 0.0, 0.0],
            [-5.0, 0.0, 0.0],
            [0.0, -10.0, 0.0],
            [-3.0, 0.0, 0.0],
        ],
    );
    for row in 0..12 {
        for c in 0..3 {
            assert_eq!(r.jacobian[(row, 1 + c)], f64::from(u8::from(row % 3 == c)));
        }
    }

    // A quarter turn about z maps (x, y, z) to (−y, x, z): b's (1, 1, 1) to (−1, 1, 1), whose
    // residual against (1, 1, 3) is (−2, 0, −2).
    let frame = Frame {
        translation: Vec3::zeros(),
        rotation: Vec3::new(0.0, 0.0, std::f64::consts::FRAC_PI_2),
    };
    let r = residuals(&tracks, Comparison::Absolute, Registration::Rigid, &frame);
    assert_eq!(r.jacobian.ncols(), 7);
    for (c, v) in [-2.0, 0.0, -2.0].iter().enumerate() {
        assert!(close(r.values[9 + c], *v), "{}", r.values[9 + c]);
    }
}

#[test]
fn displacement_residuals_are_relative_to_each_tracks_first_sample() {
    let (sim, obs) = (simulated(), observed());
    let tracks = [trial(&obs, &sim)];
    let r = residuals(
        &tracks,
        Comparison::Displacement,
        Registration::None,
        &Frame::default(),
    );
    // a: y₁ = (0.1, 0, 0), p₁ = 0, ∂p₁ = 0. At 1.005: (−0.1, 0, 0) − (0.5, 1, 1.5); at 1.02:
    // (2.9, 2, 1) − (3, 2, 1). b has one sample: no row.
    assert_rows(
        &r,
        &[[-0.6, -1.0, -1.5], [-0.1, 0.0, 0.0]],
        &[[-5.0, 0.0, 0.0], [0.0, -10.0, 0.0]],
    );
    // Two trials: the second's rows follow the first's, and its t₀ shifts its clock.
    let late = MarkerTracks {
        names: vec!["a".into(), "b".into()],
        tracks: vec![
            Track::default(),
            Track {
                times: vec![5.0, 5.015],
                positions: vec![Vec3::zeros(), Vec3::new(0.0, 0.0, 1.0)],
            },
        ],
    };
    let both = [
        tracks[0],
        TrialTracks {
            observed: &late,
            t0: 5.0,
            simulated: &sim,
        },
    ];
    let r = residuals(
        &both,
        Comparison::Displacement,
        Registration::None,
        &Frame::default(),
    );
    // b in trial 2: p(0) = (1, 1, 1), p(0.015) = (1, 1, 3), ∂p = (1, 0, 0) then (3, 0, 0):
    // r = (0, 0, 1) − (0, 0, 2), ∂r = −(2, 0, 0).
    assert_rows(
        &r,
        &[[-0.6, -1.0, -1.5], [-0.1, 0.0, 0.0], [0.0, 0.0, -1.0]],
        &[[-5.0, 0.0, 0.0], [0.0, -10.0, 0.0], [-2.0, 0.0, 0.0]],
    );
    assert_eq!(r.samples[2].trial, 1);
}

#[test]
fn the_interpolation_weights_are_those_of_interpolate() {
    let track = Track {
        times: vec![0.0, 0.3, 0.7],
        positions: vec![
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(2.0, 5.0, 0.0),
            Vec3::new(0.0, 1.0, 9.0),
        ],
    };
    for t in [0.0, 0.1, 0.3, 0.55, 0.7] {
        let (a, b, w) = crate::scene::interpolation_weights(&track.times, t).unwrap();
        let p = track.positions[a] + (track.positions[b] - track.positions[a]) * w;
        assert_eq!(Some(p), crate::scene::interpolate(&track, t), "{t}");
    }
    assert_eq!(
        crate::scene::interpolation_weights(&track.times, 0.71),
        None
    );
    // A run's marker (and its tangent, here equal to the position) between saved states is
    // the track's interpolation at the same time.
    let mut run = SimulatedMarkers::new(1, 1);
    for (&t, &p) in track.times.iter().zip(&track.positions) {
        run.push(t, &[p], |_, _| p);
    }
    let mut tangent = [Vec3::zeros()];
    for t in [0.0, 0.1, 0.3, 0.55, 0.7] {
        let p = run.at(0, t, &mut tangent);
        assert_eq!(p, crate::scene::interpolate(&track, t), "{t}");
        assert_eq!(Some(tangent[0]), p, "{t}");
    }
    assert_eq!(run.at(0, 0.71, &mut tangent), None);
}
