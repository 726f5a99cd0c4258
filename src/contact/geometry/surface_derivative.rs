//! Closed-form derivatives of a node-versus-triangle contact ([`TriangleHit`], the geometry of
//! self-contact and of contact between bodies) with respect to the four points it depends
//! on: the node p and the triangle's vertices a, b, c (m, world frame). With
//! C = (b − a) × (c − a), n_T = C/‖C‖, Φ = n_T · (p − a) and the barycentric weights
//! w_a = ((b − p) × (c − p)) · C/‖C‖², w_b = ((c − p) × (a − p)) · C/‖C‖², w_c = 1 − w_a − w_b
//! (`project_on_triangle`):
//!
//! ```text
//! ∂C/∂a = [c − b]×,   ∂C/∂b = −[c − a]×,   ∂C/∂c = [b − a]×,   ∂C/∂p = 0
//! ∂n_T/∂X = (I − n_T n_Tᵀ) ∂C/∂X / ‖C‖
//! ∇_X Φ = (∂n_T/∂X)ᵀ (p − a) + n_T [X = p] − n_T [X = a]
//! ∇_X w_i = ((∂u_i/∂X)ᵀ C + (∂C/∂X)ᵀ u_i − 2 w_i (∂C/∂X)ᵀ C)/‖C‖²
//! ```
//!
//! with u_a = (b − p) × (c − p), u_b = (c − p) × (a − p), and for u = (y − p) × (z − p):
//! ∂u/∂y = −[z − p]×, ∂u/∂z = [y − p]×, ∂u/∂p = [z − y]×. The frame's derivative follows
//! from ∂n_T through [`contact_frame_derivative`] (its helper axis held fixed). The weights
//! are those of the node's projection onto the triangle's plane, so they do not depend on the
//! node's distance to it. Which triangle a node faces is a discrete choice of detection, held
//! fixed.

use super::geometry_derivative::contact_frame_derivative;
use super::surface_tree::TriangleHit;
use crate::math::{Mat3, Vec3};

/// The derivatives of a node-versus-triangle contact with respect to the node p and the
/// vertices a, b, c (module doc). Index 0 is p, 1–3 are a, b, c (the order of
/// [`TriangleHit::vertices`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TriangleHitDerivative {
    /// The triangle's outward unit normal n_T.
    pub normal: Vec3,
    /// ∇Φ with respect to each point (dimensionless).
    pub gap_gradient: [Vec3; 4],
    /// ∂n_T/∂(point) (1/m; column j is the derivative along world axis j); zero for p.
    pub normal_jacobian: [Mat3; 4],
    /// `weight_gradient[i][k]` = ∇w_i with respect to point k (1/m), i over (a, b, c).
    pub weight_gradient: [[Vec3; 4]; 3],
}

impl TriangleHitDerivative {
    /// The derivatives at the node `p` (m) and the triangle `corners` = (a, b, c) (m).
    /// `None` for a degenerate triangle (zero or non-finite area), which detection never
    /// returns.
    pub fn new(p: &Vec3, corners: &[Vec3; 3]) -> Option<TriangleHitDerivative> {
        let [a, b, c] = *corners;
        let p = *p;
        let cross = (b - a).cross(&(c - a));
        let s = cross.norm_squared();
        let area2 = s.sqrt();
        if !(area2 > 0.0) || !area2.is_finite() {
            return None;
        }
        let n = cross / area2;
        let proj = (Mat3::identity() - n * n.transpose()) / area2;
        // ∂C/∂(p, a, b, c)
        let dcross = [
            Mat3::zeros(),
            (c - b).cross_matrix(),
            -(c - a).cross_matrix(),
            (b - a).cross_matrix(),
        ];
        let normal_jacobian = dcross.map(|d| proj * d);
        let r = p - a;
        let mut gap_gradient = normal_jacobian.map(|j| j.transpose() * r);
        gap_gradient[0] += n;
        gap_gradient[1] -= n;
        // u_i = (y − p) × (z − p) for (y, z) = (b, c) and (c, a); their derivatives with
        // respect to (p, a, b, c).
        let du = |y: usize, z: usize| -> [Mat3; 4] {
            let pts = [p, a, b, c];
            let mut out = [Mat3::zeros(); 4];
            out[0] = (pts[z] - pts[y]).cross_matrix();
            out[y] = -(pts[z] - p).cross_matrix();
            out[z] = (pts[y] - p).cross_matrix();
            out
        };
        let weight = |y: usize, z: usize| -> [Vec3; 4] {
            let pts = [p, a, b, c];
            let u = (pts[y] - p).cross(&(pts[z] - p));
            let w = u.dot(&cross) / s;
            let dui = du(y, z);
            std::array::from_fn(|k| {
                (dui[k].transpose() * cross + dcross[k].transpose() * u
                    - 2.0 * w * dcross[k].transpose() * cross)
                    / s
            })
        };
        let wa = weight(2, 3);
        let wb = weight(3, 1);
        let wc = std::array::from_fn(|k| -wa[k] - wb[k]);
        Some(TriangleHitDerivative {
            normal: n,
            gap_gradient,
            normal_jacobian,
            weight_gradient: [wa, wb, wc],
        })
    }

    /// The derivatives of a detected hit of the node at `p` against the triangle of
    /// `positions` (the surface body's nodes, m) it names. `None` as [`Self::new`].
    pub fn of_hit(
        hit: &TriangleHit,
        p: &Vec3,
        positions: &[Vec3],
    ) -> Option<TriangleHitDerivative> {
        Self::new(p, &hit.vertices.map(|v| positions[v]))
    }

    /// `frame_jacobian[k][j]` = ∂frame/∂(point k)_j (1/m): the derivative of
    /// `contact_frame(n_T)` (columns `[t₁, t₂, n_T]`) with respect to world coordinate j of
    /// point k (p, a, b, c), its helper axis held fixed ([`contact_frame_derivative`]).
    pub fn frame_jacobian(&self) -> [[Mat3; 3]; 4] {
        self.normal_jacobian.map(|dn| {
            std::array::from_fn(|j| contact_frame_derivative(&self.normal, &dn.column(j).into()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::contact_frame;
    use crate::contact::geometry::surface_tree::project_on_triangle;
    use crate::math::{SplitMix64, relative_error};

    const H: f64 = 1e-6;

    /// Central differences of `f` along coordinate j of point k of `pts` = [p, a, b, c].
    fn fd(f: &dyn Fn(&[Vec3; 4]) -> Vec<f64>, pts: &[Vec3; 4], k: usize, j: usize) -> Vec<f64> {
        let (mut plus, mut minus) = (*pts, *pts);
        plus[k][j] += H;
        minus[k][j] -= H;
        let (a, b) = (f(&plus), f(&minus));
        a.iter().zip(&b).map(|(x, y)| (x - y) / (2.0 * H)).collect()
    }

    fn projection(pts: &[Vec3; 4]) -> crate::contact::geometry::surface_tree::TriangleProjection {
        project_on_triangle(&pts[0], &[pts[1], pts[2], pts[3]]).unwrap()
    }

    /// Every derivative at `pts` against central differences of `project_on_triangle` (the
    /// detector's own formula) and `contact_frame`, to 1e-6 relative.
    fn check(pts: &[Vec3; 4], label: &str) {
        let d = TriangleHitDerivative::new(&pts[0], &[pts[1], pts[2], pts[3]]).unwrap();
        let frames = d.frame_jacobian();
        assert_eq!(d.normal, projection(pts).normal);
        let gap = |q: &[Vec3; 4]| vec![projection(q).gap];
        let normal = |q: &[Vec3; 4]| projection(q).normal.as_slice().to_vec();
        let weights = |q: &[Vec3; 4]| projection(q).weights.to_vec();
        let frame = |q: &[Vec3; 4]| contact_frame(&projection(q).normal).as_slice().to_vec();
        for (k, frame_k) in frames.iter().enumerate() {
            for (j, frame_kj) in frame_k.iter().enumerate() {
                let e = relative_error(&[d.gap_gradient[k][j]], &fd(&gap, pts, k, j), 1e-3);
                assert!(e < 1e-6, "{label}: ∂Φ/∂x_{k}{j}: {e}");
                let e = relative_error(
                    d.normal_jacobian[k].column(j).as_slice(),
                    &fd(&normal, pts, k, j),
                    1e-3,
                );
                assert!(e < 1e-6, "{label}: ∂n/∂x_{k}{j}: {e}");
                let w: Vec<f64> = (0..3).map(|i| d.weight_gradient[i][k][j]).collect();
                let e = relative_error(&w, &fd(&weights, pts, k, j), 1e-3);
                assert!(e < 1e-6, "{label}: ∂w/∂x_{k}{j}: {e}");
                let e = relative_error(frame_kj.as_slice(), &fd(&frame, pts, k, j), 1e-3);
                assert!(e < 1e-6, "{label}: ∂F/∂x_{k}{j}: {e}");
            }
        }
    }

    #[test]
    fn derivatives_match_finite_differences_on_generic_triangles() {
        let mut rng = SplitMix64::new(29);
        let mut checked = 0;
        while checked < 40 {
            let v = |rng: &mut SplitMix64| Vec3::new(rng.uniform(), rng.uniform(), rng.uniform());
            let (a, b, c) = (v(&mut rng), v(&mut rng), v(&mut rng));
            // Near-degenerate shapes excluded: every angle's sine above 0.2.
            let sine = |u: Vec3, w: Vec3| u.cross(&w).norm() / (u.norm() * w.norm());
            if sine(b - a, c - a)
                .min(sine(a - b, c - b))
                .min(sine(a - c, b - c))
                < 0.2
            {
                continue;
            }
            // A node near the triangle (inside or outside its edges), on either side.
            let w = [rng.uniform(), rng.uniform()];
            let side = if checked % 2 == 0 { 1.0 } else { -1.0 };
            let n = (b - a).cross(&(c - a)).normalize();
            let p = a + 0.7 * w[0] * (b - a) + 0.7 * w[1] * (c - a) + side * 0.1 * n;
            check(&[p, a, b, c], &format!("triangle {checked}"));
            checked += 1;
        }
    }

    #[test]
    fn moving_the_node_or_every_point_together() {
        // A tilted triangle (normal components all distinct, away from the frame's helper-axis
        // ties) and a node 1 mm behind its face.
        let (a, b, c) = (
            Vec3::zeros(),
            Vec3::new(1.0, 0.0, 0.2),
            Vec3::new(0.1, 1.0, 0.35),
        );
        let n = (b - a).cross(&(c - a)).normalize();
        let p = 0.3 * b + 0.2 * c - 0.001 * n;
        let pts = [p, a, b, c];
        check(&pts, "tilted, behind");
        let d = TriangleHitDerivative::new(&p, &[a, b, c]).unwrap();
        // Moving the node changes Φ along the normal only; every point moving together
        // (a translation) changes neither Φ nor the weights.
        assert!((d.gap_gradient[0] - n).norm() < 1e-15);
        let total: Vec3 = d.gap_gradient.iter().sum();
        assert!(total.norm() < 1e-14);
        for w in &d.weight_gradient {
            assert!(w.iter().sum::<Vec3>().norm() < 1e-13);
        }
        assert!(TriangleHitDerivative::new(&p, &[a, a, c]).is_none());
    }
}
