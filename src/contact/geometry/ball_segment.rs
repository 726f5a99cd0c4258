//! A ball against a segment of a soft surface (the edge between two surface triangles): the
//! segment's point closest to the ball's centre, the normal from it to the centre, the gap,
//! and their derivatives with respect to the centre and the segment's ends.
//!
//! For the centre c and the segment a → b (e = b − a), with s strictly inside (0, 1):
//!
//! ```text
//! s = (c − a) · e / (e · e),   q = a + s e,   d = c − q,   n = d / |d|,   Φ = |d| − r
//! ```
//!
//! so the ball's support point towards the segment is p = c − r n. Since n ⊥ e at an interior
//! closest point, dΦ = n · (dc − dq) and dn = (I − n nᵀ)(dc − dq) / |d| with
//! dq = da + ds e + s (db − da) and
//! `ds = [(dc − da) · e + (c − a) · (db − da) − 2 s e · (db − da)] / (e · e)`.

use crate::math::{Mat3, Vec3};

/// Where a ball's centre meets a segment: its closest point q = a + s e, the unit normal n from
/// q to the centre, the gap Φ = |c − q| − r (m), and their derivatives (module doc). Index 0 of
/// the gradients is the centre c, 1 the end a, 2 the end b.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BallOnSegment {
    /// The closest point's parameter s along a → b, in (0, 1).
    pub s: f64,
    /// The unit normal n = (c − q)/|c − q|.
    pub normal: Vec3,
    /// The gap Φ = |c − q| − r (m).
    pub gap: f64,
    /// ∇s with respect to c, a and b (1/m).
    pub s_gradient: [Vec3; 3],
    /// ∂n/∂(c, a, b) (1/m; column j is the derivative along world axis j).
    pub normal_jacobian: [Mat3; 3],
    /// ∇Φ with respect to c, a and b (dimensionless).
    pub gap_gradient: [Vec3; 3],
}

impl BallOnSegment {
    /// The ball of centre `centre` and radius `radius` (m) against the segment `ends` (m).
    /// `None` when the closest point is an end or beyond it (s ∉ (`end`, 1 − `end`): the
    /// node there holds the ball), the segment is degenerate, or the centre lies on it.
    pub fn new(centre: &Vec3, ends: &[Vec3; 2], radius: f64, end: f64) -> Option<BallOnSegment> {
        let [a, b] = *ends;
        let e = b - a;
        let l2 = e.norm_squared();
        if !(l2 > 0.0) || !l2.is_finite() {
            return None;
        }
        let u = centre - a;
        let s = u.dot(&e) / l2;
        if !(s > end && s < 1.0 - end) {
            return None;
        }
        let d = u - s * e;
        let dist = d.norm();
        if !(dist > 0.0) || !dist.is_finite() {
            return None;
        }
        let n = d / dist;
        let s_gradient = [e / l2, (-e - u + 2.0 * s * e) / l2, (u - 2.0 * s * e) / l2];
        // dq = Q_k dx_k: for c, e ∇s_cᵀ; for a, (1 − s) I + e ∇s_aᵀ; for b, s I + e ∇s_bᵀ.
        let identity = Mat3::identity();
        let dq = [
            e * s_gradient[0].transpose(),
            (1.0 - s) * identity + e * s_gradient[1].transpose(),
            s * identity + e * s_gradient[2].transpose(),
        ];
        let dd = [identity - dq[0], -dq[1], -dq[2]];
        let tangent = (identity - n * n.transpose()) / dist;
        Some(BallOnSegment {
            s,
            normal: n,
            gap: dist - radius,
            s_gradient,
            normal_jacobian: dd.map(|m| tangent * m),
            gap_gradient: dd.map(|m| m.transpose() * n),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every derivative against central differences of `new`, along each axis of each point.
    #[test]
    fn derivatives_match_central_differences() {
        let points = [
            Vec3::new(0.3, 0.4, 1.2),
            Vec3::new(-0.5, 0.1, 0.2),
            Vec3::new(0.9, 0.6, -0.1),
        ];
        let r = 0.25;
        let at = |p: &[Vec3; 3]| BallOnSegment::new(&p[0], &[p[1], p[2]], r, 1e-9).unwrap();
        let base = at(&points);
        assert!((base.normal.norm() - 1.0).abs() < 1e-15);
        let q = points[1] + base.s * (points[2] - points[1]);
        assert!((points[0] - q).dot(&(points[2] - points[1])).abs() < 1e-14);
        assert!((base.gap - ((points[0] - q).norm() - r)).abs() < 1e-15);
        let h = 1e-6;
        for k in 0..3 {
            for j in 0..3 {
                let (mut up, mut down) = (points, points);
                up[k][j] += h;
                down[k][j] -= h;
                let (u, d) = (at(&up), at(&down));
                let ds = (u.s - d.s) / (2.0 * h);
                let dgap = (u.gap - d.gap) / (2.0 * h);
                let dn = (u.normal - d.normal) / (2.0 * h);
                assert!((ds - base.s_gradient[k][j]).abs() < 1e-8, "s {k} {j}");
                assert!((dgap - base.gap_gradient[k][j]).abs() < 1e-8, "gap {k} {j}");
                let col = base.normal_jacobian[k].column(j);
                assert!((dn - col).norm() < 1e-8, "n {k} {j}: {dn} vs {col}");
            }
        }
        // An end's neighbourhood belongs to the node there, and a point on the segment has
        // no normal.
        let ends = [Vec3::zeros(), Vec3::x()];
        assert!(BallOnSegment::new(&Vec3::new(-0.1, 0.0, 1.0), &ends, r, 1e-9).is_none());
        assert!(BallOnSegment::new(&Vec3::new(1.0, 0.0, 1.0), &ends, r, 1e-9).is_none());
        assert!(BallOnSegment::new(&Vec3::new(0.5, 0.0, 0.0), &ends, r, 1e-9).is_none());
        assert!(BallOnSegment::new(&Vec3::new(0.5, 0.0, 1.0), &[Vec3::x(); 2], r, 1e-9).is_none());
    }
}
