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
}
