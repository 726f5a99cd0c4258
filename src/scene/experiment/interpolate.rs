//! A simulated marker between two saved states: linear in time between the states around a
//! sample time (what calibration compares an observed sample with).

use crate::math::Vec3;

use super::tracks::Track;

/// The position (m) of `track` at time `t` (s): the sample itself at a sample's time, else
/// p_a + (t − t_a)/(t_b − t_a) (p_b − p_a) between the samples a and b around `t` (linear in
/// time); `None` for a `t` outside `[first, last]` sample time (no extrapolation) or an
/// empty track. The track's times must increase strictly (as a [`Track`]'s do).
pub fn interpolate(track: &Track, t: f64) -> Option<Vec3> {
    let (&first, &last) = (track.times.first()?, track.times.last()?);
    if !(t >= first && t <= last) {
        return None;
    }
    // The first sample at or after t (exists: t ≤ last).
    let b = track.times.partition_point(|&s| s < t);
    if track.times[b] == t {
        return Some(track.positions[b]);
    }
    // t > first, so b ≥ 1.
    let a = b - 1;
    let (ta, tb) = (track.times[a], track.times[b]);
    let (pa, pb) = (track.positions[a], track.positions[b]);
    Some(pa + (pb - pa) * ((t - ta) / (tb - ta)))
}
