//! Attachment rows eliminated through their soft bodies' factors, without forming G (a
//! forward step's NCP with attachments; `scene::step::contact::group`).
//!
//! A group's G is `S + U C Uᵀ`: S the soft bodies' terms `h H A⁻¹ Hᵀ`, U the rigid rows'
//! Jacobians side by side and C = blockdiag(h M_s⁻¹) (paper 004 Eq. 1). Its attachment rows b
//! are bilateral (σ_b = 0), so the other contacts c alone solve an NCP with the Schur
//! complement `G/G_bb` ([`crate::contact::BilateralElimination`] forms it from G). With `μ = C Uᵀ λ`
//! (the rigid velocity change) kept as an unknown, eliminating b body by body gives
//!
//! ```text
//! G_r = Σ_p S_p/S_p,bb + Ũ K⁻¹ Ũᵀ,     Ũ = U_c − Σ_p S_p,cb S_p,bb⁻¹ U_p,b
//! g_r = g_c − Σ_p S_p,cb S_p,bb⁻¹ g_p,b − Ũ K⁻¹ w,   K = C⁻¹ + Σ_p U_p,bᵀ S_p,bb⁻¹ U_p,b,
//! w = Σ_p U_p,bᵀ S_p,bb⁻¹ g_p,b
//! ```
//!
//! and each term comes from the body's factor: the body's attached DOFs are eliminated last
//! (`linalg::FactorOrdering::AmdWithLast`), so with `P A Pᵀ = L Lᵀ`, its trailing block
//! `L_tt` and `B` the attachment rows over those DOFs (square: three rows per attached node,
//! a 3 × 3 block each), and `Y = L⁻¹ P H_cᵀ = [Y_o; T]` for its other rows:
//!
//! ```text
//! S/S_bb = h Y_oᵀ Y_o (the body with its attached nodes held),   S_cb S_bb⁻¹ = Tᵀ E,
//! S_bb⁻¹ = Eᵀ E / h,   E = L_ttᵀ B⁻¹
//! ```
//!
//! So the attachment rows cost no rows of G, no L_tt⁻¹ B, no factorisation of G_bb; the
//! rigid part is one r × r solve (r the touched systems' velocities). Afterwards
//! `μ = K⁻¹ (Ũᵀ λ_c − w)` and `λ_p,b = −Eᵀ (T λ_p,c + (E U_p,b μ + E g_p,b) / h)`, σ_b = 0.
//! The same problem as the elimination's, exactly; round-off apart, the same λ.
//!
//! [`AttachedReduction::prepare`] refuses (then form G) unless every body with attachment rows
//! has a trailing block made of exactly its attached DOFs, each attachment reading three
//! DOFs of the block no other attachment reads.

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};

use super::attached_body::AttachedBody;
use super::jacobian::ContactJacobian;
use super::row_places::add_blocks;
use crate::contact::ncp::cone::FrictionCone;
use crate::contact::ncp::problem::{ContactProblem, NcpSolution, cone_residuals};
use crate::error::{Error, Result};
use crate::linalg::{DofMap, NumericFactor};
use crate::math::{DMat, DVec};

/// One soft body of a group, as [`AttachedReduction::prepare`] reads it.
pub struct ReductionBody<'a> {
    /// Its contact Jacobian H (3 rows per contact of the body).
    pub jacobian: &'a ContactJacobian,
    /// The group's contact index of each of its contacts.
    pub rows: &'a [usize],
    /// Its free DOFs.
    pub dofs: &'a DofMap,
    /// The step's factor of its A over those DOFs.
    pub factor: &'a NumericFactor,
}

/// The elimination of a group's attachment rows through its bodies' factors (module doc),
/// with its buffers, kept between steps.
#[derive(Default)]
pub struct AttachedReduction {
    h: f64,
    /// Per contact of the group: its index in the reduced problem, `usize::MAX` for an
    /// attachment.
    reduced_index: Vec<usize>,
    /// The group's contacts in the reduced problem.
    others: Vec<usize>,
    attached: Vec<AttachedBody>,
    count: usize,
    r: usize,
    /// Ũ (3·others × r), K⁻¹ (r × r), w (r).
    u_tilde: DMat,
    k_inv: DMat,
    w: DVec,
    scratch: Vec<f64>,
}

impl std::fmt::Debug for AttachedReduction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AttachedReduction")
            .field("others", &self.others.len())
            .field("bodies", &self.count)
            .finish()
    }
}

impl AttachedReduction {
    /// Reads the group's soft bodies (those with attachment rows: `bilateral` per contact of
    /// the group) and solves their other rows forward through their factors. `false` when the
    /// structure the reduction needs does not hold (module doc): then form G.
    pub fn prepare(&mut self, h: f64, bodies: &[ReductionBody], bilateral: &[bool]) -> bool {
        self.h = h;
        self.reduced_index.clear();
        self.others.clear();
        for (i, &b) in bilateral.iter().enumerate() {
            if b {
                self.reduced_index.push(usize::MAX);
            } else {
                self.reduced_index.push(self.others.len());
                self.others.push(i);
            }
        }
        self.count = 0;
        for body in bodies {
            if !body.rows.iter().any(|&i| bilateral[i]) {
                continue;
            }
            if self.attached.len() == self.count {
                self.attached.push(AttachedBody::default());
            }
            let a = &mut self.attached[self.count];
            if !a.prepare(h, body, bilateral, &self.reduced_index) {
                return false;
            }
            self.count += 1;
        }
        self.count > 0
    }

    /// The reduced NCP over the contacts that are not attachments (module doc), after
    /// [`Self::prepare`]: `plain` the group's bodies without attachment rows, each its term
    /// `h H A⁻¹ Hᵀ` and its contacts' group indices; `u` (3k × r) and `c` (r × r) the rigid
    /// term `U C Uᵀ`; `g` the free velocity of all k contacts (m/s); `cones` theirs;
    /// `extra_diagonal` (group row, value) added to G's diagonal (a frictionless limit's
    /// tangential rows).
    pub fn reduce(
        &mut self,
        plain: &[(&DMat, &[usize])],
        u: &DMat,
        c: &DMat,
        g: &[f64],
        cones: &[FrictionCone],
        extra_diagonal: &[(usize, f64)],
    ) -> Result<ContactProblem> {
        let k = self.reduced_index.len();
        let r = u.ncols();
        if u.nrows() != 3 * k || c.shape() != (r, r) || g.len() != 3 * k || cones.len() != k {
            return Err(Error::invalid(
                "attachment elimination",
                format!(
                    "{k} contacts, U {:?}, C {:?}, g {}, {} cones",
                    u.shape(),
                    c.shape(),
                    g.len(),
                    cones.len()
                ),
            ));
        }
        let h = self.h;
        self.r = r;
        let nc = self.others.len();
        let mc = 3 * nc;
        let others = &self.others;
        let reduced_row = |row: usize| 3 * self.reduced_index[row / 3] + row % 3;
        // Per body: [V e] = E [U_b g_b].
        for a in &mut self.attached[..self.count] {
            a.project(u, g, &mut self.scratch);
        }
        // K⁻¹ = (C⁻¹ + X)⁻¹ = (I + C X)⁻¹ C with [X w] = Σ Vᵀ [V e] / h.
        let mut xw = DMat::zeros(r, r + 1);
        for a in &self.attached[..self.count] {
            let ve = DMat::from_column_slice(a.m, r + 1, &a.v);
            xw += ve.columns(0, r).transpose() * &ve / h;
        }
        let x = xw.columns(0, r).into_owned();
        self.w = xw.column(r).into_owned();
        self.k_inv = if r > 0 {
            let lhs = DMat::identity(r, r) + c * &x;
            let mut k_inv = lhs.lu().solve(c).ok_or_else(|| {
                Error::invalid("attachment elimination", "the rigid term's K is singular")
            })?;
            for j in 0..r {
                for i in j + 1..r {
                    let s = 0.5 * (k_inv[(i, j)] + k_inv[(j, i)]);
                    k_inv[(i, j)] = s;
                    k_inv[(j, i)] = s;
                }
            }
            k_inv
        } else {
            DMat::zeros(0, 0)
        };
        // Ũ = U_c − Σ Tᵀ V, g̃ = g_c − Σ Tᵀ e, and the bodies' held terms h Y_oᵀ Y_o.
        let mut u_tilde = DMat::from_fn(mc, r, |i, kappa| u[(3 * others[i / 3] + i % 3, kappa)]);
        let mut g_r = DVec::from_fn(mc, |i, _| g[3 * others[i / 3] + i % 3]);
        let mut g_mat = DMat::zeros(mc, mc);
        // A body's contacts' places in the reduced problem.
        let mut places = Vec::new();
        for a in &self.attached[..self.count] {
            let kp = 3 * a.others.len();
            if kp == 0 {
                continue;
            }
            let t = a.tail();
            let place = |local: usize| 3 * a.others[local / 3].1 + local % 3;
            // Tᵀ [V e]: Ũ's and g̃'s corrections in one product.
            let mut tv = DMat::zeros(kp, r + 1);
            matmul(
                MatMut::from_column_major_slice_mut(tv.as_mut_slice(), kp, r + 1),
                Accum::Replace,
                t.transpose(),
                MatRef::from_column_major_slice(&a.v, a.m, r + 1),
                1.0,
                Par::Seq,
            );
            for i in 0..kp {
                for kappa in 0..r {
                    u_tilde[(place(i), kappa)] -= tv[(i, kappa)];
                }
                g_r[place(i)] -= tv[(i, r)];
            }
            places.clear();
            places.extend(a.others.iter().map(|&(_, rho)| rho));
            add_blocks(&a.gram, &places, &mut g_mat);
        }
        for &(delassus, rows) in plain {
            places.clear();
            places.extend(rows.iter().map(|&gi| self.reduced_index[gi]));
            add_blocks(delassus.as_slice(), &places, &mut g_mat);
        }
        if r > 0 {
            let w_mat = &u_tilde * &self.k_inv;
            g_r -= &w_mat * &self.w;
            // Ũ K⁻¹ Ũᵀ, its lower triangle added to both: G_r stays exactly symmetric.
            let low = &w_mat * u_tilde.transpose();
            for j in 0..mc {
                for i in j..mc {
                    let v = low[(i, j)];
                    g_mat[(i, j)] += v;
                    if i != j {
                        g_mat[(j, i)] += v;
                    }
                }
            }
        }
        for &(row, d) in extra_diagonal {
            if self.reduced_index[row / 3] != usize::MAX {
                let rr = reduced_row(row);
                g_mat[(rr, rr)] += d;
            }
        }
        self.u_tilde = u_tilde;
        let cones_r = others.iter().map(|&i| cones[i]).collect();
        ContactProblem::with_symmetric_cones(g_mat, g_r, cones_r)
    }

    /// `warm` (λ of all the group's contacts) cut down to the reduced problem's into `out`.
    pub fn restrict(&self, warm: &[f64], out: &mut Vec<f64>) {
        out.clear();
        out.extend(
            self.others
                .iter()
                .flat_map(|&i| warm[3 * i..3 * i + 3].iter()),
        );
    }

    /// The whole group's solution from the reduced problem's λ_c and σ_c (module doc): the
    /// attachments' λ_b rebuilt, σ_b = 0, the residuals of the whole problem (`cones`), with
    /// the reduced solve's `iterations` and status.
    pub fn expand(
        &mut self,
        reduced: Option<&NcpSolution>,
        cones: &[FrictionCone],
        tolerance: f64,
    ) -> NcpSolution {
        let k = self.reduced_index.len();
        let mut lambda = DVec::zeros(3 * k);
        let mut sigma = DVec::zeros(3 * k);
        let (lc, sc): (&[f64], &[f64]) = match reduced {
            Some(s) => (s.lambda.as_slice(), s.sigma.as_slice()),
            None => (&[], &[]),
        };
        for (rho, &i) in self.others.iter().enumerate() {
            lambda.as_mut_slice()[3 * i..3 * i + 3].copy_from_slice(&lc[3 * rho..3 * rho + 3]);
            sigma.as_mut_slice()[3 * i..3 * i + 3].copy_from_slice(&sc[3 * rho..3 * rho + 3]);
        }
        let (h, r) = (self.h, self.r);
        let mu = if r > 0 {
            let lc = DVec::from_column_slice(lc);
            &self.k_inv * (self.u_tilde.transpose() * lc - &self.w)
        } else {
            DVec::zeros(0)
        };
        let mut z = std::mem::take(&mut self.scratch);
        let mut y = Vec::new();
        for a in &self.attached[..self.count] {
            // z = T λ_c + (V μ + e) / h.
            z.clear();
            z.extend(a.e().iter().map(|e| e / h));
            for kappa in 0..r {
                let column = &a.v[kappa * a.m..(kappa + 1) * a.m];
                for (zi, v) in z.iter_mut().zip(column) {
                    *zi += v * mu[kappa] / h;
                }
            }
            let t = a.tail();
            for (i, &(_, rho)) in a.others.iter().enumerate() {
                for p in 0..3 {
                    let l = lc[3 * rho + p];
                    let col = 3 * i + p;
                    for (j, zj) in z.iter_mut().enumerate() {
                        *zj += t[(j, col)] * l;
                    }
                }
            }
            a.apply_minus_et(&z, &mut y, lambda.as_mut_slice());
        }
        self.scratch = z;
        let residuals = cone_residuals(cones, lambda.as_slice(), sigma.as_slice());
        NcpSolution {
            converged: reduced.is_none_or(|s| s.converged) && residuals.max() <= tolerance,
            lambda,
            sigma,
            residuals,
            iterations: reduced.map_or(0, |s| s.iterations),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::test_support::{box_system, random_frame};
    use crate::linalg::{FactorKind, FactorOrdering, SymbolicFactor, SymbolicOptions};
    use crate::math::SplitMix64;
    use std::sync::Arc;

    /// The reduced NCP and the rebuilt attachment forces against a second method: the dense
    /// G = h H A⁻¹ Hᵀ (nalgebra's inverse of the dense A) + U C Uᵀ + a second body's block,
    /// its Schur complement on the contacts that are not attachments, and
    /// λ_b = −G_bb⁻¹ (g_b + G_bc λ_c), all formed with nalgebra. A box whose top-face nodes
    /// are attached (eliminated last), with contacts on its top face, inside it and on its
    /// fixed bottom; two contacts of another body; a rigid part over some rows of each kind.
    #[test]
    fn the_reduction_is_the_schur_complement_of_the_whole_g() {
        let mut rng = SplitMix64::new(17);
        let system = box_system(&mut rng);
        let (pattern, values) = (&system.pattern, &system.values);
        let (nodes, top, bottom, inside) = (
            system.nodes,
            system.top.clone(),
            system.bottom,
            system.inside,
        );
        let dofs = pattern.dofs();
        let last: Vec<usize> = top
            .iter()
            .flat_map(|&t| (0..3).map(move |p| dofs.reduced_index(3 * t + p).unwrap()))
            .collect();
        let symbolic = SymbolicFactor::with_options(
            pattern,
            SymbolicOptions {
                ordering: FactorOrdering::AmdWithLast(&last),
                ..Default::default()
            },
        )
        .unwrap();
        let n = pattern.n();
        assert_eq!(symbolic.tail_start(), n - last.len());
        let mut factor = NumericFactor::new(Arc::new(symbolic), FactorKind::Llt);
        factor.factorize(pattern, values).unwrap();
        // The body's contacts: two ordinary ones, the attachments (one per top node, a
        // sign-flipped frame each), then three more ordinary ones.
        let mut jac = ContactJacobian::new(nodes);
        let mut bilateral = Vec::new();
        jac.push_point_contact(&random_frame(&mut rng), &[(top[0], 0.5), (inside, 0.5)])
            .unwrap();
        jac.push_point_contact(&random_frame(&mut rng), &[(top[3], 1.0)])
            .unwrap();
        bilateral.extend([false, false]);
        for (i, &t) in top.iter().enumerate() {
            let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
            jac.push_point_contact(&random_frame(&mut rng), &[(t, sign)])
                .unwrap();
            bilateral.push(true);
        }
        jac.push_point_contact(&random_frame(&mut rng), &[(bottom, 0.4), (top[1], 0.6)])
            .unwrap();
        jac.push_point_contact(
            &random_frame(&mut rng),
            &[(top[2], 0.2), (top[4], 0.3), (top[5], 0.5)],
        )
        .unwrap();
        jac.push_point_contact(&random_frame(&mut rng), &[(inside, 1.0)])
            .unwrap();
        bilateral.extend([false; 3]);
        let kb = bilateral.len();
        // Two contacts of a second body, without attachments, after the first's.
        let rows: Vec<usize> = (0..kb).collect();
        let plain_rows = [kb, kb + 1];
        bilateral.extend([false, false]);
        let k = bilateral.len();
        let j2 = DMat::from_fn(6, 9, |_, _| rng.uniform() - 0.5);
        let plain = &j2 * j2.transpose() * 1e-3;
        // A rigid part on two systems (r = 4) over some rows of each kind; C symmetric PD.
        let r = 4;
        let mut u = DMat::zeros(3 * k, r);
        for block in [0, 2, 3, 5, kb - 1, kb + 1] {
            for row in 0..3 {
                for kappa in 0..r {
                    u[(3 * block + row, kappa)] = rng.uniform() - 0.5;
                }
            }
        }
        let cm = DMat::from_fn(r, r, |_, _| rng.uniform() - 0.5);
        let c = &cm * cm.transpose() * 0.1 + DMat::identity(r, r) * 0.05;
        let g = DVec::from_fn(3 * k, |_, _| rng.uniform() - 0.5);
        let extra = [(3 * (kb - 2), 0.3), (3 * (kb - 2) + 1, 0.3)];
        let h = 0.01;

        // The dense reference.
        let a = system.dense_a();
        // The second body's rows (after the first's) have no part in this body's H.
        let mut hd = DMat::zeros(3 * k, n);
        hd.rows_mut(0, jac.row_count())
            .copy_from(&system.dense_jacobian(&jac));
        let mut g_full =
            h * &hd * a.try_inverse().unwrap() * hd.transpose() + &u * &c * u.transpose();
        for i in 0..6 {
            for j in 0..6 {
                g_full[(3 * kb + i, 3 * kb + j)] += plain[(i, j)];
            }
        }
        for &(row, d) in &extra {
            g_full[(row, row)] += d;
        }
        let b_rows: Vec<usize> = (0..3 * k).filter(|&i| bilateral[i / 3]).collect();
        let c_rows: Vec<usize> = (0..3 * k).filter(|&i| !bilateral[i / 3]).collect();
        let sub = |rs: &[usize], cs: &[usize]| {
            DMat::from_fn(rs.len(), cs.len(), |i, j| g_full[(rs[i], cs[j])])
        };
        let (g_bb, g_bc, g_cc) = (
            sub(&b_rows, &b_rows),
            sub(&b_rows, &c_rows),
            sub(&c_rows, &c_rows),
        );
        let g_bb_inv = g_bb.try_inverse().unwrap();
        let g_b = DVec::from_fn(b_rows.len(), |i, _| g[b_rows[i]]);
        let g_c = DVec::from_fn(c_rows.len(), |i, _| g[c_rows[i]]);
        let reference = &g_cc - g_bc.transpose() * &g_bb_inv * &g_bc;
        let reference_g = &g_c - g_bc.transpose() * &g_bb_inv * &g_b;

        let mut reduction = AttachedReduction::default();
        let body = ReductionBody {
            jacobian: &jac,
            rows: &rows,
            dofs,
            factor: &factor,
        };
        assert!(reduction.prepare(h, &[body], &bilateral));
        let cones: Vec<FrictionCone> = bilateral
            .iter()
            .map(|&b| {
                if b {
                    FrictionCone::bilateral()
                } else {
                    FrictionCone::new(0.4).unwrap()
                }
            })
            .collect();
        let problem = reduction
            .reduce(
                &[(&plain, &plain_rows[..])],
                &u,
                &c,
                g.as_slice(),
                &cones,
                &extra,
            )
            .unwrap();
        let err = (problem.delassus() - &reference).amax() / reference.amax();
        assert!(err < 1e-10, "G_r: relative error {err}");
        assert_eq!(problem.delassus(), &problem.delassus().transpose());
        let err = (problem.free_velocity() - &reference_g).amax() / reference_g.amax();
        assert!(err < 1e-10, "g_r: relative error {err}");
        assert_eq!(problem.contact_count(), k - top.len());

        // Any λ_c: the attachments' λ_b and σ_b = 0 of the whole problem.
        let lc = DVec::from_fn(c_rows.len(), |_, _| rng.uniform() - 0.5);
        let sc = problem.delassus() * &lc + problem.free_velocity();
        let reduced = NcpSolution {
            lambda: lc.clone(),
            sigma: sc,
            residuals: Default::default(),
            iterations: 7,
            converged: true,
        };
        let whole = reduction.expand(Some(&reduced), &cones, 1e-10);
        let lb_reference = -(&g_bb_inv * (&g_b + &g_bc * &lc));
        let lb = DVec::from_fn(b_rows.len(), |i, _| whole.lambda[b_rows[i]]);
        let err = (&lb - &lb_reference).amax() / lb_reference.amax();
        assert!(err < 1e-9, "λ_b: relative error {err}");
        let sigma = &g_full * &whole.lambda + &g;
        let err = (&sigma - &whole.sigma).amax() / g.amax();
        assert!(err < 1e-9, "σ of the whole problem: relative error {err}");
        assert_eq!(whole.iterations, 7);

        // A node held twice (two attachments on one top node) is refused.
        let mut twice = ContactJacobian::new(nodes);
        for &t in top.iter().chain([&top[0]]) {
            twice
                .push_point_contact(&random_frame(&mut rng), &[(t, 1.0)])
                .unwrap();
        }
        let rows2: Vec<usize> = (0..top.len() + 1).collect();
        let body = ReductionBody {
            jacobian: &twice,
            rows: &rows2,
            dofs,
            factor: &factor,
        };
        assert!(!reduction.prepare(h, &[body], &vec![true; top.len() + 1]));
    }
}
