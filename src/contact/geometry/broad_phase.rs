//! Broad phase of node contacts: a bounding-volume hierarchy (parry3d's `Bvh`) over one body's
//! candidate nodes, each leaf the box of half-width `margin` around the node. It is built once
//! and then **refitted** every step (`insert_or_update_partially` on each leaf, then `refit`),
//! never rebuilt, and queried with each bounded obstacle's box; planes (unbounded) test every
//! candidate. The narrow phase is [`Obstacle::closest`]; the result is exactly that of
//! [`detect_nodes`](crate::contact::detect_nodes) (a node within `margin` of an obstacle's surface has
//! its box overlapping the obstacle's box), in the same (node, obstacle) order.

use parry3d_f64::bounding_volume::Aabb;
use parry3d_f64::math::Vector as GlamVector;
use parry3d_f64::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};

use super::detection::{NodeContact, Obstacle, validate_margin};
use crate::error::Result;
use crate::math::Vec3;

fn to_glam(v: Vec3) -> GlamVector {
    v.into()
}

/// The node BVH of one body and its reusable buffers.
#[derive(Clone, Default)]
pub struct NodeBroadPhase {
    bvh: Bvh,
    workspace: BvhWorkspace,
    leaves: Vec<Aabb>,
    built_for: usize,
}

impl std::fmt::Debug for NodeBroadPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeBroadPhase")
            .field("leaves", &self.built_for)
            .finish()
    }
}

impl NodeBroadPhase {
    /// An empty broad phase; the first [`NodeBroadPhase::detect`] builds the tree.
    pub fn new() -> NodeBroadPhase {
        NodeBroadPhase::default()
    }

    /// Moves leaf i to the box of half-width `margin` around `positions[candidates[i]]`: the
    /// first call (or one with another number of candidates) builds the tree, later calls
    /// update the leaves in place and refit the tree.
    pub fn refit(&mut self, positions: &[Vec3], candidates: &[usize], margin: f64) {
        self.leaves.clear();
        self.leaves.extend(candidates.iter().map(|&n| {
            let p = positions[n];
            Aabb::new(
                to_glam(p - Vec3::repeat(margin)),
                to_glam(p + Vec3::repeat(margin)),
            )
        }));
        if self.built_for != candidates.len() || self.bvh.is_empty() {
            self.bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &self.leaves);
            self.built_for = candidates.len();
        } else {
            for (i, aabb) in self.leaves.iter().enumerate() {
                self.bvh.insert_or_update_partially(*aabb, i as u32, 0.0);
            }
            self.bvh.refit(&mut self.workspace);
        }
    }

    /// Every candidate node within `margin` (m, ≥ 0) of an obstacle becomes a contact
    /// (gap ≤ margin), appended to `out` in (node, obstacle) order, as
    /// [`detect_nodes`](crate::contact::detect_nodes) does. Refits the tree first.
    pub fn detect(
        &mut self,
        obstacles: &[Obstacle],
        positions: &[Vec3],
        candidates: &[usize],
        margin: f64,
        out: &mut Vec<NodeContact>,
    ) -> Result<()> {
        validate_margin(margin)?;
        let start = out.len();
        if candidates.is_empty() || obstacles.is_empty() {
            return Ok(());
        }
        self.refit(positions, candidates, margin);
        for (o, obstacle) in obstacles.iter().enumerate() {
            let mut test = |node: usize| {
                out.extend(obstacle.node_contact(o, node, &positions[node], margin));
            };
            match obstacle.aabb() {
                None => candidates.iter().for_each(|&n| test(n)),
                Some((lo, hi)) => {
                    let query = Aabb::new(to_glam(lo), to_glam(hi));
                    for leaf in self.bvh.intersect_aabb(&query) {
                        test(candidates[leaf as usize]);
                    }
                }
            }
        }
        out[start..].sort_unstable_by_key(|c| (c.node, c.obstacle));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::detect_nodes;
    use crate::math::Mat3;

    #[test]
    fn broad_phase_finds_exactly_what_brute_force_finds_across_refits() {
        let obstacles = vec![
            Obstacle::plane(Vec3::new(0.0, 0.0, -0.4), Vec3::z()).unwrap(),
            Obstacle::sphere(Vec3::new(0.3, 0.0, 0.0), 0.25).unwrap(),
            Obstacle::cuboid(
                Vec3::new(-0.3, 0.2, 0.1),
                Vec3::new(0.1, 0.2, 0.05),
                *nalgebra::Rotation3::new(Vec3::new(0.0, 0.4, 0.2)).matrix(),
            )
            .unwrap(),
            Obstacle::capsule(Vec3::new(-0.5, -0.5, 0.0), Vec3::new(0.5, -0.3, 0.2), 0.1).unwrap(),
        ];
        let mut seed = 7u64;
        let mut rand = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let mut x: Vec<Vec3> = (0..600)
            .map(|_| 0.6 * Vec3::new(rand(), rand(), rand()))
            .collect();
        let candidates: Vec<usize> = (0..600).filter(|i| i % 5 != 0).collect();
        let mut bp = NodeBroadPhase::new();
        let margin = 0.03;
        for step in 0..4 {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            detect_nodes(&obstacles, &x, &candidates, margin, &mut a).unwrap();
            bp.detect(&obstacles, &x, &candidates, margin, &mut b)
                .unwrap();
            assert!(!a.is_empty());
            assert_eq!(a, b, "step {step}");
            // Move the nodes (a rigid shift and a shear): the tree is refitted.
            let shear = Mat3::new(1.0, 0.1, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0);
            for p in &mut x {
                *p = shear * *p + Vec3::new(0.02, -0.01, 0.03);
            }
        }
        assert!(
            bp.detect(&obstacles, &x, &candidates, -1.0, &mut Vec::new())
                .is_err()
        );
    }
}
