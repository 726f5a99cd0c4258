//! Triangle-mesh obstacles (parry3d's `TriMesh`: a BVH over the triangles, built once, and
//! angle-weighted pseudo-normals for the inside test): signed gap, closest point, outward
//! normal, the closest feature, and their closed-form derivatives with respect to the query
//! point. parry speaks glam; the conversion happens here and nowhere else.
//!
//! Sign: a **closed** surface (every edge shared by two triangles in opposite directions) bounds
//! a solid, and is reoriented outward if its volume is negative: Φ < 0 inside. An **open**
//! surface is one-sided: the side its normals (right-hand rule) face is outside, and a point
//! behind it counts as penetrating (for terrains and walls; keep bodies on the front side).
//!
//! With c the closest surface point and Φ the signed gap, the outward normal is
//! n = (p − c)/Φ, and ∇Φ = n. The normal's Jacobian depends on the closest feature: against a
//! face n is the face normal, ∂n/∂p = 0; against an edge of unit direction e,
//! ∂n/∂p = (I − n nᵀ − e eᵀ)/Φ; against a vertex, ∂n/∂p = (I − n nᵀ)/Φ.

use parry3d_f64::math::Vector as GlamVector;
use parry3d_f64::query::PointQueryWithLocation;
use parry3d_f64::shape::{TriMesh, TriMeshFlags, TrianglePointLocation};

use super::detection::Proximity;
use crate::error::{Error, Result};
use crate::math::{Mat3, Vec3};
use crate::mesh::{Closure, TriangleSurface};

fn to_glam(v: &Vec3) -> GlamVector {
    (*v).into()
}

fn from_glam(v: GlamVector) -> Vec3 {
    v.into()
}

/// A static triangle-mesh obstacle in world coordinates (m).
#[derive(Clone)]
pub struct MeshObstacle {
    surface: TriangleSurface,
    closed: bool,
    normals: Vec<Vec3>,
    trimesh: TriMesh,
    lo: Vec3,
    hi: Vec3,
}

impl std::fmt::Debug for MeshObstacle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MeshObstacle")
            .field("vertices", &self.surface.vertices.len())
            .field("triangles", &self.surface.triangles.len())
            .field("closed", &self.closed)
            .finish()
    }
}

impl PartialEq for MeshObstacle {
    fn eq(&self, other: &Self) -> bool {
        self.surface == other.surface
    }
}

/// The feature of a mesh obstacle closest to a query point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MeshFeature {
    /// The interior of a triangle.
    Face {
        /// Triangle index.
        triangle: usize,
    },
    /// An edge, between two vertices.
    Edge {
        /// Vertex indices of its ends.
        vertices: [usize; 2],
    },
    /// A vertex.
    Vertex {
        /// Vertex index.
        vertex: usize,
    },
}

/// A point query's answer: the proximity and the closest feature.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeshPoint {
    /// Signed gap (m), closest point (m) and outward normal.
    pub proximity: Proximity,
    /// The closest feature.
    pub feature: MeshFeature,
}

impl MeshObstacle {
    /// The obstacle bounded by `surface` (world coordinates, m; already checked by
    /// [`TriangleSurface::new`]). `name` labels errors: a surface that is not consistently
    /// oriented or not manifold.
    pub fn new(name: &str, mut surface: TriangleSurface) -> Result<MeshObstacle> {
        let closed = surface.closure(name)? == Closure::Closed;
        if closed && surface.signed_volume() < 0.0 {
            surface.flip();
        }
        let vertices: Vec<GlamVector> = surface.vertices.iter().map(to_glam).collect();
        let indices: Vec<[u32; 3]> = surface
            .triangles
            .iter()
            .map(|t| {
                t.map(|i| u32::try_from(i).map_err(|_| Error::invalid(name, "too many vertices")))
            })
            .map(|[a, b, c]| Ok([a?, b?, c?]))
            .collect::<Result<_>>()?;
        let trimesh = TriMesh::with_flags(vertices, indices, TriMeshFlags::ORIENTED)
            .map_err(|e| Error::invalid(name, format!("not a usable triangle mesh: {e:?}")))?;
        let normals = surface
            .triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| surface.vertices[i]);
                (b - a).cross(&(c - a)).normalize()
            })
            .collect();
        let mut lo = Vec3::repeat(f64::INFINITY);
        let mut hi = Vec3::repeat(f64::NEG_INFINITY);
        for v in &surface.vertices {
            lo = lo.inf(v);
            hi = hi.sup(v);
        }
        Ok(MeshObstacle {
            surface,
            closed,
            normals,
            trimesh,
            lo,
            hi,
        })
    }

    /// parry's triangle mesh of the surface (for contact manifolds with convex shapes).
    pub(super) fn trimesh(&self) -> &TriMesh {
        &self.trimesh
    }

    /// Whether the surface is closed (a solid with inside and outside).
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// The surface (outward-oriented if closed).
    pub fn surface(&self) -> &TriangleSurface {
        &self.surface
    }

    /// Axis-aligned bounding box `(min, max)` of the vertices (m).
    pub fn aabb(&self) -> (Vec3, Vec3) {
        (self.lo, self.hi)
    }

    /// The closest surface point of `p` (m), its feature, the signed gap and the outward
    /// normal (module doc). A point on an edge or vertex gets the normal of the triangle
    /// parry reports.
    pub fn locate(&self, p: &Vec3) -> MeshPoint {
        let (proj, (tri, location)) = self
            .trimesh
            .project_local_point_and_get_location(to_glam(p), false);
        let tri = tri as usize;
        let t = self.surface.triangles[tri];
        let c = from_glam(proj.point);
        let r = p - c;
        let feature = match location {
            TrianglePointLocation::OnVertex(i) => MeshFeature::Vertex {
                vertex: t[i as usize],
            },
            TrianglePointLocation::OnEdge(..) => {
                // The two corners with the largest barycentric weights (robust to parry's
                // edge numbering).
                let w = location
                    .barycentric_coordinates()
                    .unwrap_or([1.0, 1.0, 0.0]);
                let drop = (0..3).min_by(|&a, &b| w[a].total_cmp(&w[b])).unwrap_or(2);
                let ends: Vec<usize> = (0..3).filter(|&k| k != drop).map(|k| t[k]).collect();
                MeshFeature::Edge {
                    vertices: [ends[0], ends[1]],
                }
            }
            TrianglePointLocation::OnFace(..) | TrianglePointLocation::OnSolid => {
                MeshFeature::Face { triangle: tri }
            }
        };
        let face_normal = self.normals[tri];
        let (gap, normal) = match feature {
            MeshFeature::Face { .. } => (face_normal.dot(&r), face_normal),
            _ => {
                let d = r.norm();
                let gap = if proj.is_inside { -d } else { d };
                if d > 0.0 {
                    (gap, r / gap)
                } else {
                    (0.0, face_normal)
                }
            }
        };
        MeshPoint {
            proximity: Proximity {
                gap,
                point: c,
                normal,
            },
            feature,
        }
    }

    /// Signed gap, closest point and outward normal of `p` (m).
    pub fn closest(&self, p: &Vec3) -> Proximity {
        self.locate(p).proximity
    }

    /// ∂Φ/∂p: the outward normal n (unitless).
    pub fn gap_gradient(&self, p: &Vec3) -> Vec3 {
        self.closest(p).normal
    }

    /// ∂n/∂p (1/m), module doc. Zero at Φ = 0 on an edge or vertex, where n is not
    /// differentiable.
    pub fn normal_jacobian(&self, p: &Vec3) -> Mat3 {
        let MeshPoint { proximity, feature } = self.locate(p);
        let n = proximity.normal;
        if proximity.gap == 0.0 {
            return Mat3::zeros();
        }
        let projector = Mat3::identity() - n * n.transpose();
        match feature {
            MeshFeature::Face { .. } => Mat3::zeros(),
            MeshFeature::Edge { vertices: [a, b] } => {
                let e = (self.surface.vertices[b] - self.surface.vertices[a]).normalize();
                (projector - e * e.transpose()) / proximity.gap
            }
            MeshFeature::Vertex { .. } => projector / proximity.gap,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::Obstacle;
    use crate::math::{DMat, DVec, central_difference_jacobian, relative_error};

    /// The closed surface of the box [−e, e] (12 triangles, outward).
    pub(crate) fn box_surface(e: Vec3) -> TriangleSurface {
        let v: Vec<Vec3> = (0..8)
            .map(|i| {
                Vec3::new(
                    if i & 1 == 1 { e.x } else { -e.x },
                    if i & 2 == 2 { e.y } else { -e.y },
                    if i & 4 == 4 { e.z } else { -e.z },
                )
            })
            .collect();
        let quads = [
            [0, 2, 3, 1], // −z
            [4, 5, 7, 6], // +z
            [0, 1, 5, 4], // −y
            [2, 6, 7, 3], // +y
            [0, 4, 6, 2], // −x
            [1, 3, 7, 5], // +x
        ];
        let mut t = Vec::new();
        for [a, b, c, d] in quads {
            t.push([a, b, c]);
            t.push([a, c, d]);
        }
        TriangleSurface::new("box", v, t).unwrap()
    }

    /// A UV sphere of radius r with `m` rings and 2m segments, outward.
    fn sphere_surface(r: f64, m: usize) -> TriangleSurface {
        let mut v = vec![Vec3::new(0.0, 0.0, r)];
        for i in 1..m {
            let th = std::f64::consts::PI * i as f64 / m as f64;
            for j in 0..2 * m {
                let ph = std::f64::consts::PI * j as f64 / m as f64;
                v.push(r * Vec3::new(th.sin() * ph.cos(), th.sin() * ph.sin(), th.cos()));
            }
        }
        v.push(Vec3::new(0.0, 0.0, -r));
        let s = 2 * m;
        let ring = |i: usize, j: usize| 1 + (i - 1) * s + j % s;
        let south = v.len() - 1;
        let mut t = Vec::new();
        for j in 0..s {
            t.push([0, ring(1, j), ring(1, j + 1)]);
            t.push([south, ring(m - 1, j + 1), ring(m - 1, j)]);
        }
        for i in 1..m - 1 {
            for j in 0..s {
                t.push([ring(i, j), ring(i + 1, j), ring(i + 1, j + 1)]);
                t.push([ring(i, j), ring(i + 1, j + 1), ring(i, j + 1)]);
            }
        }
        TriangleSurface::new("sphere", v, t).unwrap()
    }

    fn rotation() -> Mat3 {
        *nalgebra::Rotation3::new(Vec3::new(0.3, -0.2, 0.5)).matrix()
    }

    #[test]
    fn box_mesh_agrees_with_the_cuboid_obstacle() {
        let e = Vec3::new(0.3, 0.2, 0.1);
        let r = rotation();
        let t = Vec3::new(0.1, -0.4, 0.2);
        let mesh = MeshObstacle::new("box", box_surface(e).transformed(1.0, &r, &t)).unwrap();
        assert!(mesh.is_closed());
        let cuboid = Obstacle::cuboid(t, e, r).unwrap();
        // A deterministic cloud of points around and inside the box.
        let mut seed = 12345u64;
        let mut rand = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        for _ in 0..2000 {
            let local = Vec3::new(0.6 * rand(), 0.5 * rand(), 0.4 * rand());
            let p = t + r * local;
            let a = cuboid.closest(&p);
            let b = mesh.closest(&p);
            assert!((a.gap - b.gap).abs() < 1e-12, "{local:?}: {a:?} vs {b:?}");
            // Inside, the two may pick different faces at equal depth; outside they agree.
            if a.gap > 1e-9 {
                assert!(
                    (a.normal - b.normal).norm() < 1e-9,
                    "{local:?}: {a:?} vs {b:?}"
                );
                assert!((a.point - b.point).norm() < 1e-12);
            }
        }
    }

    #[test]
    fn tessellated_sphere_is_within_tessellation_error() {
        let radius = 0.5;
        let m = 64;
        let mesh = MeshObstacle::new("sphere", sphere_surface(radius, m)).unwrap();
        assert!(mesh.is_closed());
        // Sagitta of the longest chord (equatorial segment π r / m): r (1 − cos(π / 2m))… a
        // quad spans π/m in both angles, so a bound is r (1 − cos(π/m)).
        let tess = radius * (1.0 - (std::f64::consts::PI / m as f64).cos());
        let center = Vec3::new(1.0, 2.0, 3.0);
        let mesh = MeshObstacle::new(
            "sphere",
            mesh.surface().transformed(1.0, &Mat3::identity(), &center),
        )
        .unwrap();
        for (dir, dist) in [
            (Vec3::new(1.0, 2.0, 2.0), 0.8),
            (Vec3::new(-1.0, 0.3, 0.1), 0.51),
            (Vec3::new(0.2, -0.7, 0.4), 0.3),
            (Vec3::new(0.0, 0.0, -1.0), 0.1),
        ] {
            let n = dir.normalize();
            let p = center + dist * n;
            let b = mesh.closest(&p);
            assert!(
                (b.gap - (dist - radius)).abs() < tess,
                "{dir:?}: gap {} vs {}",
                b.gap,
                dist - radius
            );
            assert!((b.normal - n).norm() < 0.1, "{dir:?}: {:?}", b.normal);
        }
    }

    fn fd_error(mesh: &MeshObstacle, p: Vec3) -> f64 {
        let fd = central_difference_jacobian(
            |x: &DVec| {
                let g = mesh.closest(&Vec3::new(x[0], x[1], x[2]));
                DVec::from_vec(vec![g.gap, g.normal.x, g.normal.y, g.normal.z])
            },
            &DVec::from_column_slice(p.as_slice()),
            1e-6,
        );
        let mut exact = DMat::zeros(4, 3);
        exact
            .row_mut(0)
            .copy_from(&mesh.gap_gradient(&p).transpose());
        exact
            .view_mut((1, 0), (3, 3))
            .copy_from(&mesh.normal_jacobian(&p));
        relative_error(exact.as_slice(), fd.as_slice(), 1e-12)
    }

    #[test]
    fn derivatives_match_central_differences_on_faces_edges_and_vertices() {
        let e = Vec3::new(0.3, 0.2, 0.1);
        let r = rotation();
        let t = Vec3::new(0.1, -0.4, 0.2);
        let mesh = MeshObstacle::new("box", box_surface(e).transformed(1.0, &r, &t)).unwrap();
        for (local, kind) in [
            (Vec3::new(0.1, 0.05, 0.3), "face"),
            (Vec3::new(0.1, 0.05, 0.07), "face (inside)"),
            (Vec3::new(0.1, 0.35, 0.3), "edge"),
            (Vec3::new(0.45, 0.35, 0.3), "vertex"),
        ] {
            let p = t + r * local;
            let found = mesh.locate(&p).feature;
            let ok = match kind {
                "edge" => matches!(found, MeshFeature::Edge { .. }),
                "vertex" => matches!(found, MeshFeature::Vertex { .. }),
                _ => matches!(found, MeshFeature::Face { .. }),
            };
            assert!(ok, "{kind}: {found:?}");
            let err = fd_error(&mesh, p);
            assert!(err < 1e-6, "{kind}: {err}");
        }
    }

    #[test]
    fn open_surface_is_one_sided_and_inverted_closed_surface_is_flipped() {
        // One square in z = 0, normal +z.
        let s = TriangleSurface::new(
            "sq",
            vec![
                Vec3::zeros(),
                Vec3::x(),
                Vec3::new(1.0, 1.0, 0.0),
                Vec3::y(),
            ],
            vec![[0, 1, 2], [0, 2, 3]],
        )
        .unwrap();
        let sheet = MeshObstacle::new("sq", s).unwrap();
        assert!(!sheet.is_closed());
        assert!((sheet.closest(&Vec3::new(0.5, 0.5, 0.2)).gap - 0.2).abs() < 1e-15);
        assert!((sheet.closest(&Vec3::new(0.5, 0.5, -0.2)).gap + 0.2).abs() < 1e-15);
        let mut inverted = box_surface(Vec3::repeat(1.0));
        inverted.flip();
        let b = MeshObstacle::new("b", inverted).unwrap();
        let p = b.closest(&Vec3::new(0.0, 0.0, 3.0));
        assert!((p.gap - 2.0).abs() < 1e-15 && (p.normal - Vec3::z()).norm() < 1e-15);
        assert!((b.closest(&Vec3::zeros()).gap + 1.0).abs() < 1e-15);
    }
}
