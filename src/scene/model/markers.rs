//! The scene's markers (`[[soft_body.marker]]`, docs/scene-file.md): points an experiment
//! tracks, each a node of its body or a point carried by the body's tetrahedra (barycentric
//! inside the mesh, its nearest tetrahedron's affine motion outside, with no distance limit:
//! `actuator::EmbeddedPoint::locate_nearest`), and their positions in a state.

use crate::actuator::EmbeddedPoint;
use crate::error::{Error, Result};
use crate::math::Vec3;
use crate::mesh::Mesh;

use super::State;
use crate::scene::file::marker::MarkerSection;

/// Where a marker sits on its body.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MarkerPoint {
    /// A mesh node (0-based, mesh-file order): the marker is that node, exactly.
    Node(usize),
    /// A point Σ wᵢ x_{nᵢ} of one tetrahedron's nodes (weights extrapolated outside the mesh).
    Embedded(EmbeddedPoint),
}

/// One marker: its name, its body and where it sits.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    /// Its name (unique over the scene).
    pub name: String,
    /// The index of its soft body (scene order).
    pub body: usize,
    /// Where it sits on the body.
    pub point: MarkerPoint,
}

impl Marker {
    /// The marker's position (m, scene frame) for its body's node positions `x` (m).
    #[inline]
    pub fn position_of(&self, x: &[Vec3]) -> Vec3 {
        match self.point {
            MarkerPoint::Node(n) => x[n],
            MarkerPoint::Embedded(e) => e.position(x),
        }
    }

    /// The marker's position (m, scene frame) in `state`.
    pub fn position(&self, state: &State) -> Vec3 {
        self.position_of(&state.bodies[self.body].positions)
    }

    /// Adds a cotangent `g` of the marker's position onto the cotangents `x_bar` of its
    /// body's node positions: the position p = Σᵢ wᵢ x_{nᵢ} is linear in them (w = 1 on one
    /// node for a node marker), so ∂L/∂x_{nᵢ} += wᵢ ∂L/∂p, the transpose of
    /// [`Marker::position_of`]. `g` per metre of the marker (e.g. 1/m for a loss without
    /// unit), `x_bar` one row per node of the body.
    #[inline]
    pub fn spread(&self, g: Vec3, x_bar: &mut [Vec3]) {
        match self.point {
            MarkerPoint::Node(n) => x_bar[n] += g,
            MarkerPoint::Embedded(e) => e.spread(g, x_bar),
        }
    }
}

/// The markers of a scene, body by body in scene order and in file order within a body
/// (the scene's marker order: `Scene::markers`, the rows of a marker track file at one time,
/// Python's `Scene.marker_names`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Markers {
    /// The markers, in scene order.
    pub list: Vec<Marker>,
}

impl Markers {
    /// Adds the markers of `section` (its `[[soft_body.marker]]` list) for the body at index
    /// `body` whose mesh (m, placed: after `scale`, `rotation` and `translation`) is `mesh`.
    /// Errors name the key: a node out of range (with the mesh's node count), a position that
    /// cannot be embedded (a mesh without tetrahedra). A position outside the mesh is no
    /// error and no warning, however far.
    pub fn add_body(
        &mut self,
        body_name: &str,
        body: usize,
        markers: &[MarkerSection],
        mesh: &Mesh,
    ) -> Result<()> {
        for m in markers {
            let key = m.key(body_name);
            let point = match (m.node, m.position) {
                (Some(n), None) => {
                    if n >= mesh.node_count() {
                        return Err(Error::invalid(
                            format!("{key}.node"),
                            format!(
                                "node {n} is out of range: the mesh has {} nodes (0-based, file order)",
                                mesh.node_count()
                            ),
                        ));
                    }
                    MarkerPoint::Node(n)
                }
                (None, Some(p)) => {
                    let (e, _) = EmbeddedPoint::locate_nearest(
                        mesh,
                        Vec3::from(p),
                        &format!("{key}.position"),
                    )?;
                    MarkerPoint::Embedded(e)
                }
                _ => {
                    return Err(Error::invalid(
                        key,
                        "give exactly one of `node` (a mesh node, 0-based) and `position` (m)",
                    ));
                }
            };
            self.list.push(Marker {
                name: m.name.clone(),
                body,
                point,
            });
        }
        Ok(())
    }

    /// Number of markers.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether the scene has no marker.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The markers' names, in scene order.
    pub fn names(&self) -> Vec<&str> {
        self.list.iter().map(|m| m.name.as_str()).collect()
    }

    /// The index of the marker named `name`, if any.
    pub fn index(&self, name: &str) -> Option<usize> {
        self.list.iter().position(|m| m.name == name)
    }

    /// Every marker's position (m, scene frame) in `state`, in scene order.
    pub fn positions(&self, state: &State) -> Vec<Vec3> {
        self.list.iter().map(|m| m.position(state)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nodes at pseudo-random positions (no structure the test could lean on).
    fn nodes(n: usize, seed: f64) -> Vec<Vec3> {
        (0..n)
            .map(|i| {
                let t = seed + i as f64;
                Vec3::new((1.3 * t).sin(), (2.1 * t).cos(), (0.7 * t + 0.4).sin())
            })
            .collect()
    }

    /// The position is linear in the node positions, and `spread` is its transpose:
    /// g · p(x) = Σₙ spread(g)ₙ · xₙ for any x and g (an identity that fails for a wrong
    /// node, weight or sign).
    #[test]
    fn spreading_a_cotangent_is_the_transpose_of_the_position() {
        let embedded = EmbeddedPoint {
            nodes: [4, 1, 6, 2],
            // Extrapolated weights (one negative), summing to 1, as outside the mesh.
            weights: [0.5, -0.25, 0.45, 0.3],
        };
        for point in [MarkerPoint::Node(3), MarkerPoint::Embedded(embedded)] {
            let marker = Marker {
                name: "m".into(),
                body: 0,
                point,
            };
            let g = Vec3::new(0.3, -1.7, 0.9);
            let mut x_bar = vec![Vec3::zeros(); 8];
            marker.spread(g, &mut x_bar);
            for seed in [0.0, 5.5] {
                let x = nodes(8, seed);
                let lhs = g.dot(&marker.position_of(&x));
                let rhs: f64 = x_bar.iter().zip(&x).map(|(a, b)| a.dot(b)).sum();
                assert!((lhs - rhs).abs() < 1e-14, "{point:?}: {lhs} vs {rhs}");
            }
            // Added onto what was there: twice is double.
            let once = x_bar.clone();
            marker.spread(g, &mut x_bar);
            for (a, b) in x_bar.iter().zip(&once) {
                assert!((a - 2.0 * b).norm() < 1e-15);
            }
        }
    }
}
