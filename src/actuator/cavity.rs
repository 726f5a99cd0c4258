//! A pneumatic cavity: a closed triangulated surface made of mesh nodes (a named triangle
//! group), normals pointing out of the cavity (SoftRobots `SurfacePressureConstraint`). Its
//! value δ is the enclosed volume V(x) = Σ_t (a·(b×c))/6 (m³) (divergence theorem over the
//! triangles (a, b, c)); H = ∂V/∂x gives each vertex (b×c)/6 etc., i.e. a third of the
//! triangle's oriented area vector up to a term that cancels over a closed surface (paper
//! 004 Sec. II-C).

use crate::math::Vec3;

/// A cavity's surface: triangles of mesh nodes, oriented out of the cavity.
#[derive(Debug, Clone, PartialEq)]
pub struct Cavity {
    /// The triangles (node indices), counter-clockwise seen from outside the cavity.
    pub triangles: Vec<[usize; 3]>,
}

impl Cavity {
    /// δ(x) = V(x) = Σ_t a·(b×c)/6 (m³); exact for a closed surface, independent of the
    /// origin then.
    pub fn value(&self, x: &[Vec3]) -> f64 {
        self.triangles
            .iter()
            .map(|&[a, b, c]| x[a].dot(&x[b].cross(&x[c])))
            .sum::<f64>()
            / 6.0
    }

    /// Appends H = ∂V/∂x: (x_b×x_c)/6 on a, (x_c×x_a)/6 on b, (x_a×x_b)/6 on c (m²).
    pub fn jacobian(&self, x: &[Vec3], rows: &mut Vec<(usize, Vec3)>) {
        for &[a, b, c] in &self.triangles {
            rows.push((a, x[b].cross(&x[c]) / 6.0));
            rows.push((b, x[c].cross(&x[a]) / 6.0));
            rows.push((c, x[a].cross(&x[b]) / 6.0));
        }
    }

    /// Adds `scale` · (∂H/∂x · dx)ᵀ into `out`: on a, (dx_b×x_c + x_b×dx_c)/6, and cyclically.
    pub fn hessian_action(&self, x: &[Vec3], dx: &[Vec3], scale: f64, out: &mut [Vec3]) {
        for &[a, b, c] in &self.triangles {
            out[a] += (dx[b].cross(&x[c]) + x[b].cross(&dx[c])) * (scale / 6.0);
            out[b] += (dx[c].cross(&x[a]) + x[c].cross(&dx[a])) * (scale / 6.0);
            out[c] += (dx[a].cross(&x[b]) + x[a].cross(&dx[b])) * (scale / 6.0);
        }
    }
}
