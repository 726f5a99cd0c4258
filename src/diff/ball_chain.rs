//! The variations of a ball row (`scene::step::contact::ball_rows`, row kinds 9 and 10) as the step
//! derivatives chain them (`diff::row_chain`): a rigid ball of centre c and radius r resting
//! on a soft triangle at its support point p = c − r n. Φ + r, n and the soft weights are those
//! of c's projection on the triangle (`contact::TriangleHitDerivative` at c); p turns with the
//! triangle, dp = dc − r dn, which a corner row's body-fixed vertex does not; and a capsule's
//! axis across a ridge (row kinds 11 and 12), an edge-crossing row whose point lies r below
//! the axis.

use crate::contact::{BallOnSegment, EdgeCrossingDerivative, TriangleHitDerivative};
use crate::math::Vec3;
use crate::scene::point_velocity;

use super::chain_row::ChainRow;

impl ChainRow {
    /// The variations of a rigid ball of radius `radius` (m; carried by the row's first side,
    /// or fixed) resting on a soft triangle whose nodes start at columns `vertex_cols`, the
    /// soft entries' weights being −w, the row's point the ball's support point
    /// p = c − r n (`d`: `contact::TriangleHitDerivative` at the centre c and the triangle's
    /// start positions, whose Φ + r, n and weights are the ball row's: `scene::step::contact::ball_rows`).
    /// The support point turns with the triangle, dp = dc − r dn: the triangle's nodes move
    /// it by −r dn, the body's motion by dc (n does not depend on c).
    pub(crate) fn add_ball_on_triangle(
        &mut self,
        offsets: &[usize],
        vertex_cols: [usize; 3],
        d: &TriangleHitDerivative,
        radius: f64,
    ) {
        for (t, &col) in vertex_cols.iter().enumerate() {
            for j in 0..3 {
                let dn = d.normal_jacobian[1 + t].column(j).into_owned();
                let dw = std::array::from_fn(|e| -d.weight_gradient[e][1 + t][j]);
                self.add(col + j, -radius * dn, dn, d.gap_gradient[1 + t][j], dw);
            }
        }
        let c = self.point + radius * d.normal;
        self.add_side_motion(offsets, |tw| {
            let dc = point_velocity(tw, &c);
            let dw = std::array::from_fn(|e| -d.weight_gradient[e][0].dot(&dc));
            (dc, Vec3::zeros(), d.gap_gradient[0].dot(&dc), dw)
        });
    }

    /// The variations of a rigid ball of radius `radius` (m; carried by the row's first side,
    /// or fixed) beside a soft surface edge whose nodes start at columns `node_cols`, the soft
    /// entries' weights being −(1 − s) and −s, the row's point the ball's support point
    /// p = c − r n towards the edge's point closest to the centre (`d`:
    /// `contact::BallOnSegment` at the centre and the edge's start positions). Here n turns
    /// with the centre too, so the body's motion moves p by dc − r dn.
    pub(crate) fn add_ball_on_edge(
        &mut self,
        offsets: &[usize],
        node_cols: [usize; 2],
        d: &BallOnSegment,
        radius: f64,
    ) {
        for (t, &col) in node_cols.iter().enumerate() {
            for j in 0..3 {
                let dn = d.normal_jacobian[1 + t].column(j).into_owned();
                let ds = d.s_gradient[1 + t][j];
                self.add(
                    col + j,
                    -radius * dn,
                    dn,
                    d.gap_gradient[1 + t][j],
                    [ds, -ds, 0.0],
                );
            }
        }
        let c = self.point + radius * d.normal;
        self.add_side_motion(offsets, |tw| {
            let dc = point_velocity(tw, &c);
            let dn = d.normal_jacobian[0] * dc;
            let ds = d.s_gradient[0].dot(&dc);
            (
                dc - radius * dn,
                dn,
                d.gap_gradient[0].dot(&dc),
                [ds, -ds, 0.0],
            )
        });
    }

    /// The variations of a rigid capsule of radius `radius` (m; carried by the row's first
    /// side, or fixed) whose axis lies across a soft surface edge (a convex ridge) whose nodes
    /// start at columns `node_cols`: the edge-crossing row of its axis (`d`:
    /// `contact::EdgeCrossingDerivative` at the axis' ends and the edge's start positions,
    /// [`ChainRow::add_edge_on_edge`]) with its point the capsule's support point
    /// p = a(t) − r n. Φ differs from the axis' crossing gap by the constant r; the point also
    /// turns with n, dp = da(t) − r dn.
    pub(crate) fn add_capsule_on_edge(
        &mut self,
        offsets: &[usize],
        node_cols: [usize; 2],
        d: &EdgeCrossingDerivative,
        radius: f64,
    ) {
        let support = self.point;
        let normal: Vec3 = self.frame.column(2).into_owned();
        self.point = support + radius * normal;
        self.add_edge_on_edge(offsets, node_cols, d);
        self.point = support;
        // Each variation's dF is the frame's derivative, whose last column is dn.
        for v in &mut self.variation {
            v.dp -= radius * v.df.column(2);
        }
    }
}
