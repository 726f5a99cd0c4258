//! Linear interpolation in time between samples: a simulated marker between two saved states
//! around a sample time (what calibration compares an observed sample with; no
//! extrapolation), and the values of a command log or a point path, held outside their
//! samples ([`held_weights`]). The weights are exposed ([`interpolation_weights`]) so that a
//! quantity carried beside the positions (a marker's tangent with respect to a parameter) is
//! interpolated by the same combination.

use std::ops::{Add, Mul, Sub};

use crate::math::Vec3;

use super::tracks::Track;

/// Where `t` (s) falls among the strictly increasing sample `times` (s): `(a, b, w)` with the
/// value at `t` being `v_a + w (v_b − v_a)`, w = (t − t_a)/(t_b − t_a) ∈ [0, 1); `(k, k, 0)` at
/// a sample's own time t_k; `None` for a `t` outside `[first, last]` (no extrapolation), a NaN
/// `t` or no samples.
pub fn interpolation_weights(times: &[f64], t: f64) -> Option<(usize, usize, f64)> {
    let (&first, &last) = (times.first()?, times.last()?);
    if !(t >= first && t <= last) {
        return None;
    }
    // The first sample at or after t (exists: t ≤ last).
    let b = times.partition_point(|&s| s < t);
    if times[b] == t {
        return Some((b, b, 0.0));
    }
    // t > first, so b ≥ 1.
    let a = b - 1;
    Some((a, b, (t - times[a]) / (times[b] - times[a])))
}

/// Where `t` (s) falls among the strictly increasing sample `times` (s, at least one), for a
/// value held at the first sample's before it and at the last sample's after it (and at the
/// first's for a NaN `t`): [`interpolation_weights`] at `t` clamped to `[first, last]`.
pub fn held_weights(times: &[f64], t: f64) -> (usize, usize, f64) {
    let (first, last) = (times[0], times[times.len() - 1]);
    interpolation_weights(times, t.clamp(first, last)).unwrap_or((0, 0, 0.0))
}

/// The value `v_a + w (v_b − v_a)` of the samples `values` for the weights `(a, b, w)` of
/// [`interpolation_weights`] or [`held_weights`]: `v_a` itself when `a == b`.
pub fn blend<T>(values: &[T], (a, b, w): (usize, usize, f64)) -> T
where
    T: Copy + Add<Output = T> + Sub<Output = T> + Mul<f64, Output = T>,
{
    if a == b {
        values[a]
    } else {
        values[a] + (values[b] - values[a]) * w
    }
}

/// The position (m) of `track` at time `t` (s): the sample itself at a sample's time, else
/// p_a + (t − t_a)/(t_b − t_a) (p_b − p_a) between the samples a and b around `t` (linear in
/// time, [`interpolation_weights`]); `None` for a `t` outside `[first, last]` sample time (no
/// extrapolation) or an empty track. The track's times must increase strictly (as a
/// [`Track`]'s do).
pub fn interpolate(track: &Track, t: f64) -> Option<Vec3> {
    Some(blend(
        &track.positions,
        interpolation_weights(&track.times, t)?,
    ))
}
