//! A group NCP's solution handed to its soft bodies (`scene::step::contact::group`): each body's
//! share of λ, its outcome (contacts, forces on obstacles, other bodies and nodes) and its
//! velocity update v⁺ = v_free + A⁻¹ h H_bᵀ λ_b (docs/step.md).

use faer::dyn_stack::MemStack;

use crate::contact::{BodyContact, ContactMode, NcpSolution, gather};
use crate::math::Vec3;

use super::stage::{ContactBody, ContactOutcome};

/// Hands `solution` (the NCP of `members`, its contacts' `modes` and which are `bilateral`)
/// to each member: `outcomes[b]` and the body's velocity (v_free on entry, v⁺ on return).
#[allow(clippy::too_many_arguments)]
pub(in crate::scene) fn apply_to_bodies(
    h: f64,
    members: &[usize],
    bodies: &mut [ContactBody],
    body_contacts: &[BodyContact],
    solution: &NcpSolution,
    modes: &[ContactMode],
    bilateral: &[bool],
    outcomes: &mut [ContactOutcome],
) {
    let lambda = solution.lambda.as_slice();
    for &b in members {
        let body = &mut bodies[b];
        let w = &mut *body.workspace;
        gather(&w.rows, lambda, &mut w.lambda);
        let out = &mut outcomes[b];
        out.detected = w.rows.len();
        out.converged = solution.converged;
        out.iterations = solution.iterations;
        out.residual = solution.residuals.max();
        out.active = w
            .rows
            .iter()
            .filter(|&&gi| modes[gi] != ContactMode::Breaking)
            .count();
        out.normal_force = w
            .rows
            .iter()
            .filter(|&&gi| !bilateral[gi])
            .map(|&gi| lambda[3 * gi + 2])
            .sum();
        let force = |c: usize, frame: &crate::math::Mat3| {
            frame * Vec3::new(w.lambda[3 * c], w.lambda[3 * c + 1], w.lambda[3 * c + 2])
        };
        for (c, nc) in w.contacts.iter().enumerate() {
            out.obstacle_forces[nc.obstacle] += force(c, &nc.frame);
        }
        let own = w.contacts.len() + w.self_contacts.len();
        for (s, &i) in w.shared.iter().enumerate() {
            let bc = &body_contacts[i];
            // λ acts on the node's body along the frame, on the triangle's body against it.
            let f = force(own + s, &bc.hit.frame);
            if bc.node_body == b {
                out.body_forces[bc.face_body] += f;
            } else {
                out.body_forces[bc.node_body] -= f;
            }
        }
        // The contact force on each node (N): H_bᵀ λ over the rows that are not attachments.
        let mut node_forces = std::collections::BTreeMap::<usize, Vec3>::new();
        for (r, l) in w.lambda.iter().enumerate() {
            if bilateral[w.rows[r / 3]] {
                continue;
            }
            for (node, c) in w.jacobian.row(r) {
                *node_forces.entry(*node).or_insert_with(Vec3::zeros) += *l * *c;
            }
        }
        out.node_forces = node_forces.into_iter().collect();
        w.full.fill(0.0);
        for (r, l) in w.lambda.iter().enumerate() {
            let l = h * l;
            for (node, c) in w.jacobian.row(r) {
                for p in 0..3 {
                    w.full[3 * node + p] += l * c[p];
                }
            }
        }
        body.dofs.reduce(&w.full, &mut w.red);
        let stack = MemStack::new(&mut w.solve_buffer);
        body.factor.solve_vec_in_place(&mut w.red, stack);
        for (v, d) in body.velocity.iter_mut().zip(&w.red) {
            *v += d;
        }
    }
}
