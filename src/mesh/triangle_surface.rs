//! Triangulated surfaces (rigid obstacles read from `.stl` / `.obj` files): vertices, triangles,
//! the checks every surface passes (not empty, indices in range, finite, no zero-area
//! triangle), whether the surface is closed, and the similarity transform a scene applies.

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::math::{Mat3, Vec3};

/// A triangle surface: shared vertices (file units until transformed) and triangles as
/// vertex-index triples, normals by the right-hand rule.
#[derive(Debug, Clone, PartialEq)]
pub struct TriangleSurface {
    /// Vertex positions.
    pub vertices: Vec<Vec3>,
    /// Triangles (indices into `vertices`).
    pub triangles: Vec<[usize; 3]>,
}

/// How the triangles of a [`TriangleSurface`] fit together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closure {
    /// Every edge is shared by exactly two triangles that run it in opposite directions: the
    /// surface bounds a solid and is consistently oriented.
    Closed,
    /// Some edge belongs to one triangle only (a sheet, a terrain).
    Open,
}

impl TriangleSurface {
    /// A surface of `vertices` and `triangles`, checked: at least one triangle, indices in
    /// range, finite coordinates, every triangle of non-zero area (relative 1e-14 of the
    /// bounding box's squared diagonal). `name` (the file) starts every error message.
    pub fn new(name: &str, vertices: Vec<Vec3>, triangles: Vec<[usize; 3]>) -> Result<Self> {
        if triangles.is_empty() {
            return Err(Error::invalid(name, "empty mesh: no triangle"));
        }
        if let Some(i) = vertices
            .iter()
            .position(|v| v.iter().any(|x| !x.is_finite()))
        {
            return Err(Error::invalid(name, format!("vertex {i} is not finite")));
        }
        let mut lo = Vec3::repeat(f64::INFINITY);
        let mut hi = Vec3::repeat(f64::NEG_INFINITY);
        for v in &vertices {
            lo = lo.inf(v);
            hi = hi.sup(v);
        }
        let diag2 = (hi - lo).norm_squared();
        for (k, t) in triangles.iter().enumerate() {
            if let Some(i) = t.iter().find(|&&i| i >= vertices.len()) {
                return Err(Error::invalid(
                    name,
                    format!(
                        "triangle {k} uses vertex {i}, but there are {} vertices",
                        vertices.len()
                    ),
                ));
            }
            let [a, b, c] = t.map(|i| vertices[i]);
            let area2 = (b - a).cross(&(c - a)).norm();
            if !(area2 > 1e-14 * diag2) {
                return Err(Error::invalid(
                    name,
                    format!("triangle {k} has zero area (degenerate)"),
                ));
            }
        }
        Ok(TriangleSurface {
            vertices,
            triangles,
        })
    }

    /// Whether the surface is closed and consistently oriented; `name` labels the error for
    /// a surface whose edges are each shared by two triangles but not in opposite
    /// directions (inconsistent orientation), or shared by more than two triangles.
    pub fn closure(&self, name: &str) -> Result<Closure> {
        let mut directed: HashMap<(usize, usize), usize> = HashMap::new();
        for (k, t) in self.triangles.iter().enumerate() {
            for e in 0..3 {
                let (a, b) = (t[e], t[(e + 1) % 3]);
                if let Some(other) = directed.insert((a, b), k) {
                    return Err(Error::invalid(
                        name,
                        format!(
                            "triangles {other} and {k} run the edge ({a}, {b}) in the same direction: the surface is not consistently oriented or not manifold"
                        ),
                    ));
                }
            }
        }
        let closed = directed
            .keys()
            .all(|&(a, b)| directed.contains_key(&(b, a)));
        Ok(if closed {
            Closure::Closed
        } else {
            Closure::Open
        })
    }

    /// The volume enclosed by a closed surface (m³ in metres), positive when its normals point
    /// outward (divergence theorem: Σ a·(b × c) / 6).
    pub fn signed_volume(&self) -> f64 {
        self.triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| self.vertices[i]);
                a.dot(&b.cross(&c)) / 6.0
            })
            .sum()
    }

    /// Reverses every triangle (flips all normals).
    pub fn flip(&mut self) {
        for t in &mut self.triangles {
            t.swap(1, 2);
        }
    }

    /// The surface moved by x ↦ R (s x) + t: `scale` s > 0, rotation R (orthonormal, det +1),
    /// translation t.
    pub fn transformed(&self, scale: f64, rotation: &Mat3, translation: &Vec3) -> TriangleSurface {
        TriangleSurface {
            vertices: self
                .vertices
                .iter()
                .map(|v| rotation * (scale * v) + translation)
                .collect(),
            triangles: self.triangles.clone(),
        }
    }
}

/// Indexes a triangle soup (three corners per triangle, as STL stores them): corners with
/// bit-identical coordinates become one vertex, in order of first appearance.
pub fn weld_triangle_soup(corners: &[[Vec3; 3]]) -> (Vec<Vec3>, Vec<[usize; 3]>) {
    let mut index: HashMap<[u64; 3], usize> = HashMap::with_capacity(corners.len() * 3 / 2);
    let mut vertices = Vec::new();
    let triangles = corners
        .iter()
        .map(|tri| {
            tri.map(|p| {
                // +0.0 and −0.0 are one point.
                let key = [p.x, p.y, p.z].map(|x| (x + 0.0).to_bits());
                *index.entry(key).or_insert_with(|| {
                    vertices.push(p);
                    vertices.len() - 1
                })
            })
        })
        .collect();
    (vertices, triangles)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tetra() -> TriangleSurface {
        let v = vec![Vec3::zeros(), Vec3::x(), Vec3::y(), Vec3::z()];
        let t = vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]];
        TriangleSurface::new("t", v, t).unwrap()
    }

    #[test]
    fn closed_tetrahedron_has_its_volume() {
        let s = tetra();
        assert_eq!(s.closure("t").unwrap(), Closure::Closed);
        assert!((s.signed_volume() - 1.0 / 6.0).abs() < 1e-15);
        let mut f = s.clone();
        f.flip();
        assert!((f.signed_volume() + 1.0 / 6.0).abs() < 1e-15);
        let mut open = s.clone();
        open.triangles.pop();
        assert_eq!(open.closure("t").unwrap(), Closure::Open);
        let mut bad = s;
        bad.triangles[3] = [1, 3, 2];
        assert!(bad.closure("t").is_err());
    }

    #[test]
    fn bad_surfaces_are_clear_errors() {
        let e = TriangleSurface::new("a.stl", vec![], vec![]).unwrap_err();
        assert!(
            e.to_string().contains("a.stl") && e.to_string().contains("empty"),
            "{e}"
        );
        let e = TriangleSurface::new("a.stl", vec![Vec3::zeros()], vec![[0, 0, 1]]).unwrap_err();
        assert!(e.to_string().contains("vertex 1"), "{e}");
        let v = vec![Vec3::zeros(), Vec3::x(), 2.0 * Vec3::x()];
        let e = TriangleSurface::new("a.stl", v, vec![[0, 1, 2]]).unwrap_err();
        assert!(e.to_string().contains("triangle 0 has zero area"), "{e}");
    }

    #[test]
    fn welding_merges_identical_corners() {
        let (v, t) = weld_triangle_soup(&[
            [Vec3::zeros(), Vec3::x(), Vec3::y()],
            [Vec3::x(), Vec3::new(-0.0, 1.0, 0.0), Vec3::z()],
        ]);
        assert_eq!(v.len(), 4);
        assert_eq!(t, vec![[0, 1, 2], [1, 2, 3]]);
    }
}
