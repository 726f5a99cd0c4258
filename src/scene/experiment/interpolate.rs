//! A simulated marker between two saved states: linear in time between the states around a
//! sample time (what calibration compares an observed sample with). The weights are exposed
//! ([`interpolation_weights`]) so that a quantity carried beside the positions (a marker's
//! tangent with respect to a parameter) is interpolated by the same combination.

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

/// The position (m) of `track` at time `t` (s): the sample itself at a sample's time, else
/// p_a + (t − t_a)/(t_b − t_a) (p_b − p_a) between the samples a and b around `t` (linear in
/// time, [`interpolation_weights`]); `None` for a `t` outside `[first, last]` sample time (no
/// extrapolation) or an empty track. The track's times must increase strictly (as a
/// [`Track`]'s do).
pub fn interpolate(track: &Track, t: f64) -> Option<Vec3> {
    let (a, b, w) = interpolation_weights(&track.times, t)?;
    if a == b {
        return Some(track.positions[a]);
    }
    let (pa, pb) = (track.positions[a], track.positions[b]);
    Some(pa + (pb - pa) * w)
}
