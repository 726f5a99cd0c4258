//! One row block of an NCP with a rigid part or a geometry that moves with a rigid shape, and
//! its geometry's variations along each input coordinate, as [`super::row_chain::RowChain`]
//! chains them (its module doc has the row's formula): the rigid sides and their twists, the
//! soft entries and their weights, the point, frame and gap, and one [`Variation`] (dp, dF,
//! dΦ, dw) per input coordinate that moves them. The `add_*` methods fill the variations of
//! each kind of row (rigid contact, node on a shape, corner on a triangle, edge on an edge,
//! anchor; a ball on a triangle in `diff::ball_chain`).

use crate::contact::{
    ContactGeometryJacobian, EdgeCrossingDerivative, ProximityJacobian, TriangleHitDerivative,
    contact_frame_derivative,
};
use crate::math::{Mat3, Vec3};
use crate::rigid::spatial::Vec6;
use crate::scene::point_velocity;

/// One rigid side of a row block.
pub(crate) struct ChainSide {
    pub(crate) system: usize,
    /// +1 or −1: how the side's point velocity enters σ.
    pub(crate) sign: f64,
    /// The twists of the system's coordinates at the side's body (world, `[v_O; ω]`).
    pub(crate) twists: Vec<Vec6>,
}

/// The variation of a row's geometry along one input coordinate.
#[derive(Clone, Copy)]
pub(crate) struct Variation {
    /// The input coordinate (a column of z).
    pub(crate) col: usize,
    /// dp (m per unit), dF, dΦ, and dw of each soft entry.
    pub(crate) dp: Vec3,
    pub(crate) df: Mat3,
    pub(crate) dphi: f64,
    pub(crate) dw: [f64; 3],
}

impl Variation {
    /// dw of soft entry `e`: a triangle's three weights vary with the geometry; an embedded
    /// surface vertex's (four entries) and a node's are constant.
    pub(super) fn weight(&self, e: usize) -> f64 {
        self.dw.get(e).copied().unwrap_or(0.0)
    }
}

/// A variation's (dp, dn, dΦ, dw) before dF is formed from dn.
pub(super) type Motion = (Vec3, Vec3, f64, [f64; 3]);

/// One row block (module doc).
pub(crate) struct ChainRow {
    /// Its block index in the NCP.
    pub(crate) block: usize,
    pub(crate) sides: Vec<ChainSide>,
    /// Soft entries: (local node, weight with its sign).
    pub(crate) soft: Vec<(usize, f64)>,
    pub(crate) point: Vec3,
    pub(crate) frame: Mat3,
    pub(crate) gap: f64,
    /// The `(first, count)` of the consecutive rows (indices among the chain's rows) that
    /// share this one's penetration correction (`PenetrationCorrection::apply_shared`; `None`:
    /// itself alone).
    pub(crate) manifold: Option<(usize, usize)>,
    /// A joint limit: (global coordinate, sign) of its normal row.
    pub(crate) limit: Option<(usize, f64)>,
    /// An attachment of local node `l`: its position error enters σ.
    pub(crate) attachment: Option<usize>,
    pub(crate) variation: Vec<Variation>,
}

impl ChainRow {
    /// A row block between rigid sides and/or soft entries, without variations yet.
    pub(crate) fn new(block: usize, point: Vec3, frame: Mat3, gap: f64) -> ChainRow {
        ChainRow {
            block,
            sides: Vec::new(),
            soft: Vec::new(),
            point,
            frame,
            gap,
            manifold: None,
            limit: None,
            attachment: None,
            variation: Vec::new(),
        }
    }

    /// Makes this row the block `block` at `point` with `frame` and `gap`, with no limit,
    /// attachment, soft entries or variations; its sides are left for the caller to set
    /// (their buffers reused).
    pub(crate) fn reset(&mut self, block: usize, point: Vec3, frame: Mat3, gap: f64) {
        self.block = block;
        self.point = point;
        self.frame = frame;
        self.gap = gap;
        self.manifold = None;
        self.limit = None;
        self.attachment = None;
        self.soft.clear();
        self.variation.clear();
    }

    /// Makes this block a joint limit on coordinate `coord` (its normal row is
    /// `sign · v[coord]`, its gap moves by `sign · dq[coord]`).
    pub(crate) fn set_limit(&mut self, coord: usize, sign: f64) {
        self.limit = Some((coord, sign));
        self.push(coord, Vec3::zeros(), Mat3::zeros(), sign, [0.0; 3]);
    }

    /// Adds the variation `(dp, dn, dΦ, dw)` along column `col`, dF from dn.
    pub(super) fn add(&mut self, col: usize, dp: Vec3, dn: Vec3, dphi: f64, dw: [f64; 3]) {
        let normal: Vec3 = self.frame.column(2).into_owned();
        let df = contact_frame_derivative(&normal, &dn);
        self.push(col, dp, df, dphi, dw);
    }

    fn push(&mut self, col: usize, dp: Vec3, df: Mat3, dphi: f64, dw: [f64; 3]) {
        match self.variation.iter_mut().find(|v| v.col == col) {
            Some(v) => {
                v.dp += dp;
                v.df += df;
                v.dphi += dphi;
                for (a, b) in v.dw.iter_mut().zip(dw) {
                    *a += b;
                }
            }
            None => self.variation.push(Variation {
                col,
                dp,
                df,
                dphi,
                dw,
            }),
        }
    }

    /// The variations of a rigid contact between its sides (`geo`: the derivatives of its
    /// point, normal and gap per side and twist component, `contact::contact_geometry_jacobian`),
    /// `offsets` the systems' first coordinates.
    pub(crate) fn add_rigid_contact(&mut self, offsets: &[usize], geo: &ContactGeometryJacobian) {
        for s in 0..self.sides.len() {
            for k in 0..self.sides[s].twists.len() {
                let t = self.sides[s].twists[k];
                if t.iter().all(|x| *x == 0.0) {
                    continue;
                }
                let (mut dp, mut dn, mut dphi) = (Vec3::zeros(), Vec3::zeros(), 0.0);
                for c in 0..6 {
                    dp += geo.point[s][c] * t[c];
                    dn += geo.normal[s][c] * t[c];
                    dphi += geo.gap[s][c] * t[c];
                }
                self.add(offsets[self.sides[s].system] + k, dp, dn, dphi, [0.0; 3]);
            }
        }
    }

    /// The variations of a soft point Σ wₖ x_k (a node: one column with weight 1; an
    /// embedded surface vertex: its tetrahedron's nodes, `soft_cols` their first columns with
    /// the weights) against a collider carried by the row's first side, or fixed when there
    /// is none (`jac`: `contact::proximity_jacobian` at the point's start position).
    pub(crate) fn add_node_on_shape(
        &mut self,
        offsets: &[usize],
        soft_cols: &[(usize, f64)],
        jac: &ProximityJacobian,
    ) {
        for &(col, w) in soft_cols {
            for d in 0..3 {
                self.add(
                    col + d,
                    w * jac.point_x[d],
                    w * jac.normal_x[d],
                    w * jac.gap_x[d],
                    [0.0; 3],
                );
            }
        }
        self.add_side_motion(offsets, |t| {
            let (mut dp, mut dn, mut dphi) = (Vec3::zeros(), Vec3::zeros(), 0.0);
            for c in 0..6 {
                dp += jac.point_twist[c] * t[c];
                dn += jac.normal_twist[c] * t[c];
                dphi += jac.gap_twist[c] * t[c];
            }
            (dp, dn, dphi, [0.0; 3])
        });
    }

    /// The variations of a rigid corner (the row's point, carried by its first side, or
    /// fixed) against a soft triangle whose nodes start at columns `vertex_cols`, the soft
    /// entries' weights being −w (`d`: `contact::TriangleHitDerivative` at the corner and the
    /// triangle's start positions).
    pub(crate) fn add_corner_on_triangle(
        &mut self,
        offsets: &[usize],
        vertex_cols: [usize; 3],
        d: &TriangleHitDerivative,
    ) {
        let frames = d.frame_jacobian();
        for (t, &col) in vertex_cols.iter().enumerate() {
            for (j, df) in frames[1 + t].iter().enumerate() {
                let dw = std::array::from_fn(|e| -d.weight_gradient[e][1 + t][j]);
                self.push(col + j, Vec3::zeros(), *df, d.gap_gradient[1 + t][j], dw);
            }
        }
        let frame_p = frames[0];
        let this_frame = |dp: &Vec3| frame_p[0] * dp.x + frame_p[1] * dp.y + frame_p[2] * dp.z;
        let mut motions = Vec::new();
        if let Some(side) = self.sides.first() {
            for (k, t) in side.twists.iter().enumerate() {
                if t.iter().any(|x| *x != 0.0) {
                    motions.push((offsets[side.system] + k, point_velocity(t, &self.point)));
                }
            }
        }
        for (col, dp) in motions {
            let dw = std::array::from_fn(|e| -d.weight_gradient[e][0].dot(&dp));
            self.push(col, dp, this_frame(&dp), d.gap_gradient[0].dot(&dp), dw);
        }
    }

    /// The variations of a rigid edge (carried by the row's first side, or fixed) crossing a
    /// soft surface edge whose nodes start at columns `node_cols`, the soft entries' weights
    /// being −(1 − s) and −s, the row's point the rigid edge's closest point a(t) (`d`:
    /// `contact::EdgeCrossingDerivative` at the start positions). The point slides along the
    /// rigid edge as t changes: dp = (the body's motion at p) + f dt.
    pub(crate) fn add_edge_on_edge(
        &mut self,
        offsets: &[usize],
        node_cols: [usize; 2],
        d: &EdgeCrossingDerivative,
    ) {
        let f = d.rigid_direction;
        for (v, &col) in node_cols.iter().enumerate() {
            for j in 0..3 {
                let ds = d.s_gradient[v][j];
                let dn = d.normal_jacobian[v].column(j).into_owned();
                let dp = f * d.t_gradient[v][j];
                self.add(col + j, dp, dn, d.gap_gradient[v][j], [ds, -ds, 0.0]);
            }
        }
        let p = self.point;
        let a0 = p - d.t * f;
        let a1 = a0 + f;
        self.add_side_motion(offsets, |tw| {
            let (da0, da1) = (point_velocity(tw, &a0), point_velocity(tw, &a1));
            let dn = d.normal_jacobian[2] * da0 + d.normal_jacobian[3] * da1;
            let dphi = d.gap_gradient[2].dot(&da0) + d.gap_gradient[3].dot(&da1);
            let ds = d.s_gradient[2].dot(&da0) + d.s_gradient[3].dot(&da1);
            let dt = d.t_gradient[2].dot(&da0) + d.t_gradient[3].dot(&da1);
            (point_velocity(tw, &p) + f * dt, dn, dphi, [ds, -ds, 0.0])
        });
    }

    /// The variations of an attachment's anchor, a point of the row's first side (the
    /// frame is the world's; its error x_node − p enters σ).
    pub(crate) fn add_anchor(&mut self, offsets: &[usize], local: usize) {
        self.attachment = Some(local);
        let p = self.point;
        self.add_side_motion(offsets, |t| {
            (point_velocity(t, &p), Vec3::zeros(), 0.0, [0.0; 3])
        });
        for v in &mut self.variation {
            v.df = Mat3::zeros();
        }
    }

    /// Adds `motion(T_k)` = (dp, dn, dΦ, dw) for each coordinate k moving the first side.
    pub(super) fn add_side_motion(&mut self, offsets: &[usize], motion: impl Fn(&Vec6) -> Motion) {
        let Some(side) = self.sides.first() else {
            return;
        };
        let moves: Vec<(usize, Motion)> = side
            .twists
            .iter()
            .enumerate()
            .filter(|(_, t)| t.iter().any(|x| *x != 0.0))
            .map(|(k, t)| (offsets[side.system] + k, motion(t)))
            .collect();
        for (col, (dp, dn, dphi, dw)) in moves {
            self.add(col, dp, dn, dphi, dw);
        }
    }
}
