//! One NCP of the contact stage (`scene::step::contact::stage`): the contacts of a group of bodies
//! that touch each other (a single body when it touches no other), assembled from each body's
//! own Jacobian block H_b and its own step factorisation,
//!
//! ```text
//! G = Σ_b P_b (h H_b A_b⁻¹ H_bᵀ) P_bᵀ,   g = Σ_b P_b H_b v_free,b + correction,
//! v_b⁺ = v_free,b + A_b⁻¹ h H_bᵀ P_bᵀ λ
//! ```
//!
//! where P_b places the body's contacts (`ContactWorkspace::rows`) among the group's. A
//! contact with one body in the group is a row block of that body's H_b only; a contact
//! between two bodies is a row block of both. For a body alone P_b = I: its NCP is the one of
//! a one-body scene. The NCP is solved by ADMM or PGS (`[contact] solver`), warm-started
//! from the last step's λ of the group with the same contact set.
//!
//! A group whose bodies touch a rigid body or robot link, or are attached to one
//! (`scene::model::soft_rigid`), takes the whole rigid NCP in ([`RigidPart`]): its rows are, after
//! the soft ones, the rigid contacts and limits, and G gains the rigid term
//! `Σ_s h J_s M_s⁻¹ J_sᵀ` (`RigidWorkspace::assemble`) over every row with a rigid part, so
//! a soft–rigid row couples the two (paper 002 Eq. 3 and paper 004 Eq. 1 in one NCP);
//! afterwards each rigid system gets v⁺ = v_free + h M⁻¹ J_sᵀ λ. Attachment rows are
//! bilateral (`FrictionCone::bilateral`) with the correction `g += (1 − K_p) e / h` of their
//! position error e.

use crate::contact::{
    AdmmSettings, BodyContact, ContactMode, ContactProblem, FactoredDelassus, FrictionCone,
    PenetrationCorrection, ReductionBody, add_blocks, assemble_delassus, classify,
    free_contact_velocity, push_body_contact, push_node_contacts, push_self_contacts, scatter,
};
use crate::error::Result;
use crate::math::{DMat, DVec, Vec3};

use super::group_apply::apply_to_bodies;
use super::group_ncp::GroupNcp;
use super::group_solve::{GroupSolvers, solve_assembled, solve_reduced};
use super::stage::{ContactBody, ContactOutcome};
use crate::scene::file::contact::{ContactSolverKind, DelassusKind};
use crate::scene::model::RigidState;
use crate::scene::model::contact::SceneContact;
use crate::scene::model::rigid::RigidScene;
use crate::scene::step::rigid::detection::{RigidContact, RigidRow, RowKey};
use crate::scene::step::rigid::stage::RigidWorkspace;

/// What identifies a contact from one step to the next (warm start).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ContactKey {
    /// Node `node` of body `body` against obstacle `obstacle`.
    Obstacle {
        body: usize,
        node: usize,
        obstacle: usize,
    },
    /// Node `node` of body `body` against surface triangle `triangle` of body `face_body`
    /// (the same body for a self-contact).
    Face {
        body: usize,
        node: usize,
        face_body: usize,
        triangle: usize,
    },
    /// Node `node` of body `body` against a rigid shape or attached to a rigid body
    /// (`SoftRigidRow::key`).
    SoftRigid {
        body: usize,
        key: (u8, usize, usize, usize),
    },
    /// A row block of the rigid NCP (`RigidWorkspace`'s key).
    Rigid(RowKey),
}

/// The rigid part of the scene, as a group's NCP takes it in (module doc).
pub struct RigidPart<'a> {
    /// The free bodies, robots and fixed rigid bodies.
    pub scene: &'a RigidScene,
    /// The rigid stage's buffers, prepared for this step.
    pub ws: &'a mut RigidWorkspace,
    /// The rigid systems' states (v ← v⁺ here; q is integrated by `RigidWorkspace::finish`).
    pub states: &'a mut [RigidState],
}

/// What the next step's NCP over the same contacts starts from: the contacts, λ (N) and
/// the leading eigenvector of G (unit; empty after PGS).
type WarmStart = (Vec<ContactKey>, Vec<f64>, Vec<f64>);

/// The warm starts one step leaves for the next, one per NCP it solved
/// ([`GroupWorkspace::warm_starts`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WarmStarts(Vec<WarmStart>);

/// Buffers of the group NCPs and the last step's solutions (warm starts).
#[derive(Default)]
pub struct GroupWorkspace {
    /// The NCPs solved in the last step (the first `solved_count`; later slots are reused
    /// buffers).
    solved: Vec<GroupNcp>,
    solved_count: usize,
    g: Vec<f64>,
    start_velocity: Vec<f64>,
    gaps: Vec<f64>,
    /// Per row block when the group has rigid rows: the `(first, count)` of the blocks that
    /// share its penetration correction (its rigid pair's manifold, else itself); empty
    /// otherwise.
    manifolds: Vec<(usize, usize)>,
    friction: Vec<f64>,
    /// The bilateral row blocks (attachments) and their position errors (m, world), and
    /// whether each row block is one.
    bilateral: Vec<(usize, Vec3)>,
    is_bilateral: Vec<bool>,
    /// A frictionless limit's tangential diagonal entries of G (row, value) when G is not
    /// formed (`RigidWorkspace::low_rank`).
    limits: Vec<(usize, f64)>,
    /// The row blocks with a moving rigid side: (block, its rigid part).
    rigid_rows: Vec<(usize, RigidContact)>,
    local: Vec<f64>,
    keys: Vec<ContactKey>,
    /// Per NCP of the last step (and, filling, of this one): its contacts, λ, and the ADMM
    /// solver's estimate of G's leading eigenvector (`AdmmSolver::set_spectrum_hint`).
    previous: Vec<WarmStart>,
    next: Vec<WarmStart>,
    /// The solvers of the assembled NCPs (and ADMM's for the factored ones).
    solvers: GroupSolvers,
}

impl GroupWorkspace {
    /// Starts a step: the solutions of the groups solved from now on become the next step's
    /// warm starts.
    pub fn begin_step(&mut self) {
        self.next.clear();
        self.solved_count = 0;
    }

    /// Ends a step (see [`Self::begin_step`]).
    pub fn end_step(&mut self) {
        std::mem::swap(&mut self.previous, &mut self.next);
    }

    /// The warm starts the next step will read (those the last step left).
    pub fn warm_starts(&self) -> WarmStarts {
        WarmStarts(self.previous.clone())
    }

    /// Replaces the warm starts the next step will read (e.g. those saved with a state the
    /// step is run again from).
    pub fn set_warm_starts(&mut self, warm: &WarmStarts) {
        self.previous.clone_from(&warm.0);
    }

    /// Drops every warm start.
    pub fn forget(&mut self) {
        self.previous.clear();
        self.next.clear();
        self.solved_count = 0;
    }

    /// The NCPs of the last step, one per group of bodies with contacts.
    pub fn solved(&self) -> &[GroupNcp] {
        &self.solved[..self.solved_count]
    }
}

/// Builds, solves and applies the NCP of the bodies `members` (scene indices, increasing)
/// whose contacts between each other are the entries of `body_contacts` linking them, with
/// the rigid part when `rigid` is given (module doc); writes their outcomes and returns the
/// number of active contacts.
#[allow(clippy::too_many_arguments)]
pub fn solve_group(
    contact: &SceneContact,
    h: f64,
    bodies: &mut [ContactBody],
    members: &[usize],
    body_contacts: &[BodyContact],
    ws: &mut GroupWorkspace,
    outcomes: &mut [ContactOutcome],
    mut rigid: Option<RigidPart<'_>>,
) -> Result<usize> {
    let settings = &contact.settings;
    let between = settings.between_bodies;
    for &b in members {
        outcomes[b] = ContactOutcome {
            converged: true,
            obstacle_forces: vec![Vec3::zeros(); contact.obstacles.len()],
            body_forces: if between {
                vec![Vec3::zeros(); bodies.len()]
            } else {
                Vec::new()
            },
            ..Default::default()
        };
    }
    // The group's contacts: each body's own (obstacles, then self), then those between them.
    ws.keys.clear();
    ws.gaps.clear();
    ws.friction.clear();
    for &b in members {
        let w = &mut *bodies[b].workspace;
        for c in &w.contacts {
            w.rows.push(ws.keys.len());
            ws.keys.push(ContactKey::Obstacle {
                body: b,
                node: c.node,
                obstacle: c.obstacle,
            });
            ws.gaps.push(c.gap);
            ws.friction.push(contact.friction[c.obstacle]);
        }
        for c in &w.self_contacts {
            w.rows.push(ws.keys.len());
            ws.keys.push(ContactKey::Face {
                body: b,
                node: c.node,
                face_body: b,
                triangle: c.hit.triangle,
            });
            ws.gaps.push(c.gap());
            ws.friction.push(settings.friction);
        }
    }
    if members.len() > 1 {
        for c in body_contacts {
            if members.binary_search(&c.node_body).is_err() {
                continue;
            }
            for body in [c.node_body, c.face_body] {
                bodies[body].workspace.rows.push(ws.keys.len());
            }
            ws.keys.push(ContactKey::Face {
                body: c.node_body,
                node: c.node,
                face_body: c.face_body,
                triangle: c.hit.triangle,
            });
            ws.gaps.push(c.gap());
            ws.friction.push(settings.friction);
        }
    }
    // Each body's rows against rigid bodies (contacts, then attachments).
    ws.bilateral.clear();
    ws.rigid_rows.clear();
    for &b in members {
        let w = &mut *bodies[b].workspace;
        for r in &w.rigid_rows {
            let i = ws.keys.len();
            w.rows.push(i);
            ws.keys.push(ContactKey::SoftRigid {
                body: b,
                key: r.key,
            });
            ws.gaps.push(r.gap);
            ws.friction.push(r.friction);
            if r.bilateral {
                ws.bilateral.push((i, r.error));
            }
            if let Some(side) = r.side {
                let row = RigidRow::Point {
                    side,
                    point: r.point,
                    frame: r.frame,
                    sign: -r.soft_sign,
                };
                ws.rigid_rows.push((
                    i,
                    RigidContact {
                        row,
                        gap: r.gap,
                        friction: r.friction,
                    },
                ));
            }
        }
    }
    // The rigid NCP's own rows (counted by the rigid stage's outcome).
    let mut own_rigid = 0..0;
    ws.manifolds.clear();
    if let Some(rp) = rigid.as_mut() {
        let start = ws.keys.len();
        own_rigid = start..start + rp.ws.own_rows().len();
        rp.ws.place_own_rows(start);
        for (c, key) in rp.ws.own_rows().iter().zip(rp.ws.own_keys()) {
            ws.keys.push(ContactKey::Rigid(*key));
            ws.gaps.push(c.gap);
            ws.friction.push(c.friction);
        }
        ws.manifolds.extend((0..start).map(|i| (i, 1)));
        ws.manifolds.extend(
            rp.ws
                .correction_manifolds()
                .iter()
                .map(|&(first, count)| (start + first, count)),
        );
        for (i, row) in &ws.rigid_rows {
            rp.ws.push_row(*row, *i);
        }
    }
    let k = ws.keys.len();
    if k == 0 {
        return Ok(0);
    }
    // This step's next NCP slot (its buffers reused from earlier steps).
    if ws.solved.len() == ws.solved_count {
        ws.solved.push(GroupNcp::default());
    }
    let ncp = &mut ws.solved[ws.solved_count];
    ws.solved_count += 1;
    ncp.members.clear();
    ncp.members.extend_from_slice(members);
    // G, g and the start velocity H v (for the correction), body by body. G is not formed
    // (`[contact] delassus = "factored"`) for one soft body whose rows all lie within its
    // elements and touch no moving rigid body.
    let mut factored = settings.delassus == DelassusKind::Factored
        && members.len() == 1
        && ws.rigid_rows.is_empty()
        && own_rigid.is_empty();
    let size_delassus = |g: &mut DMat| {
        if g.nrows() != 3 * k {
            *g = DMat::zeros(3 * k, 3 * k);
        } else {
            // A memset (nalgebra's `fill` walks the matrix element by element).
            g.as_mut_slice().fill(0.0);
        }
    };
    // The Jacobians first: whether the attachment rows can be eliminated through their
    // bodies' factors (`contact::AttachedReduction`, G never formed) depends on them.
    for &b in members {
        let w = &mut *bodies[b].workspace;
        push_node_contacts(&w.contacts, &w.points, &mut w.jacobian)?;
        push_self_contacts(&w.self_contacts, &w.points, &mut w.jacobian)?;
        for &i in &w.shared {
            push_body_contact(&body_contacts[i], b, &w.points, &mut w.jacobian)?;
        }
        for r in &w.rigid_rows {
            let (points, len) = r.soft_weights();
            w.jacobian.push_point_contact(&r.frame, &points[..len])?;
        }
    }
    ws.is_bilateral.clear();
    ws.is_bilateral.resize(k, false);
    for &(i, _) in &ws.bilateral {
        ws.is_bilateral[i] = true;
    }
    // A forward step's NCP with attachments: eliminated through the factors. A step whose
    // derivatives follow forms G (they read it).
    let reduced = !factored
        && !ws.bilateral.is_empty()
        && members
            .iter()
            .all(|&b| !bodies[b].workspace.delassus_ws.keeps_columns())
        && {
            let views: Vec<ReductionBody> = members
                .iter()
                .map(|&b| ReductionBody {
                    jacobian: &bodies[b].workspace.jacobian,
                    rows: &bodies[b].workspace.rows,
                    dofs: bodies[b].dofs,
                    factor: bodies[b].factor,
                })
                .collect();
            ws.solvers.attached.prepare(h, &views, &ws.is_bilateral)
        };
    if !factored && !reduced {
        size_delassus(&mut ncp.delassus);
    }
    ws.g.clear();
    ws.g.resize(3 * k, 0.0);
    ws.start_velocity.clear();
    ws.start_velocity.resize(3 * k, 0.0);
    for &b in members {
        let body = &mut bodies[b];
        let w = &mut *body.workspace;
        if factored && w.factored.prepare(h, &w.jacobian, body.pattern).is_err() {
            // A row reads two nodes no element shares (the operator would need a new
            // pattern): this NCP is assembled.
            factored = false;
            size_delassus(&mut ncp.delassus);
        }
        let rows = &w.rows;
        // With the reduction, a body with attachment rows needs no G of its own.
        let attached = reduced && rows.iter().any(|&i| ws.is_bilateral[i]);
        if !factored && !attached {
            assemble_delassus(
                h,
                &w.jacobian,
                body.dofs,
                body.factor,
                &mut w.delassus_ws,
                &mut w.delassus,
            )?;
        }
        if !factored && !reduced {
            add_blocks(w.delassus.as_slice(), rows, &mut ncp.delassus);
        }
        ws.local.resize(3 * rows.len(), 0.0);
        free_contact_velocity(&w.jacobian, &w.v_nodes, &mut ws.local);
        scatter(rows, &ws.local, &mut ws.g);
        w.jacobian.apply(&body.state.velocities, &mut ws.local);
        scatter(rows, &ws.local, &mut ws.start_velocity);
    }
    if let Some(rp) = rigid.as_mut().filter(|_| !factored) {
        rp.ws.assemble(
            rp.scene,
            rp.states,
            h,
            (!reduced).then_some(&mut ncp.delassus),
            &mut ws.g,
            &mut ws.start_velocity,
        );
    }
    // G is exactly symmetric by construction (each body's block and the rigid term are
    // computed in one triangle and mirrored; `add_blocks` adds both at mirrored places in the
    // same order), so the problem need not check it.
    let correction = PenetrationCorrection::default();
    let manifolds = (!ws.manifolds.is_empty()).then_some(ws.manifolds.as_slice());
    correction.apply_shared(h, &ws.gaps, manifolds, &ws.start_velocity, &mut ws.g)?;
    let mut cones = ws
        .friction
        .iter()
        .map(|&mu| FrictionCone::new(mu))
        .collect::<Result<Vec<_>>>()?;
    for &(i, e) in &ws.bilateral {
        cones[i] = FrictionCone::bilateral();
        for p in 0..3 {
            ws.g[3 * i + p] += (1.0 - correction.kp) * e[p] / h;
        }
    }
    let previous = ws.previous.iter().find(|(keys, _, _)| *keys == ws.keys);
    let warm = previous.map(|(_, lambda, _)| lambda.as_slice());
    ws.solvers
        .admm
        .set_spectrum_hint(previous.map(|(_, _, eigenvector)| eigenvector.as_slice()));
    // Rows between rigid bodies alone (a box on four corners: 12 rows over 6 degrees of
    // freedom) leave λ non-unique. Plain ADMM's proximal iterates then settle on a solution
    // that moves smoothly with the data, which the derivatives rely on; Anderson extrapolation
    // lands on another one from solve to solve. Such groups are solved without it; rows with
    // a soft part carry its compliance.
    let rigid_only_rows = ws.keys.iter().any(|k| matches!(k, ContactKey::Rigid(_)));
    let defaults = AdmmSettings::default();
    ws.solvers.admm.settings = AdmmSettings {
        tolerance: settings.tolerance,
        max_iterations: settings.max_iterations,
        anderson_memory: if rigid_only_rows || !settings.acceleration {
            0
        } else {
            defaults.anderson_memory
        },
        // The same for polishing: it would pick one of many solutions, where ADMM's.
        polish: settings.polish && !rigid_only_rows,
        ..defaults
    };
    ncp.assembled = !factored && !reduced;
    // Whether a solver iterated (not when the elimination left no contact to solve for).
    let mut iterated = true;
    let solution = if reduced {
        let GroupSolvers {
            rigid_u, rigid_c, ..
        } = &mut ws.solvers;
        match rigid.as_mut() {
            Some(rp) => rp
                .ws
                .low_rank(rp.scene, rp.states, h, k, rigid_u, rigid_c, &mut ws.limits),
            None => {
                *rigid_u = DMat::zeros(3 * k, 0);
                *rigid_c = DMat::zeros(0, 0);
                ws.limits.clear();
                0
            }
        };
        let plain: Vec<(&DMat, &[usize])> = members
            .iter()
            .map(|&b| &*bodies[b].workspace)
            .filter(|w| !w.rows.iter().any(|&i| ws.is_bilateral[i]))
            .map(|w| (&w.delassus, w.rows.as_slice()))
            .collect();
        let problem = ws.solvers.attached.reduce(
            &plain,
            &ws.solvers.rigid_u,
            &ws.solvers.rigid_c,
            &ws.g,
            &cones,
            &ws.limits,
        )?;
        ncp.delassus = DMat::zeros(0, 0);
        // No derivative follows (they need G), so the accelerated iterates may stop at the
        // tolerance itself.
        ws.solvers.admm.settings.accelerated_margin = 1.0;
        let (solution, solved) = solve_reduced(&problem, &cones, settings, &mut ws.solvers, warm)?;
        iterated = solved;
        solution
    } else if factored {
        let body = &mut bodies[members[0]];
        let mut delassus = FactoredDelassus::new(
            body.pattern,
            body.a_values,
            body.factor,
            &mut body.workspace.factored,
        )?;
        ncp.delassus = DMat::zeros(0, 0);
        // No derivative follows (they need G), so the accelerated iterates may stop at the
        // tolerance itself.
        ws.solvers.admm.settings.accelerated_margin = 1.0;
        ws.solvers
            .admm
            .solve_with(&mut delassus, &ws.g, &cones, warm)?
    } else {
        let problem = ContactProblem::with_symmetric_cones(
            std::mem::replace(&mut ncp.delassus, DMat::zeros(0, 0)),
            DVec::from_column_slice(&ws.g),
            cones,
        )?;
        let (solution, solved) = solve_assembled(&problem, settings, &mut ws.solvers, warm)?;
        iterated = solved;
        ncp.delassus = problem.into_delassus();
        solution
    };
    let lambda = solution.lambda.as_slice();
    ncp.lambda.clear();
    ncp.lambda.extend_from_slice(lambda);
    ncp.sigma.clear();
    ncp.sigma.extend_from_slice(solution.sigma.as_slice());
    ncp.friction.clear();
    ncp.friction.extend_from_slice(&ws.friction);
    // A rigid system takes its obstacles' friction unless it has a `friction` of its own.
    let rigid_friction_is_the_obstacles = |s: usize| {
        rigid
            .as_ref()
            .is_some_and(|rp| rp.scene.systems[s].friction.is_none())
    };
    ncp.friction_obstacle.clear();
    ncp.friction_obstacle
        .extend(ws.keys.iter().map(|key| match *key {
            ContactKey::Obstacle { obstacle, .. } => Some(obstacle),
            // Kind 0: a rigid collider against obstacle key.3 (rigid_detection).
            ContactKey::Rigid(key) if key.0 == 0 && rigid_friction_is_the_obstacles(key.1) => {
                Some(key.3)
            }
            _ => None,
        }));
    ncp.bilateral.clear();
    ncp.bilateral.extend_from_slice(&ws.is_bilateral);
    let eigenvector = match settings.solver {
        ContactSolverKind::Admm if iterated => ws.solvers.admm.eigenvector().to_vec(),
        _ => Vec::new(),
    };
    ws.next
        .push((ws.keys.clone(), lambda.to_vec(), eigenvector));
    let modes = classify(
        lambda,
        solution.sigma.as_slice(),
        crate::contact::ModeTolerance::for_ncp_tolerance(settings.tolerance),
    );
    apply_to_bodies(
        h,
        members,
        bodies,
        body_contacts,
        &solution,
        &modes,
        &ws.is_bilateral,
        outcomes,
    );
    if let Some(rp) = rigid {
        rp.ws.apply(
            rp.scene,
            h,
            lambda,
            &solution,
            settings.tolerance,
            rp.states,
        );
    }
    Ok(modes
        .iter()
        .enumerate()
        .filter(|(i, m)| **m != ContactMode::Breaking && !own_rigid.contains(i))
        .count())
}
