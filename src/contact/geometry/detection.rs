//! Collision detection of soft-body nodes against static rigid obstacles: analytic planes,
//! spheres, boxes and capsules, and triangle meshes (parry3d, `mesh_obstacle.rs`): signed
//! gap, closest point on the obstacle, normal, a deterministic contact frame, and the
//! contact's rows of `H_c`. Planes stay analytic (parry's half-space contact is unreliable).
//!
//! Conventions: the gap Φ (m) is the signed distance from the node to the obstacle's surface,
//! positive outside, negative when penetrating; the normal n points from the obstacle towards
//! the node (outward), so a positive normal force pushes the node out. Obstacles are static:
//! a node contact's Jacobian rows are the frame axes (weight 1 on the node).

use std::sync::Arc;

use super::capsule::Capsule;
use super::contact_points::ContactPoints;
use super::cuboid::{BoxRegion, box_region};
use super::mesh_obstacle::MeshObstacle;
use crate::contact::delassus::jacobian::ContactJacobian;
use crate::error::{Error, Result};
use crate::math::{Mat3, Vec3};
use crate::mesh::TriangleSurface;

/// A static rigid obstacle (docs/scene-file.md scene `[[obstacle]]` types).
#[derive(Debug, Clone, PartialEq)]
pub enum Obstacle {
    /// The half-space below the plane through `point` with unit outward `normal`.
    Plane {
        /// A point of the plane (m).
        point: Vec3,
        /// Unit outward normal.
        normal: Vec3,
    },
    /// A solid ball.
    Sphere {
        /// Centre (m).
        center: Vec3,
        /// Radius (m), positive.
        radius: f64,
    },
    /// A solid box: `rotation` maps box axes to world axes.
    Cuboid {
        /// Centre (m).
        center: Vec3,
        /// Half extents along the box axes (m), positive.
        half_extents: Vec3,
        /// Rotation box → world (orthonormal, determinant +1).
        rotation: Mat3,
    },
    /// A solid capsule (segment and radius).
    Capsule(Capsule),
    /// A triangle mesh (closed: a solid; open: one-sided), shared between clones.
    Mesh(Arc<MeshObstacle>),
}

/// What [`Obstacle::closest`] finds for one point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Proximity {
    /// Signed gap Φ (m): positive outside, negative inside.
    pub gap: f64,
    /// Closest point on the obstacle's surface (m).
    pub point: Vec3,
    /// Unit outward normal at `point`.
    pub normal: Vec3,
}

/// One detected contact of a soft body's contact point with an obstacle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeContact {
    /// The contact point: a node, or a vertex of the body's embedded contact surface
    /// ([`crate::contact::ContactPoints`]).
    pub node: usize,
    /// Which obstacle (index in the list given to [`detect_nodes`]).
    pub obstacle: usize,
    /// Signed gap Φ (m).
    pub gap: f64,
    /// Closest point on the obstacle (m).
    pub point: Vec3,
    /// Contact frame, columns `[t₁, t₂, n]` (see [`contact_frame`]).
    pub frame: Mat3,
}

fn finite(v: &Vec3) -> bool {
    v.iter().all(|x| x.is_finite())
}

impl Obstacle {
    /// A plane through `point` with outward `normal` (normalised here). Errors on a zero or
    /// non-finite normal or a non-finite point.
    pub fn plane(point: Vec3, normal: Vec3) -> Result<Obstacle> {
        if !finite(&point) {
            return Err(Error::invalid("plane obstacle point", "not finite"));
        }
        let norm = normal.norm();
        if !(norm > 1e-12) || !norm.is_finite() {
            return Err(Error::invalid(
                "plane obstacle normal",
                format!("{:?} is zero or not finite", normal.as_slice()),
            ));
        }
        Ok(Obstacle::Plane {
            point,
            normal: normal / norm,
        })
    }

    /// A sphere. Errors on a non-positive or non-finite radius or a non-finite centre.
    pub fn sphere(center: Vec3, radius: f64) -> Result<Obstacle> {
        if !finite(&center) {
            return Err(Error::invalid("sphere obstacle center", "not finite"));
        }
        if !(radius > 0.0) || !radius.is_finite() {
            return Err(Error::invalid(
                "sphere obstacle radius",
                format!("{radius} must be positive"),
            ));
        }
        Ok(Obstacle::Sphere { center, radius })
    }

    /// A box. Errors on a non-positive half extent, or a rotation that is not orthonormal with
    /// determinant +1 (to 1e-9).
    pub fn cuboid(center: Vec3, half_extents: Vec3, rotation: Mat3) -> Result<Obstacle> {
        if !finite(&center) {
            return Err(Error::invalid("box obstacle center", "not finite"));
        }
        if !half_extents.iter().all(|e| *e > 0.0 && e.is_finite()) {
            return Err(Error::invalid(
                "box obstacle half_extents",
                format!("{:?} must all be positive", half_extents.as_slice()),
            ));
        }
        if rotation.iter().any(|x| !x.is_finite())
            || (rotation.transpose() * rotation - Mat3::identity()).amax() > 1e-9
            || (rotation.determinant() - 1.0).abs() > 1e-9
        {
            return Err(Error::invalid(
                "box obstacle rotation",
                "must be a rotation matrix (orthonormal, determinant +1)",
            ));
        }
        Ok(Obstacle::Cuboid {
            center,
            half_extents,
            rotation,
        })
    }

    /// A capsule of axis `a`–`b` and `radius` (m); errors as [`Capsule::new`].
    pub fn capsule(a: Vec3, b: Vec3, radius: f64) -> Result<Obstacle> {
        Ok(Obstacle::Capsule(Capsule::new(a, b, radius)?))
    }

    /// A triangle-mesh obstacle of `surface` (world coordinates, m); `name` labels errors
    /// (see [`MeshObstacle::new`]).
    pub fn mesh(name: &str, surface: TriangleSurface) -> Result<Obstacle> {
        Ok(Obstacle::Mesh(Arc::new(MeshObstacle::new(name, surface)?)))
    }

    /// World axis-aligned bounding box `(min, max)` of the obstacle (m), `None` for a plane
    /// (unbounded).
    pub fn aabb(&self) -> Option<(Vec3, Vec3)> {
        match self {
            Obstacle::Plane { .. } => None,
            Obstacle::Sphere { center, radius } => Some((
                center - Vec3::repeat(*radius),
                center + Vec3::repeat(*radius),
            )),
            Obstacle::Cuboid {
                center,
                half_extents,
                rotation,
            } => {
                let reach = rotation.abs() * half_extents;
                Some((center - reach, center + reach))
            }
            Obstacle::Capsule(c) => {
                let r = Vec3::repeat(c.radius);
                Some((c.a.inf(&c.b) - r, c.a.sup(&c.b) + r))
            }
            Obstacle::Mesh(m) => Some(m.aabb()),
        }
    }

    /// The signed gap, closest surface point and outward normal for the point `p` (m).
    ///
    /// Degenerate cases are resolved deterministically: a point at a sphere's centre gets the
    /// normal +z; a point inside a box goes to the face of least penetration (the lowest axis,
    /// then the positive side, on ties).
    pub fn closest(&self, p: &Vec3) -> Proximity {
        match *self {
            Obstacle::Plane { point, normal } => {
                let gap = normal.dot(&(p - point));
                Proximity {
                    gap,
                    point: p - gap * normal,
                    normal,
                }
            }
            Obstacle::Sphere { center, radius } => {
                let r = p - center;
                let d = r.norm();
                let normal = if d > 0.0 { r / d } else { Vec3::z() };
                Proximity {
                    gap: d - radius,
                    point: center + radius * normal,
                    normal,
                }
            }
            Obstacle::Capsule(ref c) => c.closest(p),
            Obstacle::Mesh(ref m) => m.closest(p),
            Obstacle::Cuboid {
                center,
                half_extents: e,
                rotation,
            } => {
                let q = rotation.transpose() * (p - center);
                match box_region(&q, &e) {
                    BoxRegion::Outside { clamped, n, d, .. } => Proximity {
                        gap: d,
                        point: center + rotation * clamped,
                        normal: rotation * n,
                    },
                    BoxRegion::Inside { k } => {
                        let sign = if q[k] >= 0.0 { 1.0 } else { -1.0 };
                        let mut on_face = q;
                        on_face[k] = sign * e[k];
                        let mut local_n = Vec3::zeros();
                        local_n[k] = sign;
                        Proximity {
                            gap: q[k].abs() - e[k],
                            point: center + rotation * on_face,
                            normal: rotation * local_n,
                        }
                    }
                }
            }
        }
    }
}

/// The contact frame of a unit normal `n`: columns `[t₁, t₂, n]`, right-handed and
/// orthonormal. `t₁` is the world axis least aligned with n (lowest index on ties) with its
/// n-component removed, normalised; `t₂ = n × t₁`. Deterministic, and constant for a plane.
///
/// Panics if `n` is not a unit vector (to 1e-6): normals come from [`Obstacle::closest`].
pub fn contact_frame(n: &Vec3) -> Mat3 {
    assert!(
        (n.norm() - 1.0).abs() < 1e-6,
        "contact_frame: normal is not unit"
    );
    let a = frame_helper_axis(n);
    let t1 = (a - a.dot(n) * n).normalize();
    let t2 = n.cross(&t1);
    Mat3::from_columns(&[t1, t2, *n])
}

/// The world axis [`contact_frame`] builds `t₁` from: the one least aligned with `n` (lowest
/// index on ties).
pub(super) fn frame_helper_axis(n: &Vec3) -> Vec3 {
    let mut k = 0;
    for j in 1..3 {
        if n[j].abs() < n[k].abs() {
            k = j;
        }
    }
    let mut a = Vec3::zeros();
    a[k] = 1.0;
    a
}

/// Checks a detection margin (m): finite and non-negative.
pub(super) fn validate_margin(margin: f64) -> Result<()> {
    if !(margin >= 0.0) || !margin.is_finite() {
        return Err(Error::invalid(
            "contact margin",
            format!("{margin} must be finite and non-negative"),
        ));
    }
    Ok(())
}

/// Every node of `candidates` (e.g. the body's surface nodes) within `margin` (m, ≥ 0) of an
/// obstacle becomes a contact (gap ≤ margin), appended to `out` in the order (node, obstacle);
/// a node near two obstacles gives two contacts. Panics on a node index out of range of
/// `positions` (candidates come from the body's own mesh).
pub fn detect_nodes(
    obstacles: &[Obstacle],
    positions: &[Vec3],
    candidates: &[usize],
    margin: f64,
    out: &mut Vec<NodeContact>,
) -> Result<()> {
    validate_margin(margin)?;
    for &node in candidates {
        for (o, obstacle) in obstacles.iter().enumerate() {
            out.extend(obstacle.node_contact(o, node, &positions[node], margin));
        }
    }
    Ok(())
}

impl Obstacle {
    /// The contact of node `node` at `p` (m) with this obstacle (index `index` in the
    /// scene's list) when its gap is at most `margin` (m): the narrow phase of detection.
    pub fn node_contact(
        &self,
        index: usize,
        node: usize,
        p: &Vec3,
        margin: f64,
    ) -> Option<NodeContact> {
        let prox = self.closest(p);
        (prox.gap <= margin).then(|| NodeContact {
            node,
            obstacle: index,
            gap: prox.gap,
            point: prox.point,
            frame: contact_frame(&prox.normal),
        })
    }
}

/// Appends the 3 rows of `H_c` of each contact (the frame axes on its contact point: the node,
/// or an embedded surface vertex's nodes with their weights, `points`) to `jacobian`, in the
/// order of `contacts`.
pub fn push_node_contacts(
    contacts: &[NodeContact],
    points: &ContactPoints,
    jacobian: &mut ContactJacobian,
) -> Result<()> {
    for c in contacts {
        let (w, len) = points.weights(c.node);
        jacobian.push_point_contact(&c.frame, &w[..len])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_obstacles_are_clear_errors() {
        let e = Obstacle::plane(Vec3::zeros(), Vec3::zeros()).unwrap_err();
        assert!(e.to_string().contains("normal"), "{e}");
        let e = Obstacle::sphere(Vec3::zeros(), -1.0).unwrap_err();
        assert!(e.to_string().contains("radius"), "{e}");
        assert!(Obstacle::sphere(Vec3::zeros(), 0.0).is_err());
        let e = Obstacle::cuboid(Vec3::zeros(), Vec3::new(1.0, 0.0, 1.0), Mat3::identity())
            .unwrap_err();
        assert!(e.to_string().contains("half_extents"), "{e}");
        let e =
            Obstacle::cuboid(Vec3::zeros(), Vec3::repeat(1.0), 2.0 * Mat3::identity()).unwrap_err();
        assert!(e.to_string().contains("rotation"), "{e}");
        let reflection = Mat3::from_diagonal(&Vec3::new(1.0, 1.0, -1.0));
        assert!(Obstacle::cuboid(Vec3::zeros(), Vec3::repeat(1.0), reflection).is_err());
        assert!(Obstacle::plane(Vec3::new(f64::NAN, 0.0, 0.0), Vec3::z()).is_err());
    }

    #[test]
    fn analytic_gaps_and_normals() {
        // Plane z = −0.02 with a non-unit normal.
        let plane = Obstacle::plane(Vec3::new(0.0, 0.0, -0.02), Vec3::new(0.0, 0.0, 2.0)).unwrap();
        let p = plane.closest(&Vec3::new(1.0, 2.0, -0.05));
        assert!((p.gap + 0.03).abs() < 1e-15);
        assert!((p.point - Vec3::new(1.0, 2.0, -0.02)).norm() < 1e-15);
        assert_eq!(p.normal, Vec3::z());
        // Sphere of radius 1 at (1, 0, 0): the point (1, 3, 4) is 5 away from the centre.
        let s = Obstacle::sphere(Vec3::x(), 1.0).unwrap();
        let p = s.closest(&Vec3::new(1.0, 3.0, 4.0));
        assert!((p.gap - 4.0).abs() < 1e-14);
        assert!((p.normal - Vec3::new(0.0, 0.6, 0.8)).norm() < 1e-15);
        assert!((p.point - Vec3::new(1.0, 0.6, 0.8)).norm() < 1e-15);
        // Box rotated by 90° about z: local x is world y. Half extents (2, 1, 1).
        let rot = Mat3::new(0.0, -1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0);
        let b = Obstacle::cuboid(Vec3::zeros(), Vec3::new(2.0, 1.0, 1.0), rot).unwrap();
        // World (0, 3, 0) is local (3, 0, 0): 1 outside the +x face, normal world +y.
        let p = b.closest(&Vec3::new(0.0, 3.0, 0.0));
        assert!((p.gap - 1.0).abs() < 1e-14);
        assert!((p.normal - Vec3::y()).norm() < 1e-14);
        // Corner region: local (3, 2, 1) → distance √(1 + 1 + 0) from the edge.
        let p = b.closest(&(rot * Vec3::new(3.0, 2.0, 1.0)));
        assert!((p.gap - 2f64.sqrt()).abs() < 1e-14);
        // Inside: local (1.9, 0, −0.5): least penetration through the +x face (0.1 deep).
        let p = b.closest(&(rot * Vec3::new(1.9, 0.0, -0.5)));
        assert!((p.gap + 0.1).abs() < 1e-14);
        assert!((p.normal - Vec3::y()).norm() < 1e-14);
        assert!((p.point - rot * Vec3::new(2.0, 0.0, -0.5)).norm() < 1e-14);
    }

    #[test]
    fn frames_are_right_handed_and_deterministic() {
        for n in [
            Vec3::z(),
            -Vec3::z(),
            Vec3::new(1.0, 2.0, -3.0).normalize(),
            Vec3::new(1.0, 1.0, 1.0).normalize(),
        ] {
            let f = contact_frame(&n);
            assert!((f.transpose() * f - Mat3::identity()).amax() < 1e-14);
            assert!((f.determinant() - 1.0).abs() < 1e-14);
            assert_eq!(f.column(2).into_owned(), n);
            assert_eq!(f, contact_frame(&n));
        }
    }

    #[test]
    fn detection_keeps_nodes_within_the_margin_and_builds_rows() {
        let floor = Obstacle::plane(Vec3::zeros(), Vec3::z()).unwrap();
        let ball = Obstacle::sphere(Vec3::new(0.0, 0.0, 1.0), 0.5).unwrap();
        let x = [
            Vec3::new(0.0, 0.0, -0.001), // penetrates the floor
            Vec3::new(1.0, 0.0, 0.0005), // within the margin
            Vec3::new(2.0, 0.0, 0.1),    // far from everything
            Vec3::new(0.0, 0.0, 0.45),   // inside the ball's margin? 0.05 away: no
            Vec3::new(0.0, 0.0, 0.5),    // touches the ball
        ];
        let mut out = Vec::new();
        detect_nodes(&[floor.clone(), ball], &x, &[0, 1, 2, 3, 4], 1e-3, &mut out).unwrap();
        let found: Vec<(usize, usize)> = out.iter().map(|c| (c.node, c.obstacle)).collect();
        assert_eq!(found, vec![(0, 0), (1, 0), (4, 1)]);
        assert!((out[0].gap + 0.001).abs() < 1e-15);
        assert!(out[2].gap.abs() < 1e-15);
        assert_eq!(out[2].frame.column(2).into_owned(), -Vec3::z());
        let mut jac = ContactJacobian::new(x.len());
        push_node_contacts(&out, &ContactPoints::Nodes, &mut jac).unwrap();
        assert_eq!(jac.contact_count(), 3);
        // The normal row of the ball contact reads −v_z of node 4.
        assert_eq!(jac.row(8), &[(4, -Vec3::z())]);
        assert!(detect_nodes(&[floor], &x, &[0], -1.0, &mut out).is_err());
    }
}
