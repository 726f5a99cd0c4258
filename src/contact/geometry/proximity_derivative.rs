//! The derivatives of a point's proximity to a collider (`Collider::closest`: the closest
//! point on the shape, the outward normal there and the signed gap) with respect to the
//! point's position and to a small rigid motion of the collider, for the geometry terms of a
//! soft node's contact with a rigid shape in the step derivative (paper 004 Eq. 10-11 with the
//! rigid bodies of paper 002 Appendix D).
//!
//! A rigid motion of the collider is a world twist `ξ = [v_O; ω]` (m, rad), as in
//! [`crate::contact::contact_geometry_jacobian`]. parry's projection is a black box, so the
//! derivative is taken by central differences of the same query at `±ε` along each of the
//! three position and six twist components, `ε` = [`GEOMETRY_STEP`] (error about
//! `1e-16 L / ε + ε² L / r²`, ≈ 1e-10 at 1 m): exact to round-off where the closest point
//! lies on a face (the normal is the face's and moves only with the shape), and accurate
//! to that error on edges, vertices and curved shapes.

use super::convex_shape::{Collider, ShapePose};
use super::detection::Proximity;
use super::manifold_derivative::{GEOMETRY_STEP, moved};
use crate::error::{Error, Result};
use crate::math::Vec3;

/// `∂(point, normal, gap)` of a [`Proximity`] with respect to the point's position (m) and
/// to the collider's twist `[v_O; ω]` (world). Units: point m/m and m/rad, normal 1/m and
/// 1/rad, gap m/m and m/rad.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProximityJacobian {
    /// ∂point/∂x, column j along world axis j.
    pub point_x: [Vec3; 3],
    /// ∂normal/∂x.
    pub normal_x: [Vec3; 3],
    /// ∂gap/∂x (the gap's gradient).
    pub gap_x: Vec3,
    /// ∂point/∂ξ_k.
    pub point_twist: [Vec3; 6],
    /// ∂normal/∂ξ_k.
    pub normal_twist: [Vec3; 6],
    /// ∂gap/∂ξ_k.
    pub gap_twist: [f64; 6],
}

/// The derivatives of `collider.closest(pose, x)` (module doc). Errors when the normal turns
/// by more than a degree within the differentiation step (the point sits on a feature
/// boundary inside the shape, where the closest point jumps: no derivative there).
pub fn proximity_jacobian(
    collider: &Collider,
    pose: &ShapePose,
    x: &Vec3,
) -> Result<ProximityJacobian> {
    let e = GEOMETRY_STEP;
    let at = collider.closest(pose, x);
    let check = |p: &Proximity, q: &Proximity| -> Result<()> {
        if p.normal.dot(&at.normal) < 0.9998 || q.normal.dot(&at.normal) < 0.9998 {
            return Err(Error::invalid(
                "contact geometry derivative",
                format!(
                    "the closest point of {:?} on a rigid shape jumps within a motion of {e:e}: a contact-mode switch, outside the derivative",
                    x.as_slice()
                ),
            ));
        }
        Ok(())
    };
    let mut out = ProximityJacobian {
        point_x: [Vec3::zeros(); 3],
        normal_x: [Vec3::zeros(); 3],
        gap_x: Vec3::zeros(),
        point_twist: [Vec3::zeros(); 6],
        normal_twist: [Vec3::zeros(); 6],
        gap_twist: [0.0; 6],
    };
    for j in 0..3 {
        let mut d = Vec3::zeros();
        d[j] = e;
        let (p, m) = (
            collider.closest(pose, &(x + d)),
            collider.closest(pose, &(x - d)),
        );
        check(&p, &m)?;
        out.point_x[j] = (p.point - m.point) / (2.0 * e);
        out.normal_x[j] = (p.normal - m.normal) / (2.0 * e);
        out.gap_x[j] = (p.gap - m.gap) / (2.0 * e);
    }
    for k in 0..6 {
        let p = collider.closest(&moved(pose, k, e), x);
        let m = collider.closest(&moved(pose, k, -e), x);
        check(&p, &m)?;
        out.point_twist[k] = (p.point - m.point) / (2.0 * e);
        out.normal_twist[k] = (p.normal - m.normal) / (2.0 * e);
        out.gap_twist[k] = (p.gap - m.gap) / (2.0 * e);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::ConvexShape;
    use crate::math::Mat3;

    /// A point above the top face of a box: the closest point is its projection on the face,
    /// the normal the face's; a translation of the box along the normal moves the gap by −1,
    /// a rotation about the world x axis turns the face's normal and plane (analytic values).
    #[test]
    fn a_point_over_a_box_face() {
        let collider = Collider::new(ConvexShape::Cuboid {
            half_extents: Vec3::new(0.5, 0.5, 0.5),
        })
        .unwrap();
        let pose = ShapePose {
            rotation: Mat3::identity(),
            translation: Vec3::new(0.0, 0.0, 1.0),
        };
        let x = Vec3::new(0.1, 0.2, 1.8);
        let jac = proximity_jacobian(&collider, &pose, &x).unwrap();
        let close = |a: &Vec3, b: &Vec3| (a - b).norm() < 1e-8;
        assert!(close(&jac.gap_x, &Vec3::z()));
        assert!(close(&jac.point_x[0], &Vec3::x()) && close(&jac.point_x[2], &Vec3::zeros()));
        assert!((jac.gap_twist[2] + 1.0).abs() < 1e-8);
        // ω about the world x axis: the face's plane point c and its normal n turn with the
        // box, so the gap n·(x − c) moves by (ω × n)·(x − c) − n·(ω × c).
        let (c, n, w) = (Vec3::new(0.0, 0.0, 1.5), Vec3::z(), Vec3::x());
        assert!(close(&jac.normal_twist[3], &w.cross(&n)));
        let d_gap = w.cross(&n).dot(&(x - c)) - n.dot(&w.cross(&c));
        assert!(
            (jac.gap_twist[3] - d_gap).abs() < 1e-8,
            "{} vs {d_gap}",
            jac.gap_twist[3]
        );
    }
}
