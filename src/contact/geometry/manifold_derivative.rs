//! The derivatives of a contact point of a manifold ([`collider_contacts`],
//! [`obstacle_contacts`]) — its point, normal and gap — with respect to small rigid motions of
//! the two shapes, for the contact-geometry terms of the rigid step's derivative (paper 002
//! Appendix D, paper 003 §V).
//!
//! A rigid motion of a shape is a world twist `ξ = [v_O; ω]` (m, rad): the pose moves to
//! `x ↦ exp3(ε ω) x + ε v_O`, which moves every point of the shape by `v_O + ω × x` to first
//! order. parry's manifold generators (vertex–face, face–face clipping, ball and capsule
//! projections, triangle meshes) are a black box here, so their derivative is taken by central
//! differences of the same query at `±ε` along each of the twelve twist components, with
//! `ε` = [`GEOMETRY_STEP`]: its error is about `1e-16 L / ε + ε² L / r²` for a scene of size `L`
//! and curvature radius `r` (≈ 1e-10 at 1 m), far below the 1e-6 the step derivative is
//! checked to. The perturbed point is the one with the same parry feature ids nearest to the
//! original (the manifold's structure is the same for motions of 1e-6).
//!
//! Against a plane obstacle (the floor under feet and boxes) the derivative is analytic: the
//! shape's witness point is `s − r n` with `s` a point fixed in the shape (a box's or hull's
//! vertex, a ball's centre, an end of a capsule's segment) and `r` its border radius (0, the
//! ball's or the capsule's radius), the normal is the plane's, so a twist `[v_O; ω]` moves the
//! witness by `v_O + ω × s`, the gap by n·(v_O + ω × s) and the midpoint by the witness's motion
//! less half the gap's along n. A cylinder's lowest line rolls across its surface, so it keeps
//! the differences. Analytic derivatives for the other generators are left to do.

use super::convex_shape::{Collider, ConvexShape, ShapePose};
use super::detection::Obstacle;
use super::shape_manifold::{
    ManifoldWorkspace, ShapeContact, collider_contacts, obstacle_contacts,
};
use crate::error::{Error, Result};
use crate::math::{Mat3, Vec3};

/// The motion step (m, rad) of the central differences.
pub const GEOMETRY_STEP: f64 = 1e-6;

/// What a collider touches: a static obstacle, or another collider at a pose.
#[derive(Debug, Clone, Copy)]
pub enum Counterpart<'a> {
    /// A static obstacle (its side has no motion).
    Obstacle(&'a Obstacle),
    /// A collider at its pose (the second side; static or moving).
    Collider(&'a Collider, ShapePose),
}

/// `∂(point, normal, gap)/∂ξ` of one contact point, per side (0: the first collider, 1: the
/// counterpart) and twist component (`[v_O; ω]`, world). Units: point m/m and m/rad, normal
/// 1/m and 1/rad, gap likewise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactGeometryJacobian {
    /// Contact point (world).
    pub point: [[Vec3; 6]; 2],
    /// Unit normal (world, from the counterpart into the first collider).
    pub normal: [[Vec3; 6]; 2],
    /// Signed gap.
    pub gap: [[f64; 6]; 2],
}

/// The pose moved by `eps` along twist component `k` (`[v_O; ω]`, world).
pub(super) fn moved(pose: &ShapePose, k: usize, eps: f64) -> ShapePose {
    let mut axis = Vec3::zeros();
    if k < 3 {
        axis[k] = eps;
        return ShapePose {
            rotation: pose.rotation,
            translation: pose.translation + axis,
        };
    }
    axis[k - 3] = eps;
    let r: Mat3 = *nalgebra::Rotation3::new(axis).matrix();
    ShapePose {
        rotation: r * pose.rotation,
        translation: r * pose.translation,
    }
}

/// The derivatives of `contact` — one of the contacts of `a` at `pose_a` against `other`,
/// normals from `other` into `a` — with respect to the motions of both sides (module doc).
/// Errors when a perturbed query loses the contact (a mode switch within [`GEOMETRY_STEP`]).
pub fn contact_geometry_jacobian(
    a: &Collider,
    pose_a: &ShapePose,
    other: Counterpart<'_>,
    contact: &ShapeContact,
    ws: &mut ManifoldWorkspace,
) -> Result<ContactGeometryJacobian> {
    if let Counterpart::Obstacle(Obstacle::Plane { .. }) = other
        && let Some(jac) = against_plane(a, contact)
    {
        return Ok(jac);
    }
    differences(a, pose_a, other, contact, ws)
}

/// The analytic derivative against a plane (module doc); `None` for a cylinder.
fn against_plane(a: &Collider, contact: &ShapeContact) -> Option<ContactGeometryJacobian> {
    let border = match a.shape() {
        ConvexShape::Cuboid { .. } | ConvexShape::Hull { .. } => 0.0,
        ConvexShape::Ball { radius } | ConvexShape::Capsule { radius, .. } => *radius,
        ConvexShape::Cylinder { .. } => return None,
    };
    let n = contact.normal;
    // The witness on the shape is half a gap above the midpoint; s is fixed in the shape.
    let s = contact.point + (0.5 * contact.gap + border) * n;
    let mut out = ContactGeometryJacobian {
        point: [[Vec3::zeros(); 6]; 2],
        normal: [[Vec3::zeros(); 6]; 2],
        gap: [[0.0; 6]; 2],
    };
    for k in 0..6 {
        let mut e = Vec3::zeros();
        e[k % 3] = 1.0;
        let moved = if k < 3 { e } else { e.cross(&s) };
        let dgap = n.dot(&moved);
        out.gap[0][k] = dgap;
        out.point[0][k] = moved - 0.5 * dgap * n;
    }
    Some(out)
}

/// The derivative by central differences of parry's query (module doc).
fn differences(
    a: &Collider,
    pose_a: &ShapePose,
    other: Counterpart<'_>,
    contact: &ShapeContact,
    ws: &mut ManifoldWorkspace,
) -> Result<ContactGeometryJacobian> {
    // A margin that keeps the contact for motions of GEOMETRY_STEP whatever the shapes' size.
    let margin = contact.gap.max(0.0) + 1e-3 * (1.0 + a.bounding_radius());
    let mut found = Vec::new();
    let mut query = |pa: &ShapePose, pb: Option<ShapePose>| -> Result<ShapeContact> {
        found.clear();
        match (other, pb) {
            (Counterpart::Obstacle(o), _) => obstacle_contacts(o, a, pa, margin, ws, &mut found)?,
            (Counterpart::Collider(b, _), Some(pb)) => {
                collider_contacts(a, pa, b, &pb, margin, ws, &mut found)?
            }
            (Counterpart::Collider(..), None) => unreachable!("a collider has a pose"),
        }
        found
            .iter()
            .filter(|c| c.features == contact.features)
            .min_by(|x, y| {
                let dx = (x.point - contact.point).norm();
                let dy = (y.point - contact.point).norm();
                dx.total_cmp(&dy)
            })
            .copied()
            .filter(|c| (c.point - contact.point).norm() < 1e3 * GEOMETRY_STEP * (1.0 + pa.translation.norm()))
            .ok_or_else(|| {
                Error::invalid(
                    "contact geometry derivative",
                    format!(
                        "the contact at {:?} changes its features within a motion of {GEOMETRY_STEP:e}: a contact-mode switch, outside the derivative",
                        contact.point.as_slice()
                    ),
                )
            })
    };
    let pose_b = match other {
        Counterpart::Collider(_, p) => Some(p),
        Counterpart::Obstacle(_) => None,
    };
    let mut out = ContactGeometryJacobian {
        point: [[Vec3::zeros(); 6]; 2],
        normal: [[Vec3::zeros(); 6]; 2],
        gap: [[0.0; 6]; 2],
    };
    let e = GEOMETRY_STEP;
    for side in 0..2 {
        if side == 1 && pose_b.is_none() {
            continue;
        }
        for k in 0..6 {
            let (plus, minus) = if side == 0 {
                (
                    query(&moved(pose_a, k, e), pose_b)?,
                    query(&moved(pose_a, k, -e), pose_b)?,
                )
            } else {
                let pb = pose_b.expect("checked");
                (
                    query(pose_a, Some(moved(&pb, k, e)))?,
                    query(pose_a, Some(moved(&pb, k, -e)))?,
                )
            };
            out.point[side][k] = (plus.point - minus.point) / (2.0 * e);
            out.normal[side][k] = (plus.normal - minus.normal) / (2.0 * e);
            out.gap[side][k] = (plus.gap - minus.gap) / (2.0 * e);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::ConvexShape;

    #[test]
    fn a_box_corner_on_a_plane_moves_with_the_box_and_keeps_the_plane_normal() {
        let cube = Collider::new(ConvexShape::Cuboid {
            half_extents: Vec3::new(0.1, 0.1, 0.1),
        })
        .unwrap();
        let plane = Obstacle::Plane {
            point: Vec3::zeros(),
            normal: Vec3::new(0.0, 0.0, 1.0),
        };
        let r: Mat3 = *nalgebra::Rotation3::new(Vec3::new(0.0, 0.3, 0.0)).matrix();
        let pose = ShapePose {
            rotation: r,
            translation: Vec3::new(0.2, -0.1, 0.13),
        };
        let mut ws = ManifoldWorkspace::default();
        let mut found = Vec::new();
        obstacle_contacts(&plane, &cube, &pose, 0.05, &mut ws, &mut found).unwrap();
        // The lowest corner: its gap is its height, its witness point on the box moves by
        // v_O + ω × x, the plane's witness below it; the contact point is their midpoint.
        let c = *found.iter().min_by(|x, y| x.gap.total_cmp(&y.gap)).unwrap();
        let jac =
            contact_geometry_jacobian(&cube, &pose, Counterpart::Obstacle(&plane), &c, &mut ws)
                .unwrap();
        let corner = c.point + 0.5 * c.gap * Vec3::z();
        for k in 0..6 {
            let mut xi = [Vec3::zeros(), Vec3::zeros()];
            xi[k / 3][k % 3] = 1.0;
            let v = xi[0] + xi[1].cross(&corner);
            assert!((jac.gap[0][k] - v.z).abs() < 1e-8, "gap {k}");
            let dp = Vec3::new(v.x, v.y, 0.5 * v.z);
            assert!((jac.point[0][k] - dp).norm() < 1e-8, "point {k}");
            assert!(jac.normal[0][k].norm() < 1e-8, "normal {k}");
        }
    }

    #[test]
    fn the_plane_derivative_equals_the_differences_of_parry() {
        let plane = Obstacle::Plane {
            point: Vec3::new(0.1, -0.2, 0.05),
            normal: Vec3::new(0.2, -0.1, 1.0).normalize(),
        };
        let shapes = [
            ConvexShape::Cuboid {
                half_extents: Vec3::new(0.1, 0.07, 0.04),
            },
            ConvexShape::Ball { radius: 0.06 },
            ConvexShape::Capsule {
                radius: 0.03,
                half_length: 0.08,
            },
        ];
        for shape in shapes {
            let collider = Collider::new(shape.clone()).unwrap();
            for tilt in [0.0, 0.4] {
                let r: Mat3 = *nalgebra::Rotation3::new(Vec3::new(tilt, 0.3 * tilt, 0.7)).matrix();
                // Placed just above the plane along its normal.
                let mut pose = ShapePose {
                    rotation: r,
                    translation: Vec3::new(0.3, 0.1, 0.0),
                };
                let mut ws = ManifoldWorkspace::default();
                let mut found = Vec::new();
                obstacle_contacts(&plane, &collider, &pose, 10.0, &mut ws, &mut found).unwrap();
                let lowest = found.iter().map(|c| c.gap).fold(f64::INFINITY, f64::min);
                pose.translation -= (lowest - 1e-4) * plane_normal(&plane);
                found.clear();
                obstacle_contacts(&plane, &collider, &pose, 0.01, &mut ws, &mut found).unwrap();
                assert!(!found.is_empty(), "{shape:?}");
                for c in &found {
                    let exact = against_plane(&collider, c).unwrap();
                    let fd =
                        differences(&collider, &pose, Counterpart::Obstacle(&plane), c, &mut ws)
                            .unwrap();
                    for k in 0..6 {
                        assert!(
                            (exact.gap[0][k] - fd.gap[0][k]).abs() < 1e-8,
                            "{shape:?} gap {k}"
                        );
                        assert!(
                            (exact.point[0][k] - fd.point[0][k]).norm() < 1e-8,
                            "{shape:?} point {k}"
                        );
                        assert!(fd.normal[0][k].norm() < 1e-8, "{shape:?} normal {k}");
                    }
                }
            }
        }
    }

    fn plane_normal(o: &Obstacle) -> Vec3 {
        match o {
            Obstacle::Plane { normal, .. } => *normal,
            _ => unreachable!("a plane"),
        }
    }
}
