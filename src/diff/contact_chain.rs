//! The contact terms of the step derivative (paper 004 Eq. 10-11, paper 002 Appendix D),
//! chaining what `contact` owns: the NCP implicit derivative ([`NcpDerivative`]), the
//! derivatives of each contact's frame (the rows of H_c), contact-point weights and gap with
//! respect to the positions they are computed from, and the slopes of the penetration
//! correction.
//!
//! Every contact is a [`ContactPointSet`]: a contact point `Σ_k w_k x_{n(k)}` over one to four
//! nodes with signed weights and a frame F (columns `[t₁, t₂, n]`), whose rows of H_c read
//! `(H_c u)_i = F_iᵀ Σ_k w_k u_{n(k)}` (the relative velocity of the contact point). A node
//! against a static obstacle is the one-node case (w = 1, F and Φ functions of that node,
//! `Obstacle::frame_jacobian`, `Obstacle::gap_gradient`); a self-contact of a node p against a
//! triangle (a, b, c) of its own body has nodes (p, a, b, c), weights (1, −w_a, −w_b, −w_c),
//! and F, Φ and w functions of all four (`contact::TriangleHitDerivative`).
//!
//! σ = H_c v⁺ + e(Φ, H_c v) and `A v⁺ = … + h H_cᵀ λ`. For an input direction, with
//! `a = A⁻¹(rhs + h dH_cᵀ λ)` the contact-free part of dv⁺:
//!
//! ```text
//! dq = H_c a + dH_c v⁺ + de          (dσ with λ held)
//! dλ = N dq                          (NcpDerivative: modes breaking / sticking / sliding)
//! dv⁺ = a + h W dλ,   W = A⁻¹ H_cᵀ   (kept from the step's Delassus assembly)
//! ```
//!
//! with, per contact, `dH_c u = dFᵀ Σ w_k u_k + Fᵀ Σ dw_k u_k`,
//! `dF = Σ_j ∂F/∂x_j dx_j`, `dw_k = Σ_j ∇_j w_k · dx_j`, `dΦ = Σ_j ∇_jΦ · dx_j` (j over the
//! contact's nodes) and `de_N = s_Φ dΦ + s_v d(H_c v)_N`. The reverse sweep transposes each
//! line. Detection runs at the step's start positions, so all geometry depends on x only;
//! the contact set (which obstacle, which triangle) is that of the forward step (a contact
//! appearing or a node crossing onto another triangle inside a finite-difference interval is
//! a mode switch, outside the derivative's scope).

use crate::contact::{
    BoundaryGradient, NcpDerivative, NodeContact, PenetrationCorrection, SelfContact,
    TriangleHitDerivative, classify,
};
use crate::error::{Error, Result};
use crate::linalg::DofMap;
use crate::math::{DMat, Mat3, Vec3};
use crate::scene::{ContactWorkspace, Scene, mode_tolerance};

/// One contact as its derivatives see it: a contact point over up to four nodes of the body
/// with signed weights, its frame, gap, and their derivatives with respect to the positions
/// of those nodes (module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct ContactPointSet {
    len: usize,
    nodes: [usize; 4],
    weights: [f64; 4],
    frame: Mat3,
    gap: f64,
    /// `frame_jacobian[j][d]` = ∂F/∂x_{n(j), d} (1/m).
    frame_jacobian: [[Mat3; 3]; 4],
    /// ∇_{x_{n(j)}} Φ.
    gap_gradient: [Vec3; 4],
    /// `[k][j]` = ∇_{x_{n(j)}} w_k (1/m); `None` when the weights are constant.
    weight_gradient: Option<[[Vec3; 4]; 4]>,
    /// (s_Φ, s_v) of the penetration correction.
    slopes: (f64, f64),
}

impl ContactPointSet {
    /// The one-node set of an obstacle contact, its derivatives from the obstacle at the
    /// node's start position `p` (m).
    fn obstacle(
        c: &NodeContact,
        obstacle: &crate::contact::Obstacle,
        p: &Vec3,
        slopes: (f64, f64),
    ) -> Self {
        let mut frame_jacobian = [[Mat3::zeros(); 3]; 4];
        frame_jacobian[0] = obstacle.frame_jacobian(p);
        let mut gap_gradient = [Vec3::zeros(); 4];
        gap_gradient[0] = obstacle.gap_gradient(p);
        ContactPointSet {
            len: 1,
            nodes: [c.node; 4],
            weights: [1.0, 0.0, 0.0, 0.0],
            frame: c.frame,
            gap: c.gap,
            frame_jacobian,
            gap_gradient,
            weight_gradient: None,
            slopes,
        }
    }

    /// The four-node set (p, a, b, c) of a self-contact, its derivatives at the start
    /// positions `x` (m) of the body. Errors on a degenerate triangle.
    fn surface(c: &SelfContact, x: &[Vec3], slopes: (f64, f64)) -> Result<Self> {
        let d = TriangleHitDerivative::of_hit(&c.hit, &x[c.node], x).ok_or_else(|| {
            Error::invalid(
                format!("self-contact of node {}", c.node),
                "its triangle is degenerate at the start positions",
            )
        })?;
        let [a, b, t] = c.hit.vertices;
        let [wa, wb, wc] = c.hit.weights;
        let mut weight_gradient = [[Vec3::zeros(); 4]; 4];
        for (row, grad) in weight_gradient[1..].iter_mut().zip(&d.weight_gradient) {
            *row = grad.map(|g| -g);
        }
        Ok(ContactPointSet {
            len: 4,
            nodes: [c.node, a, b, t],
            weights: [1.0, -wa, -wb, -wc],
            frame: c.hit.frame,
            gap: c.hit.gap,
            frame_jacobian: d.frame_jacobian(),
            gap_gradient: d.gap_gradient,
            weight_gradient: Some(weight_gradient),
            slopes,
        })
    }

    /// The nodes of the contact point (the contact node first).
    pub fn nodes(&self) -> &[usize] {
        &self.nodes[..self.len]
    }

    /// Their signed weights: the contact's rows of H_c read `Fᵀ Σ_k w_k u_{n(k)}`.
    pub fn weights(&self) -> &[f64] {
        &self.weights[..self.len]
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
    fn relative(&self, u: &[Vec3]) -> Vec3 {
        (0..self.len)
            .map(|k| self.weights[k] * u[self.nodes[k]])
            .sum()
    }

    /// dF for the nodal displacement `dx`.
    fn frame_variation(&self, dx: &[Vec3]) -> Mat3 {
        let mut df = Mat3::zeros();
        for j in 0..self.len {
            let d = dx[self.nodes[j]];
            let jac = &self.frame_jacobian[j];
            df += jac[0] * d.x + jac[1] * d.y + jac[2] * d.z;
        }
        df
    }

    /// dΦ for the nodal displacement `dx`.
    fn gap_variation(&self, dx: &[Vec3]) -> f64 {
        (0..self.len)
            .map(|j| self.gap_gradient[j].dot(&dx[self.nodes[j]]))
            .sum()
    }

    /// Σ_k dw_k u_{n(k)} for the nodal displacement `dx` and nodal field `u` (zero when the
    /// weights are constant).
    fn weight_variation(&self, dx: &[Vec3], u: &[Vec3]) -> Vec3 {
        let Some(wg) = &self.weight_gradient else {
            return Vec3::zeros();
        };
        let mut out = Vec3::zeros();
        for k in 0..self.len {
            let dw: f64 = (0..self.len)
                .map(|j| wg[k][j].dot(&dx[self.nodes[j]]))
                .sum();
            out += dw * u[self.nodes[k]];
        }
        out
    }

    /// Adds Σ_k β_k ∇_j w_k to `xbar[n(j)]`, with β_k = `beta(u_{n(k)})` (the transpose of
    /// [`Self::weight_variation`]).
    fn add_weight_cotangent(&self, beta: impl Fn(usize) -> f64, xbar: &mut [Vec3]) {
        let Some(wg) = &self.weight_gradient else {
            return;
        };
        for (&node, grad) in self.nodes().iter().zip(wg) {
            let b = beta(node);
            if b != 0.0 {
                for (&n, g) in self.nodes().iter().zip(grad) {
                    xbar[n] += b * g;
                }
            }
        }
    }
}

/// One body's contacts in one step, with what their derivatives need.
pub struct ContactRecord {
    contacts: Vec<NodeContact>,
    self_contacts: Vec<SelfContact>,
    /// Every contact in NCP order (obstacle contacts, then self-contacts).
    sets: Vec<ContactPointSet>,
    lambda: Vec<f64>,
    ncp: NcpDerivative,
    /// W = A⁻¹ H_cᵀ over the free DOFs (n_free × 3k, column major).
    w: Vec<f64>,
}

impl ContactRecord {
    /// The contact part of a step record, from the contact stage's buffers `ws` after the
    /// step (its contacts, λ, G, g and A⁻¹H_cᵀ) and the start positions `x`. `None` without
    /// contact. Errors as [`NcpDerivative::new`], and on a degenerate self-contact triangle.
    pub(crate) fn build(
        scene: &Scene,
        ws: &ContactWorkspace,
        dofs: &DofMap,
        x: &[Vec3],
        boundary: BoundaryGradient,
    ) -> Result<Option<ContactRecord>> {
        let contacts = ws.contacts();
        let self_contacts = ws.self_contacts();
        let k = contacts.len() + self_contacts.len();
        if k == 0 {
            return Ok(None);
        }
        assert_eq!(
            3 * k,
            ws.lambda().len(),
            "a body's contacts are its obstacle contacts and self-contacts"
        );
        let h = scene.simulation.dt;
        let lambda = ws.lambda().to_vec();
        let delassus = ws.delassus();
        let sigma = ws.sigma().to_vec();
        let modes = classify(
            &lambda,
            &sigma,
            mode_tolerance(scene.contact.settings.tolerance),
        );
        let ncp = NcpDerivative::new(delassus, ws.friction(), &lambda, &sigma, &modes, boundary)?;
        // W = A⁻¹ H_cᵀ: the Delassus assembly of the step already solved for it.
        let w = ws.solved_columns().to_vec();
        assert_eq!(
            w.len(),
            dofs.n_reduced() * 3 * k,
            "the contact stage's A⁻¹H_cᵀ matches its contacts"
        );
        let correction = PenetrationCorrection::default();
        let mut sets = Vec::with_capacity(k);
        for c in contacts {
            let obstacle = &scene.contact.obstacles[c.obstacle];
            let slopes = correction.normal_slopes(h, c.gap)?;
            sets.push(ContactPointSet::obstacle(c, obstacle, &x[c.node], slopes));
        }
        for c in self_contacts {
            let slopes = correction.normal_slopes(h, c.gap())?;
            sets.push(ContactPointSet::surface(c, x, slopes)?);
        }
        Ok(Some(ContactRecord {
            contacts: contacts.to_vec(),
            self_contacts: self_contacts.to_vec(),
            sets,
            lambda,
            ncp,
            w,
        }))
    }

    /// Number of contacts (obstacle contacts and self-contacts).
    pub fn len(&self) -> usize {
        self.sets.len()
    }

    /// The obstacle contacts (node, obstacle, gap, frame), first in NCP order.
    pub fn contacts(&self) -> &[NodeContact] {
        &self.contacts
    }

    /// The self-contacts (node against a triangle of the body), in NCP order after the
    /// obstacle contacts.
    pub fn self_contacts(&self) -> &[SelfContact] {
        &self.self_contacts
    }

    /// Every contact as a contact point set, in NCP order (λ's order).
    pub fn point_sets(&self) -> &[ContactPointSet] {
        &self.sets
    }

    /// λ_c (N, 3 per contact in its frame `[t₁, t₂, n]`).
    pub fn lambda(&self) -> &[f64] {
        &self.lambda
    }

    /// Bytes held (W dominates: n_free × 3k values).
    pub fn bytes(&self) -> usize {
        8 * (self.w.len() + self.lambda.len())
            + std::mem::size_of::<ContactPointSet>() * self.sets.len()
            + std::mem::size_of::<NodeContact>() * self.contacts.len()
            + std::mem::size_of::<SelfContact>() * self.self_contacts.len()
    }

    /// Whether there is no contact.
    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    fn lambda_of(&self, i: usize) -> Vec3 {
        Vec3::new(
            self.lambda[3 * i],
            self.lambda[3 * i + 1],
            self.lambda[3 * i + 2],
        )
    }

    /// Adds h dH_c(dx)ᵀ λ (the force change from the moving frames and contact points) to
    /// the nodal `out`.
    pub(crate) fn add_force_variation(&self, dx: &[Vec3], h: f64, out: &mut [Vec3]) {
        for (i, s) in self.sets.iter().enumerate() {
            let l = self.lambda_of(i);
            let f = s.frame * l;
            let df = s.frame_variation(dx) * l;
            let dw: [f64; 4] = match &s.weight_gradient {
                Some(wg) => {
                    std::array::from_fn(|k| (0..s.len).map(|j| wg[k][j].dot(&dx[s.nodes[j]])).sum())
                }
                None => [0.0; 4],
            };
            for k in 0..s.len {
                out[s.nodes[k]] += h * (dw[k] * f + s.weights[k] * df);
            }
        }
    }

    /// dq = H_c a + dH_c(dx) v⁺ + de(dx, dv) (module doc); `a`, `dx`, `dv` nodal; `v` the
    /// start velocities, `v_plus` the end velocities.
    pub(crate) fn contact_velocity_variation(
        &self,
        a: &[Vec3],
        dx: &[Vec3],
        dv: &[Vec3],
        v: &[Vec3],
        v_plus: &[Vec3],
        dq: &mut [f64],
    ) {
        for (i, s) in self.sets.iter().enumerate() {
            let df = s.frame_variation(dx);
            let ft = s.frame.transpose();
            let mut q = ft * s.relative(a)
                + df.transpose() * s.relative(v_plus)
                + ft * s.weight_variation(dx, v_plus);
            let (s_phi, s_v) = s.slopes;
            let normal: Vec3 = s.frame.column(2).into_owned();
            let dn: Vec3 = df.column(2).into_owned();
            q.z += s_phi * s.gap_variation(dx)
                + s_v
                    * (normal.dot(&s.relative(dv))
                        + dn.dot(&s.relative(v))
                        + normal.dot(&s.weight_variation(dx, v)));
            dq[3 * i..3 * i + 3].copy_from_slice(q.as_slice());
        }
    }
    /// dλ for the contact-velocity variations `dq` (3k × directions).
    pub(crate) fn force_variation(&self, dq: &DMat, dlambda: &mut DMat) {
        self.ncp.tangent_many(dq, dlambda);
    }

    /// Adds h W dλ to the reduced `out`.
    pub(crate) fn add_response(&self, dlambda: &[f64], h: f64, out: &mut [f64]) {
        let n = out.len();
        for (r, d) in dlambda.iter().enumerate() {
            if *d != 0.0 {
                for (o, w) in out.iter_mut().zip(&self.w[r * n..(r + 1) * n]) {
                    *o += h * d * w;
                }
            }
        }
    }

    /// Reverse of the contact stage for a cotangent `vbar` (reduced) of dv⁺: returns q̄ and
    /// adds H_cᵀ q̄ to the nodal `abar`.
    pub(crate) fn velocity_cotangent(&self, vbar: &[f64], h: f64, abar: &mut [Vec3]) -> Vec<f64> {
        let n = vbar.len();
        let k3 = 3 * self.sets.len();
        let lambda_bar: Vec<f64> = (0..k3)
            .map(|r| {
                h * self.w[r * n..(r + 1) * n]
                    .iter()
                    .zip(vbar)
                    .map(|(a, b)| a * b)
                    .sum::<f64>()
            })
            .collect();
        let mut q_bar = vec![0.0; k3];
        self.ncp.cotangent(&lambda_bar, &mut q_bar);
        for (i, s) in self.sets.iter().enumerate() {
            let q = s.frame * Vec3::new(q_bar[3 * i], q_bar[3 * i + 1], q_bar[3 * i + 2]);
            for k in 0..s.len {
                abar[s.nodes[k]] += s.weights[k] * q;
            }
        }
        q_bar
    }

    /// Adds the transposes of the geometry terms of dq (dH_c v⁺ and de) for the cotangent
    /// `q_bar` to the nodal cotangents `xbar` and `vbar`.
    pub(crate) fn geometry_cotangent(
        &self,
        q_bar: &[f64],
        v: &[Vec3],
        v_plus: &[Vec3],
        xbar: &mut [Vec3],
        vbar: &mut [Vec3],
    ) {
        for (i, s) in self.sets.iter().enumerate() {
            let q = Vec3::new(q_bar[3 * i], q_bar[3 * i + 1], q_bar[3 * i + 2]);
            let (s_phi, s_v) = s.slopes;
            let (u_plus, u) = (s.relative(v_plus), s.relative(v));
            let normal: Vec3 = s.frame.column(2).into_owned();
            for j in 0..s.len {
                let n = s.nodes[j];
                for (d, dj) in s.frame_jacobian[j].iter().enumerate() {
                    let dn: Vec3 = dj.column(2).into_owned();
                    xbar[n][d] += q.dot(&(dj.transpose() * u_plus)) + q.z * s_v * dn.dot(&u);
                }
                xbar[n] += q.z * s_phi * s.gap_gradient[j];
            }
            // Fᵀ Σ dw_k v⁺_k and s_v n · Σ dw_k v_k.
            let fq = s.frame * q;
            s.add_weight_cotangent(
                |node| fq.dot(&v_plus[node]) + q.z * s_v * normal.dot(&v[node]),
                xbar,
            );
            for k in 0..s.len {
                vbar[s.nodes[k]] += q.z * s_v * s.weights[k] * normal;
            }
        }
    }

    /// Adds the transpose of h dH_c(dx)ᵀλ for the cotangent `rbar` (nodal) to `xbar`.
    pub(crate) fn force_cotangent(&self, rbar: &[Vec3], h: f64, xbar: &mut [Vec3]) {
        for (i, s) in self.sets.iter().enumerate() {
            let l = self.lambda_of(i);
            let rho = s.relative(rbar);
            for j in 0..s.len {
                let n = s.nodes[j];
                for (d, dj) in s.frame_jacobian[j].iter().enumerate() {
                    xbar[n][d] += h * rho.dot(&(dj * l));
                }
            }
            let f = s.frame * l;
            s.add_weight_cotangent(|node| h * rbar[node].dot(&f), xbar);
        }
    }
}
