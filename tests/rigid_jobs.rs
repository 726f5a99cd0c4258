//! The rigid jobs of papers 002 and 003, on the rigid step's derivatives:
//! recovering a sliding cube's initial velocity from where it stopped, and the torques that
//! keep a quadruped standing still on its four feet (contact inverse dynamics); and the rigid
//! forward sensitivities they rest on against central differences of whole runs.

use crate::cli_support;
use crate::scene_support;

use diffsoro::calibrate::fit_initial_velocity;
use diffsoro::contact::BoundaryGradient;
use diffsoro::control::contact_inverse_dynamics;
use diffsoro::diff::{record_rigid_trajectory, rigid_forward_sensitivities};
use diffsoro::math::{DMat, Vec3};
use diffsoro::scene::{RigidDynamics, RigidInput, Scene, Stepper};
use scene_support::{root, run_steps as run, scene};

/// A 0.1 m cube resting on the floor (μ 0.5), pushed along it.
const CUBE: &str = r#"
[simulation]
dt = 0.005
gravity = [0.0, 0.0, -9.81]

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
"#;

#[test]
fn a_ball_sliding_then_rolling_has_the_sensitivities_of_its_runs() {
    // A 0.05 m ball thrown at 1 m/s with 5 rad/s of forward spin on a plane (μ 0.2): it slides,
    // friction brings it to rolling (v = ω r) after ≈ 0.11 s, then it rolls; 40 steps of 5 ms.
    // Tangents along ċ_x and ω_y of the start; the ball's height (its gap) does not move with
    // them, so the differences never straddle the penetration correction's kink.
    let s = scene(
        r#"
[simulation]
dt = 0.005
gravity = [0.0, 0.0, -9.81]

[contact]
friction = 0.2
tolerance = 1e-13
max_iterations = 100000

[[obstacle]]
type = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]

[[rigid_body]]
name = "ball"
shape = "sphere"
radius = 0.05
density = 500.0
position = [0.0, 0.0, 0.05]
velocity = [1.0, 0.0, 0.0]
angular_velocity = [0.0, 5.0, 0.0]
"#,
    );
    let steps = 40;
    let mut state = s.initial_state();
    let zero = DMat::zeros(6, 2);
    let mut seed = DMat::zeros(6, 2);
    seed[(0, 0)] = 1.0;
    seed[(4, 1)] = 1.0;
    let sens =
        rigid_forward_sensitivities(&s, &mut state, steps, [&zero, &seed, &zero], &mut |_| {})
            .unwrap();
    // Rolling at the end: v_x = ω_y r.
    let v = &state.rigid[0].v;
    assert!((v[0] - 0.05 * v[4]).abs() < 1e-6, "{v:?}");
    let eps = 1e-6;
    for (col, component) in [(0, 0), (1, 4)] {
        let at = |d: f64| {
            let mut st = s.initial_state();
            st.rigid[0].v[component] += d;
            run(&s, &mut st, steps);
            st.rigid[0].clone()
        };
        let (p, m) = (at(eps), at(-eps));
        for r in 0..3 {
            let fd_q = (p.q[r] - m.q[r]) / (2.0 * eps);
            let fd_v = (p.v[r] - m.v[r]) / (2.0 * eps);
            assert!(
                (sens.q[(r, col)] - fd_q).abs() < 1e-6,
                "q[{r}]/{component}: {} vs {fd_q}",
                sens.q[(r, col)]
            );
            assert!(
                (sens.v[(r, col)] - fd_v).abs() < 1e-6,
                "v[{r}]/{component}: {} vs {fd_v}",
                sens.v[(r, col)]
            );
        }
    }
    // Not trivial: the final position moves with the start's speed and spin.
    assert!(
        sens.q[(0, 0)] > 0.05 && sens.q[(0, 1)] > 0.001,
        "{}",
        sens.q
    );
}

#[test]
fn a_sliding_cube_gives_back_its_initial_velocity_from_where_it_stopped() {
    let s = scene(CUBE);
    let steps = 80;
    // The "experiment": pushed at (0.8, 0.3) m/s, it slides 0.73 m/s² · … and stops
    // (v²/(2 μ g) = 0.074 m along its path, in 0.17 s).
    let truth = [0.8, 0.3];
    let mut state = s.initial_state();
    state.rigid[0].v[0] = truth[0];
    state.rigid[0].v[1] = truth[1];
    run(&s, &mut state, steps);
    let q = &state.rigid[0].q;
    let observed = Vec3::new(q[0], q[1], q[2]);
    let speed = (truth[0] * truth[0] + truth[1] * truth[1]).sqrt();
    let travelled = Vec3::new(q[0], q[1], 0.0).norm();
    assert!(
        (travelled - speed * speed / (2.0 * 0.5 * 9.81)).abs() < 0.05 * travelled,
        "it slid {travelled} m"
    );
    let fit = fit_initial_velocity(&s, "cube", &[0, 1], &[0.4, 0.6], observed, steps).unwrap();
    eprintln!(
        "fit: {:?} in {} iterations ({:?})",
        fit.params, fit.iterations, fit.stop
    );
    for (got, want) in fit.params.iter().zip(truth) {
        assert!((got - want).abs() <= 1e-6 * want.abs(), "{got} vs {want}");
    }
}

#[test]
fn a_quadruped_finds_the_torques_that_keep_it_standing_still() {
    let s = Scene::load(
        &root().join("scenes/quadruped_standing.toml"),
        &[
            "contact.tolerance=1e-12".into(),
            "contact.max_iterations=100000".into(),
        ],
    )
    .unwrap();
    // Settled by its PD, then stopped: from rest, which torques keep it at rest?
    let mut state = s.initial_state();
    run(&s, &mut state, 1000);
    state.rigid[0].v.fill(0.0);
    let nv = s.rigid.systems[0].nv();
    let result = contact_inverse_dynamics(&s, "dog", &state, &vec![0.0; nv], 1e-5, 15).unwrap();
    eprintln!("residuals {:?}", result.history);
    assert!(
        result.iterations <= 15 && result.residual() < 1e-5,
        "{:?}",
        result.history
    );
    // A second method: one plain step with those torques keeps every velocity below 1e-5,
    // and the floor then carries the robot's weight (Σ λ_N h = m g h from rest to rest).
    let mut torque_scene = s.clone();
    torque_scene.rigid.systems[0].input = RigidInput::Torque(result.tau.clone());
    let mut next = state.clone();
    let mut stepper = Stepper::new(&torque_scene).unwrap();
    stepper.step(&torque_scene, &mut next).unwrap();
    let vmax = next.rigid[0].v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(vmax < 1e-5, "{vmax}");
    let RigidDynamics::Robot(model) = &s.rigid.systems[0].dynamics else {
        panic!("a robot")
    };
    let ws = stepper.rigid();
    let normal: f64 = (0..ws.contacts().len())
        .map(|i| ws.lambda()[3 * i + 2])
        .sum();
    let weight = model.total_mass() * 9.81;
    // v⁺ within 1e-5 of zero: the momentum balance within m · 1e-5 / h.
    assert!(
        (normal - weight).abs() < model.total_mass() * 1e-5 / 0.002 + 1e-9,
        "{normal} N for {weight} N"
    );
    // The free-flyer carries no torque.
    assert!(result.tau[..6].iter().all(|t| *t == 0.0));
}

#[test]
fn simulate_reports_rigid_sensitivities_equal_to_differences_of_two_runs() {
    // The pushed cube of scenes/cube_push.toml, from the command line, against two runs.
    let base = ["simulate", "scenes/cube_push.toml", "--steps", "40"];
    let mut args = base.to_vec();
    args.extend(["--sensitivity", "velocity:cube[0],angular_velocity:cube"]);
    let with = cli_support::run_json(&args);
    let sens = &with["rigid_sensitivities"];
    assert_eq!(
        sens.as_object().unwrap().len(),
        4,
        "one entry per component: {sens}"
    );
    let eps = 1e-6;
    let at = |vx: f64| {
        let set = format!("rigid_body.cube.velocity=[{vx}, 0.3, 0.0]");
        let mut a = base.to_vec();
        a.extend(["--set", set.as_str()]);
        cli_support::run_json(&a)["rigid_bodies"][0]["position"].clone()
    };
    let (p, m) = (at(0.8 + eps), at(0.8 - eps));
    for r in 0..3 {
        let fd = (p[r].as_f64().unwrap() - m[r].as_f64().unwrap()) / (2.0 * eps);
        let analytic = sens["velocity:cube[0]"]["cube"]["q"][r].as_f64().unwrap();
        assert!(
            (fd - analytic).abs() < 1e-6,
            "position[{r}]: {analytic} vs {fd}"
        );
    }
    // Errors name what is wrong.
    let out = cli_support::run(&[
        "simulate",
        "scenes/cube_push.toml",
        "--sensitivity",
        "velocity:ball",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("velocity:ball") && err.contains("cube"),
        "{err}"
    );
    // A lone body against the floor moves the same for every mass (M = m M̂ makes λ = m λ̂):
    // its mass sensitivity is zero (docs/derivatives.md).
    let mass = cli_support::run_json(&[
        "simulate",
        "scenes/cube_push.toml",
        "--steps",
        "20",
        "--sensitivity",
        "mass:cube",
    ]);
    let cube = &mass["rigid_sensitivities"]["mass:cube"]["cube"];
    for key in ["q", "v"] {
        for k in 0..6 {
            let x = cube[key][k].as_f64().unwrap();
            assert!(x.abs() < 1e-9, "d{key}[{k}]/dm = {x}");
        }
    }
}

#[test]
fn calibrate_recovers_the_push_from_the_command_line() {
    let dir = cli_support::scratch("calibrate_push");
    let obs = dir.join("obs");
    cli_support::run_ok(&[
        "simulate",
        "scenes/cube_push.toml",
        "--out",
        obs.to_str().unwrap(),
    ]);
    let observed = obs.join("final.json");
    let fit = dir.join("fit");
    let report = cli_support::run_json(&[
        "calibrate",
        "scenes/cube_push.toml",
        "--observed",
        observed.to_str().unwrap(),
        "--param",
        "velocity:cube[0],velocity:cube[1]",
        "--init",
        "velocity:cube[0]=0.4",
        "--init",
        "velocity:cube[1]=0.6",
        "--out",
        fit.to_str().unwrap(),
    ]);
    assert_eq!(report["converged"], true, "{report}");
    // The scene's own push, (0.8, 0.3) m/s, made the observation.
    for (name, want) in [("velocity:cube[0]", 0.8), ("velocity:cube[1]", 0.3)] {
        let got = report["params"][name].as_f64().unwrap();
        assert!((got - want).abs() <= 1e-6 * want, "{name}: {got}");
    }
    assert!(fit.join("calibration.json").is_file() && fit.join("loss.svg").is_file());
    // One kind per fit; an observation without the body is named.
    let out = cli_support::run(&[
        "calibrate",
        "scenes/cube_push.toml",
        "--observed",
        observed.to_str().unwrap(),
        "--param",
        "velocity:cube[0],young_modulus:beam",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("one kind"), "{err}");
    let out = cli_support::run(&[
        "calibrate",
        "scenes/cube_push.toml",
        "--observed",
        observed.to_str().unwrap(),
        "--param",
        "velocity:cube[0]",
        "--bounds",
        "velocity:cube[0]=0,1",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--bounds"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_rigid_adjoint_is_the_transpose_of_the_forward_sensitivities() {
    // The quadruped landing on its feet (PD joints, contacts throughout) for 20 steps: the
    // gradient of a random linear loss on the final (q, v) by one reverse sweep equals the
    // forward sensitivities of every start coordinate and input, contracted with the loss.
    let s = Scene::load(
        &root().join("scenes/quadruped_standing.toml"),
        &[
            "contact.tolerance=1e-12".into(),
            "contact.max_iterations=100000".into(),
        ],
    )
    .unwrap();
    let mut start = s.initial_state();
    run(&s, &mut start, 200);
    start.rigid[0].q[2] += 2e-5;
    start.rigid[0].v[2] = -0.05;
    let steps = 20;
    let n = s.rigid.systems[0].nv();
    let mut rng = diffsoro::math::SplitMix64::new(11);
    let (cq, cv): (Vec<f64>, Vec<f64>) = (0..n)
        .map(|_| (rng.uniform() - 0.5, rng.uniform() - 0.5))
        .unzip();
    let mut state = start.clone();
    let tape =
        record_rigid_trajectory(&s, &mut state, steps, &[], BoundaryGradient::OneSided).unwrap();
    let grad = tape.adjoint(&cq, &cv);
    let (eye, zero) = (DMat::identity(n, n), DMat::zeros(n, n));
    for (which, reverse) in [(0, &grad.q), (1, &grad.v), (2, &grad.tau)] {
        let mut seeds = [&zero, &zero, &zero];
        seeds[which] = &eye;
        let mut st = start.clone();
        let sens = rigid_forward_sensitivities(&s, &mut st, steps, seeds, &mut |_| {}).unwrap();
        let scale = reverse.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        for (k, back) in reverse.iter().enumerate() {
            let forward: f64 = (0..n)
                .map(|r| cq[r] * sens.q[(r, k)] + cv[r] * sens.v[(r, k)])
                .sum();
            assert!(
                (forward - back).abs() <= 1e-10 * scale,
                "seed {which}, coordinate {k}: forward {forward}, reverse {back}"
            );
        }
        assert!(scale > 1e-3, "a trivial gradient for seed {which}");
    }
}
