//! `diffsoro view DIR`: the "von Mises stress" colouring (docs/view.md). The frames' `von_mises`
//! field (docs/outputs.md) must be, at every surface vertex of the page, the rest-volume-
//! weighted mean over the node's tetrahedra of √(3/2 s:s) of the Cauchy stress σ = P Fᵀ / J,
//! recomputed here from `final.json`'s positions and the body's material; the cantilever's
//! largest stress must be of the size beam theory gives at its clamp. With Chromium, the
//! page's stress colouring makes the clamp end brighter than the free end, and the
//! displacement colouring the reverse.

use std::path::Path;

use crate::cli_support;
use crate::view_support;
use cli_support::{run, scratch};
use view_support::{CANVAS_WIDTH, camera_up, embedded_run, floats, ok, screenshot};

use diffsoro::math::{Mat3, Vec3};
use diffsoro::scene::Scene;
use serde_json::Value;

/// Simulates the beam (`scenes/beam.toml`, 30 steps) into `dir/run` and writes its page.
fn beam_run(dir: &Path) -> std::path::PathBuf {
    let out = dir.join("run");
    let out_s = out.to_str().unwrap();
    ok(&run(&["simulate", "scenes/beam.toml", "--out", out_s]));
    ok(&run(&["view", out_s]));
    out
}

/// `final.json`'s positions of the first soft body (m).
fn final_nodes(out: &Path) -> Vec<Vec3> {
    let last: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("final.json")).unwrap()).unwrap();
    last["soft_bodies"][0]["positions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            Vec3::new(
                p[0].as_f64().unwrap(),
                p[1].as_f64().unwrap(),
                p[2].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_page_embeds_each_vertex_s_von_mises_stress_of_the_last_frame() {
    let dir = scratch("beam-stress");
    let out = beam_run(&dir);
    let html = std::fs::read_to_string(out.join("view.html")).unwrap();
    let data = embedded_run(&html);
    let body = &data["bodies"][0];
    let stress = body["stress"].as_array().unwrap();
    assert_eq!(stress.len(), 31, "one per frame");
    assert!(
        floats(&stress[0]).iter().all(|&s| s.abs() < 1e-3),
        "at rest: no stress"
    );

    // Per node: the volume-weighted mean of the elements' von Mises stress, from σ = P Fᵀ / J.
    let scene = Scene::load(Path::new("scenes/beam.toml"), &[]).unwrap();
    let beam = &scene.bodies[0];
    let x = final_nodes(&out);
    let (mut sum, mut volume) = (vec![0.0; x.len()], vec![0.0; x.len()]);
    for (e, t) in beam.elements().iter().enumerate() {
        let f: Mat3 = (0..4)
            .map(|k| x[t.nodes[k]] * t.gradients[k].transpose())
            .sum();
        let p = beam.material_point(e, &x).unwrap().stress();
        let sigma = p * f.transpose() / f.determinant();
        let mean = sigma.trace() / 3.0;
        let s = sigma - Mat3::identity() * mean;
        let vm = (1.5
            * (0..3)
                .flat_map(|i| (0..3).map(move |j| (i, j)))
                .map(|(i, j)| s[(i, j)].powi(2))
                .sum::<f64>())
        .sqrt();
        for &n in &t.nodes {
            sum[n] += t.volume * vm;
            volume[n] += t.volume;
        }
    }
    let nodal: Vec<f64> = sum.iter().zip(&volume).map(|(s, v)| s / v).collect();

    // The page's vertices of the last frame are final.json's nodes (to f32 rounding).
    let vertices = floats(&body["positions"][30]);
    let last = floats(&stress[30]);
    assert_eq!(vertices.len(), 3 * last.len());
    let mut largest = 0.0f64;
    for (i, v) in vertices.chunks_exact(3).enumerate() {
        let n = (0..x.len())
            .find(|&n| (0..3).all(|k| (x[n][k] as f32 - v[k]).abs() <= 1e-7))
            .unwrap_or_else(|| panic!("vertex {i} is no node"));
        let want = nodal[n];
        assert!(
            (last[i] as f64 - want).abs() <= 1e-5 * want.max(1.0),
            "vertex {i} (node {n}): {} Pa on the page, {want} Pa recomputed",
            last[i]
        );
        largest = largest.max(want);
    }
    // The colour bar's top is the largest over all frames (the beam swings past its rest).
    assert!(data["stressMax"].as_f64().unwrap() >= largest * (1.0 - 1e-6));

    // A cantilever of 100 × 10 × 10 mm under its weight (1000 kg/m³, 9.81 m/s²): the bending
    // stress at the clamp is M c / I = (ρ g A L² / 2)(h / 2) / (h⁴ / 12) ≈ 2.9e4 Pa; the
    // P1 mesh, the nodal mean and the swing of the dynamic run keep it within a factor 2.
    let (h, l) = (0.01f64, 0.1f64);
    let beam_theory = 1000.0 * 9.81 * h * h * l * l / 2.0 * (h / 2.0) / (h.powi(4) / 12.0);
    assert!(
        largest > 0.5 * beam_theory && largest < 2.0 * beam_theory,
        "{largest} Pa vs {beam_theory} Pa"
    );
    assert!(html.contains("von Mises stress (Pa)"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Relative luminance (0–255) of an sRGB pixel, roughly.
fn luminance(p: [u8; 3]) -> f64 {
    0.2126 * p[0] as f64 + 0.7152 * p[1] as f64 + 0.0722 * p[2] as f64
}

#[test]
#[ignore = "needs Chromium on PATH (apt-get install chromium); run with --ignored"]
fn headless_chromium_colours_the_clamp_by_stress_and_the_tip_by_displacement() {
    let dir = scratch("beam-stress-shot");
    let out = beam_run(&dir);
    let page = out.join("view.html");
    // Two nodes of the face y = +5 mm facing the camera, at mid-height: 5 mm from the clamp
    // (x = 0) and 5 mm from the free end, where the page draws them at the last frame.
    let name = "beam_000000.vtu";
    let rest = diffsoro::mesh::io::vtu::read_vtu(name, &std::fs::read(out.join(name)).unwrap())
        .unwrap()
        .positions()
        .to_vec();
    let nearest = |target: [f64; 3]| {
        (0..rest.len())
            .min_by(|&a, &b| {
                let d = |n: usize| {
                    (0..3)
                        .map(|k| (rest[n][k] - target[k]).powi(2))
                        .sum::<f64>()
                };
                d(a).total_cmp(&d(b))
            })
            .unwrap()
    };
    let (clamp, tip) = (nearest([0.01, 0.005, 0.0]), nearest([0.09, 0.005, 0.0]));
    let first: Vec<[f64; 3]> = rest.iter().map(|p| [p.x, p.y, p.z]).collect();
    let project = camera_up(&first, 2, CANVAS_WIDTH as f64, 600.0);
    let x = final_nodes(&out);
    let pixel = |shot: &view_support::Shot, n: usize| {
        let [col, row] = project([x[n].x, x[n].y, x[n].z]).map(|c| c.round() as usize);
        assert!(
            col < CANVAS_WIDTH && row < shot.height,
            "node {n} off the view"
        );
        shot.rgb[row * shot.width + col]
    };
    let mut seen = Vec::new();
    for fragment in ["frame=last&paths=off&colour=stress", "frame=last&paths=off"] {
        let (shot, console) = screenshot(&page, fragment, &dir);
        assert!(
            console.is_empty(),
            "{fragment}: the page logged:\n{}",
            console.join("\n")
        );
        let (c, t) = (pixel(&shot, clamp), pixel(&shot, tip));
        eprintln!("{fragment}: clamp {c:?}, tip {t:?}");
        seen.push((luminance(c), luminance(t)));
    }
    // Viridis: bright is large. Stress peaks at the clamp, displacement at the free end.
    assert!(seen[0].0 > seen[0].1 + 20.0, "stress colouring {seen:?}");
    assert!(
        seen[1].1 > seen[1].0 + 20.0,
        "displacement colouring {seen:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
