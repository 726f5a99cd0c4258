//! The rows of one soft body against the rigid part in one step (`scene::model::soft_rigid`'s
//! module doc says which, and why): its contact points against the shapes, the shapes'
//! corners against its triangles, the shapes' edges crossing its surface edges, the faces
//! lying flat (`scene::step::contact::flat_face_rows`), the balls and capsules (`scene::step::contact::ball_rows`), then its
//! attachments.

use crate::contact::{ContactPoints, EdgeHit, ShapePose, SurfaceTree, TriangleHit, contact_frame};
use crate::math::{Mat3, Vec3};

use super::ball_rows::{BallBuffers, ball_rows};
use super::flat_face_rows::{ShapeFaces, flat_face_rows};
use crate::scene::model::rigid::RigidScene;
use crate::scene::model::rigid::RigidSide;
use crate::scene::model::soft_point::SoftPoint;
use crate::scene::model::soft_rigid::{SoftRigid, SoftRigidRow};

/// What [`soft_rigid_rows`] reads of the rigid part in this step.
pub(in crate::scene) struct RigidView<'a> {
    /// The rigid part.
    pub(in crate::scene) scene: &'a RigidScene,
    /// Each system's colliders' world poses at the start of the step.
    pub(in crate::scene) poses: &'a [Vec<ShapePose>],
    /// Each system's colliders' reach (m) in the step.
    pub(in crate::scene) reach: &'a [Vec<f64>],
    /// The world pose of a system's joint at the start of the step.
    pub(in crate::scene) joint_pose: &'a dyn Fn(usize, usize) -> ShapePose,
    /// `[contact] friction`.
    pub(in crate::scene) friction: f64,
    /// `[contact] flat_faces`: whether a rigid face lying flat on a soft face gets the rows
    /// of `scene::step::contact::flat_face_rows` where no vertex row holds it.
    pub(in crate::scene) flat_faces: bool,
    /// `[contact] small_shapes`: whether a ball resting on a soft triangle between nodes (or a
    /// capsule's end balls, and its axis across a ridge) gets the rows of `scene::step::contact::ball_rows`.
    pub(in crate::scene) small_shapes: bool,
}

/// One soft body as [`soft_rigid_rows`] sees it.
pub(in crate::scene) struct SoftSide<'a> {
    /// Its index in the scene.
    pub(in crate::scene) body: usize,
    /// Its node positions at the start of the step (m).
    pub(in crate::scene) x: &'a [Vec3],
    /// Its contact points (`contact::ContactPoints`) and their positions at the start of
    /// the step (m; `x` itself when the points are the nodes).
    pub(in crate::scene) points: (&'a ContactPoints, &'a [Vec3]),
    /// Its contact candidates (indices of contact points that move).
    pub(in crate::scene) candidates: &'a [usize],
    /// How far its nodes can travel in the step (m).
    pub(in crate::scene) reach: f64,
    /// Its surface, refitted at `x` with at least `reach` plus any shape's reach.
    pub(in crate::scene) surface: &'a SurfaceTree,
}

/// The buffers [`soft_rigid_rows`] reuses from step to step (one per soft body, in its
/// contact workspace): the corner and edge rows before they join the node rows, the edge
/// query's candidate edges and its hits.
#[derive(Debug, Default)]
pub(in crate::scene) struct SoftRigidScratch {
    corner_rows: Vec<SoftRigidRow>,
    edges: Vec<usize>,
    hits: Vec<EdgeHit>,
    triangles: Vec<TriangleHit>,
    ball_edges: Vec<(usize, crate::contact::BallOnSegment)>,
}

/// The rows of a soft body against the rigid part in this step, appended to `out`: its nodes
/// against the shapes, then each shape's corners against its triangles and the shape's edges
/// crossing its surface edges (shape by shape: by corner; by shape edge, then surface edge),
/// then its attachments' rows (module doc), with the buffers of `scratch`.
pub(in crate::scene) fn soft_rigid_rows(
    coupling: &SoftRigid,
    rigid: &RigidView<'_>,
    soft: &SoftSide<'_>,
    out: &mut Vec<SoftRigidRow>,
    scratch: &mut SoftRigidScratch,
) {
    let SoftRigidScratch {
        corner_rows,
        edges: edge_scratch,
        hits,
        triangles,
        ball_edges,
    } = scratch;
    corner_rows.clear();
    let scene = rigid.scene;
    let (body, x, candidates, reach_body) = (soft.body, soft.x, soft.candidates, soft.reach);
    let mut corners = |collider: &crate::contact::Collider,
                       pose: &ShapePose,
                       margin: f64,
                       side: Option<RigidSide>,
                       friction: f64,
                       key: (u8, usize, usize),
                       out: &mut Vec<SoftRigidRow>| {
        for (k, c) in collider.corners().iter().enumerate() {
            let p = pose.transform_point(c);
            let outward = pose.rotation * c;
            let Some(hit) = soft
                .surface
                .facing_triangle(x, p, outward, margin, |_| false)
            else {
                continue;
            };
            out.push(SoftRigidRow {
                soft: SoftPoint::Face {
                    vertices: hit.vertices,
                    weights: hit.weights,
                },
                soft_sign: -1.0,
                side,
                point: p,
                frame: hit.frame,
                gap: hit.gap,
                error: Vec3::zeros(),
                friction,
                bilateral: false,
                key: (key.0, key.1, key.2, k),
            });
        }
        // The shape's edges crossing the surface's edges (kind key.0 + 2).
        let count = collider.edges().len();
        for (k, edge) in collider.edges().iter().enumerate() {
            hits.clear();
            soft.surface.crossing_edges(
                x,
                &edge.ends.map(|a| pose.transform_point(&a)),
                &edge.normals.map(|m| pose.rotation * m),
                margin,
                edge_scratch,
                hits,
            );
            for hit in hits.iter() {
                let key = (key.0 + 2, key.1, key.2, hit.edge * count + k);
                out.push(SoftRigidRow::crossing(hit, side, friction, key));
            }
        }
        // The shape's faces lying flat on the surface where no vertex row holds them (kind
        // key.0 + 4).
        // The shape as the face and ball rows read it, its rows of kind key.0 + `offset`.
        let shape = |offset: u8| ShapeFaces {
            collider,
            pose,
            margin,
            side,
            friction,
            key: (key.0 + offset, key.1, key.2),
        };
        if rigid.flat_faces {
            flat_face_rows(&shape(4), soft.surface, x, edge_scratch, hits, out);
        }
        // A ball resting on the surface's triangles (kind key.0 + 6); not for a body with an
        // embedded contact surface, whose points (offset from the volume's boundary) hold it.
        if rigid.small_shapes && !soft.points.0.is_embedded() {
            let shape = shape(6);
            let buffers = BallBuffers {
                triangles,
                ball_edges,
                edges: edge_scratch,
                crossings: hits,
            };
            ball_rows(&shape, soft.surface, x, buffers, out);
        }
    };
    let (points, px) = soft.points;
    let mut push =
        |node: usize, prox: crate::contact::Proximity, side, friction, key: (u8, usize, usize)| {
            out.push(SoftRigidRow {
                soft: points
                    .embedded(node)
                    .map_or(SoftPoint::Node(node), |e| SoftPoint::Embedded(*e)),
                soft_sign: 1.0,
                side,
                point: prox.point,
                frame: contact_frame(&prox.normal),
                gap: prox.gap,
                error: Vec3::zeros(),
                friction,
                bilateral: false,
                key: (key.0, key.1, key.2, node),
            });
        };
    for (s, sys) in scene.systems.iter().enumerate() {
        for (c, jc) in sys.colliders.iter().enumerate() {
            if coupling.ignored.contains(&(body, s, c)) {
                continue;
            }
            let pose = &rigid.poses[s][c];
            let margin = reach_body + rigid.reach[s][c];
            let ball = jc.collider.bounding_radius() + margin;
            let side = Some(RigidSide {
                system: s,
                joint: jc.joint,
            });
            let mu = sys.friction.unwrap_or(rigid.friction);
            for &n in candidates {
                if (px[n] - pose.translation).norm() > ball {
                    continue;
                }
                let prox = jc.collider.closest(pose, &px[n]);
                if prox.gap <= margin {
                    push(n, prox, side, mu, (0, s, c));
                }
            }
            corners(&jc.collider, pose, margin, side, mu, (3, s, c), corner_rows);
        }
    }
    for (f, fixed) in scene.statics.iter().enumerate() {
        if coupling.ignored.contains(&(body, usize::MAX, f)) {
            continue;
        }
        let ball = fixed.collider.bounding_radius() + reach_body;
        let mu = fixed.friction.unwrap_or(rigid.friction);
        for &n in candidates {
            if (px[n] - fixed.pose.translation).norm() > ball {
                continue;
            }
            let prox = fixed.collider.closest(&fixed.pose, &px[n]);
            if prox.gap <= reach_body {
                push(n, prox, None, mu, (1, f, 0));
            }
        }
        corners(
            &fixed.collider,
            &fixed.pose,
            reach_body,
            None,
            mu,
            (4, f, 0),
            corner_rows,
        );
    }
    out.append(corner_rows);
    for (k, a) in coupling.attachments.iter().enumerate() {
        if a.body != body {
            continue;
        }
        let pose = match a.side {
            Some(side) => (rigid.joint_pose)(side.system, side.joint),
            None => ShapePose::identity(),
        };
        for (&n, anchor) in a.nodes.iter().zip(&a.anchors) {
            let point = pose.transform_point(anchor);
            out.push(SoftRigidRow {
                soft: SoftPoint::Node(n),
                soft_sign: 1.0,
                side: a.side,
                point,
                frame: Mat3::identity(),
                gap: 0.0,
                error: x[n] - point,
                friction: 0.0,
                bilateral: true,
                key: (2, k, 0, n),
            });
        }
    }
}
