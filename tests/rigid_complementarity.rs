//! The rigid adjoint (`diff::RigidTape`) with the complementarity-aware boundary of paper 003
//! §IV-D (`contact::BoundaryGradient::ComplementarityAware`): a cube resting on the floor in
//! zero gravity touches it with no force (λ = 0, σ_N = 0: four tied contacts). Its next height
//! z⁺ has a kink in the initial vertical velocity v_z: lifted (v_z > 0) it flies free, pushed
//! (v_z < 0) the floor stops it. For the loss ℓ = −z⁺ (higher is better, so the loss would
//! fall if the floor pushed: λ̄_N < 0), the one-sided gradient takes the contacts as breaking
//! and equals the difference quotient on the lifting side, the complementarity-aware one takes
//! them as closed and equals the quotient on the pushing side. Both quotients come from the
//! forward simulator; the tape itself is checked against the forward Jacobian away from the
//! kink by `tests/rigid_jobs.rs`.

use crate::scene_support;

use diffsoro::contact::BoundaryGradient;
use diffsoro::diff::record_rigid_trajectory;
use diffsoro::scene::Scene;
use scene_support::{run_steps, scene};

fn resting_cube() -> Scene {
    scene(
        r#"
[simulation]
dt = 0.005
gravity = [0.0, 0.0, 0.0]

[contact]
friction = 0.5
tolerance = 1e-12
max_iterations = 100000

[[obstacle]]
type = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]

[[rigid_body]]
name = "cube"
shape = "box"
half_extents = [0.05, 0.05, 0.05]
density = 500.0
position = [0.0, 0.0, 0.05]
"#,
    )
}

/// z⁺ after one step with the initial vertical velocity `vz`.
fn height_after(s: &Scene, vz: f64) -> f64 {
    let mut state = s.initial_state();
    state.rigid[0].v[2] = vz;
    run_steps(s, &mut state, 1);
    state.rigid[0].q[2]
}

/// ∂ℓ/∂v_z of ℓ = −z⁺ by the adjoint of one step with `boundary`, and how many steps
/// relabelled contacts.
fn gradient(s: &Scene, boundary: BoundaryGradient) -> (f64, usize) {
    let mut state = s.initial_state();
    let tape = record_rigid_trajectory(s, &mut state, 1, &[], boundary).unwrap();
    let mut q_bar = vec![0.0; 6];
    q_bar[2] = -1.0;
    let g = tape.adjoint(&q_bar, &[0.0; 6]);
    (g.v[2], g.relabelled_steps)
}

#[test]
fn complementarity_aware_takes_the_closing_side_of_a_touching_contact() {
    let s = resting_cube();
    let eps = 1e-4;
    let z0 = height_after(&s, 0.0);
    let lifting = -(height_after(&s, eps) - z0) / eps;
    let pushing = -(z0 - height_after(&s, -eps)) / eps;
    // The kink: free flight on one side (−h), stopped on the other.
    assert!((lifting + 0.005).abs() < 1e-9, "lifting side {lifting}");
    assert!(
        (pushing - lifting).abs() > 1e-3,
        "no kink: {pushing} vs {lifting}"
    );
    let (one_sided, relabelled) = gradient(&s, BoundaryGradient::OneSided);
    assert_eq!(relabelled, 0);
    assert!(
        (one_sided - lifting).abs() < 1e-9,
        "one-sided {one_sided} vs lifting side {lifting}"
    );
    let aware = BoundaryGradient::ComplementarityAware {
        tied_velocity: 1e-6,
    };
    let (closing, relabelled) = gradient(&s, aware);
    assert_eq!(relabelled, 1);
    assert!(
        (closing - pushing).abs() < 1e-6 * lifting.abs(),
        "complementarity-aware {closing} vs pushing side {pushing}"
    );
}
