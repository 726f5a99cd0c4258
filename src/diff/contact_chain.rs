//! The contact terms of the step derivative (paper 004 Eq. 10-11, paper 002 Appendix D),
//! chaining what `contact` owns: the NCP implicit derivative ([`NcpDerivative`]), the
//! derivatives of each node contact's frame (the rows of H_c) and gap with respect to the node
//! position, and the slopes of the penetration correction.
//!
//! With node contacts against static obstacles, `(H_c u)_i = F_iᵀ u_{n(i)}` (F_i the frame,
//! columns `[t₁, t₂, n]`), σ = H_c v⁺ + e(Φ, H_c v) and `A v⁺ = … + h H_cᵀ λ`. For an input
//! direction, with `a = A⁻¹(rhs + h dH_cᵀ λ)` the contact-free part of dv⁺:
//!
//! ```text
//! dq = H_c a + dH_c v⁺ + de          (dσ with λ held)
//! dλ = N dq                          (NcpDerivative: modes breaking / sticking / sliding)
//! dv⁺ = a + h W dλ,   W = A⁻¹ H_cᵀ   (kept from the step's Delassus assembly)
//! ```
//!
//! with `dF_i = Σⱼ ∂F_i/∂p_j dx_{n(i),j}`, `de_N = s_Φ ∇Φ·dx_n + s_v (n·dv_n + dn·v_n)`. The
//! reverse sweep transposes each line. Detection runs at the step's start positions, so all
//! geometry depends on x only; the contact set is that of the forward step (a contact
//! appearing inside a finite-difference interval is a mode switch, outside the derivative's
//! scope).

use crate::contact::{
    BoundaryGradient, NcpDerivative, NodeContact, PenetrationCorrection, classify,
};
use crate::error::Result;
use crate::linalg::DofMap;
use crate::math::{DMat, Mat3, Vec3};
use crate::scene::{ContactWorkspace, Scene, mode_tolerance};

/// One body's contacts in one step, with what their derivatives need.
pub struct ContactRecord {
    contacts: Vec<NodeContact>,
    lambda: Vec<f64>,
    ncp: NcpDerivative,
    /// W = A⁻¹ H_cᵀ over the free DOFs (n_free × 3k, column major).
    w: Vec<f64>,
    /// ∂F_i/∂p_j per contact.
    frame_jacobian: Vec<[Mat3; 3]>,
    /// ∇Φ per contact.
    gap_gradient: Vec<Vec3>,
    /// (s_Φ, s_v) per contact.
    slopes: Vec<(f64, f64)>,
}

impl ContactRecord {
    /// The contact part of a step record, from the contact stage's buffers `ws` after the
    /// step (its contacts, λ, G, g and A⁻¹H_cᵀ) and the start positions `x`. `None` without
    /// contact. Errors as [`NcpDerivative::new`].
    pub(crate) fn build(
        scene: &Scene,
        ws: &ContactWorkspace,
        dofs: &DofMap,
        x: &[Vec3],
        boundary: BoundaryGradient,
    ) -> Result<Option<ContactRecord>> {
        let contacts = ws.contacts();
        let k = contacts.len();
        if k == 0 {
            return Ok(None);
        }
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
        let mut frame_jacobian = Vec::with_capacity(k);
        let mut gap_gradient = Vec::with_capacity(k);
        let mut slopes = Vec::with_capacity(k);
        for c in contacts {
            let obstacle = &scene.contact.obstacles[c.obstacle];
            let p = x[c.node];
            frame_jacobian.push(obstacle.frame_jacobian(&p));
            gap_gradient.push(obstacle.gap_gradient(&p));
            slopes.push(correction.normal_slopes(h, c.gap)?);
        }
        Ok(Some(ContactRecord {
            contacts: contacts.to_vec(),
            lambda,
            ncp,
            w,
            frame_jacobian,
            gap_gradient,
            slopes,
        }))
    }

    /// Number of contacts.
    pub fn len(&self) -> usize {
        self.contacts.len()
    }

    /// The contacts (node, obstacle, gap, frame), in NCP order.
    pub fn contacts(&self) -> &[NodeContact] {
        &self.contacts
    }

    /// λ_c (N, 3 per contact in its frame `[t₁, t₂, n]`).
    pub fn lambda(&self) -> &[f64] {
        &self.lambda
    }

    /// Bytes held (W dominates: n_free × 3k values).
    pub fn bytes(&self) -> usize {
        8 * (self.w.len() + self.lambda.len()) + 120 * self.contacts.len()
    }

    /// Whether there is no contact.
    pub fn is_empty(&self) -> bool {
        self.contacts.is_empty()
    }

    /// dF_i for a displacement `dx` of its node.
    fn frame_variation(&self, i: usize, dx: &Vec3) -> Mat3 {
        let j = &self.frame_jacobian[i];
        j[0] * dx.x + j[1] * dx.y + j[2] * dx.z
    }

    /// Adds h dH_c(dx)ᵀ λ (the force change from the moving frames) to the nodal `out`.
    pub(crate) fn add_force_variation(&self, dx: &[Vec3], h: f64, out: &mut [Vec3]) {
        for (i, c) in self.contacts.iter().enumerate() {
            let l = Vec3::new(
                self.lambda[3 * i],
                self.lambda[3 * i + 1],
                self.lambda[3 * i + 2],
            );
            out[c.node] += h * self.frame_variation(i, &dx[c.node]) * l;
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
        for (i, c) in self.contacts.iter().enumerate() {
            let n = c.node;
            let df = self.frame_variation(i, &dx[n]);
            let mut q = c.frame.transpose() * a[n] + df.transpose() * v_plus[n];
            let (s_phi, s_v) = self.slopes[i];
            let normal: Vec3 = c.frame.column(2).into_owned();
            let dn: Vec3 = df.column(2).into_owned();
            q.z += s_phi * self.gap_gradient[i].dot(&dx[n])
                + s_v * (normal.dot(&dv[n]) + dn.dot(&v[n]));
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
        let k3 = 3 * self.contacts.len();
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
        for (i, c) in self.contacts.iter().enumerate() {
            let q = Vec3::new(q_bar[3 * i], q_bar[3 * i + 1], q_bar[3 * i + 2]);
            abar[c.node] += c.frame * q;
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
        for (i, c) in self.contacts.iter().enumerate() {
            let n = c.node;
            let q = Vec3::new(q_bar[3 * i], q_bar[3 * i + 1], q_bar[3 * i + 2]);
            let (s_phi, s_v) = self.slopes[i];
            let jac = &self.frame_jacobian[i];
            for (j, dj) in jac.iter().enumerate() {
                let dn: Vec3 = dj.column(2).into_owned();
                xbar[n][j] += q.dot(&(dj.transpose() * v_plus[n])) + q.z * s_v * dn.dot(&v[n]);
            }
            xbar[n] += q.z * s_phi * self.gap_gradient[i];
            let normal: Vec3 = c.frame.column(2).into_owned();
            vbar[n] += q.z * s_v * normal;
        }
    }

    /// Adds the transpose of h dH_c(dx)ᵀλ for the cotangent `rbar` (nodal) to `xbar`.
    pub(crate) fn force_cotangent(&self, rbar: &[Vec3], h: f64, xbar: &mut [Vec3]) {
        for (i, c) in self.contacts.iter().enumerate() {
            let n = c.node;
            let l = Vec3::new(
                self.lambda[3 * i],
                self.lambda[3 * i + 1],
                self.lambda[3 * i + 2],
            );
            for (j, dj) in self.frame_jacobian[i].iter().enumerate() {
                xbar[n][j] += h * rbar[n].dot(&(dj * l));
            }
        }
    }
}
