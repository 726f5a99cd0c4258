//! A cable: a polyline of points embedded in the mesh (SoftRobots `CableConstraint`), pulled
//! at its last point. Its value δ is the path length L(x) (m); the pull point, where the cable
//! leaves the body, is either a fixed point in space (`pull_point`) or the first embedded
//! point, which then moves with the mesh (SoftRobots `hasPullPoint = 0`).

use crate::math::{Mat3, Vec3};

use super::embedding::EmbeddedPoint;

/// A cable's geometry.
#[derive(Debug, Clone, PartialEq)]
pub struct Cable {
    /// The embedded points, from the pull side to the actuated (last) point.
    pub points: Vec<EmbeddedPoint>,
    /// The fixed point the cable is pulled from (m), if any: the path then starts there.
    pub pull_point: Option<Vec3>,
}

impl Cable {
    /// Calls `f(a, b, d)` for each straight segment from point `a` to point `b` (`None` is the
    /// fixed pull point), with d = p_b − p_a (m).
    fn segments(&self, x: &[Vec3], mut f: impl FnMut(Option<usize>, usize, Vec3)) {
        let mut prev: Option<(Option<usize>, Vec3)> = self.pull_point.map(|p| (None, p));
        for (k, p) in self.points.iter().enumerate() {
            let pk = p.position(x);
            if let Some((a, pa)) = prev {
                f(a, k, pk - pa);
            }
            prev = Some((Some(k), pk));
        }
    }

    /// δ(x) = L(x) = Σ ‖p_{k+1} − p_k‖ (m), from the pull point (if fixed) through every point.
    pub fn value(&self, x: &[Vec3]) -> f64 {
        let mut l = 0.0;
        self.segments(x, |_, _, d| l += d.norm());
        l
    }

    /// Appends H = ∂L/∂x as sparse rows (node, 3-vector); a node may appear several times.
    /// ∂‖d‖/∂p_b = d/‖d‖ = −∂‖d‖/∂p_a.
    pub fn jacobian(&self, x: &[Vec3], rows: &mut Vec<(usize, Vec3)>) {
        self.segments(x, |a, b, d| {
            let u = d / d.norm();
            self.points[b].push_rows(u, rows);
            if let Some(a) = a {
                self.points[a].push_rows(-u, rows);
            }
        });
    }

    /// Adds `scale` · (∂H/∂x · dx)ᵀ — the second derivative of L applied to the displacement `dx` —
    /// into `out`: per segment (I − uuᵀ)(dp_b − dp_a)/‖d‖ on b, its opposite on a.
    pub fn hessian_action(&self, x: &[Vec3], dx: &[Vec3], scale: f64, out: &mut [Vec3]) {
        self.segments(x, |a, b, d| {
            let l = d.norm();
            let u = d / l;
            let mut ddp = self.points[b].position(dx);
            if let Some(a) = a {
                ddp -= self.points[a].position(dx);
            }
            let g = (Mat3::identity() - u * u.transpose()) * ddp * (scale / l);
            self.points[b].spread(g, out);
            if let Some(a) = a {
                self.points[a].spread(-g, out);
            }
        });
    }

    /// The node list of each segment (the nodes of its two points, or of its one embedded
    /// point after a fixed pull point): the nodes its tangent ∂²L/∂x² couples.
    pub fn segment_nodes(&self) -> Vec<Vec<usize>> {
        let mut out = Vec::new();
        let mut prev: Option<usize> = None;
        for (k, p) in self.points.iter().enumerate() {
            if k > 0 || self.pull_point.is_some() {
                let mut nodes = weighted(p).map(|(n, _)| n).collect::<Vec<_>>();
                if let Some(a) = prev {
                    nodes.extend(weighted(&self.points[a]).map(|(n, _)| n));
                }
                out.push(nodes);
            }
            prev = Some(k);
        }
        out
    }

    /// Calls `add(i, j, B)` for every ordered pair (i, j) of the weighted nodes of every
    /// segment, B = `scale` · cᵢcⱼ (I − uuᵀ)/‖d‖ (cᵢ = wᵢ on the segment's end point b, −wᵢ
    /// on its start a): the 3×3 blocks of `scale` · ∂²L/∂x² (1/m), a node pair possibly
    /// several times. The order of the calls depends on the cable's points only, not on `x`,
    /// so a caller can look up where each block goes once.
    pub fn hessian_blocks(&self, x: &[Vec3], scale: f64, mut add: impl FnMut(usize, usize, &Mat3)) {
        let mut coefficients: Vec<(usize, f64)> = Vec::with_capacity(8);
        self.segments(x, |a, b, d| {
            let l = d.norm();
            let u = d / l;
            let block = (Mat3::identity() - u * u.transpose()) * (scale / l);
            coefficients.clear();
            coefficients.extend(weighted(&self.points[b]));
            if let Some(a) = a {
                coefficients.extend(weighted(&self.points[a]).map(|(n, w)| (n, -w)));
            }
            for &(i, ci) in &coefficients {
                for &(j, cj) in &coefficients {
                    add(i, j, &(block * (ci * cj)));
                }
            }
        });
    }

    /// Adds `scale` · d/dx[(∂²L/∂x²) w] · dx, the derivative of the tangent's action on `w`
    /// in the direction `dx` (third derivative of L, symmetric in w and dx), into `out`: per
    /// segment with e = w_b − w_a, δ = dx_b − dx_a, δu = (I − uuᵀ)δ/‖d‖,
    /// g = −[δu (u·e) + u (δu·e)]/‖d‖ − (I − uuᵀ) e (u·δ)/‖d‖² on b, −g on a.
    pub fn hessian_derivative_action(
        &self,
        x: &[Vec3],
        w: &[Vec3],
        dx: &[Vec3],
        scale: f64,
        out: &mut [Vec3],
    ) {
        self.segments(x, |a, b, d| {
            let l = d.norm();
            let u = d / l;
            let mut e = self.points[b].position(w);
            let mut delta = self.points[b].position(dx);
            if let Some(a) = a {
                e -= self.points[a].position(w);
                delta -= self.points[a].position(dx);
            }
            let p = Mat3::identity() - u * u.transpose();
            let du = p * delta / l;
            let g = (-(du * u.dot(&e) + u * du.dot(&e)) / l - p * e * (u.dot(&delta) / (l * l)))
                * scale;
            self.points[b].spread(g, out);
            if let Some(a) = a {
                self.points[a].spread(-g, out);
            }
        });
    }
}

/// The (node, weight) pairs of `p` with a non-zero weight (fixed when the cable is built).
fn weighted(p: &EmbeddedPoint) -> impl Iterator<Item = (usize, f64)> + '_ {
    p.nodes
        .iter()
        .zip(&p.weights)
        .filter(|(_, w)| **w != 0.0)
        .map(|(n, w)| (*n, *w))
}
