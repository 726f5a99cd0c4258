//! Contact points between convex shapes, and between a convex shape and a static obstacle:
//! parry3d-f64's contact manifolds (up to four points per face–face pair, as the contact
//! patches of Simple / HPP-FCL), turned into world points, normals and signed gaps.
//!
//! Conventions: every [`ShapeContact`] has its normal pointing **from the first body into the
//! second** (from the obstacle into the shape, from shape `b` into shape `a`), as the soft
//! contacts do (`NodeContact`: from the obstacle into the node's body). The point is the
//! midpoint of the two witness points, so both bodies of a pair see the impulse at the same
//! point (equal and opposite impulses at one point keep the pair's angular momentum). The
//! gap Φ (m) is negative when the shapes overlap.
//!
//! parry's contact between a support-map shape and a half-space is right only with the
//! half-space first (given second, its distances are wrong): the obstacle is always the first
//! shape here.

use parry3d_f64::query::{ContactManifold, DefaultQueryDispatcher, PersistentQueryDispatcher};
use parry3d_f64::shape::{Ball, Capsule as ParryCapsule, Cuboid, HalfSpace, Shape};

use super::convex_shape::{Collider, ShapePose, from_glam, to_glam};
use super::detection::{Obstacle, validate_margin};
use super::separation_bound::{above_plane, shapes_separated};
use crate::error::{Error, Result};
use crate::math::Vec3;

/// One contact point between two shapes (or a shape and an obstacle).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShapeContact {
    /// The contact point (m, world): midway between the two shapes' witness points.
    pub point: Vec3,
    /// Unit normal (world), from the first body into the second.
    pub normal: Vec3,
    /// Signed gap Φ (m), negative when overlapping.
    pub gap: f64,
    /// parry's feature ids on the two shapes (vertex, edge or face), which identify the same
    /// contact from one step to the next (warm start).
    pub features: (u32, u32),
}

/// Reusable buffers of the manifold queries.
#[derive(Default)]
pub struct ManifoldWorkspace {
    manifolds: Vec<ContactManifold<(), ()>>,
}

/// The contacts of `first` at `pose_first` with `second` at `pose_second` whose gap is at most
/// `margin` (m, ≥ 0), appended to `out`; normals point from `first` into `second`.
fn manifold_contacts(
    first: &dyn Shape,
    pose_first: &parry3d_f64::math::Pose,
    second: &dyn Shape,
    pose_second: &parry3d_f64::math::Pose,
    margin: f64,
    ws: &mut ManifoldWorkspace,
    out: &mut Vec<ShapeContact>,
) -> Result<()> {
    let pos12 = pose_first.inv_mul(pose_second);
    ws.manifolds.clear();
    DefaultQueryDispatcher
        .contact_manifolds(&pos12, first, second, margin, &mut ws.manifolds, &mut None)
        .map_err(|_| {
            Error::invalid(
                "contact",
                format!(
                    "no contact generator between a {:?} and a {:?}",
                    first.shape_type(),
                    second.shape_type()
                ),
            )
        })?;
    for m in &ws.manifolds {
        // Normal of the manifold in the first shape's frame (sub-shape frames of composite
        // shapes are accounted for by parry's own `local_n1`).
        let n = from_glam(pose_first.rotation * m.local_n1);
        let norm = n.norm();
        if !(norm > 0.0) {
            continue;
        }
        let normal = n / norm;
        for c in &m.points {
            if c.dist > margin {
                continue;
            }
            let p1 = from_glam(pose_first * c.local_p1);
            let p2 = from_glam(pose_first * (pos12 * c.local_p2));
            out.push(ShapeContact {
                point: 0.5 * (p1 + p2),
                normal,
                gap: c.dist,
                features: (c.fid1.0, c.fid2.0),
            });
        }
    }
    Ok(())
}

/// Contacts between shape `a` at `pose_a` and shape `b` at `pose_b` with gap ≤ `margin` (m),
/// appended to `out`; normals point from `b` into `a`.
///
/// Errors on a negative or non-finite margin.
pub fn collider_contacts(
    a: &Collider,
    pose_a: &ShapePose,
    b: &Collider,
    pose_b: &ShapePose,
    margin: f64,
    ws: &mut ManifoldWorkspace,
    out: &mut Vec<ShapeContact>,
) -> Result<()> {
    validate_margin(margin)?;
    if !within_spheres(a, pose_a, b, pose_b, margin)
        || shapes_separated(a, pose_a, b, pose_b, margin)
    {
        return Ok(());
    }
    parry_contacts(a, pose_a, b, pose_b, margin, ws, out)
}

/// Whether the bounding spheres of `a` at `pose_a` and `b` at `pose_b` come within `margin`
/// (m) of each other.
pub(super) fn within_spheres(
    a: &Collider,
    pose_a: &ShapePose,
    b: &Collider,
    pose_b: &ShapePose,
    margin: f64,
) -> bool {
    !((pose_a.translation - pose_b.translation).norm()
        > a.bounding_radius() + b.bounding_radius() + margin)
}

/// [`collider_contacts`] without the bounding tests: parry's manifolds alone.
pub(super) fn parry_contacts(
    a: &Collider,
    pose_a: &ShapePose,
    b: &Collider,
    pose_b: &ShapePose,
    margin: f64,
    ws: &mut ManifoldWorkspace,
    out: &mut Vec<ShapeContact>,
) -> Result<()> {
    let (sa, pa) = a.parry(pose_a);
    let (sb, pb) = b.parry(pose_b);
    manifold_contacts(sb.as_ref(), &pb, sa.as_ref(), &pa, margin, ws, out)
}

/// Contacts between the static `obstacle` and shape `a` at `pose_a` with gap ≤ `margin` (m),
/// appended to `out`; normals point from the obstacle into the shape.
///
/// Errors on a negative or non-finite margin.
pub fn obstacle_contacts(
    obstacle: &Obstacle,
    a: &Collider,
    pose_a: &ShapePose,
    margin: f64,
    ws: &mut ManifoldWorkspace,
    out: &mut Vec<ShapeContact>,
) -> Result<()> {
    validate_margin(margin)?;
    if let Some((lo, hi)) = obstacle.aabb() {
        let c = pose_a.translation;
        let r = a.bounding_radius() + margin;
        if (0..3).any(|k| c[k] + r < lo[k] || c[k] - r > hi[k]) {
            return Ok(());
        }
    }
    if let Obstacle::Plane { point, normal } = obstacle
        && above_plane(a, pose_a, point, normal, margin)
    {
        return Ok(());
    }
    let (sa, pa) = a.parry(pose_a);
    let at = |t: &Vec3| ShapePose {
        rotation: crate::math::Mat3::identity(),
        translation: *t,
    };
    match obstacle {
        Obstacle::Plane { point, normal } => {
            let plane = HalfSpace::new(to_glam(normal));
            let pose = at(point).to_parry();
            manifold_contacts(&plane, &pose, sa.as_ref(), &pa, margin, ws, out)
        }
        Obstacle::Sphere { center, radius } => {
            let ball = Ball::new(*radius);
            let pose = at(center).to_parry();
            manifold_contacts(&ball, &pose, sa.as_ref(), &pa, margin, ws, out)
        }
        Obstacle::Cuboid {
            center,
            half_extents,
            rotation,
        } => {
            let cuboid = Cuboid::new(to_glam(half_extents));
            let pose = ShapePose {
                rotation: *rotation,
                translation: *center,
            }
            .to_parry();
            manifold_contacts(&cuboid, &pose, sa.as_ref(), &pa, margin, ws, out)
        }
        Obstacle::Capsule(c) => {
            let capsule = ParryCapsule::new(to_glam(&c.a), to_glam(&c.b), c.radius);
            let pose = ShapePose::identity().to_parry();
            manifold_contacts(&capsule, &pose, sa.as_ref(), &pa, margin, ws, out)
        }
        Obstacle::Mesh(mesh) => {
            let pose = ShapePose::identity().to_parry();
            manifold_contacts(mesh.trimesh(), &pose, sa.as_ref(), &pa, margin, ws, out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::ConvexShape;
    use crate::math::Mat3;

    fn cube(h: f64) -> Collider {
        Collider::new(ConvexShape::Cuboid {
            half_extents: Vec3::new(h, h, h),
        })
        .unwrap()
    }

    #[test]
    fn a_box_resting_on_a_plane_touches_at_its_four_lower_corners() {
        let plane = Obstacle::plane(Vec3::zeros(), Vec3::z()).unwrap();
        let pose = ShapePose {
            rotation: Mat3::identity(),
            translation: Vec3::new(0.3, -0.2, 0.1 - 1e-4),
        };
        let mut out = Vec::new();
        let mut ws = ManifoldWorkspace::default();
        obstacle_contacts(&plane, &cube(0.1), &pose, 1e-3, &mut ws, &mut out).unwrap();
        assert_eq!(out.len(), 4, "{out:?}");
        for c in &out {
            assert!((c.normal - Vec3::z()).norm() < 1e-12);
            assert!((c.gap + 1e-4).abs() < 1e-12, "gap {}", c.gap);
            // Midway between the corner (z = −1e-4) and the plane (z = 0).
            assert!((c.point.z + 0.5e-4).abs() < 1e-12);
            assert!((c.point.x - 0.3).abs() - 0.1 < 1e-12);
            assert!((c.point.y + 0.2).abs() - 0.1 < 1e-12);
        }
        // Lifted beyond the margin: nothing.
        out.clear();
        let lifted = ShapePose {
            translation: Vec3::new(0.3, -0.2, 0.1 + 2e-3),
            ..pose
        };
        obstacle_contacts(&plane, &cube(0.1), &lifted, 1e-3, &mut ws, &mut out).unwrap();
        assert!(out.is_empty());
    }

    #[test]
    fn two_stacked_boxes_touch_along_the_upper_box_normal() {
        let lower = ShapePose::identity();
        let upper = ShapePose {
            rotation: Mat3::identity(),
            translation: Vec3::new(0.05, 0.0, 0.2 - 1e-5),
        };
        let mut out = Vec::new();
        let mut ws = ManifoldWorkspace::default();
        collider_contacts(
            &cube(0.1),
            &upper,
            &cube(0.1),
            &lower,
            1e-3,
            &mut ws,
            &mut out,
        )
        .unwrap();
        assert_eq!(out.len(), 4, "{out:?}");
        for c in &out {
            // From the lower box (b) into the upper one (a).
            assert!((c.normal - Vec3::z()).norm() < 1e-9, "{:?}", c.normal);
            assert!((c.gap + 1e-5).abs() < 1e-9, "gap {}", c.gap);
            assert!((c.point.z - (0.1 - 0.5e-5)).abs() < 1e-9);
        }
    }

    #[test]
    fn a_ball_on_a_tilted_plane_touches_below_its_centre() {
        let n = Vec3::new(0.0, -(0.3f64).sin(), (0.3f64).cos());
        let plane = Obstacle::plane(Vec3::zeros(), n).unwrap();
        let ball = Collider::new(ConvexShape::Ball { radius: 0.05 }).unwrap();
        let centre = n * 0.049;
        let pose = ShapePose {
            rotation: Mat3::identity(),
            translation: centre,
        };
        let mut out = Vec::new();
        let mut ws = ManifoldWorkspace::default();
        obstacle_contacts(&plane, &ball, &pose, 1e-3, &mut ws, &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert!((out[0].normal - n).norm() < 1e-12);
        assert!((out[0].gap + 1e-3).abs() < 1e-12);
        assert!((out[0].point - (centre - n * 0.0495)).norm() < 1e-12);
    }
}
