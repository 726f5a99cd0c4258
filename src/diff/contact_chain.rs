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
//! and F, Φ and w functions of all four (`contact::TriangleHitDerivative`); a contact between
//! bodies is the same with p in one body and (a, b, c) in the other. Nodes are (body, node)
//! pairs. On a body with an embedded contact surface (`[soft_body.contact] surface`) p, a, b
//! and c are its surface's vertices, each over four nodes with constant weights, and the set
//! is expanded onto those nodes (up to 16, `ContactPointSet::embed`).
//!
//! One [`ContactRecord`] per NCP of the step: a group of bodies that touch each other
//! (`scene::step::contact::group`), or one body alone (P_b = I). Its quantities are the group's:
//! with P_b placing body b's rows among the group's,
//!
//! ```text
//! dq = Σ_b P_b (H_b a_b + geometry terms_b),   dλ = N dq,   dv_b⁺ = a_b + h W_b P_bᵀ dλ
//! ```
//!
//! (W_b = A_b⁻¹ H_bᵀ, the body's `ContactWorkspace::solved_columns`), and the reverse sweep
//! λ̄ = Σ_b P_b h W_bᵀ ā_b, q̄ = Nᵀ λ̄, ā_b += H_bᵀ P_bᵀ q̄.
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
//!
//! Rows with a rigid part, or whose geometry moves with a rigid shape (the rigid stage's own
//! contacts and limits, soft nodes against rigid shapes, rigid corners against soft triangles,
//! attachments), follow the soft ones in the NCP and are chained by `diff::row_chain`
//! ([`ContactRecord`]'s `chain`; docs/derivatives.md "Mixed steps").

use crate::contact::{
    BodyContact, BoundaryGradient, NcpDerivative, NodeContact, PenetrationCorrection, SelfContact,
};
use crate::error::Result;
use crate::math::{DMat, Vec3};
use crate::scene::{ContactWorkspace, GroupNcp, RigidWorkspace, Scene};

use super::chain_rows::{LocalNodes, rigid_rows, soft_rigid_rows};
use super::contact_point_set::ContactPointSet;
use super::group_ncp_derivative::{friction_directions, ncp_derivative};
use super::rigid_record::RigidRecord;
use super::row_chain::{ChainPoint, RowChain};

/// One member body of a [`ContactRecord`]'s NCP.
struct Member {
    body: usize,
    /// The group contact index of each of the body's contacts (P_b).
    rows: Vec<usize>,
    /// W_b = A_b⁻¹ H_bᵀ over the body's free DOFs (n_free × 3·rows, column major).
    w: Vec<f64>,
}

/// The contacts of one NCP of a step (one body, or a group of bodies touching each other),
/// with what their derivatives need (module doc).
pub struct ContactRecord {
    members: Vec<Member>,
    contacts: Vec<(usize, NodeContact)>,
    self_contacts: Vec<(usize, SelfContact)>,
    body_contacts: Vec<BodyContact>,
    /// Every contact in NCP order (per member: obstacle contacts, self-contacts; then the
    /// contacts between members).
    sets: Vec<ContactPointSet>,
    lambda: Vec<f64>,
    ncp: NcpDerivative,
    /// Whether each contact (row block, NCP order) is bilateral: an attachment, not a contact.
    bilateral: Vec<bool>,
    /// Per obstacle some contact slides on: ∂λ/∂μ_o (3 per contact, NCP order).
    friction: Vec<(usize, Vec<f64>)>,
    /// The rows with a rigid part or moving with a rigid shape (after `sets` in the NCP).
    pub(crate) chain: Option<RowChain>,
}

/// The soft bodies' start positions and velocities and their end velocities, per body
/// (m, m/s).
pub(crate) struct SoftStart<'a> {
    pub(crate) x: &'a [&'a [Vec3]],
    pub(crate) v: &'a [&'a [Vec3]],
    pub(crate) v_plus: &'a [&'a [Vec3]],
}

impl ContactRecord {
    /// The record of the NCP of bodies `members` (scene order, increasing) after the step:
    /// each member's contact buffers `ws[b]` (its contacts, rows, λ, σ, its term of G and
    /// A_b⁻¹H_bᵀ), the stage's contacts between bodies `between`, and the start positions
    /// `x` of every body. `None` without contact. Errors as [`NcpDerivative::new`], and on a
    /// degenerate contact triangle.
    pub(crate) fn build(
        scene: &Scene,
        ncp: &GroupNcp,
        ws: &[&ContactWorkspace],
        between: &[BodyContact],
        start: &SoftStart<'_>,
        rigid: (&RigidWorkspace, Option<&RigidRecord>),
        boundary: BoundaryGradient,
    ) -> Result<Option<ContactRecord>> {
        // The derivative reuses G and the columns A_b⁻¹ H_bᵀ of its assembly.
        ncp.assembled_delassus()?;
        let x = start.x;
        let h = scene.simulation.dt;
        let members = ncp.members();
        let correction = PenetrationCorrection::default();
        // Each body's contact points and their start positions (x itself for nodes).
        let points = |b: usize| ws[b].points();
        let filled: Vec<Vec<Vec3>> = (0..x.len())
            .map(|b| {
                let mut out = Vec::new();
                ws[b].points().fill(x[b], &mut out);
                out
            })
            .collect();
        let xp: Vec<&[Vec3]> = (0..x.len())
            .map(|b| ws[b].points().field(x[b], &filled[b]))
            .collect();
        let mut sets = Vec::new();
        let mut contacts = Vec::new();
        let mut self_contacts = Vec::new();
        for &b in members {
            let w = ws[b];
            for c in w.contacts() {
                let obstacle = &scene.contact.obstacles[c.obstacle];
                let slopes = correction.normal_slopes(h, c.gap)?;
                let p = w.points().value(x[b], c.node);
                sets.push(ContactPointSet::obstacle(b, c, obstacle, &p, slopes).embed(points));
                contacts.push((b, *c));
            }
            for c in w.self_contacts() {
                let slopes = correction.normal_slopes(h, c.gap())?;
                sets.push(
                    ContactPointSet::surface((b, c.node), b, &c.hit, &xp, slopes)?.embed(points),
                );
                self_contacts.push((b, *c));
            }
        }
        let mut body_contacts = Vec::new();
        if members.len() > 1 {
            for c in between {
                if members.binary_search(&c.node_body).is_err() {
                    continue;
                }
                let slopes = correction.normal_slopes(h, c.gap())?;
                sets.push(
                    ContactPointSet::surface(
                        (c.node_body, c.node),
                        c.face_body,
                        &c.hit,
                        &xp,
                        slopes,
                    )?
                    .embed(points),
                );
                body_contacts.push(*c);
            }
        }
        let k = sets.len();
        // The rows with a rigid part or moving with a rigid shape: each member's rows against
        // the rigid part, then the rigid stage's own rows when this NCP holds them.
        let (rigid_ws, rigid_rec) = rigid;
        let mut local = LocalNodes::default();
        let mut chain_rows = Vec::new();
        for &b in members {
            let w = ws[b];
            let rr = w.rigid_rows();
            if !rr.is_empty() {
                let blocks = &w.rows()[w.rows().len() - rr.len()..];
                chain_rows.extend(soft_rigid_rows(
                    scene, rigid_ws, rigid_rec, b, rr, blocks, x[b], &mut local,
                )?);
            }
        }
        if 3 * (k + chain_rows.len()) < ncp.lambda().len() {
            let rec = rigid_rec.expect("an NCP with rigid rows has a rigid record");
            let first = chain_rows.len();
            chain_rows.extend(rigid_rows(scene, rigid_ws, rec, first)?);
        }
        if k + chain_rows.len() == 0 {
            return Ok(None);
        }
        assert_eq!(
            3 * (k + chain_rows.len()),
            ncp.lambda().len(),
            "one λ per contact of the NCP"
        );
        let mut own = 0;
        let mut out_members = Vec::with_capacity(members.len());
        for &b in members {
            let w = ws[b];
            let rows = w.rows();
            let n_own = w.contacts().len() + w.self_contacts().len();
            assert!(
                rows.len() >= n_own && (0..n_own).all(|i| rows[i] == own + i),
                "the NCP's rows are per body: obstacle contacts, self-contacts"
            );
            own += n_own;
            let cols = w.solved_columns();
            let n_free = scene.bodies[b].pattern().dofs().n_reduced();
            assert_eq!(
                cols.len(),
                n_free * 3 * rows.len(),
                "the contact stage's A⁻¹H_cᵀ matches the body's contacts"
            );
            out_members.push(Member {
                body: b,
                rows: rows.to_vec(),
                w: cols.to_vec(),
            });
        }
        assert_eq!(own + body_contacts.len(), k, "every contact of the NCP");
        let lambda = ncp.lambda().to_vec();
        let chain = if chain_rows.is_empty() {
            None
        } else {
            let chain_lambda: Vec<f64> = chain_rows
                .iter()
                .flat_map(|r| lambda[3 * r.block..3 * r.block + 3].iter().copied())
                .collect();
            let velocities = |v: &[&[Vec3]]| -> Vec<Vec3> {
                local.nodes.iter().map(|&(b, n)| v[b][n]).collect()
            };
            let (v_soft, v_plus_soft) = (velocities(start.v), velocities(start.v_plus));
            let (v_rigid, v_plus_rigid) =
                rigid_rec.map(RigidRecord::velocities).unwrap_or_default();
            let no_offsets = [0];
            let offsets: &[usize] = rigid_rec.map_or(&no_offsets, |r| &r.offsets);
            Some(RowChain::new(
                &scene.rigid,
                offsets,
                chain_rows,
                local.nodes,
                &ChainPoint {
                    v_rigid: &v_rigid,
                    v_plus_rigid: &v_plus_rigid,
                    v_soft: &v_soft,
                    v_plus_soft: &v_plus_soft,
                    lambda: &chain_lambda,
                    h,
                },
            )?)
        };
        let bilateral = ncp.bilateral().to_vec();
        let group = ncp;
        let ncp = ncp_derivative(scene, group, boundary)?;
        let friction = friction_directions(group, &ncp);
        Ok(Some(ContactRecord {
            members: out_members,
            contacts,
            self_contacts,
            body_contacts,
            sets,
            lambda,
            ncp,
            bilateral,
            friction,
            chain,
        }))
    }

    /// Number of contacts of the NCP.
    pub fn len(&self) -> usize {
        self.sets.len()
    }

    /// Whether there is no contact.
    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// The bodies of the NCP (scene indices, increasing).
    pub fn bodies(&self) -> impl Iterator<Item = usize> + '_ {
        self.members.iter().map(|m| m.body)
    }

    /// The obstacle contacts (body, contact), in NCP order.
    pub fn contacts(&self) -> &[(usize, NodeContact)] {
        &self.contacts
    }

    /// The self-contacts (body, contact: node against a triangle of the same body), in NCP
    /// order.
    pub fn self_contacts(&self) -> &[(usize, SelfContact)] {
        &self.self_contacts
    }

    /// The contacts between bodies of the NCP, in NCP order (after every member's own).
    pub fn body_contacts(&self) -> &[BodyContact] {
        &self.body_contacts
    }

    /// Every contact as a contact point set, in NCP order (λ's order).
    pub fn point_sets(&self) -> &[ContactPointSet] {
        &self.sets
    }

    /// λ_c of the NCP (N, 3 per contact in its frame `[t₁, t₂, n]`).
    pub fn lambda(&self) -> &[f64] {
        &self.lambda
    }

    /// Body `body`'s rows of λ_c (its contacts in its own order: obstacle contacts,
    /// self-contacts, contacts with other bodies and rigid shapes); empty if it is not a
    /// member. Attachments hold a body rather than touch it, so their rows are left out.
    pub fn body_lambda(&self, body: usize) -> Vec<f64> {
        let mut out = Vec::new();
        self.gather_body(body, &self.lambda, &mut out);
        out
    }

    /// Number of contacts body `body` takes part in.
    pub fn body_contact_count(&self, body: usize) -> usize {
        self.member(body).map_or(0, |m| m.rows.len())
    }

    fn member(&self, body: usize) -> Option<&Member> {
        self.members.iter().find(|m| m.body == body)
    }

    /// Bytes held (the W_b dominate: n_free × 3 rows values per body).
    pub fn bytes(&self) -> usize {
        self.members
            .iter()
            .map(|m| 8 * (m.w.len() + m.rows.len()))
            .sum::<usize>()
            + 8 * self.lambda.len()
            + std::mem::size_of::<ContactPointSet>() * self.sets.len()
            + std::mem::size_of::<(usize, NodeContact)>() * self.contacts.len()
            + std::mem::size_of::<(usize, SelfContact)>() * self.self_contacts.len()
            + std::mem::size_of::<BodyContact>() * self.body_contacts.len()
            + self.chain.as_ref().map_or(0, RowChain::bytes)
    }

    fn lambda_of(&self, i: usize) -> Vec3 {
        Vec3::new(
            self.lambda[3 * i],
            self.lambda[3 * i + 1],
            self.lambda[3 * i + 2],
        )
    }

    /// Adds h dH_c(dx)ᵀ λ (the force change from the moving frames and contact points) to
    /// the nodal `out` (per body).
    pub(crate) fn add_force_variation(
        &self,
        dx: impl Fn(usize, usize) -> Vec3,
        h: f64,
        out: &mut [Vec<Vec3>],
    ) {
        for (i, s) in self.sets.iter().enumerate() {
            let l = self.lambda_of(i);
            let f = s.frame * l;
            let df = s.frame_variation(&dx) * l;
            let dw = s.weight_variations(&dx);
            for ((&(b, n), w), dw) in s.nodes().iter().zip(s.weights()).zip(dw) {
                out[b][n] += h * (dw * f + *w * df);
            }
        }
    }

    /// dq = Σ_b P_b H_b a_b + dH_c(dx) v⁺ + de(dx, dv) (module doc); `a`, `dx`, `dv`, `v`
    /// (start velocities) and `v_plus` (end velocities) nodal fields per (body, node).
    pub(crate) fn contact_velocity_variation(
        &self,
        a: impl Fn(usize, usize) -> Vec3,
        dx: impl Fn(usize, usize) -> Vec3,
        dv: impl Fn(usize, usize) -> Vec3,
        v: impl Fn(usize, usize) -> Vec3,
        v_plus: impl Fn(usize, usize) -> Vec3,
        dq: &mut [f64],
    ) {
        for (i, s) in self.sets.iter().enumerate() {
            let df = s.frame_variation(&dx);
            let dw = s.weight_variations(&dx);
            let ft = s.frame.transpose();
            let mut q = ft * s.relative(&a)
                + df.transpose() * s.relative(&v_plus)
                + ft * s.weighted(&dw, &v_plus);
            let (s_phi, s_v) = s.slopes;
            let normal: Vec3 = s.frame.column(2).into_owned();
            let dn: Vec3 = df.column(2).into_owned();
            q.z += s_phi * s.gap_variation(&dx)
                + s_v
                    * (normal.dot(&s.relative(&dv))
                        + dn.dot(&s.relative(&v))
                        + normal.dot(&s.weighted(&dw, &v)));
            dq[3 * i..3 * i + 3].copy_from_slice(q.as_slice());
        }
    }

    /// dλ for the contact-velocity variations `dq` (3k × directions).
    pub(crate) fn force_variation(&self, dq: &DMat, dlambda: &mut DMat) {
        self.ncp.tangent_many(dq, dlambda);
    }

    /// Adds h W_b P_bᵀ dλ to body `body`'s reduced `out` (`dlambda` one direction of the
    /// NCP's dλ).
    pub(crate) fn add_response(&self, body: usize, dlambda: &[f64], h: f64, out: &mut [f64]) {
        let Some(m) = self.member(body) else {
            return;
        };
        let n = out.len();
        for (i, &g) in m.rows.iter().enumerate() {
            for p in 0..3 {
                let d = dlambda[3 * g + p];
                let r = 3 * i + p;
                if d != 0.0 {
                    for (o, w) in out.iter_mut().zip(&m.w[r * n..(r + 1) * n]) {
                        *o += h * d * w;
                    }
                }
            }
        }
    }

    /// Body `body`'s rows of one direction of dλ (`dlambda`), appended to `out`: its
    /// contacts', in [`ContactRecord::body_lambda`]'s order (attachments left out).
    pub(crate) fn gather_body(&self, body: usize, dlambda: &[f64], out: &mut Vec<f64>) {
        if let Some(m) = self.member(body) {
            out.extend(
                m.rows
                    .iter()
                    .filter(|&&g| !self.bilateral[g])
                    .flat_map(|&g| dlambda[3 * g..3 * g + 3].iter().copied()),
            );
        }
    }

    /// Reverse of the NCP for the cotangents `vbar(b)` (reduced, per member body) of dv_b⁺:
    /// λ̄ = Σ_b P_b h W_bᵀ v̄_b + `extra` (the rigid rows' part, by block; empty for none),
    /// returns q̄ = Nᵀ λ̄ (by block) and λ̄.
    pub(crate) fn velocity_cotangent<'a>(
        &self,
        vbar: impl Fn(usize) -> &'a [f64],
        h: f64,
        extra: &[f64],
    ) -> (Vec<f64>, Vec<f64>) {
        let k3 = 3 * self.block_count();
        let mut lambda_bar = vec![0.0; k3];
        for (l, e) in lambda_bar.iter_mut().zip(extra) {
            *l += e;
        }
        for m in &self.members {
            let vb = vbar(m.body);
            let n = vb.len();
            for (i, &g) in m.rows.iter().enumerate() {
                for p in 0..3 {
                    let r = 3 * i + p;
                    lambda_bar[3 * g + p] += h * m.w[r * n..(r + 1) * n]
                        .iter()
                        .zip(vb)
                        .map(|(a, b)| a * b)
                        .sum::<f64>();
                }
            }
        }
        let mut q_bar = vec![0.0; k3];
        self.ncp.cotangent(&lambda_bar, &mut q_bar);
        (q_bar, lambda_bar)
    }

    /// ∂λ/∂μ_o of this NCP (3 per contact, N per unit μ) for the obstacle `obstacle`'s
    /// friction coefficient, if some contact of the NCP slides on it (else μ_o does not move
    /// λ to first order).
    pub(crate) fn friction_direction(&self, obstacle: usize) -> Option<&[f64]> {
        self.friction
            .iter()
            .find(|(o, _)| *o == obstacle)
            .map(|(_, t)| t.as_slice())
    }

    /// Adds H_cᵀ q̄ to the nodal `abar` (per body).
    pub(crate) fn add_jacobian_transpose(&self, q_bar: &[f64], abar: &mut [Vec<Vec3>]) {
        for (i, s) in self.sets.iter().enumerate() {
            let q = s.frame * Vec3::new(q_bar[3 * i], q_bar[3 * i + 1], q_bar[3 * i + 2]);
            for (&(b, n), w) in s.nodes().iter().zip(s.weights()) {
                abar[b][n] += *w * q;
            }
        }
    }

    /// Adds the transposes of the geometry terms of dq (dH_c v⁺ and de) for the cotangent
    /// `q_bar` to the nodal cotangents `xbar` and `vbar` (per body).
    pub(crate) fn geometry_cotangent(
        &self,
        q_bar: &[f64],
        v: impl Fn(usize, usize) -> Vec3,
        v_plus: impl Fn(usize, usize) -> Vec3,
        xbar: &mut [Vec<Vec3>],
        vbar: &mut [Vec<Vec3>],
    ) {
        for (i, s) in self.sets.iter().enumerate() {
            let q = Vec3::new(q_bar[3 * i], q_bar[3 * i + 1], q_bar[3 * i + 2]);
            let (s_phi, s_v) = s.slopes;
            let (u_plus, u) = (s.relative(&v_plus), s.relative(&v));
            let normal: Vec3 = s.frame.column(2).into_owned();
            for ((&(b, n), jac), gg) in s.nodes().iter().zip(&s.frame_jacobian).zip(&s.gap_gradient)
            {
                for (d, dj) in jac.iter().enumerate() {
                    let dn: Vec3 = dj.column(2).into_owned();
                    xbar[b][n][d] += q.dot(&(dj.transpose() * u_plus)) + q.z * s_v * dn.dot(&u);
                }
                xbar[b][n] += q.z * s_phi * gg;
            }
            // Fᵀ Σ dw_k v⁺_k and s_v n · Σ dw_k v_k.
            let fq = s.frame * q;
            s.add_weight_cotangent(
                |b, n| fq.dot(&v_plus(b, n)) + q.z * s_v * normal.dot(&v(b, n)),
                xbar,
            );
            for (&(b, n), w) in s.nodes().iter().zip(s.weights()) {
                vbar[b][n] += q.z * s_v * *w * normal;
            }
        }
    }

    /// Adds the transpose of h dH_c(dx)ᵀλ for the cotangent `rbar` (nodal, per body) to
    /// `xbar` (per body).
    pub(crate) fn force_cotangent(
        &self,
        rbar: impl Fn(usize, usize) -> Vec3,
        h: f64,
        xbar: &mut [Vec<Vec3>],
    ) {
        for (i, s) in self.sets.iter().enumerate() {
            let l = self.lambda_of(i);
            let rho = s.relative(&rbar);
            for (&(b, n), jac) in s.nodes().iter().zip(&s.frame_jacobian) {
                for (d, dj) in jac.iter().enumerate() {
                    xbar[b][n][d] += h * rho.dot(&(dj * l));
                }
            }
            let f = s.frame * l;
            s.add_weight_cotangent(|b, n| h * rbar(b, n).dot(&f), xbar);
        }
    }
}
