//! What the tests matching a project mesh to a published one share (`trunk_mesh.rs`,
//! `finger_mesh.rs`, `pneunet_mesh.rs`): the static displacement of a scene's effector under
//! its own loads, and the comparison of a project mesh's to a published mesh's, within 2 %.

use diffsoro::math::Vec3;
use diffsoro::scene::{Scene, StaticOptions, solve_static};

/// The static displacement (m) of the first effector of `scene`'s first body: the static
/// equilibrium under the scene's loads, solved from rest.
pub fn static_tip(scene: &Scene) -> Vec3 {
    let tip = &scene.body_actuation(0).effectors[0].point;
    let mut state = scene.initial_state();
    let start = tip.position(&state.bodies[0].positions);
    solve_static(scene, &mut state, StaticOptions::default()).unwrap();
    let x = &state.bodies[0].positions;
    assert!(x.iter().all(|p| p.iter().all(|c| c.is_finite())));
    tip.position(x) - start
}

/// Prints both displacements (m) and asserts the project's within 2 % of the published one.
pub fn assert_within_two_percent(project: Vec3, published: Vec3) {
    let gap = (project - published).norm();
    let percent = 100.0 * gap / published.norm();
    println!(
        "tip displacement: project {project:?} m, published {published:?} m, {percent:.2} % apart"
    );
    assert!(
        gap <= 0.02 * published.norm(),
        "project tip moved {project:?} m, published {published:?} m: {percent:.2} % apart"
    );
}
