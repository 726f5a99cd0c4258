//! A pneumatic cavity: a closed triangulated surface, normals pointing out of the cavity
//! (SoftRobots `SurfacePressureConstraint`). Its vertices are either mesh nodes (a named
//! triangle group of the volume mesh) or points embedded in the mesh (a separate surface file,
//! each vertex mapped barycentrically into its tetrahedron, as SOFA maps a cavity surface onto
//! its volume), so the cavity follows the deformation either way. Its value δ is the enclosed
//! volume V = Σ_t (a·(b×c))/6 (m³) (divergence theorem over the triangles (a, b, c) of vertex
//! positions); H = ∂V/∂x gives each vertex (b×c)/6 etc., i.e. a third of the triangle's
//! oriented area vector up to a term that cancels over a closed surface (paper 004 Sec. II-C).
//! With embedded vertices p = W x (W the barycentric weights), V(x) = V(Wx): H = Wᵀ ∂V/∂p and
//! ∂²V/∂x² = Wᵀ (∂²V/∂p²) W.

use std::borrow::Cow;

use crate::math::Vec3;

use super::embedding::EmbeddedPoint;

/// A cavity's surface: triangles oriented out of the cavity, on mesh nodes or on embedded
/// vertices.
#[derive(Debug, Clone, PartialEq)]
pub struct Cavity {
    /// The triangles, counter-clockwise seen from outside the cavity: indices of mesh nodes,
    /// or of `vertices` when those are given.
    pub triangles: Vec<[usize; 3]>,
    /// The surface's own vertices embedded in the mesh (a cavity read from a surface file);
    /// `None`: the triangles are on mesh nodes.
    pub vertices: Option<Vec<EmbeddedPoint>>,
}

/// V = Σ_t a·(b×c)/6 over `triangles` of positions `p` (m³).
fn volume(triangles: &[[usize; 3]], p: &[Vec3]) -> f64 {
    triangles
        .iter()
        .map(|&[a, b, c]| p[a].dot(&p[b].cross(&p[c])))
        .sum::<f64>()
        / 6.0
}

/// Calls `add(vertex, ∂V/∂p_vertex part)` per triangle corner (m²).
fn gradient(triangles: &[[usize; 3]], p: &[Vec3], mut add: impl FnMut(usize, Vec3)) {
    for &[a, b, c] in triangles {
        add(a, p[b].cross(&p[c]) / 6.0);
        add(b, p[c].cross(&p[a]) / 6.0);
        add(c, p[a].cross(&p[b]) / 6.0);
    }
}

/// Adds `scale` · (∂²V/∂p²) dp into `out` (per vertex).
fn hessian_action(triangles: &[[usize; 3]], p: &[Vec3], dp: &[Vec3], scale: f64, out: &mut [Vec3]) {
    for &[a, b, c] in triangles {
        out[a] += (dp[b].cross(&p[c]) + p[b].cross(&dp[c])) * (scale / 6.0);
        out[b] += (dp[c].cross(&p[a]) + p[c].cross(&dp[a])) * (scale / 6.0);
        out[c] += (dp[a].cross(&p[b]) + p[a].cross(&dp[b])) * (scale / 6.0);
    }
}

impl Cavity {
    /// A cavity on mesh nodes (triangles of node indices).
    pub fn on_nodes(triangles: Vec<[usize; 3]>) -> Cavity {
        Cavity {
            triangles,
            vertices: None,
        }
    }

    /// A cavity on its own vertices, embedded in the mesh (triangles index `vertices`).
    pub fn embedded(vertices: Vec<EmbeddedPoint>, triangles: Vec<[usize; 3]>) -> Cavity {
        Cavity {
            triangles,
            vertices: Some(vertices),
        }
    }

    /// The positions the triangles index: the node positions `x` themselves, or the embedded
    /// vertices' positions W x (m, or any per-node vector: a displacement maps the same way).
    fn vertex_positions<'a>(&self, x: &'a [Vec3]) -> Cow<'a, [Vec3]> {
        match &self.vertices {
            None => Cow::Borrowed(x),
            Some(v) => Cow::Owned(v.iter().map(|e| e.position(x)).collect()),
        }
    }

    /// δ(x) = V(x) = Σ_t a·(b×c)/6 (m³); exact for a closed surface, independent of the
    /// origin then.
    pub fn value(&self, x: &[Vec3]) -> f64 {
        volume(&self.triangles, &self.vertex_positions(x))
    }

    /// Appends H = ∂V/∂x (m²): (p_b×p_c)/6 on a, (p_c×p_a)/6 on b, (p_a×p_b)/6 on c, each
    /// spread on the nodes of an embedded vertex with its weights.
    pub fn jacobian(&self, x: &[Vec3], rows: &mut Vec<(usize, Vec3)>) {
        match &self.vertices {
            None => gradient(&self.triangles, x, |n, g| rows.push((n, g))),
            Some(v) => {
                let p = self.vertex_positions(x);
                let mut g = vec![Vec3::zeros(); v.len()];
                gradient(&self.triangles, &p, |k, gk| g[k] += gk);
                for (e, gk) in v.iter().zip(&g) {
                    e.push_rows(*gk, rows);
                }
            }
        }
    }

    /// Adds `scale` · (∂H/∂x · dx)ᵀ into `out`: on a, (dp_b×p_c + p_b×dp_c)/6, and
    /// cyclically, with dp = W dx and the result spread by Wᵀ for embedded vertices.
    pub fn hessian_action(&self, x: &[Vec3], dx: &[Vec3], scale: f64, out: &mut [Vec3]) {
        match &self.vertices {
            None => hessian_action(&self.triangles, x, dx, scale, out),
            Some(v) => {
                let p = self.vertex_positions(x);
                let dp = self.vertex_positions(dx);
                let mut o = vec![Vec3::zeros(); v.len()];
                hessian_action(&self.triangles, &p, &dp, scale, &mut o);
                for (e, ok) in v.iter().zip(&o) {
                    e.spread(*ok, out);
                }
            }
        }
    }
}
