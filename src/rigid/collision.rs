//! The robot's collision model: one [`Geometry`] per URDF `<collision>` element, each a
//! [`Shape`] attached to a link at an origin. Only parsed and stored here (no collision
//! detection yet); `<visual>` elements are ignored.

use super::spatial::Se3;
use crate::math::Vec3;
use std::path::PathBuf;

/// A collision shape, in its own frame (URDF `<geometry>`). Units: m.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// Box centred on the frame origin with the given full side lengths.
    Box {
        /// Side lengths along x, y, z (m).
        size: Vec3,
    },
    /// Cylinder along the frame's z axis, centred on the origin.
    Cylinder {
        /// Radius (m).
        radius: f64,
        /// Full length (m).
        length: f64,
    },
    /// Capsule along the frame's z axis, centred on the origin: a cylinder of length `length`
    /// capped by two half-spheres of radius `radius` (total length `length + 2 radius`).
    Capsule {
        /// Radius (m).
        radius: f64,
        /// Length of the cylindrical part (m).
        length: f64,
    },
    /// Sphere centred on the origin.
    Sphere {
        /// Radius (m).
        radius: f64,
    },
    /// A triangle mesh (STL or OBJ), taken as its convex hull by collision detection. The file
    /// is not read at load time: `path` is `None` when it cannot be found beside the URDF (the
    /// reference is kept by name, as robot-data packages ship meshes separately).
    Mesh {
        /// The `filename` attribute as written in the URDF (`package://…`, `file://…` or a path).
        uri: String,
        /// The resolved file, if it exists.
        path: Option<PathBuf>,
        /// The mesh format, from the file extension.
        format: MeshFormat,
        /// Scale along x, y, z (dimensionless).
        scale: Vec3,
    },
}

/// The mesh formats read as convex hulls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeshFormat {
    /// STL, ASCII or binary (`.stl`).
    Stl,
    /// Wavefront OBJ (`.obj`).
    Obj,
}

impl MeshFormat {
    /// The format of a mesh file name by its extension (case-insensitive), `None` for any other.
    pub fn from_name(name: &str) -> Option<MeshFormat> {
        let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
        match ext.as_str() {
            "stl" => Some(MeshFormat::Stl),
            "obj" => Some(MeshFormat::Obj),
            _ => None,
        }
    }
}

/// One entry of the collision model: a shape attached to a link.
#[derive(Debug, Clone, PartialEq)]
pub struct Geometry {
    /// Name (`link` or `link_k` for the k-th collision element of a link).
    pub name: String,
    /// The URDF link carrying the shape.
    pub link: String,
    /// The shape's pose in the link frame (the `<collision>` element's `<origin>`; m, rad).
    pub origin: Se3,
    /// The joint whose body carries the link (links behind fixed joints are merged).
    pub parent_joint: usize,
    /// The shape's pose in the parent joint's frame (m, rad).
    pub placement: Se3,
    /// The shape.
    pub shape: Shape,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mesh_formats_by_extension() {
        assert_eq!(MeshFormat::from_name("a/b.STL"), Some(MeshFormat::Stl));
        assert_eq!(MeshFormat::from_name("x.obj"), Some(MeshFormat::Obj));
        assert_eq!(MeshFormat::from_name("x.dae"), None);
        assert_eq!(MeshFormat::from_name("stl"), None);
    }
}
