//! Bad input that used to slip through, and bookkeeping that used to drift: each case states
//! what a user gets now.

use std::path::{Path, PathBuf};
use std::process::Command;

use diffsoro::scene::{Scene, Stepper};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_diffsoro"))
}

/// A fresh folder under the system's temporary folder (removed by the caller).
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("diffsoro-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The simulated time is steps × dt, not a drifting running sum (which gives 9.99999999999998
/// s after 1000 steps of 0.01 s).
#[test]
fn time_is_steps_times_dt() {
    let scene = Scene::load(Path::new("scenes/beam.toml"), &[]).unwrap();
    let dt = scene.simulation.dt;
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    let mut sum = 0.0;
    for _ in 0..1000 {
        stepper.step(&scene, &mut state).unwrap();
        sum += dt;
    }
    assert_eq!(state.time, 1000.0 * dt);
    assert_eq!(state.steps, 1000);
    assert_ne!(
        sum,
        1000.0 * dt,
        "the running sum drifts (what the test guards against)"
    );
}

/// `--steps 0` is allowed and writes the initial state: rest positions, zero time.
#[test]
fn zero_steps_writes_the_initial_state() {
    let out = bin()
        .args(["simulate", "scenes/beam.toml", "--steps", "0"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["time"], 0.0);
    assert_eq!(json["steps"], 0);
    let scene = Scene::load(Path::new("scenes/beam.toml"), &[]).unwrap();
    let rest = scene.bodies[0].rest_positions();
    let positions = json["soft_bodies"][0]["positions"].as_array().unwrap();
    assert_eq!(positions.len(), rest.len());
    for (p, r) in positions.iter().zip(rest) {
        for k in 0..3 {
            assert_eq!(p[k].as_f64().unwrap(), r[k]);
        }
    }
}

/// A `fixed_box` that catches every node is an error naming the key (nothing could move).
#[test]
fn a_box_fixing_every_node_is_an_error() {
    let out = bin()
        .args([
            "simulate",
            "scenes/beam.toml",
            "--set",
            "soft_body.beam.fixed_box=[[-1,-1,-1],[1,1,1]]",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("soft_body.beam.fixed_box") && err.contains("every node"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// `info` on a mesh with no tetrahedron is an error naming the file, not a volume of −0.
#[test]
fn info_on_a_mesh_without_tetrahedra_is_an_error() {
    let dir = temp_dir("notet");
    let path = dir.join("triangle.msh");
    std::fs::write(
        &path,
        "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n3\n1 0 0 0\n2 1 0 0\n3 0 1 0\n$EndNodes\n\
         $Elements\n1\n1 2 2 0 1 1 2 3\n$EndElements\n",
    )
    .unwrap();
    let out = bin().arg("info").arg(&path).output().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("triangle.msh") && err.contains("no tetrahedr"),
        "{err}"
    );
}

/// A mesh with an inverted tetrahedron is still simulated (re-oriented) but the user hears
/// about it once, with the count and the first index.
#[test]
fn reoriented_tetrahedra_are_reported() {
    let dir = temp_dir("inverted");
    // Two tetrahedra sharing the face (1, 2, 3); the second is listed inverted.
    std::fs::write(
        dir.join("two.msh"),
        "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n5\n1 0 0 0\n2 0.01 0 0\n3 0 0.01 0\n\
         4 0 0 0.01\n5 0.01 0.01 0.01\n$EndNodes\n$Elements\n2\n1 4 2 0 1 1 2 3 4\n\
         2 4 2 0 1 2 3 5 4\n$EndElements\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("scene.toml"),
        "[simulation]\ndt = 0.01\nsteps = 2\n\n[[soft_body]]\nname = \"pair\"\nmesh = \"two.msh\"\n\
         law = \"corotational\"\nyoung_modulus = 1e5\npoisson_ratio = 0.3\ndensity = 1000.0\n\
         fixed_box = [[-0.001, -0.001, -0.001], [0.001, 0.001, 0.001]]\n",
    )
    .unwrap();
    let scene = Scene::load(&dir.join("scene.toml"), &[]).unwrap();
    let warnings = scene.warnings();
    // Node order (2, 3, 5, 4): det[p3 − p2, p5 − p2, p4 − p2] = det[(−1,1,0), (0,1,1),
    // (−1,0,1)]·1e-6 < 0, so tetrahedron 1 is the inverted one.
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("soft_body.pair.mesh")
            && warnings[0].contains("1 tetrahedra")
            && warnings[0].contains("tetrahedron 1"),
        "{warnings:?}"
    );
    let out = bin()
        .arg("simulate")
        .arg(dir.join("scene.toml"))
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("re-oriented").count(), 1, "{err}");
}

/// Messages point at the right place: a bad `--set` value names the argument (not the scene
/// file), a bad key in the file names its line, a mesh path that is a folder says so, and an
/// `--out` that is a file says so.
#[test]
fn messages_name_the_argument_the_line_or_the_path() {
    let run = |args: &[&str]| {
        let out = bin().args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
        assert_eq!(err.lines().count(), 1, "{err}");
        err
    };
    let err = run(&[
        "simulate",
        "scenes/beam.toml",
        "--set",
        "soft_body.beam.young_modulus=abc",
    ]);
    assert!(
        err.contains("--set soft_body.beam.young_modulus=abc") && !err.contains("whole file"),
        "{err}"
    );
    let err = run(&[
        "simulate",
        "scenes/beam.toml",
        "--set",
        "soft_body.beam.lawx=1",
    ]);
    assert!(
        err.contains("--set soft_body.beam.lawx=1") && err.contains("lawx"),
        "{err}"
    );

    let dir = temp_dir("messages");
    let text = std::fs::read_to_string("scenes/beam.toml").unwrap();
    let line = 1 + text[..text.find("young_modulus").unwrap()]
        .matches('\n')
        .count();
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, text.replacen("young_modulus", "young_modulu", 1)).unwrap();
    let err = run(&["simulate", bad.to_str().unwrap()]);
    assert!(
        err.contains(&format!("line {line}")) && err.contains("young_modulu"),
        "{err}"
    );
    let err = run(&[
        "simulate",
        "scenes/beam.toml",
        "--set",
        "soft_body.beam.mesh=.",
    ]);
    assert!(
        err.contains("soft_body.beam.mesh") && err.contains("folder"),
        "{err}"
    );
    let file = dir.join("a_file");
    std::fs::write(&file, "").unwrap();
    let err = run(&[
        "simulate",
        "scenes/beam.toml",
        "--steps",
        "1",
        "--out",
        file.to_str().unwrap(),
    ]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        err.contains("--out") && err.contains("not a folder"),
        "{err}"
    );
}
