//! Actuator drives beyond the linearised step: an angle-driven servo pins its horn to the
//! rigid rotation and reports the torque that holds it; displacement targets in full Newton
//! and in statics; per-step limits of the inputs. Expected numbers come from geometry (the
//! rigid rotation), the balance of moments (a rotation-invariant energy has zero total
//! moment), or the drive's own definition (targets, limits).

use std::path::Path;

use diffsoro::fem::Stiffness;
use diffsoro::math::Vec3;
use diffsoro::scene::{FinalState, Scene, SceneFile, State, StaticOptions, Stepper, solve_static};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The 100 × 10 × 10 mm beam (meshes/beam_1.msh, x ∈ [0, 0.1], y, z ∈ [−5, 5] mm) clamped at
/// x = 0, no gravity, with `extra` appended and `newton` iterations.
fn bar(extra: &str, newton: usize) -> Scene {
    let text = format!(
        r#"
        [simulation]
        dt = 0.01
        steps = 1
        gravity = [0.0, 0.0, 0.0]
        newton_iterations = {newton}
        [[soft_body]]
        name = "bar"
        mesh = "beam_1.msh"
        law = "corotational"
        young_modulus = 1.0e6
        poisson_ratio = 0.3
        density = 1000.0
        rayleigh_mass = 5.0
        fixed_group = "clamp"
        {extra}
        "#
    );
    let file = SceneFile::parse("bar.toml", &text, &[]).unwrap();
    Scene::build(&file, &Path::new(ROOT).join("meshes")).unwrap()
}

fn run(scene: &Scene, steps: usize) -> State {
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(scene).unwrap();
    for _ in 0..steps {
        stepper.step(scene, &mut state).unwrap();
    }
    state
}

/// A servo twisting the free end face (x = 0.1) about the beam's axis.
fn servo(angle: f64, more: &str) -> String {
    format!(
        "[[soft_body.servo]]\nname = \"s\"\nbox = [[0.0999, -1.0, -1.0], [1.0, 1.0, 1.0]]\naxis_point = [0.1, 0.0, 0.0]\naxis_direction = [1.0, 0.0, 0.0]\nangle = {angle}\n{more}"
    )
}

fn horn(scene: &Scene) -> Vec<usize> {
    (0..scene.bodies[0].node_count())
        .filter(|&n| scene.bodies[0].rest_positions()[n].x > 0.0999)
        .collect()
}

/// Largest distance of the horn nodes from their rigid rotation by `theta` about x.
fn off_rotation(scene: &Scene, state: &State, theta: f64) -> f64 {
    let rot = nalgebra::Rotation3::from_axis_angle(&Vec3::x_axis(), theta);
    let o = Vec3::new(0.1, 0.0, 0.0);
    horn(scene)
        .iter()
        .map(|&n| {
            let rest = scene.bodies[0].rest_positions()[n];
            (state.bodies[0].positions[n] - (o + rot * (rest - o))).norm()
        })
        .fold(0.0, f64::max)
}

/// The moment about the x axis through (0.1, 0, 0) of the elastic forces on `nodes` (N·m).
fn elastic_moment(scene: &Scene, state: &State, nodes: impl Iterator<Item = usize>) -> f64 {
    let body = &scene.bodies[0];
    let mut es = body.elastic_state();
    body.evaluate_elastic(&state.bodies[0].positions, Stiffness::Skip, &mut es)
        .unwrap();
    let o = Vec3::new(0.1, 0.0, 0.0);
    nodes
        .map(|n| (state.bodies[0].positions[n] - o).cross(&es.forces[n]).x)
        .sum()
}

#[test]
fn a_pinned_servo_turns_its_horn_rigidly_in_every_solver() {
    let theta = 0.2;
    for newton in [1, 4] {
        let scene = bar(&servo(theta, ""), newton);
        assert!(horn(&scene).len() >= 4);
        for steps in [1, 5] {
            let state = run(&scene, steps);
            let off = off_rotation(&scene, &state, theta);
            assert!(off < 1e-15, "newton {newton}, {steps} steps: {off:e} m");
            let fs = FinalState::new(&scene, &state);
            assert!((fs.actuators[0].value - theta).abs() < 1e-12);
        }
    }
    let scene = bar(&servo(theta, ""), 1);
    let mut state = scene.initial_state();
    solve_static(&scene, &mut state, StaticOptions::default()).unwrap();
    assert!(off_rotation(&scene, &state, theta) < 1e-15);
}

#[test]
fn the_servo_torque_balances_the_clamp_and_the_elastic_moment() {
    let theta = 0.1;
    let scene = bar(&servo(theta, ""), 1);
    let mut state = scene.initial_state();
    solve_static(&scene, &mut state, StaticOptions::default()).unwrap();
    let tau = state.actuator_forces[0][0];
    // The servo holds the horn against the elastic forces on it…
    let horn_moment = elastic_moment(&scene, &state, horn(&scene).into_iter());
    assert!(tau > 0.0, "{tau}");
    assert!(
        (tau + horn_moment).abs() < 1e-8 * tau,
        "{tau} vs {horn_moment}"
    );
    // …and the clamp carries the same torque back (the total moment of the internal forces of
    // a rotation-invariant energy is zero; the free nodes are in equilibrium).
    let body = &scene.bodies[0];
    let clamp =
        (0..body.node_count()).filter(|&n| body.is_fixed(n) && body.rest_positions()[n].x < 0.05);
    let clamp_moment = elastic_moment(&scene, &state, clamp);
    assert!(
        (tau - clamp_moment).abs() < 1e-6 * tau,
        "{tau} vs clamp {clamp_moment}"
    );
    // Stepping in time settles on the same torque.
    for newton in [1, 3] {
        let scene = bar(&servo(theta, ""), newton);
        let state = run(&scene, 400);
        let t = state.actuator_forces[0][0];
        assert!(
            (t - tau).abs() < 1e-3 * tau,
            "newton {newton}: {t} vs static {tau}"
        );
    }
}

#[test]
fn the_angle_moves_at_most_max_angle_step_per_step() {
    let scene = bar(&servo(0.2, "max_angle_step = 0.05"), 1);
    for steps in 1..=5 {
        let state = run(&scene, steps);
        let expected = (0.05 * steps as f64).min(0.2);
        assert!(off_rotation(&scene, &state, expected) < 1e-15, "{steps}");
    }
}

const CABLE: &str = "[[soft_body.cable]]\nname = \"c\"\npoints = [[0.02, 0.0, 0.004], [0.06, 0.0, 0.004], [0.1, 0.0, 0.004]]\npull_point = [0.0, 0.0, 0.004]\n";

#[test]
fn displacement_targets_are_met_in_full_newton_and_in_statics() {
    let rest = 0.1;
    let scene = bar(&format!("{CABLE}displacement = 0.0005"), 10);
    for steps in [1, 3, 30] {
        let state = run(&scene, steps);
        let fs = FinalState::new(&scene, &state);
        let (length, tension) = (fs.actuators[0].value, fs.actuators[0].force);
        assert!(
            (length - (rest - 0.0005)).abs() < 1e-10,
            "{steps}: {length}"
        );
        assert!(tension > 0.0);
    }
    let mut state = scene.initial_state();
    solve_static(&scene, &mut state, StaticOptions::default()).unwrap();
    let fs = FinalState::new(&scene, &state);
    let (length, tension) = (fs.actuators[0].value, fs.actuators[0].force);
    assert!((length - (rest - 0.0005)).abs() < 1e-10, "static {length}");
    // Second method: the static equilibrium under that tension has that length.
    let forced = bar(&format!("{CABLE}force = {tension:e}"), 1);
    let mut state = forced.initial_state();
    solve_static(&forced, &mut state, StaticOptions::default()).unwrap();
    let l = FinalState::new(&forced, &state).actuators[0].value;
    assert!((l - (rest - 0.0005)).abs() < 1e-8, "{l}");
}

#[test]
fn a_cable_asked_to_push_stays_slack_in_newton_and_statics() {
    let scene = bar(&format!("{CABLE}displacement = -0.001"), 5);
    let mut stepper = Stepper::new(&scene).unwrap();
    let mut state = scene.initial_state();
    for _ in 0..5 {
        stepper.step(&scene, &mut state).unwrap();
        assert_eq!(state.actuator_forces[0][0], 0.0);
    }
    let mut state = scene.initial_state();
    solve_static(&scene, &mut state, StaticOptions::default()).unwrap();
    assert_eq!(state.actuator_forces[0][0], 0.0);
    let moved = state.bodies[0]
        .positions
        .iter()
        .zip(scene.bodies[0].rest_positions())
        .map(|(x, r)| (x - r).norm())
        .fold(0.0, f64::max);
    assert!(moved < 1e-12, "{moved}");
}

#[test]
fn per_step_limits_ramp_displacement_and_force() {
    // Shortening by at most 0.5 mm per step towards 2 mm (met exactly with Newton).
    let scene = bar(
        &format!("{CABLE}displacement = 0.002\nmax_displacement_step = 0.0005"),
        10,
    );
    for steps in 1..=5 {
        let state = run(&scene, steps);
        let length = FinalState::new(&scene, &state).actuators[0].value;
        let expected = 0.1 - (0.0005 * steps as f64).min(0.002);
        assert!((length - expected).abs() < 1e-10, "{steps}: {length}");
    }
    // A given tension ramped from 0 by 0.1 N per step.
    let scene = bar(&format!("{CABLE}force = 0.35\nmax_force_step = 0.1"), 1);
    assert_eq!(scene.initial_state().actuator_forces[0][0], 0.0);
    for (steps, expected) in [
        (1, 0.1),
        (2, 0.2),
        (3, 0.30000000000000004),
        (4, 0.35),
        (6, 0.35),
    ] {
        let state = run(&scene, steps);
        assert!(
            (state.actuator_forces[0][0] - expected).abs() < 1e-15,
            "{steps}"
        );
    }
    // Statics has no steps: the given tension applies in full.
    let mut state = scene.initial_state();
    solve_static(&scene, &mut state, StaticOptions::default()).unwrap();
    assert_eq!(state.actuator_forces[0][0], 0.35);
    // A solved tension changes by at most max_force_step per step.
    let scene = bar(
        &format!("{CABLE}displacement = 0.002\nmax_force_step = 0.01"),
        1,
    );
    let mut stepper = Stepper::new(&scene).unwrap();
    let mut state = scene.initial_state();
    let mut last = 0.0;
    for _ in 0..10 {
        stepper.step(&scene, &mut state).unwrap();
        let l = state.actuator_forces[0][0];
        assert!((l - last).abs() <= 0.01 + 1e-15, "{last} → {l}");
        last = l;
    }
    assert!(last > 0.0);
}

/// Flattens per-node vectors (3 per node).
fn flat(v: &[Vec3]) -> Vec<f64> {
    v.iter().flat_map(|p| [p.x, p.y, p.z]).collect()
}

#[test]
fn the_pinned_step_solves_the_full_system_on_the_free_rows() {
    // Second method: the same body with only the clamp fixed has the horn DOFs in its system;
    // the pinned step's (v⁺ − v) must satisfy that full linearised system A Δv = b on every
    // row that is free in the pinned body (consistent mass and both Rayleigh terms, so the
    // mass and stiffness couplings to the prescribed nodes are all exercised).
    let body_keys = "mass = \"consistent\"\nrayleigh_stiffness = 0.002\n";
    let pinned = bar(
        &format!("{body_keys}{}", servo(0.3, "max_angle_step = 0.05")),
        1,
    );
    let free = bar(body_keys, 1);
    let h = pinned.simulation.dt;
    let mut state = pinned.initial_state();
    let mut stepper = Stepper::new(&pinned).unwrap();
    for _ in 0..3 {
        stepper.step(&pinned, &mut state).unwrap();
    }
    let before = state.bodies[0].clone();
    stepper.step(&pinned, &mut state).unwrap();
    let after = &state.bodies[0];

    let body = &free.bodies[0];
    let opts = body.options();
    let (alpha, beta) = (opts.rayleigh_mass, opts.rayleigh_stiffness);
    let (c_m, c_k) = (1.0 + h * alpha, h * beta + h * h);
    let dofs = body.pattern().dofs();
    let n = dofs.n_reduced();
    let mut es = body.elastic_state();
    body.evaluate_elastic(&before.positions, Stiffness::Assemble, &mut es)
        .unwrap();
    let reduce = |v: &[Vec3]| {
        let mut r = vec![0.0; n];
        dofs.reduce(&flat(v), &mut r);
        r
    };
    let v = reduce(&before.velocities);
    let dv: Vec<Vec3> = after
        .velocities
        .iter()
        .zip(&before.velocities)
        .map(|(a, b)| a - b)
        .collect();
    let dv = reduce(&dv);
    // A Δv − b, b = h f − hα M v − c_k K v (no gravity).
    let mut res = vec![0.0; n];
    let pattern = body.pattern();
    pattern.symmetric_product_add(body.mass_values(), c_m, &dv, &mut res);
    pattern.symmetric_product_add(&es.stiffness, c_k, &dv, &mut res);
    pattern.symmetric_product_add(body.mass_values(), h * alpha, &v, &mut res);
    pattern.symmetric_product_add(&es.stiffness, c_k, &v, &mut res);
    let f = reduce(&es.forces);
    let horn = horn(&pinned);
    let mut worst: f64 = 0.0;
    let mut scale: f64 = 0.0;
    for (r, (res, f)) in res.iter().zip(&f).enumerate() {
        let node = dofs.full_index(r) / 3;
        if horn.contains(&node) {
            continue;
        }
        worst = worst.max((res - h * f).abs());
        scale = scale.max((h * f).abs());
    }
    assert!(scale > 0.0);
    assert!(worst < 1e-9 * scale, "{worst:e} vs {scale:e}");
    // And the horn turned by exactly one angle step (4 × 0.05 rad).
    assert!(off_rotation(&pinned, &state, 0.2) < 1e-15);

    // Full Newton: R(v⁺) = M(v⁺ − v) + hαMv⁺ + hβK(xₙ)v⁺ − h f(x⁺) = 0 on the same rows.
    let pinned = bar(
        &format!("{body_keys}{}", servo(0.3, "max_angle_step = 0.05")),
        30,
    );
    let mut state = pinned.initial_state();
    let mut stepper = Stepper::new(&pinned).unwrap();
    for _ in 0..3 {
        stepper.step(&pinned, &mut state).unwrap();
    }
    let before = state.bodies[0].clone();
    stepper.step(&pinned, &mut state).unwrap();
    let after = &state.bodies[0];
    body.evaluate_elastic(&before.positions, Stiffness::Assemble, &mut es)
        .unwrap();
    let k_start = es.stiffness.clone();
    body.evaluate_elastic(&after.positions, Stiffness::Skip, &mut es)
        .unwrap();
    let (v, vp) = (reduce(&before.velocities), reduce(&after.velocities));
    let mut res = vec![0.0; n];
    pattern.symmetric_product_add(body.mass_values(), 1.0 + h * alpha, &vp, &mut res);
    pattern.symmetric_product_add(body.mass_values(), -1.0, &v, &mut res);
    pattern.symmetric_product_add(&k_start, h * beta, &vp, &mut res);
    let f = reduce(&es.forces);
    let (mut worst, mut scale): (f64, f64) = (0.0, 0.0);
    for (r, (res, f)) in res.iter().zip(&f).enumerate() {
        if horn.contains(&(dofs.full_index(r) / 3)) {
            continue;
        }
        worst = worst.max((res - h * f).abs());
        scale = scale.max((h * f).abs());
    }
    assert!(worst < 1e-9 * scale, "Newton: {worst:e} vs {scale:e}");
}
