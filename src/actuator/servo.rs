//! A servo: a set of mesh nodes (the horn) turned about a fixed axis. Model: the servo's
//! coordinate δ(x) = Σᵢ wᵢ φᵢ(x) (rad) is the mean rotation angle of its nodes about the axis,
//! φᵢ the angle from node i's rest position to its current one in the plane normal to the
//! axis, weighted by wᵢ = ρᵢ²/Σρ² (ρᵢ the rest distance to the axis), which is the rigid
//! rotation angle when the nodes turn rigidly. Its conjugate λ is the torque about the axis
//! (N·m): the nodal forces λ wᵢ ∇φᵢ = λ wᵢ (a × dᵢ⊥)/|dᵢ⊥|² sum to exactly λ about the axis
//! and are ∝ ρᵢ, the load distribution of a rigid horn. This is the paper's H_a along the
//! servo's degree of freedom, without making the horn rigid. Nodes on the axis carry no weight.

use crate::math::Vec3;

/// One driven node: index, weight, and its rest in-plane frame (e1 along the rest radius,
/// e2 = a × e1).
#[derive(Debug, Clone, Copy, PartialEq)]
struct ServoNode {
    node: usize,
    weight: f64,
    e1: Vec3,
    e2: Vec3,
}

/// A servo's geometry: axis and driven nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Servo {
    /// A point on the axis (m).
    pub origin: Vec3,
    /// Unit axis direction (rotation positive by the right-hand rule).
    pub axis: Vec3,
    nodes: Vec<ServoNode>,
}

impl Servo {
    /// The servo turning `nodes` (rest positions `rest`, m) about the axis through `origin`
    /// along `direction` (any length > 0). Returns None when no node lies off the axis.
    pub fn new(origin: Vec3, direction: Vec3, nodes: &[usize], rest: &[Vec3]) -> Option<Servo> {
        let axis = direction.try_normalize(0.0)?;
        let scale = nodes
            .iter()
            .map(|&n| (rest[n] - origin).norm())
            .fold(0.0, f64::max);
        let mut driven = Vec::new();
        for &n in nodes {
            let d = rest[n] - origin;
            let perp = d - axis * axis.dot(&d);
            let rho = perp.norm();
            if rho > 1e-9 * scale {
                let e1 = perp / rho;
                driven.push(ServoNode {
                    node: n,
                    weight: rho * rho,
                    e1,
                    e2: axis.cross(&e1),
                });
            }
        }
        let total: f64 = driven.iter().map(|s| s.weight).sum();
        if driven.is_empty() {
            return None;
        }
        driven.iter_mut().for_each(|s| s.weight /= total);
        Some(Servo {
            origin,
            axis,
            nodes: driven,
        })
    }

    /// Where the rest point `rest` (m) goes when the horn turns rigidly by `theta` (rad) about
    /// the axis: o + R(θ)(X − o), R the right-handed rotation about `axis`.
    pub fn rotate(&self, theta: f64, rest: Vec3) -> Vec3 {
        let r =
            nalgebra::Rotation3::from_axis_angle(&nalgebra::Unit::new_unchecked(self.axis), theta);
        self.origin + r * (rest - self.origin)
    }

    /// In-plane coordinates (u, v) of node s at positions x.
    #[inline]
    fn plane(&self, s: &ServoNode, x: &[Vec3]) -> (f64, f64) {
        let d = x[s.node] - self.origin;
        (d.dot(&s.e1), d.dot(&s.e2))
    }

    /// δ(x) = Σ wᵢ atan2(vᵢ, uᵢ) (rad), the weighted mean rotation about the axis from rest
    /// (each φᵢ in (−π, π]).
    pub fn value(&self, x: &[Vec3]) -> f64 {
        self.nodes
            .iter()
            .map(|s| {
                let (u, v) = self.plane(s, x);
                s.weight * v.atan2(u)
            })
            .sum()
    }

    /// Appends H = ∂δ/∂x: wᵢ (uᵢ e2 − vᵢ e1)/(uᵢ² + vᵢ²) per node (1/m).
    pub fn jacobian(&self, x: &[Vec3], rows: &mut Vec<(usize, Vec3)>) {
        for s in &self.nodes {
            let (u, v) = self.plane(s, x);
            let r2 = u * u + v * v;
            rows.push((s.node, s.weight * (u * s.e2 - v * s.e1) / r2));
        }
    }

    /// Adds `scale` · (∂H/∂x · dx)ᵀ into `out`: with φ = atan2(v, u), φ_uu = −φ_vv = 2uv/r⁴,
    /// φ_uv = (v² − u²)/r⁴.
    pub fn hessian_action(&self, x: &[Vec3], dx: &[Vec3], scale: f64, out: &mut [Vec3]) {
        for s in &self.nodes {
            let (u, v) = self.plane(s, x);
            let r4 = (u * u + v * v).powi(2);
            let (puu, puv) = (2.0 * u * v / r4, (v * v - u * u) / r4);
            let (du, dv) = (dx[s.node].dot(&s.e1), dx[s.node].dot(&s.e2));
            out[s.node] +=
                scale * s.weight * ((puu * du + puv * dv) * s.e1 + (puv * du - puu * dv) * s.e2);
        }
    }
}
