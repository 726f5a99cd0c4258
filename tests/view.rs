//! `diffsoro view DIR`: the page of a run's frames (docs/view.md). The page must embed the
//! vendored three.js, name every body and carry every frame the `.pvd` lists; bad input is a
//! one-line error that writes nothing. With Chromium on `PATH` (an ignored test: run it with
//! `--ignored`, as `.ci/run` does where Chromium is installed), a headless screenshot of the
//! Trunk's page at its first and last frames must show the trunk where the page's camera puts
//! it, sagged downwards at the end, with no JavaScript error.

use std::process::Output;

use crate::cli_support;
use crate::view_support;
use cli_support::{run, scratch};
use view_support::{
    CANVAS_WIDTH, camera, coloured_region, embedded_run, floats, ok, projected_box, screenshot,
};

use serde_json::Value;

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

#[test]
fn bad_json_beside_the_frames_gives_a_one_line_error_naming_it_and_writes_nothing() {
    let dir = scratch("bad-json");
    let out = dir.join("run");
    let out_s = out.to_str().unwrap();
    ok(&run(&[
        "simulate",
        "scenes/beam.toml",
        "--steps",
        "1",
        "--out",
        out_s,
    ]));
    let final_json = out.join("final.json");
    let good = std::fs::read_to_string(&final_json).unwrap();
    let page = out.join("view.html");

    std::fs::write(&final_json, "{\"time\": ").unwrap();
    assert_one_line_error(
        &run(&["view", out_s]),
        &format!("view: `{}`: ", final_json.display()),
    );
    // An effector following a node the frames do not have.
    let mut state: Value = serde_json::from_str(&good).unwrap();
    state["effectors"][0]["nodes"][0] = 999_999.into();
    std::fs::write(&final_json, state.to_string()).unwrap();
    assert_one_line_error(
        &run(&["view", out_s]),
        "effector `tip` follows node 999999, but the frame has",
    );
    std::fs::write(&final_json, &good).unwrap();
    let control = out.join("control.json");
    std::fs::write(&control, "{\"final_error\": 0.0}").unwrap();
    assert_one_line_error(
        &run(&["view", out_s]),
        &format!("view: `{}`: has no `target`", control.display()),
    );
    assert!(!page.exists(), "no page for bad input");
    std::fs::remove_file(&control).unwrap();
    ok(&run(&["view", out_s]));
    assert!(page.is_file());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[ignore = "needs Chromium on PATH (apt-get install chromium); run with --ignored"]
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
    for (fragment, expected) in [
        ("frame=0&paths=off", expected_first),
        ("frame=last&paths=off", expected_last),
    ] {
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
