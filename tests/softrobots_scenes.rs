//! The published SoftRobots robots as SOFA sets them up (`scenes/softrobots/`), on the
//! published meshes (not in the repository: docs/real-meshes.md). Ignored unless asked for.

use std::path::Path;

mod real_meshes;
use real_meshes::real_meshes;

use diffsoro::scene::{Scene, Stepper};

/// Runs `scenes/softrobots/NAME.toml` on its published mesh (`mesh` under the folder) for
/// 100 steps; returns the tip's displacement (m).
fn run(name: &str, body: &str, mesh: &str) -> diffsoro::math::Vec3 {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = real_meshes().join(mesh);
    let scene = Scene::load(
        &root.join(format!("scenes/softrobots/{name}.toml")),
        &[format!("soft_body.{body}.mesh={}", path.display())],
    )
    .unwrap();
    assert!(scene.simulation.steps == 100);
    let tip = &scene.body_actuation(0).effectors[0].point;
    let start = tip.position(&scene.initial_state().bodies[0].positions);
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    for step in 0..scene.simulation.steps {
        let r = stepper.step(&scene, &mut state).unwrap();
        assert!(r.contact_converged, "{name}: step {step}");
    }
    let x = &state.bodies[0].positions;
    assert!(x.iter().all(|p| p.iter().all(|c| c.is_finite())));
    tip.position(x) - start
}

#[test]
#[ignore = "needs the published SoftRobots meshes (docs/real-meshes.md); run with --ignored"]
fn the_published_trunk_and_finger_run_and_sag_under_gravity() {
    // Gravity is −y in both: after 1 s the tips have come down.
    let trunk = run("trunk", "trunk", "trunk/trunk.vtk");
    assert!(trunk.y < -0.05, "trunk tip moved {trunk:?} m");
    let finger = run("finger", "finger", "finger/finger.vtk");
    assert!(finger.y < -0.01, "finger tip moved {finger:?} m");
}
