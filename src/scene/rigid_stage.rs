//! The rigid stage of the step: free bodies and robots advance by paper 002 Eq. 3,
//!
//! ```text
//! v_free = v + h ABA(q, v, τ − d ∘ v)                  (rigid::free_velocity)
//! σ = G λ + g,   G = Σ_s h J_s M_s⁻¹ J_sᵀ,   g = Σ_s J_s v_free,s + Φ/h − K_p [Φ/h]₋
//! v⁺ = v_free + h M⁻¹ J_sᵀ λ,   q⁺ = q ⊕ h v⁺         (one Cholesky of M per system and step)
//! ```
//!
//! with λ (N, or N·m for a joint limit) solving the same frictional NCP as the soft contacts
//! (`contact::ContactProblem`, ADMM or PGS per `[contact] solver`, the same tolerance, the
//! same penetration correction and the same non-convergence status). τ is the system's input
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
//! touch in the robot's initial configuration (collision models overlap around joints). The NCP is warm-started from the previous step's λ when the contact set (pairs and
//! parry feature ids) is unchanged. Soft bodies do not touch rigid ones yet (the next issue).

use crate::contact::{
    AdmmSettings, AdmmSolver, ContactMode, ContactProblem, PenetrationCorrection, PgsSettings,
    PgsSolver, ShapePose, classify_contact,
};
use crate::error::Result;
use crate::math::{DMat, DVec, Vec3};

use super::contact_file::ContactSolverKind;
use super::contact_stage::{SceneContact, mode_tolerance};
use super::rigid_detection::{Motion, RigidContact, RigidDetection, RigidRow, RowKey};
use super::rigid_model::{RigidScene, RigidSystem};
use super::rigid_system::SystemBuffers;

/// The state of one rigid system (a free body or a robot).
#[derive(Debug, Clone, PartialEq)]
pub struct RigidState {
    /// Configuration (nq): joint angles and positions, a free-flyer's `x y z qx qy qz qw`.
    pub q: Vec<f64>,
    /// Velocity (nv; a free-flyer's twist in its own frame).
    pub v: Vec<f64>,
    /// The joint input applied in the last step (N·m, N; nv), after clamping.
    pub tau: Vec<f64>,
}

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
    /// J_s (3m × nv_s) and Y_s = M_s⁻¹ J_sᵀ (nv_s × 3m) of the last step.
    jac: Vec<DMat>,
    minv_jt: Vec<DMat>,
    detection: RigidDetection,
    previous_keys: Vec<RowKey>,
    previous_lambda: Vec<f64>,
    lambda: Vec<f64>,
    /// G (3m × 3m), g, the start-of-step contact velocity, gaps and friction of the last step.
    delassus: DMat,
    g: Vec<f64>,
    start_velocity: Vec<f64>,
    gaps: Vec<f64>,
    friction: Vec<f64>,
    /// Per system: whether a row touches it, and a column buffer (nv).
    touched: Vec<bool>,
    column: Vec<Vec<f64>>,
    admm: AdmmSolver,
    pgs: PgsSolver,
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
            detection: RigidDetection::new(rigid),
            previous_keys: Vec::new(),
            previous_lambda: Vec::new(),
            lambda: Vec::new(),
            delassus: DMat::zeros(0, 0),
            g: Vec::new(),
            start_velocity: Vec::new(),
            gaps: Vec::new(),
            friction: Vec::new(),
            touched: vec![false; s.len()],
            column: s.iter().map(|x| vec![0.0; x.nv()]).collect(),
            admm: AdmmSolver::default(),
            pgs: PgsSolver::default(),
        }
    }

    /// The row blocks of the last step's NCP, in order.
    pub fn contacts(&self) -> &[RigidContact] {
        &self.detection.contacts
    }

    /// The last step's λ (3 per row block; N, or N·m / N for limits), contact frames.
    pub fn lambda(&self) -> &[f64] {
        &self.lambda
    }

    /// Advances every rigid system of `rigid` by one step of `h` (s) under `gravity` (m/s²,
    /// for free bodies; robots carry theirs); `contact` gives the obstacles and the NCP
    /// settings. Errors: a joint-space inertia matrix that is not positive definite, or an
    /// NCP the solver rejects (non-finite data).
    pub fn step(
        &mut self,
        rigid: &RigidScene,
        contact: &SceneContact,
        h: f64,
        gravity: &Vec3,
        states: &mut [RigidState],
    ) -> Result<RigidOutcome> {
        let systems = &rigid.systems;
        assert_eq!(systems.len(), states.len(), "one rigid state per system");
        // Free velocities, M factors, collider poses and reaches.
        for (s, (sys, st)) in systems.iter().zip(states.iter_mut()).enumerate() {
            let buf = &mut self.buffers[s];
            sys.prepare(buf, st, gravity, h, &mut self.v_free[s])?;
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
        let m = self.detection.contacts.len();
        if m == 0 {
            self.previous_keys.clear();
            self.previous_lambda.clear();
            self.lambda.clear();
            for (s, (sys, st)) in systems.iter().zip(states.iter_mut()).enumerate() {
                st.v.copy_from_slice(&self.v_free[s]);
                integrate(sys, st, h, &mut self.q_scratch[s]);
            }
            return Ok(RigidOutcome {
                converged: true,
                ..RigidOutcome::default()
            });
        }
        // J_s, Y_s = M_s⁻¹ J_sᵀ, G, g and the start-of-step contact velocity, in buffers
        // that are resized only when the number of contacts changes.
        let rows = 3 * m;
        let mut g_mat = std::mem::replace(&mut self.delassus, DMat::zeros(0, 0));
        if g_mat.shape() != (rows, rows) {
            g_mat = DMat::zeros(rows, rows);
        } else {
            g_mat.fill(0.0);
        }
        self.g.clear();
        self.g.resize(rows, 0.0);
        self.start_velocity.clear();
        self.start_velocity.resize(rows, 0.0);
        for (s, sys) in systems.iter().enumerate() {
            let nv = sys.nv();
            let q = &states[s].q;
            let jac = &mut self.jac[s];
            if jac.shape() != (rows, nv) {
                *jac = DMat::zeros(rows, nv);
            } else {
                jac.fill(0.0);
            }
            let mut touched = false;
            for (i, c) in self.detection.contacts.iter().enumerate() {
                match c.row {
                    RigidRow::Contact { a, b, point, frame } => {
                        for (side, sign) in [(Some(a), 1.0), (b, -1.0)] {
                            let Some(side) = side else { continue };
                            if side.system != s {
                                continue;
                            }
                            touched = true;
                            let pj = &mut self.point_jac[s];
                            sys.point_jacobian(&self.buffers[s], q, side.joint, &point, pj);
                            let ft = frame.transpose() * sign;
                            for k in 0..nv {
                                let col = ft * pj.column(k);
                                for r in 0..3 {
                                    jac[(3 * i + r, k)] += col[r];
                                }
                            }
                        }
                    }
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
            // Y_s = M_s⁻¹ J_sᵀ, one solve per non-zero row of J_s.
            let y = &mut self.minv_jt[s];
            if y.shape() != (nv, rows) {
                *y = DMat::zeros(nv, rows);
            }
            let col = &mut self.column[s];
            for r in 0..rows {
                for k in 0..nv {
                    col[k] = jac[(r, k)];
                }
                if col.iter().any(|x| *x != 0.0) {
                    sys.solve_mass(&self.buffers[s], q, col);
                }
                y.column_mut(r).copy_from_slice(col);
            }
            g_mat.gemm(h, jac, y, 1.0);
            for r in 0..rows {
                let (mut jf, mut j0) = (0.0, 0.0);
                for k in 0..nv {
                    jf += jac[(r, k)] * self.v_free[s][k];
                    j0 += jac[(r, k)] * states[s].v[k];
                }
                self.g[r] += jf;
                self.start_velocity[r] += j0;
            }
        }
        self.gaps.clear();
        self.friction.clear();
        for (i, c) in self.detection.contacts.iter().enumerate() {
            self.gaps.push(c.gap);
            self.friction.push(c.friction);
            if matches!(c.row, RigidRow::Limit { .. }) {
                // The frictionless rows' tangential entries: the normal row's diagonal (so G
                // keeps its scale for the solver), nothing else; with μ = 0, λ_t = 0 exactly.
                let d = g_mat[(3 * i + 2, 3 * i + 2)];
                let d = if d > 0.0 { d } else { 1.0 };
                g_mat[(3 * i, 3 * i)] += d;
                g_mat[(3 * i + 1, 3 * i + 1)] += d;
            }
        }
        // Symmetrise away the round-off of the products (the problem checks symmetry).
        for i in 0..rows {
            for j in 0..i {
                let avg = 0.5 * (g_mat[(i, j)] + g_mat[(j, i)]);
                g_mat[(i, j)] = avg;
                g_mat[(j, i)] = avg;
            }
        }
        PenetrationCorrection::default().apply(h, &self.gaps, &self.start_velocity, &mut self.g)?;
        let problem = ContactProblem::new(g_mat, DVec::from_column_slice(&self.g), &self.friction)?;
        let warm = (self.previous_keys == self.detection.keys
            && self.previous_lambda.len() == rows)
            .then_some(self.previous_lambda.as_slice());
        let settings = &contact.settings;
        let solution = match settings.solver {
            ContactSolverKind::Admm => {
                self.admm.settings = AdmmSettings {
                    tolerance: settings.tolerance,
                    max_iterations: settings.max_iterations,
                    ..AdmmSettings::default()
                };
                self.admm.solve(&problem, warm)
            }
            ContactSolverKind::Pgs => {
                self.pgs.settings = PgsSettings {
                    tolerance: settings.tolerance,
                    max_iterations: settings.max_iterations,
                };
                self.pgs.solve(&problem, warm)
            }
        };
        self.delassus = problem.into_delassus();
        let solution = solution?;
        self.lambda.clear();
        self.lambda.extend_from_slice(solution.lambda.as_slice());
        self.previous_keys.clear();
        self.previous_keys.extend_from_slice(&self.detection.keys);
        self.previous_lambda.clear();
        self.previous_lambda.extend_from_slice(&self.lambda);
        let tol = mode_tolerance(settings.tolerance);
        let active = (0..m)
            .filter(|&i| {
                let at = |v: &[f64]| Vec3::new(v[3 * i], v[3 * i + 1], v[3 * i + 2]);
                !matches!(
                    classify_contact(&at(&self.lambda), &at(solution.sigma.as_slice()), tol),
                    ContactMode::Breaking
                )
            })
            .count();
        // v⁺ = v_free + h Y_s λ, q⁺ = q ⊕ h v⁺.
        for (s, (sys, st)) in systems.iter().zip(states.iter_mut()).enumerate() {
            st.v.copy_from_slice(&self.v_free[s]);
            if self.touched[s] {
                let y = &self.minv_jt[s];
                for k in 0..sys.nv() {
                    let mut dv = 0.0;
                    for r in 0..rows {
                        dv += y[(k, r)] * self.lambda[r];
                    }
                    st.v[k] += h * dv;
                }
            }
            integrate(sys, st, h, &mut self.q_scratch[s]);
        }
        Ok(RigidOutcome {
            detected: m,
            active,
            converged: solution.converged,
            iterations: solution.iterations,
            residual: solution.residuals.max(),
        })
    }
}

/// `q ← q ⊕ h v` on the system's configuration manifold.
fn integrate(sys: &RigidSystem, state: &mut RigidState, h: f64, q0: &mut Vec<f64>) {
    q0.clear();
    q0.extend_from_slice(&state.q);
    sys.integrate(q0, &state.v, h, &mut state.q);
}
