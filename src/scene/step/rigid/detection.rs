//! What touches in a rigid step: each collider of a free body or robot against the obstacles,
//! the fixed rigid bodies, the other systems' colliders and the non-adjacent links of its own
//! robot (contact manifolds, `contact::collider_contacts` / `obstacle_contacts`), and the
//! revolute or prismatic coordinates near a position limit. Each becomes a block of three NCP
//! rows ([`RigidContact`]) with a key that identifies it from one step to the next (warm
//! start). A pair is a candidate when its gap is within the distance both bodies can travel in
//! the step. Two links of one robot never touch when they are adjacent, when they already
//! touch in the robot's initial configuration (collision models overlap around joints), or
//! when `[contact] ignore` names them (`RigidScene::ignored`). Which pairs may touch is listed
//! once, when the detection is built; each pair of moving colliders keeps its separation from
//! one step to the next (`contact::PairSeparation`), so a pair that stays apart costs a bound
//! per step, not a manifold query.

use std::collections::BTreeSet;

use crate::contact::{
    ManifoldWorkspace, PairSeparation, ShapeContact, ShapePose, collider_contacts, contact_frame,
    obstacle_contacts,
};
use crate::error::Result;
use crate::math::{Mat3, Vec3};
use crate::rigid::JointKind;

use crate::scene::model::RigidState;
use crate::scene::model::contact::SceneContact;
use crate::scene::model::rigid::RigidSide;
use crate::scene::model::rigid::{RigidDynamics, RigidScene};

/// One block of three rows of the rigid NCP.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RigidRow {
    /// A contact point between a collider of `a` and something else (`b`, when it moves).
    Contact {
        /// The body the normal points into.
        a: RigidSide,
        /// The other body when it belongs to a system (`None`: an obstacle or fixed body).
        b: Option<RigidSide>,
        /// Contact point (m, world).
        point: Vec3,
        /// Contact frame `[t₁, t₂, n]` (world).
        frame: Mat3,
    },
    /// The rigid part of a row block between a soft node and a rigid body
    /// (`scene::model::soft_rigid`): `sign · frameᵀ` times the velocity of the body point `point`.
    Point {
        /// The rigid body (system and joint).
        side: RigidSide,
        /// The point (m, world).
        point: Vec3,
        /// The rows' frame (world).
        frame: Mat3,
        /// −1: the node's velocity minus the rigid point's.
        sign: f64,
    },
    /// A coordinate against a position limit: the normal velocity is `sign · v[dof]`.
    Limit {
        /// The system.
        system: usize,
        /// Its velocity coordinate.
        dof: usize,
        /// +1 at the lower limit, −1 at the upper.
        sign: f64,
    },
}

/// A row block with its gap Φ (m or rad) and Coulomb coefficient.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RigidContact {
    /// What the rows constrain.
    pub row: RigidRow,
    /// Signed gap at the start of the step (negative: penetrating / past the limit).
    pub gap: f64,
    /// Coulomb coefficient (0 for limits).
    pub friction: f64,
}

/// Warm-start identity of a row block: kind, the two sides' (system, collider or dof) and
/// parry's feature ids.
pub(in crate::scene) type RowKey = (u8, usize, usize, usize, usize, u32, u32);

/// How the systems move in this step, per system: each collider's world pose and reach (m,
/// how far it can travel in the step), and the free velocity (for the limits).
#[derive(Clone, Copy)]
pub(in crate::scene) struct Motion<'a> {
    pub(in crate::scene) poses: &'a [Vec<ShapePose>],
    pub(in crate::scene) reach: &'a [Vec<f64>],
    pub(in crate::scene) v_free: &'a [Vec<f64>],
}

/// The detection's buffers and what the last step found.
pub(in crate::scene) struct RigidDetection {
    manifold: ManifoldWorkspace,
    found: Vec<ShapeContact>,
    /// The row blocks of the last step, in NCP order.
    pub(in crate::scene) contacts: Vec<RigidContact>,
    /// Their keys.
    pub(in crate::scene) keys: Vec<RowKey>,
    /// Per row block, the `(first, count)` of the consecutive blocks of its pair's contact
    /// manifold (`(itself, 1)` for a limit), which share a penetration correction
    /// (`PenetrationCorrection::apply_shared`).
    pub(in crate::scene) manifolds: Vec<(usize, usize)>,
    /// Per system and collider: the fixed rigid bodies it may touch, and the colliders
    /// `(system, collider)` of the same or later systems it may touch (after it, not
    /// adjacent, not touching initially, not ignored), in detection order, each with the
    /// pair's remembered separation. The scene's structure is fixed, so these are listed once.
    statics: Vec<Vec<Vec<usize>>>,
    others: Vec<Vec<Vec<(usize, usize, PairSeparation)>>>,
}

impl RigidDetection {
    /// Buffers for the systems of `rigid`.
    pub(in crate::scene) fn new(rigid: &RigidScene) -> RigidDetection {
        let ignored = initially_touching(rigid);
        let systems = &rigid.systems;
        let statics = systems
            .iter()
            .enumerate()
            .map(|(s, sys)| {
                (0..sys.colliders.len())
                    .map(|c| {
                        (0..rigid.statics.len())
                            .filter(|&f| !rigid.ignored.contains(&(s, c, usize::MAX, f)))
                            .collect()
                    })
                    .collect()
            })
            .collect();
        let others = systems
            .iter()
            .enumerate()
            .map(|(s, sys)| {
                sys.colliders
                    .iter()
                    .enumerate()
                    .map(|(c, jc)| {
                        let mut list = Vec::new();
                        for (t, other) in systems.iter().enumerate().skip(s) {
                            for (d, jd) in other.colliders.iter().enumerate() {
                                let skipped = t == s
                                    && (d <= c
                                        || sys.adjacent(jc.joint, jd.joint)
                                        || ignored.contains(&(s, c, d)))
                                    || rigid.ignored.contains(&(s, c, t, d));
                                if !skipped {
                                    list.push((t, d, PairSeparation::default()));
                                }
                            }
                        }
                        list
                    })
                    .collect()
            })
            .collect();
        RigidDetection {
            manifold: ManifoldWorkspace::default(),
            found: Vec::new(),
            contacts: Vec::new(),
            keys: Vec::new(),
            manifolds: Vec::new(),
            statics,
            others,
        }
    }

    /// Finds the row blocks of this step (time step `h`, s).
    pub(in crate::scene) fn detect(
        &mut self,
        rigid: &RigidScene,
        contact: &SceneContact,
        states: &[RigidState],
        motion: Motion<'_>,
        h: f64,
    ) -> Result<()> {
        let Motion {
            poses,
            reach,
            v_free,
        } = motion;
        self.contacts.clear();
        self.keys.clear();
        self.manifolds.clear();
        let systems = &rigid.systems;
        let base_mu = contact.settings.friction;
        for (s, sys) in systems.iter().enumerate() {
            for (c, jc) in sys.colliders.iter().enumerate() {
                let a = RigidSide {
                    system: s,
                    joint: jc.joint,
                };
                let pose = poses[s][c];
                let reach_a = reach[s][c];
                // Obstacles.
                for (o, obstacle) in contact.obstacles.iter().enumerate() {
                    self.found.clear();
                    obstacle_contacts(
                        obstacle,
                        &jc.collider,
                        &pose,
                        reach_a,
                        &mut self.manifold,
                        &mut self.found,
                    )?;
                    let mu = sys.friction.unwrap_or(contact.friction[o]);
                    self.push_found(a, None, mu, (0, s, c, o, 0));
                }
                // Fixed rigid bodies.
                for i in 0..self.statics[s][c].len() {
                    let f = self.statics[s][c][i];
                    let fixed = &rigid.statics[f];
                    self.found.clear();
                    collider_contacts(
                        &jc.collider,
                        &pose,
                        &fixed.collider,
                        &fixed.pose,
                        reach_a,
                        &mut self.manifold,
                        &mut self.found,
                    )?;
                    let mu = sys.friction.or(fixed.friction).unwrap_or(base_mu);
                    self.push_found(a, None, mu, (1, s, c, f, 0));
                }
                // Other colliders: of later systems, and non-adjacent links of its own.
                for i in 0..self.others[s][c].len() {
                    let (t, d, ref mut memo) = self.others[s][c][i];
                    let other = &systems[t];
                    let jd = &other.colliders[d];
                    self.found.clear();
                    memo.contacts(
                        &jc.collider,
                        &pose,
                        &jd.collider,
                        &poses[t][d],
                        reach_a + reach[t][d],
                        &mut self.manifold,
                        &mut self.found,
                    )?;
                    let b = RigidSide {
                        system: t,
                        joint: jd.joint,
                    };
                    let mu = sys.friction.or(other.friction).unwrap_or(base_mu);
                    self.push_found(a, Some(b), mu, (2, s, c, t, d));
                }
            }
            // Position limits of revolute and prismatic coordinates.
            let RigidDynamics::Robot(model) = &sys.dynamics else {
                continue;
            };
            let st = &states[s];
            let limits = &model.limits;
            for joint in &model.joints[1..] {
                if !matches!(
                    joint.kind,
                    JointKind::Revolute { .. } | JointKind::Prismatic { .. }
                ) {
                    continue;
                }
                let (iq, iv) = (joint.idx_q, joint.idx_v);
                // How far the coordinate can travel in the step.
                let travel = h * st.v[iv].abs().max(v_free[s][iv].abs());
                for (sign, gap) in [
                    (1.0, st.q[iq] - limits.lower[iq]),
                    (-1.0, limits.upper[iq] - st.q[iq]),
                ] {
                    if gap.is_finite() && gap <= travel {
                        self.manifolds.push((self.contacts.len(), 1));
                        self.contacts.push(RigidContact {
                            row: RigidRow::Limit {
                                system: s,
                                dof: iv,
                                sign,
                            },
                            gap,
                            friction: 0.0,
                        });
                        self.keys.push((3, s, iv, usize::from(sign > 0.0), 0, 0, 0));
                    }
                }
            }
        }
        Ok(())
    }

    /// Appends the contacts in `self.found` as row blocks between `a` and `b`.
    fn push_found(
        &mut self,
        a: RigidSide,
        b: Option<RigidSide>,
        friction: f64,
        key: (u8, usize, usize, usize, usize),
    ) {
        let manifold = (self.contacts.len(), self.found.len());
        self.manifolds
            .extend(std::iter::repeat_n(manifold, self.found.len()));
        for f in &self.found {
            self.contacts.push(RigidContact {
                row: RigidRow::Contact {
                    a,
                    b,
                    point: f.point,
                    frame: contact_frame(&f.normal),
                },
                gap: f.gap,
                friction,
            });
            self.keys.push((
                key.0,
                key.1,
                key.2,
                key.3,
                key.4,
                f.features.0,
                f.features.1,
            ));
        }
    }
}

/// The pairs of non-adjacent colliders of one robot that touch (gap ≤ 0) at its initial
/// configuration.
fn initially_touching(rigid: &RigidScene) -> BTreeSet<(usize, usize, usize)> {
    let mut out = BTreeSet::new();
    let mut found = Vec::new();
    let mut ws = ManifoldWorkspace::default();
    for (s, sys) in rigid.systems.iter().enumerate() {
        let RigidDynamics::Robot(model) = &sys.dynamics else {
            continue;
        };
        let mut data = crate::rigid::Data::new(model);
        crate::rigid::forward_kinematics_placements(model, &mut data, &sys.q0);
        let pose = |jc: &crate::scene::model::rigid::JointCollider| {
            let joint = if jc.joint == 0 {
                ShapePose::identity()
            } else {
                let m = &data.o_m_i[jc.joint];
                ShapePose {
                    rotation: m.rot,
                    translation: m.trans,
                }
            };
            joint.compose(&jc.placement)
        };
        for (c, a) in sys.colliders.iter().enumerate() {
            for (d, b) in sys.colliders.iter().enumerate().skip(c + 1) {
                if sys.adjacent(a.joint, b.joint) {
                    continue;
                }
                found.clear();
                let touching = collider_contacts(
                    &a.collider,
                    &pose(a),
                    &b.collider,
                    &pose(b),
                    0.0,
                    &mut ws,
                    &mut found,
                )
                .is_ok_and(|_| !found.is_empty());
                if touching {
                    out.insert((s, c, d));
                }
            }
        }
    }
    out
}
