//! The project Finger (`meshes/finger.msh`, rebuilt from measurements of the published mesh:
//! meshes/finger.geo) against the published SoftRobots `finger.vtk` (not in the repository:
//! docs/real-meshes.md). Ignored unless asked for.

use std::path::Path;

use crate::mesh_match;
use crate::real_meshes;
use mesh_match::{assert_within_two_percent, static_tip};
use real_meshes::real_meshes;

use diffsoro::math::Vec3;
use diffsoro::scene::Scene;

/// The static displacement (m) of the effector `tip` of `scenes/finger.toml` under its own
/// gravity, with the further overrides `sets`.
fn tip(sets: &[String]) -> Vec3 {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    static_tip(&Scene::load(&root.join("scenes/finger.toml"), sets).unwrap())
}

#[test]
#[ignore = "needs the published SoftRobots meshes (docs/real-meshes.md); run with --ignored"]
fn the_project_finger_sags_as_the_published_mesh_does() {
    // Same scene, same material (co-rotational, 600 kPa, ν = 0.3, 4067 kg/m³, lumped mass),
    // same clamp box and cable (0 N), same gravity across the finger; only the mesh differs.
    let published = real_meshes().join("finger/finger.vtk");
    let published = tip(&[
        format!("soft_body.finger.mesh=\"{}\"", published.display()),
        "soft_body.finger.scale=0.001".to_string(),
    ]);
    let project = tip(&[]);
    // The finger bends down under its weight by a third of its length (docs/real-meshes.md).
    assert!(published.y < -0.03, "published tip moved {published:?} m");
    assert_within_two_percent(project, published);
}
