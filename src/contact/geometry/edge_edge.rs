//! Two edges crossing: a soft surface edge p₀–p₁ and a rigid shape's edge a₀–a₁ (m, world
//! frame), the geometry of the edge–edge rows of mixed scenes (`scene::model::soft_rigid`; with the
//! vertex–face rows, the complete set of contacts between two piecewise-linear surfaces).
//!
//! With e = p₁ − p₀, f = a₁ − a₀, d = a₀ − p₀ and c = e × f, the closest points of the two
//! **lines**, p(s) = p₀ + s e and a(t) = a₀ + t f, have
//!
//! ```text
//! s = ((d × f) · c)/‖c‖²,   t = ((d × e) · c)/‖c‖²
//! n = σ c/‖c‖               (σ = ±1: n · outward > 0, the soft side's outward direction)
//! Φ = n · (a(t) − p(s)) = n · d      (m; a(t) − p(s) is parallel to c)
//! ```
//!
//! A crossing ([`edge_crossing`]) is where both parameters lie strictly inside (0, 1): then the
//! lines' closest points are the segments' own, and Φ is the signed distance of the rigid edge
//! from the soft one along n (negative: the rigid edge has passed below the soft one). When
//! either parameter is at an end the closest points involve a segment's endpoint, which the
//! vertex–face rows hold (a rigid corner against a soft triangle, a soft node against the
//! shape); near-parallel edges (‖c‖ < [`PARALLEL_SINE`] ‖e‖ ‖f‖) have no well-defined
//! crossing and are left to those rows too.
//!
//! Derivatives ([`EdgeCrossingDerivative`], with respect to the four points, σ held fixed):
//!
//! ```text
//! ∂c/∂p₀ = [f]×,  ∂c/∂p₁ = −[f]×,  ∂c/∂a₀ = −[e]×,  ∂c/∂a₁ = [e]×
//! ∂n/∂X = (I − n nᵀ) ∂c/∂X · σ/‖c‖
//! ∇_X Φ = (∂n/∂X)ᵀ d + n [X = a₀] − n [X = p₀]
//! ∇_X s = ((∂(d × f)/∂X)ᵀ c + (∂c/∂X)ᵀ (d × f) − 2 s (∂c/∂X)ᵀ c)/‖c‖²
//! ∇_X t = ((∂(d × e)/∂X)ᵀ c + (∂c/∂X)ᵀ (d × e) − 2 t (∂c/∂X)ᵀ c)/‖c‖²
//! ∂(d × f)/∂X = [d]× ∂f/∂X − [f]× ∂d/∂X,   ∂(d × e)/∂X = [d]× ∂e/∂X − [e]× ∂d/∂X
//! ```
//!
//! with ∂e/∂p₀ = −I, ∂e/∂p₁ = I, ∂f/∂a₀ = −I, ∂f/∂a₁ = I, ∂d/∂a₀ = I, ∂d/∂p₀ = −I.
//!
//! [`within_arc`] is the Gauss-map test that says which crossings are contacts: n must lie in
//! the soft edge's normal arc (between its two triangles' normals, widened by a slack angle)
//! and −n in the rigid edge's (between its two faces' normals; `contact::SurfaceTree::crossing_edges`).

use crate::math::{Mat3, Vec3};

/// Edges closer to parallel than this (the sine of the angle between them) have no crossing.
pub const PARALLEL_SINE: f64 = 1e-3;

/// Where a soft edge p₀–p₁ and a rigid edge a₀–a₁ cross (module doc).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EdgeCrossing {
    /// Parameter of the closest point on the soft edge, p(s) = (1 − s) p₀ + s p₁, in (0, 1).
    pub s: f64,
    /// Parameter of the closest point on the rigid edge, a(t) = (1 − t) a₀ + t a₁, in (0, 1).
    pub t: f64,
    /// Unit normal n = σ (e × f)/‖e × f‖, from the soft edge towards the rigid one's side.
    pub normal: Vec3,
    /// Signed gap Φ = n · (a(t) − p(s)) (m).
    pub gap: f64,
    /// The closest point of the rigid edge a(t) (m).
    pub rigid_point: Vec3,
}

/// The crossing of the soft edge `soft` = (p₀, p₁) and the rigid edge `rigid` = (a₀, a₁)
/// (m), its normal turned towards `outward` (the soft side's outward direction; module doc).
/// `None` when the edges are near parallel, when `outward` is perpendicular to both normals'
/// candidates, or when either closest point is not strictly inside its edge.
pub fn edge_crossing(soft: &[Vec3; 2], rigid: &[Vec3; 2], outward: &Vec3) -> Option<EdgeCrossing> {
    let [p0, p1] = *soft;
    let [a0, a1] = *rigid;
    let (e, f, d) = (p1 - p0, a1 - a0, a0 - p0);
    let c = e.cross(&f);
    let cc = c.norm_squared();
    let cn = cc.sqrt();
    if !(cn > PARALLEL_SINE * e.norm() * f.norm()) || !cn.is_finite() {
        return None;
    }
    let s = d.cross(&f).dot(&c) / cc;
    let t = d.cross(&e).dot(&c) / cc;
    if !(s > 0.0 && s < 1.0 && t > 0.0 && t < 1.0) {
        return None;
    }
    let side = c.dot(outward);
    if side == 0.0 || !side.is_finite() {
        return None;
    }
    let normal = c.scale(side.signum() / cn);
    Some(EdgeCrossing {
        s,
        t,
        normal,
        gap: normal.dot(&d),
        rigid_point: a0 + t * f,
    })
}

/// Whether the unit vector `v` lies on the shorter great-circle arc between the unit vectors
/// `from` and `to` (all perpendicular to one edge), widened by `slack` (rad, ≥ 0) at both ends:
/// angle(v, from) + angle(v, to) ≤ angle(from, to) + 2·slack. For `from` = `to` (a flat
/// surface) it asks that v be within `slack` of it.
pub fn within_arc(v: &Vec3, from: &Vec3, to: &Vec3, slack: f64) -> bool {
    angle_between(v, from) + angle_between(v, to) <= angle_between(from, to) + 2.0 * slack
}

/// The angle (rad, in [0, π]) between two non-zero vectors, atan2(‖a × b‖, a · b).
pub fn angle_between(a: &Vec3, b: &Vec3) -> f64 {
    a.cross(b).norm().atan2(a.dot(b))
}

/// The derivatives of an [`EdgeCrossing`] with respect to the four points p₀, p₁, a₀, a₁
/// (index 0–3; module doc), the orientation σ held fixed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EdgeCrossingDerivative {
    /// The crossing's unit normal n.
    pub normal: Vec3,
    /// The parameters (s, t) at the points.
    pub s: f64,
    /// See `s`.
    pub t: f64,
    /// The rigid edge's direction f = a₁ − a₀ (m).
    pub rigid_direction: Vec3,
    /// ∇Φ with respect to each point (dimensionless).
    pub gap_gradient: [Vec3; 4],
    /// ∂n/∂(point) (1/m; column j along world axis j).
    pub normal_jacobian: [Mat3; 4],
    /// ∇s with respect to each point (1/m).
    pub s_gradient: [Vec3; 4],
    /// ∇t with respect to each point (1/m).
    pub t_gradient: [Vec3; 4],
}

impl EdgeCrossingDerivative {
    /// The derivatives at `soft` = (p₀, p₁) and `rigid` = (a₀, a₁) (m) for the orientation of
    /// `normal` (a crossing's normal: σ = the sign of normal · (e × f)). `None` for parallel or
    /// degenerate edges (‖e × f‖ = 0), which detection never returns. The parameters need not
    /// lie inside the edges (the lines' closest points are differentiated).
    pub fn new(soft: &[Vec3; 2], rigid: &[Vec3; 2], normal: &Vec3) -> Option<Self> {
        let [p0, p1] = *soft;
        let [a0, a1] = *rigid;
        let (e, f, d) = (p1 - p0, a1 - a0, a0 - p0);
        let c = e.cross(&f);
        let cc = c.norm_squared();
        let cn = cc.sqrt();
        if !(cn > 0.0) || !cn.is_finite() {
            return None;
        }
        let sigma = if normal.dot(&c) < 0.0 { -1.0 } else { 1.0 };
        let n = c.scale(sigma / cn);
        let id = Mat3::identity();
        let zero = Mat3::zeros();
        let (fx, ex, dx) = (f.cross_matrix(), e.cross_matrix(), d.cross_matrix());
        // ∂c, ∂e, ∂f, ∂d with respect to (p₀, p₁, a₀, a₁).
        let dc = [fx, -fx, -ex, ex];
        let de = [-id, id, zero, zero];
        let df = [zero, zero, -id, id];
        let dd = [-id, zero, id, zero];
        let proj = (id - n * n.transpose()) * (sigma / cn);
        let normal_jacobian = dc.map(|m| proj * m);
        let gap_gradient =
            std::array::from_fn(|k| normal_jacobian[k].transpose() * d + dd[k].transpose() * n);
        let (u_s, u_t) = (d.cross(&f), d.cross(&e));
        let s = u_s.dot(&c) / cc;
        let t = u_t.dot(&c) / cc;
        let s_gradient = std::array::from_fn(|k| {
            let du = dx * df[k] - fx * dd[k];
            (du.transpose() * c + dc[k].transpose() * u_s - 2.0 * s * dc[k].transpose() * c) / cc
        });
        let t_gradient = std::array::from_fn(|k| {
            let du = dx * de[k] - ex * dd[k];
            (du.transpose() * c + dc[k].transpose() * u_t - 2.0 * t * dc[k].transpose() * c) / cc
        });
        Some(EdgeCrossingDerivative {
            normal: n,
            s,
            t,
            rigid_direction: f,
            gap_gradient,
            normal_jacobian,
            s_gradient,
            t_gradient,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{SplitMix64, relative_error};

    /// The closest points of the two segments by brute force: the smallest distance over a
    /// 1001 × 1001 grid of (s, t), then a 201 × 201 grid of step 1e-5 about it. Returns
    /// (s, t, distance).
    fn brute_force(soft: &[Vec3; 2], rigid: &[Vec3; 2]) -> (f64, f64, f64) {
        let dist = |s: f64, t: f64| {
            let p = soft[0] + s * (soft[1] - soft[0]);
            let a = rigid[0] + t * (rigid[1] - rigid[0]);
            (a - p).norm()
        };
        let search = |s0: f64, t0: f64, step: f64, half: i32| {
            let mut best = (s0, t0, dist(s0, t0));
            for i in -half..=half {
                for j in -half..=half {
                    let (s, t) = (s0 + i as f64 * step, t0 + j as f64 * step);
                    if !(0.0..=1.0).contains(&s) || !(0.0..=1.0).contains(&t) {
                        continue;
                    }
                    let dd = dist(s, t);
                    if dd < best.2 {
                        best = (s, t, dd);
                    }
                }
            }
            best
        };
        let coarse = search(0.5, 0.5, 1e-3, 500);
        search(coarse.0, coarse.1, 1e-5, 100)
    }

    #[test]
    fn a_hand_made_crossing() {
        // The soft edge along x at z = 0, the rigid edge along y, 2 mm above, over x = 0.3.
        let soft = [Vec3::zeros(), Vec3::new(1.0, 0.0, 0.0)];
        let rigid = [Vec3::new(0.3, -0.5, 0.002), Vec3::new(0.3, 0.5, 0.002)];
        let c = edge_crossing(&soft, &rigid, &Vec3::z()).unwrap();
        assert!((c.s - 0.3).abs() < 1e-15 && (c.t - 0.5).abs() < 1e-15);
        assert!((c.normal - Vec3::z()).norm() < 1e-15);
        assert!((c.gap - 0.002).abs() < 1e-15);
        assert!((c.rigid_point - Vec3::new(0.3, 0.0, 0.002)).norm() < 1e-15);
        // Oriented the other way, the gap changes sign with the normal.
        let c = edge_crossing(&soft, &rigid, &-Vec3::z()).unwrap();
        assert!((c.normal + Vec3::z()).norm() < 1e-15 && (c.gap + 0.002).abs() < 1e-15);
        // The rigid edge 1 mm below the soft one: Φ = −1 mm.
        let low = rigid.map(|a| a - Vec3::new(0.0, 0.0, 0.003));
        let c = edge_crossing(&soft, &low, &Vec3::z()).unwrap();
        assert!((c.gap + 0.001).abs() < 1e-15);
        // Tilted: the rigid edge rises by 1 in 10 along y; its height over the soft line
        // (y = 0) is 2 mm, and the common normal (0, −0.1, 1)/√1.01 gives Φ = 2 mm/√1.01.
        let tilted = [
            Vec3::new(0.3, -0.5, 0.002 - 0.05),
            Vec3::new(0.3, 0.5, 0.002 + 0.05),
        ];
        let c = edge_crossing(&soft, &tilted, &Vec3::z()).unwrap();
        assert!((c.gap - 0.002 / 1.01f64.sqrt()).abs() < 1e-15);
        assert!((c.normal - Vec3::new(0.0, -0.1, 1.0) / 1.01f64.sqrt()).norm() < 1e-15);
        // Past an end (s or t outside (0, 1)) or parallel: no crossing.
        let beyond = rigid.map(|a| a + Vec3::new(1.0, 0.0, 0.0));
        assert!(edge_crossing(&soft, &beyond, &Vec3::z()).is_none());
        let short = [rigid[0], Vec3::new(0.3, -0.1, 0.002)];
        assert!(edge_crossing(&soft, &short, &Vec3::z()).is_none());
        let parallel = [Vec3::new(0.0, 0.0, 0.002), Vec3::new(1.0, 1e-4, 0.002)];
        assert!(edge_crossing(&soft, &parallel, &Vec3::z()).is_none());
    }

    #[test]
    fn crossings_match_a_brute_force_search() {
        let mut rng = SplitMix64::new(41);
        let mut checked = 0;
        let v = |rng: &mut SplitMix64| Vec3::new(rng.uniform(), rng.uniform(), rng.uniform());
        while checked < 30 {
            let soft = [v(&mut rng), v(&mut rng)];
            let rigid = [v(&mut rng), v(&mut rng)];
            let outward = v(&mut rng) - Vec3::repeat(0.5);
            let Some(c) = edge_crossing(&soft, &rigid, &outward) else {
                continue;
            };
            // Away from the ends and from parallel, where the grid's minimum is clear.
            if c.s.min(c.t).min(1.0 - c.s).min(1.0 - c.t) < 0.05 {
                continue;
            }
            let (e, f) = (soft[1] - soft[0], rigid[1] - rigid[0]);
            if e.cross(&f).norm() < 0.3 * e.norm() * f.norm() {
                continue;
            }
            let (s, t, dist) = brute_force(&soft, &rigid);
            assert!((c.s - s).abs() < 2e-5, "s {} vs {s}", c.s);
            assert!((c.t - t).abs() < 2e-5, "t {} vs {t}", c.t);
            assert!((c.gap.abs() - dist).abs() < 1e-8, "|Φ| {} vs {dist}", c.gap);
            assert!(c.normal.dot(&outward) > 0.0);
            let p = soft[0] + s * e;
            let a = rigid[0] + t * f;
            assert!((c.rigid_point - a).norm() < 1e-4);
            assert!((c.gap * c.normal - (a - p)).norm() < 1e-4);
            checked += 1;
        }
    }

    #[test]
    fn derivatives_match_finite_differences() {
        const H: f64 = 1e-6;
        let mut rng = SplitMix64::new(7);
        let mut checked = 0;
        let v = |rng: &mut SplitMix64| Vec3::new(rng.uniform(), rng.uniform(), rng.uniform());
        while checked < 30 {
            let pts = [v(&mut rng), v(&mut rng), v(&mut rng), v(&mut rng)];
            let outward = v(&mut rng) - Vec3::repeat(0.5);
            let at = |q: &[Vec3; 4]| edge_crossing(&[q[0], q[1]], &[q[2], q[3]], &outward);
            let Some(c) = at(&pts) else {
                continue;
            };
            let (e, f) = (pts[1] - pts[0], pts[3] - pts[2]);
            if e.cross(&f).norm() < 0.3 * e.norm() * f.norm()
                || c.s.min(c.t).min(1.0 - c.s).min(1.0 - c.t) < 0.05
                || c.normal.dot(&outward).abs() < 0.1 * outward.norm()
            {
                continue;
            }
            let d = EdgeCrossingDerivative::new(&[pts[0], pts[1]], &[pts[2], pts[3]], &c.normal)
                .unwrap();
            assert!((d.normal - c.normal).norm() < 1e-15);
            assert!((d.s - c.s).abs() < 1e-14 && (d.t - c.t).abs() < 1e-14);
            let values = |q: &[Vec3; 4]| {
                let c = at(q).unwrap();
                [c.gap, c.s, c.t, c.normal.x, c.normal.y, c.normal.z]
            };
            for k in 0..4 {
                for j in 0..3 {
                    let (mut plus, mut minus) = (pts, pts);
                    plus[k][j] += H;
                    minus[k][j] -= H;
                    let (a, b) = (values(&plus), values(&minus));
                    let fd: Vec<f64> = (0..6).map(|i| (a[i] - b[i]) / (2.0 * H)).collect();
                    let n = d.normal_jacobian[k].column(j);
                    let exact = [
                        d.gap_gradient[k][j],
                        d.s_gradient[k][j],
                        d.t_gradient[k][j],
                        n[0],
                        n[1],
                        n[2],
                    ];
                    let err = relative_error(&exact, &fd, 1e-3);
                    assert!(
                        err < 1e-6,
                        "point {k} axis {j}: {exact:?} vs {fd:?} ({err})"
                    );
                }
            }
            checked += 1;
        }
    }

    #[test]
    fn arcs_of_the_gauss_map() {
        let (z, x) = (Vec3::z(), Vec3::x());
        let mid = (z + x).normalize();
        assert!(within_arc(&mid, &z, &x, 0.0));
        assert!(within_arc(&z, &z, &x, 1e-12));
        assert!(!within_arc(&-mid, &z, &x, 0.1));
        // Beyond an end by 0.05 rad: in with a slack of 0.06, out with 0.04.
        let past = Vec3::new(-(0.05f64).sin(), 0.0, (0.05f64).cos());
        assert!(within_arc(&past, &z, &x, 0.06));
        assert!(!within_arc(&past, &z, &x, 0.04));
        // A flat surface: within the slack of its normal.
        assert!(within_arc(&past, &z, &z, 0.06) && !within_arc(&past, &z, &z, 0.04));
    }
}
