//! A run's plots for a reader (docs/outputs.md#plots): `control` and `calibrate` write a
//! complete output folder with `summary.svg` (one page: the effector's path, the error or
//! loss, the actuation or parameters, the key numbers), the error/loss plot is on a log axis
//! when asked or when its values span more than two decades, with tick labels covering the
//! values, and `simulate --view` and `control --view` write the viewer page beside the frames.
//!
//! Expected counts come from the scene and the command (the scene's cables, `--steps`, the
//! parameters fitted) and expected values from the run's own data files (a label range that
//! covers the CSV's values), never from a previous run's output.

use std::path::Path;
use std::process::Output;

use crate::cli_support;
use cli_support::{run, scratch};

use diffsoro::actuator::ActuatorKind;
use diffsoro::scene::Scene;
use serde_json::Value;

/// The Trunk target of the README's control example (m).
const TARGET: [f64; 3] = [-0.0123, -0.151, 0.0909];

fn ok(out: &Output) -> &Output {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs `control` on the Trunk's tip toward [`TARGET`] for `steps` steps into `dir`, with
/// `extra` arguments; returns its JSON.
fn control(dir: &Path, steps: usize, extra: &[&str]) -> Value {
    let target = format!("{},{},{}", TARGET[0], TARGET[1], TARGET[2]);
    let steps = steps.to_string();
    let mut args = vec![
        "control",
        "scenes/trunk.toml",
        "--effector",
        "tip",
        "--target",
        &target,
        "--steps",
        &steps,
        "--out",
        dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = run(&args);
    serde_json::from_slice(&ok(&out).stdout).unwrap()
}

/// The names of the Trunk's cables, in scene order.
fn trunk_cables() -> Vec<String> {
    let scene = Scene::load(Path::new("scenes/trunk.toml"), &[]).unwrap();
    (0..scene.bodies.len())
        .flat_map(|b| scene.body_actuation(b).actuators.clone())
        .filter(|a| matches!(a.kind, ActuatorKind::Cable(_)))
        .map(|a| a.name)
        .collect()
}

/// Parses `path` as an SVG document (panics if it is not well-formed XML with an `<svg>` root).
fn svg_text(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    assert_eq!(doc.root_element().tag_name().name(), "svg", "{path:?}");
    text
}

/// The `<text>` contents of an SVG, trimmed, with their `text-anchor`.
fn texts(svg: &str) -> Vec<(String, String)> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| n.tag_name().name() == "text")
        .map(|n| {
            (
                n.text().unwrap_or("").trim().to_string(),
                n.attribute("text-anchor").unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// The point counts of the 2 px polylines (the series; axes, grid and ticks are 1 px).
fn series_lines(svg: &str) -> Vec<usize> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| n.tag_name().name() == "polyline" && n.attribute("stroke-width") == Some("2"))
        .map(|n| {
            n.attribute("points")
                .unwrap_or("")
                .split_whitespace()
                .count()
        })
        .collect()
}

/// The y tick labels of a single chart (right-aligned texts) as numbers.
fn y_ticks(svg: &str) -> Vec<f64> {
    texts(svg)
        .into_iter()
        .filter(|(_, anchor)| anchor == "end")
        .map(|(t, _)| t.parse::<f64>().unwrap_or_else(|_| panic!("tick `{t}`")))
        .collect()
}

/// Column `k` of a CSV file with a header line.
fn csv_column(path: &Path, k: usize) -> Vec<f64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(k).unwrap().parse().unwrap())
        .collect()
}

/// The smallest and largest positive value.
fn positive_range(values: &[f64]) -> (f64, f64) {
    values
        .iter()
        .filter(|v| **v > 0.0)
        .fold((f64::INFINITY, 0.0), |(lo, hi), &v| (lo.min(v), hi.max(v)))
}

/// Asserts that the folder holds exactly `names` (no staging or temporary file left).
fn holds_exactly(dir: &Path, names: &[&str]) {
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    found.sort();
    let mut expected: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(found, expected);
}

/// Asserts that a log axis's tick labels are powers of ten apart in whole or half decades
/// and cover `values` (its lowest label at or below the smallest positive value, its highest
/// at or above the largest).
fn log_labels_cover(svg: &str, values: &[f64]) {
    let ticks = y_ticks(svg);
    assert!(ticks.len() >= 2, "{ticks:?}");
    let (lo, hi) = positive_range(values);
    let (t_lo, t_hi) = positive_range(&ticks);
    assert!(
        t_lo <= lo && t_hi >= hi,
        "labels {ticks:?} over [{lo:e}, {hi:e}]"
    );
    // Evenly spaced in log₁₀ (labels are rounded to 3 significant digits).
    let logs: Vec<f64> = ticks.iter().map(|t| t.log10()).collect();
    let step = (logs[1] - logs[0]).abs();
    for w in logs.windows(2) {
        assert!(((w[1] - w[0]).abs() - step).abs() < 0.01, "{ticks:?}");
    }
}

#[test]
fn control_writes_a_complete_summary_with_a_line_per_actuator() {
    let folder = scratch("control");
    let dir = folder.join("out");
    let steps = 10;
    let json = control(&dir, steps, &[]);
    holds_exactly(
        &dir,
        &[
            "control.json",
            "error.svg",
            "error.csv",
            "actuation.svg",
            "actuation.csv",
            "summary.svg",
        ],
    );
    // The path: one position per step, each at the reported distance from the target.
    let path = json["position_history"].as_array().unwrap();
    let errors = json["error_history"].as_array().unwrap();
    assert_eq!(path.len(), steps);
    assert_eq!(errors.len(), steps);
    for (p, e) in path.iter().zip(errors) {
        let d: f64 = (0..3)
            .map(|k| (p[k].as_f64().unwrap() - TARGET[k]).powi(2))
            .sum::<f64>()
            .sqrt();
        assert!((d - e.as_f64().unwrap()).abs() <= 1e-12 * d, "{d} {e}");
    }

    let cables = trunk_cables();
    assert!(!cables.is_empty());
    let summary = svg_text(&dir.join("summary.svg"));
    // One line for the path, one for the error, one per cable: `steps` points each.
    assert_eq!(series_lines(&summary), vec![steps; 2 + cables.len()]);
    let shown: Vec<String> = texts(&summary).into_iter().map(|(t, _)| t).collect();
    let mut legend = vec![
        "effector".to_string(),
        "target".into(),
        "after step 1".into(),
        "error".into(),
    ];
    legend.extend(cables.iter().map(|c| format!("{c} (N)")));
    for entry in &legend {
        assert_eq!(
            shown.iter().filter(|t| *t == entry).count(),
            1,
            "legend entry `{entry}` once in {shown:?}"
        );
    }
    let final_error = json["final_error"].as_f64().unwrap();
    assert!(shown.contains(&format!("final error: {final_error:.4e} m")));
    assert!(shown.contains(&format!("steps: {steps}")));
    for c in &cables {
        assert!(
            shown
                .iter()
                .any(|t| t.starts_with(&format!("final input of {c}: ")))
        );
    }

    // The automatic scale: log exactly when the errors span more than two decades.
    let data = csv_column(&dir.join("error.csv"), 1);
    let (lo, hi) = positive_range(&data);
    let error_svg = svg_text(&dir.join("error.svg"));
    let log = error_svg.contains("error (m), log scale");
    assert_eq!(log, (hi / lo).log10() > 2.0, "errors over [{lo:e}, {hi:e}]");
    if !log {
        let ticks = y_ticks(&error_svg);
        let (t_lo, t_hi) = (
            ticks[0].min(ticks[ticks.len() - 1]),
            ticks[0].max(ticks[ticks.len() - 1]),
        );
        assert!(
            t_lo <= hi && t_hi >= lo,
            "linear labels {ticks:?} within the data"
        );
    }
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}

#[test]
fn the_error_plot_is_logarithmic_over_many_decades_or_on_request() {
    let scratch = scratch("scale");
    // A 300-step run: its errors (read back from its CSV) must span more than two decades
    // (the Trunk falls from straight to its sag in about 3 s, then the tip settles on the target).
    let auto = scratch.join("auto");
    control(&auto, 300, &[]);
    let data = csv_column(&auto.join("error.csv"), 1);
    let (lo, hi) = positive_range(&data);
    assert!((hi / lo).log10() > 2.0, "[{lo:e}, {hi:e}]");
    let svg = svg_text(&auto.join("error.svg"));
    assert!(svg.contains("error (m), log scale"));
    log_labels_cover(&svg, &data);
    // The summary draws the same error panel, on the same scale.
    assert!(svg_text(&auto.join("summary.svg")).contains("error (m), log scale"));

    let linear = scratch.join("linear");
    control(&linear, 100, &["--error-scale", "linear"]);
    let svg = svg_text(&linear.join("error.svg"));
    assert!(svg.contains("error (m)") && !svg.contains("log scale"));

    // A short run whose errors span less than two decades, on a log axis on request.
    let forced = scratch.join("log");
    control(&forced, 10, &["--error-scale", "log"]);
    let data = csv_column(&forced.join("error.csv"), 1);
    let svg = svg_text(&forced.join("error.svg"));
    assert!(svg.contains("error (m), log scale"));
    log_labels_cover(&svg, &data);

    let bad = run(&[
        "control",
        "scenes/trunk.toml",
        "--effector",
        "tip",
        "--target",
        "0,0,0.19",
        "--error-scale",
        "lg",
    ]);
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("auto, linear or log"), "{err}");
    std::fs::remove_dir_all(&scratch).unwrap();
}

#[test]
fn calibrate_writes_a_summary_of_the_loss_and_every_parameter() {
    let dir = scratch("calibrate");
    let obs = dir.join("obs");
    ok(&run(&[
        "simulate",
        "scenes/beam.toml",
        "--set",
        "soft_body.beam.young_modulus=2.5e5",
        "--out",
        obs.to_str().unwrap(),
    ]));
    let out = dir.join("calib");
    let params = ["young_modulus:beam", "poisson_ratio:beam"];
    let ran = run(&[
        "calibrate",
        "scenes/beam.toml",
        "--observed",
        obs.join("final.json").to_str().unwrap(),
        "--param",
        params[0],
        "--param",
        params[1],
        "--init",
        "young_modulus:beam=7.5e5",
        "--out",
        out.to_str().unwrap(),
        "--view",
    ]);
    let json: Value = serde_json::from_slice(&ok(&ran).stdout).unwrap();
    // The report, its plots and summary; with --view the fitted run's frames (the initial
    // one and one per step of the scene), its index, final state and page.
    let scene = Scene::load(Path::new("scenes/beam.toml"), &[]).unwrap();
    let steps = scene.simulation.steps;
    let body = scene.bodies[0].name().to_string();
    let mut expected: Vec<String> = [
        "calibration.json",
        "loss.svg",
        "loss.csv",
        "young_modulus_beam.svg",
        "young_modulus_beam.csv",
        "poisson_ratio_beam.svg",
        "poisson_ratio_beam.csv",
        "summary.svg",
        "final.json",
        "view.html",
    ]
    .map(String::from)
    .to_vec();
    expected.push(format!("{body}.pvd"));
    expected.extend((0..=steps).map(|k| format!("{body}_{k:06}.vtu")));
    holds_exactly(
        &out,
        &expected.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    // The fitted run reproduces the observation: every node within √(2 × final loss) of it.
    let fitted: Value =
        serde_json::from_slice(&std::fs::read(out.join("final.json")).unwrap()).unwrap();
    let observed: Value =
        serde_json::from_slice(&std::fs::read(obs.join("final.json")).unwrap()).unwrap();
    let final_loss = json["loss"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .as_f64()
        .unwrap();
    let positions = |v: &Value| -> Vec<f64> {
        v["soft_bodies"][0]["positions"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| p.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()))
            .collect()
    };
    let distance: f64 = positions(&fitted)
        .iter()
        .zip(positions(&observed))
        .map(|(a, b)| (a - b).powi(2))
        .sum::<f64>()
        .sqrt();
    assert!(
        distance <= (2.0 * final_loss).sqrt() * 1.001 + 1e-12,
        "{distance:e} vs loss {final_loss:e}"
    );
    let html = std::fs::read_to_string(out.join("view.html")).unwrap();
    assert_eq!(
        page_data(&html)["times"].as_array().unwrap().len(),
        steps + 1
    );
    let stderr = String::from_utf8_lossy(&ran.stderr);
    assert!(stderr.contains(&out.join("summary.svg").display().to_string()));

    // One line for the loss and one per parameter, a point per iterate.
    let iterates = json["iterations"].as_u64().unwrap() as usize + 1;
    let summary = svg_text(&out.join("summary.svg"));
    assert_eq!(series_lines(&summary), vec![iterates; 1 + params.len()]);
    let shown: Vec<String> = texts(&summary).into_iter().map(|(t, _)| t).collect();
    for entry in [
        "loss",
        "young_modulus:beam (Pa)",
        "poisson_ratio:beam (1)",
        "Key numbers",
    ] {
        assert!(shown.iter().any(|t| t == entry), "`{entry}` in {shown:?}");
    }
    let e = json["params"]["young_modulus:beam"].as_f64().unwrap();
    assert!(shown.contains(&format!("young_modulus:beam: {e:.6e} Pa")));

    // A converged fit's loss falls by far more than two decades: a log axis covering it.
    let loss: Vec<f64> = json["loss"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(json["converged"], true);
    let svg = svg_text(&out.join("loss.svg"));
    assert!(svg.contains("log scale"));
    log_labels_cover(&svg, &loss);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn simulate_view_writes_the_page_beside_the_frames() {
    let dir = scratch("view");
    let out = dir.join("beam");
    let steps = 3;
    let ran = run(&[
        "simulate",
        "scenes/beam.toml",
        "--steps",
        &steps.to_string(),
        "--out",
        out.to_str().unwrap(),
        "--view",
    ]);
    ok(&ran);
    let page = out.join("view.html");
    let html = std::fs::read_to_string(&page).unwrap();
    // The page of `diffsoro view`: its run data lists the initial frame and one per step.
    assert_eq!(
        page_data(&html)["times"].as_array().unwrap().len(),
        steps + 1
    );
    let stderr = String::from_utf8_lossy(&ran.stderr);
    assert!(stderr.contains(&page.display().to_string()), "{stderr}");
    // It is the page `diffsoro view` writes for the same folder.
    ok(&run(&[
        "view",
        out.to_str().unwrap(),
        "--out",
        dir.join("again.html").to_str().unwrap(),
    ]));
    let again = std::fs::read_to_string(dir.join("again.html")).unwrap();
    assert_eq!(html, again);

    let without_out = run(&["simulate", "scenes/beam.toml", "--steps", "1", "--view"]);
    assert!(!without_out.status.success());
    assert!(String::from_utf8_lossy(&without_out.stderr).contains("--out"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The run data embedded in a viewer page.
fn page_data(html: &str) -> Value {
    let start_tag = "<script type=\"application/json\" id=\"run-data\">";
    let start = html.find(start_tag).expect("run-data element") + start_tag.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

#[test]
fn control_view_writes_the_frames_of_the_run_and_its_page() {
    let folder = scratch("control-view");
    let dir = folder.join("out");
    let steps = 5;
    let json = control(&dir, steps, &["--view"]);
    // A frame per body (the Trunk has one) at the start and after each step.
    let scene = Scene::load(Path::new("scenes/trunk.toml"), &[]).unwrap();
    let body = scene.bodies[0].name().to_string();
    assert_eq!(scene.bodies.len(), 1);
    for k in 0..=steps {
        assert!(
            dir.join(format!("{body}_{k:06}.vtu")).is_file(),
            "frame {k}"
        );
    }
    assert!(!dir.join(format!("{body}_{:06}.vtu", steps + 1)).exists());
    let html = std::fs::read_to_string(dir.join("view.html")).unwrap();
    assert_eq!(
        page_data(&html)["times"].as_array().unwrap().len(),
        steps + 1
    );
    // final.json is the state the report ends on: its tip is the reported final position.
    let last: Value =
        serde_json::from_slice(&std::fs::read(dir.join("final.json")).unwrap()).unwrap();
    let tip = last["effectors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "tip")
        .expect("the tip in final.json");
    assert_eq!(tip["position"], json["final_position"]);
    assert!(dir.join("summary.svg").is_file());
    // No staging folder is left.
    let hidden: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(hidden.is_empty(), "{hidden:?}");

    let target = format!("{},{},{}", TARGET[0], TARGET[1], TARGET[2]);
    let refused = run(&[
        "control",
        "scenes/trunk.toml",
        "--static",
        "--effector",
        "tip",
        "--target",
        &target,
        "--out",
        dir.parent().unwrap().join("static").to_str().unwrap(),
        "--view",
    ]);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.trim().lines().count() == 1 && err.contains("--view"),
        "{err}"
    );
    assert!(!dir.parent().unwrap().join("static").exists());
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}

/// The effector names and actuator (name, unit) pairs of a scene, in scene order.
fn effectors_and_actuators(scene: &Scene) -> (Vec<String>, Vec<(String, &'static str)>) {
    let mut effectors = Vec::new();
    let mut actuators = Vec::new();
    for b in 0..scene.bodies.len() {
        let act = scene.body_actuation(b);
        effectors.extend(act.effectors.iter().map(|e| e.name.clone()));
        actuators.extend(act.actuators.iter().map(|a| {
            let unit = match a.kind {
                ActuatorKind::Cable(_) => "N",
                ActuatorKind::Pneumatic(_) => "Pa",
                ActuatorKind::Servo(_) => "N·m",
            };
            (a.name.clone(), unit)
        }));
    }
    (effectors, actuators)
}

#[test]
fn simulate_summarises_a_scene_with_an_effector_and_only_then() {
    let dir = scratch("simulate");
    let out = dir.join("trunk");
    let steps = 20;
    ok(&run(&[
        "simulate",
        "scenes/trunk.toml",
        "--steps",
        &steps.to_string(),
        "--set",
        "soft_body.trunk.cable.c1.force=0.3",
        "--out",
        out.to_str().unwrap(),
    ]));
    let scene = Scene::load(Path::new("scenes/trunk.toml"), &[]).unwrap();
    let (effectors, actuators) = effectors_and_actuators(&scene);
    assert!(!effectors.is_empty() && !actuators.is_empty());
    let summary = svg_text(&out.join("summary.svg"));
    // A path per effector, its x, y, z displacements, a line per actuator: a point per frame
    // (the initial one and one per step).
    let lines = effectors.len() * 4 + actuators.len();
    assert_eq!(series_lines(&summary), vec![steps + 1; lines]);
    let shown: Vec<String> = texts(&summary).into_iter().map(|(t, _)| t).collect();
    for e in &effectors {
        for entry in [e.clone(), format!("{e} Δx (m)"), format!("{e} Δz (m)")] {
            assert!(shown.contains(&entry), "`{entry}` in {shown:?}");
        }
    }
    for (a, unit) in &actuators {
        assert!(shown.contains(&format!("{a} ({unit})")), "{a}");
    }
    assert!(shown.contains(&format!("frames: {}", steps + 1)));

    // A scene without an effector has nothing to summarise: no summary.svg.
    let rigid = Scene::load(Path::new("scenes/cube_drop.toml"), &[]).unwrap();
    assert!(effectors_and_actuators(&rigid).0.is_empty());
    let plain = dir.join("cube");
    ok(&run(&[
        "simulate",
        "scenes/cube_drop.toml",
        "--steps",
        "2",
        "--out",
        plain.to_str().unwrap(),
    ]));
    assert!(plain.join("final.json").is_file());
    assert!(!plain.join("summary.svg").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn contact_force_limiting_summarises_the_first_effector_and_the_contact_forces() {
    let folder = scratch("grasp");
    let dir = folder.join("out");
    let steps = 5;
    let ran = run(&[
        "control",
        "scenes/gripper_grasp.toml",
        "--effector",
        "tip",
        "--target",
        "0.05,0.0575,0.01",
        "--effector",
        "tip_right",
        "--target",
        "0.05,0.0575,0.01",
        "--contact-weight",
        "1e-4",
        "--steps",
        &steps.to_string(),
        "--out",
        dir.to_str().unwrap(),
        "--view",
    ]);
    let json: Value = serde_json::from_slice(&ok(&ran).stdout).unwrap();
    let scene = Scene::load(Path::new("scenes/gripper_grasp.toml"), &[]).unwrap();
    let (_, actuators) = effectors_and_actuators(&scene);
    let names: Vec<&str> = actuators.iter().map(|(n, _)| n.as_str()).collect();
    // Every actuator of the Gripper (two angle-driven servos) is a control variable.
    assert_eq!(json["actuators"], serde_json::json!(names));
    assert_eq!(json["position_history"].as_array().unwrap().len(), steps);
    let summary = svg_text(&dir.join("summary.svg"));
    // The path, the error, one line per actuator, the contact forces.
    assert_eq!(series_lines(&summary), vec![steps; 3 + names.len()]);
    let shown: Vec<String> = texts(&summary).into_iter().map(|(t, _)| t).collect();
    for entry in ["tip", "target", "contact force", "strategy: optimised"] {
        assert!(shown.iter().any(|t| t == entry), "`{entry}` in {shown:?}");
    }
    for n in &names {
        assert!(
            shown.iter().any(|t| t.starts_with(&format!("{n} ("))),
            "{n}"
        );
    }
    // The frames of every soft body, the initial one and one per step.
    for body in &scene.bodies {
        let pvd = std::fs::read_to_string(dir.join(format!("{}.pvd", body.name()))).unwrap();
        assert_eq!(
            pvd.matches("<DataSet").count(),
            steps + 1,
            "{}",
            body.name()
        );
    }
    let html = std::fs::read_to_string(dir.join("view.html")).unwrap();
    assert_eq!(
        page_data(&html)["times"].as_array().unwrap().len(),
        steps + 1
    );
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}
