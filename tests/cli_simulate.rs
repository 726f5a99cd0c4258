//! The `simulate` and `bench` commands against their contract (docs/cli.md): JSON on stdout,
//! one-line errors with a non-zero exit on bad input, `--out` written all or nothing, `--set`
//! and `--static`.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::cli_support;
use cli_support::{root, run, run_json, scratch};

use serde_json::Value;

/// A copy of `scenes/beam.toml` with `edit` applied, written in a scratch folder (mesh path
/// made absolute).
fn beam_scene(dir: &Path, edit: impl Fn(String) -> String) -> PathBuf {
    let text = std::fs::read_to_string(root().join("scenes/beam.toml")).unwrap();
    let mesh = root().join("meshes/beam_2.msh");
    let text = text.replace(
        "\"../meshes/beam_2.msh\"",
        &format!("{:?}", mesh.display().to_string()),
    );
    let path = dir.join("scene.toml");
    std::fs::write(&path, edit(text)).unwrap();
    path
}

fn assert_one_line_error(out: &Output, needle: &str) {
    assert!(!out.status.success(), "expected failure for {needle}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "one line expected: {err}"
    );
    assert!(err.contains(needle), "`{needle}` not in: {err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_scene_input_gives_a_one_line_error_naming_it() {
    let dir = scratch("bad");
    let cases: &[(&str, &str, &str)] = &[
        ("mesh = ", "mesh = \"nowhere.msh\" #", "soft_body.beam.mesh"),
        (
            "young_modulus = 1.0e6",
            "young_modulus = 0.0",
            "soft_body.beam.young_modulus",
        ),
        (
            "young_modulus = 1.0e6",
            "young_modulus = -5.0",
            "soft_body.beam.young_modulus",
        ),
        (
            "poisson_ratio = 0.3",
            "poisson_ratio = 0.5",
            "soft_body.beam.poisson_ratio",
        ),
        (
            "poisson_ratio = 0.3",
            "poisson_ratio = -1.2",
            "soft_body.beam.poisson_ratio",
        ),
        ("dt = 0.01", "dt = 0.0", "simulation.dt"),
        ("law = \"neo_hookean\"", "law = \"hookean\"", "hookean"),
        ("density = 1000.0", "densty = 1000.0", "densty"),
        (
            "fixed_group = \"clamp\"",
            "fixed_group = \"clammp\"",
            "clammp",
        ),
    ];
    for (from, to, needle) in cases {
        let scene = beam_scene(&dir, |t| t.replace(from, to));
        assert_one_line_error(
            &run(&["simulate", scene.to_str().unwrap(), "--steps", "1"]),
            needle,
        );
    }
    assert_one_line_error(&run(&["simulate", "scenes/none.toml"]), "scenes/none.toml");
    let scene = beam_scene(&dir, |t| t);
    assert_one_line_error(
        &run(&[
            "simulate",
            scene.to_str().unwrap(),
            "--set",
            "soft_body.bem.young_modulus=1",
        ]),
        "bem",
    );
}

#[test]
fn out_writes_frames_pvd_and_final_state_equal_to_stdout() {
    let dir = scratch("out");
    let scene = beam_scene(&dir, |t| t);
    let out_dir = dir.join("run");
    let printed = run_json(&[
        "simulate",
        scene.to_str().unwrap(),
        "--steps",
        "3",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let written: Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("final.json")).unwrap()).unwrap();
    assert_eq!(printed, written);
    assert_eq!(printed["steps"], 3);
    assert!((printed["time"].as_f64().unwrap() - 0.03).abs() < 1e-15);
    // One row per mesh node (beam_2.msh has 1078, by meshes/reference_counts.py).
    assert_eq!(
        printed["soft_bodies"][0]["positions"]
            .as_array()
            .unwrap()
            .len(),
        1078
    );
    assert_eq!(
        printed["soft_bodies"][0]["velocities"]
            .as_array()
            .unwrap()
            .len(),
        1078
    );
    let vtus: Vec<_> = std::fs::read_dir(&out_dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "vtu"))
        .collect();
    assert_eq!(vtus.len(), 4, "initial frame + 3 steps");
    let pvd = std::fs::read_to_string(out_dir.join("beam.pvd")).unwrap();
    assert_eq!(pvd.matches("<DataSet").count(), 4);
    // Every frame reads back as the beam mesh.
    let frame = diffsoro::mesh::read_mesh(out_dir.join("beam_000003.vtu")).unwrap();
    assert_eq!(frame.node_count(), 1078);
    // No staging folder left behind.
    assert!(
        std::fs::read_dir(&out_dir).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with('.'))
    );
}

#[test]
fn a_run_that_fails_midway_leaves_no_output() {
    // Neo-Hookean under an absurd load with a huge step inverts elements within a few steps.
    let dir = scratch("fail");
    let scene = beam_scene(&dir, |t| {
        t.replace(
            "gravity = [0.0, 0.0, -9.81]",
            "gravity = [0.0, 0.0, -1.0e6]",
        )
        .replace("dt = 0.01", "dt = 0.05")
    });
    let out_dir = dir.join("run");
    let out = run(&[
        "simulate",
        scene.to_str().unwrap(),
        "--steps",
        "50",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tetrahedron") || err.contains("positive definite"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(&out_dir).unwrap().collect();
    assert!(left.is_empty(), "outputs left after a failed run: {left:?}");
}

/// Mean z-displacement of the beam's free end (nodes at x = 0.1) from a final state.
fn tip_sag(state: &Value) -> f64 {
    let mesh = diffsoro::mesh::read_mesh(root().join("meshes/beam_2.msh")).unwrap();
    let positions = state["soft_bodies"][0]["positions"].as_array().unwrap();
    let tip: Vec<usize> = (0..mesh.node_count())
        .filter(|&i| mesh.positions()[i].x > 0.1 - 1e-9)
        .collect();
    tip.iter()
        .map(|&i| mesh.positions()[i].z - positions[i][2].as_f64().unwrap())
        .sum::<f64>()
        / tip.len() as f64
}

#[test]
fn static_deflection_scales_as_one_over_young_modulus() {
    // Small deflection (E = 1e8 Pa: sag/L ≈ 1e-3): linear elasticity, so sag ∝ 1/E exactly
    // up to O(sag/L) geometric effects. `--set` changes E.
    let dir = scratch("static");
    let scene = beam_scene(&dir, |t| t);
    let s = scene.to_str().unwrap();
    let state = run_json(&[
        "simulate",
        s,
        "--static",
        "--set",
        "soft_body.beam.young_modulus=1e8",
    ]);
    let b = run_json(&[
        "simulate",
        s,
        "--static",
        "--set",
        "soft_body.beam.young_modulus=2e8",
    ]);
    let (sa, sb) = (tip_sag(&state), tip_sag(&b));
    assert!(sa > 0.0 && sb > 0.0, "the beam sags under gravity −z");
    assert!((sa / sb - 2.0).abs() < 2e-3, "ratio {}", sa / sb);
    assert_eq!(state["steps"], 0);
    // Static: velocities are zero.
    assert!(
        state["soft_bodies"][0]["velocities"]
            .as_array()
            .unwrap()
            .iter()
            .all(|v| v
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c.as_f64() == Some(0.0)))
    );
}

#[test]
fn bench_reports_the_contract_fields() {
    let v = run_json(&["bench", "scenes/beam.toml", "--steps", "3"]);
    assert_eq!(v["nodes"], 1078);
    assert_eq!(v["tetrahedra"], 3565);
    assert_eq!(v["contacts"], 0);
    assert!(v["step_ms"].as_f64().unwrap() > 0.0);
    assert!(v["gradient_ms"].as_f64().unwrap() > 0.0);
    assert!(v["finite_difference_ms"].as_f64().unwrap() > 0.0);
    // The bare factorisation of the same A is part of the free step, so cheaper than it in
    // expectation; both are medians of a few timings on a possibly loaded machine (the element
    // loop alone is now about half the factorisation), so only a gross error (timing the wrong
    // thing, or several factorisations) is asserted.
    let factorisation = v["factorisation_ms"].as_f64().unwrap();
    assert!(factorisation > 0.0 && factorisation < 2.0 * v["stages_ms"]["free"].as_f64().unwrap());
    assert!(!v["cpu"].as_str().unwrap().is_empty());
    // cpu_id tells CPUs of one model name apart: on Linux, this machine's family number and
    // its count of logical CPUs, read here from /proc/cpuinfo.
    let cpu_id = v["cpu_id"].as_str().unwrap();
    if let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") {
        let family = info
            .lines()
            .find(|l| l.starts_with("cpu family"))
            .and_then(|l| l.split(':').nth(1))
            .map_or("?", str::trim);
        let logical = info.lines().filter(|l| l.starts_with("processor")).count();
        assert!(
            cpu_id.starts_with(&format!("family {family} model ")),
            "{cpu_id}"
        );
        assert!(
            cpu_id.contains(&format!(", {logical} logical CPUs, ")),
            "{cpu_id}"
        );
    }
    // --threads sets the pool the step runs on; 0 is refused, naming the argument.
    let out = run(&[
        "bench",
        "scenes/beam.toml",
        "--steps",
        "1",
        "--threads",
        "1",
    ]);
    let t: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(t["threads"], 1);
    // With one step the median of the per-step ratios is that step's ratio.
    let ratio = t["step_ms"].as_f64().unwrap() / t["factorisation_ms"].as_f64().unwrap();
    let reported = t["step_over_factorisation"].as_f64().unwrap();
    assert!(
        (reported - ratio).abs() <= 1e-12 * ratio,
        "{reported} against {ratio}"
    );
    let out = run(&[
        "bench",
        "scenes/beam.toml",
        "--steps",
        "1",
        "--threads",
        "0",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--threads"));
    // One step: its stages are laps of one clock inside the step's own timing, so they add up
    // to no more than it; a scene without contact or rigid bodies spends most of it in the
    // free step.
    let v1 = run_json(&[
        "bench",
        "scenes/gripper_lift.toml",
        "--steps",
        "1",
        "--threads",
        "1",
    ]);
    let stage = |v: &Value, k: &str| v["stages_ms"][k].as_f64().unwrap();
    let parts = ["free", "rigid", "contact", "update"];
    assert!(parts.iter().all(|k| stage(&v1, k) >= 0.0), "{v1}");
    let sum: f64 = parts.iter().map(|k| stage(&v1, k)).sum();
    assert!(sum <= v1["step_ms"].as_f64().unwrap(), "{v1}");
    assert!(stage(&v, "free") > stage(&v, "contact"), "{v}");
    // With one step on one thread the free step's parts are laps of one clock inside it: they
    // add up to no more than it, and none is negative.
    let part = |v: &Value, k: &str| v["stages_ms"]["free_parts"][k].as_f64().unwrap();
    let free_parts = ["elastic", "assembly", "factorisation", "solve"];
    assert!(free_parts.iter().all(|k| part(&v1, k) >= 0.0), "{v1}");
    let free_sum: f64 = free_parts.iter().map(|k| part(&v1, k)).sum();
    assert!(free_sum <= stage(&v1, "free"), "{v1}");
    // On two threads the right-hand side's assembly overlaps the factorisation; the other
    // parts still follow one another inside the free step.
    let v2 = run_json(&[
        "bench",
        "scenes/gripper_lift.toml",
        "--steps",
        "1",
        "--threads",
        "2",
    ]);
    let in_turn: f64 = ["elastic", "factorisation", "solve"]
        .iter()
        .map(|k| part(&v2, k))
        .sum();
    assert!(in_turn <= stage(&v2, "free"), "{v2}");
    // A scene the derivatives do not cover (full Newton) reports null gradient figures.
    let out = run(&[
        "bench",
        "scenes/beam.toml",
        "--steps",
        "2",
        "--set",
        "simulation.newton_iterations=3",
    ]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["gradient_ms"].is_null() && v["finite_difference_ms"].is_null());
}

/// `--sensitivity young_modulus:beam` equals the central difference of two runs with E
/// shifted by ±0.1 % through `--set` (the forward simulator, through the CLI), and an unknown
/// name is a one-line error.
#[test]
fn sensitivity_matches_finite_differences_of_the_cli() {
    let positions = |v: &Value| -> Vec<f64> {
        v["soft_bodies"][0]["positions"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| p.as_array().unwrap().iter().map(|c| c.as_f64().unwrap()))
            .collect()
    };
    let base = ["simulate", "scenes/beam.toml", "--steps", "10"];
    let mut with_sens = base.to_vec();
    with_sens.extend(["--sensitivity", "young_modulus:beam,poisson_ratio:beam"]);
    let v = run_json(&with_sens);
    let sens: Vec<f64> = v["sensitivities"]["young_modulus:beam"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p.as_array().unwrap().iter().map(|c| c.as_f64().unwrap()))
        .collect();
    assert!(v["sensitivities"]["poisson_ratio:beam"].is_array());
    let (e, de) = (1.0e6, 1.0e3);
    let shifted = |value: f64| {
        let set = format!("soft_body.beam.young_modulus={value}");
        let mut args = base.to_vec();
        args.extend(["--set", &set]);
        positions(&run_json(&args))
    };
    let (plus, minus) = (shifted(e + de), shifted(e - de));
    let fd: Vec<f64> = plus
        .iter()
        .zip(&minus)
        .map(|(a, b)| (a - b) / (2.0 * de))
        .collect();
    let num: f64 = sens
        .iter()
        .zip(&fd)
        .map(|(a, b)| (a - b).powi(2))
        .sum::<f64>()
        .sqrt();
    let den: f64 = fd.iter().map(|a| a * a).sum::<f64>().sqrt();
    assert!(
        den > 0.0 && num / den < 1e-5,
        "relative error {:e}",
        num / den
    );
    assert_one_line_error(
        &run(&[
            "simulate",
            "scenes/beam.toml",
            "--steps",
            "1",
            "--sensitivity",
            "young_modulus:trunk",
        ]),
        "no soft body `trunk`",
    );
}

/// `--sensitivity friction:OBSTACLE` on the cube of `scenes/cube_push.toml`, sliding on the
/// floor (obstacle 0, unnamed) at (0.8, 0.3, 0) m/s: with the normal force mg, each step
/// changes its velocity by −h μ g û, so after k steps dv/dμ = −k h g û and
/// dq/dμ = −h² g û (1 + … + k) (û the slip direction), the analytic answer to 1e-10.
#[test]
fn friction_sensitivity_of_a_sliding_cube_is_the_analytic_one() {
    let v = run_json(&[
        "simulate",
        "scenes/cube_push.toml",
        "--steps",
        "5",
        "--sensitivity",
        "friction:obstacle0",
    ]);
    let cube = &v["rigid_sensitivities"]["friction:obstacle0"]["cube"];
    let (h, g, k) = (0.005, 9.81, 5.0);
    let speed = 0.8f64.hypot(0.3);
    let u = [0.8 / speed, 0.3 / speed];
    for a in 0..2 {
        let dv = cube["v"][a].as_f64().unwrap();
        let dq = cube["q"][a].as_f64().unwrap();
        let (want_v, want_q) = (-k * h * g * u[a], -h * h * g * u[a] * k * (k + 1.0) / 2.0);
        assert!(
            (dv - want_v).abs() < 1e-10 * want_v.abs(),
            "v[{a}]: {dv} vs {want_v}"
        );
        assert!(
            (dq - want_q).abs() < 1e-10 * want_q.abs(),
            "q[{a}]: {dq} vs {want_q}"
        );
    }
    // An unknown obstacle name lists the scene's.
    let bad = run(&[
        "simulate",
        "scenes/cube_push.toml",
        "--steps",
        "1",
        "--sensitivity",
        "friction:floor",
    ]);
    assert_one_line_error(&bad, "no obstacle `floor`");
}

/// `--sensitivity mass:BODY` of a 0.5 kg box thrown at 0.5 m/s onto a 2 kg slab lying on a
/// frictionless floor: against central differences of two runs with
/// `--set rigid_body.top.mass=0.5 ± ε` (the scene gives the mass, so the inertia comes from
/// the shape and scales with it, the derivative's semantics), and the slab's final velocity
/// against the momentum's v_f = m_t v₀ / (m_t + m_s): dv_f/dm_t = v₀ m_s / (m_t + m_s)².
/// Bad names give one-line errors naming the parameter. The NCP is solved to 1e-14: the
/// slab's vertical velocity is zero, and its difference quotient is the two runs' NCP noise
/// over 2ε, which must stay below the 1e-9 floor (1e-12 left 6e-14 m/s of noise, 3e-9).
#[test]
fn mass_sensitivity_matches_two_runs_of_the_cli() {
    let dir = scratch("mass-sensitivity");
    let path = dir.join("slab.toml");
    std::fs::write(
        &path,
        r#"
[simulation]
dt = 0.005
steps = 30
gravity = [0.0, 0.0, -9.81]

[contact]
tolerance = 1e-14
max_iterations = 100000

[[obstacle]]
name = "floor"
type = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
friction = 0.0

[[rigid_body]]
name = "slab"
shape = "box"
half_extents = [0.3, 0.2, 0.02]
mass = 2.0
position = [0.0, 0.0, 0.02]

[[rigid_body]]
name = "top"
shape = "box"
half_extents = [0.05, 0.05, 0.05]
mass = 0.5
friction = 0.8
position = [-0.1, 0.0, 0.09]
velocity = [0.5, 0.0, 0.0]

[[rigid_body]]
name = "wall"
shape = "box"
half_extents = [0.1, 0.1, 0.1]
position = [5.0, 0.0, 0.1]
fixed = true
"#,
    )
    .unwrap();
    let scene = path.to_str().unwrap();
    let v = run_json(&["simulate", scene, "--sensitivity", "mass:top"]);
    let eps = 1e-5;
    let runs: Vec<Value> = [0.5 + eps, 0.5 - eps]
        .iter()
        .map(|m| {
            run_json(&[
                "simulate",
                scene,
                "--set",
                &format!("rigid_body.top.mass={m}"),
            ])
        })
        .collect();
    let body = |state: &Value, name: &str, key: &str, k: usize| -> f64 {
        state["rigid_bodies"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["name"] == name)
            .unwrap()[key][k]
            .as_f64()
            .unwrap()
    };
    for name in ["slab", "top"] {
        let sens = &v["rigid_sensitivities"]["mass:top"][name];
        for (key, tangent) in [("position", "q"), ("velocity", "v")] {
            for k in 0..3 {
                let fd =
                    (body(&runs[0], name, key, k) - body(&runs[1], name, key, k)) / (2.0 * eps);
                let got = sens[tangent][k].as_f64().unwrap();
                assert!(
                    (got - fd).abs() <= 1e-6 * fd.abs().max(1e-3),
                    "{name}.{key}[{k}]: {got} vs {fd} by differences"
                );
            }
        }
    }
    let (mt, ms, v0) = (0.5, 2.0, 0.5);
    let want = v0 * ms / ((mt + ms) * (mt + ms));
    let got = v["rigid_sensitivities"]["mass:top"]["slab"]["v"][0]
        .as_f64()
        .unwrap();
    assert!(
        (got - want).abs() <= 1e-6 * want,
        "{got} vs momentum's {want}"
    );
    for (name, needle) in [
        ("mass:wall", "`wall` is a fixed rigid body"),
        ("mass:nothing", "no free rigid body `nothing`"),
    ] {
        let out = run(&["simulate", scene, "--steps", "1", "--sensitivity", name]);
        assert_one_line_error(&out, needle);
        assert!(String::from_utf8_lossy(&out.stderr).contains(name));
    }
    let out = run(&[
        "simulate",
        "scenes/quadruped_standing.toml",
        "--steps",
        "1",
        "--sensitivity",
        "mass:dog",
    ]);
    assert_one_line_error(&out, "`dog` is a robot");
}

/// `--gradient-of LOSS` (one reverse sweep) with `--contact-gradient`: a cube resting on the
/// floor in zero gravity touches it with no force, so its height after one step has a kink in
/// its initial vertical velocity (lifted it flies, pushed the floor stops it). For the loss
/// −z⁺ the one-sided gradient equals the difference quotient of two runs on the lifting side,
/// the complementarity-aware one the quotient on the pushing side. Away from a kink the
/// gradient equals the forward sensitivities (the pushed cube). Misuse gives one-line errors.
#[test]
fn gradient_of_a_loss_takes_the_side_contact_gradient_names() {
    let dir = scratch("gradient-of");
    let path = dir.join("resting.toml");
    std::fs::write(
        &path,
        r#"
[simulation]
dt = 0.005
steps = 1
gravity = [0.0, 0.0, 0.0]

[contact]
friction = 0.5
tolerance = 1e-12
max_iterations = 100000

[[obstacle]]
type = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]

[[rigid_body]]
name = "cube"
shape = "box"
half_extents = [0.05, 0.05, 0.05]
density = 500.0
position = [0.0, 0.0, 0.05]
"#,
    )
    .unwrap();
    let scene = path.to_str().unwrap();
    let height = |vz: f64| {
        let v = run_json(&[
            "simulate",
            scene,
            "--set",
            &format!("rigid_body.cube.velocity=[0.0, 0.0, {vz}]"),
        ]);
        v["rigid_bodies"][0]["position"][2].as_f64().unwrap()
    };
    let eps = 1e-4;
    let z0 = height(0.0);
    let lifting = -(height(eps) - z0) / eps;
    let pushing = -(z0 - height(-eps)) / eps;
    assert!(
        (pushing - lifting).abs() > 1e-3,
        "no kink: {pushing} vs {lifting}"
    );
    for (mode, want) in [("one-sided", lifting), ("complementarity-aware", pushing)] {
        let v = run_json(&[
            "simulate",
            scene,
            "--sensitivity",
            "velocity:cube[2]",
            "--gradient-of",
            "-position:cube[2]",
            "--contact-gradient",
            mode,
        ]);
        let got = v["gradient"]["velocity:cube[2]"].as_f64().unwrap();
        assert!(
            (got - want).abs() <= 1e-6 * lifting.abs(),
            "{mode}: {got} vs {want} by differences"
        );
    }
    // Away from a kink: the forward sensitivities of the pushed cube, entry by entry.
    let names = "velocity:cube[0],friction:obstacle0,mass:cube";
    let base = ["simulate", "scenes/cube_push.toml", "--steps", "20"];
    let forward = run_json(&[&base[..], &["--sensitivity", names]].concat());
    for loss in ["position:cube[0]", "-velocity:cube[1]"] {
        let reverse =
            run_json(&[&base[..], &["--sensitivity", names, "--gradient-of", loss]].concat());
        let (sign, key, k) = match loss {
            "position:cube[0]" => (1.0, "q", 0),
            _ => (-1.0, "v", 1),
        };
        for name in names.split(',') {
            let want = sign
                * forward["rigid_sensitivities"][name]["cube"][key][k]
                    .as_f64()
                    .unwrap();
            let got = reverse["gradient"][name].as_f64().unwrap();
            assert!(
                (got - want).abs() <= 1e-10 * want.abs().max(1e-6),
                "{loss} / {name}: {got} vs forward {want}"
            );
        }
    }
    for (args, needle) in [
        (
            vec![
                "simulate",
                scene,
                "--sensitivity",
                "velocity:cube[2]",
                "--contact-gradient",
                "complementarity-aware",
            ],
            "--contact-gradient complementarity-aware",
        ),
        (
            vec![
                "simulate",
                scene,
                "--sensitivity",
                "velocity:cube[2]",
                "--gradient-of",
                "position:cube",
            ],
            "--gradient-of `position:cube`",
        ),
        (
            vec![
                "simulate",
                "scenes/beam.toml",
                "--steps",
                "1",
                "--sensitivity",
                "young_modulus:beam",
                "--gradient-of",
                "position:beam[0]",
            ],
            "--gradient-of",
        ),
    ] {
        assert_one_line_error(&run(&args), needle);
    }
}

/// `--gradient-of` with soft bodies: one reverse sweep (`diff::adjoint`) equals the forward
/// sensitivities of the same run, entry by entry (a second method), for an effector's final
/// position on the cable Finger (`effector:tip[1]` = Σ wᵢ x_i,y over the effector's nodes and
/// weights in the final state) and, in a mixed scene, for the final x of a cube pushed across
/// the soft block (rigid initial-state names and E together); names it cannot take are
/// one-line errors.
#[test]
fn gradient_of_an_effector_or_a_rigid_coordinate_with_soft_bodies_equals_the_forward_sensitivities()
{
    let finger = ["simulate", "scenes/finger.toml", "--steps", "20"];
    let names = "young_modulus:finger,actuator:cable";
    let forward = run_json(&[&finger[..], &["--sensitivity", names]].concat());
    let reverse = run_json(
        &[
            &finger[..],
            &["--sensitivity", names, "--gradient-of", "-effector:tip[1]"],
        ]
        .concat(),
    );
    let effector = &forward["effectors"][0];
    let nodes = effector["nodes"].as_array().unwrap();
    let weights = effector["weights"].as_array().unwrap();
    for name in names.split(',') {
        let want: f64 = -nodes
            .iter()
            .zip(weights)
            .map(|(n, w)| {
                let n = n.as_u64().unwrap() as usize;
                w.as_f64().unwrap() * forward["sensitivities"][name][n][1].as_f64().unwrap()
            })
            .sum::<f64>();
        let got = reverse["gradient"][name].as_f64().unwrap();
        assert!(want.abs() > 0.0, "{name}: the tip moves with it");
        assert!(
            (got - want).abs() <= 1e-9 * want.abs(),
            "-effector:tip[1] / {name}: {got} vs forward {want}"
        );
    }
    let slide = [
        "simulate",
        "scenes/cube_on_block.toml",
        "--steps",
        "30",
        "--set",
        "rigid_body.cube.velocity=[0.1, 0.05, 0.0]",
    ];
    let names = "velocity:cube,young_modulus:block";
    let forward = run_json(&[&slide[..], &["--sensitivity", names]].concat());
    let reverse = run_json(
        &[
            &slide[..],
            &["--sensitivity", names, "--gradient-of", "position:cube[0]"],
        ]
        .concat(),
    );
    for name in [
        "velocity:cube[0]",
        "velocity:cube[1]",
        "velocity:cube[2]",
        "young_modulus:block",
    ] {
        let want = forward["rigid_sensitivities"][name]["cube"]["q"][0]
            .as_f64()
            .unwrap();
        let got = reverse["gradient"][name].as_f64().unwrap();
        assert!(want.abs() > 0.0, "{name}: the cube's x moves with it");
        assert!(
            (got - want).abs() <= 1e-9 * want.abs(),
            "position:cube[0] / {name}: {got} vs forward {want}"
        );
    }
    for (loss, needle) in [
        ("effector:nope[1]", "no soft body has an effector `nope`"),
        ("effector:tip", "--gradient-of `effector:tip`"),
        ("effector:tip[3]", "--gradient-of `effector:tip[3]`"),
    ] {
        let args = [
            "--sensitivity",
            "young_modulus:finger",
            "--gradient-of",
            loss,
        ];
        let out = run(&[&finger[..], &args].concat());
        assert_one_line_error(&out, needle);
    }
}
