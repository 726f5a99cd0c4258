//! The rigid step's Jacobian ∂(q⁺, v⁺)/∂(q, v, τ) with a reused workspace: a counting global
//! allocator watches `RigidStepJacobian::of_step_into` on the quadruped standing on its four
//! feet (four sticking contacts). The first call sizes the workspace; the later ones allocate
//! nothing (no allocation in the step): the NCP derivative is refilled in place
//! (`contact::NcpDerivative::refill`) and solves with reused buffers.

mod counting_allocator;
mod scene_support;

use counting_allocator::allocations_during;
use diffsoro::contact::BoundaryGradient;
use diffsoro::diff::{RigidJacobianWorkspace, RigidStepJacobian};
use diffsoro::scene::{RigidState, Scene, Stepper};
use scene_support::{root, run_steps};

/// `RigidStepJacobian::of_step_into` of the step `start → end` (one-sided, no parameters).
fn into(
    scene: &Scene,
    stepper: &Stepper,
    start: &[RigidState],
    end: &[RigidState],
    jacobian: &mut RigidStepJacobian,
    ws: &mut RigidJacobianWorkspace,
) {
    jacobian
        .of_step_into(
            scene,
            stepper,
            start,
            end,
            BoundaryGradient::OneSided,
            &[],
            ws,
        )
        .unwrap();
}

#[test]
fn the_quadruped_step_jacobian_allocates_nothing_once_warm() {
    let scene = Scene::load(&root().join("scenes/quadruped_standing.toml"), &[]).unwrap();
    let mut state = scene.initial_state();
    run_steps(&scene, &mut state, 300);
    let mut stepper = Stepper::new(&scene).unwrap();
    let mut jacobian = RigidStepJacobian::default();
    let mut ws = RigidJacobianWorkspace::default();
    let mut counts = Vec::new();
    for _ in 0..4 {
        let start = state.rigid.clone();
        let report = stepper.step(&scene, &mut state).unwrap();
        assert_eq!(report.active_contacts, 4, "the four feet touch");
        counts.push(allocations_during(|| {
            into(
                &scene,
                &stepper,
                &start,
                &state.rigid,
                &mut jacobian,
                &mut ws,
            )
        }));
    }
    // The first call sizes the workspace; the later ones reuse it and allocate nothing.
    assert!(counts[0] > 0, "{counts:?}");
    assert!(
        counts[1..].iter().all(|&c| c == 0),
        "allocations per call: {counts:?}"
    );
    // The same Jacobian as the allocating call.
    let start = state.rigid.clone();
    stepper.step(&scene, &mut state).unwrap();
    into(
        &scene,
        &stepper,
        &start,
        &state.rigid,
        &mut jacobian,
        &mut ws,
    );
    let fresh = RigidStepJacobian::of_step(
        &scene,
        &stepper,
        &start,
        &state.rigid,
        BoundaryGradient::OneSided,
        &[],
    )
    .unwrap();
    assert_eq!(jacobian, fresh);
}
