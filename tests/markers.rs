//! Markers (`[[soft_body.marker]]`, docs/scene-file.md) and marker track files
//! (docs/outputs.md, `simulate --markers-out`): a node marker is its node, a marker inside a
//! tetrahedron the barycentric combination of its nodes (weights solved here from the rest
//! positions), a marker off the mesh follows an affine motion of the nodes exactly, the
//! scene frame is the placed body's, track files round-trip through a file, and the CLI
//! writes every saved state's rows completely or not at all.
//!
//! Expected values come from the geometry and the contract, never from a run's output: the
//! node's own position, weights solved with nalgebra in the test, F p + c of the affine map
//! imposed, R (s X) + t of the placement, times k·dt of the documented `State::time`.

use std::path::{Path, PathBuf};

use diffsoro::fem::{MassKind, SoftBody, SoftBodyOptions};
use diffsoro::material::{Law, Material};
use diffsoro::math::{Mat3, Vec3};
use diffsoro::mesh::{box_mesh, read_mesh};
use diffsoro::scene::{
    BodyState, MarkerSection, MarkerTracks, MarkerUnit, Scene, SceneFile, SimulationSection, State,
    Stepper,
};

use crate::cli_support::{root, run, run_json, scratch};

/// The 100 × 10 × 10 mm beam of `scenes/beam.toml` (meshes/beam_2.msh, x ∈ [0, 0.1],
/// y, z ∈ [−5, 5] mm, clamped at x = 0, neo-Hookean, sagging under gravity), with `extra`
/// appended (marker sections), its mesh path absolute.
fn beam_text(extra: &str) -> String {
    let text = std::fs::read_to_string(root().join("scenes/beam.toml")).unwrap();
    let mesh = root().join("meshes/beam_2.msh");
    let text = text.replace(
        "\"../meshes/beam_2.msh\"",
        &format!("{:?}", mesh.display().to_string()),
    );
    format!("{text}\n{extra}")
}

/// [`beam_text`] without the effector `tip` (a point of the unplaced beam's end).
fn beam_text_without_effector(extra: &str) -> String {
    let effector = "[[soft_body.effector]]\nname = \"tip\"\npoint = [0.1, 0.0, 0.0]\n";
    let text = beam_text(extra);
    assert!(text.contains(effector));
    text.replace(effector, "")
}

fn build(text: &str) -> diffsoro::Result<Scene> {
    let file = SceneFile::parse("markers.toml", text, &[])?;
    Scene::build(&file, root())
}

/// The beam scene with `extra`, written as `scene.toml` in `dir`.
fn beam_file(dir: &Path, extra: &str) -> PathBuf {
    let path = dir.join("scene.toml");
    std::fs::write(&path, beam_text(extra)).unwrap();
    path
}

/// A free node of the beam (a corner of its free end, x = 0.1 m).
const NODE: usize = 6;

/// A node marker `end` (node 6) and a marker `inner` at a point inside the beam.
fn two_markers() -> String {
    format!(
        "[[soft_body.marker]]\nname = \"end\"\nnode = {NODE}\n\n\
         [[soft_body.marker]]\nname = \"inner\"\nposition = [0.0637, 0.0013, -0.0021]\n"
    )
}

/// The tetrahedron of `tets` containing `p` and its barycentric weights, solved here: the
/// 3 × 3 system [x₁ − x₀, x₂ − x₀, x₃ − x₀] l = p − x₀ by LU, w = (1 − Σl, l).
fn containing_tetrahedron(x: &[Vec3], tets: &[[usize; 4]], p: Vec3) -> ([usize; 4], [f64; 4]) {
    for t in tets {
        let m = Mat3::from_columns(&[x[t[1]] - x[t[0]], x[t[2]] - x[t[0]], x[t[3]] - x[t[0]]]);
        let Some(l) = m.lu().solve(&(p - x[t[0]])) else {
            continue;
        };
        let w = [1.0 - l.x - l.y - l.z, l.x, l.y, l.z];
        if w.iter().all(|&wi| wi >= 1e-6) {
            return (*t, w);
        }
    }
    panic!("no tetrahedron holds {p} well inside");
}

#[test]
fn a_node_marker_is_its_node_and_an_inner_one_its_barycentric_combination_at_every_step() {
    let scene = build(&beam_text(&two_markers())).unwrap();
    assert_eq!(scene.markers.names(), ["end", "inner"]);
    let body = &scene.bodies[0];
    let p = Vec3::new(0.0637, 0.0013, -0.0021);
    let (tet, w) = containing_tetrahedron(body.rest_positions(), body.mesh().tetrahedra(), p);
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    for step in 0..=5 {
        if step > 0 {
            stepper.step(&scene, &mut state).unwrap();
        }
        let x = &state.bodies[0].positions;
        let markers = scene.markers.positions(&state);
        assert_eq!(
            markers[0], x[NODE],
            "step {step}: the node marker is the node"
        );
        let expected: Vec3 = (0..4).map(|i| w[i] * x[tet[i]]).sum();
        assert!(
            (markers[1] - expected).norm() < 1e-15,
            "step {step}: {} vs {expected}",
            markers[1]
        );
    }
    // The beam has sagged: the markers moved.
    assert!(state.bodies[0].positions[NODE] != body.rest_positions()[NODE]);
    assert!((scene.markers.positions(&state)[1] - p).norm() > 1e-6);
}

/// A box mesh 100 × 60 × 60 mm as one soft body (no file), and markers placed on it.
fn box_scene(markers: &[MarkerSection]) -> diffsoro::Result<Scene> {
    let mesh = box_mesh([4, 3, 3], [0.0; 3], [0.1, 0.06, 0.06])?;
    let n = mesh.node_count();
    let options = SoftBodyOptions {
        material: Material::new(Law::Corotational, 1e5, 0.3)?,
        density: 1000.0,
        mass: MassKind::Lumped,
        rayleigh_mass: 0.0,
        rayleigh_stiffness: 0.0,
        fixed: vec![false; n],
    };
    let body = SoftBody::new("box", mesh, options)?;
    let simulation = SimulationSection {
        dt: 0.01,
        steps: 1,
        gravity: [0.0; 3],
        newton_iterations: 1,
    };
    let mut scene = Scene::new(simulation, vec![body]);
    let mesh = scene.bodies[0].mesh().clone();
    scene.markers.add_body("box", 0, markers, &mesh)?;
    Ok(scene)
}

fn at(name: &str, p: [f64; 3]) -> MarkerSection {
    MarkerSection {
        name: name.into(),
        node: None,
        position: Some(p),
    }
}

#[test]
fn a_marker_off_the_mesh_follows_any_affine_motion_exactly() {
    // 2 cm beyond the face z = 0.06, 3 cm beyond the face x = 0.1, and off a corner (2 cm
    // out along x and y, 1.5 cm along z): no distance limit.
    let points = [
        [0.037, 0.021, 0.08],
        [0.13, 0.03, 0.02],
        [0.12, -0.02, 0.075],
    ];
    let sections: Vec<MarkerSection> = points
        .iter()
        .enumerate()
        .map(|(k, p)| at(&format!("post{k}"), *p))
        .collect();
    let scene = box_scene(&sections).unwrap();
    let f = Mat3::new(1.1, 0.2, -0.05, 0.1, 0.95, 0.15, -0.08, 0.12, 1.05);
    let c = Vec3::new(0.3, -0.2, 0.1);
    let rest = scene.bodies[0].rest_positions();
    let state = State {
        time: 0.0,
        steps: 0,
        bodies: vec![BodyState {
            positions: rest.iter().map(|x| f * x + c).collect(),
            velocities: vec![Vec3::zeros(); rest.len()],
        }],
        actuator_forces: vec![Vec::new()],
        contacts: 0,
        rigid: Vec::new(),
        unconverged_steps: 0,
    };
    for (m, p) in scene.markers.positions(&state).iter().zip(points) {
        let expected = f * Vec3::from(p) + c;
        assert!((m - expected).norm() < 1e-12, "{m} vs {expected}");
    }
    // At rest, each is where it was put.
    for (m, p) in scene
        .markers
        .positions(&scene.initial_state())
        .iter()
        .zip(points)
    {
        assert!((m - Vec3::from(p)).norm() < 1e-14, "{m} vs {p:?}");
    }
}

#[test]
fn positions_are_in_the_scene_frame_of_the_placed_body_and_off_mesh_markers_never_warn() {
    // The beam turned by π/2 about z and moved by t: a mesh point X is at R X + t, with
    // R (x, y, z) = (−y, x, z).
    let t = Vec3::new(1.0, 2.0, 3.0);
    let place = |x: Vec3| Vec3::new(-x.y, x.x, x.z) + t;
    let inner = place(Vec3::new(0.05, 0.001, 0.002));
    // 1.5 cm above the beam's top face z = 5 mm (mesh frame), beyond the default
    // embed_tolerance (1e-3 of the 0.1 m diagonal): an error for an effector, not a marker.
    let post = place(Vec3::new(0.08, 0.0, 0.02));
    let extra = format!(
        "[[soft_body.marker]]\nname = \"node\"\nnode = {NODE}\n\n\
         [[soft_body.marker]]\nname = \"inner\"\nposition = [{}, {}, {}]\n\n\
         [[soft_body.marker]]\nname = \"post\"\nposition = [{}, {}, {}]\n",
        inner.x, inner.y, inner.z, post.x, post.y, post.z
    );
    let text = beam_text_without_effector(&extra).replace(
        "fixed_group = \"clamp\"",
        "fixed_group = \"clamp\"\nrotation = [0.0, 0.0, 1.5707963267948966]\ntranslation = [1.0, 2.0, 3.0]",
    );
    let scene = build(&text).unwrap();
    let raw = read_mesh(root().join("meshes/beam_2.msh")).unwrap();
    let rest = scene.markers.positions(&scene.initial_state());
    assert!((rest[0] - place(raw.positions()[NODE])).norm() < 1e-14);
    assert!((rest[1] - inner).norm() < 1e-14, "{} vs {inner}", rest[1]);
    assert!((rest[2] - post).norm() < 1e-14, "{} vs {post}", rest[2]);
    assert!(
        scene.warnings().iter().all(|w| !w.contains("marker")),
        "{:?}",
        scene.warnings()
    );
    // The same point as an effector is refused (its tolerance is unchanged).
    let effector = format!(
        "[[soft_body.effector]]\nname = \"far\"\npoint = [{}, {}, {}]\n",
        post.x, post.y, post.z
    );
    let text = beam_text_without_effector(&effector).replace(
        "fixed_group = \"clamp\"",
        "fixed_group = \"clamp\"\nrotation = [0.0, 0.0, 1.5707963267948966]\ntranslation = [1.0, 2.0, 3.0]",
    );
    let e = build(&text).unwrap_err().to_string();
    assert!(e.contains("soft_body.beam.effector.far"), "{e}");
}

#[test]
fn bad_marker_sections_are_one_line_errors_naming_the_key() {
    let cases: &[(&str, &str)] = &[
        (
            "[[soft_body.marker]]\nname = \"m\"\nnode = 1078\n",
            "soft_body.beam.marker.m.node: node 1078 is out of range: the mesh has 1078 nodes (0-based, file order)",
        ),
        (
            "[[soft_body.marker]]\nname = \"m\"\n",
            "soft_body.beam.marker.m: give exactly one of `node` (a mesh node, 0-based) and `position` (m)",
        ),
        (
            "[[soft_body.marker]]\nname = \"m\"\nnode = 3\nposition = [0.05, 0.0, 0.0]\n",
            "soft_body.beam.marker.m: give exactly one of `node` (a mesh node, 0-based) and `position` (m)",
        ),
        (
            "[[soft_body.marker]]\nname = \"m\"\nnode = 3\n\n[[soft_body.marker]]\nname = \"m\"\nnode = 4\n",
            "soft_body.beam.marker.m: another marker has this name: soft_body.beam.marker.m (the body's markers 0 and 1, 0-based)",
        ),
        (
            "[[soft_body.marker]]\nname = \"a,b\"\nnode = 3\n",
            "soft_body.beam.marker.a,b.name: ",
        ),
    ];
    for (extra, expected) in cases {
        let e = build(&beam_text(extra)).unwrap_err().to_string();
        assert!(e.starts_with(expected), "{e}\nexpected {expected}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    let unknown = build(&beam_text(
        "[[soft_body.marker]]\nname = \"m\"\nnode = 3\nradius = 0.003\n",
    ))
    .unwrap_err()
    .to_string();
    assert!(unknown.contains("radius"), "{unknown}");
    // Names are unique over the whole scene: two bodies, one name (the second body is the
    // beam's section under another name, without its effector).
    let beam = beam_text("");
    let section =
        &beam[beam.find("[[soft_body]]").unwrap()..beam.find("[[soft_body.effector]]").unwrap()];
    let other = section.replace("name = \"beam\"", "name = \"other\"");
    let text = format!(
        "{beam}\n[[soft_body.marker]]\nname = \"tip\"\nnode = 1\n\n{other}\n[[soft_body.marker]]\nname = \"tip\"\nnode = 2\n"
    );
    let e = build(&text).unwrap_err().to_string();
    assert!(
        e.starts_with(
            "soft_body.other.marker.tip: another marker has this name: soft_body.beam.marker.tip;"
        ),
        "{e}"
    );
}

#[test]
fn simulated_tracks_round_trip_through_a_file_and_the_reader_names_it() {
    let dir = scratch("round_trip");
    let scene = build(&beam_text(&two_markers())).unwrap();
    let mut tracks = MarkerTracks::for_scene(&scene);
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    tracks.record_state(&scene, &state, 0.0);
    for _ in 0..4 {
        stepper.step(&scene, &mut state).unwrap();
        tracks.record_state(&scene, &state, 0.0);
    }
    let names = scene.markers.names();
    let path = dir.join("tracks.csv");
    tracks.write(&path, MarkerUnit::Metres).unwrap();
    let back = MarkerTracks::read(&path, &names, MarkerUnit::Metres).unwrap();
    assert_eq!(back, tracks);
    let mm = dir.join("tracks_mm.csv");
    tracks.write(&mm, MarkerUnit::Millimetres).unwrap();
    let back = MarkerTracks::read(&mm, &names, MarkerUnit::Millimetres).unwrap();
    for (a, b) in back.tracks.iter().zip(&tracks.tracks) {
        assert_eq!(a.times, b.times);
        for (p, q) in a.positions.iter().zip(&b.positions) {
            assert!((p - q).norm() <= 1e-12 * q.norm(), "{p} vs {q}");
        }
    }
    // A track file's time origin t0 shifts every time.
    let mut shifted = MarkerTracks::for_scene(&scene);
    shifted.record_state(&scene, &state, 2.5);
    assert_eq!(shifted.tracks[0].times, [2.5 + 4.0 * 0.01]);
    // Errors name the file as given and the line.
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "time,marker,x,y,z\n0.0,end,1,2,3\n0.0,elbow,1,2,3\n").unwrap();
    let e = MarkerTracks::read(&bad, &names, MarkerUnit::Metres)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        format!(
            "{}: line 3: marker `elbow` is not a marker of the scene (the scene's markers: end, inner)",
            bad.display()
        )
    );
}

/// The rows of a track file: (time, marker, [x, y, z]).
fn rows(path: &Path) -> Vec<(f64, String, [f64; 3])> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("time,marker,x,y,z"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 5, "{l}");
            let n = |k: usize| f[k].parse::<f64>().unwrap();
            (n(0), f[1].to_string(), [n(2), n(3), n(4)])
        })
        .collect()
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    n.sort();
    n
}

#[test]
fn simulate_markers_out_writes_every_saved_state_with_and_without_out() {
    let dir = scratch("cli");
    let scene = beam_file(&dir, &two_markers());
    let csv = dir.join("tracks.csv");
    let steps = 6;
    let json = run_json(&[
        "simulate",
        scene.to_str().unwrap(),
        "--steps",
        &steps.to_string(),
        "--markers-out",
        csv.to_str().unwrap(),
    ]);
    let got = rows(&csv);
    assert_eq!(got.len(), 2 * (steps + 1));
    let rest = read_mesh(root().join("meshes/beam_2.msh"))
        .unwrap()
        .positions()[NODE];
    for (k, pair) in got.chunks(2).enumerate() {
        // time = steps × dt (State::time), exactly.
        assert_eq!(pair[0].0, k as f64 * 0.01);
        assert_eq!(pair[1].0, k as f64 * 0.01);
        assert_eq!((pair[0].1.as_str(), pair[1].1.as_str()), ("end", "inner"));
    }
    assert_eq!(got[0].2, [rest.x, rest.y, rest.z]);
    // The last rows are the final state's: the node's position, the JSON's markers.
    let last = &got[got.len() - 2..];
    let node = &json["soft_bodies"][0]["positions"][NODE];
    let markers = json["markers"].as_array().unwrap();
    assert_eq!(markers.len(), 2);
    for (k, (row, m)) in last.iter().zip(markers).enumerate() {
        assert_eq!(m["name"], row.1.as_str());
        assert_eq!(m["body"], "beam");
        let p: Vec<f64> = (0..3).map(|a| m["position"][a].as_f64().unwrap()).collect();
        assert_eq!(row.2.to_vec(), p);
        if k == 0 {
            let x: Vec<f64> = (0..3).map(|a| node[a].as_f64().unwrap()).collect();
            assert_eq!(p, x);
        }
    }
    assert_eq!(names_in(&dir), ["scene.toml", "tracks.csv"]);

    // With --out and in mm: the same rows, 1000 times the metres; final.json has markers.
    let out = dir.join("run");
    let mm = out.join("tracks_mm.csv");
    run_json(&[
        "simulate",
        scene.to_str().unwrap(),
        "--steps",
        &steps.to_string(),
        "--out",
        out.to_str().unwrap(),
        "--markers-out",
        mm.to_str().unwrap(),
        "--marker-unit",
        "mm",
    ]);
    let in_mm = rows(&mm);
    assert_eq!(in_mm.len(), got.len());
    for (a, b) in in_mm.iter().zip(&got) {
        assert_eq!((a.0, &a.1), (b.0, &b.1));
        for i in 0..3 {
            assert!((a.2[i] - 1000.0 * b.2[i]).abs() <= 1e-12 * a.2[i].abs());
        }
    }
    let final_json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("final.json")).unwrap()).unwrap();
    assert_eq!(final_json["markers"], json["markers"]);

    // --static: one row per marker at time 0, the equilibrium's.
    let statics = dir.join("static.csv");
    let json = run_json(&[
        "simulate",
        scene.to_str().unwrap(),
        "--static",
        "--markers-out",
        statics.to_str().unwrap(),
    ]);
    let got = rows(&statics);
    assert_eq!(got.len(), 2);
    for (row, m) in got.iter().zip(json["markers"].as_array().unwrap()) {
        assert_eq!(row.0, 0.0);
        let p: Vec<f64> = (0..3).map(|a| m["position"][a].as_f64().unwrap()).collect();
        assert_eq!(row.2.to_vec(), p);
    }
    // Without markers the final state has no `markers` key.
    let plain = run_json(&["simulate", "scenes/beam.toml", "--steps", "0"]);
    assert!(plain.get("markers").is_none());
}

#[test]
fn a_failing_run_writes_no_track_file_and_leaves_no_temporary_file() {
    let dir = scratch("failing");
    let scene = beam_file(&dir, &two_markers());
    let csv = dir.join("tracks.csv");
    let out = dir.join("run");
    // 10⁵ m/s² of gravity: the first step is fine, a later one inverts an element (an error
    // mid-run, after states were recorded; at 1000 m/s² the step's positive-part fallback
    // carries the beam through).
    let heavy = "simulation.gravity=[0.0, 0.0, -1e5]";
    let one = run(&[
        "simulate",
        scene.to_str().unwrap(),
        "--steps",
        "1",
        "--set",
        heavy,
    ]);
    assert!(one.status.success());
    for with_out in [false, true] {
        let mut args = vec![
            "simulate",
            scene.to_str().unwrap(),
            "--steps",
            "30",
            "--set",
            heavy,
            "--markers-out",
            csv.to_str().unwrap(),
        ];
        if with_out {
            args.extend(["--out", out.to_str().unwrap()]);
        }
        let failed = run(&args);
        assert!(!failed.status.success());
        let err = String::from_utf8_lossy(&failed.stderr);
        assert!(err.contains("inverted element"), "{err}");
        let listed = names_in(&dir);
        let expected: &[&str] = if with_out {
            &["run", "scene.toml"]
        } else {
            &["scene.toml"]
        };
        assert_eq!(listed, expected);
        if with_out {
            assert!(names_in(&out).is_empty(), "{:?}", names_in(&out));
        }
    }
    // A bad --set and a scene without markers: one-line errors, nothing written.
    for (args, needle) in [
        (
            vec![
                "simulate",
                scene.to_str().unwrap(),
                "--set",
                "soft_body.beam.young_modulus=-1",
                "--markers-out",
                csv.to_str().unwrap(),
            ],
            "soft_body.beam.young_modulus",
        ),
        (
            vec![
                "simulate",
                "scenes/beam.toml",
                "--markers-out",
                csv.to_str().unwrap(),
            ],
            "the scene has no marker",
        ),
    ] {
        let failed = run(&args);
        assert!(!failed.status.success());
        let err = String::from_utf8_lossy(&failed.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{err}");
    }
    let missing = dir.join("nowhere/tracks.csv");
    let failed = run(&[
        "simulate",
        scene.to_str().unwrap(),
        "--markers-out",
        missing.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&failed.stderr);
    assert!(err.contains("does not exist"), "{err}");
    assert!(
        names_in(&dir)
            .iter()
            .all(|n| n == "scene.toml" || n == "run")
    );
    assert!(!csv.exists());
}

#[test]
fn the_trunk_scene_s_markers_are_its_tip_node_and_a_post_beyond_it() {
    let scene = Scene::load(&root().join("scenes/trunk.toml"), &[]).unwrap();
    assert_eq!(scene.markers.names(), ["tip", "tip_post"]);
    let rest = scene.markers.positions(&scene.initial_state());
    // The tip face's centre node is at (0, 0, 195 mm); the post's marker 10 mm beyond it.
    assert_eq!(rest[0], Vec3::new(0.0, 0.0, 0.195));
    assert!((rest[1] - Vec3::new(0.0, 0.0, 0.205)).norm() < 1e-14);
}
