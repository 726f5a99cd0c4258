//! The contact stage of the step (paper 004 §II-B, paper 002 Eqs. 41–42): after the free
//! solve v_free = v + Δv, nodes of the body's boundary surface are tested against the static
//! obstacles, the NCP `σ = G λ + g, K ∋ λ ⊥ σ + Φ(σ) ∈ K*` is built with the step's own
//! factorisation of A and solved, and the velocity is corrected.
//!
//! ```text
//! G = h H_c A⁻¹ H_cᵀ                       (assemble_delassus, the step's factor of A)
//! g = H_c v_free + Φ/h − K_p [Φ/h]₋          (PenetrationCorrection, K_p = 0.8, K_d = 0)
//! v⁺ = v_free + A⁻¹ h H_cᵀ λ                 (one more solve with the same factor)
//! ```
//!
//! With `[contact] self_contact = true` the body's surface nodes also meet its own
//! non-adjacent surface triangles (`contact::SelfContactDetector`, margin 2·h·max‖v_free‖);
//! those rows join the same NCP, after the obstacle contacts.
//!
//! Detection runs at the **current** positions xₙ (the gaps Φ are those at the start of the
//! step, as the penetration correction of Eq. 41 expects), with a margin of h·max‖v_free‖
//! over the candidate nodes: a node further than that from every obstacle cannot reach one
//! in this step. A node with an open gap Φ > 0 may approach by Φ before its contact acts.
//! Fixed nodes are not candidates. The NCP is warm-started from the previous step's λ when
//! the contact set (node, obstacle) is unchanged.
//!
//! Penetration tolerance: a converged NCP (tolerance `tol` on σ) lets a contact against a plane
//! sink by at most about h·tol per step, and the correction removes a fraction 1 − K_p = 0.2
//! of a penetration per step, so penetrations stay of order h·tol/(1 − K_p) (5e-12 m at
//! h = 0.01 s, tol = 1e-10). Curved obstacles add the curvature error of the linearised gap
//! over one step (O(h²‖v‖²/R)), which the same correction removes. λ is the contact force (N) in each contact's frame
//! `[t₁, t₂, n]`, n pointing from the obstacle into the body.

use std::path::Path;

use faer::dyn_stack::{MemBuffer, MemStack};

use crate::contact::{
    AdmmSettings, AdmmSolver, ContactJacobian, ContactMode, ContactProblem, DelassusWorkspace,
    ModeTolerance, NodeBroadPhase, NodeContact, Obstacle, PenetrationCorrection, PgsSettings,
    PgsSolver, SelfContact, SelfContactDetector, assemble_delassus, classify,
    free_contact_velocity, push_node_contacts, push_self_contacts,
};
use crate::error::Result;
use crate::fem::SoftBody;
use crate::linalg::{DofMap, NumericFactor};
use crate::math::{DMat, DVec, Vec3};

use super::contact_file::{ContactSection, ContactSolverKind, ObstacleSection};
use super::model::BodyState;

/// The scene's contact model: static obstacles, each with its Coulomb coefficient, and the
/// NCP solver settings. No obstacle means the contact stage does nothing.
#[derive(Debug, Clone, Default)]
pub struct SceneContact {
    /// The obstacles, in file order.
    pub obstacles: Vec<Obstacle>,
    /// Coulomb coefficient μ of each obstacle (its own `friction` or `[contact].friction`).
    pub friction: Vec<f64>,
    /// Solver, tolerance and iteration limit.
    pub settings: ContactSection,
}

impl SceneContact {
    /// The contact model of a scene file's `[contact]` and `[[obstacle]]` sections; mesh
    /// obstacle files are read relative to `dir` (the scene file's folder).
    pub fn build(
        contact: &ContactSection,
        obstacles: &[ObstacleSection],
        dir: &Path,
    ) -> Result<SceneContact> {
        contact.validate()?;
        Ok(SceneContact {
            obstacles: obstacles
                .iter()
                .enumerate()
                .map(|(i, o)| o.to_obstacle(i, dir))
                .collect::<Result<_>>()?,
            friction: obstacles
                .iter()
                .map(|o| o.friction.unwrap_or(contact.friction))
                .collect(),
            settings: contact.clone(),
        })
    }
}

/// What the contact stage did for one body in one step.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ContactOutcome {
    /// Detected contacts (NCP size / 3).
    pub detected: usize,
    /// Contacts that carry force at the solution (sticking or sliding, not breaking).
    pub active: usize,
    /// Whether the NCP solver reached its tolerance (true when there was no contact).
    pub converged: bool,
    /// Solver iterations (ADMM iterations or PGS sweeps).
    pub iterations: usize,
    /// Largest NCP residual measure at the returned solution.
    pub residual: f64,
    /// Total normal force Σ λ_N (N).
    pub normal_force: f64,
    /// Per obstacle (scene order), the resultant force it exerts on the body (N, world
    /// frame): Σ over its contacts of `[t₁, t₂, n] λ`. Empty when the scene has no obstacle.
    pub obstacle_forces: Vec<Vec3>,
}

/// Reusable buffers of the contact stage of one body.
pub struct ContactWorkspace {
    candidates: Vec<usize>,
    broad_phase: NodeBroadPhase,
    contacts: Vec<NodeContact>,
    self_detector: SelfContactDetector,
    self_contacts: Vec<SelfContact>,
    jacobian: ContactJacobian,
    delassus_ws: DelassusWorkspace,
    delassus: DMat,
    g: Vec<f64>,
    start_velocity: Vec<f64>,
    gaps: Vec<f64>,
    friction: Vec<f64>,
    v_nodes: Vec<Vec3>,
    full: Vec<f64>,
    red: Vec<f64>,
    solve_buffer: MemBuffer,
    admm: AdmmSolver,
    pgs: PgsSolver,
    /// (node, obstacle) of the last step's contacts and their λ: the warm start when the
    /// contact set did not change.
    previous: Vec<(usize, usize)>,
    previous_lambda: Vec<f64>,
}

impl ContactWorkspace {
    /// Buffers for `body` whose step matrix is factorised in `factor`; the candidates are the
    /// nodes of its boundary triangles that are not fixed.
    pub fn new(body: &SoftBody, factor: &NumericFactor) -> ContactWorkspace {
        let dofs = body.pattern().dofs();
        let mut on_surface = vec![false; body.node_count()];
        for t in body.mesh().boundary_triangles() {
            for n in t {
                on_surface[n] = true;
            }
        }
        let candidates = (0..body.node_count())
            .filter(|&n| on_surface[n] && (0..3).any(|p| dofs.reduced_index(3 * n + p).is_some()))
            .collect();
        ContactWorkspace {
            candidates,
            broad_phase: NodeBroadPhase::new(),
            contacts: Vec::new(),
            self_detector: SelfContactDetector::new(
                body.mesh().boundary_triangles(),
                body.rest_positions(),
            ),
            self_contacts: Vec::new(),
            jacobian: ContactJacobian::new(body.node_count()),
            delassus_ws: DelassusWorkspace::default(),
            delassus: DMat::zeros(0, 0),
            g: Vec::new(),
            start_velocity: Vec::new(),
            gaps: Vec::new(),
            friction: Vec::new(),
            v_nodes: vec![Vec3::zeros(); body.node_count()],
            full: vec![0.0; 3 * body.node_count()],
            red: vec![0.0; dofs.n_reduced()],
            solve_buffer: MemBuffer::new(factor.solve_scratch(1)),
            admm: AdmmSolver::default(),
            pgs: PgsSolver::default(),
            previous: Vec::new(),
            previous_lambda: Vec::new(),
        }
    }
}

impl ContactWorkspace {
    /// The contacts of the last step, in NCP order (empty when none was detected).
    pub fn contacts(&self) -> &[NodeContact] {
        &self.contacts
    }

    /// λ (N, 3 per contact in each contact's frame `[t₁, t₂, n]`) of the last step's NCP.
    pub fn lambda(&self) -> &[f64] {
        &self.previous_lambda
    }

    /// The last step's Delassus matrix G = h H_c A⁻¹ H_cᵀ (s/kg).
    pub fn delassus(&self) -> &DMat {
        &self.delassus
    }

    /// The last step's free contact velocity g, penetration correction included (m/s).
    pub fn free_velocity(&self) -> &[f64] {
        &self.g
    }

    /// The Coulomb coefficient of each contact of the last step.
    pub fn friction(&self) -> &[f64] {
        &self.friction
    }

    /// `A⁻¹ H_cᵀ` of the last step (free DOFs, column-major, one column per row of H_c), kept
    /// from the Delassus assembly.
    pub fn solved_columns(&self) -> &[f64] {
        self.delassus_ws.solved_columns()
    }

    /// The last step's contact Jacobian H_c (3 rows per contact).
    pub fn jacobian(&self) -> &ContactJacobian {
        &self.jacobian
    }
}

/// The mode tolerance the contact stage classifies with for an NCP tolerance `tolerance`:
/// the default, widened to ten times the solver tolerance.
pub fn mode_tolerance(tolerance: f64) -> ModeTolerance {
    ModeTolerance {
        force: ModeTolerance::default().force.max(10.0 * tolerance),
        velocity: ModeTolerance::default().velocity.max(10.0 * tolerance),
    }
}

/// The contact stage of one body (module doc): detects, solves the NCP and corrects
/// `vp_red` (the reduced v_free on entry, v⁺ on return) in place. `factor` is the step's
/// factorisation of A over the free DOFs of `dofs`.
///
/// Errors: invalid contact settings or a Delassus matrix the solver cannot use. An NCP that
/// stops at its iteration limit is `converged = false`, not an error.
#[allow(clippy::too_many_arguments)]
pub fn resolve_contacts(
    contact: &SceneContact,
    dofs: &DofMap,
    factor: &NumericFactor,
    bs: &BodyState,
    h: f64,
    vp_red: &mut [f64],
    ws: &mut ContactWorkspace,
) -> Result<ContactOutcome> {
    let mut outcome = ContactOutcome {
        converged: true,
        ..Default::default()
    };
    let self_contact = contact.settings.self_contact;
    if contact.obstacles.is_empty() && !self_contact {
        return Ok(outcome);
    }
    // v_free per node (fixed nodes 0).
    ws.full.fill(0.0);
    dofs.expand(vp_red, &mut ws.full);
    for (n, v) in ws.v_nodes.iter_mut().enumerate() {
        *v = Vec3::new(ws.full[3 * n], ws.full[3 * n + 1], ws.full[3 * n + 2]);
    }
    let reach = h * ws
        .candidates
        .iter()
        .map(|&n| ws.v_nodes[n].norm())
        .fold(0.0, f64::max);
    ws.contacts.clear();
    ws.broad_phase.detect(
        &contact.obstacles,
        &bs.positions,
        &ws.candidates,
        reach,
        &mut ws.contacts,
    )?;
    ws.self_contacts.clear();
    if self_contact {
        // Two surfaces may approach each other at up to twice the fastest node.
        ws.self_detector.detect(
            &bs.positions,
            &ws.candidates,
            2.0 * reach,
            &mut ws.self_contacts,
        )?;
    }
    let k_obstacles = ws.contacts.len();
    let k = k_obstacles + ws.self_contacts.len();
    outcome.detected = k;
    outcome.obstacle_forces = vec![Vec3::zeros(); contact.obstacles.len()];
    // Warm-start keys: (node, obstacle) for obstacle contacts, (node, obstacles + triangle)
    // for self-contacts.
    let n_obstacles = contact.obstacles.len();
    let key = |i: usize| -> (usize, usize) {
        if i < k_obstacles {
            let c = &ws.contacts[i];
            (c.node, c.obstacle)
        } else {
            let c = &ws.self_contacts[i - k_obstacles];
            (c.node, n_obstacles + c.triangle)
        }
    };
    let same_set = ws.previous.len() == k && (0..k).all(|i| ws.previous[i] == key(i));
    if !same_set {
        let keys: Vec<(usize, usize)> = (0..k).map(key).collect();
        ws.previous = keys;
        ws.previous_lambda.clear();
    }
    if k == 0 {
        return Ok(outcome);
    }
    ws.jacobian.clear();
    push_node_contacts(&ws.contacts, &mut ws.jacobian)?;
    push_self_contacts(&ws.self_contacts, &mut ws.jacobian)?;
    assemble_delassus(
        h,
        &ws.jacobian,
        dofs,
        factor,
        &mut ws.delassus_ws,
        &mut ws.delassus,
    )?;
    ws.g.resize(3 * k, 0.0);
    ws.start_velocity.resize(3 * k, 0.0);
    free_contact_velocity(&ws.jacobian, &ws.v_nodes, &mut ws.g);
    ws.jacobian.apply(&bs.velocities, &mut ws.start_velocity);
    ws.gaps.clear();
    ws.gaps.extend(ws.contacts.iter().map(|c| c.gap));
    ws.gaps.extend(ws.self_contacts.iter().map(|c| c.gap));
    PenetrationCorrection::default().apply(h, &ws.gaps, &ws.start_velocity, &mut ws.g)?;
    ws.friction.clear();
    ws.friction
        .extend(ws.contacts.iter().map(|c| contact.friction[c.obstacle]));
    ws.friction
        .extend(ws.self_contacts.iter().map(|_| contact.settings.friction));
    let problem = ContactProblem::new(
        std::mem::replace(&mut ws.delassus, DMat::zeros(0, 0)),
        DVec::from_column_slice(&ws.g),
        &ws.friction,
    )?;
    let s = &contact.settings;
    let warm = (ws.previous_lambda.len() == 3 * k).then_some(ws.previous_lambda.as_slice());
    let solution = match s.solver {
        ContactSolverKind::Admm => {
            ws.admm.settings = AdmmSettings {
                tolerance: s.tolerance,
                max_iterations: s.max_iterations,
                ..AdmmSettings::default()
            };
            ws.admm.solve(&problem, warm)?
        }
        ContactSolverKind::Pgs => {
            ws.pgs.settings = PgsSettings {
                tolerance: s.tolerance,
                max_iterations: s.max_iterations,
            };
            ws.pgs.solve(&problem, warm)?
        }
    };
    ws.delassus = problem.into_delassus();
    ws.previous_lambda.clear();
    ws.previous_lambda
        .extend_from_slice(solution.lambda.as_slice());
    outcome.converged = solution.converged;
    outcome.iterations = solution.iterations;
    outcome.residual = solution.residuals.max();
    let tol = mode_tolerance(s.tolerance);
    outcome.active = classify(solution.lambda.as_slice(), solution.sigma.as_slice(), tol)
        .iter()
        .filter(|m| **m != ContactMode::Breaking)
        .count();
    outcome.normal_force = (0..k).map(|c| solution.lambda[3 * c + 2]).sum();
    outcome.obstacle_forces = vec![Vec3::zeros(); contact.obstacles.len()];
    for (c, nc) in ws.contacts.iter().enumerate() {
        let l = Vec3::new(
            solution.lambda[3 * c],
            solution.lambda[3 * c + 1],
            solution.lambda[3 * c + 2],
        );
        outcome.obstacle_forces[nc.obstacle] += nc.frame * l;
    }
    // v⁺ = v_free + A⁻¹ h H_cᵀ λ.
    ws.full.fill(0.0);
    for r in 0..3 * k {
        let l = h * solution.lambda[r];
        for (node, c) in ws.jacobian.row(r) {
            for p in 0..3 {
                ws.full[3 * node + p] += l * c[p];
            }
        }
    }
    dofs.reduce(&ws.full, &mut ws.red);
    let stack = MemStack::new(&mut ws.solve_buffer);
    factor.solve_vec_in_place(&mut ws.red, stack);
    for (v, d) in vp_red.iter_mut().zip(&ws.red) {
        *v += d;
    }
    Ok(outcome)
}
