//! `diffsoro view DIR`: the page of a run's frames (docs/view.md). The page must embed the
//! vendored three.js, name every body and carry every frame the `.pvd` lists; bad input is a
//! one-line error that writes nothing. With Chromium on `PATH` (at build time, see
//! `build.rs`), a headless screenshot of the Trunk's page at its first and last frames must
//! show the trunk where the page's camera puts it, sagged downwards at the end, with no
//! JavaScript error.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_diffsoro"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("diffsoro-view-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

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
    ok(&run(&["simulate", "scenes/beam.toml", "--steps", "5", "--out", out_s]));
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
        let near = nodes.iter().any(|n| (0..3).all(|k| (n[k] as f32 - v[k]).abs() <= 1e-7));
        assert!(near, "vertex {i} {v:?} is no node of final.json");
        let moved = (0..3)
            .map(|k| (v[k] as f64 - p0[3 * i + k] as f64).powi(2))
            .sum::<f64>()
            .sqrt();
        assert!((moved - u5[i] as f64).abs() <= 1e-7, "vertex {i}: {moved} vs {}", u5[i]);
    }
    let max = u5.iter().fold(0.0f32, |m, &u| m.max(u));
    assert!(max > 0.0, "the beam moves under gravity in 5 steps");

    // --out puts the page elsewhere.
    let other = dir.join("elsewhere.html");
    ok(&run(&["view", out_s, "--out", other.to_str().unwrap()]));
    assert!(std::fs::read_to_string(&other).unwrap().contains("beam (soft)"));
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
