//! A pair of shapes that moves from one step to the next (two links of a robot, two free
//! bodies): [`PairSeparation`] remembers the pair's distance at the poses of its last exact
//! query, so the manifold query runs only when the pair can have come within the margin.
//!
//! The distance depends only on the pose of `b` in `a`'s frame, `(R, t) = pose_a⁻¹ pose_b`
//! (two links of one arm mostly move together). Between the remembered relative pose
//! `(R₀, t₀)` and the current one `(R₁, t₁)`, no point of `b` within `r` of its frame's origin
//! (its bounding radius) moves in `a`'s frame farther than `|t₁ − t₀| + r ‖R₁ − R₀‖₂`, with
//! `‖R₁ − R₀‖₂ = 2 sin(θ/2) = √(3 − R₀ : R₁)` for the angle θ between them, so the distance is
//! at least the remembered one minus that move. While this bound exceeds the margin the pair is
//! skipped (the manifold query would report no point); when it does not, parry's GJK distance
//! is taken again (and remembered when the pair is still
//! apart). A pair found within the margin runs the manifold query each step, without the
//! distance query, until it separates.

use parry3d_f64::query::distance;

use super::convex_shape::{Collider, ShapePose};
use super::separation_bound::shapes_separated;
use super::shape_manifold::{
    ManifoldWorkspace, ShapeContact, collider_contacts, parry_contacts, within_spheres,
};
use crate::error::Result;

/// GJK's distance is trusted to this fraction of the pair's size (m per m): a pair is
/// remembered apart only beyond the margin by more than this.
const DISTANCE_TOLERANCE: f64 = 1e-6;

/// The remembered separation of one pair of moving shapes (module doc); one per pair, kept from
/// step to step.
#[derive(Debug, Clone, Copy)]
pub struct PairSeparation {
    /// The pose of `b` in `a`'s frame at the last distance query.
    relative: ShapePose,
    /// A lower bound on the distance at that pose (m); −∞ when nothing is known.
    distance: f64,
    /// Whether the last query found the pair within its margin.
    near: bool,
}

impl Default for PairSeparation {
    fn default() -> PairSeparation {
        PairSeparation {
            relative: ShapePose::identity(),
            distance: f64::NEG_INFINITY,
            near: false,
        }
    }
}

/// Slack on the rotation bound (rad), above the round-off of `3 − R₀ : R₁`'s square root.
const ANGLE_SLACK: f64 = 1e-7;

/// The pose of `b` in `a`'s frame.
fn relative(pose_a: &ShapePose, pose_b: &ShapePose) -> ShapePose {
    ShapePose {
        rotation: pose_a.rotation.tr_mul(&pose_b.rotation),
        translation: pose_a
            .rotation
            .tr_mul(&(pose_b.translation - pose_a.translation)),
    }
}

/// How far (m) any point within `radius` of the shape frame's origin moves from `from` to `to`.
fn moved(from: &ShapePose, to: &ShapePose, radius: f64) -> f64 {
    let cos_sum = from.rotation.dot(&to.rotation);
    let rotation = (3.0 - cos_sum).max(0.0).sqrt() + ANGLE_SLACK;
    (to.translation - from.translation).norm() + radius * rotation
}

impl PairSeparation {
    /// The contacts of `a` at `pose_a` with `b` at `pose_b` whose gap is at most `margin` (m),
    /// appended to `out`, exactly as [`collider_contacts`] finds them; the manifold query is
    /// skipped while the remembered distance shows the pair apart. Errors as
    /// [`collider_contacts`].
    #[allow(clippy::too_many_arguments)]
    pub fn contacts(
        &mut self,
        a: &Collider,
        pose_a: &ShapePose,
        b: &Collider,
        pose_b: &ShapePose,
        margin: f64,
        ws: &mut ManifoldWorkspace,
        out: &mut Vec<ShapeContact>,
    ) -> Result<()> {
        let (ra, rb) = (a.bounding_radius(), b.bounding_radius());
        if !(margin >= 0.0) || !margin.is_finite() || self.near {
            // Errors as collider_contacts does; a pair in contact queries its manifold.
            let before = out.len();
            collider_contacts(a, pose_a, b, pose_b, margin, ws, out)?;
            self.near = out.len() > before;
            self.distance = f64::NEG_INFINITY;
            return Ok(());
        }
        if !within_spheres(a, pose_a, b, pose_b, margin) {
            return Ok(());
        }
        let rel = relative(pose_a, pose_b);
        let bound = self.distance - moved(&self.relative, &rel, rb);
        if bound > margin || shapes_separated(a, pose_a, b, pose_b, margin) {
            return Ok(());
        }
        let (sa, pa) = a.parry(pose_a);
        let (sb, pb) = b.parry(pose_b);
        if let Ok(d) = distance(&pa, sa.as_ref(), &pb, sb.as_ref()) {
            let d = d.distance - DISTANCE_TOLERANCE * (ra + rb + margin);
            if d > margin {
                *self = PairSeparation {
                    relative: rel,
                    distance: d,
                    near: false,
                };
                return Ok(());
            }
        }
        let before = out.len();
        parry_contacts(a, pose_a, b, pose_b, margin, ws, out)?;
        self.near = out.len() > before;
        self.distance = f64::NEG_INFINITY;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::ConvexShape;
    use crate::math::Vec3;
    use nalgebra::Rotation3;

    /// Along a path that brings two shapes into contact and apart again, the remembered pair
    /// finds exactly the contacts `collider_contacts` finds at every pose.
    #[test]
    fn remembered_pairs_find_the_same_contacts() {
        let shapes = [
            ConvexShape::Cylinder {
                radius: 0.04,
                half_length: 0.05,
            },
            ConvexShape::Cuboid {
                half_extents: Vec3::new(0.03, 0.05, 0.02),
            },
            ConvexShape::Capsule {
                radius: 0.03,
                half_length: 0.06,
            },
        ]
        .map(|s| Collider::new(s).unwrap());
        let mut ws = ManifoldWorkspace::default();
        let (mut skipped, mut touching) = (0, 0);
        for a in &shapes {
            for b in &shapes {
                let mut memo = PairSeparation::default();
                for k in 0..400 {
                    let t = k as f64 / 400.0;
                    let pose_a = ShapePose {
                        rotation: *Rotation3::from_euler_angles(t, 0.3, -2.0 * t).matrix(),
                        translation: Vec3::zeros(),
                    };
                    // Far, then through contact, then far again.
                    let x = 0.3 * (2.0 * t - 1.0).abs() + 0.02;
                    let pose_b = ShapePose {
                        rotation: *Rotation3::from_euler_angles(0.5, -t, 3.0 * t).matrix(),
                        translation: Vec3::new(x, 0.1 * t, 0.0),
                    };
                    let margin = 0.002;
                    let (mut want, mut got) = (Vec::new(), Vec::new());
                    collider_contacts(a, &pose_a, b, &pose_b, margin, &mut ws, &mut want).unwrap();
                    let before = memo.distance;
                    memo.contacts(a, &pose_a, b, &pose_b, margin, &mut ws, &mut got)
                        .unwrap();
                    skipped += usize::from(memo.distance == before && before.is_finite());
                    touching += usize::from(!want.is_empty());
                    assert_eq!(want, got, "{:?} {:?} at {t}", a.shape(), b.shape());
                }
            }
        }
        assert!(skipped > 1000, "the memo skips far pairs ({skipped})");
        assert!(
            touching > 100,
            "the path passes through contact ({touching})"
        );
    }
}
