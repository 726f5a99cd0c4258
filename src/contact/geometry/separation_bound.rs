//! A cheap lower bound on the distance between two convex shapes, or between a shape and a
//! plane, so that the manifold queries (`shape_manifold`) skip pairs that cannot come within
//! the margin: the separation along one axis, from each shape's support function.
//!
//! For a unit axis n and convex sets A and B, every point a of A and b of B satisfy
//! `|b − a| ≥ n·(b − a) ≥ min_B n·b − max_A n·a`, so with `h_X(d) = max_{x∈X} d·(x − c_X)`
//! (the support function about the shape frame's origin c_X):
//!
//! ```text
//! distance(A, B) ≥ n·(c_B − c_A) − h_A(n) − h_B(−n)
//! ```
//!
//! The axis is the line of the two origins (the bounding-sphere test's own axis, so this bound
//! is never weaker than it); against a plane, the plane's normal (then the bound is exact).
//! The support functions are analytic for the box, ball, capsule and cylinder, and the largest
//! product with the vertices for a convex hull.

use super::convex_shape::{Collider, ConvexShape, ShapePose};
use crate::math::Vec3;

/// A bound this far (m, relative to the shapes' sizes) beyond the margin is needed to skip a
/// pair, so that round-off in the bound never drops a contact parry would report.
const SLACK: f64 = 1e-9;

impl Collider {
    /// `max d·(x − origin)` over the shape's points x, the shape frame at `rotation` (world)
    /// and `d` any world vector (m times |d|).
    pub(super) fn support_extent(&self, rotation: &crate::math::Mat3, d: &Vec3) -> f64 {
        let local = rotation.tr_mul(d);
        match self.shape() {
            ConvexShape::Cuboid { half_extents: e } => {
                e.x * local.x.abs() + e.y * local.y.abs() + e.z * local.z.abs()
            }
            ConvexShape::Ball { radius } => radius * local.norm(),
            ConvexShape::Capsule {
                radius,
                half_length,
            } => half_length * local.z.abs() + radius * local.norm(),
            ConvexShape::Cylinder {
                radius,
                half_length,
            } => half_length * local.z.abs() + radius * local.x.hypot(local.y),
            ConvexShape::Hull { .. } => self
                .corners()
                .iter()
                .map(|p| p.dot(&local))
                .fold(f64::NEG_INFINITY, f64::max)
                .max(-self.bounding_radius() * local.norm()),
        }
    }
}

/// Whether shapes `a` at `pose_a` and `b` at `pose_b` are certainly farther apart than
/// `margin` (m) along the line of their origins (module doc).
pub(super) fn shapes_separated(
    a: &Collider,
    pose_a: &ShapePose,
    b: &Collider,
    pose_b: &ShapePose,
    margin: f64,
) -> bool {
    let d = pose_b.translation - pose_a.translation;
    let dist = d.norm();
    if !(dist > 0.0) {
        return false;
    }
    let n = d / dist;
    let bound =
        dist - a.support_extent(&pose_a.rotation, &n) - b.support_extent(&pose_b.rotation, &-n);
    bound > margin + SLACK * (a.bounding_radius() + b.bounding_radius() + margin)
}

/// Whether shape `a` at `pose_a` lies certainly farther than `margin` (m) on the outer side
/// of the plane through `point` of unit outward normal `normal`.
pub(super) fn above_plane(
    a: &Collider,
    pose_a: &ShapePose,
    point: &Vec3,
    normal: &Vec3,
    margin: f64,
) -> bool {
    let lowest =
        normal.dot(&(pose_a.translation - point)) - a.support_extent(&pose_a.rotation, &-normal);
    lowest > margin + SLACK * (a.bounding_radius() + margin)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Rotation3;

    fn shapes() -> Vec<Collider> {
        [
            ConvexShape::Cuboid {
                half_extents: Vec3::new(0.1, 0.2, 0.05),
            },
            ConvexShape::Ball { radius: 0.07 },
            ConvexShape::Capsule {
                radius: 0.03,
                half_length: 0.1,
            },
            ConvexShape::Cylinder {
                radius: 0.04,
                half_length: 0.08,
            },
            ConvexShape::Hull {
                points: vec![
                    Vec3::new(0.0, 0.0, 0.0),
                    Vec3::new(0.1, 0.0, 0.0),
                    Vec3::new(0.0, 0.1, 0.0),
                    Vec3::new(0.0, 0.0, 0.1),
                ],
            },
        ]
        .into_iter()
        .map(|s| Collider::new(s).unwrap())
        .collect()
    }

    /// The support extent bounds the surface's points and is reached by one of them (up to
    /// the triangulation's flattening of curved faces).
    #[test]
    fn support_extents_match_the_surfaces() {
        let rotation = *Rotation3::from_euler_angles(0.3, -0.7, 1.1).matrix();
        for c in shapes() {
            let (vertices, _) = c.surface();
            for d in [
                Vec3::new(1.0, 0.0, 0.0),
                Vec3::new(0.2, -0.5, 0.8),
                Vec3::new(-0.3, 0.9, -0.1),
            ] {
                let h = c.support_extent(&rotation, &d);
                let best = vertices
                    .iter()
                    .map(|p| (rotation * p).dot(&d))
                    .fold(f64::NEG_INFINITY, f64::max);
                assert!(best <= h + 1e-12, "{:?}: {best} > {h}", c.shape());
                assert!(best >= h - 0.1 * h.abs(), "{:?}: {best} ≪ {h}", c.shape());
            }
        }
    }

    /// Pairs the bound calls separated have no contact within the margin; pairs at a gap
    /// below the margin are never called separated.
    #[test]
    fn separated_pairs_have_no_contacts() {
        let mut ws = crate::contact::geometry::shape_manifold::ManifoldWorkspace::default();
        let mut skipped = 0;
        for a in shapes() {
            for b in shapes() {
                for k in 0..40 {
                    let t = 0.01 * k as f64;
                    let pose_a = ShapePose {
                        rotation: *Rotation3::from_euler_angles(0.2 * t, 1.0, -0.4).matrix(),
                        translation: Vec3::zeros(),
                    };
                    let pose_b = ShapePose {
                        rotation: *Rotation3::from_euler_angles(-0.5, 3.0 * t, 0.9).matrix(),
                        translation: Vec3::new(0.05 + t, 0.3 * t, -0.2 * t),
                    };
                    let margin = 0.01;
                    let mut out = Vec::new();
                    crate::contact::geometry::shape_manifold::parry_contacts(
                        &a, &pose_a, &b, &pose_b, margin, &mut ws, &mut out,
                    )
                    .unwrap();
                    if shapes_separated(&a, &pose_a, &b, &pose_b, margin) {
                        skipped += 1;
                        assert!(out.is_empty(), "{:?} {:?} at {t}", a.shape(), b.shape());
                    }
                }
            }
        }
        assert!(skipped > 100, "the bound skips far pairs ({skipped})");
    }

    /// Against a plane the bound is the lowest point's height: a shape hovering above the
    /// margin is skipped, one within it is not.
    #[test]
    fn the_plane_bound_is_the_lowest_point() {
        let rotation = *Rotation3::from_euler_angles(0.3, -0.7, 1.1).matrix();
        for c in shapes() {
            let (vertices, _) = c.surface();
            let lowest = vertices
                .iter()
                .map(|p| (rotation * p).z)
                .fold(f64::INFINITY, f64::min);
            let at = |z: f64| ShapePose {
                rotation,
                translation: Vec3::new(0.0, 0.0, z - lowest),
            };
            let (o, n) = (Vec3::zeros(), Vec3::z());
            assert!(
                !above_plane(&c, &at(0.005), &o, &n, 0.01),
                "{:?}",
                c.shape()
            );
            assert!(above_plane(&c, &at(0.02), &o, &n, 0.01), "{:?}", c.shape());
        }
    }
}
