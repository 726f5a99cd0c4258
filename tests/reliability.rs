//! Bad input that must not slip through, and bookkeeping that must not drift: each case states
//! what a user gets.

use std::path::Path;
use std::process::Command;

use diffsoro::scene::{Scene, Stepper};

use crate::cli_support::scratch;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_diffsoro"))
}

/// The simulated time is steps × dt, not a drifting running sum (which gives 9.99999999999998
/// s after 1000 steps of 0.01 s). On the beam's coarsest mesh: the clock is the same for any
/// mesh, and 1000 steps of it cost a twentieth of the scene's own.
#[test]
fn time_is_steps_times_dt() {
    let scene = Scene::load(
        Path::new("scenes/beam.toml"),
        &["soft_body.beam.mesh=../meshes/beam_1.msh".to_string()],
    )
    .unwrap();
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
    let dir = scratch("notet");
    let path = dir.join("triangle.msh");
    std::fs::write(
        &path,
        "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n3\n1 0 0 0\n2 1 0 0\n3 0 1 0\n$EndNodes\n\
         $Elements\n1\n1 2 2 0 1 1 2 3\n$EndElements\n",
    )
    .unwrap();
    let out = bin().arg("info").arg(&path).output().unwrap();
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
    let dir = scratch("inverted");
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

    let dir = scratch("messages");
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
    assert!(
        err.contains("--out") && err.contains("not a folder"),
        "{err}"
    );
}

/// Six times the signed volume of the tetrahedron (a, b, c, d): det[b − a, c − a, d − a].
fn six_volume(a: [f64; 3], b: [f64; 3], c: [f64; 3], d: [f64; 3]) -> f64 {
    let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
    let v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
    let w = [d[0] - a[0], d[1] - a[1], d[2] - a[2]];
    u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0])
        + u[2] * (v[0] * w[1] - v[1] * w[0])
}

/// The text of a gmsh 2.2 ASCII file of these nodes and tetrahedra (0-based indices).
fn msh22(nodes: &[[f64; 3]], tets: &[[usize; 4]]) -> String {
    let mut s = format!(
        "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n{}\n",
        nodes.len()
    );
    for (i, p) in nodes.iter().enumerate() {
        s += &format!("{} {:e} {:e} {:e}\n", i + 1, p[0], p[1], p[2]);
    }
    s += &format!("$EndNodes\n$Elements\n{}\n", tets.len());
    for (e, t) in tets.iter().enumerate() {
        s += &format!(
            "{} 4 2 0 1 {} {} {} {}\n",
            e + 1,
            t[0] + 1,
            t[1] + 1,
            t[2] + 1,
            t[3] + 1
        );
    }
    s + "$EndElements\n"
}

/// A folded mesh (a node pushed through a face: elements overlap although every tetrahedron
/// has a positive volume once re-oriented) is refused by `info`, naming two elements; the
/// error's pair is checked geometrically: they share a face and lie on the same side of it.
#[test]
fn a_folded_mesh_is_refused_naming_the_overlapping_elements() {
    // A 2 cm cube of 2 × 2 × 2 cells (8e-6 m³). Its centre node (1, 1, 1) has index
    // 1 + 3·(1 + 3·1) = 13, and the tetrahedra around it fill the whole cube (a convex star:
    // anywhere inside it the mesh stays valid). It is pushed along +x from x = 1 cm to 3 cm,
    // through the cube's face x = 2 cm, which the tetrahedra touching that face then cross.
    let mesh = diffsoro::mesh::box_mesh([2, 2, 2], [0.0; 3], [0.02; 3]).unwrap();
    let tets = mesh.tetrahedra().to_vec();
    let mut nodes: Vec<[f64; 3]> = mesh.positions().iter().map(|p| [p.x, p.y, p.z]).collect();
    assert_eq!(nodes[13], [0.01, 0.01, 0.01]);
    let dir = scratch("folded");
    // Unfolded, it loads and its volume is the cube's.
    let valid = dir.join("cube.msh");
    std::fs::write(&valid, msh22(&nodes, &tets)).unwrap();
    let out = bin().arg("info").arg(&valid).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!((json["volume"].as_f64().unwrap() - 8e-6).abs() < 1e-18);

    nodes[13][0] = 0.03;
    let vol = |t: &[usize; 4]| six_volume(nodes[t[0]], nodes[t[1]], nodes[t[2]], nodes[t[3]]);
    // What used to slip through: no tetrahedron is degenerate, and the elements' summed
    // volume (|V|, as after re-orientation) exceeds the solid's 8e-6 m³.
    assert!(tets.iter().all(|t| vol(t).abs() > 1e-12));
    let summed: f64 = tets.iter().map(|t| vol(t).abs() / 6.0).sum();
    assert!(summed > 8e-6 * 1.01, "summed volume {summed}");
    let folded = dir.join("folded.msh");
    std::fs::write(&folded, msh22(&nodes, &tets)).unwrap();
    let out = bin().arg("info").arg(&folded).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let line = err
        .lines()
        .find(|l| l.contains("error"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains("folded.msh") && line.contains("folded"),
        "{err}"
    );
    let pair = line
        .split("tetrahedra ")
        .nth(1)
        .and_then(|s| s.split(':').next())
        .unwrap_or_else(|| panic!("no element pair in {line}"));
    let (a, b) = pair.split_once(" and ").unwrap();
    let (a, b): (usize, usize) = (a.parse().unwrap(), b.parse().unwrap());
    let (ta, tb) = (tets[a], tets[b]);
    let shared: Vec<usize> = ta.iter().copied().filter(|v| tb.contains(v)).collect();
    assert_eq!(shared.len(), 3, "tetrahedra {a} {ta:?} and {b} {tb:?}");
    let apex = |t: [usize; 4]| t.into_iter().find(|v| !shared.contains(v)).unwrap();
    let side = |v: usize| {
        six_volume(
            nodes[shared[0]],
            nodes[shared[1]],
            nodes[shared[2]],
            nodes[v],
        )
    };
    assert!(
        side(apex(ta)) * side(apex(tb)) > 0.0,
        "tetrahedra {a} and {b} lie on opposite sides of their shared face"
    );
}

/// Every mesh of the project loads (the folded-mesh check refuses none), and for each the
/// volume enclosed by its boundary surface (divergence theorem over the outward boundary
/// triangles) equals the summed element volume, as it must for a mesh without overlaps.
#[test]
fn every_project_mesh_loads_and_its_boundary_encloses_its_volume() {
    let mut count = 0;
    for entry in std::fs::read_dir("meshes").unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("msh") {
            continue;
        }
        let mesh =
            diffsoro::mesh::read_mesh(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let p = mesh.positions();
        let enclosed: f64 = mesh
            .boundary_triangles()
            .iter()
            .map(|t| p[t[0]].dot(&p[t[1]].cross(&p[t[2]])) / 6.0)
            .sum();
        let summed = mesh.volume();
        assert!(summed > 0.0, "{}", path.display());
        assert!(
            (enclosed - summed).abs() <= 1e-9 * summed,
            "{}: enclosed {enclosed}, summed {summed}",
            path.display()
        );
        count += 1;
    }
    assert!(count >= 10, "found {count} meshes");
}
