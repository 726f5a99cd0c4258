//! One contact as the step's derivatives see it (`diff::contact_chain`): a contact point over
//! nodes with signed weights, its frame and gap, and their derivatives with respect to the
//! nodes' positions (paper 004 Eq. 10-11, paper 002 Appendix D), built over contact points (a
//! node against an obstacle, a node against a triangle) and expanded onto the nodes of
//! embedded contact surfaces.

use crate::contact::{ContactPoints, NodeContact, TriangleHit, TriangleHitDerivative};
use crate::error::{Error, Result};
use crate::math::{Mat3, Vec3};

/// One contact as its derivatives see it: a contact point over nodes (each a (body, node)
/// pair) with signed weights, its frame, gap, and their derivatives with respect to the
/// positions of those nodes (module doc). Built over contact points (a node, or a vertex of
/// an embedded contact surface) and expanded onto the nodes by `ContactPointSet::embed`; a
/// node may appear in several entries (their terms add up).
#[derive(Debug, Clone, PartialEq)]
pub struct ContactPointSet {
    pub(super) nodes: Vec<(usize, usize)>,
    pub(super) weights: Vec<f64>,
    pub(super) frame: Mat3,
    pub(super) gap: f64,
    /// `frame_jacobian[j][d]` = ∂F/∂x_{n(j), d} (1/m).
    pub(super) frame_jacobian: Vec<[Mat3; 3]>,
    /// ∇_{x_{n(j)}} Φ.
    pub(super) gap_gradient: Vec<Vec3>,
    /// `[k][j]` = ∇_{x_{n(j)}} w_k (1/m); `None` when the weights are constant.
    pub(super) weight_gradient: Option<Vec<Vec<Vec3>>>,
    /// (s_Φ, s_v) of the penetration correction.
    pub(super) slopes: (f64, f64),
}

/// The most entries a set has: a vertex of an embedded surface (4 nodes) against an embedded
/// triangle (3 × 4).
const MAX_ENTRIES: usize = 16;

impl ContactPointSet {
    /// The one-point set of an obstacle contact of body `body` (its contact point `c.node`),
    /// its derivatives from the obstacle at the point's start position `p` (m).
    pub(super) fn obstacle(
        body: usize,
        c: &NodeContact,
        obstacle: &crate::contact::Obstacle,
        p: &Vec3,
        slopes: (f64, f64),
    ) -> Self {
        ContactPointSet {
            nodes: vec![(body, c.node)],
            weights: vec![1.0],
            frame: c.frame,
            gap: c.gap,
            frame_jacobian: vec![obstacle.frame_jacobian(p)],
            gap_gradient: vec![obstacle.gap_gradient(p)],
            weight_gradient: None,
            slopes,
        }
    }

    /// The four-node set (p, a, b, c) of node `node` of body `node_body` against the triangle
    /// of `hit` on body `face_body`, its derivatives at the start positions `x` (m, per
    /// body). Errors on a degenerate triangle.
    pub(super) fn surface(
        (node_body, node): (usize, usize),
        face_body: usize,
        hit: &TriangleHit,
        x: &[&[Vec3]],
        slopes: (f64, f64),
    ) -> Result<Self> {
        let d = TriangleHitDerivative::of_hit(hit, &x[node_body][node], x[face_body]).ok_or_else(
            || {
                Error::invalid(
                    format!("contact of node {node} of body {node_body}"),
                    "its triangle is degenerate at the start positions",
                )
            },
        )?;
        let [a, b, t] = hit.vertices;
        let [wa, wb, wc] = hit.weights;
        let mut weight_gradient = vec![vec![Vec3::zeros(); 4]; 4];
        for (row, grad) in weight_gradient[1..].iter_mut().zip(&d.weight_gradient) {
            *row = grad.iter().map(|g| -g).collect();
        }
        Ok(ContactPointSet {
            nodes: vec![
                (node_body, node),
                (face_body, a),
                (face_body, b),
                (face_body, t),
            ],
            weights: vec![1.0, -wa, -wb, -wc],
            frame: hit.frame,
            gap: hit.gap,
            frame_jacobian: d.frame_jacobian().to_vec(),
            gap_gradient: d.gap_gradient.to_vec(),
            weight_gradient: Some(weight_gradient),
            slopes,
        })
    }

    /// The set over the nodes, from this set over contact points (each entry's (body, point)
    /// one of `points(body)`, `contact::ContactPoints`): an embedded vertex p_k = Σ_i e_ki x_i
    /// turns its entry into one per node, with weight w_k e_ki, ∂F/∂x_i = e_ki ∂F/∂p_k,
    /// ∇_{x_i}Φ = e_ki ∇_{p_k}Φ and ∇_{x_l} (w_k e_ki) = e_ki e_jl ∇_{p_j} w_k (constant e).
    /// Unchanged when every point is a node.
    pub(super) fn embed<'a>(self, points: impl Fn(usize) -> &'a ContactPoints) -> Self {
        if self.nodes.iter().all(|&(b, _)| !points(b).is_embedded()) {
            return self;
        }
        // (entry, node, e) for each node of each entry.
        let mut spread = Vec::with_capacity(MAX_ENTRIES);
        for (k, &(b, p)) in self.nodes.iter().enumerate() {
            let (w, len) = points(b).weights(p);
            spread.extend(w[..len].iter().map(|&(n, e)| (k, (b, n), e)));
        }
        let weight_gradient = self.weight_gradient.as_ref().map(|g| {
            spread
                .iter()
                .map(|&(k, _, e)| spread.iter().map(|&(j, _, f)| e * f * g[k][j]).collect())
                .collect()
        });
        ContactPointSet {
            nodes: spread.iter().map(|&(_, n, _)| n).collect(),
            weights: spread
                .iter()
                .map(|&(k, _, e)| self.weights[k] * e)
                .collect(),
            frame: self.frame,
            gap: self.gap,
            frame_jacobian: spread
                .iter()
                .map(|&(k, _, e)| self.frame_jacobian[k].map(|m| m * e))
                .collect(),
            gap_gradient: spread
                .iter()
                .map(|&(k, _, e)| self.gap_gradient[k] * e)
                .collect(),
            weight_gradient,
            slopes: self.slopes,
        }
    }

    /// The (body, node) pairs of the contact point (the contact node first).
    pub fn nodes(&self) -> &[(usize, usize)] {
        &self.nodes
    }

    /// Their signed weights: the contact's rows of H_c read `Fᵀ Σ_k w_k u_{n(k)}`.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// The frame F (columns `[t₁, t₂, n]`, world frame).
    pub fn frame(&self) -> &Mat3 {
        &self.frame
    }

    /// The signed gap Φ at the start of the step (m).
    pub fn gap(&self) -> f64 {
        self.gap
    }

    /// Σ_k w_k u_{n(k)}: the contact point's relative value of the nodal field `u`.
    pub(super) fn relative(&self, u: &impl Fn(usize, usize) -> Vec3) -> Vec3 {
        self.nodes()
            .iter()
            .zip(self.weights())
            .map(|(&(b, n), w)| *w * u(b, n))
            .sum()
    }

    /// dF for the nodal displacement `dx`.
    pub(super) fn frame_variation(&self, dx: &impl Fn(usize, usize) -> Vec3) -> Mat3 {
        let mut df = Mat3::zeros();
        for (&(b, n), jac) in self.nodes().iter().zip(&self.frame_jacobian) {
            let d = dx(b, n);
            df += jac[0] * d.x + jac[1] * d.y + jac[2] * d.z;
        }
        df
    }

    /// dΦ for the nodal displacement `dx`.
    pub(super) fn gap_variation(&self, dx: &impl Fn(usize, usize) -> Vec3) -> f64 {
        self.nodes()
            .iter()
            .zip(&self.gap_gradient)
            .map(|(&(b, n), g)| g.dot(&dx(b, n)))
            .sum()
    }

    /// dw_k for the nodal displacement `dx` (zeros when the weights are constant).
    pub(super) fn weight_variations(
        &self,
        dx: &impl Fn(usize, usize) -> Vec3,
    ) -> [f64; MAX_ENTRIES] {
        let mut dw = [0.0; MAX_ENTRIES];
        let Some(wg) = &self.weight_gradient else {
            return dw;
        };
        for (d, row) in dw.iter_mut().zip(wg) {
            *d = self
                .nodes()
                .iter()
                .zip(row)
                .map(|(&(b, n), g)| g.dot(&dx(b, n)))
                .sum();
        }
        dw
    }

    /// Σ_k dw_k u_{n(k)}.
    pub(super) fn weighted(
        &self,
        dw: &[f64; MAX_ENTRIES],
        u: &impl Fn(usize, usize) -> Vec3,
    ) -> Vec3 {
        self.nodes()
            .iter()
            .zip(dw)
            .map(|(&(b, n), w)| *w * u(b, n))
            .sum()
    }

    /// Adds Σ_k β_k ∇_j w_k to `xbar` at node j, with β_k = `beta(n(k))` (the transpose of
    /// Σ_k dw_k β_k).
    pub(super) fn add_weight_cotangent(
        &self,
        beta: impl Fn(usize, usize) -> f64,
        xbar: &mut [Vec<Vec3>],
    ) {
        let Some(wg) = &self.weight_gradient else {
            return;
        };
        for (&(bk, nk), grad) in self.nodes().iter().zip(wg) {
            let beta_k = beta(bk, nk);
            if beta_k != 0.0 {
                for (&(b, n), g) in self.nodes().iter().zip(grad) {
                    xbar[b][n] += beta_k * g;
                }
            }
        }
    }
}
