//! The contact stage of the step (paper 004 §II-B, paper 002 Eqs. 41–42): after every body's
//! free solve v_free = v + Δv, the nodes of each body's boundary surface are tested against the
//! static obstacles (and, when asked, against the body's own surface and the other bodies'
//! surfaces), the NCP `σ = G λ + g, K ∋ λ ⊥ σ + Φ(σ) ∈ K*` is built with the step's own
//! factorisations of A and solved, and the velocities are corrected.
//!
//! ```text
//! G = Σ_b h H_b A_b⁻¹ H_bᵀ                  (assemble_delassus per body, its step's factor)
//! g = Σ_b H_b v_free,b + Φ/h − K_p [Φ/h]₋    (PenetrationCorrection, K_p = 0.8, K_d = 0;
//!                                           a rigid pair's manifold shares its branch)
//! v_b⁺ = v_free,b + A_b⁻¹ h H_bᵀ λ           (one more solve with each body's factor)
//! ```
//!
//! H_b holds body b's columns of the contact Jacobian. A contact against an obstacle or the
//! body's own surface has columns in one body only; with `[contact] between_bodies = true` a
//! node of one body against a triangle of another (`contact::detect_body_contacts`, both
//! ways, margin h(max‖v_free,a‖ + max‖v_free,b‖)) has columns in both, so the bodies it links
//! share one NCP (`scene::step::contact::group`). Bodies that touch no other body are solved alone,
//! each with its own NCP, exactly as a one-body scene: no factorisation is shared or repeated.
//!
//! With `[contact] self_contact = true` a body's surface nodes also meet its own non-adjacent
//! surface triangles (`contact::detect_self_contacts`, margin 2·h·max‖v_free‖); those rows
//! join its NCP after the obstacle contacts. Row order of an NCP: for each of its bodies in
//! scene order, obstacle contacts then self-contacts; then the contacts between its bodies.
//!
//! Detection runs at the **current** positions xₙ (the gaps Φ are those at the start of the
//! step, as the penetration correction of Eq. 41 expects), with a margin of h·max‖v_free‖
//! over the candidate nodes: a node further than that from every obstacle cannot reach one
//! in this step. A node with an open gap Φ > 0 may approach by Φ before its contact acts.
//! Fixed nodes are not candidates. Candidates that the free motion keeps open, or that carried
//! no force in the last step, wait outside the NCPs and are checked after the solve
//! (`scene::step::contact::screen`: exact, it saves the Delassus columns of contacts that carry
//! nothing). An NCP is warm-started from the previous step's λ when its contact set (body,
//! node, obstacle or body and triangle) is unchanged.
//!
//! Penetration tolerance: a converged NCP (tolerance `tol` on σ) lets a contact against a plane
//! sink by at most about h·tol per step, and the correction removes a fraction 1 − K_p = 0.2
//! of a penetration per step, so penetrations stay of order h·tol/(1 − K_p) (5e-12 m at
//! h = 0.01 s, tol = 1e-10). Curved obstacles and moving triangles add the error of the
//! linearised gap over one step (O(h²‖v‖²/R)), which the same correction removes. λ is the
//! contact force (N) in each contact's frame `[t₁, t₂, n]`, n pointing from the obstacle (or
//! the triangle's body) into the node's body.

use crate::contact::{
    BodyContact, BodySurface, ModeTolerance, detect_body_contacts, detect_self_contacts,
};
use crate::error::Result;
use crate::linalg::{DofMap, NumericFactor, SymmetricPattern};
use crate::math::Vec3;

use super::group::{GroupWorkspace, RigidPart, WarmStarts, solve_group};
use super::group_ncp::GroupNcp;
use super::screen::{Deferred, ScreenKey, defer_open, record_idle, restore_violated};
use super::soft_rigid_rows::{RigidView, SoftSide, soft_rigid_rows};
use super::workspace::ContactWorkspace;
use crate::scene::model::BodyState;
use crate::scene::model::RigidState;
use crate::scene::model::contact::SceneContact;
use crate::scene::model::rigid::RigidScene;
use crate::scene::model::soft_rigid::SoftRigid;
use crate::scene::step::rigid::stage::RigidWorkspace;

/// What the contact stage did for one body in one step.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ContactOutcome {
    /// Contacts the body takes part in (its rows of its NCP / 3); a contact between two
    /// bodies counts for both.
    pub detected: usize,
    /// Of those, the ones that carry force at the solution (sticking or sliding, not
    /// breaking).
    pub active: usize,
    /// Whether the body's NCP reached its tolerance (true when there was no contact).
    pub converged: bool,
    /// Solver iterations (ADMM iterations or PGS sweeps) of the body's NCP.
    pub iterations: usize,
    /// Largest residual measure of the body's NCP at the returned solution.
    pub residual: f64,
    /// Σ λ_N over the body's contacts (N).
    pub normal_force: f64,
    /// Per obstacle (scene order), the resultant force it exerts on the body (N, world
    /// frame): Σ over its contacts of `[t₁, t₂, n] λ`. Empty when the contact stage is off.
    pub obstacle_forces: Vec<Vec3>,
    /// Per body (scene order), the resultant force that body exerts on this one through
    /// their contacts (N, world frame; zero for itself and for bodies it does not touch).
    /// Empty unless `[contact] between_bodies = true`.
    pub body_forces: Vec<Vec3>,
    /// The contact force on each node the body's contacts act on (N, world frame), as
    /// (node, H_bᵀ λ) in increasing node order: obstacles, itself, other bodies and rigid
    /// shapes, not attachments. Empty when the body has no contact.
    pub node_forces: Vec<(usize, Vec3)>,
}

/// One body as the contact stage sees it after its free solve.
pub struct ContactBody<'a> {
    /// Its free DOFs.
    pub dofs: &'a DofMap,
    /// The structure of its reduced A (over those DOFs).
    pub pattern: &'a SymmetricPattern,
    /// The step's A on that pattern (lower triangle, kg).
    pub a_values: &'a [f64],
    /// The step's factorisation of its A over those DOFs.
    pub factor: &'a NumericFactor,
    /// Its state at the start of the step (xₙ, vₙ).
    pub state: &'a BodyState,
    /// Its reduced velocity: v_free on entry, v⁺ on return (m/s).
    pub velocity: &'a mut [f64],
    /// Its contact buffers.
    pub workspace: &'a mut ContactWorkspace,
}

/// What the contact stage carries from one step to the next beside the state: each NCP's
/// warm start (λ and G's leading eigenvector) and the candidates that carried no force, left
/// out of the next NCP until they close (`scene::step::contact::screen`). Both change where a solve
/// starts and stops, not the solution beyond the tolerance; a step run again from a saved
/// state with this memory restored repeats its result bit for bit
/// ([`crate::scene::Stepper::memory`], the adjoint's recomputed steps).
#[derive(Debug, Clone, Default)]
pub struct ContactMemory {
    warm: WarmStarts,
    idle: std::collections::HashSet<ScreenKey>,
}

/// The contact stage's buffers shared by the bodies: the contacts between bodies and the NCP
/// of each group of touching bodies.
#[derive(Default)]
pub struct SceneContactWorkspace {
    body_contacts: Vec<BodyContact>,
    /// Candidates left out of this step's NCPs (`scene::step::contact::screen`).
    deferred: Vec<Deferred>,
    /// Each body's v_free (reduced), to solve again from when a deferred contact closes.
    saved: Vec<Vec<f64>>,
    /// Each body's node velocities after a solve (m/s).
    v_plus: Vec<Vec<Vec3>>,
    /// Each body's contact points' velocities after a solve (m/s; empty when its points are
    /// its nodes).
    v_plus_points: Vec<Vec<Vec3>>,
    /// NCP solves repeated because a deferred contact closed, since the stage was built.
    restarts: usize,
    /// The candidates of the last step that carried no force.
    idle: std::collections::HashSet<ScreenKey>,
    parent: Vec<usize>,
    members: Vec<usize>,
    group: GroupWorkspace,
    active: usize,
}

impl SceneContactWorkspace {
    /// What the next step will carry over from the last ([`ContactMemory`]).
    pub fn memory(&self) -> ContactMemory {
        ContactMemory {
            warm: self.group.warm_starts(),
            idle: self.idle.clone(),
        }
    }

    /// Restores a [`ContactMemory`] taken with [`Self::memory`].
    pub fn restore_memory(&mut self, memory: &ContactMemory) {
        self.group.set_warm_starts(&memory.warm);
        self.idle.clone_from(&memory.idle);
    }

    /// The contacts between bodies of the last step (the stage's list, in NCP order).
    pub fn body_contacts(&self) -> &[BodyContact] {
        &self.body_contacts
    }

    /// The NCPs of the last step: one per group of bodies with contacts (a body alone, or
    /// bodies that touch each other), with their members, G, λ, σ and μ.
    pub fn groups(&self) -> &[GroupNcp] {
        self.group.solved()
    }

    /// Active (sticking or sliding) contacts of the last step over the scene, each counted
    /// once.
    pub fn active_contacts(&self) -> usize {
        self.active
    }

    /// Candidates of the last step that the free motion kept open and the solution left open
    /// (out of its NCPs, λ = 0; `scene::step::contact::screen`).
    pub fn deferred_contacts(&self) -> usize {
        self.deferred.len()
    }

    /// Of [`Self::deferred_contacts`], the contacts between bodies (candidates of the last
    /// step besides [`Self::body_contacts`]).
    pub fn deferred_between_bodies(&self) -> usize {
        self.deferred
            .iter()
            .filter(|d| matches!(d, Deferred::Between(_)))
            .count()
    }

    /// Of [`Self::deferred_contacts`], the self-contacts (a body's points against its own
    /// surface).
    pub fn deferred_self_contacts(&self) -> usize {
        self.deferred
            .iter()
            .filter(|d| matches!(d, Deferred::SelfContact(..)))
            .count()
    }

    /// How many times, since it was built, the stage solved its NCPs again because a
    /// deferred contact closed.
    pub fn restarts(&self) -> usize {
        self.restarts
    }
}

/// A body's node velocities (m/s; fixed nodes 0) from its reduced velocity, through the
/// full-length buffer `full`.
fn nodal_velocities(dofs: &DofMap, reduced: &[f64], full: &mut [f64], out: &mut [Vec3]) {
    full.fill(0.0);
    dofs.expand(reduced, full);
    for (v, c) in out.iter_mut().zip(full.chunks_exact(3)) {
        *v = Vec3::new(c[0], c[1], c[2]);
    }
}

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// The rigid part as the contact stage sees it: the scene's rigid bodies, their coupling to
/// the soft ones, the rigid stage's buffers (prepared for this step) and the rigid states.
pub struct RigidCoupling<'a> {
    /// The free bodies, robots and fixed rigid bodies.
    pub scene: &'a RigidScene,
    /// Attachments and ignored soft–rigid pairs.
    pub coupling: &'a SoftRigid,
    /// The rigid stage's buffers after `RigidWorkspace::prepare`.
    pub ws: &'a mut RigidWorkspace,
    /// The rigid systems' states.
    pub states: &'a mut [RigidState],
}

/// The contact stage of every body (module doc): detects, solves one NCP per group of bodies
/// that touch each other (one per body when none do) and corrects each body's velocity in
/// place. With `rigid`, soft nodes also meet rigid shapes and attachments hold them, and the
/// group they join takes the rigid NCP in (`scene::step::contact::group`); a rigid NCP that no soft
/// body touches is solved as a group of its own. Returns each body's outcome.
///
/// Errors: invalid contact settings or a Delassus matrix the solver cannot use. An NCP that
/// stops at its iteration limit is `converged = false`, not an error.
pub fn resolve_contacts(
    contact: &SceneContact,
    h: f64,
    bodies: &mut [ContactBody],
    ws: &mut SceneContactWorkspace,
    rigid: Option<RigidCoupling<'_>>,
) -> Result<Vec<ContactOutcome>> {
    let nb = bodies.len();
    ws.active = 0;
    ws.body_contacts.clear();
    for b in bodies.iter_mut() {
        b.workspace.clear();
    }
    // The rigid part takes part when it has systems to move or soft bodies to meet.
    let coupled = rigid
        .as_ref()
        .is_some_and(|r| r.coupling.is_active(r.scene, nb));
    let rigid = rigid.filter(|r| coupled || !r.scene.systems.is_empty());
    if !contact.is_active() && rigid.is_none() {
        ws.group.forget();
        return Ok(vec![
            ContactOutcome {
                converged: true,
                ..Default::default()
            };
            nb
        ]);
    }
    let settings = &contact.settings;
    // Rigid shapes with corners (and balls and capsules, `[contact] small_shapes`) meet the
    // soft surfaces' triangles, within their reach.
    let meets_triangles = |c: &crate::contact::Collider| {
        !c.corners().is_empty() || settings.small_shapes && super::ball_rows::has_balls(c.shape())
    };
    let mut corners = false;
    let mut rigid_reach: f64 = 0.0;
    if let Some(r) = rigid.as_ref().filter(|_| coupled) {
        for (sys, reach) in r.scene.systems.iter().zip(r.ws.reach()) {
            for (jc, x) in sys.colliders.iter().zip(reach) {
                if meets_triangles(&jc.collider) {
                    corners = true;
                    rigid_reach = rigid_reach.max(*x);
                }
            }
        }
        corners |= r.scene.statics.iter().any(|f| meets_triangles(&f.collider));
    }
    let surfaces = settings.self_contact || settings.between_bodies || corners;
    // v_free per node (fixed nodes 0) and each body's reach h·max‖v_free‖.
    for b in bodies.iter_mut() {
        let w = &mut *b.workspace;
        nodal_velocities(b.dofs, b.velocity, &mut w.full, &mut w.v_nodes);
        w.points.fill(&b.state.positions, &mut w.x_points);
        w.points.fill(&w.v_nodes, &mut w.v_points);
        let v = w.points.field(&w.v_nodes, &w.v_points);
        w.reach = h * w
            .candidates
            .iter()
            .map(|&n| v[n].norm())
            .fold(0.0, f64::max);
        if w.points.is_embedded() {
            // Rigid corners meet the volume's boundary, whose nodes may outrun the points.
            let nodes = w.v_nodes.iter().map(|v| v.norm()).fold(0.0, f64::max);
            w.reach = w.reach.max(h * nodes);
        }
    }
    let reach_max = bodies.iter().map(|b| b.workspace.reach).fold(0.0, f64::max);
    // Each body: obstacles, then its own surface.
    for b in bodies.iter_mut() {
        let w = &mut *b.workspace;
        let x = &b.state.positions;
        w.broad_phase.detect(
            &contact.obstacles,
            w.points.field(x, &w.x_points),
            &w.candidates,
            w.reach,
            &mut w.contacts,
        )?;
        if surfaces {
            // Leaves grown enough for the body's own query (2·reach), for any other body's
            // (reach + that body's reach) and for a rigid corner's (reach + the shape's).
            let margin = w.reach + reach_max.max(rigid_reach);
            w.surface.refit(x, margin)?;
            if let Some(tree) = &mut w.point_surface {
                tree.refit(&w.x_points, margin)?;
            }
        }
        if settings.self_contact {
            // Two surfaces may approach each other at up to twice the fastest node.
            detect_self_contacts(
                w.point_surface.as_ref().unwrap_or(&w.surface),
                w.points.field(x, &w.x_points),
                &w.candidates,
                2.0 * w.reach,
                &mut w.self_contacts,
            );
        }
    }
    // Each body against the rigid shapes, and its attachments.
    if let Some(r) = rigid.as_ref().filter(|_| coupled) {
        let joint_pose = |s: usize, joint: usize| r.ws.joint_pose(r.scene, r.states, s, joint);
        let view = RigidView {
            scene: r.scene,
            poses: r.ws.poses(),
            reach: r.ws.reach(),
            joint_pose: &joint_pose,
            friction: settings.friction,
            flat_faces: settings.flat_faces,
            small_shapes: settings.small_shapes,
        };
        for (i, b) in bodies.iter_mut().enumerate() {
            let w = &mut *b.workspace;
            let side = SoftSide {
                body: i,
                x: &b.state.positions,
                points: (&w.points, w.points.field(&b.state.positions, &w.x_points)),
                candidates: &w.candidates,
                reach: w.reach,
                surface: &w.surface,
            };
            soft_rigid_rows(
                r.coupling,
                &view,
                &side,
                &mut w.rigid_rows,
                &mut w.soft_rigid_scratch,
            );
        }
    }
    // Every pair of bodies, both ways.
    if settings.between_bodies {
        for a in 0..nb {
            for b in a + 1..nb {
                let side = |i: usize| {
                    let w = &bodies[i].workspace;
                    BodySurface {
                        body: i,
                        surface: w.point_surface.as_ref().unwrap_or(&w.surface),
                        positions: w.points.field(&bodies[i].state.positions, &w.x_points),
                        candidates: &w.candidates,
                    }
                };
                let margin = bodies[a].workspace.reach + bodies[b].workspace.reach;
                detect_body_contacts(side(a), side(b), margin, &mut ws.body_contacts);
            }
        }
    }
    // Candidates the free motion keeps open wait outside the NCPs (scene::step::contact::screen).
    ws.deferred.clear();
    if settings.screen {
        defer_open(bodies, &mut ws.body_contacts, h, &ws.idle, &mut ws.deferred);
    }
    ws.saved.resize_with(nb, Vec::new);
    for (saved, b) in ws.saved.iter_mut().zip(bodies.iter()) {
        saved.clear();
        saved.extend_from_slice(b.velocity);
    }
    let mut rigid = rigid;
    loop {
        let outcomes = solve_groups(contact, h, bodies, ws, &mut rigid)?;
        let force = ModeTolerance::for_ncp_tolerance(settings.tolerance).force;
        if ws.deferred.is_empty() {
            record_idle(bodies, &ws.body_contacts, &ws.deferred, force, &mut ws.idle);
            return Ok(outcomes);
        }
        // The node and point velocities after the solve, and the deferred contacts they
        // close.
        ws.v_plus.resize_with(nb, Vec::new);
        ws.v_plus_points.resize_with(nb, Vec::new);
        for ((v, p), b) in ws
            .v_plus
            .iter_mut()
            .zip(ws.v_plus_points.iter_mut())
            .zip(bodies.iter_mut())
        {
            v.resize(b.workspace.v_nodes.len(), Vec3::zeros());
            nodal_velocities(b.dofs, b.velocity, &mut b.workspace.full, v);
            b.workspace.points.fill(v, p);
        }
        let restored = restore_violated(
            bodies,
            &mut ws.body_contacts,
            &ws.v_plus,
            &ws.v_plus_points,
            h,
            settings.tolerance,
            &mut ws.deferred,
        );
        if restored == 0 {
            record_idle(bodies, &ws.body_contacts, &ws.deferred, force, &mut ws.idle);
            return Ok(outcomes);
        }
        // Solve again from v_free with them.
        for (saved, b) in ws.saved.iter().zip(bodies.iter_mut()) {
            b.velocity.copy_from_slice(saved);
            let w = &mut *b.workspace;
            w.shared.clear();
            w.rows.clear();
            w.jacobian.clear();
            w.lambda.clear();
        }
        ws.restarts += 1;
    }
}

/// Solves the NCP of each group of bodies (module doc) with the contacts in the bodies' and
/// the stage's lists, correcting the bodies' velocities; returns each body's outcome.
fn solve_groups(
    contact: &SceneContact,
    h: f64,
    bodies: &mut [ContactBody],
    ws: &mut SceneContactWorkspace,
    rigid: &mut Option<RigidCoupling<'_>>,
) -> Result<Vec<ContactOutcome>> {
    let nb = bodies.len();
    ws.active = 0;
    // Groups of bodies linked by contacts between them, and with the rigid part (node nb)
    // through rows with a moving rigid side (union-find).
    ws.parent.clear();
    ws.parent.extend(0..=nb);
    for (i, b) in bodies.iter().enumerate() {
        if b.workspace.rigid_rows.iter().any(|r| r.side.is_some()) {
            let (ra, rb) = (find(&mut ws.parent, i), find(&mut ws.parent, nb));
            ws.parent[ra.max(rb)] = ra.min(rb);
        }
    }
    for (i, c) in ws.body_contacts.iter().enumerate() {
        let (ra, rb) = (
            find(&mut ws.parent, c.node_body),
            find(&mut ws.parent, c.face_body),
        );
        ws.parent[ra.max(rb)] = ra.min(rb);
        bodies[c.node_body].workspace.shared.push(i);
        bodies[c.face_body].workspace.shared.push(i);
    }
    let mut outcomes = vec![ContactOutcome::default(); nb];
    ws.group.begin_step();
    for lead in 0..nb {
        if find(&mut ws.parent, lead) != lead {
            continue; // solved with its group's smallest body
        }
        ws.members.clear();
        for b in lead..nb {
            if find(&mut ws.parent, b) == lead {
                ws.members.push(b);
            }
        }
        let with_rigid = find(&mut ws.parent, nb) == lead;
        let part = match (&mut *rigid, with_rigid) {
            (Some(r), true) => Some(RigidPart {
                scene: r.scene,
                ws: &mut *r.ws,
                states: &mut *r.states,
            }),
            _ => None,
        };
        ws.active += solve_group(
            contact,
            h,
            bodies,
            &ws.members,
            &ws.body_contacts,
            &mut ws.group,
            &mut outcomes,
            part,
        )?;
    }
    // A rigid NCP that no soft body touches: a group of its own.
    if let Some(r) = rigid.as_mut().filter(|_| find(&mut ws.parent, nb) == nb) {
        let part = RigidPart {
            scene: r.scene,
            ws: &mut *r.ws,
            states: &mut *r.states,
        };
        ws.active += solve_group(
            contact,
            h,
            bodies,
            &[],
            &ws.body_contacts,
            &mut ws.group,
            &mut outcomes,
            Some(part),
        )?;
    }
    ws.group.end_step();
    Ok(outcomes)
}
