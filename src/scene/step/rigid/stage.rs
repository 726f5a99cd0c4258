//! The rigid stage of the step: free bodies and robots advance by paper 002 Eq. 3,
//!
//! ```text
//! v_free = v + h M⁻¹ (τ − d ∘ v − b(q, v))            (rigid::factored_free_velocity)
//! σ = G λ + g,   G = Σ_s h J_s M_s⁻¹ J_sᵀ,   g = Σ_s J_s v_free,s + (1 − K_p s_m) Φ/h
//! v⁺ = v_free + h M⁻¹ J_sᵀ λ,   q⁺ = q ⊕ h v⁺         (one Cholesky of M per system and step)
//! ```
//!
//! with λ (N, or N·m for a joint limit) solving the same frictional NCP as the soft contacts
//! (`contact::ContactProblem`, ADMM or PGS per `[contact] solver`, the same tolerance, the
//! same penetration correction, its branch s_m shared by the points of one pair's manifold
//! (`contact::PenetrationCorrection::apply_shared`, [`RigidWorkspace::correction_manifolds`]),
//! and the same non-convergence status). τ is the system's input
//! (constant, or a joint-space PD at (q, v)), clamped to the URDF effort limits.
//!
//! Rows, three per contact in its frame `[t₁, t₂, n]` (n from the second body into the first):
//! - a collider against an obstacle or a fixed rigid body, against another system's collider,
//!   or against a non-adjacent link of its own robot (parry contact manifolds, up to four
//!   points per pair, `contact::collider_contacts`), J_s = frameᵀ ∂v(p)/∂v_s at the contact
//!   point p (`rigid::point_jacobian`), with the opposite sign for the second body;
//! - a revolute or prismatic coordinate near a finite position limit: n along +e_k at the
//!   lower limit, −e_k at the upper, gap = distance to the limit, no friction (μ = 0, the
//!   tangential rows carry the normal row's diagonal in G and nothing else, so λ_t = 0).
//!
//! A pair is a candidate when its gap is within the distance both bodies can travel in the
//! step (h times their largest point speed at v and at v_free), so a resting body keeps its
//! contacts. Two links of one robot never touch when they are adjacent, or when they already
//! touch in the robot's initial configuration (collision models overlap around joints). The
//! NCP is warm-started from the previous step's λ when the contact set (pairs and parry
//! feature ids) is unchanged.
//!
//! When soft bodies touch rigid ones or are attached to them (`scene::model::soft_rigid`), the rigid
//! rows and the soft–rigid rows join the NCP of the soft bodies they touch
//! (`scene::step::contact::group`): the step is then [`RigidWorkspace::prepare`] (before the contact
//! stage), [`RigidWorkspace::assemble`] and [`RigidWorkspace::apply`] (inside the group's
//! solve), and [`RigidWorkspace::finish`] (after it). A rigid NCP that no soft body touches
//! is a group of its own, solved by the same `scene::step::contact::group::solve_group`.

use crate::contact::{ContactMode, NcpSolution, ShapePose, classify_contact};
use crate::error::Result;
use crate::math::{DMat, Vec3};
use crate::scene::model::RigidState;

use super::detection::{Motion, RigidContact, RigidDetection, RigidRow, RowKey};
use super::term::{RigidTermScratch, add_rigid_term};
use crate::scene::model::contact::SceneContact;
use crate::scene::model::rigid::RigidSide;
use crate::scene::model::rigid::{RigidScene, RigidSystem};
use crate::scene::model::rigid_system::SystemBuffers;

/// What the rigid stage did in one step.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RigidOutcome {
    /// Row blocks of the NCP (contacts and active limits).
    pub detected: usize,
    /// Of those, the ones carrying force (sticking or sliding).
    pub active: usize,
    /// Whether the NCP reached its tolerance (true without rows).
    pub converged: bool,
    /// Solver iterations.
    pub iterations: usize,
    /// Largest NCP residual measure at the returned solution.
    pub residual: f64,
}

/// Buffers of the rigid stage, per system and shared (sized when built; contact buffers grow
/// with the number of contacts and are then reused).
pub struct RigidWorkspace {
    buffers: Vec<SystemBuffers>,
    v_free: Vec<Vec<f64>>,
    q_scratch: Vec<Vec<f64>>,
    poses: Vec<Vec<ShapePose>>,
    reach: Vec<Vec<f64>>,
    point_jac: Vec<nalgebra::Matrix3xX<f64>>,
    /// J_s (3m × nv_s) and Y_s = M_s⁻¹ J_sᵀ (nv_s × 3m) over the rows of the last step.
    jac: Vec<DMat>,
    minv_jt: Vec<DMat>,
    /// J_sᵀ (nv_s × 3m), its columns filled at the rows that touch the system.
    jac_t: Vec<DMat>,
    detection: RigidDetection,
    /// The row blocks with a rigid part in this step's NCP: the detected ones, then those
    /// with a soft part (`push_row`); and the block index of each in the NCP.
    rows: Vec<RigidContact>,
    row_index: Vec<usize>,
    /// λ of `rows` (3 per block).
    lambda: Vec<f64>,
    /// Per system: whether a row touches it, the rows (of `jac`) that do, and a column
    /// buffer (nv).
    touched: Vec<bool>,
    active: Vec<Vec<usize>>,
    /// The active rows' places in the NCP (one system at a time).
    places: Vec<usize>,
    column: Vec<Vec<f64>>,
    /// The buffers of the rigid term's products.
    term: RigidTermScratch,
    /// Whether this step's impulses are applied (`apply`), and the NCP's outcome.
    applied: bool,
    outcome: RigidOutcome,
    /// Per-system buffers handed back by the step derivatives' records
    /// ([`Self::spare_buffers`], [`Self::recycle_buffers`]).
    spare: std::sync::Mutex<Vec<Vec<SystemBuffers>>>,
}

impl RigidWorkspace {
    /// Buffers for the systems of `rigid`.
    pub fn new(rigid: &RigidScene) -> RigidWorkspace {
        let s = &rigid.systems;
        RigidWorkspace {
            buffers: s.iter().map(SystemBuffers::new).collect(),
            v_free: s.iter().map(|x| vec![0.0; x.nv()]).collect(),
            q_scratch: s.iter().map(|x| vec![0.0; x.nq()]).collect(),
            poses: s
                .iter()
                .map(|x| vec![ShapePose::identity(); x.colliders.len()])
                .collect(),
            reach: s.iter().map(|x| vec![0.0; x.colliders.len()]).collect(),
            point_jac: s
                .iter()
                .map(|x| nalgebra::Matrix3xX::zeros(x.nv()))
                .collect(),
            jac: s.iter().map(|x| DMat::zeros(0, x.nv())).collect(),
            minv_jt: s.iter().map(|x| DMat::zeros(x.nv(), 0)).collect(),
            jac_t: s.iter().map(|x| DMat::zeros(x.nv(), 0)).collect(),
            detection: RigidDetection::new(rigid),
            rows: Vec::new(),
            row_index: Vec::new(),
            lambda: Vec::new(),
            touched: vec![false; s.len()],
            active: vec![Vec::new(); s.len()],
            places: Vec::new(),
            term: RigidTermScratch::default(),
            column: s.iter().map(|x| vec![0.0; x.nv()]).collect(),
            applied: false,
            outcome: RigidOutcome::default(),
            spare: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// A set of per-system buffers for `rigid` (a step derivative's record): one given back
    /// by [`Self::recycle_buffers`] when there is one, so a derivative per step builds no
    /// `Data`; their contents are whatever they last held.
    pub fn spare_buffers(&self, rigid: &RigidScene) -> Vec<SystemBuffers> {
        let reused = self.spare.lock().map(|mut s| s.pop()).unwrap_or(None);
        reused.unwrap_or_else(|| rigid.systems.iter().map(SystemBuffers::new).collect())
    }

    /// Gives back buffers from [`Self::spare_buffers`] for a later derivative.
    pub fn recycle_buffers(&self, buffers: Vec<SystemBuffers>) {
        if let Ok(mut spare) = self.spare.lock() {
            spare.push(buffers);
        }
    }

    /// The row blocks of the last step's NCP with a rigid part, in order: the rigid
    /// contacts and limits, then the soft–rigid rows with a moving rigid side.
    pub fn contacts(&self) -> &[RigidContact] {
        &self.rows
    }

    /// The NCP block index of each row block of [`Self::contacts`] in the last step.
    pub fn row_blocks(&self) -> &[usize] {
        &self.row_index
    }

    /// Number of the last step's detected rigid row blocks (the first ones of
    /// [`Self::contacts`]; the rest have a soft part).
    pub fn own_row_count(&self) -> usize {
        self.detection.contacts.len()
    }

    /// The last step's λ (3 per row block of [`Self::contacts`]; N, or N·m / N for limits),
    /// contact frames.
    pub fn lambda(&self) -> &[f64] {
        &self.lambda
    }

    /// Each collider's world pose at the start of the step (after [`Self::prepare`]).
    pub fn poses(&self) -> &[Vec<ShapePose>] {
        &self.poses
    }

    /// Each collider's reach in the step (m; after [`Self::prepare`]).
    pub fn reach(&self) -> &[Vec<f64>] {
        &self.reach
    }

    /// The world pose of joint `joint` of system `s` at the start of the step (after
    /// [`Self::prepare`]).
    pub fn joint_pose(
        &self,
        rigid: &RigidScene,
        states: &[RigidState],
        s: usize,
        joint: usize,
    ) -> ShapePose {
        rigid.systems[s].joint_pose(&self.buffers[s], &states[s].q, joint)
    }

    /// The detected rigid row blocks of this step (contacts and limits).
    pub(in crate::scene) fn own_rows(&self) -> &[RigidContact] {
        &self.detection.contacts
    }

    /// Their warm-start keys.
    pub(in crate::scene) fn own_keys(&self) -> &[RowKey] {
        &self.detection.keys
    }

    /// Per detected row block (the first [`Self::own_row_count`] of [`Self::contacts`]), the
    /// `(first, count)` of the consecutive blocks of its pair's contact manifold, which share
    /// a penetration correction (`contact::PenetrationCorrection::apply_shared`); a limit's
    /// is `(itself, 1)`.
    pub fn correction_manifolds(&self) -> &[(usize, usize)] {
        &self.detection.manifolds
    }

    /// The step's start at time `time` (s): each system's input, M factorisation and free
    /// velocity, its colliders' poses and reaches, and the rigid row blocks (contacts and
    /// limits).
    pub fn prepare(
        &mut self,
        rigid: &RigidScene,
        contact: &SceneContact,
        h: f64,
        time: f64,
        gravity: &Vec3,
        states: &mut [RigidState],
    ) -> Result<()> {
        let systems = &rigid.systems;
        assert_eq!(systems.len(), states.len(), "one rigid state per system");
        self.applied = false;
        self.outcome = RigidOutcome {
            converged: true,
            ..RigidOutcome::default()
        };
        // Free velocities, M factors, collider poses and reaches.
        for (s, (sys, st)) in systems.iter().zip(states.iter_mut()).enumerate() {
            let buf = &mut self.buffers[s];
            sys.prepare(buf, st, gravity, h, time, &mut self.v_free[s])?;
            for (c, jc) in sys.colliders.iter().enumerate() {
                let pose = sys.joint_pose(buf, &st.q, jc.joint).compose(&jc.placement);
                self.poses[s][c] = pose;
                let r = jc.collider.bounding_radius();
                let speed = |v: &[f64]| {
                    let (vo, w) = sys.body_velocity(buf, &st.q, jc.joint, v);
                    (vo + w.cross(&pose.translation)).norm() + w.norm() * r
                };
                self.reach[s][c] = h * speed(&st.v).max(speed(&self.v_free[s]));
            }
        }
        self.detection.detect(
            rigid,
            contact,
            states,
            Motion {
                poses: &self.poses,
                reach: &self.reach,
                v_free: &self.v_free,
            },
            h,
        )?;
        self.rows.clear();
        self.row_index.clear();
        Ok(())
    }

    /// Adds a row block with a rigid part at block `index` of the NCP (a soft–rigid row).
    pub(in crate::scene) fn push_row(&mut self, row: RigidContact, index: usize) {
        self.rows.push(row);
        self.row_index.push(index);
    }

    /// Puts the detected rigid row blocks at blocks `offset..` of the NCP (before any
    /// [`Self::push_row`]).
    pub(in crate::scene) fn place_own_rows(&mut self, offset: usize) {
        self.rows.clear();
        self.row_index.clear();
        let own = self.detection.contacts.len();
        self.rows.extend_from_slice(&self.detection.contacts);
        self.row_index.extend(offset..offset + own);
    }

    /// Adds the rigid term of the NCP at this step's row blocks: `G += Σ_s h J_s M_s⁻¹ J_sᵀ`
    /// (with a frictionless limit's tangential diagonal set to its normal one), `g += J v_free`
    /// and `start += J v` (m/s), at each block's index in the NCP (`g_mat` 3N × 3N). Without
    /// `g_mat` (the attachments eliminated through their bodies' factors, G never formed) J_s
    /// and M_s⁻¹ J_sᵀ are still formed, for [`Self::low_rank`] and [`Self::apply`].
    pub(in crate::scene) fn assemble(
        &mut self,
        rigid: &RigidScene,
        states: &[RigidState],
        h: f64,
        mut g_mat: Option<&mut DMat>,
        g: &mut [f64],
        start: &mut [f64],
    ) {
        let m = self.rows.len();
        let rows = 3 * m;
        let global = |r: usize, index: &[usize]| 3 * index[r / 3] + r % 3;
        for (s, sys) in rigid.systems.iter().enumerate() {
            let nv = sys.nv();
            let q = &states[s].q;
            let jac = &mut self.jac[s];
            if jac.shape() != (rows, nv) {
                *jac = DMat::zeros(rows, nv);
            } else {
                jac.as_mut_slice().fill(0.0);
            }
            let mut touched = false;
            for (i, c) in self.rows.iter().enumerate() {
                let mut add_point =
                    |side: RigidSide, point: &Vec3, frame: &crate::math::Mat3, sign: f64| {
                        if side.system != s {
                            return;
                        }
                        touched = true;
                        let pj = &mut self.point_jac[s];
                        sys.point_jacobian(&self.buffers[s], q, side.joint, point, pj);
                        let ft = frame.transpose() * sign;
                        for k in 0..nv {
                            let col = ft * pj.column(k);
                            for r in 0..3 {
                                jac[(3 * i + r, k)] += col[r];
                            }
                        }
                    };
                match c.row {
                    RigidRow::Contact { a, b, point, frame } => {
                        add_point(a, &point, &frame, 1.0);
                        if let Some(b) = b {
                            add_point(b, &point, &frame, -1.0);
                        }
                    }
                    RigidRow::Point {
                        side,
                        point,
                        frame,
                        sign,
                    } => add_point(side, &point, &frame, sign),
                    RigidRow::Limit { system, dof, sign } if system == s => {
                        touched = true;
                        jac[(3 * i + 2, dof)] = sign;
                    }
                    RigidRow::Limit { .. } => {}
                }
            }
            self.touched[s] = touched;
            if !touched {
                continue;
            }
            // Y_s = M_s⁻¹ J_sᵀ, one solve per non-zero row of J_s (`active`, the rows that
            // touch the system; Y's other columns are left as they were and never read).
            let y = &mut self.minv_jt[s];
            if y.shape() != (nv, rows) {
                *y = DMat::zeros(nv, rows);
            }
            // J_sᵀ's columns (J_s's rows, contiguous) beside Y_s's.
            let jt = &mut self.jac_t[s];
            if jt.shape() != (nv, rows) {
                *jt = DMat::zeros(nv, rows);
            }
            let active = &mut self.active[s];
            active.clear();
            let col = &mut self.column[s];
            for r in 0..rows {
                for k in 0..nv {
                    col[k] = jac[(r, k)];
                }
                if col.iter().any(|x| *x != 0.0) {
                    jt.column_mut(r).copy_from_slice(col);
                    sys.solve_mass(&self.buffers[s], q, col);
                    y.column_mut(r).copy_from_slice(col);
                    active.push(r);
                }
            }
            // h J_s Y_s over the active rows only, at the blocks' places in G (a system
            // touched by few of the step's rows costs those rows', not all of them).
            let (jt, y) = (jt.as_slice(), y.as_slice());
            let places = &mut self.places;
            places.clear();
            places.extend(active.iter().map(|&r| global(r, &self.row_index)));
            if let Some(g_mat) = g_mat.as_deref_mut() {
                add_rigid_term(h, nv, jt, y, active, places, g_mat, &mut self.term);
            }
            for &r in active.iter() {
                let jr = &jt[r * nv..(r + 1) * nv];
                g[global(r, &self.row_index)] += dot(jr, &self.v_free[s]);
                start[global(r, &self.row_index)] += dot(jr, &states[s].v);
            }
        }
        let Some(g_mat) = g_mat else {
            return;
        };
        for (i, c) in self.rows.iter().enumerate() {
            if matches!(c.row, RigidRow::Limit { .. }) {
                // The frictionless rows' tangential entries: the normal row's diagonal (so G
                // keeps its scale for the solver), nothing else; with μ = 0, λ_t = 0 exactly.
                let n = 3 * self.row_index[i];
                let d = g_mat[(n + 2, n + 2)];
                let d = if d > 0.0 { d } else { 1.0 };
                g_mat[(n, n)] += d;
                g_mat[(n + 1, n + 1)] += d;
            }
        }
    }

    /// The rigid term as a low-rank product, `Σ_s h J_s M_s⁻¹ J_sᵀ = U C Uᵀ` over the NCP's
    /// `blocks` row blocks, after [`Self::assemble`]: `u` (3·blocks × r) holds the J_s of the
    /// systems this step's rows touch side by side, `c` (r × r) is block-diagonal with their
    /// h M_s⁻¹ (s/kg, or s/(kg·m²) for rotations; one mass solve per column, nv_s ≤ a robot's
    /// joints). Each frictionless limit's tangential diagonal, which `assemble` sets to its
    /// normal one in G, is pushed on `limits` as (row, value). Returns r.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::scene) fn low_rank(
        &mut self,
        rigid: &RigidScene,
        states: &[RigidState],
        h: f64,
        blocks: usize,
        u: &mut DMat,
        c: &mut DMat,
        limits: &mut Vec<(usize, f64)>,
    ) -> usize {
        let touched = |s: &usize| self.touched[*s];
        let r: usize = (0..rigid.systems.len())
            .filter(touched)
            .map(|s| rigid.systems[s].nv())
            .sum();
        for (m, shape) in [(&mut *u, (3 * blocks, r)), (&mut *c, (r, r))] {
            if m.shape() != shape {
                *m = DMat::zeros(shape.0, shape.1);
            } else {
                m.as_mut_slice().fill(0.0);
            }
        }
        let mut offset = 0;
        for (s, (sys, state)) in rigid.systems.iter().zip(states).enumerate() {
            if !self.touched[s] {
                continue;
            }
            let nv = sys.nv();
            let jac = &self.jac[s];
            for (i, &block) in self.row_index.iter().enumerate() {
                for row in 0..3 {
                    for k in 0..nv {
                        u[(3 * block + row, offset + k)] = jac[(3 * i + row, k)];
                    }
                }
            }
            let column = &mut self.column[s];
            for k in 0..nv {
                column.fill(0.0);
                column[k] = 1.0;
                sys.solve_mass(&self.buffers[s], &state.q, column);
                for (p, v) in column.iter().enumerate() {
                    c[(offset + p, offset + k)] = h * v;
                }
            }
            offset += nv;
        }
        // Exactly symmetric (each solve's round-off differs).
        for j in 0..r {
            for i in j + 1..r {
                let v = 0.5 * (c[(i, j)] + c[(j, i)]);
                c[(i, j)] = v;
                c[(j, i)] = v;
            }
        }
        limits.clear();
        for (i, row) in self.rows.iter().enumerate() {
            if matches!(row.row, RigidRow::Limit { .. }) {
                let n = 3 * self.row_index[i];
                let normal = u.row(n + 2);
                let d = (normal * &*c).dot(&normal);
                let d = if d > 0.0 { d } else { 1.0 };
                limits.push((n, d));
                limits.push((n + 1, d));
            }
        }
        r
    }

    /// v⁺ = v_free + h Y λ for every system, λ the NCP's solution (3 per block of the NCP,
    /// this step's blocks read at their indices), and the outcome of the NCP for the rigid
    /// rows.
    pub(in crate::scene) fn apply(
        &mut self,
        rigid: &RigidScene,
        h: f64,
        lambda: &[f64],
        solution: &NcpSolution,
        tolerance: f64,
        states: &mut [RigidState],
    ) {
        self.lambda.clear();
        for &i in &self.row_index {
            self.lambda.extend_from_slice(&lambda[3 * i..3 * i + 3]);
        }
        let rows = self.lambda.len();
        for (s, (sys, st)) in rigid.systems.iter().zip(states.iter_mut()).enumerate() {
            st.v.copy_from_slice(&self.v_free[s]);
            if self.touched[s] && rows > 0 {
                let y = &self.minv_jt[s];
                for k in 0..sys.nv() {
                    let mut dv = 0.0;
                    for &r in &self.active[s] {
                        dv += y[(k, r)] * self.lambda[r];
                    }
                    st.v[k] += h * dv;
                }
            }
        }
        let tol = crate::contact::ModeTolerance::for_ncp_tolerance(tolerance);
        let sigma = solution.sigma.as_slice();
        // The rigid rows' own blocks (a soft–rigid block counts with its soft body).
        let own = self.detection.contacts.len();
        let active = self.row_index[..own]
            .iter()
            .filter(|&&i| {
                let at = |v: &[f64]| Vec3::new(v[3 * i], v[3 * i + 1], v[3 * i + 2]);
                !matches!(
                    classify_contact(&at(lambda), &at(sigma), tol),
                    ContactMode::Breaking
                )
            })
            .count();
        self.outcome = RigidOutcome {
            detected: own,
            active,
            converged: solution.converged,
            iterations: solution.iterations,
            residual: solution.residuals.max(),
        };
        self.applied = true;
    }

    /// The step's end: v⁺ = v_free when no NCP row touched the systems (`Self::apply`
    /// was not called), then q⁺ = q ⊕ h v⁺. Returns the rigid rows' NCP outcome.
    pub fn finish(
        &mut self,
        rigid: &RigidScene,
        h: f64,
        states: &mut [RigidState],
    ) -> RigidOutcome {
        if !self.applied {
            self.lambda.clear();
            for (st, v) in states.iter_mut().zip(&self.v_free) {
                st.v.copy_from_slice(v);
            }
        }
        for (s, (sys, st)) in rigid.systems.iter().zip(states.iter_mut()).enumerate() {
            integrate(sys, st, h, &mut self.q_scratch[s]);
        }
        self.outcome.clone()
    }
}

/// `Σ_k a_k b_k`, summed in order (the same round-off as an indexed loop).
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut v = 0.0;
    for (x, y) in a.iter().zip(b) {
        v += x * y;
    }
    v
}

/// `q ← q ⊕ h v` on the system's configuration manifold.
fn integrate(sys: &RigidSystem, state: &mut RigidState, h: f64, q0: &mut Vec<f64>) {
    q0.clear();
    q0.extend_from_slice(&state.q);
    sys.integrate(q0, &state.v, h, &mut state.q);
}
