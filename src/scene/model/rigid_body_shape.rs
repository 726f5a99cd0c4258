//! The shape of a `[[rigid_body]]` (box, sphere, capsule, cylinder, or a convex hull read
//! from a mesh file): its convex collider, its volume and its rotational inertia per unit
//! mass for a uniform density, from which `scene::model::rigid` takes the body's mass and
//! inertia when they are not given.

use std::path::Path;

use crate::contact::{Collider, ConvexShape};
use crate::error::{Error, Result};
use crate::math::{Mat3, Vec3};
use crate::mesh::read_surface;

use crate::scene::file::rigid::{RigidBodySection, RigidShapeKind};

/// The collider of a `[[rigid_body]]`, its volume (m³) and its rotational inertia about the
/// centre of mass per unit mass (m², body axes; uniform density).
pub(in crate::scene) fn body_shape(
    b: &RigidBodySection,
    dir: &Path,
) -> Result<(Collider, f64, Mat3)> {
    use std::f64::consts::PI;
    let at = |key: &str| format!("rigid_body.{}.{key}", b.name);
    let named = |e: Error| match e {
        Error::Invalid { what, message } => Error::invalid(at(&what), message),
        other => other,
    };
    let (shape, volume, unit_inertia) = match b.shape {
        RigidShapeKind::Box => {
            let h = Vec3::from(b.half_extents.expect("validated"));
            let (x, y, z) = (h.x * h.x, h.y * h.y, h.z * h.z);
            (
                ConvexShape::Cuboid { half_extents: h },
                8.0 * h.x * h.y * h.z,
                Mat3::from_diagonal(&Vec3::new(y + z, x + z, x + y)) / 3.0,
            )
        }
        RigidShapeKind::Sphere => {
            let r = b.radius.expect("validated");
            (
                ConvexShape::Ball { radius: r },
                4.0 / 3.0 * PI * r.powi(3),
                Mat3::identity() * (0.4 * r * r),
            )
        }
        RigidShapeKind::Cylinder => {
            let (r, l) = (
                b.radius.expect("validated"),
                b.half_length.expect("validated"),
            );
            let height = 2.0 * l;
            let side = (3.0 * r * r + height * height) / 12.0;
            (
                ConvexShape::Cylinder {
                    radius: r,
                    half_length: l,
                },
                PI * r * r * height,
                Mat3::from_diagonal(&Vec3::new(side, side, 0.5 * r * r)),
            )
        }
        RigidShapeKind::Capsule => {
            let (r, l) = (
                b.radius.expect("validated"),
                b.half_length.expect("validated"),
            );
            let height = 2.0 * l;
            let (v_cyl, v_caps) = (PI * r * r * height, 4.0 / 3.0 * PI * r.powi(3));
            let volume = v_cyl + v_caps;
            let (m_cyl, m_caps) = (v_cyl / volume, v_caps / volume);
            // Cylinder plus two half balls whose centres of mass sit 3r/8 beyond the ends.
            let side = m_cyl * (3.0 * r * r + height * height) / 12.0
                + m_caps * (0.4 * r * r + height * height / 4.0 + 3.0 * height * r / 8.0);
            let axial = m_cyl * 0.5 * r * r + m_caps * 0.4 * r * r;
            (
                ConvexShape::Capsule {
                    radius: r,
                    half_length: l,
                },
                volume,
                Mat3::from_diagonal(&Vec3::new(side, side, axial)),
            )
        }
        RigidShapeKind::Mesh => {
            let path = dir.join(b.path.as_deref().expect("validated"));
            let surface = read_surface(&path)?;
            let s = b.scale.unwrap_or(1.0);
            let points: Vec<Vec3> = surface.vertices.iter().map(|p| p * s).collect();
            let hull = Collider::new(ConvexShape::Hull {
                points: points.clone(),
            })
            .map_err(named)?;
            let (volume, com, inertia) = hull.unit_mass_properties().map_err(named)?;
            let extent = points.iter().map(|p| p.norm()).fold(0.0, f64::max);
            if com.norm() > 1e-6 * extent {
                return Err(Error::invalid(
                    at("path"),
                    format!(
                        "the convex hull's centre of mass is at {:?} m in the file's frame: place the mesh with its centre of mass at the origin",
                        [com.x, com.y, com.z]
                    ),
                ));
            }
            (ConvexShape::Hull { points }, volume, inertia)
        }
    };
    Ok((Collider::new(shape).map_err(named)?, volume, unit_inertia))
}
