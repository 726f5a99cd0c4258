//! Convex rigid shapes (a box, a ball, a capsule, a cylinder, or the convex hull of a point
//! cloud) described in their own frame, and their poses in the world. These are the collision
//! shapes of free rigid bodies and of robot links (docs/rigid.md `[[rigid_body]] shape`,
//! URDF `<collision>`); the `contact` layer knows them as shapes at poses, never as bodies or
//! links (`scene` maps rigid poses onto them). parry3d-f64 does the geometry; the conversion
//! to its glam types happens here and in `shape_manifold`, nowhere else.

use nalgebra::{Rotation3, UnitQuaternion};
use parry3d_f64::math::{Pose, Rotation as GlamRotation, Vector as GlamVector};
use parry3d_f64::shape::{Ball, Capsule, ConvexPolyhedron, Cuboid, Cylinder, SharedShape};

use crate::error::{Error, Result};
use crate::math::{Mat3, Vec3};

/// A convex shape in its own frame (m). Capsules and cylinders have their axis along the
/// frame's z axis and are centred on its origin.
#[derive(Debug, Clone, PartialEq)]
pub enum ConvexShape {
    /// A box centred on the origin.
    Cuboid {
        /// Half side lengths along x, y, z (m), positive.
        half_extents: Vec3,
    },
    /// A ball centred on the origin.
    Ball {
        /// Radius (m), positive.
        radius: f64,
    },
    /// The points within `radius` of the segment from (0, 0, −half_length) to (0, 0, half_length).
    Capsule {
        /// Radius (m), positive.
        radius: f64,
        /// Half length of the axis segment (m), positive.
        half_length: f64,
    },
    /// A solid cylinder of axis z from −half_length to half_length.
    Cylinder {
        /// Radius (m), positive.
        radius: f64,
        /// Half length (m), positive.
        half_length: f64,
    },
    /// The convex hull of points (e.g. the vertices of an STL or OBJ mesh), in the frame.
    Hull {
        /// The points (m); at least four not coplanar.
        points: Vec<Vec3>,
    },
}

impl ConvexShape {
    /// A capsule's radius (m) and the ends of its axis segment in the world (m) at `pose`;
    /// `None` for any other shape.
    pub fn capsule_axis(&self, pose: &ShapePose) -> Option<(f64, [Vec3; 2])> {
        let ConvexShape::Capsule {
            radius,
            half_length,
        } = *self
        else {
            return None;
        };
        let axis = pose.rotation.column(2) * half_length;
        Some((radius, [pose.translation - axis, pose.translation + axis]))
    }
}

/// A rigid placement: `x_world = rotation · x_local + translation` (m).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShapePose {
    /// Rotation local → world (orthonormal, determinant +1).
    pub rotation: Mat3,
    /// Position of the local origin in the world (m).
    pub translation: Vec3,
}

impl ShapePose {
    /// The identity placement.
    pub fn identity() -> ShapePose {
        ShapePose {
            rotation: Mat3::identity(),
            translation: Vec3::zeros(),
        }
    }

    /// `self · other`: `other` expressed in `self`'s frame, placed in the world.
    pub fn compose(&self, other: &ShapePose) -> ShapePose {
        ShapePose {
            rotation: self.rotation * other.rotation,
            translation: self.rotation * other.translation + self.translation,
        }
    }

    /// The world position of the local point `p` (m).
    pub fn transform_point(&self, p: &Vec3) -> Vec3 {
        self.rotation * p + self.translation
    }

    /// This pose in parry's glam types.
    pub(super) fn to_parry(self) -> Pose {
        let q =
            UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(self.rotation));
        let r = GlamRotation::from_xyzw(q.i, q.j, q.k, q.w).normalize();
        Pose::from_parts(to_glam(&self.translation), r)
    }
}

pub(super) fn to_glam(v: &Vec3) -> GlamVector {
    (*v).into()
}

pub(super) fn from_glam(v: GlamVector) -> Vec3 {
    v.into()
}

/// A shape ready for collision queries: the description, parry's shape, the placement of
/// parry's shape in the shape frame (parry's cylinders run along y), and the radius of a ball
/// about the frame origin that holds the shape (broad phase).
#[derive(Clone)]
pub struct Collider {
    shape: ConvexShape,
    pub(super) parry: SharedShape,
    pub(super) offset: ShapePose,
    pub(super) radius: f64,
    /// The shape's corners (m, shape frame): a box's eight, a hull's vertices; none for the
    /// curved shapes.
    corners: Vec<Vec3>,
    /// The shape's edges (shape frame): a box's twelve, a hull's; none for the curved shapes.
    edges: Vec<ShapeEdge>,
}

/// An edge of a box or a convex hull, in the shape's frame: its two ends (m) and the outward
/// unit normals of the two faces it joins.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShapeEdge {
    /// The ends (m, shape frame).
    pub ends: [Vec3; 2],
    /// The outward unit normals of its two faces (shape frame).
    pub normals: [Vec3; 2],
}

impl std::fmt::Debug for Collider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Collider")
            .field("shape", &self.shape)
            .field("radius", &self.radius)
            .finish()
    }
}

impl PartialEq for Collider {
    fn eq(&self, other: &Self) -> bool {
        self.shape == other.shape
    }
}

fn positive(what: &str, x: f64) -> Result<()> {
    if x > 0.0 && x.is_finite() {
        Ok(())
    } else {
        Err(Error::invalid(
            what,
            format!("{x} must be positive and finite (m)"),
        ))
    }
}

/// Whether `points` span a volume: the largest triangle from the first point, then the
/// largest tetrahedron on it, relative to the points' extent (a relative 1e-9).
fn spans_volume(points: &[Vec3]) -> bool {
    let p0 = points[0];
    let far = |f: &dyn Fn(&Vec3) -> f64| points.iter().map(f).fold(0.0, f64::max);
    let scale = far(&|p| (p - p0).norm());
    if !(scale > 0.0) {
        return false;
    }
    let p1 = *points
        .iter()
        .max_by(|a, b| (*a - p0).norm().total_cmp(&(*b - p0).norm()))
        .unwrap_or(&p0);
    let e = p1 - p0;
    let p2 = *points
        .iter()
        .max_by(|a, b| {
            e.cross(&(*a - p0))
                .norm()
                .total_cmp(&e.cross(&(*b - p0)).norm())
        })
        .unwrap_or(&p0);
    let n = e.cross(&(p2 - p0));
    far(&|p| n.dot(&(p - p0)).abs()) > 1e-9 * scale.powi(3)
}

impl Collider {
    /// Checks `shape` and prepares it. Errors name the offending dimension: a size that is not
    /// positive and finite, or a hull of fewer than four points or of coplanar points.
    pub fn new(shape: ConvexShape) -> Result<Collider> {
        let (parry, offset, radius) = match &shape {
            ConvexShape::Cuboid { half_extents } => {
                for (k, axis) in ["x", "y", "z"].iter().enumerate() {
                    positive(&format!("half_extents.{axis}"), half_extents[k])?;
                }
                (
                    SharedShape::new(Cuboid::new(to_glam(half_extents))),
                    ShapePose::identity(),
                    half_extents.norm(),
                )
            }
            ConvexShape::Ball { radius } => {
                positive("radius", *radius)?;
                (
                    SharedShape::new(Ball::new(*radius)),
                    ShapePose::identity(),
                    *radius,
                )
            }
            ConvexShape::Capsule {
                radius,
                half_length,
            } => {
                positive("radius", *radius)?;
                positive("half_length", *half_length)?;
                (
                    SharedShape::new(Capsule::new_z(*half_length, *radius)),
                    ShapePose::identity(),
                    half_length + radius,
                )
            }
            ConvexShape::Cylinder {
                radius,
                half_length,
            } => {
                positive("radius", *radius)?;
                positive("half_length", *half_length)?;
                // parry's cylinder runs along y: turn y onto z (a quarter turn about x).
                let offset = ShapePose {
                    rotation: Mat3::new(1.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 1.0, 0.0),
                    translation: Vec3::zeros(),
                };
                (
                    SharedShape::new(Cylinder::new(*half_length, *radius)),
                    offset,
                    (half_length * half_length + radius * radius).sqrt(),
                )
            }
            ConvexShape::Hull { points } => {
                if points.len() < 4 {
                    return Err(Error::invalid(
                        "convex hull",
                        format!("needs at least 4 points, got {}", points.len()),
                    ));
                }
                if points.iter().any(|p| p.iter().any(|x| !x.is_finite())) {
                    return Err(Error::invalid("convex hull", "a point is not finite"));
                }
                if !spans_volume(points) {
                    return Err(Error::invalid(
                        "convex hull",
                        "its points are coplanar or degenerate (no volume)",
                    ));
                }
                let glam: Vec<GlamVector> = points.iter().map(to_glam).collect();
                let hull = ConvexPolyhedron::from_convex_hull(&glam).ok_or_else(|| {
                    Error::invalid(
                        "convex hull",
                        "its points are coplanar or degenerate (no volume)",
                    )
                })?;
                let radius = points.iter().map(|p| p.norm()).fold(0.0, f64::max);
                (SharedShape::new(hull), ShapePose::identity(), radius)
            }
        };
        let corners = match &shape {
            ConvexShape::Cuboid { half_extents: e } => (0..8)
                .map(|k| {
                    let s = |bit: usize| if k & bit == 0 { -1.0 } else { 1.0 };
                    Vec3::new(s(1) * e.x, s(2) * e.y, s(4) * e.z)
                })
                .collect(),
            ConvexShape::Hull { .. } => parry
                .as_convex_polyhedron()
                .map(|h| h.points().iter().map(|p| from_glam(*p)).collect())
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let edges = match &shape {
            ConvexShape::Cuboid { half_extents: e } => {
                // Along axis k, at the signs (±, ±) of the two other axes i, j.
                let mut edges = Vec::with_capacity(12);
                for k in 0..3 {
                    let (i, j) = ((k + 1) % 3, (k + 2) % 3);
                    for (si, sj) in [(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)] {
                        let mut mid = Vec3::zeros();
                        mid[i] = si * e[i];
                        mid[j] = sj * e[j];
                        let mut along = Vec3::zeros();
                        along[k] = e[k];
                        let (mut ni, mut nj) = (Vec3::zeros(), Vec3::zeros());
                        ni[i] = si;
                        nj[j] = sj;
                        edges.push(ShapeEdge {
                            ends: [mid - along, mid + along],
                            normals: [ni, nj],
                        });
                    }
                }
                edges
            }
            ConvexShape::Hull { .. } => parry
                .as_convex_polyhedron()
                .map(|h| {
                    // parry keeps the edges inside merged (coplanar) faces, with one face twice.
                    h.edges()
                        .iter()
                        .filter(|e| e.faces[0] != e.faces[1])
                        .map(|e| ShapeEdge {
                            ends: e.vertices.map(|v| from_glam(h.points()[v as usize])),
                            normals: e.faces.map(|f| from_glam(h.faces()[f as usize].normal)),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        Ok(Collider {
            shape,
            parry,
            offset,
            radius,
            corners,
            edges,
        })
    }

    /// The shape as described.
    pub fn shape(&self) -> &ConvexShape {
        &self.shape
    }

    /// The shape's corners in its frame (m): a box's eight, a convex hull's vertices; empty
    /// for a ball, a capsule and a cylinder (which touch with their curved faces).
    pub fn corners(&self) -> &[Vec3] {
        &self.corners
    }

    /// The shape's edges in its frame ([`ShapeEdge`]): a box's twelve, a convex hull's (those
    /// between two faces that are not coplanar); empty for a ball, a capsule and a cylinder.
    pub fn edges(&self) -> &[ShapeEdge] {
        &self.edges
    }

    /// Radius (m) of a ball about the shape frame's origin that contains the shape.
    pub fn bounding_radius(&self) -> f64 {
        self.radius
    }

    /// Volume (m³), centre of mass (m, shape frame) and rotational inertia about the centre of
    /// mass per unit mass (m², shape axes) of the solid shape at uniform density (parry's
    /// mass properties at density 1: mass = volume).
    pub fn unit_mass_properties(&self) -> Result<(f64, Vec3, Mat3)> {
        let props = self.parry.mass_properties(1.0);
        let volume = props.mass();
        if !(volume > 0.0) || !volume.is_finite() {
            return Err(Error::invalid("shape", "has no volume"));
        }
        let com = self.offset.transform_point(&from_glam(props.local_com));
        let m = props.reconstruct_inertia_matrix();
        let inertia = Mat3::from_fn(|r, c| m.col(c)[r]) / volume;
        let r = self.offset.rotation;
        Ok((volume, com, r * inertia * r.transpose()))
    }

    /// A triangulation of the shape's surface in the shape frame (m): vertices and triangles
    /// (for output; curved shapes with 16 segments around).
    pub fn surface(&self) -> (Vec<Vec3>, Vec<[usize; 3]>) {
        let (vertices, triangles) = match &self.shape {
            ConvexShape::Cuboid { half_extents } => Cuboid::new(to_glam(half_extents)).to_trimesh(),
            ConvexShape::Ball { radius } => Ball::new(*radius).to_trimesh(16, 8),
            ConvexShape::Capsule {
                radius,
                half_length,
            } => Capsule::new_z(*half_length, *radius).to_trimesh(16, 8),
            ConvexShape::Cylinder {
                radius,
                half_length,
            } => Cylinder::new(*half_length, *radius).to_trimesh(16),
            ConvexShape::Hull { .. } => match self.parry.as_convex_polyhedron() {
                Some(hull) => hull.to_trimesh(),
                None => (Vec::new(), Vec::new()),
            },
        };
        (
            vertices
                .into_iter()
                .map(|v| self.offset.transform_point(&from_glam(v)))
                .collect(),
            triangles
                .into_iter()
                .map(|t| [t[0] as usize, t[1] as usize, t[2] as usize])
                .collect(),
        )
    }

    /// parry's shape and its pose in the world when the shape frame is at `pose`.
    pub(super) fn parry(&self, pose: &ShapePose) -> (&SharedShape, Pose) {
        (&self.parry, pose.compose(&self.offset).to_parry())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_checked_by_name() {
        let e = Collider::new(ConvexShape::Cuboid {
            half_extents: Vec3::new(0.1, -0.1, 0.1),
        })
        .unwrap_err();
        assert!(e.to_string().contains("half_extents.y"), "{e}");
        let e = Collider::new(ConvexShape::Hull {
            points: vec![Vec3::zeros(), Vec3::x(), Vec3::y(), Vec3::x() + Vec3::y()],
        })
        .unwrap_err();
        assert!(e.to_string().contains("coplanar"), "{e}");
    }

    #[test]
    fn a_box_and_its_hull_have_the_same_twelve_edges() {
        let e = Vec3::new(0.3, 0.2, 0.1);
        let cuboid = Collider::new(ConvexShape::Cuboid { half_extents: e }).unwrap();
        let hull = Collider::new(ConvexShape::Hull {
            points: cuboid.corners().to_vec(),
        })
        .unwrap();
        for c in [&cuboid, &hull] {
            let edges = c.edges();
            assert_eq!(edges.len(), 12);
            for edge in edges {
                let [a, b] = edge.ends;
                // An edge of the box: its ends differ along one axis by the full side, and lie
                // on the two faces whose outward normals it carries.
                let d = b - a;
                let axis = (0..3).find(|&k| d[k].abs() > 1e-12).unwrap();
                assert!((d[axis].abs() - 2.0 * e[axis]).abs() < 1e-12);
                assert!((d.norm() - 2.0 * e[axis]).abs() < 1e-12);
                for n in edge.normals {
                    let k = (0..3).find(|&k| n[k].abs() > 0.5).unwrap();
                    assert!((n.norm() - 1.0).abs() < 1e-12 && k != axis);
                    assert!((n.dot(&a) - e[k]).abs() < 1e-12 && (n.dot(&b) - e[k]).abs() < 1e-12);
                }
                assert!(edge.normals[0].dot(&edge.normals[1]).abs() < 1e-12);
            }
        }
        let ball = Collider::new(ConvexShape::Ball { radius: 0.1 }).unwrap();
        assert!(ball.edges().is_empty());
    }

    #[test]
    fn poses_compose_as_rigid_maps() {
        let a = ShapePose {
            rotation: *Rotation3::from_axis_angle(&Vec3::z_axis(), 0.3).matrix(),
            translation: Vec3::new(1.0, 2.0, 3.0),
        };
        let b = ShapePose {
            rotation: *Rotation3::from_axis_angle(&Vec3::x_axis(), -0.7).matrix(),
            translation: Vec3::new(-0.5, 0.1, 0.2),
        };
        let p = Vec3::new(0.3, -0.2, 0.9);
        let direct = a.transform_point(&b.transform_point(&p));
        assert!((a.compose(&b).transform_point(&p) - direct).norm() < 1e-15);
    }
}
