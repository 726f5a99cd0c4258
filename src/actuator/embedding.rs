//! Points embedded in a tetrahedral mesh, as SOFA's `BarycentricMapping`: barycentric
//! coordinates in the tetrahedron that contains the point, or, for a point just outside the
//! mesh, the extrapolated barycentric coordinates in the nearest tetrahedron (some weights
//! negative, still summing to 1), so the point moves with that element's affine field. Either
//! way p(x) = Σᵢ wᵢ x_{nᵢ} reproduces the point exactly at rest.

use crate::error::{Error, Result};
use crate::math::{Mat3, Vec3};
use crate::mesh::Mesh;

/// A point attached to up to four mesh nodes with fixed weights (summing to 1; a point
/// outside the mesh has extrapolated weights, some negative).
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

/// The distance (m) from `p` to the triangle (a, b, c): the closest point by the Voronoi
/// regions of its vertices, edges and face (Ericson, Real-Time Collision Detection, §5.1.5).
fn triangle_distance(p: &Vec3, a: &Vec3, b: &Vec3, c: &Vec3) -> f64 {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(&ap), ac.dot(&ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return ap.norm();
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(&bp), ac.dot(&bp));
    if d3 >= 0.0 && d4 <= d3 {
        return bp.norm();
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return (p - (a + ab * (d1 / (d1 - d3)))).norm();
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(&cp), ac.dot(&cp));
    if d6 >= 0.0 && d5 <= d6 {
        return cp.norm();
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return (p - (a + ac * (d2 / (d2 - d6)))).norm();
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (p - (b + (c - b) * w)).norm();
    }
    let denom = 1.0 / (va + vb + vc);
    (p - (a + ab * (vb * denom) + ac * (vc * denom))).norm()
}

/// The distance (m) from `p` to the solid tetrahedron `t` when `p` is outside it: the
/// smallest distance to its four faces.
fn tetrahedron_distance(x: &[Vec3], t: &[usize; 4], p: &Vec3) -> f64 {
    [[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]]
        .iter()
        .map(|f| triangle_distance(p, &x[t[f[0]]], &x[t[f[1]]], &x[t[f[2]]]))
        .fold(f64::INFINITY, f64::min)
}

impl EmbeddedPoint {
    /// Embeds `point` (m) in `mesh` ([`Self::locate_outside`]), discarding the distance.
    pub fn locate(mesh: &Mesh, point: Vec3, tolerance: f64, what: &str) -> Result<EmbeddedPoint> {
        Self::locate_outside(mesh, point, tolerance, what).map(|(e, _)| e)
    }

    /// Embeds `point` (m) in `mesh` and returns how far outside the mesh it lies (m, 0 inside):
    /// barycentric in the tetrahedron containing it (a relative slack of 1e-9 on the
    /// coordinates admits points on faces); else, when the point is within `tolerance` (m) of
    /// the mesh, extrapolated barycentric coordinates in the nearest tetrahedron (the one at
    /// the smallest distance; among equally near ones, the one whose smallest coordinate is
    /// largest), as SOFA's `BarycentricMapping` maps points outside its mesh. `what` names
    /// the point in errors (not finite, farther than `tolerance` from the mesh).
    pub fn locate_outside(
        mesh: &Mesh,
        point: Vec3,
        tolerance: f64,
        what: &str,
    ) -> Result<(EmbeddedPoint, f64)> {
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
            return Ok((
                EmbeddedPoint {
                    nodes: t,
                    weights: l,
                },
                0.0,
            ));
        }
        // Outside every tetrahedron: the nearest one (ties to the least extrapolated).
        let mut nearest: Option<(f64, f64, usize, [f64; 4])> = None;
        for (e, t) in mesh.tetrahedra().iter().enumerate() {
            let Some(l) = barycentric(x, t, &point) else {
                continue;
            };
            let d = tetrahedron_distance(x, t, &point);
            let worst = l.iter().copied().fold(f64::INFINITY, f64::min);
            let better = nearest.is_none_or(|(bd, bw, _, _)| {
                d < bd * (1.0 - 1e-12) || (d <= bd * (1.0 + 1e-12) && worst > bw)
            });
            if better {
                nearest = Some((d, worst, e, l));
            }
        }
        let (distance, _, e, l) = nearest.expect("a tetrahedron was found above");
        if distance > tolerance {
            return Err(Error::invalid(
                what,
                format!(
                    "point {:?} m lies {distance:.3e} m outside the mesh (tolerance {tolerance:.1e} m; the body's `embed_tolerance` sets it)",
                    [point.x, point.y, point.z]
                ),
            ));
        }
        Ok((
            EmbeddedPoint {
                nodes: mesh.tetrahedra()[e],
                weights: l,
            },
            distance,
        ))
    }

    /// Embeds `point` (m) in `mesh` as [`Self::locate_outside`] does but with no distance
    /// limit: a point inside a tetrahedron gets its barycentric coordinates, any point outside
    /// the mesh (however far) the extrapolated barycentric coordinates of its nearest
    /// tetrahedron, so that it follows that element's affine motion. Returns the embedding and
    /// the distance (m) to the mesh (0 inside). For tracked points that sit off the surface
    /// on purpose (motion-capture markers on posts); cables, effectors and cavity surfaces
    /// keep their tolerance. `what` names the point in errors (not finite, a mesh without
    /// tetrahedra).
    pub fn locate_nearest(mesh: &Mesh, point: Vec3, what: &str) -> Result<(EmbeddedPoint, f64)> {
        Self::locate_outside(mesh, point, f64::INFINITY, what)
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
    use crate::mesh::{Groups, box_mesh};

    /// An affine map x ↦ F x + c (a stretch, shear and rotation-like mix, det F > 0).
    fn affine(p: &Vec3) -> Vec3 {
        let f = Mat3::new(1.2, 0.3, -0.1, -0.2, 0.9, 0.25, 0.05, -0.15, 1.1);
        f * p + Vec3::new(0.01, -0.02, 0.03)
    }

    #[test]
    fn an_inside_point_is_reproduced_and_a_far_outside_one_is_refused() {
        let mesh = box_mesh([3, 2, 2], [0.0; 3], [0.3, 0.1, 0.1]).unwrap();
        let p = Vec3::new(0.123, 0.045, 0.067);
        let (e, d) = EmbeddedPoint::locate_outside(&mesh, p, 1e-6, "p").unwrap();
        assert_eq!(d, 0.0);
        assert!((e.position(mesh.positions()) - p).norm() < 1e-15);
        assert!(e.weights.iter().all(|w| *w >= -1e-9));
        let err =
            EmbeddedPoint::locate(&mesh, Vec3::new(0.5, 0.0, 0.0), 1e-6, "cable.c1.points[3]")
                .unwrap_err()
                .to_string();
        assert!(err.contains("cable.c1.points[3]"), "{err}");
        assert!(err.contains("embed_tolerance"), "{err}");
    }

    #[test]
    fn a_point_outside_a_single_tetrahedron_gets_extrapolated_weights() {
        // The unit corner tetrahedron; p lies beyond its slanted face x + y + z = 1 along the
        // face normal (1, 1, 1)/√3, at distance s from the face's centroid (1/3, 1/3, 1/3).
        let x = vec![
            Vec3::zeros(),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(0.0, 0.0, 1.0),
        ];
        let mesh = Mesh::new(x.clone(), vec![[0, 1, 2, 3]], vec![], Groups::default()).unwrap();
        let s = 0.05;
        let p = Vec3::repeat(1.0 / 3.0) + Vec3::repeat(s / 3f64.sqrt());
        assert!(EmbeddedPoint::locate(&mesh, p, 0.9 * s, "p").is_err());
        let (e, d) = EmbeddedPoint::locate_outside(&mesh, p, 1.1 * s, "p").unwrap();
        assert!((d - s).abs() < 1e-14, "distance {d} vs {s}");
        // Barycentric coordinates of p: node 0 gets 1 − (px + py + pz) = −√3 s, the others
        // 1/3 + s/√3 each; they sum to 1.
        let w0 = 1.0 - 3.0 * p.x;
        let mut by_node = [0.0; 4];
        for i in 0..4 {
            by_node[e.nodes[i]] += e.weights[i];
        }
        assert!((by_node[0] - w0).abs() < 1e-14 && w0 < 0.0, "{by_node:?}");
        for w in &by_node[1..] {
            assert!((w - p.x).abs() < 1e-14, "{by_node:?}");
        }
        assert!((e.weights.iter().sum::<f64>() - 1.0).abs() < 1e-15);
        assert!((e.position(&x) - p).norm() < 1e-15);
        // An affine deformation of the nodes moves the point by the same map.
        let moved: Vec<Vec3> = x.iter().map(affine).collect();
        assert!((e.position(&moved) - affine(&p)).norm() < 1e-14);
    }

    #[test]
    fn a_point_outside_a_box_mesh_follows_an_affine_deformation() {
        let mesh = box_mesh([3, 2, 2], [0.0; 3], [0.3, 0.1, 0.1]).unwrap();
        // Beyond the face y = 0.1 by 2 mm, beyond the edge (x = 0.3, z = 0.1) by (1, 1) mm,
        // beyond the corner by 1e-8 (once snapped to the nearest node).
        for (p, distance) in [
            (Vec3::new(0.137, 0.102, 0.041), 0.002),
            (Vec3::new(0.301, 0.05, 0.101), 2f64.sqrt() * 1e-3),
            (Vec3::new(0.3 + 1e-8, 0.1, 0.1), 1e-8),
        ] {
            let (e, d) = EmbeddedPoint::locate_outside(&mesh, p, 3e-3, "p").unwrap();
            assert!((d - distance).abs() < 1e-12, "{p}: {d} vs {distance}");
            assert!(e.weights.iter().any(|w| *w < 0.0), "{:?}", e.weights);
            assert!((e.weights.iter().sum::<f64>() - 1.0).abs() < 1e-14);
            assert!((e.position(mesh.positions()) - p).norm() < 1e-15);
            let moved: Vec<Vec3> = mesh.positions().iter().map(affine).collect();
            assert!((e.position(&moved) - affine(&p)).norm() < 1e-14);
        }
    }

    #[test]
    fn locate_nearest_has_no_distance_limit_and_leaves_locate_unchanged() {
        let mesh = box_mesh([3, 2, 2], [0.0; 3], [0.3, 0.1, 0.1]).unwrap();
        // 2 cm beyond the face z = 0.1, and 1 m beyond the face x = 0.3.
        for (p, distance) in [
            (Vec3::new(0.137, 0.041, 0.12), 0.02),
            (Vec3::new(1.3, 0.05, 0.05), 1.0),
        ] {
            assert!(EmbeddedPoint::locate(&mesh, p, 1e-3, "p").is_err());
            let (e, d) = EmbeddedPoint::locate_nearest(&mesh, p, "p").unwrap();
            assert!((d - distance).abs() < 1e-12, "{p}: {d} vs {distance}");
            assert!((e.position(mesh.positions()) - p).norm() < 1e-13);
            let moved: Vec<Vec3> = mesh.positions().iter().map(affine).collect();
            assert!((e.position(&moved) - affine(&p)).norm() < 1e-12);
        }
        let inside = Vec3::new(0.123, 0.045, 0.067);
        let (e, d) = EmbeddedPoint::locate_nearest(&mesh, inside, "p").unwrap();
        assert_eq!(d, 0.0);
        assert_eq!(e, EmbeddedPoint::locate(&mesh, inside, 1e-6, "p").unwrap());
        let err = EmbeddedPoint::locate_nearest(&mesh, Vec3::new(f64::NAN, 0.0, 0.0), "m.position")
            .unwrap_err()
            .to_string();
        assert_eq!(err, "m.position: must be finite");
    }

    #[test]
    fn triangle_distance_in_every_voronoi_region() {
        let (a, b, c) = (
            Vec3::zeros(),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
        );
        for (p, d) in [
            (Vec3::new(0.2, 0.2, 0.3), 0.3),           // face
            (Vec3::new(-0.3, -0.4, 0.0), 0.5),         // vertex a
            (Vec3::new(1.3, -0.4, 0.0), 0.5),          // vertex b
            (Vec3::new(-0.3, 1.4, 0.0), 0.5),          // vertex c
            (Vec3::new(0.5, -0.3, 0.4), 0.5),          // edge ab
            (Vec3::new(-0.3, 0.5, 0.4), 0.5),          // edge ac
            (Vec3::new(1.0, 1.0, 0.0), 0.5f64.sqrt()), // edge bc
        ] {
            let got = triangle_distance(&p, &a, &b, &c);
            assert!((got - d).abs() < 1e-15, "{p}: {got} vs {d}");
        }
    }
}
