//! Every worked example of the documentation is run, so none can rot.
//!
//! `documented_commands` reads README.md and docs/*.md, takes every `diffsoro …` line of their
//! ```sh and ```console blocks (continuation lines joined; `echo '…' > FILE` lines write the
//! file; other programs such as `cargo` or `python3` are left to their own tests) and runs them
//! once, in file and block order, in a scratch folder where `scenes/`, `meshes/` and `urdf/`
//! link to the clone's, so `--out out/…` never writes into the clone. Every command must
//! succeed; a ```console block's shown output must match (exactly when it is JSON, otherwise
//! by the keys it names). Under cargo-nextest, whose tests are processes of their own, the
//! first process of a run runs the commands and the others read what they printed
//! (`shared_run`).
//!
//! The other tests look a command's output up by its exact text — a test fails when the
//! documentation no longer shows that command — and check the numbers the documentation
//! states about it, against values derived independently where the documentation claims
//! physics (Timoshenko's beam, the discrete motion down an incline, a calibration recovering
//! the value the observation was made with, control reaching a pose the robot reaches).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One command as shown in the documentation and what it printed.
#[derive(serde::Serialize, serde::Deserialize)]
struct Ran {
    file: String,
    stdout: String,
    stderr: String,
    success: bool,
    /// The output shown under it in a ```console block, if any.
    shown: Option<String>,
}

/// Every documented command (whitespace-normalised text → its run in [`scratch_folder`]).
fn documented_commands() -> &'static HashMap<String, Ran> {
    static RUNS: OnceLock<HashMap<String, Ran>> = OnceLock::new();
    RUNS.get_or_init(|| match std::env::var("NEXTEST_RUN_ID") {
        Ok(run) => shared_run(&run),
        Err(_) => run_all(),
    })
}

/// Under cargo-nextest each test is a process of its own, and they ran the commands at once
/// into the one scratch folder. Now the first process of a nextest run (`NEXTEST_RUN_ID`)
/// runs them and saves what they printed beside the folder; the others wait on a lock and
/// read it. The run's id is written after the outputs, so a process that died midway leaves
/// the next one to run the commands again.
fn shared_run(run: &str) -> HashMap<String, Ran> {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(tmp).unwrap();
    let lock = std::fs::File::create(tmp.join("doc-examples.lock")).unwrap();
    lock.lock().unwrap();
    let (saved, stamp) = (
        tmp.join("doc-examples.runs.json"),
        tmp.join("doc-examples.run-id"),
    );
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == run)
        && let Ok(text) = std::fs::read_to_string(&saved)
    {
        return serde_json::from_str(&text).unwrap();
    }
    let runs = run_all();
    std::fs::write(&saved, serde_json::to_string(&runs).unwrap()).unwrap();
    std::fs::write(&stamp, run).unwrap();
    runs
}

/// The markdown files of the documentation, README first.
fn doc_files() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    let mut files = vec![root().join("README.md")];
    files.extend(docs);
    files
}

/// The (command, shown output) lines of the ```sh and ```console blocks of `text`.
fn commands_of(text: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let console = match line.trim_end() {
            "```sh" => false,
            "```console" => true,
            _ => continue,
        };
        let mut block = Vec::new();
        for l in lines.by_ref() {
            if l.trim_end() == "```" {
                break;
            }
            block.push(l);
        }
        // Join continuation lines.
        let mut joined: Vec<String> = Vec::new();
        let mut pending = String::new();
        for l in block {
            if let Some(head) = l.strip_suffix('\\') {
                pending.push_str(head);
                pending.push(' ');
            } else {
                pending.push_str(l);
                joined.push(std::mem::take(&mut pending));
            }
        }
        let mut k = 0;
        while k < joined.len() {
            let line = joined[k].trim();
            k += 1;
            let command = if console {
                match line.strip_prefix("$ ") {
                    Some(c) => c,
                    None => continue,
                }
            } else {
                line
            };
            // A trailing comment (`cargo run --release     # builds …`) is not part of it.
            let command = match command.find(" #") {
                Some(i) if !command.starts_with("echo") => &command[..i],
                _ => command,
            };
            let mut shown = None;
            if console {
                let mut output = Vec::new();
                while k < joined.len() && !joined[k].trim_start().starts_with("$ ") {
                    output.push(joined[k].clone());
                    k += 1;
                }
                let output = output.join("\n");
                if !output.trim().is_empty() {
                    shown = Some(output);
                }
            }
            out.push((normalise(command), shown));
        }
    }
    out
}

fn normalise(command: &str) -> String {
    command.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Splits a command line into words (single quotes group; no other shell syntax).
fn words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in command.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                any = false;
            }
            c => word.push(c),
        }
    }
    if any || !word.is_empty() {
        words.push(word);
    }
    words
}

/// Where the documented commands run (`target/tmp/doc-examples`).
fn scratch_folder() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("doc-examples")
}

fn run_all() -> HashMap<String, Ran> {
    // Under cargo's own scratch folder for integration tests (`target/tmp`), replaced by each
    // run: the documented commands' outputs stay there to look at, and nothing collects in the
    // system's temporary folder (a static is never dropped, so it could not be removed).
    let scratch = scratch_folder();
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    for folder in ["scenes", "meshes", "urdf"] {
        std::os::unix::fs::symlink(root().join(folder), scratch.join(folder)).unwrap();
    }
    let mut runs = HashMap::new();
    for file in doc_files() {
        let name = file.strip_prefix(root()).unwrap().display().to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        for (command, shown) in commands_of(&text) {
            let mut w = words(&command);
            // `> FILE`: stdout goes to the file.
            let redirect = match w.iter().position(|x| x == ">") {
                Some(i) => {
                    let target = w.get(i + 1).cloned();
                    w.truncate(i);
                    target
                }
                None => None,
            };
            let (stdout, stderr, success) = match w.first().map(String::as_str) {
                Some("diffsoro") if !runs.contains_key(&command) => {
                    let out = Command::new(env!("CARGO_BIN_EXE_diffsoro"))
                        .args(&w[1..])
                        .current_dir(&scratch)
                        .output()
                        .unwrap();
                    (
                        String::from_utf8_lossy(&out.stdout).into_owned(),
                        String::from_utf8_lossy(&out.stderr).into_owned(),
                        out.status.success(),
                    )
                }
                Some("echo") => (format!("{}\n", w[1..].join(" ")), String::new(), true),
                _ => continue,
            };
            if let Some(target) = redirect {
                std::fs::write(scratch.join(target), &stdout).unwrap();
            }
            let file = name.clone();
            runs.insert(
                command,
                Ran {
                    file,
                    stdout,
                    stderr,
                    success,
                    shown,
                },
            );
        }
    }
    runs
}

/// The run of the documented command `command` (its text as shown, whitespace aside).
fn ran(command: &str) -> &'static Ran {
    let runs = documented_commands();
    let key = normalise(command);
    let run = runs
        .get(&key)
        .unwrap_or_else(|| panic!("the documentation no longer shows `{key}`"));
    assert!(run.success, "`{key}` ({}) failed: {}", run.file, run.stderr);
    run
}

fn json(command: &str) -> Value {
    serde_json::from_str(&ran(command).stdout).unwrap()
}

/// The scratch folder, once the documented commands have run in it.
fn scratch() -> PathBuf {
    documented_commands();
    scratch_folder()
}

/// The keys named in a shown output (`"name":`).
fn named_keys(text: &str) -> Vec<String> {
    text.split('"')
        .collect::<Vec<_>>()
        .windows(2)
        .filter(|w| w[1].trim_start().starts_with(':'))
        .map(|w| w[0].to_string())
        .collect()
}

#[test]
fn every_documented_command_runs_and_prints_what_is_shown() {
    let runs = documented_commands();
    assert!(
        runs.len() >= 20,
        "only {} documented commands found",
        runs.len()
    );
    for (command, run) in runs {
        assert!(
            run.success,
            "`{command}` ({}) failed: {}",
            run.file, run.stderr
        );
        let Some(shown) = &run.shown else { continue };
        match serde_json::from_str::<Value>(shown) {
            Ok(expected) => {
                let got: Value = serde_json::from_str(&run.stdout).unwrap();
                assert_eq!(got, expected, "`{command}` ({})", run.file);
            }
            Err(_) => {
                let got: Value = serde_json::from_str(run.stdout.trim()).unwrap();
                for key in named_keys(shown) {
                    assert!(
                        got.get(&key).is_some(),
                        "`{command}` ({}): no `{key}`",
                        run.file
                    );
                }
            }
        }
    }
}

fn effector(state: &Value, name: &str) -> [f64; 3] {
    let e = state["effectors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .unwrap();
    let p = e["position"].as_array().unwrap();
    [0, 1, 2].map(|i| p[i].as_f64().unwrap())
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

/// Runs the binary (for a reference the documentation does not show as a command).
fn run_json(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_diffsoro"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// README: the cantilever's sag as a fraction of Timoshenko's, on beam_2 and beam_3.
#[test]
fn the_cantilever_sags_by_the_stated_fraction_of_timoshenko() {
    // Timoshenko: w = qL⁴/(8EI) + qL²/(2κGA), square section h = 10 mm, ν = 0.3, Cowper's
    // κ = 10(1 + ν)/(12 + 11ν) for a rectangle.
    let (e, nu, l, h, rho, g): (f64, f64, f64, f64, f64, f64) = (1e8, 0.3, 0.1, 0.01, 1000.0, 9.81);
    let q = rho * g * h * h;
    let i = h.powi(4) / 12.0;
    let shear = e / (2.0 * (1.0 + nu));
    let kappa = 10.0 * (1.0 + nu) / (12.0 + 11.0 * nu);
    let timoshenko = q * l.powi(4) / (8.0 * e * i) + q * l * l / (2.0 * kappa * shear * h * h);
    assert!(
        (timoshenko - 0.1487e-3).abs() < 0.00005e-3,
        "README: 0.1487 mm, {timoshenko}"
    );
    let state =
        json("diffsoro simulate scenes/beam.toml --static --set soft_body.beam.young_modulus=1e8");
    let tip = effector(&state, "tip");
    let sag = -tip[2];
    assert!(
        (sag - 0.1228e-3).abs() < 0.00005e-3,
        "README: 0.1228 mm, {sag}"
    );
    // README: 82.6 % on beam_2, 93.0 % on beam_3 (to the stated digit).
    assert!(
        (sag / timoshenko - 0.826).abs() < 0.0005,
        "{}",
        sag / timoshenko
    );
    let fine = run_json(&[
        "simulate",
        "scenes/beam.toml",
        "--static",
        "--set",
        "soft_body.beam.young_modulus=1e8",
        "--set",
        "soft_body.beam.mesh=../meshes/beam_3.msh",
    ]);
    let fine_sag = -effector(&fine, "tip")[2];
    assert!(
        (fine_sag / timoshenko - 0.930).abs() < 0.0005,
        "{}",
        fine_sag / timoshenko
    );
    // The damped fall (at the scene's E = 1e6 Pa) settles where `--static` puts the tip.
    let fallen = json(
        "diffsoro simulate scenes/beam.toml --steps 200 --set soft_body.beam.rayleigh_mass=50 --out out/beam",
    );
    let equilibrium = run_json(&["simulate", "scenes/beam.toml", "--static"]);
    let (a, b) = (effector(&fallen, "tip"), effector(&equilibrium, "tip"));
    assert!(
        (b[2] + 0.01214).abs() < 0.000005,
        "README: 12.14 mm below, {b:?}"
    );
    for k in 0..3 {
        assert!((a[k] - b[k]).abs() < 1e-9, "{a:?} vs {b:?}");
    }
    assert!(scratch().join("out/beam/beam.pvd").is_file());
}

/// README: the incline, sliding at μ = 0.2 as implicit Euler moves a body under a constant
/// acceleration.
#[test]
fn the_cube_slides_down_the_incline_as_implicit_euler_predicts() {
    let rest = run_json(&["simulate", "scenes/contact_incline.toml", "--steps", "0"]);
    let state = json("diffsoro simulate scenes/contact_incline.toml --set contact.friction=0.2");
    let (x0, x1) = (effector(&rest, "tip"), effector(&state, "tip"));
    let theta = 20f64.to_radians();
    let slope = [-theta.cos(), 0.0, -theta.sin()]; // down the slope
    let along: f64 = (0..3).map(|k| (x1[k] - x0[k]) * slope[k]).sum();
    let a = 9.81 * (theta.sin() - 0.2 * theta.cos());
    let (h, n) = (0.01, 50.0);
    let discrete = a * h * h * n * (n + 1.0) / 2.0;
    assert!((a - 1.512).abs() < 0.0005, "README: a = 1.512 m/s², {a}");
    assert!(
        (discrete - 0.1927).abs() < 0.00005,
        "README: 0.1927 m, {discrete}"
    );
    assert!((0.5 * a * 0.25 - 0.1889).abs() < 0.00005);
    // The cube slides as a rigid block on a frictional plane: within 0.1 % of the discrete
    // motion (its own deformation and the first steps' contact settling aside).
    assert!(
        (along - discrete).abs() < 1e-3 * discrete,
        "along {along}, predicted {discrete}"
    );
    assert!(
        (along - 0.1927).abs() < 0.00005,
        "README: 0.1927 m, {along}"
    );
    // At the scene's μ = 0.5 > tan 20° it sticks.
    let stuck = run_json(&["simulate", "scenes/contact_incline.toml"]);
    let moved: f64 = (0..3)
        .map(|k| (effector(&stuck, "tip")[k] - x0[k]).powi(2))
        .sum();
    assert!(moved.sqrt() < 1e-3, "{}", moved.sqrt());
}

/// README: pulling cable c1 lifts the Trunk's tip toward +y.
#[test]
fn pulling_c1_lifts_the_trunk_tip() {
    let pulled = json(
        "diffsoro simulate scenes/trunk.toml --static --set soft_body.trunk.cable.c1.force=0.5",
    );
    let rest = run_json(&["simulate", "scenes/trunk.toml", "--static"]);
    let rest_rows = run_json(&["simulate", "scenes/trunk.toml", "--steps", "0"]);
    let (y0, y1) = (effector(&rest, "tip")[1], effector(&pulled, "tip")[1]);
    assert!(
        (y0 + 0.1515).abs() < 0.00005 && (y1 + 0.1039).abs() < 0.00005,
        "{y0} {y1}"
    );
    let c1 = |s: &Value| f(&s["actuators"][0]["value"]);
    assert_eq!(pulled["actuators"][0]["name"], "c1");
    assert_eq!(f(&pulled["actuators"][0]["force"]), 0.5);
    // c1 (on +y) is stretched on the outside of the sag; pulling it shortens it.
    let (straight, sagged, short) = (c1(&rest_rows), c1(&rest), c1(&pulled));
    assert!(
        short < sagged && straight < short,
        "{straight} {sagged} {short}"
    );
    for (length, documented) in [(sagged, 0.1965), (straight, 0.1846), (short, 0.1878)] {
        assert!((length - documented).abs() < 0.00005, "{length} m");
    }
}

/// docs/cli.md: `--markers-out` writes the Trunk's two markers at the 51 saved states, in
/// mm, the last ones the final state's `markers` (m), the node marker its node; c2 (on −x)
/// pulls the tip toward −x.
#[test]
fn the_trunk_markers_file_holds_every_saved_state() {
    let state = json(
        "diffsoro simulate scenes/trunk.toml --steps 50 --set soft_body.trunk.cable.c2.force=0.5 \
         --out out/trunk_markers --markers-out out/trunk_markers/markers.csv --marker-unit mm",
    );
    let text = std::fs::read_to_string(scratch().join("out/trunk_markers/markers.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("time,marker,x,y,z"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 102);
    for (k, pair) in rows.chunks(2).enumerate() {
        // Times are steps × dt, the state's time, exactly.
        let t = k as f64 * 0.01;
        assert_eq!(pair[0][0].parse::<f64>().unwrap(), t);
        assert_eq!(pair[1][0].parse::<f64>().unwrap(), t);
        assert_eq!((pair[0][1], pair[1][1]), ("tip", "tip_post"));
    }
    let mm = |row: &[&str]| [2, 3, 4].map(|i| row[i].parse::<f64>().unwrap());
    // At rest the tip node is at the centre of the tip face, 195 mm up the axis.
    assert_eq!(mm(&rows[0]), [0.0, 0.0, 195.0]);
    let node = &state["soft_bodies"][0]["positions"][1];
    for (row, marker) in rows[100..].iter().zip(state["markers"].as_array().unwrap()) {
        assert_eq!(marker["name"], row[1]);
        for (i, got) in mm(row).into_iter().enumerate() {
            let metres = f(&marker["position"][i]);
            assert!(
                (got - 1000.0 * metres).abs() <= 1e-12 * got.abs(),
                "{got} {metres}"
            );
        }
    }
    assert_eq!(state["markers"][0]["position"], *node);
    assert!(mm(&rows[100])[0] < -10.0, "{:?}", mm(&rows[100]));
}

/// README and docs/calibration.md: E recovered from guesses 3× too small and too large.
#[test]
fn calibration_recovers_the_modulus_of_the_observation() {
    for (command, iterations) in [
        (
            "diffsoro calibrate scenes/beam.toml --observed out/obs/final.json --param young_modulus:beam --init young_modulus:beam=1e5 --out out/calib",
            6,
        ),
        (
            "diffsoro calibrate scenes/beam.toml --observed out/obs/final.json --param young_modulus:beam --init young_modulus:beam=9e5",
            12,
        ),
    ] {
        let report = json(command);
        let e = f(&report["params"]["young_modulus:beam"]);
        assert!((e - 3e5).abs() < 1e-12 * 3e5, "{command}: E = {e}");
        assert_eq!(report["converged"], true);
        assert_eq!(report["iterations"], iterations, "{command}");
        let loss = report["loss"].as_array().unwrap();
        assert!(f(loss.last().unwrap()) < 1e-26, "{command}");
    }
    let report = json(
        "diffsoro calibrate scenes/beam.toml --observed out/obs/final.json --param young_modulus:beam --init young_modulus:beam=1e5 --out out/calib",
    );
    assert!((f(&report["loss"][0]) - 0.555).abs() < 0.0005);
    for file in [
        "loss.svg",
        "loss.csv",
        "young_modulus_beam.svg",
        "young_modulus_beam.csv",
    ] {
        assert!(scratch().join("out/calib").join(file).is_file(), "{file}");
    }
    let trunk = json(
        "diffsoro calibrate scenes/trunk.toml --set simulation.steps=20 --set soft_body.trunk.cable.c1.force=0.5 --observed out/trunk_obs/final.json --param young_modulus:trunk --init young_modulus:trunk=1.5e5",
    );
    let e = f(&trunk["params"]["young_modulus:trunk"]);
    assert!((e - 4.5e5).abs() < 1e-11 * 4.5e5, "E = {e}");
    assert_eq!(trunk["iterations"], 5);
}

/// README and docs/control.md: the Trunk's tip driven 11 mm sideways (to where 0.063 N on c2
/// puts it); docs/control.md: the
/// static pose of known tensions reached by `control --static`.
#[test]
fn control_reaches_the_documented_targets() {
    let rest = effector(
        &run_json(&["simulate", "scenes/trunk.toml", "--static"]),
        "tip",
    );
    let target = [-0.0123, -0.151, 0.0909];
    let pulled = effector(
        &run_json(&[
            "simulate",
            "scenes/trunk.toml",
            "--static",
            "--set",
            "soft_body.trunk.cable.c2.force=0.063",
        ]),
        "tip",
    );
    for k in 0..3 {
        assert!((pulled[k] - target[k]).abs() < 5e-5, "{pulled:?}");
    }
    let aside: f64 = (0..3)
        .map(|k| (target[k] - rest[k]).powi(2))
        .sum::<f64>()
        .sqrt();
    assert!((aside - 0.011).abs() < 0.0005, "11 mm to the side: {aside}");
    let report = json(
        "diffsoro control scenes/trunk.toml --effector tip --target -0.0123,-0.151,0.0909 --steps 400 --out out/trunk",
    );
    assert!(
        f(&report["final_error"]) < 1e-5,
        "within 0.01 mm: {}",
        report["final_error"]
    );
    assert_eq!(report["actuators"].as_array().unwrap().len(), 8);
    let svg = std::fs::read_to_string(scratch().join("out/trunk/actuation.svg")).unwrap();
    assert!(svg.contains("cable tension (N)") && svg.contains("c8 (N)"));
    // The README shows the error "on a log axis": it falls from about the 11 mm offset to
    // below 0.01 mm, over two decades, so `--error-scale auto` draws it so, in the summary too.
    let first = f(&report["error_history"][0]);
    assert!(first / f(&report["final_error"]) > 100.0, "{first}");
    let summary = std::fs::read_to_string(scratch().join("out/trunk/summary.svg")).unwrap();
    assert!(summary.contains("error (m), log scale") && summary.contains("c8 (N)"));
    // The target of `control --static` is the pose of 0.13 N on c2 and 0.06 N on c5 (to the
    // 0.1 mm the documentation rounds it to).
    let pose = run_json(&[
        "simulate",
        "scenes/trunk.toml",
        "--static",
        "--set",
        "soft_body.trunk.cable.c2.force=0.13",
        "--set",
        "soft_body.trunk.cable.c5.force=0.06",
    ]);
    let tip = effector(&pose, "tip");
    let documented = [-0.0243, -0.1479, 0.0922];
    for k in 0..3 {
        assert!((tip[k] - documented[k]).abs() < 5e-5, "{tip:?}");
    }
    let report = json(
        "diffsoro control scenes/trunk.toml --static --effector tip --target=-0.0243,-0.1479,0.0922 --steps 100 --max-force c2=1.5",
    );
    assert!(
        f(&report["final_error"]) < 2.5e-7,
        "2e-7 m: {}",
        report["final_error"]
    );
    let iterations = report["error_history"].as_array().unwrap().len();
    assert!(
        (14..=20).contains(&iterations),
        "17 iterations: {iterations}"
    );
}

/// docs/control.md: the piano key of `pianist.toml` pressed to the angle a constant 2 N
/// gives (the documented simulate command is the independent source of the target).
#[test]
fn control_presses_the_key_to_the_documented_angle() {
    let rest = json(
        "diffsoro simulate scenes/pianist.toml --steps 1000 --set soft_body.finger.cable.cable.force=2",
    );
    let theta = f(&rest["robots"][0]["q"][0]);
    assert!((theta - -0.052524).abs() < 5e-7, "θ(2 N) = {theta}");
    assert!(
        (theta - -0.05252).abs() < 1e-5,
        "the target rounds θ(2 N): {theta}"
    );
    let report = json(
        "diffsoro control scenes/pianist.toml --effector 'q:key[0]' --target -0.05252 --steps 500 --set soft_body.finger.cable.cable.force=0 --out out/pianist_control",
    );
    assert_eq!(report["target"], serde_json::json!([-0.05252]));
    assert_eq!(report["status"], "reached");
    assert_eq!(report["unit"], "rad");
    assert!(
        f(&report["final_error"]) < 2e-8,
        "{}",
        report["final_error"]
    );
    let history = report["error_history"].as_array().unwrap();
    let within = history.iter().position(|e| f(e) < 1e-4).unwrap() + 1;
    assert_eq!(within, 139, "within 1e-4 rad after step 139");
    let positions = report["position_history"].as_array().unwrap();
    let at = |k: usize| f(&positions[k][0]);
    assert!(
        (at(40) - 0.039).abs() < 5e-4,
        "drops to +0.039 rad: {}",
        at(40)
    );
    // The tension where the key sits at the target: the forward run's 2 N, to the 1e-5 rad
    // the target is rounded to over the settled sensitivity (≈ 0.1 rad/N): 2e-4 N.
    let rows = report["actuation_history"].as_array().unwrap();
    let cable = f(&rows.last().unwrap()[0]);
    assert!((cable - 2.0).abs() < 2e-4, "{cable} N");
    assert!(scratch().join("out/pianist_control/summary.svg").is_file());
}

/// docs/control.md: Table I of the servo Gripper, both strategies.
#[test]
fn the_gripper_table_holds() {
    let optimised = json(
        "diffsoro control scenes/gripper_grasp.toml --effector tip --target 0.05,0.0575,0.01 --effector tip_right --target 0.05,0.0575,0.01 --contact-weight 1e-4 --max-change 0.004",
    );
    let heuristic = json(
        "diffsoro control scenes/gripper_grasp.toml --effector tip --target 0.05,0.0575,0.01 --effector tip_right --target 0.05,0.0575,0.01 --contact-weight 1e-4 --heuristic",
    );
    let last = |r: &Value, key: &str| f(r[key].as_array().unwrap().last().unwrap());
    // (‖X_e‖ mm, ‖λ_c‖ N, loss) as the table rounds them.
    for (r, xe, lc, loss, angle) in [
        (&heuristic, 39.94, 10.87, 1.340e-2, -0.350),
        (&optimised, 39.56, 0.010, 1.565e-3, -0.156),
    ] {
        assert!(
            (f(&r["final_error"]) * 1e3 - xe).abs() < 0.005,
            "{}",
            r["final_error"]
        );
        assert!(
            (last(r, "contact_force_history") - lc).abs() < 0.0051,
            "{}",
            r["strategy"]
        );
        assert!(
            (f(&r["loss"]) - loss).abs() < 0.0005 * loss,
            "{}",
            r["loss"]
        );
        let angles = r["actuation_history"].as_array().unwrap().last().unwrap();
        for a in angles.as_array().unwrap() {
            assert!((f(a) - angle).abs() < 0.0005, "{a}");
        }
    }
    // The optimised strategy wins on the loss and presses a thousand times less.
    assert!(f(&optimised["loss"]) < f(&heuristic["loss"]));
}

/// The TOML scenes shown in docs/coming-from-sofa.md are valid scene files: with the project's
/// own Trunk mesh (the published `trunk.vtk` is not in the clone) in place of the published
/// one, they load and take a step.
#[test]
fn the_sofa_guides_scene_loads_and_steps() {
    let text = std::fs::read_to_string(root().join("docs/coming-from-sofa.md")).unwrap();
    let block = text
        .split("```toml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a ```toml block");
    let scene = block
        .replace("mesh = \"trunk.vtk\"", "mesh = \"../meshes/trunk.msh\"")
        .replace("scale = 0.001", "scale = 1.0");
    let file = diffsoro::scene::SceneFile::parse("coming-from-sofa.md", &scene, &[]).unwrap();
    file.validate().unwrap();
    let scene = diffsoro::scene::Scene::build(&file, &root().join("scenes")).unwrap();
    let mut state = scene.initial_state();
    diffsoro::scene::Stepper::new(&scene)
        .unwrap()
        .step(&scene, &mut state)
        .unwrap();
    assert!(
        state.bodies[0]
            .positions
            .iter()
            .all(|p| p.iter().all(|x| x.is_finite()))
    );
}

/// docs/calibration.md's real-experiment example: the fit on the staircase trial recovers the
/// values the recordings were made with (tests/trial_support: E = 500 kPa, β = 5 ms, gain
/// 1.3, offset 0.05 N, lag 30 ms) within 4 σ̂, its RMS residual is the camera's 0.1 mm noise
/// within 15 %, and the fitted model's error on the held-out sine trial is that noise within
/// 15 % too, against more than 10× that for the scene's own values (the fit mattered).
#[test]
fn the_real_experiment_example_recovers_the_robot_and_validates_on_held_out_data() {
    let report = json(
        "diffsoro calibrate scenes/finger.toml --trial scenes/recordings/finger_stairs_inputs.csv:scenes/recordings/finger_stairs_markers.csv --marker-unit mm --register rigid --param young_modulus:finger,rayleigh_stiffness:finger,gain:cable,offset:cable,time_constant:cable --init rayleigh_stiffness:finger=0.01 --init time_constant:cable=0.01 --out out/finger_fit",
    );
    for (name, truth) in [
        ("young_modulus:finger", 5e5),
        ("rayleigh_stiffness:finger", 0.005),
        ("gain:cable", 1.3),
        ("offset:cable", 0.05),
        ("time_constant:cable", 0.03),
    ] {
        let value = report["params"][name].as_f64().unwrap();
        let sigma = report["std_errors"][name].as_f64().unwrap();
        assert!(
            (value - truth).abs() <= 4.0 * sigma,
            "{name}: {value} ± {sigma}"
        );
    }
    let rms = report["rms"]["all"].as_f64().unwrap();
    assert!((rms / 1e-4 - 1.0).abs() < 0.15, "RMS {rms}");
    let held_out = json(
        "diffsoro simulate scenes/finger.toml --inputs scenes/recordings/finger_sines_inputs.csv --set soft_body.finger.young_modulus=4.977e5 --set soft_body.finger.rayleigh_stiffness=5.016e-3 --set soft_body.finger.cable.cable.gain=1.293 --set soft_body.finger.cable.cable.offset=0.05077 --set soft_body.finger.cable.cable.time_constant=0.02935 --observed-markers scenes/recordings/finger_sines_markers.csv --marker-unit mm --register rigid",
    );
    let error = held_out["marker_error"]["rms"].as_f64().unwrap();
    assert!((error / 1e-4 - 1.0).abs() < 0.15, "held-out RMS {error}");
    assert_eq!(held_out["marker_error"]["outside"], 0);
    // The scene's own values on the same trial, run here (not a documented command).
    let out = Command::new(env!("CARGO_BIN_EXE_diffsoro"))
        .args([
            "simulate",
            "scenes/finger.toml",
            "--inputs",
            "scenes/recordings/finger_sines_inputs.csv",
            "--observed-markers",
            "scenes/recordings/finger_sines_markers.csv",
            "--marker-unit",
            "mm",
            "--register",
            "rigid",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(out.status.success());
    let unfitted: Value = serde_json::from_slice(&out.stdout).unwrap();
    let before = unfitted["marker_error"]["rms"].as_f64().unwrap();
    assert!(
        before > 10.0 * error,
        "scene values {before} vs fitted {error}"
    );
}

/// docs/optimize.md: the waypoint files are where forward runs under the documented command
/// logs put the tip (so the waypoints are reachable), and `optimize` passes each within the
/// stated distance, recovering the pianist's ramp.
#[test]
fn optimize_passes_waypoints_a_forward_run_reaches() {
    for (scene, inputs, waypoints, start) in [
        (
            "trunk.toml",
            "trunk_reach.csv",
            "trunk_waypoints.csv",
            "static",
        ),
        (
            "pianist.toml",
            "pianist_press.csv",
            "pianist_waypoints.csv",
            "scene",
        ),
    ] {
        let text = std::fs::read_to_string(root().join("scenes").join(waypoints)).unwrap();
        for row in text.lines().skip(1) {
            let v: Vec<f64> = row.split(',').map(|x| x.parse().unwrap()).collect();
            let steps = format!("{}", (v[0] / 0.01).round() as usize);
            let state = run_json(&[
                "simulate",
                &format!("scenes/{scene}"),
                "--inputs",
                &format!("scenes/{inputs}"),
                "--start",
                start,
                "--steps",
                &steps,
            ]);
            assert_eq!(
                effector(&state, "tip"),
                [v[1], v[2], v[3]],
                "{waypoints}: {row}"
            );
        }
    }
    let trunk = json(
        "diffsoro optimize scenes/trunk.toml --effector tip --waypoints scenes/trunk_waypoints.csv --actuator c1 --actuator c2 --actuator c5 --actuator c6 --knots 5 --iterations 15 --out out/optimize-trunk",
    );
    for e in trunk["waypoint_errors"].as_array().unwrap() {
        assert!(f(e) < 1.1e-4, "{trunk}");
    }
    assert_eq!(trunk["knot_times"].as_array().unwrap().len(), 5);
    assert!(scratch().join("out/optimize-trunk/summary.svg").is_file());
    let pianist = json(
        "diffsoro optimize scenes/pianist.toml --effector tip --waypoints scenes/pianist_waypoints.csv --start scene --knots 4 --set soft_body.finger.cable.cable.force=0 --out out/optimize-pianist",
    );
    for e in pianist["waypoint_errors"].as_array().unwrap() {
        assert!(f(e) < 1e-6, "{pianist}");
    }
    let ramp = [0.0, 1.0, 1.8, 2.4];
    for (q, want) in pianist["actuation"]["cable"]
        .as_array()
        .unwrap()
        .iter()
        .zip(ramp)
    {
        assert!((f(q) - want).abs() < 1e-3, "{pianist}");
    }
}

/// The tip track of a `--markers-out` file: (time, position) rows of marker `tip`.
fn tip_track(file: &Path) -> Vec<(f64, [f64; 3])> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|row| {
            let f: Vec<&str> = row.split(',').collect();
            (f[1] == "tip").then(|| {
                let v = |i: usize| f[i].parse::<f64>().unwrap();
                (v(0), [v(2), v(3), v(4)])
            })
        })
        .collect()
}

/// docs/reduced.md: the reduced Trunk's training error is no better than its basis's own
/// projection error, and on the held-out commands its tip follows the full model's better
/// than the full tip's mean position would (a reduced model worse than standing still is no
/// model); both runs write a sample at every step.
#[test]
fn the_reduced_trunk_follows_held_out_commands() {
    let report = json(
        "diffsoro reduce scenes/trunk.toml --train scenes/trunk_train_a.csv --train scenes/trunk_train_b.csv --modes 14 --out trunk.reduced",
    );
    let e = &report["training_error"];
    assert!(e["position_rms"].as_f64().unwrap() >= e["projection_rms"].as_f64().unwrap());
    assert_eq!(report["modes"], 14);
    let dir = scratch();
    let (reduced, full) = (
        tip_track(&dir.join("reduced-markers.csv")),
        tip_track(&dir.join("full-markers.csv")),
    );
    assert_eq!(reduced.len(), full.len());
    assert_eq!(full.len(), 601);
    let n = full.len() as f64;
    let mean: Vec<f64> = (0..3)
        .map(|c| full.iter().map(|(_, p)| p[c]).sum::<f64>() / n)
        .collect();
    let (mut error, mut motion) = (0.0, 0.0);
    for ((t, r), (tf, f)) in reduced.iter().zip(&full) {
        assert_eq!(t, tf);
        error += (0..3).map(|c| (r[c] - f[c]).powi(2)).sum::<f64>();
        motion += (0..3).map(|c| (f[c] - mean[c]).powi(2)).sum::<f64>();
    }
    assert!(
        error < motion,
        "{} m against {} m",
        (error / n).sqrt(),
        (motion / n).sqrt()
    );
}
