//! Points embedded in a tetrahedral mesh: barycentric coordinates in the tetrahedron that
//! contains the point (or the nearest node when the point lies just outside the mesh), so the
//! point follows the deformed mesh linearly: p(x) = Σᵢ wᵢ x_{nᵢ}.

use crate::error::{Error, Result};
use crate::math::{Mat3, Vec3};
use crate::mesh::Mesh;

/// A point attached to up to four mesh nodes with fixed weights (summing to 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EmbeddedPoint {
    /// The nodes the point follows.
    pub nodes: [usize; 4],
    /// Their barycentric weights (unused slots carry weight 0).
    pub weights: [f64; 4],
}

/// Barycentric coordinates of `p` in the tetrahedron `t` of `positions` (None if degenerate).
fn barycentric(positions: &[Vec3], t: &[usize; 4], p: &Vec3) -> Option<[f64; 4]> {
    let a = positions[t[0]];
    let m = Mat3::from_columns(&[
        positions[t[1]] - a,
        positions[t[2]] - a,
        positions[t[3]] - a,
    ]);
    let l = m.try_inverse()? * (p - a);
    Some([1.0 - l.x - l.y - l.z, l.x, l.y, l.z])
}

impl EmbeddedPoint {
    /// Embeds `point` (m) in `mesh`: barycentric in the tetrahedron containing it (a relative
    /// slack of 1e-9 on the coordinates admits points on faces), else attached to the nearest
    /// node when the point is within `tolerance` (m) of the nearest tetrahedron. `what` names
    /// the point in errors (a point farther than `tolerance` from the mesh).
    pub fn locate(mesh: &Mesh, point: Vec3, tolerance: f64, what: &str) -> Result<EmbeddedPoint> {
        if !point.iter().all(|c| c.is_finite()) {
            return Err(Error::invalid(what, "must be finite"));
        }
        let x = mesh.positions();
        let mut best: Option<(f64, usize, [f64; 4])> = None;
        for (e, t) in mesh.tetrahedra().iter().enumerate() {
            let Some(l) = barycentric(x, t, &point) else {
                continue;
            };
            let worst = l.iter().copied().fold(f64::INFINITY, f64::min);
            if best.is_none_or(|(w, _, _)| worst > w) {
                best = Some((worst, e, l));
            }
        }
        let (worst, e, l) =
            best.ok_or_else(|| Error::invalid(what, "the mesh has no tetrahedron"))?;
        let t = mesh.tetrahedra()[e];
        if worst >= -1e-9 {
            return Ok(EmbeddedPoint {
                nodes: t,
                weights: l,
            });
        }
        // Outside: distance to the best tetrahedron (its clamped barycentric point, an upper
        // bound of the true distance).
        let clamped: [f64; 4] = l.map(|v| v.max(0.0));
        let sum: f64 = clamped.iter().sum();
        let q: Vec3 = (0..4).map(|i| clamped[i] / sum * x[t[i]]).sum();
        let distance = (q - point).norm();
        if distance > tolerance {
            return Err(Error::invalid(
                what,
                format!(
                    "point {:?} m lies {distance:.3e} m outside the mesh (tolerance {tolerance:.1e} m)",
                    [point.x, point.y, point.z]
                ),
            ));
        }
        let nearest = (0..x.len())
            .min_by(|&a, &b| {
                (x[a] - point)
                    .norm_squared()
                    .total_cmp(&(x[b] - point).norm_squared())
            })
            .expect("a mesh with a tetrahedron has nodes");
        Ok(EmbeddedPoint {
            nodes: [nearest; 4],
            weights: [1.0, 0.0, 0.0, 0.0],
        })
    }

    /// The point's position (m) for node positions `x`.
    #[inline]
    pub fn position(&self, x: &[Vec3]) -> Vec3 {
        (0..4).map(|i| self.weights[i] * x[self.nodes[i]]).sum()
    }

    /// Spreads a vector `g` applied at the point onto its nodes: `out[nᵢ] += wᵢ g` (the
    /// transpose of the embedding, e.g. a force in N).
    #[inline]
    pub fn spread(&self, g: Vec3, out: &mut [Vec3]) {
        for i in 0..4 {
            if self.weights[i] != 0.0 {
                out[self.nodes[i]] += self.weights[i] * g;
            }
        }
    }

    /// Appends the point's sparse gradient rows `(node, wᵢ g)` for a vector `g` = ∂δ/∂p.
    #[inline]
    pub fn push_rows(&self, g: Vec3, rows: &mut Vec<(usize, Vec3)>) {
        for i in 0..4 {
            if self.weights[i] != 0.0 {
                rows.push((self.nodes[i], self.weights[i] * g));
            }
        }
    }
}

/// A named effector: a point embedded in the mesh whose position is reported (docs/outputs.md
/// `effectors`) and used by inverse control.
#[derive(Debug, Clone, PartialEq)]
pub struct Effector {
    /// Its name (`tip`).
    pub name: String,
    /// Where it is attached.
    pub point: EmbeddedPoint,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::box_mesh;

    #[test]
    fn an_inside_point_is_reproduced_and_an_outside_one_is_refused() {
        let mesh = box_mesh([3, 2, 2], [0.0; 3], [0.3, 0.1, 0.1]).unwrap();
        let p = Vec3::new(0.123, 0.045, 0.067);
        let e = EmbeddedPoint::locate(&mesh, p, 1e-6, "p").unwrap();
        assert!((e.position(mesh.positions()) - p).norm() < 1e-15);
        assert!(e.weights.iter().all(|w| *w >= -1e-9));
        let corner = Vec3::new(0.3 + 1e-8, 0.1, 0.1);
        let e = EmbeddedPoint::locate(&mesh, corner, 1e-6, "p").unwrap();
        assert!((e.position(mesh.positions()) - Vec3::new(0.3, 0.1, 0.1)).norm() < 1e-12);
        let err =
            EmbeddedPoint::locate(&mesh, Vec3::new(0.5, 0.0, 0.0), 1e-6, "cable.c1.points[3]")
                .unwrap_err()
                .to_string();
        assert!(err.contains("cable.c1.points[3]"), "{err}");
    }
}
