//! Screening of the contact stage's candidates (docs/speed.md): a contact that the free motion
//! keeps open is left out of its NCP, and checked after the solve.
//!
//! A candidate i (within the distance its bodies can travel in the step) has the corrected free
//! normal velocity `g_N,i = n·u_free,i + Φ_i/h − K_p [Φ_i/h]₋` (u the relative velocity of its
//! two sides, m/s). When `g_N,i > 0` the free motion does not close the gap within the step, and
//! λ_i = 0 is its likely force: it is deferred. So is a candidate that was one in the last step
//! too and carried no force there (its neighbours held the body). After the NCP of the remaining contacts is
//! solved, each deferred contact's `σ_N,i = n·u⁺_i + Φ_i/h − K_p [Φ_i/h]₋` at the corrected
//! velocities is checked: `σ_N,i ≥ −tol` means that λ_i = 0 with σ_i satisfies its
//! complementarity (breaking: σ_i + Γ(σ_i) ∈ K* ⟺ σ_N ≥ 0), so (λ, 0) solves the NCP of all
//! candidates to the same tolerance. Otherwise the violated ones join and the NCPs are solved
//! again. The result is a solution of the full NCP; what it saves is the Delassus columns
//! (one solve with each body's factor per row) and the solver's work on contacts that carry
//! nothing, most of the candidates when a body moves near an obstacle.
//!
//! Only contacts whose sides are all soft bodies or static are screened (a row with a moving
//! rigid body stays in its NCP). A body's contacts read its contact points' velocities (an
//! embedded surface's vertices move as their tetrahedra, `contact::ContactPoints`), its rows
//! against fixed rigid bodies its nodes'.

use std::collections::HashSet;

use crate::contact::{BodyContact, ContactPoints, NodeContact, PenetrationCorrection, SelfContact};
use crate::math::{Mat3, Vec3};

use super::stage::ContactBody;
use crate::scene::model::soft_rigid::SoftRigidRow;

/// A candidate left out of the NCPs of this step.
#[derive(Debug, Clone, Copy)]
pub(in crate::scene) enum Deferred {
    /// A node of `body` against an obstacle.
    Obstacle(usize, NodeContact),
    /// A node of `body` against its own surface.
    SelfContact(usize, SelfContact),
    /// A node of one body against another's surface.
    Between(BodyContact),
    /// A row of `body` against a fixed rigid body.
    Fixed(usize, SoftRigidRow),
}

/// What identifies a candidate from one step to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(in crate::scene) enum ScreenKey {
    /// Body, node, obstacle.
    Obstacle(usize, usize, usize),
    /// Body, node, triangle of its own surface.
    SelfContact(usize, usize, usize),
    /// Node body, node, face body, triangle.
    Between(usize, usize, usize, usize),
    /// Body and the row's key.
    Fixed(usize, (u8, usize, usize, usize)),
}

impl Deferred {
    fn key(&self) -> ScreenKey {
        match self {
            Deferred::Obstacle(b, c) => ScreenKey::Obstacle(*b, c.node, c.obstacle),
            Deferred::SelfContact(b, c) => ScreenKey::SelfContact(*b, c.node, c.hit.triangle),
            Deferred::Between(c) => {
                ScreenKey::Between(c.node_body, c.node, c.face_body, c.hit.triangle)
            }
            Deferred::Fixed(b, r) => ScreenKey::Fixed(*b, r.key),
        }
    }
}

/// `n · u + Φ/h − K_p [Φ/h]₋` (m/s): the corrected normal velocity of a contact of normal
/// `frame`'s third column, relative velocity `u` and gap `gap`.
fn corrected_normal(frame: &Mat3, u: Vec3, gap: f64, h: f64) -> f64 {
    let r = gap / h;
    let kp = PenetrationCorrection::default().kp;
    frame.column(2).dot(&u) + r - kp * r.min(0.0)
}

fn face_velocity(v: &[Vec3], vertices: [usize; 3], weights: [f64; 3]) -> Vec3 {
    (0..3).map(|k| weights[k] * v[vertices[k]]).sum()
}

/// A body's velocities as the screen reads them (m/s): its nodes' (rows against rigid bodies
/// name nodes) and its contact points' (obstacle, self- and body contacts name points: the
/// nodes themselves, or an embedded surface's vertices, `contact::ContactPoints`).
#[derive(Debug, Clone, Copy)]
pub(in crate::scene) struct BodyVelocities<'a> {
    /// Per node (m/s).
    pub nodes: &'a [Vec3],
    /// Per contact point (m/s).
    pub points: &'a [Vec3],
}

impl<'a> BodyVelocities<'a> {
    /// The velocities of a body with contact points `points` and node velocities `nodes`;
    /// `filled` holds the points' velocities when they are embedded (`ContactPoints::fill`).
    pub fn new(
        points: &ContactPoints,
        nodes: &'a [Vec3],
        filled: &'a [Vec3],
    ) -> BodyVelocities<'a> {
        BodyVelocities {
            nodes,
            points: points.field(nodes, filled),
        }
    }
}

/// The corrected normal velocity of a deferred contact at the velocities `velocity(body)`.
fn normal_velocity<'a>(
    d: &Deferred,
    h: f64,
    velocity: impl Fn(usize) -> BodyVelocities<'a>,
) -> f64 {
    match d {
        Deferred::Obstacle(b, c) => {
            corrected_normal(&c.frame, velocity(*b).points[c.node], c.gap, h)
        }
        Deferred::SelfContact(b, c) => {
            let v = velocity(*b).points;
            let u = v[c.node] - face_velocity(v, c.hit.vertices, c.hit.weights);
            corrected_normal(&c.hit.frame, u, c.gap(), h)
        }
        Deferred::Between(c) => {
            let u = velocity(c.node_body).points[c.node]
                - face_velocity(velocity(c.face_body).points, c.hit.vertices, c.hit.weights);
            corrected_normal(&c.hit.frame, u, c.gap(), h)
        }
        Deferred::Fixed(b, r) => corrected_normal(
            &r.frame,
            r.soft_sign * r.soft.value(velocity(*b).nodes),
            r.gap,
            h,
        ),
    }
}

/// Moves the candidates of `bodies` (their free velocities in `v_nodes` and `v_points`) and
/// the contacts between them whose free motion keeps them open, or that carried no force in
/// the last step (`idle`), into `deferred`.
pub(in crate::scene) fn defer_open(
    bodies: &mut [ContactBody],
    between: &mut Vec<BodyContact>,
    h: f64,
    idle: &HashSet<ScreenKey>,
    deferred: &mut Vec<Deferred>,
) {
    deferred.clear();
    for (b, body) in bodies.iter_mut().enumerate() {
        let w = &mut *body.workspace;
        let v = BodyVelocities::new(&w.points, &w.v_nodes, &w.v_points);
        let open = |d: &Deferred| idle.contains(&d.key()) || normal_velocity(d, h, |_| v) > 0.0;
        w.contacts.retain(|c| {
            let d = Deferred::Obstacle(b, *c);
            let defer = open(&d);
            if defer {
                deferred.push(d);
            }
            !defer
        });
        w.self_contacts.retain(|c| {
            let d = Deferred::SelfContact(b, *c);
            let defer = open(&d);
            if defer {
                deferred.push(d);
            }
            !defer
        });
        w.rigid_rows.retain(|r| {
            let d = Deferred::Fixed(b, *r);
            let defer = r.side.is_none() && !r.bilateral && open(&d);
            if defer {
                deferred.push(d);
            }
            !defer
        });
    }
    let free = |b: usize| {
        let w = &*bodies[b].workspace;
        BodyVelocities::new(&w.points, &w.v_nodes, &w.v_points)
    };
    between.retain(|c| {
        let d = Deferred::Between(*c);
        let defer = idle.contains(&d.key()) || normal_velocity(&d, h, free) > 0.0;
        if defer {
            deferred.push(d);
        }
        !defer
    });
}

/// Moves the deferred contacts whose corrected normal velocity at the velocities after the
/// solve (m/s, per body: `nodes[body]`, and `points[body]` filled for an embedded surface,
/// [`BodyVelocities::new`]) is below `−tolerance` back into their lists; returns how many.
pub(in crate::scene) fn restore_violated(
    bodies: &mut [ContactBody],
    between: &mut Vec<BodyContact>,
    nodes: &[Vec<Vec3>],
    points: &[Vec<Vec3>],
    h: f64,
    tolerance: f64,
    deferred: &mut Vec<Deferred>,
) -> usize {
    let mut restored = 0;
    let mut i = 0;
    while i < deferred.len() {
        let after =
            |b: usize| BodyVelocities::new(&bodies[b].workspace.points, &nodes[b], &points[b]);
        if normal_velocity(&deferred[i], h, after) >= -tolerance {
            i += 1;
            continue;
        }
        restored += 1;
        match deferred.swap_remove(i) {
            Deferred::Obstacle(b, c) => bodies[b].workspace.contacts.push(c),
            Deferred::SelfContact(b, c) => bodies[b].workspace.self_contacts.push(c),
            Deferred::Between(c) => between.push(c),
            Deferred::Fixed(b, r) => bodies[b].workspace.rigid_rows.push(r),
        }
    }
    restored
}

/// The candidates of this step that carry no force (`‖λ‖ ≤ force_tolerance`, N) in the
/// solution, or were deferred, into `idle` (for the next step's [`defer_open`]).
pub(in crate::scene) fn record_idle(
    bodies: &[ContactBody],
    between: &[BodyContact],
    deferred: &[Deferred],
    force_tolerance: f64,
    idle: &mut HashSet<ScreenKey>,
) {
    idle.clear();
    idle.extend(deferred.iter().map(Deferred::key));
    for (b, body) in bodies.iter().enumerate() {
        let w = &*body.workspace;
        let zero = |i: usize| {
            w.lambda
                .get(3 * i..3 * i + 3)
                .is_some_and(|l| Vec3::new(l[0], l[1], l[2]).norm() <= force_tolerance)
        };
        let mut i = 0;
        for c in &w.contacts {
            if zero(i) {
                idle.insert(Deferred::Obstacle(b, *c).key());
            }
            i += 1;
        }
        for c in &w.self_contacts {
            if zero(i) {
                idle.insert(Deferred::SelfContact(b, *c).key());
            }
            i += 1;
        }
        for &k in &w.shared {
            // A contact between bodies is idle when its node body's λ is (both hold it).
            if between[k].node_body == b && zero(i) {
                idle.insert(Deferred::Between(between[k]).key());
            }
            i += 1;
        }
        for r in &w.rigid_rows {
            if r.side.is_none() && !r.bilateral && zero(i) {
                idle.insert(Deferred::Fixed(b, *r).key());
            }
            i += 1;
        }
    }
}
