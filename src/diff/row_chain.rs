//! The row blocks of an NCP that have a rigid part, or whose geometry moves with a rigid
//! shape, as the step derivatives chain them (paper 002 Eq. 3 and Appendix D; paper 004 Eq.
//! 10-11 for their soft part): the rigid contacts and limits of `scene::step::rigid::detection`
//! and the soft–rigid rows of `scene::model::soft_rigid` (a soft node against a rigid shape, a
//! shape's corner against a soft triangle, a shape's edge crossing a soft surface edge, a
//! ball resting on a soft triangle (`diff::ball_chain`), an attachment).
//!
//! A row block i reads `σ_i = F_iᵀ (Σ_s sign_s v_s(p_i) + Σ_e w_e u_e) + e_i`: the velocity of
//! the point p_i of each rigid side s (a system's body, through the twists T_k of its
//! coordinates: `v_s(p) = Σ_k T_k(p) v_k`) and the weighted velocities of its soft nodes.
//! Its frame F, gap Φ, rigid point p and soft weights w are functions of the inputs
//! `z = [q (every rigid system's velocity coordinates, stacked); x_L (the soft nodes the rows
//! touch, three components each)]`; [`RowChain`] holds, from one pass over the rows:
//!
//! ```text
//! J   = ∂σ/∂v_rigid (3m × n),   H_L = ∂σ/∂u_L (3m × 3L)
//! ∂(Jᵀλ)/∂z (n × nz),  ∂(H_Lᵀλ)/∂z (3L × nz)
//! ∂σ/∂z|_(v⁺, λ) = dF ᵀ u⁺ + Fᵀ (sign ω × dp + sign dT(p) v⁺ + Σ dw_e u⁺_e) + Σ_j s_Φ,j dΦ_j
//!                  + s_v (the same for the start velocity u, normal row)
//!                  + (1 − k_p)/h (dx_node − dp)    (attachments: their position error)
//! ```
//!
//! with `∂T_k/∂q_j` from `scene::RigidSystem::twist_derivative`, and s_Φ,j the penetration
//! correction's slopes over the rows j of the row's manifold (itself alone but on a rigid
//! pair's contact manifold: `contact::PenetrationCorrection::manifold_slopes`). One row and its
//! variations are a [`ChainRow`] (`diff::chain_row`). The step derivatives
//! (`diff::rigid_step`, the mixed forward pass of `diff::step_derivative`) chain these with
//! the velocity update's derivatives and the NCP derivative.

use crate::contact::PenetrationCorrection;
use crate::error::Result;
use crate::math::{DMat, Vec3};
use crate::rigid::spatial::ang;
use crate::scene::{RigidScene, point_velocity};

use super::chain_row::ChainRow;

/// The matrices of a set of row blocks (module doc), over z = [q (n); x_L (3L)].
pub(crate) struct RowChain {
    pub(crate) rows: Vec<ChainRow>,
    /// The soft nodes the rows touch: (body, node), in local order.
    pub(crate) local: Vec<(usize, usize)>,
    /// Number of rigid coordinates n.
    pub(crate) n: usize,
    /// J (3m × n).
    pub(crate) jac: DMat,
    /// H_L (3m × 3L).
    pub(crate) soft_jac: DMat,
    /// ∂(Jᵀλ)/∂z (n × nz).
    pub(crate) dforce: DMat,
    /// ∂(H_Lᵀλ)/∂z (3L × nz; without the factor h).
    pub(crate) dsoft_force: DMat,
    /// ∂σ/∂z with v⁺ and λ held (3m × nz).
    pub(crate) dsigma: DMat,
    /// s_v of each row block (the slope of the correction in the start normal velocity).
    pub(crate) s_v: Vec<f64>,
    /// λ of the rows (3 per row, in `rows` order).
    pub(crate) lambda: Vec<f64>,
    /// Temporaries of [`RowChain::refill`], kept for the next one.
    scratch: ChainScratch,
}

/// [`RowChain::refill`]'s per-row temporaries: each twist's derivative at the point, and per
/// rigid side its motion.
#[derive(Default)]
struct ChainScratch {
    dt_at: Vec<Vec3>,
    moving: Vec<SideMotion>,
    /// The gaps of a row's correction manifold, and the row's slopes on them.
    gaps: Vec<f64>,
    slopes: Vec<f64>,
}

/// A side's point velocity and ω under v⁺ (`plus`) and v (`start`), each twist's velocity at
/// the point, and the coordinates that move the side's body.
#[derive(Default)]
struct SideMotion {
    plus: (Vec3, Vec3),
    start: (Vec3, Vec3),
    twist_at: Vec<Vec3>,
    live: Vec<usize>,
}

/// The values the chain is taken at: every rigid system's start and end velocities (stacked,
/// n) and the local soft nodes' (3L), λ of the rows (3 per row, in `rows` order), h.
pub(crate) struct ChainPoint<'a> {
    pub(crate) v_rigid: &'a [f64],
    pub(crate) v_plus_rigid: &'a [f64],
    pub(crate) v_soft: &'a [Vec3],
    pub(crate) v_plus_soft: &'a [Vec3],
    pub(crate) lambda: &'a [f64],
    pub(crate) h: f64,
}

impl RowChain {
    /// The matrices of `rows` at `at` (module doc); `local` the soft nodes their columns
    /// n + 3l.. stand for. Errors on a non-finite gap.
    pub(crate) fn new(
        rigid: &RigidScene,
        offsets: &[usize],
        rows: Vec<ChainRow>,
        local: Vec<(usize, usize)>,
        at: &ChainPoint<'_>,
    ) -> Result<RowChain> {
        let mut chain = RowChain::empty();
        chain.refill(rigid, offsets, rows, local, at)?;
        Ok(chain)
    }

    /// A chain of no rows, to be [refilled](Self::refill).
    pub(crate) fn empty() -> RowChain {
        let e = || DMat::zeros(0, 0);
        RowChain {
            rows: Vec::new(),
            local: Vec::new(),
            n: 0,
            jac: e(),
            soft_jac: e(),
            dforce: e(),
            dsoft_force: e(),
            dsigma: e(),
            s_v: Vec::new(),
            lambda: Vec::new(),
            scratch: ChainScratch::default(),
        }
    }

    /// [`Self::new`] into this chain, its matrices and temporaries reused: no allocation
    /// beyond `rows` and `local` once it has held rows of the same shapes.
    pub(crate) fn refill(
        &mut self,
        rigid: &RigidScene,
        offsets: &[usize],
        rows: Vec<ChainRow>,
        local: Vec<(usize, usize)>,
        at: &ChainPoint<'_>,
    ) -> Result<()> {
        let n = *offsets.last().expect("offsets end with n");
        let nl = 3 * local.len();
        let nz = n + nl;
        let m = rows.len();
        let correction = PenetrationCorrection::default();
        let RowChain {
            jac,
            soft_jac,
            dforce,
            dsoft_force,
            dsigma,
            s_v,
            scratch,
            ..
        } = self;
        for (mat, r, c) in [
            (&mut *jac, 3 * m, n),
            (&mut *soft_jac, 3 * m, nl),
            (&mut *dforce, n, nz),
            (&mut *dsoft_force, nl, nz),
            (&mut *dsigma, 3 * m, nz),
        ] {
            super::rigid_step::reshape(mat, r, c);
            mat.fill(0.0);
        }
        s_v.clear();
        let ChainScratch {
            dt_at,
            moving,
            gaps,
            slopes,
        } = scratch;
        let soft_sum = |row: &ChainRow, u: &[Vec3], w: &dyn Fn(usize) -> f64| -> Vec3 {
            row.soft
                .iter()
                .enumerate()
                .map(|(e, &(l, _))| w(e) * u[l])
                .sum()
        };
        for (i, row) in rows.iter().enumerate() {
            // dg_N = Σ_{j ∈ manifold} ∂g_N/∂Φ_j dΦ_j (the shared correction's slopes).
            let (first, count) = row.manifold.unwrap_or((i, 1));
            let (s_phi, sv) = correction.normal_slopes(at.h, row.gap)?;
            s_v.push(sv);
            let s_phi = if count == 1 {
                s_phi
            } else {
                let members = &rows[first..first + count];
                gaps.clear();
                gaps.extend(members.iter().map(|m| m.gap));
                slopes.resize(count, 0.0);
                correction.manifold_slopes(at.h, gaps, i - first, slopes)?;
                for (j, member) in members.iter().enumerate() {
                    if first + j == i {
                        continue;
                    }
                    for var in &member.variation {
                        dsigma[(3 * i + 2, var.col)] += slopes[j] * var.dphi;
                    }
                }
                slopes[i - first]
            };
            let li = Vec3::new(at.lambda[3 * i], at.lambda[3 * i + 1], at.lambda[3 * i + 2]);
            let f = row.frame * li;
            if let Some((coord, sign)) = row.limit {
                jac[(3 * i + 2, coord)] = sign;
            }
            for side in &row.sides {
                for (k, t) in side.twists.iter().enumerate() {
                    let v = side.sign * point_velocity(t, &row.point);
                    for r in 0..3 {
                        jac[(3 * i + r, offsets[side.system] + k)] += row.frame.column(r).dot(&v);
                    }
                }
            }
            for &(l, w) in &row.soft {
                for r in 0..3 {
                    for d in 0..3 {
                        soft_jac[(3 * i + r, 3 * l + d)] += w * row.frame[(d, r)];
                    }
                }
            }
            // Per side: the point's velocity and ω under v⁺ and v, and each twist at p (the
            // side buffers of earlier rows reused).
            if moving.len() < row.sides.len() {
                moving.resize_with(row.sides.len(), SideMotion::default);
            }
            for (side, sm) in row.sides.iter().zip(moving.iter_mut()) {
                let o = offsets[side.system];
                sm.twist_at.clear();
                sm.twist_at
                    .extend(side.twists.iter().map(|t| point_velocity(t, &row.point)));
                let twist_at = &sm.twist_at;
                let motion = |w: &[f64]| {
                    let (mut vel, mut omega) = (Vec3::zeros(), Vec3::zeros());
                    for (k, t) in side.twists.iter().enumerate() {
                        vel += twist_at[k] * w[o + k];
                        omega += ang(t) * w[o + k];
                    }
                    (vel, omega)
                };
                sm.plus = motion(at.v_plus_rigid);
                sm.start = motion(at.v_rigid);
                // The coordinates that move the body (the others' terms below are zeros).
                sm.live.clear();
                sm.live.extend(
                    (0..side.twists.len()).filter(|&k| side.twists[k].iter().any(|x| *x != 0.0)),
                );
            }
            let weight = |e: usize| row.soft[e].1;
            let soft_plus = soft_sum(row, at.v_plus_soft, &weight);
            let soft_start = soft_sum(row, at.v_soft, &weight);
            for var in &row.variation {
                let j = var.col;
                let dfl = var.df * li;
                // Rigid sides.
                for (side, sm) in row.sides.iter().zip(moving.iter()) {
                    let (plus, start, twist_at, live) =
                        (&sm.plus, &sm.start, &sm.twist_at, &sm.live);
                    let sys = &rigid.systems[side.system];
                    let o = offsets[side.system];
                    dt_at.clear();
                    if j >= o && j < o + sys.nv() {
                        // ∂T_k/∂q_j is zero where T_k is (rigid_system_derivative).
                        dt_at.resize(sys.nv(), Vec3::zeros());
                        for &k in live {
                            dt_at[k] = point_velocity(
                                &sys.twist_derivative(&side.twists, j - o, k),
                                &row.point,
                            );
                        }
                    }
                    for (w, (vel, omega), slope, rows_of) in [
                        (at.v_plus_rigid, plus, 1.0, 0..3),
                        (at.v_rigid, start, sv, 2..3),
                    ] {
                        let mut dvel = omega.cross(&var.dp);
                        if !dt_at.is_empty() {
                            for &k in live {
                                dvel += dt_at[k] * w[o + k];
                            }
                        }
                        for r in rows_of {
                            dsigma[(3 * i + r, j)] += slope
                                * side.sign
                                * (var.df.column(r).dot(vel) + row.frame.column(r).dot(&dvel));
                        }
                    }
                    for &k in live {
                        let t = &side.twists[k];
                        let mut d = twist_at[k].dot(&dfl) + ang(t).cross(&var.dp).dot(&f);
                        if let Some(dk) = dt_at.get(k) {
                            d += dk.dot(&f);
                        }
                        dforce[(o + k, j)] += side.sign * d;
                    }
                }
                // Soft entries.
                if !row.soft.is_empty() {
                    let dw = |e: usize| var.weight(e);
                    let dsoft_plus = soft_sum(row, at.v_plus_soft, &dw);
                    let dsoft_start = soft_sum(row, at.v_soft, &dw);
                    for r in 0..3 {
                        dsigma[(3 * i + r, j)] +=
                            var.df.column(r).dot(&soft_plus) + row.frame.column(r).dot(&dsoft_plus);
                    }
                    dsigma[(3 * i + 2, j)] += sv
                        * (var.df.column(2).dot(&soft_start)
                            + row.frame.column(2).dot(&dsoft_start));
                    for (e, &(l, w)) in row.soft.iter().enumerate() {
                        let df = var.weight(e) * f + w * dfl;
                        for d in 0..3 {
                            dsoft_force[(3 * l + d, j)] += df[d];
                        }
                    }
                }
                dsigma[(3 * i + 2, j)] += s_phi * var.dphi;
            }
            if let Some(l) = row.attachment {
                // g += (1 − k_p)/h (x_node − p): σ moves by that times (dx_node − dp).
                let c = (1.0 - correction.kp) / at.h;
                for d in 0..3 {
                    dsigma[(3 * i + d, n + 3 * l + d)] += c;
                }
                for var in &row.variation {
                    for d in 0..3 {
                        dsigma[(3 * i + d, var.col)] -= c * var.dp[d];
                    }
                }
            }
        }
        self.rows = rows;
        self.local = local;
        self.n = n;
        self.lambda.clear();
        self.lambda.extend_from_slice(at.lambda);
        Ok(())
    }

    /// Number of input coordinates nz = n + 3L.
    pub(crate) fn nz(&self) -> usize {
        self.n + 3 * self.local.len()
    }

    /// Bytes held (the dense matrices dominate).
    pub(crate) fn bytes(&self) -> usize {
        8 * (self.jac.len()
            + self.soft_jac.len()
            + self.dforce.len()
            + self.dsoft_force.len()
            + self.dsigma.len()
            + self.s_v.len()
            + self.lambda.len())
            + std::mem::size_of::<ChainRow>() * self.rows.len()
    }

    /// Jᵀλ (n): the generalised contact force of the rows on the rigid coordinates.
    pub(crate) fn generalised_force(&self) -> Vec<f64> {
        let mut out = Vec::new();
        self.generalised_force_into(&mut out);
        out
    }

    /// [`Self::generalised_force`] into `out` (no allocation once it has held n entries):
    /// entry c is column c of J dotted with λ.
    pub(crate) fn generalised_force_into(&self, out: &mut Vec<f64>) {
        let lam = nalgebra::DVectorView::from_slice(&self.lambda, self.lambda.len());
        out.clear();
        out.extend(self.jac.column_iter().map(|c| c.dot(&lam)));
    }
}
