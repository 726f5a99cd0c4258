//! `diffsoro view DIR`: what the page draws beside the bodies (docs/view.md), from what the
//! run folder records (docs/outputs.md): the scene's obstacles (`final.json` `obstacles`),
//! each effector's path over the frames (`final.json` effector `nodes` and `weights`) and a
//! control run's target (`control.json`). Every number is checked against a source the page
//! does not use: the scene file, the scene's own effector embedding applied to the `.vtu`
//! frames, `control.json`'s `position_history`. With Chromium (an ignored test,
//! docs/testing.md), a screenshot of the inclined cube shows the plane and the tip marker
//! where the camera puts them.

use std::path::Path;

use crate::cli_support;
use crate::view_support;
use cli_support::{root, run, scratch};
use view_support::{CANVAS_WIDTH, camera_up, embedded_run, ok, screenshot};

use diffsoro::math::Vec3;
use diffsoro::scene::Scene;
use serde_json::Value;

/// `v` as three numbers.
fn xyz(v: &Value) -> [f64; 3] {
    [0, 1, 2].map(|k| v[k].as_f64().unwrap())
}

fn close(a: [f64; 3], b: [f64; 3], tol: f64) -> bool {
    (0..3).all(|k| (a[k] - b[k]).abs() <= tol)
}

/// The JSON of `dir/name`.
fn json_file(dir: &Path, name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
}

#[test]
fn view_embeds_every_obstacle_kind_placed_as_the_scene_file_says() {
    let dir = scratch("obstacles");
    // The beam, with one obstacle of each kind far from it (no contact in two steps).
    let beam = std::fs::read_to_string(root().join("scenes/beam.toml")).unwrap();
    let mesh = root().join("meshes");
    let scene = beam.replace("\"../meshes/", &format!("\"{}/", mesh.display()))
        + &format!(
            r#"
[contact]
friction = 0.5

[[obstacle]]
type = "plane"
point = [0.0, 0.0, -1.0]
normal = [0.0, 0.0, 2.0]

[[obstacle]]
type = "box"
center = [0.3, 0.0, 0.0]
half_extents = [0.01, 0.02, 0.03]
rotation = [0.0, 0.0, {half_pi}]
friction = 0.3

[[obstacle]]
type = "sphere"
center = [0.0, 0.3, 0.0]
radius = 0.02

[[obstacle]]
type = "capsule"
start = [0.0, -0.3, 0.0]
end = [0.0, -0.3, 0.05]
radius = 0.01

[[obstacle]]
type = "mesh"
path = "{stl}"
translation = [0.5, 0.0, 0.0]
"#,
            half_pi = std::f64::consts::FRAC_PI_2,
            stl = mesh.join("finger_obstacle.stl").display()
        );
    let scene_path = dir.join("beam_obstacles.toml");
    std::fs::write(&scene_path, scene).unwrap();
    let out = dir.join("run");
    let out_s = out.to_str().unwrap();
    ok(&run(&[
        "simulate",
        scene_path.to_str().unwrap(),
        "--steps",
        "2",
        "--out",
        out_s,
    ]));
    ok(&run(&["view", out_s]));
    let html = std::fs::read_to_string(out.join("view.html")).unwrap();
    assert!(html.contains("obstacles (5)"));
    let data = embedded_run(&html);
    let obstacles = data["obstacles"].as_array().unwrap();
    // The page embeds what final.json records.
    assert_eq!(
        &json_file(&out, "final.json")["obstacles"],
        &data["obstacles"]
    );
    let kinds: Vec<&str> = obstacles
        .iter()
        .map(|o| o["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["plane", "box", "sphere", "capsule", "mesh"]);
    let friction: Vec<f64> = obstacles
        .iter()
        .map(|o| o["friction"].as_f64().unwrap())
        .collect();
    assert_eq!(friction, [0.5, 0.3, 0.5, 0.5, 0.5]);

    let plane = &obstacles[0];
    assert_eq!(xyz(&plane["point"]), [0.0, 0.0, -1.0]);
    assert_eq!(xyz(&plane["normal"]), [0.0, 0.0, 1.0], "normalised");

    // A quarter turn about z maps the box's x axis to world y and its y axis to world −x:
    // rows of box → world [[0, −1, 0], [1, 0, 0], [0, 0, 1]].
    let cuboid = &obstacles[1];
    assert_eq!(xyz(&cuboid["center"]), [0.3, 0.0, 0.0]);
    assert_eq!(xyz(&cuboid["half_extents"]), [0.01, 0.02, 0.03]);
    let rows: Vec<[f64; 3]> = (0..3).map(|r| xyz(&cuboid["rotation"][r])).collect();
    let quarter = [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]];
    for (row, want) in rows.iter().zip(quarter) {
        assert!(close(*row, want, 1e-15), "{rows:?}");
    }

    let sphere = &obstacles[2];
    assert_eq!(xyz(&sphere["center"]), [0.0, 0.3, 0.0]);
    assert_eq!(sphere["radius"].as_f64(), Some(0.02));
    let capsule = &obstacles[3];
    assert_eq!(xyz(&capsule["start"]), [0.0, -0.3, 0.0]);
    assert_eq!(xyz(&capsule["end"]), [0.0, -0.3, 0.05]);
    assert_eq!(capsule["radius"].as_f64(), Some(0.01));

    // The STL is the box x ∈ [−120, −40] mm, y ∈ [18, 40] mm, z ∈ [−20, 35] mm
    // (scenes/finger_obstacle.toml), here moved by 0.5 m along x: 8 corners, 12 triangles.
    let mesh = &obstacles[4];
    let vertices: Vec<[f64; 3]> = mesh["vertices"]
        .as_array()
        .unwrap()
        .iter()
        .map(xyz)
        .collect();
    let triangles = mesh["triangles"].as_array().unwrap();
    assert_eq!(triangles.len(), 12);
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for v in &vertices {
        for k in 0..3 {
            lo[k] = lo[k].min(v[k]);
            hi[k] = hi[k].max(v[k]);
        }
    }
    assert!(close(lo, [0.38, 0.018, -0.02], 1e-9), "{lo:?}");
    assert!(close(hi, [0.46, 0.04, 0.035], 1e-9), "{hi:?}");
    for t in triangles {
        assert!((0..3).all(|k| (t[k].as_u64().unwrap() as usize) < vertices.len()));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Simulates the inclined cube (`scenes/contact_incline.toml`) for `steps` steps into
/// `dir/run` and writes its page; returns the run folder.
fn incline_run(dir: &Path, steps: usize) -> std::path::PathBuf {
    let out = dir.join("run");
    let out_s = out.to_str().unwrap();
    let steps = steps.to_string();
    ok(&run(&[
        "simulate",
        "scenes/contact_incline.toml",
        "--steps",
        &steps,
        "--out",
        out_s,
    ]));
    ok(&run(&["view", out_s]));
    out
}

/// The node positions (m) of frame `k` of `body` in `out`.
fn frame_nodes(out: &Path, body: &str, k: usize) -> Vec<Vec3> {
    let name = format!("{body}_{k:06}.vtu");
    let bytes = std::fs::read(out.join(&name)).unwrap();
    diffsoro::mesh::io::vtu::read_vtu(&name, &bytes)
        .unwrap()
        .positions()
        .to_vec()
}

#[test]
fn view_of_the_incline_embeds_its_plane_the_tip_path_and_gravity_up() {
    let dir = scratch("incline");
    let steps = 10;
    let out = incline_run(&dir, steps);
    let html = std::fs::read_to_string(out.join("view.html")).unwrap();
    assert!(html.contains("tip path (cube)") && html.contains("obstacles (1)"));
    let data = embedded_run(&html);
    // Gravity −z: z is up on the page.
    assert_eq!(xyz(&data["cameraUp"]), [0.0, 0.0, 1.0]);
    // The plane of the scene file, 20° inclined.
    let plane = &data["obstacles"][0];
    assert_eq!(plane["type"], "plane");
    let (s, c) = 20f64.to_radians().sin_cos();
    assert!(close(xyz(&plane["normal"]), [-s, 0.0, c], 1e-12));

    // The tip's path: at every frame, the scene's own embedding of `tip` (Scene::load)
    // applied to that frame's nodes; at the last, final.json's position.
    let scene = Scene::load(Path::new("scenes/contact_incline.toml"), &[]).unwrap();
    let tip = &scene.body_actuation(0).effectors[0];
    assert_eq!(tip.name, "tip");
    let effector = &data["effectors"][0];
    assert_eq!(
        (&effector["name"], &effector["body"]),
        (&"tip".into(), &"cube".into())
    );
    let path: Vec<[f64; 3]> = effector["path"]
        .as_array()
        .unwrap()
        .iter()
        .map(xyz)
        .collect();
    assert_eq!(path.len(), steps + 1);
    for (k, p) in path.iter().enumerate() {
        let x = tip.point.position(&frame_nodes(&out, "cube", k));
        assert!(
            close(*p, [x.x, x.y, x.z], 1e-12),
            "frame {k}: {p:?} vs {x:?}"
        );
    }
    let last = xyz(&json_file(&out, "final.json")["effectors"][0]["position"]);
    assert!(close(path[steps], last, 1e-12));
    assert_eq!(data["targets"].as_array().map(Vec::len), Some(0));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn view_of_the_incline_shows_contact_forces_on_the_plane_that_carry_the_weight() {
    let dir = scratch("incline-forces");
    let out = incline_run(&dir, 50);
    let html = std::fs::read_to_string(out.join("view.html")).unwrap();
    assert!(html.contains("contact forces (longest arrow "), "legend");
    let data = embedded_run(&html);
    let contacts = data["contacts"].as_array().unwrap();
    assert_eq!(contacts.len(), 51, "one list per frame");
    assert!(
        contacts[0].as_array().unwrap().is_empty(),
        "no step, no contact force"
    );
    // At rest on the plane after 0.5 s, the contact forces carry the cube's weight:
    // 1000 kg/m³ × (20 mm)³ × 9.81 m/s², straight up (+z), with no net sideways force.
    let weight = 1000.0 * 0.02f64.powi(3) * 9.81;
    let last = contacts[50].as_array().unwrap();
    assert!(last.len() >= 4, "{} nodes touch", last.len());
    let mut sum = [0.0; 3];
    let (s, c) = 20f64.to_radians().sin_cos();
    let mut largest = 0.0f64;
    for row in last {
        let r: Vec<f64> = row
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        for k in 0..3 {
            sum[k] += r[3 + k];
        }
        largest = largest.max((r[3] * r[3] + r[4] * r[4] + r[5] * r[5]).sqrt());
        // Every touched node is on the plane through 0 with normal (−sin 20°, 0, cos 20°).
        let gap = -s * r[0] + c * r[2];
        assert!(gap.abs() < 1e-5, "node {r:?} is {gap} m from the plane");
    }
    assert!(
        close(sum, [0.0, 0.0, weight], 1e-5 * weight),
        "{sum:?} vs {weight}"
    );
    assert!(data["contactForceMax"].as_f64().unwrap() >= largest);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The Trunk's control target (tests/run_report.rs).
const TARGET: [f64; 3] = [-0.0108, -0.022, 0.1923];

#[test]
fn control_view_embeds_the_target_and_the_path_of_position_history() {
    let dir = scratch("control");
    let out = dir.join("run");
    let target = format!("{},{},{}", TARGET[0], TARGET[1], TARGET[2]);
    ok(&run(&[
        "control",
        "scenes/trunk.toml",
        "--effector",
        "tip",
        "--target",
        &target,
        "--steps",
        "4",
        "--out",
        out.to_str().unwrap(),
        "--view",
    ]));
    let html = std::fs::read_to_string(out.join("view.html")).unwrap();
    assert!(html.contains("control target") && html.contains("tip path (trunk)"));
    let data = embedded_run(&html);
    assert_eq!(data["targets"].as_array().unwrap().len(), 1);
    assert_eq!(xyz(&data["targets"][0]), TARGET);
    // Frame 0 is the rest state; frame k + 1 the state after step k, whose tip
    // control.json's position_history records.
    let history = json_file(&out, "control.json")["position_history"].clone();
    let history: Vec<[f64; 3]> = history.as_array().unwrap().iter().map(xyz).collect();
    let tip = data["effectors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "tip")
        .unwrap();
    let path: Vec<[f64; 3]> = tip["path"].as_array().unwrap().iter().map(xyz).collect();
    assert_eq!((path.len(), history.len()), (5, 4));
    for (k, h) in history.iter().enumerate() {
        assert!(
            close(path[k + 1], *h, 1e-12),
            "step {k}: {:?} vs {h:?}",
            path[k + 1]
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn control_view_of_the_finger_shows_its_contact_forces_on_the_block_within_the_friction_cone() {
    let dir = scratch("finger-control");
    let out = dir.join("run");
    ok(&run(&[
        "control",
        "scenes/finger_obstacle.toml",
        "--effector",
        "tip",
        "--target",
        "-0.11,0.03,0.0",
        "--steps",
        "30",
        "--out",
        out.to_str().unwrap(),
        "--view",
    ]));
    let html = std::fs::read_to_string(out.join("view.html")).unwrap();
    let data = embedded_run(&html);
    let contacts = data["contacts"].as_array().unwrap();
    assert_eq!(contacts.len(), 31);
    let touching: Vec<&Value> = contacts
        .iter()
        .flat_map(|c| c.as_array().unwrap())
        .collect();
    assert!(touching.len() >= 10, "the finger curls into the block");
    // The block's bottom face is y = 18 mm, outward normal −y (scenes/finger_obstacle.toml),
    // and its Coulomb coefficient 0.3: each force presses the node down (−y), its tangential
    // part at most 0.3 of its normal part.
    for row in touching {
        let r: Vec<f64> = row
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert!(
            (r[1] - 0.018).abs() < 1e-6,
            "node {r:?} is off the block's face"
        );
        let (normal, tangential) = (-r[4], (r[3] * r[3] + r[5] * r[5]).sqrt());
        assert!(normal > 0.0, "{r:?} pulls");
        assert!(
            tangential <= 0.3 * normal * (1.0 + 1e-6) + 1e-12,
            "{r:?} outside the cone"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Pixels of the 3D view whose colour is within `tol` of `rgb` in every channel: their count
/// and centroid (column, row).
fn pixels_near(shot: &view_support::Shot, rgb: [u8; 3], tol: u8) -> (usize, [f64; 2]) {
    let (mut n, mut sum) = (0, [0.0; 2]);
    for row in 0..shot.height {
        for col in 0..CANVAS_WIDTH.min(shot.width) {
            let p = shot.rgb[row * shot.width + col];
            if (0..3).all(|k| p[k].abs_diff(rgb[k]) <= tol) {
                n += 1;
                sum[0] += col as f64;
                sum[1] += row as f64;
            }
        }
    }
    (n, sum.map(|s| s / n.max(1) as f64))
}

#[test]
#[ignore = "needs Chromium on PATH (apt-get install chromium); run with --ignored"]
fn headless_chromium_shows_the_plane_and_the_tip_marker_where_the_camera_puts_them() {
    let dir = scratch("incline-shot");
    let steps = 10;
    let out = incline_run(&dir, steps);
    let first = frame_nodes(&out, "cube", 0);
    let first: Vec<[f64; 3]> = first.iter().map(|p| [p.x, p.y, p.z]).collect();
    // Gravity −z: the camera is raised towards +z.
    let project = camera_up(&first, 2, CANVAS_WIDTH as f64, 600.0);
    let tip = xyz(&json_file(&out, "final.json")["effectors"][0]["position"]);
    let (shot, console) = screenshot(&out.join("view.html"), "frame=last", &dir);
    assert!(
        console.is_empty(),
        "the page logged:\n{}",
        console.join("\n")
    );

    // The tip marker (page.js PATH, 0xe0201c, unlit and drawn over the cube) is centred on
    // the projected tip, to antialiasing (2 px).
    let (count, centroid) = pixels_near(&shot, [0xe0, 0x20, 0x1c], 30);
    let expected = project(tip);
    eprintln!("tip marker: {count} px at {centroid:?}, camera predicts {expected:?}");
    assert!(count >= 10, "{count} marker pixels");
    assert!(
        (0..2).all(|k| (centroid[k] - expected[k]).abs() <= 2.0),
        "marker at {centroid:?}, tip projects to {expected:?}"
    );

    // The contact-force arrows (page.js FORCE, 0x1f5fd0, unlit, over the cube) start at
    // the cube's bottom nodes: they lie within the cube's projected box.
    let last_nodes: Vec<[f64; 3]> = frame_nodes(&out, "cube", steps)
        .iter()
        .map(|p| [p.x, p.y, p.z])
        .collect();
    let cube = view_support::projected_box(&last_nodes, &project);
    let (arrows, at) = pixels_near(&shot, [0x1f, 0x5f, 0xd0], 40);
    eprintln!("contact arrows: {arrows} px around {at:?}, cube box {cube:?}");
    assert!(arrows >= 20, "{arrows} arrow pixels");
    assert!(at[0] > cube[0] && at[0] < cube[2] && at[1] > cube[1] && at[1] < cube[3]);

    // The plane (page.js OBSTACLE, tan, shaded) under the cube: a point of it 8 mm down
    // the slope from the cube's lower edge (at the origin), on the camera's side, is drawn
    // tan.
    let (s, c) = 20f64.to_radians().sin_cos();
    let on_plane = [-0.008 * c, 0.01, -0.008 * s];
    let [col, row] = project(on_plane).map(|x| x.round() as usize);
    assert!(
        col < CANVAS_WIDTH && row < shot.height,
        "{col},{row} is off the view"
    );
    let p = shot.rgb[row * shot.width + col].map(i32::from);
    assert!(
        p[0] > p[2] + 40 && p[0] >= p[1] && p[1] > p[2],
        "pixel {col},{row} of the plane is {p:?}, not tan"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
