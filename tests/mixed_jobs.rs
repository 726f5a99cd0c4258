//! The jobs in scenes where soft and rigid bodies share an NCP, through the
//! derivatives of mixed steps: calibrating a soft body's Young's modulus with a rigid body
//! attached to it (the observation made by the plain stepper at a known E; the fit starts
//! three times too small and must recover it to 1e-4 relative), and contact-force control
//! (paper 004 Eq. 17) of the cable Finger pressing the hinged piano key of
//! `scenes/pianist.toml` against the constant-maximum-actuation heuristic (the direction of
//! the paper's Table I).

use crate::cli_support;

use std::path::Path;

use diffsoro::calibrate::{CalibrationSetup, LmOptions, Parametrisation, calibrate_scene};
use diffsoro::scene::{FinalState, Scene, Stepper};

fn load(overrides: &[&str]) -> Scene {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/lift_pad.toml");
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Scene::load(&path, &overrides).unwrap()
}

#[test]
fn the_pad_hanging_from_a_palm_gives_its_young_modulus() {
    // 40 steps (0.2 s): the palm sinks under the pad's weight and the pad sags.
    let truth = 1.0e5;
    let scene = load(&[
        "simulation.steps=40",
        &format!("soft_body.pad.young_modulus={truth}"),
    ]);
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    for _ in 0..scene.simulation.steps {
        stepper.step(&scene, &mut state).unwrap();
    }
    let observed = FinalState::new(&scene, &state);
    let setup = CalibrationSetup {
        params: Parametrisation::parse(&["young_modulus:pad"]).unwrap(),
        initial: vec![Some(truth / 3.0)],
        observed,
        restarts: 0,
    };
    let report = calibrate_scene(&scene, &setup, &LmOptions::default(), &mut |_| {}).unwrap();
    let fitted = report.params["young_modulus:pad"];
    assert!(
        ((fitted - truth) / truth).abs() <= 1e-4,
        "fitted {fitted}, true {truth}: {report:?}"
    );
    assert!(report.converged, "{report:?}");
    assert!(report.iterations <= 20, "{} iterations", report.iterations);
}

/// `scenes/lift_pad.toml` with `edit` applied, its relative paths made absolute and its NCP
/// solved to 1e-12, written into `dir` as `name`; the path, as text.
fn lift_pad_scene(dir: &Path, name: &str, edit: impl Fn(String) -> String) -> String {
    let root = cli_support::root();
    let text = std::fs::read_to_string(root.join("scenes/lift_pad.toml"))
        .unwrap()
        .replace("../meshes/", &format!("{}/meshes/", root.display()))
        .replace("../urdf/", &format!("{}/urdf/", root.display()));
    let scene = dir.join(name);
    std::fs::write(
        &scene,
        edit(text) + "\n[contact]\ntolerance = 1e-12\nmax_iterations = 100000\n",
    )
    .unwrap();
    scene.to_str().unwrap().to_string()
}

/// The final states of `simulate SCENE --steps 20` with `extra` arguments.
fn final_json(scene: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["simulate", scene, "--steps", "20"];
    args.extend(extra);
    cli_support::run_json(&args)
}

/// The palm's q and pad node 0's z sensitivities to `name` in `with` against the central
/// differences of the runs `p` and `m` at ±`eps`, to 1e-6 relative; each analytic value
/// above its floor when one is given (`palm_floor`, `pad_floor`, with their messages).
fn assert_palm_and_pad(
    with: &serde_json::Value,
    name: &str,
    (p, m, eps): (&serde_json::Value, &serde_json::Value, f64),
    palm_floor: Option<f64>,
    pad_floor: f64,
) {
    let q = |j: &serde_json::Value| j["robots"][0]["q"][0].as_f64().unwrap();
    let fd = (q(p) - q(m)) / (2.0 * eps);
    let analytic = with["rigid_sensitivities"][name]["lift"]["q"][0]
        .as_f64()
        .unwrap();
    if let Some(floor) = palm_floor {
        assert!(
            analytic.abs() > floor,
            "{name}: the palm follows its target: {analytic:e}"
        );
    }
    assert!(
        (fd - analytic).abs() <= 1e-6 * analytic.abs(),
        "{name}: palm q {analytic:e} vs {fd:e}"
    );
    let z = |j: &serde_json::Value| j["soft_bodies"][0]["positions"][0][2].as_f64().unwrap();
    let fd = (z(p) - z(m)) / (2.0 * eps);
    let analytic = with["sensitivities"][name][0][2].as_f64().unwrap();
    assert!(
        analytic.abs() > pad_floor,
        "{name}: the pad moves with it: {analytic:e}"
    );
    assert!(
        (fd - analytic).abs() <= 1e-6 * analytic.abs(),
        "{name}: pad node 0 z {analytic:e} vs {fd:e}"
    );
}

/// `simulate --sensitivity` in a mixed scene: the pad of `lift_pad.toml` pushed up by a
/// constant force (`torque`, N) instead of the PD. The palm's sensitivities (`rigid_sensitivities`)
/// and the pad's (`sensitivities`) with respect to that force, to E and to the palm's initial
/// velocity (`v:lift`, a rigid initial-state name taken with the soft ones in a mixed scene)
/// equal central differences of two runs each, to 1e-6 relative.
#[test]
fn simulate_reports_mixed_sensitivities_equal_to_differences_of_two_runs() {
    let dir = cli_support::scratch("pushed-pad");
    let scene = lift_pad_scene(&dir, "pushed_pad.toml", |text| {
        text.replace("kp = [200.0]", "torque = [1.2]")
            .replace("kd = [20.0]", "")
            .replace("target = [0.0]", "")
    });
    let with = final_json(
        &scene,
        &["--sensitivity", "tau:lift[0],young_modulus:pad,v:lift"],
    );
    for (name, set, value, eps) in [
        ("tau:lift[0]", "robot.lift.torque", "[{}]", 1e-4),
        ("v:lift[0]", "robot.lift.v", "[{}]", 1e-4),
        (
            "young_modulus:pad",
            "soft_body.pad.young_modulus",
            "{}",
            10.0,
        ),
    ] {
        let base = match &name[..1] {
            "t" => 1.2,
            "v" => 0.0,
            _ => 1.0e5,
        };
        let at = |x: f64| {
            let v = value.replace("{}", &format!("{x}"));
            let arg = format!("{set}={v}");
            final_json(&scene, &["--set", arg.as_str()])
        };
        let (p, m) = (at(base + eps), at(base - eps));
        assert_palm_and_pad(&with, name, (&p, &m, eps), None, 1e-12);
    }
}

/// `simulate --sensitivity target:lift[0]` on `lift_pad.toml` itself (the pad on the palm
/// held by its PD): the palm's and a pad node's sensitivities to the PD's target (m) equal
/// central differences of two runs with `--set robot.lift.target=[±1e-4]`, to 1e-6 relative.
#[test]
fn simulate_reports_the_pd_targets_sensitivity_in_a_mixed_scene() {
    let dir = cli_support::scratch("pd-pad");
    let scene = lift_pad_scene(&dir, "pd_pad.toml", |text| text);
    let name = "target:lift[0]";
    let with = final_json(&scene, &["--sensitivity", name]);
    let eps = 1e-4;
    let at = |x: f64| final_json(&scene, &["--set", &format!("robot.lift.target=[{x}]")]);
    let (p, m) = (at(eps), at(-eps));
    assert_palm_and_pad(&with, name, (&p, &m, eps), Some(1e-3), 1e-6);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `simulate --sensitivity mass:cube` in a mixed scene: a 25 mm rigid cube landing at 0.1 m/s
/// on a clamped soft block (the landing of `tests/mixed_step_derivative.rs`, its gaps clear of
/// the correction's kink at 0; one NCP holds the block's nodes under the cube and the cube's
/// corners on the block). The mass scales the inertia with it, as a change of the cube's
/// density does (m = ρ V, V = (0.025 m)³), so after the landing (4 steps) the cube's
/// position and the block's nodes equal central differences of two runs with
/// `--set rigid_body.cube.density=1000 ± 0.1` divided by V, to 1e-6 relative.
#[test]
fn simulate_reports_the_cubes_mass_sensitivity_in_a_mixed_scene() {
    let root = cli_support::root();
    let dir = cli_support::scratch("landing-mass");
    let scene = dir.join("landing.toml");
    std::fs::write(
        &scene,
        format!(
            r#"
[simulation]
dt = 0.005
steps = 4
gravity = [0.0, 0.0, -9.81]

[contact]
friction = 0.5
tolerance = 1e-12
max_iterations = 100000

[[soft_body]]
name = "block"
mesh = "{}/meshes/soft_block.msh"
law = "neo_hookean"
young_modulus = 1.0e5
poisson_ratio = 0.3
density = 1000.0
rayleigh_mass = 2.0
rayleigh_stiffness = 0.01
fixed_box = [[-1.0, -1.0, -1.0], [1.0, 1.0, 0.001]]

[[rigid_body]]
name = "cube"
shape = "box"
half_extents = [0.0125, 0.0125, 0.0125]
density = 1000.0
position = [0.0013, -0.0021, 0.0335]
velocity = [0.0, 0.0, -0.1]
"#,
            root.display()
        ),
    )
    .unwrap();
    let scene = scene.to_str().unwrap();
    let final_json = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["simulate", scene];
        args.extend(extra);
        cli_support::run_json(&args)
    };
    let with = final_json(&["--sensitivity", "mass:cube"]);
    let volume = 0.025f64.powi(3);
    let eps = 0.1;
    let at = |rho: f64| final_json(&["--set", &format!("rigid_body.cube.density={rho}")]);
    let (p, m) = (at(1000.0 + eps), at(1000.0 - eps));
    let slope = |f: &dyn Fn(&serde_json::Value) -> f64| (f(&p) - f(&m)) / (2.0 * eps * volume);
    for k in 0..3 {
        let fd = slope(&|j| j["rigid_bodies"][0]["position"][k].as_f64().unwrap());
        let analytic = with["rigid_sensitivities"]["mass:cube"]["cube"]["q"][k]
            .as_f64()
            .unwrap();
        assert!(
            (fd - analytic).abs() <= 1e-6 * analytic.abs(),
            "cube position[{k}]: {analytic:e} per kg vs {fd:e}"
        );
    }
    // The block's node that moves most with the mass.
    let rows = with["sensitivities"]["mass:cube"].as_array().unwrap();
    let (node, row) = rows
        .iter()
        .enumerate()
        .max_by(|a, b| {
            let z = |r: &serde_json::Value| r[2].as_f64().unwrap().abs();
            z(a.1).total_cmp(&z(b.1))
        })
        .unwrap();
    let analytic = row[2].as_f64().unwrap();
    assert!(analytic.abs() > 1e-6, "the block moves with the mass");
    let fd = slope(&|j| j["soft_bodies"][0]["positions"][node][2].as_f64().unwrap());
    assert!(
        (fd - analytic).abs() <= 1e-6 * analytic.abs(),
        "block node {node} z: {analytic:e} per kg vs {fd:e}"
    );
}

/// `calibrate --param velocity:cube[k]` in a mixed scene: a cube pushed across the soft block
/// of `scenes/cube_on_block.toml` at (0.1, 0.05) m/s slides (μ = 0.5) and stops; from its
/// final position alone the fit recovers that push (the observation's own input, set with
/// `--set`) from (0.05, 0.1) m/s, through the mixed step's sensitivities.
#[test]
fn calibrate_recovers_a_push_across_the_soft_block() {
    let dir = cli_support::scratch("calibrate_mixed_push");
    let obs = dir.join("obs");
    cli_support::run_ok(&[
        "simulate",
        "scenes/cube_on_block.toml",
        "--steps",
        "30",
        "--set",
        "rigid_body.cube.velocity=[0.1, 0.05, 0.0]",
        "--out",
        obs.to_str().unwrap(),
    ]);
    let report = cli_support::run_json(&[
        "calibrate",
        "scenes/cube_on_block.toml",
        "--observed",
        obs.join("final.json").to_str().unwrap(),
        "--param",
        "velocity:cube[0],velocity:cube[1]",
        "--init",
        "velocity:cube[0]=0.05",
        "--init",
        "velocity:cube[1]=0.1",
        "--set",
        "simulation.steps=30",
    ]);
    assert_eq!(report["converged"], true, "{report}");
    for (name, want) in [("velocity:cube[0]", 0.1), ("velocity:cube[1]", 0.05)] {
        let got = report["params"][name].as_f64().unwrap();
        assert!((got - want).abs() <= 1e-6 * want, "{name}: {got}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `calibrate --param mass:cube`: weighing a rigid body with the silicone under it. The cube
/// of `scenes/cube_on_block.toml` is observed after 60 steps at 3000 kg/m³ (m = 3000 × (0.025
/// m)³ = 46.875 g, the observation's own input, set with `--set`); from the scene's 15.6 g the
/// fit, whose residual is the block's final node positions, recovers m to 1e-6 relative
/// through the mixed step's mass sensitivities. In a scene of rigid bodies alone there are no
/// soft positions to fit, and `--param mass:` is a one-line error saying so.
#[test]
fn calibrate_weighs_a_cube_by_the_block_under_it() {
    let dir = cli_support::scratch("calibrate_mass");
    let obs = dir.join("obs");
    cli_support::run_ok(&[
        "simulate",
        "scenes/cube_on_block.toml",
        "--steps",
        "60",
        "--set",
        "rigid_body.cube.density=3000",
        "--out",
        obs.to_str().unwrap(),
    ]);
    let observed = obs.join("final.json");
    let report = cli_support::run_json(&[
        "calibrate",
        "scenes/cube_on_block.toml",
        "--observed",
        observed.to_str().unwrap(),
        "--param",
        "mass:cube",
        "--set",
        "simulation.steps=60",
    ]);
    assert_eq!(report["converged"], true, "{report}");
    let want = 3000.0 * 0.025f64.powi(3);
    let start = report["param_history"]["mass:cube"][0].as_f64().unwrap();
    assert!(
        (start - want / 3.0).abs() < 1e-12,
        "starts at the scene's mass: {start}"
    );
    let got = report["params"]["mass:cube"].as_f64().unwrap();
    assert!((got - want).abs() <= 1e-6 * want, "mass {got} kg vs {want}");
    let out = cli_support::run(&[
        "calibrate",
        "scenes/cube_push.toml",
        "--observed",
        observed.to_str().unwrap(),
        "--param",
        "mass:cube",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.trim().lines().count() == 1 && err.contains("--param") && err.contains("soft bodies"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--sensitivity target:ROBOT` without a component, in a mixed scene, stands for each of the
/// robot's coordinates: the soft pad of `lift_pad.toml` hung from the cart of a PD-held
/// cart-pole (`urdf/cartpole.urdf`, 2 joints) reports `target:cp[0]` and `target:cp[1]`, each
/// equal, bit for bit, to the run that names the two components.
#[test]
fn a_whole_robots_target_stands_for_each_of_its_coordinates() {
    let dir = cli_support::scratch("whole-robot-target");
    let root = cli_support::root();
    let scene = dir.join("cart_pad.toml");
    std::fs::write(
        &scene,
        format!(
            r#"
[simulation]
dt = 0.005
steps = 10
gravity = [0.0, 0.0, -9.81]

[[soft_body]]
name = "pad"
mesh = "{root}/meshes/soft_block.msh"
law = "neo_hookean"
young_modulus = 1.0e5
poisson_ratio = 0.3
density = 1000.0
rayleigh_mass = 2.0
rayleigh_stiffness = 0.01

[[robot]]
name = "cp"
urdf = "{root}/urdf/cartpole.urdf"
base = "fixed"
position = [0.0, 0.0, 0.2]   # m: the cart and its rail clear of the pad, which hangs from it
kp = [200.0, 5.0]
kd = [20.0, 0.5]
target = [0.01, 1.0, 0.0]   # the hinge is continuous: (cos θ, sin θ)

[[attachment]]
soft_body = "pad"
box = [[-1.0, -1.0, 0.019], [1.0, 1.0, 1.0]]
robot = "cp"
link = "cart"
"#,
            root = root.display()
        ),
    )
    .unwrap();
    let scene = scene.to_str().unwrap();
    let whole = final_json(scene, &["--sensitivity", "target:cp"]);
    let each = final_json(scene, &["--sensitivity", "target:cp[0],target:cp[1]"]);
    for name in ["target:cp[0]", "target:cp[1]"] {
        let rigid = &whole["rigid_sensitivities"][name];
        assert!(rigid.is_object(), "{name} reported: {whole}");
        assert_eq!(rigid, &each["rigid_sensitivities"][name], "{name}");
        assert_eq!(
            whole["sensitivities"][name], each["sensitivities"][name],
            "{name}"
        );
    }
    // The cart moves with its own target (m per m).
    let dq = whole["rigid_sensitivities"]["target:cp[0]"]["cp"]["q"][0]
        .as_f64()
        .unwrap();
    assert!(dq > 1e-3, "{dq}");
    let _ = std::fs::remove_dir_all(&dir);
}
