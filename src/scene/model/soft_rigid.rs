//! Soft bodies meeting rigid ones (paper 004 §II–III with the rigid bodies of paper 002): the
//! rows of the contact NCP that have a soft part (a node, weight 1, or a point between nodes) and a rigid part (the
//! frame Jacobian of a rigid body or robot link at a point): their form and the attachments
//! here, their detection in each step in `scene::step::contact::soft_rigid_rows`, for the contact stage
//! (`scene::step::contact::group` solves them with the soft and rigid rows of the same group).
//!
//! - **Contact of a node**: a soft body's contact point (a surface node, or a vertex of its
//!   embedded contact surface, `contact::ContactPoints`) against a collision shape of a free
//!   rigid body, a robot link or a fixed rigid body (`Collider::closest`), normal from the
//!   shape into the node, gap Φ at the start of the step, Coulomb cone with the rigid side's
//!   friction. The rigid part is taken at the shape's closest point, with the sign −1:
//!   σ = frameᵀ (v_node − v_rigid(p)).
//! - **Contact of a corner**: a corner of a box or a convex hull (`Collider::corners`)
//!   against a soft body's surface triangle (`SurfaceTree::facing_triangle`, the corner's
//!   outward direction from the shape's centre), normal from the triangle into the corner:
//!   σ = frameᵀ (v_rigid(corner) − Σ wᵢ v_i), so a corner pressing into a face between nodes
//!   is held too.
//! - **Contact of an edge**: an edge of a box or a convex hull (`Collider::edges`) crossing a
//!   soft body's surface edge (`SurfaceTree::crossing_edges`, `contact::geometry::edge_edge`): the
//!   closest points of the two edges, p(s) = (1 − s) p₀ + s p₁ on the soft edge and a(t) on
//!   the rigid one, both strictly inside their edges, normal n = ±(e_soft × e_rigid)/‖…‖ out
//!   of the soft body, gap Φ = n · (a(t) − p(s)):
//!   σ = frameᵀ (v_rigid(a(t)) − (1 − s) v_p₀ − s v_p₁), so a rigid edge lying across a face
//!   between nodes (a thin key, a box's edge) is held where it crosses the face's edges. With
//!   the corners' rows and the nodes' this is the complete set for two piecewise-linear
//!   surfaces: along a rigid edge entering a soft face, the deepest point is an end of the
//!   edge (a corner row) or where it crosses a surface edge (an edge row). A crossing whose
//!   normal is within `contact::RIGID_ARC_SLACK` of one of the rigid edge's face normals is
//!   no edge row (`SurfaceTree::crossing_edges`): that face lies flat on the surface.
//! - **A face lying flat** (`scene::step::contact::flat_face_rows`, kinds 7 and 8): a box's or a hull's face
//!   face-on on the surface rests on the nodes' and its corners' rows where they lie under it
//!   and over the surface's triangles; where none does (a face narrower than the node
//!   spacing, between two rows of nodes, its corners beyond the triangles) the crossings of
//!   its edges with the surface's edges are rows of the edge rows' form.
//! - **A ball on a face** (`scene::step::contact::ball_rows`, kinds 9 and 10): a ball whose centre projects
//!   onto a soft triangle whose plane it reaches is held at its support point towards the
//!   triangle, a row of the corner rows' form: a ball smaller than the node spacing resting
//!   between nodes (also a triangle the centre projects just beyond, past a concave crease);
//!   where the centre projects beyond both triangles of an edge (a convex ridge), at its
//!   support point towards the edge's point closest to its centre. A capsule's two end balls
//!   get the same rows, and its axis an edge-crossing row where it lies across a convex
//!   ridge (kinds 11 and 12).
//!
//! Corner and edge rows meet the volume's boundary surface (also for a body with an embedded
//! contact surface), whose nodes are the soft points. A pair is a candidate when Φ is within
//! the distance both can travel in the step (the soft body's reach plus the shape's).
//! - **Attachment** (`[[attachment]]`): a node held at its anchor, a point fixed in the rigid
//!   body's (or link's) frame where the node was at the start: three bilateral rows in world
//!   axes (K = ℝ³, `FrictionCone::bilateral`), relative velocity v_node − v_rigid(anchor) = 0,
//!   with a correction that removes a fifth of the position error e = x_node − anchor per
//!   step (as the contact rows' penetration correction does).
//!
//! A soft body never touches the shapes of the rigid body or link it is attached to, nor
//! pairs named in `[contact] ignore`.

use std::collections::BTreeSet;

use crate::contact::{EdgeHit, ShapePose, contact_frame};
use crate::error::{Error, Result};
use crate::fem::SoftBody;
use crate::math::{Mat3, Vec3};
use crate::rigid::FrameKind;

use super::rigid::{RigidDynamics, RigidScene};
use super::rigid_system::SystemBuffers;
use super::soft_point::SoftPoint;
use crate::scene::file::attachment::AttachmentSection;
use crate::scene::model::rigid::RigidSide;

/// Soft nodes held to a rigid body or link (`[[attachment]]`, resolved).
#[derive(Debug, Clone, PartialEq)]
pub struct Attachment {
    /// The soft body (scene index).
    pub body: usize,
    /// Its attached nodes.
    pub nodes: Vec<usize>,
    /// The rigid side: a system's joint, or `None` for the world (a fixed rigid body, a fixed
    /// robot's base link).
    pub side: Option<RigidSide>,
    /// Each node's anchor (m) in the side's joint frame (world frame for `None`).
    pub anchors: Vec<Vec3>,
}

/// The coupling of the soft bodies with the rigid part: attachments and the pairs that never
/// touch.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SoftRigid {
    /// The attachments, in file order.
    pub attachments: Vec<Attachment>,
    /// `(soft body, system, collider)` pairs that never touch; `system = usize::MAX` names a
    /// fixed rigid body by its index.
    pub ignored: BTreeSet<(usize, usize, usize)>,
}

/// One block of three NCP rows between a soft body and a rigid one (module doc).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SoftRigidRow {
    /// The soft side.
    pub soft: SoftPoint,
    /// The sign of the soft part (the rigid part has the other): +1 when the normal points
    /// into the soft body (a node against a shape, an attachment), −1 when it points into
    /// the rigid one (a corner against a triangle).
    pub soft_sign: f64,
    /// The rigid side whose velocity enters (`None`: fixed, no rigid part).
    pub side: Option<RigidSide>,
    /// The rigid point (m, world): the shape's closest point, the corner, the rigid edge's
    /// closest point, the ball's support point, or the anchor.
    pub point: Vec3,
    /// Frame `[t₁, t₂, n]` (contacts; n from the shape into the node) or the world axes
    /// (attachments).
    pub frame: Mat3,
    /// Gap Φ (m) at the start of the step (0 for attachments).
    pub gap: f64,
    /// Attachment position error x_node − anchor (m, world; zero for contacts).
    pub error: Vec3,
    /// Coulomb coefficient (contacts).
    pub friction: f64,
    /// Whether the rows are bilateral (an attachment).
    pub bilateral: bool,
    /// Warm-start identity: kind (0 a node against a collider, 1 against a fixed body, 2 an
    /// attachment, 3 a collider's corner, 4 a fixed body's corner, 5 a collider's edge, 6 a
    /// fixed body's edge, 7 a collider's face lying flat, 8 a fixed body's:
    /// `scene::step::contact::flat_face_rows`, 9 a collider's ball (or a capsule's end ball) resting on a soft
    /// triangle or ridge, 10 a fixed body's, 11 a collider's capsule axis across a convex
    /// ridge, 12 a fixed body's: `scene::step::contact::ball_rows`) and three indices: (system, collider, node) for kind 0, (fixed
    /// body, 0, node) for 1, (attachment, 0, node) for 2, (system, collider, corner) for 3,
    /// (fixed body, 0, corner) for 4, and for 5 to 8 the same first two with
    /// `surface edge · edge count + shape edge` (`SurfaceTree::edge`, `Collider::edges`); for
    /// 9 and 10 the same first two with the surface triangle (a ball on a face), or the
    /// triangle count plus the surface edge (a ball on an edge), offset by the triangle and
    /// edge counts for a capsule's second end ball; for 11 and 12 the surface edge.
    pub key: (u8, usize, usize, usize),
}

impl SoftRigidRow {
    /// The row of a rigid edge (or a capsule's axis) crossing a soft surface edge, `hit`
    /// (`SurfaceTree::crossing_edges` and kin): the soft point p(s) on the surface edge, the
    /// rigid point, normal and gap of its crossing, for the rigid side `side` (`None`: a fixed
    /// body), Coulomb coefficient `friction`, warm-start identity `key`.
    pub(in crate::scene) fn crossing(
        hit: &EdgeHit,
        side: Option<RigidSide>,
        friction: f64,
        key: (u8, usize, usize, usize),
    ) -> SoftRigidRow {
        let c = hit.crossing;
        SoftRigidRow {
            soft: SoftPoint::Edge {
                nodes: hit.nodes,
                weights: [1.0 - c.s, c.s],
            },
            soft_sign: -1.0,
            side,
            point: c.rigid_point,
            frame: contact_frame(&c.normal),
            gap: c.gap,
            error: Vec3::zeros(),
            friction,
            bilateral: false,
            key,
        }
    }

    /// The soft part's nodes and weights (with [`Self::soft_sign`]), for the contact
    /// Jacobian.
    pub fn soft_weights(&self) -> ([(usize, f64); 4], usize) {
        let s = self.soft_sign;
        match self.soft {
            SoftPoint::Node(n) => ([(n, s); 4], 1),
            SoftPoint::Face { vertices, weights } => (
                std::array::from_fn(|k| (vertices[k.min(2)], s * weights[k.min(2)])),
                3,
            ),
            SoftPoint::Embedded(e) => (std::array::from_fn(|k| (e.nodes[k], s * e.weights[k])), 4),
            SoftPoint::Edge { nodes, weights } => (
                std::array::from_fn(|k| (nodes[k.min(1)], s * weights[k.min(1)])),
                2,
            ),
        }
    }
}

/// The nodes of `body` in `group` and/or `node_box` (both: the union). Errors name the key.
fn select_nodes(
    body: &SoftBody,
    a: &AttachmentSection,
    at: &dyn Fn(&str) -> String,
) -> Result<Vec<usize>> {
    let mesh = body.mesh();
    let mut chosen = vec![false; body.node_count()];
    if let Some(name) = &a.group {
        let nodes = mesh.group_nodes(name).ok_or_else(|| {
            Error::invalid(
                at("group"),
                format!(
                    "the mesh of `{}` has no group `{name}` (it has {:?})",
                    a.soft_body,
                    mesh.group_names()
                ),
            )
        })?;
        for n in nodes {
            chosen[n] = true;
        }
    }
    if let Some([lo, hi]) = a.node_box {
        let mut inside = 0;
        for (c, p) in chosen.iter_mut().zip(body.rest_positions()) {
            if (0..3).all(|k| p[k] >= lo[k] && p[k] <= hi[k]) {
                *c = true;
                inside += 1;
            }
        }
        if inside == 0 {
            return Err(Error::invalid(
                at("box"),
                format!(
                    "{lo:?}..{hi:?} contains no node of `{}` (m, after `scale`)",
                    a.soft_body
                ),
            ));
        }
    }
    let nodes: Vec<usize> = (0..chosen.len()).filter(|&n| chosen[n]).collect();
    if nodes.is_empty() {
        return Err(Error::invalid(at("group"), "selects no node"));
    }
    let dofs = body.pattern().dofs();
    if let Some(&n) = nodes
        .iter()
        .find(|&&n| (0..3).all(|p| dofs.reduced_index(3 * n + p).is_none()))
    {
        return Err(Error::invalid(
            at("soft_body"),
            format!(
                "node {n} of `{}` is also fixed (fixed_box / fixed_group or a servo horn): a node is either fixed or attached",
                a.soft_body
            ),
        ));
    }
    Ok(nodes)
}

impl SoftRigid {
    /// Resolves the `[[attachment]]` sections against the soft `bodies` and the `rigid` part
    /// (anchors at the rest positions and the rigid initial configurations), and the
    /// `[contact] ignore` pairs that name a soft body (`ignore[k]` is entry k of the list).
    /// Errors name `attachment[k].KEY` or `contact.ignore[k]`.
    pub fn build(
        sections: &[AttachmentSection],
        bodies: &[SoftBody],
        rigid: &RigidScene,
        ignore: &[(usize, [String; 2])],
    ) -> Result<SoftRigid> {
        let mut out = SoftRigid::default();
        for (k, a) in sections.iter().enumerate() {
            a.validate(k)?;
            let at = |key: &str| format!("attachment[{k}].{key}");
            let body = bodies
                .iter()
                .position(|b| b.name() == a.soft_body)
                .ok_or_else(|| {
                    Error::invalid(
                        at("soft_body"),
                        format!("no soft body is named `{}`", a.soft_body),
                    )
                })?;
            let nodes = select_nodes(&bodies[body], a, &at)?;
            // The side, its pose at the initial configuration, and the shapes it carries.
            let (side, pose) = if let Some(name) = &a.rigid_body {
                if let Some(f) = rigid.statics.iter().position(|f| &f.name == name) {
                    out.ignored.insert((body, usize::MAX, f));
                    (None, ShapePose::identity())
                } else {
                    let s = rigid
                        .system(name)
                        .filter(|&s| matches!(rigid.systems[s].dynamics, RigidDynamics::Free(_)))
                        .ok_or_else(|| {
                            Error::invalid(
                                at("rigid_body"),
                                format!("no rigid body is named `{name}`"),
                            )
                        })?;
                    (
                        Some(RigidSide {
                            system: s,
                            joint: 1,
                        }),
                        initial_pose(rigid, s, 1),
                    )
                }
            } else {
                let (name, link) = (
                    a.robot.as_deref().unwrap_or(""),
                    a.link.as_deref().unwrap_or(""),
                );
                let s = rigid
                    .system(name)
                    .filter(|&s| matches!(rigid.systems[s].dynamics, RigidDynamics::Robot(_)))
                    .ok_or_else(|| {
                        Error::invalid(at("robot"), format!("no robot is named `{name}`"))
                    })?;
                let RigidDynamics::Robot(model) = &rigid.systems[s].dynamics else {
                    unreachable!("checked above")
                };
                let joint = model
                    .frames
                    .iter()
                    .find(|f| f.name == link && matches!(f.kind, FrameKind::Body))
                    .map(|f| f.parent_joint)
                    .ok_or_else(|| {
                        Error::invalid(at("link"), format!("robot `{name}` has no link `{link}`"))
                    })?;
                if joint == 0 {
                    (None, ShapePose::identity())
                } else {
                    (
                        Some(RigidSide { system: s, joint }),
                        initial_pose(rigid, s, joint),
                    )
                }
            };
            if let Some(side) = side {
                for (c, jc) in rigid.systems[side.system].colliders.iter().enumerate() {
                    if jc.joint == side.joint {
                        out.ignored.insert((body, side.system, c));
                    }
                }
            }
            let x0 = bodies[body].rest_positions();
            let anchors = nodes
                .iter()
                .map(|&n| pose.rotation.transpose() * (x0[n] - pose.translation))
                .collect();
            out.attachments.push(Attachment {
                body,
                nodes,
                side,
                anchors,
            });
        }
        for (k, pair) in ignore {
            let soft = |name: &str| bodies.iter().position(|b| b.name() == name);
            let (b, other) = match (soft(&pair[0]), soft(&pair[1])) {
                (Some(b), None) => (b, &pair[1]),
                (None, Some(b)) => (b, &pair[0]),
                _ => {
                    return Err(Error::invalid(
                        format!("contact.ignore[{k}]"),
                        "pairs two soft bodies (contact between soft bodies is `[contact] between_bodies`)",
                    ));
                }
            };
            for (s, c) in rigid.colliders_named(other, *k)? {
                out.ignored.insert((b, s, c));
            }
        }
        Ok(out)
    }

    /// The nodes of soft body `body` held by attachments, each once, ascending.
    pub fn attached_nodes(&self, body: usize) -> Vec<usize> {
        let mut nodes: Vec<usize> = self
            .attachments
            .iter()
            .filter(|a| a.body == body)
            .flat_map(|a| a.nodes.iter().copied())
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
        nodes
    }

    /// Whether a soft body can meet a rigid one in the scene (there are both, or an
    /// attachment).
    pub fn is_active(&self, rigid: &RigidScene, soft_bodies: usize) -> bool {
        !self.attachments.is_empty()
            || soft_bodies > 0
                && (!rigid.statics.is_empty()
                    || rigid.systems.iter().any(|s| !s.colliders.is_empty()))
    }
}

/// The world pose of joint `joint` of system `s` at its initial configuration.
fn initial_pose(rigid: &RigidScene, s: usize, joint: usize) -> ShapePose {
    let sys = &rigid.systems[s];
    let mut buf = SystemBuffers::new(sys);
    sys.kinematics(&mut buf, &sys.q0);
    sys.joint_pose(&buf, &sys.q0, joint)
}
