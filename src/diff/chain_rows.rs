//! The [`ChainRow`]s of a step's row blocks that have a rigid part or move with a rigid
//! shape, with their geometry's variations (`diff::row_chain`): the rigid stage's own
//! contacts and limits, and each soft body's rows against the rigid part
//! (`scene::SoftRigidRow`): a node against a shape (`contact::proximity_jacobian`), a
//! shape's corner against a soft triangle (`contact::TriangleHitDerivative`, the corner
//! moving with its body), a shape's edge crossing a soft surface edge
//! (`contact::EdgeCrossingDerivative`, the rigid edge moving with its body; also the
//! crossings that hold a rigid face lying flat, `scene::step::contact::flat_face_rows`), an attachment (its
//! anchor moving with its body), a ball resting on a soft triangle (`scene::step::contact::ball_rows`,
//! kinds 9 and 10: `contact::TriangleHitDerivative` at the ball's centre, the support point
//! c − r n turning with the triangle).

use crate::contact::{
    BallOnSegment, Collider, ContactGeometryJacobian, ConvexShape, EdgeCrossingDerivative,
    ShapePose, TriangleHitDerivative, proximity_jacobian,
};
use crate::error::{Error, Result};
use crate::math::{Mat3, Vec3};
use crate::scene::{RigidRow, RigidScene, RigidWorkspace, Scene, SoftPoint, SoftRigidRow};

use super::chain_row::{ChainRow, ChainSide};
use super::rigid_record::RigidRecord;

/// The soft nodes rows touch, each given a local index (columns n + 3l.. of z).
#[derive(Default)]
pub(crate) struct LocalNodes {
    pub(crate) nodes: Vec<(usize, usize)>,
}

impl LocalNodes {
    /// The local index of node `node` of body `body`, added when new.
    pub(crate) fn index(&mut self, body: usize, node: usize) -> usize {
        match self.nodes.iter().position(|&p| p == (body, node)) {
            Some(l) => l,
            None => {
                self.nodes.push((body, node));
                self.nodes.len() - 1
            }
        }
    }
}

/// The rigid stage's own row blocks of the last step (contacts and limits), their NCP
/// blocks from `ws`, to follow `first` rows in a chain (their correction manifolds,
/// [`ChainRow::manifold`], count from the chain's first row). Errors as
/// `RigidWorkspace::row_geometry`.
pub(crate) fn rigid_rows(
    scene: &Scene,
    ws: &RigidWorkspace,
    rec: &RigidRecord,
    first: usize,
) -> Result<Vec<ChainRow>> {
    let mut rows = Vec::new();
    rigid_rows_into(scene, ws, rec, first, &mut rows, &mut Vec::new())?;
    Ok(rows)
}

/// [`rigid_rows`] into `rows`, reusing the rows already there (their sides' twists and their
/// variations) and `geometry` for the rows' geometry: no allocation once they have held as
/// many rows with as many sides.
pub(crate) fn rigid_rows_into(
    scene: &Scene,
    ws: &RigidWorkspace,
    rec: &RigidRecord,
    first: usize,
    rows: &mut Vec<ChainRow>,
    geometry: &mut Vec<Option<ContactGeometryJacobian>>,
) -> Result<()> {
    ws.row_geometry_into(&scene.rigid, &scene.contact, geometry)?;
    let offsets = &rec.offsets;
    rows.truncate(geometry.len());
    for (i, (((c, geo), &block), &manifold)) in ws
        .contacts()
        .iter()
        .zip(geometry.iter())
        .zip(ws.row_blocks())
        .zip(ws.correction_manifolds())
        .enumerate()
    {
        if i == rows.len() {
            rows.push(ChainRow::new(block, Vec3::zeros(), Mat3::identity(), 0.0));
        }
        let row = &mut rows[i];
        match (c.row, geo) {
            (
                RigidRow::Contact {
                    a, b, point, frame, ..
                },
                Some(geo),
            ) => {
                row.reset(block, point, frame, c.gap);
                let sides = [(Some(a), 1.0), (b, -1.0)];
                let count = sides.iter().filter(|s| s.0.is_some()).count();
                row.sides.truncate(count);
                for (j, (side, sign)) in sides
                    .into_iter()
                    .filter_map(|(s, sign)| s.map(|s| (s, sign)))
                    .enumerate()
                {
                    if j == row.sides.len() {
                        row.sides.push(ChainSide {
                            system: side.system,
                            sign,
                            twists: Vec::new(),
                        });
                    }
                    let slot = &mut row.sides[j];
                    slot.system = side.system;
                    slot.sign = sign;
                    rec.twists_into(scene, side, &mut slot.twists);
                }
                row.add_rigid_contact(offsets, geo);
                row.manifold = Some((first + manifold.0, manifold.1));
            }
            (RigidRow::Limit { system, dof, sign }, _) => {
                row.reset(block, Vec3::zeros(), Mat3::identity(), c.gap);
                row.sides.clear();
                row.set_limit(offsets[system] + dof, sign);
            }
            _ => unreachable!("the detected rows are contacts (with geometry) and limits"),
        }
    }
    Ok(())
}

/// The shape a row's key names and its pose at the start of the step (`ws`): collider
/// `key.2` of system `key.1` when `on_system`, else fixed body `key.1`.
fn shape_of<'a>(
    rigid: &'a RigidScene,
    ws: &RigidWorkspace,
    r: &SoftRigidRow,
    on_system: bool,
) -> (&'a Collider, ShapePose) {
    if on_system {
        let (s, c) = (r.key.1, r.key.2);
        (&rigid.systems[s].colliders[c].collider, ws.poses()[s][c])
    } else {
        let f = &rigid.statics[r.key.1];
        (&f.collider, f.pose)
    }
}

/// The radius (m) and centre (m) of the ball of a ball row (kinds 9 and 10,
/// `scene::step::contact::ball_rows`; a ball, or a capsule's end ball, whose centre is as body-fixed as the
/// ball's): the row's point is its support point c − r n.
fn ball_of(rigid: &RigidScene, ws: &RigidWorkspace, r: &SoftRigidRow) -> (f64, Vec3) {
    let (collider, _) = shape_of(rigid, ws, r, r.key.0 == 9);
    let (ConvexShape::Ball { radius } | ConvexShape::Capsule { radius, .. }) = *collider.shape()
    else {
        unreachable!(
            "scene::step::contact::ball_rows makes rows of balls and capsules' end balls only"
        )
    };
    (radius, r.point + radius * r.frame.column(2))
}

/// Soft body `body`'s rows against the rigid part (`rows`, at NCP blocks `blocks`), its
/// nodes starting at `x` (m); `ws` the rigid stage (the colliders' start poses), `rec` the
/// rigid record (twists; `None` in a scene without moving rigid systems). Errors when the
/// geometry has no derivative there (a closest point that jumps, a degenerate triangle).
#[allow(clippy::too_many_arguments)]
pub(crate) fn soft_rigid_rows(
    scene: &Scene,
    ws: &RigidWorkspace,
    rec: Option<&RigidRecord>,
    body: usize,
    rows: &[SoftRigidRow],
    blocks: &[usize],
    x: &[Vec3],
    local: &mut LocalNodes,
) -> Result<Vec<ChainRow>> {
    let no_offsets = [0];
    let offsets: &[usize] = rec.map_or(&no_offsets, |r| &r.offsets);
    let n = *offsets.last().expect("non-empty");
    let rigid = &scene.rigid;
    let mut out = Vec::with_capacity(rows.len());
    for (r, &block) in rows.iter().zip(blocks) {
        let mut row = ChainRow::new(block, r.point, r.frame, r.gap);
        if let Some(side) = r.side {
            let rec = rec.expect("a moving rigid side has a rigid record");
            row.sides.push(ChainSide {
                system: side.system,
                sign: -r.soft_sign,
                twists: rec.twists(scene, side),
            });
        }
        let (weights, len) = r.soft_weights();
        for &(node, w) in &weights[..len] {
            row.soft.push((local.index(body, node), w));
        }
        let col = |l: usize| n + 3 * l;
        match (r.key.0, r.soft) {
            (0 | 1, SoftPoint::Node(_) | SoftPoint::Embedded(_)) => {
                let (collider, pose) = shape_of(rigid, ws, r, r.key.0 == 0);
                // The point's nodes and weights (soft_sign = +1 on these rows).
                let cols: [(usize, f64); 4] =
                    std::array::from_fn(|k| (col(local.index(body, weights[k].0)), weights[k].1));
                let jac = proximity_jacobian(collider, &pose, &r.soft.value(x))?;
                row.add_node_on_shape(offsets, &cols[..len], &jac);
            }
            (3 | 4, SoftPoint::Face { vertices, .. }) => {
                let d = TriangleHitDerivative::new(&r.point, &vertices.map(|v| x[v])).ok_or_else(
                    || {
                        Error::invalid(
                            format!("soft body {body}'s contact with a rigid corner"),
                            "its triangle is degenerate at the start positions",
                        )
                    },
                )?;
                let cols = vertices.map(|v| col(local.index(body, v)));
                row.add_corner_on_triangle(offsets, cols, &d);
            }
            (5..=8, SoftPoint::Edge { nodes, .. }) => {
                // Edge rows (5, 6) and a flat face's crossings (7, 8): one geometry.
                let (collider, pose) = shape_of(rigid, ws, r, r.key.0 % 2 == 1);
                let edges = collider.edges();
                let ends = edges[r.key.3 % edges.len()]
                    .ends
                    .map(|a| pose.transform_point(&a));
                let normal = r.frame.column(2).into_owned();
                let d = EdgeCrossingDerivative::new(&nodes.map(|v| x[v]), &ends, &normal)
                    .ok_or_else(|| {
                        Error::invalid(
                            format!("soft body {body}'s contact with a rigid edge"),
                            "the edges are parallel at the start positions",
                        )
                    })?;
                let cols = nodes.map(|v| col(local.index(body, v)));
                row.add_edge_on_edge(offsets, cols, &d);
            }
            (9 | 10, SoftPoint::Face { vertices, .. }) => {
                // A ball's support point p = c − r n turns with the triangle
                // (`scene::step::contact::ball_rows`): the derivatives of the centre's projection.
                let (radius, centre) = ball_of(rigid, ws, r);
                let d = TriangleHitDerivative::new(&centre, &vertices.map(|v| x[v])).ok_or_else(
                    || {
                        Error::invalid(
                            format!("soft body {body}'s contact with a rigid ball"),
                            "its triangle is degenerate at the start positions",
                        )
                    },
                )?;
                let cols = vertices.map(|v| col(local.index(body, v)));
                row.add_ball_on_triangle(offsets, cols, &d, radius);
            }
            (9 | 10, SoftPoint::Edge { nodes, .. }) => {
                // A ball beside a surface edge (`scene::step::contact::ball_rows`): n from the edge's closest
                // point to the centre turns with the edge and the centre.
                let (radius, centre) = ball_of(rigid, ws, r);
                let d = BallOnSegment::new(&centre, &nodes.map(|v| x[v]), radius, 0.0)
                    .ok_or_else(|| {
                        Error::invalid(
                            format!("soft body {body}'s contact with a rigid ball"),
                            "its edge is degenerate, or the ball's centre lies on it, at the start positions",
                        )
                    })?;
                let cols = nodes.map(|v| col(local.index(body, v)));
                row.add_ball_on_edge(offsets, cols, &d, radius);
            }
            (11 | 12, SoftPoint::Edge { nodes, .. }) => {
                // A capsule's axis across a ridge (`scene::step::contact::ball_rows`): the edge-crossing
                // geometry of its axis, the support point r below a(t) along n.
                let (collider, pose) = shape_of(rigid, ws, r, r.key.0 == 11);
                let (radius, ends) = collider
                    .shape()
                    .capsule_axis(&pose)
                    .expect("scene::step::contact::ball_rows makes axis rows of capsules only");
                let normal = r.frame.column(2).into_owned();
                let d = EdgeCrossingDerivative::new(&nodes.map(|v| x[v]), &ends, &normal)
                    .ok_or_else(|| {
                        Error::invalid(
                            format!("soft body {body}'s contact with a rigid capsule"),
                            "its axis is parallel to the ridge at the start positions",
                        )
                    })?;
                let cols = nodes.map(|v| col(local.index(body, v)));
                row.add_capsule_on_edge(offsets, cols, &d, radius);
            }
            (2, SoftPoint::Node(node)) => row.add_anchor(offsets, local.index(body, node)),
            _ => unreachable!("scene::model::soft_rigid pairs each kind with its soft point"),
        }
        out.push(row);
    }
    Ok(out)
}
