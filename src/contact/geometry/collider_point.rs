//! The closest point of a convex collider to a point: the narrow phase of a soft-body node
//! against a rigid body's or a robot link's collision shape (`scene::model::soft_rigid`), the same
//! question `Obstacle::closest` answers for static obstacles.
//!
//! Conventions as for obstacles ([`Proximity`]): the gap Φ (m) is the signed distance from the
//! point to the shape's surface, positive outside and negative inside; the normal points out
//! of the shape, from the closest surface point towards an outside point (for a point inside,
//! the outward normal of the nearest face, along which the point leaves the shape fastest).

use super::convex_shape::{Collider, ShapePose, from_glam, to_glam};
use super::detection::Proximity;
use crate::math::Vec3;

impl Collider {
    /// The closest point of this shape, placed at `pose`, to the world point `p` (m): gap,
    /// surface point (m, world) and outward unit normal (world).
    pub fn closest(&self, pose: &ShapePose, p: &Vec3) -> Proximity {
        // p in the frame of parry's shape: pose ∘ offset.
        let frame = pose.compose(&self.offset);
        let local = frame.rotation.transpose() * (p - frame.translation);
        let (proj, feature) = self
            .parry
            .project_local_point_and_get_feature(to_glam(&local));
        let on_surface = from_glam(proj.point);
        let d = local - on_surface;
        let len = d.norm();
        let scale = self.radius.max(f64::MIN_POSITIVE);
        let (gap, normal) = if len > 1e-12 * scale {
            if proj.is_inside {
                (-len, -d / len)
            } else {
                (len, d / len)
            }
        } else {
            // On the surface: the feature's normal (a face's; an edge's or a vertex's is a
            // direction of their normal cone), or the radial direction.
            let n = self
                .parry
                .feature_normal_at_point(0, feature, proj.point)
                .map(from_glam)
                .or_else(|| on_surface.try_normalize(0.0))
                .unwrap_or(Vec3::z());
            (0.0, n)
        };
        Proximity {
            gap,
            point: frame.transform_point(&on_surface),
            normal: frame.rotation * normal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::geometry::convex_shape::ConvexShape;

    fn turned() -> ShapePose {
        // 0.6 rad about (1, 2, 2)/3, placed at (0.1, −0.2, 0.3).
        let axis = nalgebra::Unit::new_normalize(Vec3::new(1.0, 2.0, 2.0));
        ShapePose {
            rotation: *nalgebra::Rotation3::from_axis_angle(&axis, 0.6).matrix(),
            translation: Vec3::new(0.1, -0.2, 0.3),
        }
    }

    #[test]
    fn box_gaps_and_normals_are_the_analytic_ones() {
        let c = Collider::new(ConvexShape::Cuboid {
            half_extents: Vec3::new(0.1, 0.2, 0.3),
        })
        .unwrap();
        let pose = turned();
        let r = pose.rotation;
        // Outside the +y face, inside near the −z face, and outside past an edge.
        for (local, gap, normal) in [
            (Vec3::new(0.02, 0.25, -0.1), 0.05, Vec3::y()),
            (Vec3::new(0.01, 0.0, -0.28), -0.02, -Vec3::z()),
            (Vec3::new(0.13, 0.24, 0.0), 0.05, Vec3::new(0.6, 0.8, 0.0)),
        ] {
            let p = pose.transform_point(&local);
            let prox = c.closest(&pose, &p);
            assert!((prox.gap - gap).abs() < 1e-12, "{local:?}: {}", prox.gap);
            assert!((prox.normal - r * normal).norm() < 1e-12, "{local:?}");
            // The point lies at p − Φ n.
            assert!((prox.point - (p - gap * r * normal)).norm() < 1e-12);
        }
    }

    #[test]
    fn ball_cylinder_and_capsule_distances() {
        let pose = turned();
        let p_local = Vec3::new(0.03, 0.04, 0.01);
        let p = pose.transform_point(&p_local);
        let ball = Collider::new(ConvexShape::Ball { radius: 0.1 }).unwrap();
        let g = ball.closest(&pose, &p).gap;
        assert!((g - (p_local.norm() - 0.1)).abs() < 1e-12);
        // A cylinder along local z: a point beside it, level with its middle.
        let cyl = Collider::new(ConvexShape::Cylinder {
            radius: 0.02,
            half_length: 0.05,
        })
        .unwrap();
        let prox = cyl.closest(&pose, &p);
        assert!((prox.gap - 0.03).abs() < 1e-12, "{}", prox.gap);
        assert!((prox.normal - pose.rotation * Vec3::new(0.6, 0.8, 0.0)).norm() < 1e-12);
        // A capsule along local z: a point above its top cap.
        let cap = Collider::new(ConvexShape::Capsule {
            radius: 0.02,
            half_length: 0.05,
        })
        .unwrap();
        let above = pose.transform_point(&Vec3::new(0.0, 0.0, 0.1));
        let prox = cap.closest(&pose, &above);
        assert!((prox.gap - 0.03).abs() < 1e-12);
        assert!((prox.normal - pose.rotation * Vec3::z()).norm() < 1e-12);
    }
}
