//! Capsule obstacles (a segment swept by a ball): signed gap, closest point, outward normal,
//! and their closed-form derivatives with respect to the query point.
//!
//! With c(p) the closest point of the axis segment [a, b] to p, r = p − c and d = ‖r‖:
//! Φ = d − radius, n = r / d. The gap gradient is ∇Φ = n everywhere (d > 0). The normal's
//! Jacobian is ∂n/∂p = (I − n nᵀ − e eᵀ)/d when c is inside the segment (e the unit axis:
//! c slides along e with p) and (I − n nᵀ)/d when c is an end point.

use super::detection::{Proximity, contact_frame};
use crate::error::{Error, Result};
use crate::math::{Mat3, Vec3};

/// A solid capsule: the points within `radius` of the segment from `a` to `b` (m).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Capsule {
    /// First end of the axis (m).
    pub a: Vec3,
    /// Second end of the axis (m).
    pub b: Vec3,
    /// Radius (m), positive.
    pub radius: f64,
}

/// Where on the axis the closest point of a query lies.
enum AxisPoint {
    /// Strictly between the ends (parameter t ∈ (0, 1)).
    Inside(Vec3),
    /// At an end.
    End(Vec3),
}

impl Capsule {
    /// A capsule; errors on non-finite ends, coincident ends (use a sphere) or a radius that
    /// is not positive and finite.
    pub fn new(a: Vec3, b: Vec3, radius: f64) -> Result<Capsule> {
        if a.iter().chain(b.iter()).any(|x| !x.is_finite()) {
            return Err(Error::invalid("capsule obstacle end points", "not finite"));
        }
        if !((b - a).norm() > 0.0) {
            return Err(Error::invalid(
                "capsule obstacle end points",
                "coincide (a ball is a sphere obstacle)",
            ));
        }
        if !(radius > 0.0) || !radius.is_finite() {
            return Err(Error::invalid(
                "capsule obstacle radius",
                format!("{radius} must be positive"),
            ));
        }
        Ok(Capsule { a, b, radius })
    }

    fn axis_point(&self, p: &Vec3) -> AxisPoint {
        let ab = self.b - self.a;
        let t = (p - self.a).dot(&ab) / ab.norm_squared();
        if t <= 0.0 {
            AxisPoint::End(self.a)
        } else if t >= 1.0 {
            AxisPoint::End(self.b)
        } else {
            AxisPoint::Inside(self.a + t * ab)
        }
    }

    /// Signed gap, closest surface point and outward normal of `p` (m). A point on the axis
    /// gets the normal `t₁` of the axis direction's [`contact_frame`] (deterministic).
    pub fn closest(&self, p: &Vec3) -> Proximity {
        let c = match self.axis_point(p) {
            AxisPoint::Inside(c) | AxisPoint::End(c) => c,
        };
        let r = p - c;
        let d = r.norm();
        let normal = if d > 0.0 {
            r / d
        } else {
            contact_frame(&(self.b - self.a).normalize())
                .column(0)
                .into_owned()
        };
        Proximity {
            gap: d - self.radius,
            point: c + self.radius * normal,
            normal,
        }
    }

    /// ∂Φ/∂p: the outward normal n (unitless).
    pub fn gap_gradient(&self, p: &Vec3) -> Vec3 {
        self.closest(p).normal
    }

    /// ∂n/∂p (1/m), module doc. Zero on the axis itself, where n is not differentiable.
    pub fn normal_jacobian(&self, p: &Vec3) -> Mat3 {
        let (c, along) = match self.axis_point(p) {
            AxisPoint::Inside(c) => (c, Some((self.b - self.a).normalize())),
            AxisPoint::End(c) => (c, None),
        };
        let r = p - c;
        let d = r.norm();
        if d == 0.0 {
            return Mat3::zeros();
        }
        let n = r / d;
        let mut j = Mat3::identity() - n * n.transpose();
        if let Some(e) = along {
            j -= e * e.transpose();
        }
        j / d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{central_difference_jacobian, relative_error};

    fn capsule() -> Capsule {
        Capsule::new(Vec3::new(0.0, 0.0, 0.0), Vec3::new(2.0, 1.0, 0.0), 0.5).unwrap()
    }

    #[test]
    fn gaps_and_normals_are_the_analytic_ones() {
        let c = capsule();
        // Beside the middle: the axis point (1, 0.5, 0), offset along z by 2.
        let p = c.closest(&Vec3::new(1.0, 0.5, 2.0));
        assert!((p.gap - 1.5).abs() < 1e-15);
        assert!((p.normal - Vec3::z()).norm() < 1e-15);
        assert!((p.point - Vec3::new(1.0, 0.5, 0.5)).norm() < 1e-15);
        // Beyond the end a: (−3, −4, 0) is 5 from a.
        let p = c.closest(&Vec3::new(-3.0, -4.0, 0.0));
        assert!((p.gap - 4.5).abs() < 1e-14);
        // Inside: 0.1 from the axis.
        let p = c.closest(&Vec3::new(1.0, 0.5, -0.1));
        assert!((p.gap + 0.4).abs() < 1e-15);
        assert!((p.normal + Vec3::z()).norm() < 1e-15);
        // On the axis: a deterministic unit normal orthogonal to the axis.
        let p = c.closest(&Vec3::new(1.0, 0.5, 0.0));
        assert!(
            (p.normal.norm() - 1.0).abs() < 1e-15
                && p.normal.dot(&Vec3::new(2.0, 1.0, 0.0)).abs() < 1e-15
        );
        assert!(Capsule::new(Vec3::zeros(), Vec3::zeros(), 1.0).is_err());
        let e = Capsule::new(Vec3::zeros(), Vec3::x(), -1.0).unwrap_err();
        assert!(e.to_string().contains("radius"), "{e}");
    }

    #[test]
    fn derivatives_match_central_differences() {
        let c = capsule();
        for p in [
            Vec3::new(1.0, 0.3, 0.7),  // beside the segment
            Vec3::new(-0.6, 0.2, 0.4), // beyond end a
            Vec3::new(2.5, 1.6, -0.3), // beyond end b
            Vec3::new(0.8, 0.45, 0.2), // inside
        ] {
            let fd = central_difference_jacobian(
                |x: &crate::math::DVec| {
                    let g = c.closest(&Vec3::new(x[0], x[1], x[2]));
                    crate::math::DVec::from_vec(vec![g.gap, g.normal.x, g.normal.y, g.normal.z])
                },
                &crate::math::DVec::from_column_slice(p.as_slice()),
                1e-6,
            );
            let g = c.gap_gradient(&p);
            let j = c.normal_jacobian(&p);
            let mut exact = crate::math::DMat::zeros(4, 3);
            exact.row_mut(0).copy_from(&g.transpose());
            exact.view_mut((1, 0), (3, 3)).copy_from(&j);
            let err = relative_error(exact.as_slice(), fd.as_slice(), 1e-12);
            assert!(err < 1e-6, "{p:?}: {err}: {exact} vs {fd}");
        }
    }
}
