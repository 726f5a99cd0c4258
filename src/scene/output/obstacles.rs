//! The scene's obstacles as `final.json` records them (docs/outputs.md, key `obstacles`), so
//! that a run's output folder describes everything it touched: the viewer draws them from
//! there. World frame, SI units; a mesh obstacle is written as its placed surface.

use serde::{Deserialize, Serialize};

use crate::contact::Obstacle;

use crate::scene::model::contact::SceneContact;

/// One static obstacle of the scene, in scene-file order, placed in the world.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ObstacleOutput {
    /// The half-space below the plane through `point` (m) with unit outward `normal`.
    Plane {
        /// A point of the plane (m).
        point: [f64; 3],
        /// Unit outward normal.
        normal: [f64; 3],
        /// Coulomb coefficient μ.
        friction: f64,
    },
    /// A solid box.
    Box {
        /// Centre (m).
        center: [f64; 3],
        /// Half extents along the box axes (m).
        half_extents: [f64; 3],
        /// Rotation box → world, as three rows (orthonormal, determinant +1).
        rotation: [[f64; 3]; 3],
        /// Coulomb coefficient μ.
        friction: f64,
    },
    /// A solid ball.
    Sphere {
        /// Centre (m).
        center: [f64; 3],
        /// Radius (m).
        radius: f64,
        /// Coulomb coefficient μ.
        friction: f64,
    },
    /// A solid capsule: the segment `start`–`end` (m) swept by a ball of `radius` (m).
    Capsule {
        /// First end of the axis (m).
        start: [f64; 3],
        /// Second end of the axis (m).
        end: [f64; 3],
        /// Radius (m).
        radius: f64,
        /// Coulomb coefficient μ.
        friction: f64,
    },
    /// A triangle mesh, its file's scale, rotation and translation applied.
    Mesh {
        /// Vertex positions (m, world frame).
        vertices: Vec<[f64; 3]>,
        /// Triangles, as indices into `vertices`.
        triangles: Vec<[usize; 3]>,
        /// Coulomb coefficient μ.
        friction: f64,
    },
}

fn a3(v: &crate::math::Vec3) -> [f64; 3] {
    [v.x, v.y, v.z]
}

/// The obstacles of `contact`, in scene order.
pub fn obstacle_outputs(contact: &SceneContact) -> Vec<ObstacleOutput> {
    contact
        .obstacles
        .iter()
        .zip(&contact.friction)
        .map(|(o, &friction)| match o {
            Obstacle::Plane { point, normal } => ObstacleOutput::Plane {
                point: a3(point),
                normal: a3(normal),
                friction,
            },
            Obstacle::Sphere { center, radius } => ObstacleOutput::Sphere {
                center: a3(center),
                radius: *radius,
                friction,
            },
            Obstacle::Cuboid {
                center,
                half_extents,
                rotation,
            } => ObstacleOutput::Box {
                center: a3(center),
                half_extents: a3(half_extents),
                rotation: [0, 1, 2].map(|r| [0, 1, 2].map(|c| rotation[(r, c)])),
                friction,
            },
            Obstacle::Capsule(c) => ObstacleOutput::Capsule {
                start: a3(&c.a),
                end: a3(&c.b),
                radius: c.radius,
                friction,
            },
            Obstacle::Mesh(m) => ObstacleOutput::Mesh {
                vertices: m.surface().vertices.iter().map(a3).collect(),
                triangles: m.surface().triangles.clone(),
                friction,
            },
        })
        .collect()
}
