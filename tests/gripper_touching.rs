//! `scenes/gripper_touching.toml`: the two servo fingers of the gripper as ONE body
//! (`meshes/gripper_pair.msh`, left finger = nodes 0..N, right finger = nodes N..2N), closed
//! by their servos past the 20 mm gap between their contact walls. With self-contact they
//! touch: the final state has active contacts, and in no frame of the run is a node of one
//! finger inside the other finger, checked by a second method: the signed distance to the other finger's deformed
//! closed boundary surface as a mesh obstacle (parry's point projection with its inside test),
//! not the node-vs-own-triangle detector that produced the forces. Without self-contact the
//! same run drives nodes millimetres into the other finger (the check can fail).

use diffsoro::contact::Obstacle;
use diffsoro::math::Vec3;
use diffsoro::mesh::{TriangleSurface, read_mesh};

const SCENE: &str = "scenes/gripper_touching.toml";

fn run_cli(args: &[&str]) -> serde_json::Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_diffsoro"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Final positions of the scene's one body.
fn positions(state: &serde_json::Value) -> Vec<Vec3> {
    state["soft_bodies"][0]["positions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            Vec3::new(
                r[0].as_f64().unwrap(),
                r[1].as_f64().unwrap(),
                r[2].as_f64().unwrap(),
            )
        })
        .collect()
}

/// The deepest penetration (m, ≤ 0 when some node is inside; the smallest signed gap) of
/// either finger's nodes into the other finger's deformed boundary.
fn deepest_penetration(x: &[Vec3]) -> f64 {
    let mesh = read_mesh(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/meshes/gripper_pair.msh"
    ))
    .unwrap();
    let n = mesh.node_count() / 2;
    assert_eq!(x.len(), 2 * n);
    let boundary = mesh.boundary_triangles();
    let mut deepest = f64::INFINITY;
    for (mine, other) in [(0..n, n..2 * n), (n..2 * n, 0..n)] {
        let tris: Vec<[usize; 3]> = boundary
            .iter()
            .filter(|t| t.iter().all(|i| other.contains(i)))
            .map(|t| t.map(|i| i - other.start))
            .collect();
        let surface = TriangleSurface::new("other", x[other.clone()].to_vec(), tris).unwrap();
        let obstacle = Obstacle::mesh("other", surface).unwrap();
        for p in &x[mine] {
            deepest = deepest.min(obstacle.closest(p).gap);
        }
    }
    deepest
}

#[test]
fn fingers_touch_through_self_contact_and_do_not_interpenetrate() {
    let dir =
        std::env::temp_dir().join(format!("diffsoro-gripper-touching-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.join("run");
    run_cli(&[
        "simulate",
        SCENE,
        "--strict",
        "--out",
        out.to_str().unwrap(),
    ]);
    let with: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("final.json")).unwrap()).unwrap();
    let contacts = with["contacts"].as_u64().unwrap();
    assert!(contacts > 0, "the fingers never touch");
    // Every frame of the run (60 steps), not only the final state.
    let mut deepest = f64::INFINITY;
    for step in 0..=60 {
        let frame = read_mesh(out.join(format!("gripper_{step:06}.vtu"))).unwrap();
        deepest = deepest.min(deepest_penetration(frame.positions()));
    }
    assert_eq!(deepest_penetration(&positions(&with)).min(deepest), deepest);
    std::fs::remove_dir_all(&dir).unwrap();
    eprintln!("self-contact: {contacts} contacts, deepest penetration over the run {deepest:e} m");
    // A converged NCP keeps penetrations of order h·tol/(1 − K_p) = 5e-12 m, plus the
    // linearisation error of the moving triangles over a step (scene::step::contact::stage doc);
    // 1e-8 m is 1e-6 of the ~10 mm each wall travels. Without contact: millimetres.
    assert!(
        deepest > -1e-8,
        "a node is {deepest} m inside the other finger"
    );

    let without = run_cli(&["simulate", SCENE, "--set", "contact.self_contact=false"]);
    assert_eq!(without["contacts"].as_u64().unwrap(), 0);
    let deepest = deepest_penetration(&positions(&without));
    eprintln!("no self-contact: deepest penetration {deepest:e} m");
    // The contact holds the fingers back: both tips stay further apart than without it.
    let tip_x = |state: &serde_json::Value, k: usize| {
        state["effectors"][k]["position"][0].as_f64().unwrap()
    };
    assert!(
        tip_x(&with, 0) < tip_x(&without, 0) && tip_x(&with, 1) > tip_x(&without, 1),
        "tips with contact {} / {}, without {} / {}",
        tip_x(&with, 0),
        tip_x(&with, 1),
        tip_x(&without, 0),
        tip_x(&without, 1)
    );
    assert!(
        deepest < -1e-3,
        "without self-contact the fingers should overlap: {deepest}"
    );
}
