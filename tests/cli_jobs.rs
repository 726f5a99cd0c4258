//! The `calibrate` and `control` commands' input checks (docs/cli.md): an unknown parameter,
//! a bad `--init` or `--bounds`, an observation whose node count differs from the mesh, an
//! unknown effector, a malformed target, an unusable `--out` each give a one-line error naming
//! the culprit; `--set` works on every scene-reading command; a failed run leaves no `--out`
//! folder behind. `diffsoro --help` lists them one line each, their own `--help` in full.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::cli_support;
use cli_support::{run, scratch};

use serde_json::Value;

fn assert_one_line_error(out: &Output, needles: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "expected failure: {err}");
    // Warnings about the scene (e.g. embedded points just outside a mesh under the default
    // embed_tolerance) may come first; the error itself is one line.
    assert_eq!(
        err.trim_end()
            .lines()
            .filter(|l| !l.starts_with("warning: "))
            .count(),
        1,
        "one line expected: {err}"
    );
    for needle in needles {
        assert!(err.contains(needle), "`{needle}` not in: {err}");
    }
    assert!(out.stdout.is_empty());
}

#[test]
fn the_command_list_is_one_line_per_command_and_each_help_is_in_full() {
    let out = run(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    // The lines between `Commands:` and the blank line after them: one per command, each
    // `  NAME  summary`, no continuation lines.
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    let names: Vec<&str> = commands
        .iter()
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    assert_eq!(
        names,
        [
            "info",
            "simulate",
            "calibrate",
            "control",
            "optimize",
            "bench",
            "reduce",
            "dynamics",
            "view",
            "demo",
            "help"
        ],
        "{help}"
    );
    // Each a summary of one sentence that fits a 100-column terminal with its name (the long
    // texts of `calibrate` and `control` were whole paragraphs on one line).
    for l in &commands {
        assert!(
            l.starts_with("  ") && !l.starts_with("   "),
            "{l:?} in {help}"
        );
        assert!(
            l.chars().count() <= 100,
            "{} columns: {l}",
            l.chars().count()
        );
        assert!(!l.contains(". ") && !l.contains("; "), "{l}");
    }
    // The long texts stay in the commands' own help.
    let calibrate = String::from_utf8_lossy(&run(&["calibrate", "--help"]).stdout).to_string();
    assert!(
        calibrate.contains("`converged` is true only when the loss fell to 1e-6"),
        "{calibrate}"
    );
    let control = String::from_utf8_lossy(&run(&["control", "--help"]).stdout).to_string();
    assert!(
        control.contains("With `--contact-weight`, limit the contact forces"),
        "{control}"
    );
}

/// The beam's final state after one step, as `simulate` writes it.
fn beam_observation(dir: &Path) -> (PathBuf, Value) {
    let out = run(&["simulate", "scenes/beam.toml", "--steps", "1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let state: Value = serde_json::from_slice(&out.stdout).unwrap();
    let path = dir.join("observed.json");
    std::fs::write(&path, serde_json::to_vec(&state).unwrap()).unwrap();
    (path, state)
}

#[test]
fn calibrate_rejects_bad_parameters_and_observations() {
    let dir = scratch("calibrate");
    let (observed, state) = beam_observation(&dir);
    let observed = observed.to_str().unwrap();
    let nodes = state["soft_bodies"][0]["positions"]
        .as_array()
        .unwrap()
        .len();
    let calibrate = |extra: &[&str]| {
        let mut args = vec!["calibrate", "scenes/beam.toml", "--observed", observed];
        args.extend_from_slice(extra);
        run(&args)
    };
    assert_one_line_error(
        &calibrate(&["--param", "viscosity:beam"]),
        &["viscosity:beam", "unknown kind", "young_modulus:NAME"],
    );
    assert_one_line_error(
        &calibrate(&["--param", "young_modulus:bream"]),
        &["young_modulus:bream", "no soft body `bream`", "beam"],
    );
    assert_one_line_error(
        &calibrate(&["--param", "actuator:c1"]),
        &["actuator:c1", "no actuator `c1`"],
    );
    assert_one_line_error(
        &calibrate(&[
            "--param",
            "young_modulus:beam",
            "--param",
            "young_modulus:beam",
        ]),
        &["more than once"],
    );
    assert_one_line_error(
        &calibrate(&[
            "--param",
            "young_modulus:beam",
            "--init",
            "poisson_ratio:beam=0.3",
        ]),
        &["--init", "not one of the --param"],
    );
    assert_one_line_error(
        &calibrate(&[
            "--param",
            "poisson_ratio:beam",
            "--init",
            "poisson_ratio:beam=0.5",
        ]),
        &["--init", "out of range", "0 ≤ ν < 0.5"],
    );
    assert_one_line_error(
        &calibrate(&[
            "--param",
            "poisson_ratio:beam",
            "--bounds",
            "poisson_ratio:beam=0.1,0.3",
            "--init",
            "poisson_ratio:beam=0.35",
        ]),
        &["--init", "out of range", "0.1 ≤ ν ≤ 0.3"],
    );
    assert_one_line_error(
        &calibrate(&[
            "--param",
            "poisson_ratio:beam",
            "--bounds",
            "poisson_ratio:beam=0,0.7",
        ]),
        &["--bounds `poisson_ratio:beam=0,0.7`", "-1 < ν < 0.5"],
    );
    assert_one_line_error(
        &calibrate(&[
            "--param",
            "young_modulus:beam",
            "--bounds",
            "young_modulus:beam=1e6",
        ]),
        &["--bounds", "NAME=LO,HI"],
    );

    // One node fewer than the mesh: an error naming the body and both counts.
    let mut short = state.clone();
    short["soft_bodies"][0]["positions"]
        .as_array_mut()
        .unwrap()
        .pop();
    let short_path = dir.join("short.json");
    std::fs::write(&short_path, serde_json::to_vec(&short).unwrap()).unwrap();
    let out = run(&[
        "calibrate",
        "scenes/beam.toml",
        "--observed",
        short_path.to_str().unwrap(),
        "--param",
        "young_modulus:beam",
    ]);
    assert_one_line_error(
        &out,
        &[
            "short.json",
            "soft body `beam`",
            &format!("{} observed node positions", nodes - 1),
            &format!("has {nodes} nodes"),
        ],
    );
    // An observation of another body.
    let mut renamed = state.clone();
    renamed["soft_bodies"][0]["name"] = Value::from("other");
    let renamed_path = dir.join("renamed.json");
    std::fs::write(&renamed_path, serde_json::to_vec(&renamed).unwrap()).unwrap();
    let out = run(&[
        "calibrate",
        "scenes/beam.toml",
        "--observed",
        renamed_path.to_str().unwrap(),
        "--param",
        "young_modulus:beam",
    ]);
    assert_one_line_error(&out, &["soft body `beam`", "not in the observation"]);
    // Not JSON.
    let garbage = dir.join("garbage.json");
    std::fs::write(&garbage, "{\"time\": 0.3,\n oops").unwrap();
    let out = run(&[
        "calibrate",
        "scenes/beam.toml",
        "--observed",
        garbage.to_str().unwrap(),
        "--param",
        "young_modulus:beam",
    ]);
    assert_one_line_error(&out, &["garbage.json", "line 2"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn control_rejects_unknown_effectors_and_malformed_targets() {
    let control = |effector: &str, target: &str| {
        run(&[
            "control",
            "scenes/trunk.toml",
            "--effector",
            effector,
            "--target",
            target,
        ])
    };
    assert_one_line_error(
        &control("thumb", "0,0,0.1"),
        &["--effector `thumb`", "no such effector", "tip"],
    );
    for (target, expected) in [
        ("0,0", "got 2 field(s)"),
        ("0,0,0,1", "got 4 field(s)"),
        ("0,x,0.1", "Y = `x` is not a number"),
        ("0,0,inf", "Z = inf is not finite"),
        ("", "got 1 field(s)"),
    ] {
        assert_one_line_error(&control("tip", target), &["--target", expected]);
    }
    let out = run(&[
        "control",
        "scenes/trunk.toml",
        "--effector",
        "tip",
        "--target",
        "-0.01,0,0.15",
        "--steps",
        "0",
    ]);
    assert_one_line_error(&out, &["--steps", "at least 1"]);
}

/// `control --contact-weight` (paper 004 Eq. 17) on the two-finger Gripper: the contract's
/// keys plus the loss's two terms, consistent with the histories it prints (α·final_error² and
/// β·‖λ_c‖² of the last step); the heuristic holds every servo at the scene's angle; the
/// contact-force chart is written; inconsistent flags are one-line errors.
#[test]
fn control_limits_contact_forces_on_the_gripper() {
    let dir = scratch("grasp");
    let grasp = |extra: &[&str]| {
        let mut args = vec![
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
            "--steps",
            "45",
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    let mut reports = Vec::new();
    for (strategy, extra) in [
        ("optimised", vec!["--max-change", "0.004"]),
        ("heuristic", vec!["--heuristic"]),
    ] {
        let out_dir = dir.join(strategy);
        let mut args = vec![
            "--contact-weight",
            "1e-4",
            "--out",
            out_dir.to_str().unwrap(),
        ];
        args.extend_from_slice(&extra);
        let out = grasp(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        for key in [
            "target",
            "final_position",
            "final_error",
            "error_history",
            "actuation_history",
            "contact_force_history",
            "effector_term",
            "contact_term",
            "loss",
        ] {
            assert!(r.get(key).is_some(), "{strategy}: key {key}");
        }
        assert_eq!(r["strategy"], strategy);
        let f = |k: &str| r[k].as_f64().unwrap();
        let last = |k: &str| r[k].as_array().unwrap().last().unwrap().as_f64().unwrap();
        assert_eq!(last("error_history"), f("final_error"));
        assert!((f("effector_term") - f("final_error").powi(2)).abs() <= 1e-15);
        assert!((f("contact_term") - 1e-4 * last("contact_force_history").powi(2)).abs() <= 1e-15);
        assert_eq!(f("loss"), f("effector_term") + f("contact_term"));
        assert_eq!(r["actuators"], serde_json::json!(["servo", "servo_right"]));
        assert_eq!(r["error_history"].as_array().unwrap().len(), 45);
        for name in ["control.json", "contact_force.svg", "contact_force.csv"] {
            assert!(out_dir.join(name).is_file(), "{strategy}: {name}");
        }
        reports.push(r);
    }
    // The heuristic commands the scene's −0.35 rad on both servos at every step.
    for row in reports[1]["actuation_history"].as_array().unwrap() {
        assert_eq!(row, &serde_json::json!([-0.35, -0.35]));
    }
    // The optimised commands change by at most --max-change per step.
    let rows = reports[0]["actuation_history"].as_array().unwrap();
    for pair in rows.windows(2) {
        let (now, next) = (pair[0].as_array().unwrap(), pair[1].as_array().unwrap());
        for (a, b) in now.iter().zip(next) {
            let d = b.as_f64().unwrap() - a.as_f64().unwrap();
            assert!(d.abs() <= 0.004 + 1e-15, "{d}");
        }
    }
    // Inconsistent flags.
    assert_one_line_error(
        &run(&[
            "control",
            "scenes/gripper_grasp.toml",
            "--effector",
            "tip",
            "--target",
            "0.05,0.0575,0.01",
            "--effector",
            "tip_right",
            "--contact-weight",
            "1e-4",
        ]),
        &["one --target per --effector", "2 effector(s), 1 target(s)"],
    );
    assert_one_line_error(
        &run(&[
            "control",
            "scenes/trunk.toml",
            "--effector",
            "tip",
            "--target",
            "0,0,0.1",
            "--heuristic",
        ]),
        &["--contact-weight"],
    );
    assert_one_line_error(
        &grasp(&["--contact-weight=-1"]),
        &["--contact-weight", "non-negative"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

fn stdout_json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `--set` reaches the scene of every scene-reading command: `calibrate` fits E over one step
/// when `--set simulation.steps=1` matches the one-step observation (E = 1e6, the scene's, from
/// 5e5); `control` runs `simulation.steps` from `--set` and starts from the cable force it
/// sets, within the `max_force` it sets and the `--max-force` it is given; `bench` and `demo`
/// accept it (a bad key is an error naming it).
#[test]
fn set_overrides_the_scene_of_every_command() {
    let dir = scratch("set");
    let (observed, _) = beam_observation(&dir);
    let report = stdout_json(&run(&[
        "calibrate",
        "scenes/beam.toml",
        "--observed",
        observed.to_str().unwrap(),
        "--param",
        "young_modulus:beam",
        "--init",
        "young_modulus:beam=5e5",
        "--set",
        "simulation.steps=1",
    ]));
    let e = report["params"]["young_modulus:beam"].as_f64().unwrap();
    assert!((e - 1e6).abs() <= 1e-6 * 1e6, "{report}");
    assert_eq!(report["converged"], true, "{report}");

    let control = |extra: &[&str]| {
        let mut args = vec![
            "control",
            "scenes/trunk.toml",
            "--effector",
            "tip",
            "--target",
            "0,0,0.15",
            "--set",
            "simulation.steps=3",
            "--set",
            "soft_body.trunk.cable.c2.force=0.1",
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    // Row 0 of the actuation is the scene's own forces clamped into the bounds.
    let report = stdout_json(&control(&[
        "--set",
        "soft_body.trunk.cable.c2.max_force=0.2",
    ]));
    assert_eq!(report["error_history"].as_array().unwrap().len(), 3);
    assert_eq!(report["actuation_history"][0][1], 0.1, "{report}");
    let report = stdout_json(&control(&["--max-force", "c2=0.05"]));
    assert_eq!(report["actuation_history"][0][1], 0.05, "{report}");
    for row in report["actuation_history"].as_array().unwrap() {
        let c2 = row[1].as_f64().unwrap();
        assert!((0.0..=0.05).contains(&c2), "{c2}");
    }
    assert_one_line_error(
        &control(&["--max-force", "c9=1"]),
        &["--max-force `c9=1`", "no force-driven actuator `c9`", "c1"],
    );
    assert_one_line_error(
        &control(&["--max-force", "c2=-1"]),
        &["--max-force `c2=-1`", "not a positive number"],
    );
    assert_one_line_error(
        &control(&["--set", "soft_body.trunk.bogus=1"]),
        &["unknown field `bogus`"],
    );

    let bench = stdout_json(&run(&[
        "bench",
        "scenes/beam.toml",
        "--steps",
        "1",
        "--set",
        "simulation.dt=0.005",
    ]));
    assert!(bench["step_ms"].as_f64().unwrap() > 0.0);
    let demo = run(&["demo", "--set", "soft_body.trunk.bogus=1"]);
    assert!(!demo.status.success());
    assert!(String::from_utf8_lossy(&demo.stderr).contains("unknown field `bogus`"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `control` on the Trunk, two steps toward (0, 0, 0.15) m, `--out out`, with `extra`.
fn control_trunk(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "control",
        "scenes/trunk.toml",
        "--effector",
        "tip",
        "--target",
        "0,0,0.15",
        "--steps",
        "2",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    run(&args)
}

/// `--out` is checked before the run: a path under a file, or a file, is a one-line error
/// naming `--out` and the path, printed before any simulation; a run that fails after the
/// check (a non-differentiable scene: full Newton) leaves no folder it created behind, and
/// keeps one that was there.
#[test]
fn out_is_checked_first_and_a_failed_run_leaves_no_folder() {
    let dir = scratch("out");
    let (observed, _) = beam_observation(&dir);
    let observed = observed.to_str().unwrap();
    let file = dir.join("a_file");
    std::fs::write(&file, "x").unwrap();
    let under_file = file.join("sub");
    let calibrate = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "calibrate",
            "scenes/beam.toml",
            "--observed",
            observed,
            "--param",
            "young_modulus:beam",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    let control = control_trunk;
    for out in [calibrate(&file, &[]), control(&file, &[])] {
        assert_one_line_error(&out, &["--out", "a_file", "not a folder"]);
    }
    for out in [calibrate(&under_file, &[]), control(&under_file, &[])] {
        assert_one_line_error(&out, &["--out", "a_file/sub", "cannot create the folder"]);
    }
    let newton = ["--set", "simulation.newton_iterations=3"];
    let fresh = dir.join("fresh").join("calib");
    let out = calibrate(&fresh, &newton);
    assert_one_line_error(&out, &["newton_iterations"]);
    assert!(!dir.join("fresh").exists(), "no folder left behind");
    let fresh = dir.join("fresh_control");
    let out = control(&fresh, &newton);
    assert!(!out.status.success());
    assert!(!fresh.exists(), "no folder left behind");
    let kept = dir.join("kept");
    std::fs::create_dir_all(&kept).unwrap();
    assert!(!calibrate(&kept, &newton).status.success());
    assert!(kept.is_dir(), "a folder that was there stays");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A run's report files are written as one unit (`chart::FileSet`): when one of them cannot
/// be written (here a folder sits where `control.json` goes), the error names it and none of
/// the others appears, while the files of an earlier run stay as they were.
#[test]
fn report_files_are_written_all_or_nothing() {
    let dir = scratch("all-or-nothing");
    std::fs::create_dir_all(dir.join("control.json")).unwrap();
    std::fs::write(dir.join("error.csv"), "earlier run").unwrap();
    let out = control_trunk(&dir, &[]);
    assert_one_line_error(&out, &["control.json", "is a folder"]);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["control.json", "error.csv"]);
    assert_eq!(
        std::fs::read_to_string(dir.join("error.csv")).unwrap(),
        "earlier run"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
