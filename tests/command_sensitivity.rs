//! Sensitivities of a run under logged commands (`diff::CommandSensitivity`, `simulate
//! --inputs … --sensitivity`) against central finite differences of the same run with the
//! parameter moved (1e-6 relative, norm-wise; no contact, so no mode switches): E, ν, an input
//! the log does not set, and each logged actuator's gain, offset and time constant, from the
//! scene's initial state and from the static equilibrium under the first commands.

use std::path::Path;
use std::process::Command;

use diffsoro::diff::{CommandSensitivity, Parameter, RunParameter};
use diffsoro::math::relative_error;
use diffsoro::scene::{CommandLog, CommandRun, RunStart, Scene};

use crate::diff_support::clamped_beam;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const STEPS: usize = 30;

/// The 100 × 10 × 10 mm beam clamped at x = 0 under gravity with Rayleigh damping, two
/// force-driven cables the log drives (the second lagged by 40 ms, its command mapped by a
/// gain and an offset), and a third cable the log does not set.
fn beam() -> Scene {
    let cables = r#"
        [[soft_body.cable]]
        name = "top"
        points = [[0.1, 0.0, 0.004], [0.05, 0.0, 0.004], [0.0, 0.0, 0.004]]
        force = 0.0
        [[soft_body.cable]]
        name = "side"
        points = [[0.1, 0.003, 0.0], [0.0, 0.003, 0.0]]
        force = 0.0
        gain = 0.8
        offset = 0.05
        time_constant = 0.04
        [[soft_body.cable]]
        name = "held"
        points = [[0.1, -0.003, -0.002], [0.0, -0.003, -0.002]]
        force = 0.07
    "#;
    clamped_beam::build(
        &clamped_beam::text("neo_hookean", clamped_beam::DAMPED, cables),
        &[format!("simulation.steps={STEPS}")],
    )
}

/// Commands that ramp, hold and step over the run (N for `top`, command units for `side`).
fn log() -> CommandLog {
    CommandLog::from_columns(
        "test log",
        vec![0.0, 0.08, 0.15, 0.22, 0.4],
        vec![
            ("top".to_string(), vec![0.1, 0.3, 0.3, 0.15, 0.2]),
            ("side".to_string(), vec![0.2, 0.2, 0.45, 0.45, 0.1]),
        ],
    )
    .unwrap()
}

fn flat_positions(state: &diffsoro::scene::State) -> Vec<f64> {
    state.bodies[0]
        .positions
        .iter()
        .flat_map(|p| [p.x, p.y, p.z])
        .collect()
}

/// The final positions of the run of `scene` (moved by `edit`) under the log.
fn run(scene: &Scene, start: RunStart, edit: impl FnOnce(&mut Scene)) -> Vec<f64> {
    let mut scene = scene.clone();
    edit(&mut scene);
    let (mut run, mut state) = CommandRun::start(&mut scene, log(), Some(STEPS), start).unwrap();
    for _ in 0..STEPS {
        run.step(&mut scene, &mut state).unwrap();
    }
    flat_positions(&state)
}

/// Moves the scene's parameter `name` by `d`, for the finite differences.
fn move_parameter(s: &mut Scene, name: &str, d: f64) {
    {
        let (kind, target) = name.split_once(':').unwrap();
        let index = |s: &Scene| {
            s.body_actuation(0)
                .actuators
                .iter()
                .position(|a| a.name == target)
                .unwrap()
        };
        match kind {
            "gain" => {
                let i = index(s);
                s.actuation[0].inputs[i].command.gain += d;
            }
            "offset" => {
                let i = index(s);
                s.actuation[0].inputs[i].command.offset += d;
            }
            "time_constant" => {
                let i = index(s);
                s.actuation[0].inputs[i].command.time_constant += d;
            }
            _ => {
                let p = Parameter::parse(s, name).unwrap();
                let v = p.value(s);
                p.set(s, v + d).unwrap();
            }
        }
    }
}

/// Each name's tangent of the final positions against central differences of the run.
fn check(start: RunStart, names: &[(&str, f64)]) {
    let scene = beam();
    let mut s = scene.clone();
    let (mut command_run, mut state) =
        CommandRun::start(&mut s, log(), Some(STEPS), start).unwrap();
    let columns: Vec<RunParameter> = names
        .iter()
        .map(|(n, _)| RunParameter::parse(&s, command_run.schedule(), n).unwrap())
        .collect();
    let mut sens =
        CommandSensitivity::new(&s, command_run.schedule(), &state, start, &columns).unwrap();
    for _ in 0..STEPS {
        sens.step(&mut s, command_run.schedule_mut(), &mut state)
            .unwrap();
    }
    // The run carrying tangents is the plain run.
    assert_eq!(flat_positions(&state), run(&scene, start, |_| {}));
    for ((name, step), t) in names.iter().zip(sens.tangents()) {
        let tangent: Vec<f64> = t.bodies[0]
            .positions
            .iter()
            .flat_map(|p| [p.x, p.y, p.z])
            .collect();
        let plus = run(&scene, start, |s| move_parameter(s, name, *step));
        let minus = run(&scene, start, |s| move_parameter(s, name, -*step));
        let fd: Vec<f64> = plus
            .iter()
            .zip(&minus)
            .map(|(p, m)| (p - m) / (2.0 * step))
            .collect();
        let err = relative_error(&tangent, &fd, 1e-300);
        assert!(err < 1e-6, "{start:?} {name}: relative error {err:.2e}");
        // The moves are far above round-off (positions ~0.1 m, ulp ~1e-17 m).
        let moved = plus
            .iter()
            .zip(&minus)
            .map(|(p, m)| (p - m).abs())
            .fold(0.0, f64::max);
        assert!(moved > 1e-11, "{name} moves the run: {moved:e} m");
    }
}

#[test]
fn a_run_from_the_scene_state_moves_with_e_the_held_input_and_the_command_maps_as_its_tangents_say()
{
    check(
        RunStart::Scene,
        &[
            ("young_modulus:beam", 20.0),
            ("actuator:held", 1e-5),
            ("gain:top", 1e-5),
            ("offset:top", 1e-5),
            ("gain:side", 1e-5),
            ("offset:side", 1e-5),
            ("time_constant:side", 1e-6),
        ],
    );
}

#[test]
fn a_run_from_its_static_start_carries_the_start_s_sensitivity() {
    check(
        RunStart::Static,
        &[
            ("young_modulus:beam", 20.0),
            ("poisson_ratio:beam", 1e-5),
            ("density:beam", 1e-1),
            ("rayleigh_mass:beam", 1e-5),
            ("rayleigh_stiffness:beam", 1e-7),
            ("actuator:held", 1e-5),
            ("gain:top", 1e-5),
            ("offset:side", 1e-5),
            ("gain:side", 1e-5),
            ("time_constant:side", 1e-6),
        ],
    );
}

#[test]
fn the_command_terms_name_logged_actuators_and_a_logged_input_is_not_a_parameter() {
    let mut scene = beam();
    let (run, _) = CommandRun::start(&mut scene, log(), Some(1), RunStart::Scene).unwrap();
    let err = |n: &str| {
        RunParameter::parse(&scene, run.schedule(), n)
            .err()
            .unwrap()
            .to_string()
    };
    let held = err("gain:held");
    assert!(
        held.contains("gain:held") && held.contains("\"top\""),
        "{held}"
    );
    let logged = err("actuator:top");
    assert!(
        logged.contains("actuator:top") && logged.contains("gain"),
        "{logged}"
    );
}

/// The CLI prints the same tangents (its run is the library's) under the names asked for.
#[test]
fn simulate_inputs_sensitivity_prints_the_run_s_tangents() {
    let dir = tempdir();
    let scene_path = dir.join("beam.toml");
    let text = std::fs::read_to_string(Path::new(ROOT).join("scenes/finger.toml")).unwrap();
    std::fs::write(
        &scene_path,
        text.replace("../meshes/", &format!("{ROOT}/meshes/")),
    )
    .unwrap();
    let cable = Scene::load(&scene_path, &[])
        .unwrap()
        .body_actuation(0)
        .actuators[0]
        .name
        .clone();
    let inputs = dir.join("pull.csv");
    std::fs::write(
        &inputs,
        format!("time,{cable}\n0.0,0.1\n0.1,0.4\n0.2,0.4\n"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_diffsoro"))
        .args(["simulate"])
        .arg(&scene_path)
        .args(["--inputs"])
        .arg(&inputs)
        .args(["--start", "scene", "--sensitivity"])
        .arg(format!("gain:{cable}"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = json["sensitivities"][format!("gain:{cable}")]
        .as_array()
        .unwrap();
    assert!(!rows.is_empty());
    // A gain of 1 scales the commands: the final positions at gain 1 ± δ bracket the tangent.
    let at = |g: f64| -> Vec<f64> {
        let o = Command::new(env!("CARGO_BIN_EXE_diffsoro"))
            .args(["simulate"])
            .arg(&scene_path)
            .args(["--inputs"])
            .arg(&inputs)
            .args(["--start", "scene", "--set"])
            .arg(format!("soft_body.finger.cable.{cable}.gain={g}"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        j["soft_bodies"][0]["positions"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| p.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()))
            .collect()
    };
    let (plus, minus) = (at(1.0 + 1e-5), at(1.0 - 1e-5));
    let fd: Vec<f64> = plus
        .iter()
        .zip(&minus)
        .map(|(p, m)| (p - m) / 2e-5)
        .collect();
    let tangent: Vec<f64> = rows
        .iter()
        .flat_map(|p| p.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()))
        .collect();
    let err = relative_error(&tangent, &fd, 1e-300);
    assert!(err < 1e-6, "relative error {err:.2e}");
    std::fs::remove_dir_all(dir).unwrap();
}

fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "diffsoro-command-sensitivity-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
