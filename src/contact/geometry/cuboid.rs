//! The regions of a box that both the box's closest-point query ([`crate::contact::Obstacle::closest`])
//! and its derivatives (`geometry_derivative`) branch on, classified in one place so the
//! derivative always differentiates the branch the query took.

use crate::math::Vec3;

/// Where a point lies relative to a box of half extents `e`, in box coordinates.
pub(super) enum BoxRegion {
    /// Outside: `clamped` the closest point of the box, `mask[k]` when axis k's clamp is
    /// active (|q_k| > e_k), `n` the local unit normal (q − clamped)/d, `d` the distance (m).
    Outside {
        clamped: Vec3,
        mask: [bool; 3],
        n: Vec3,
        d: f64,
    },
    /// Inside (or on the surface): through a face normal to local axis `k`, the one of least
    /// penetration, the largest |q_k| − e_k (lowest axis on ties).
    Inside { k: usize },
}

/// The region of the point `q` (box coordinates, m) for the box of half extents `e` (m).
/// A coordinate exactly on a face plane (|q_k| = e_k) counts as inside that slab.
pub(super) fn box_region(q: &Vec3, e: &Vec3) -> BoxRegion {
    let clamped = Vec3::new(
        q.x.clamp(-e.x, e.x),
        q.y.clamp(-e.y, e.y),
        q.z.clamp(-e.z, e.z),
    );
    let outside = q - clamped;
    let d = outside.norm();
    if d > 0.0 {
        BoxRegion::Outside {
            clamped,
            mask: [q.x.abs() > e.x, q.y.abs() > e.y, q.z.abs() > e.z],
            n: outside / d,
            d,
        }
    } else {
        let mut k = 0;
        for j in 1..3 {
            if q[j].abs() - e[j] > q[k].abs() - e[k] {
                k = j;
            }
        }
        BoxRegion::Inside { k }
    }
}
