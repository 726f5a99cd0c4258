//! `diffsoro view DIR`: the page of a run's frames (docs/view.md). The page must embed the
//! vendored three.js, name every body and carry every frame the `.pvd` lists; bad input is a
//! one-line error that writes nothing. With Chromium on `PATH` (at build time, see
//! `build.rs`), a headless screenshot of the Trunk's page at its first and last frames must
//! show the trunk where the page's camera puts it, sagged downwards at the end, with no
//! JavaScript error.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod cli_support;
use cli_support::{run, scratch};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::Value;

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The run data the page embeds (the JSON of its `run-data` script element).
fn embedded_run(html: &str) -> Value {
    let start_tag = "<script type=\"application/json\" id=\"run-data\">";
    let start = html.find(start_tag).expect("run-data element") + start_tag.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

/// The little-endian `f32` values of base64 `text`.
fn floats(text: &Value) -> Vec<f32> {
    BASE64
        .decode(text.as_str().unwrap())
        .unwrap()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

#[test]
fn view_of_the_beam_embeds_three_js_the_body_and_every_frame() {
    let dir = scratch("beam");
    let out = dir.join("run");
    let out_s = out.to_str().unwrap();
    ok(&run(&[
        "simulate",
        "scenes/beam.toml",
        "--steps",
        "5",
        "--out",
        out_s,
    ]));
    let view = run(&["view", out_s]);
    ok(&view);
    let page = out.join("view.html");
    let err = String::from_utf8_lossy(&view.stderr);
    assert!(err.contains(&page.display().to_string()), "{err}");
    let html = std::fs::read_to_string(&page).unwrap();
    // three.js r171's licence header and its REVISION constant, inlined.
    assert!(html.contains("Copyright 2010-2024 Three.js Authors"));
    assert!(html.contains("const t=\"171\""));
    assert!(html.contains("class OrbitControls extends Controls"));
    assert!(html.contains("beam (soft)"));

    // Frames: the .pvd lists the initial state and one per step.
    let pvd = std::fs::read_to_string(out.join("beam.pvd")).unwrap();
    let listed = pvd.matches("<DataSet ").count();
    assert_eq!(listed, 6);
    let data = embedded_run(&html);
    assert_eq!(data["times"].as_array().unwrap().len(), listed);
    let body = &data["bodies"][0];
    assert_eq!(body["name"], "beam");
    let positions = body["positions"].as_array().unwrap();
    let displacement = body["displacement"].as_array().unwrap();
    assert_eq!((positions.len(), displacement.len()), (listed, listed));

    // The last frame's vertices are nodes of the final state (final.json), and each vertex's
    // colour value is its distance from frame 0 (the rest state: displacement is measured
    // from the rest positions, and a run starts at rest).
    let last: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("final.json")).unwrap()).unwrap();
    let nodes: Vec<[f64; 3]> = last["soft_bodies"][0]["positions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| [0, 1, 2].map(|k| p[k].as_f64().unwrap()))
        .collect();
    let (p0, p5, u5) = (
        floats(&positions[0]),
        floats(&positions[5]),
        floats(&displacement[5]),
    );
    assert_eq!(p5.len(), 3 * u5.len());
    for (i, v) in p5.chunks_exact(3).enumerate() {
        let near = nodes
            .iter()
            .any(|n| (0..3).all(|k| (n[k] as f32 - v[k]).abs() <= 1e-7));
        assert!(near, "vertex {i} {v:?} is no node of final.json");
        let moved = (0..3)
            .map(|k| (v[k] as f64 - p0[3 * i + k] as f64).powi(2))
            .sum::<f64>()
            .sqrt();
        assert!(
            (moved - u5[i] as f64).abs() <= 1e-7,
            "vertex {i}: {moved} vs {}",
            u5[i]
        );
    }
    let max = u5.iter().fold(0.0f32, |m, &u| m.max(u));
    assert!(max > 0.0, "the beam moves under gravity in 5 steps");

    // --out puts the page elsewhere.
    let other = dir.join("elsewhere.html");
    ok(&run(&["view", out_s, "--out", other.to_str().unwrap()]));
    assert!(
        std::fs::read_to_string(&other)
            .unwrap()
            .contains("beam (soft)")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

fn assert_one_line_error(out: &Output, needle: &str) {
    assert!(!out.status.success(), "expected failure for {needle}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains(needle), "`{needle}` not in: {err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_folders_give_a_one_line_error_naming_them_and_write_nothing() {
    let dir = scratch("bad");
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("notes.txt"), "no frames here").unwrap();
    let e = empty.to_str().unwrap();
    assert_one_line_error(
        &run(&["view", e]),
        &format!("view: `{e}`: no .pvd file in this folder"),
    );
    let missing = dir.join("missing");
    let m = missing.to_str().unwrap();
    let page = dir.join("page.html");
    assert_one_line_error(
        &run(&["view", m, "--out", page.to_str().unwrap()]),
        &format!("view: `{m}`: no such folder"),
    );
    assert!(!missing.exists() && !page.exists());
    let left: Vec<_> = std::fs::read_dir(&empty).unwrap().collect();
    assert_eq!(left.len(), 1, "only notes.txt");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A Chromium on `PATH` (`chromium` or `chromium-browser`).
fn chromium() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n)))
        .find(|p| p.is_file())
        .expect("no chromium on PATH: apt-get install chromium")
}

/// An RGB screenshot: width, height, pixels row by row.
struct Shot {
    width: usize,
    height: usize,
    rgb: Vec<[u8; 3]>,
}

/// Opens `page#fragment` in headless Chromium (software WebGL) at 800×600 and returns the
/// screenshot and the console messages Chromium logged, apart from its GL driver's
/// performance notes (the `ReadPixels` the screenshot costs).
fn screenshot(page: &Path, fragment: &str, dir: &Path) -> (Shot, Vec<String>) {
    let png_path = dir.join(format!("{}.png", fragment.replace(['=', '#'], "_")));
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--disable-gpu",
            "--use-angle=swiftshader",
            "--enable-unsafe-swiftshader",
            "--no-sandbox",
            "--no-first-run",
            "--window-size=800,600",
            "--virtual-time-budget=5000",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--screenshot={}", png_path.display()))
        .arg(format!("file://{}#{fragment}", page.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed().as_secs() > 120 {
            let _ = child.kill();
            panic!("chromium took more than 120 s on {}", page.display());
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    let console: Vec<String> = log
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .filter(|l| !l.contains("GL Driver Message (OpenGL, Performance"))
        .map(str::to_string)
        .collect();
    let mut decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&png_path).unwrap_or_else(|e| panic!("no screenshot ({e}): {log}")),
    ));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let (width, height) = (info.width as usize, info.height as usize);
    let rgb = (0..width * height)
        .map(|i| {
            let (row, col) = (i / width, i % width);
            let at = row * info.line_size + col * channels;
            if channels >= 3 {
                [buf[at], buf[at + 1], buf[at + 2]]
            } else {
                [buf[at]; 3]
            }
        })
        .collect();
    (Shot { width, height, rgb }, console)
}

/// The page's 3D view: the window less the 180-pixel side panel (page.html).
const CANVAS_WIDTH: usize = 800 - 180;
/// The page's background (page.js: `0xf4f4f4`).
const BACKGROUND: [u8; 3] = [0xf4; 3];

/// The pixels of the 3D view that are not background: (count, [left, top, right, bottom],
/// centroid row).
fn coloured_region(shot: &Shot) -> (usize, [usize; 4], f64) {
    let (mut n, mut bbox, mut rows) = (0, [usize::MAX, usize::MAX, 0, 0], 0.0);
    for row in 0..shot.height {
        for col in 0..CANVAS_WIDTH.min(shot.width) {
            let p = shot.rgb[row * shot.width + col];
            if (0..3).any(|k| p[k].abs_diff(BACKGROUND[k]) > 40) {
                n += 1;
                bbox = [
                    bbox[0].min(col),
                    bbox[1].min(row),
                    bbox[2].max(col),
                    bbox[3].max(row),
                ];
                rows += row as f64;
            }
        }
    }
    (n, bbox, rows / n.max(1) as f64)
}

/// The page's camera (page.js, `camera_direction` in src/view/page.rs), rebuilt from its
/// description: it looks at the centre of the first frame's bounding box, from the
/// horizontal axis (x or z) in which the body is thinnest, raised by asin(0.27), +y up,
/// vertical field of view 35°, at 1.15 r / sin(17.5°) from the centre (r: half the box's
/// diagonal). Returns the pixel (column, row) of a point, for a `width`×`height` view.
fn camera(first: &[[f64; 3]], width: f64, height: f64) -> impl Fn([f64; 3]) -> [f64; 2] {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in first {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    let centre: [f64; 3] = [0, 1, 2].map(|k| (lo[k] + hi[k]) / 2.0);
    let r = (0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f64>().sqrt() / 2.0;
    let h = (1.0f64 - 0.27 * 0.27).sqrt();
    let dir = if hi[0] - lo[0] <= hi[2] - lo[2] {
        [h, 0.27, 0.0]
    } else {
        [0.0, 0.27, h]
    };
    let half_fov = 17.5f64.to_radians();
    let distance = 1.15 * r / half_fov.sin();
    let eye: [f64; 3] = [0, 1, 2].map(|k| centre[k] + distance * dir[k]);
    let forward = dir.map(|x| -x);
    // right = forward × up, up' = right × forward (a right-handed camera, +y up).
    let cross = |a: [f64; 3], b: [f64; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let right = cross(forward, [0.0, 1.0, 0.0]);
    let norm = right.iter().map(|x| x * x).sum::<f64>().sqrt();
    let right = right.map(|x| x / norm);
    let up = cross(right, forward);
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    move |p: [f64; 3]| {
        let d: [f64; 3] = [0, 1, 2].map(|k| p[k] - eye[k]);
        let depth = dot(d, forward);
        let t = half_fov.tan();
        let x = dot(d, right) / (depth * t * width / height);
        let y = dot(d, up) / (depth * t);
        [(x + 1.0) / 2.0 * width, (1.0 - y) / 2.0 * height]
    }
}

/// The pixel bounding box [left, top, right, bottom] of `points` seen by `project`.
fn projected_box(points: &[[f64; 3]], project: &impl Fn([f64; 3]) -> [f64; 2]) -> [f64; 4] {
    points.iter().fold(
        [
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        ],
        |b, &p| {
            let [x, y] = project(p);
            [b[0].min(x), b[1].min(y), b[2].max(x), b[3].max(y)]
        },
    )
}

#[test]
#[cfg_attr(
    not(chromium),
    ignore = "needs chromium: apt-get install chromium; run with --ignored"
)]
fn headless_chromium_shows_the_trunk_sagging_without_javascript_errors() {
    let dir = scratch("trunk");
    let out = dir.join("run");
    let out_s = out.to_str().unwrap();
    ok(&run(&["simulate", "scenes/trunk.toml", "--out", out_s]));
    ok(&run(&["view", out_s]));
    let page = out.join("view.html");

    // Where the trunk is: its first frame (at rest) and its final state (final.json).
    let first_vtu = out.join("trunk_000000.vtu");
    let mesh =
        diffsoro::mesh::io::vtu::read_vtu("trunk_000000.vtu", &std::fs::read(&first_vtu).unwrap())
            .unwrap();
    let first: Vec<[f64; 3]> = mesh.positions().iter().map(|p| [p.x, p.y, p.z]).collect();
    let last: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("final.json")).unwrap()).unwrap();
    let last: Vec<[f64; 3]> = last["soft_bodies"][0]["positions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| [0, 1, 2].map(|k| p[k].as_f64().unwrap()))
        .collect();
    let project = camera(&first, CANVAS_WIDTH as f64, 600.0);
    let expected_first = projected_box(&first, &project);
    let expected_last = projected_box(&last, &project);

    let mut bottoms = Vec::new();
    let mut centroids = Vec::new();
    for (fragment, expected) in [("frame=0", expected_first), ("frame=last", expected_last)] {
        let (shot, console) = screenshot(&page, fragment, &dir);
        assert!(
            console.is_empty(),
            "{fragment}: the page logged:\n{}",
            console.join("\n")
        );
        assert_eq!((shot.width, shot.height), (800, 600));
        let (count, bbox, centroid) = coloured_region(&shot);
        eprintln!(
            "{fragment}: {count} coloured pixels, box {bbox:?} (camera predicts {:?}), centroid row {centroid:.1}",
            expected.map(|x| x.round())
        );
        assert!(count > 2000, "{fragment}: the trunk covers {count} pixels");
        // The drawn trunk is where the camera puts the nodes, to antialiasing and f32 rounding (3 px).
        for k in 0..4 {
            assert!(
                (bbox[k] as f64 - expected[k]).abs() <= 3.0,
                "{fragment}: box side {k}: {} px drawn, {:.1} px expected",
                bbox[k],
                expected[k]
            );
        }
        bottoms.push(bbox[3]);
        centroids.push(centroid);
    }
    // Gravity is −y and +y is up on screen: the sagged trunk reaches lower (larger rows),
    // by the amount the camera predicts, and its pixels move down on average.
    let predicted = expected_last[3] - expected_first[3];
    assert!(
        predicted > 10.0,
        "the sag spans {predicted:.1} px on screen"
    );
    let drawn = bottoms[1] as f64 - bottoms[0] as f64;
    assert!(
        (drawn - predicted).abs() <= 4.0,
        "bottom moved {drawn} px, predicted {predicted:.1}"
    );
    assert!(
        centroids[1] > centroids[0] + 2.0,
        "centroid rows {centroids:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
