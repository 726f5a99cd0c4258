//! A force-driven cable with SOFA's bounds: `max_displacement` / `min_displacement`
//! on its total pull (rest length − length) and `min_force` / `max_force` on its tension. When
//! the given force would pull further than `max_displacement`, the step holds the pull at the
//! bound with the tension that does so (a complementarity solved inside each step). Expected
//! numbers: the bound itself, and the tension a displacement-driven run at that displacement
//! needs (a second method: its λ is solved for an equality target, not a window).

use std::path::Path;

use diffsoro::scene::{FinalState, Scene, SceneFile, State, StaticOptions, Stepper, solve_static};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The 100 × 10 × 10 mm bar (meshes/beam_1.msh, x ∈ [0, 0.1]) clamped at x = 0, no gravity,
/// E = 1 MPa, with one cable from the fixed pull point (0.2, 0, 0) to the middle of the free
/// end (0.1, 0, 0): pulling stretches the bar along x (about 1 mm per newton, EA = 100 N).
fn bar(cable: &str) -> Scene {
    bar_with(cable, 1)
}

/// [`bar`] with `newton` iterations per step.
fn bar_with(cable: &str, newton: usize) -> Scene {
    let text = format!(
        r#"
        [simulation]
        dt = 0.01
        newton_iterations = {newton}
        gravity = [0.0, 0.0, 0.0]
        [[soft_body]]
        name = "bar"
        mesh = "beam_1.msh"
        law = "corotational"
        young_modulus = 1.0e6
        poisson_ratio = 0.3
        density = 1000.0
        rayleigh_mass = 20.0
        fixed_group = "clamp"
        [[soft_body.cable]]
        name = "c"
        points = [[0.1, 0.0, 0.0]]
        pull_point = [0.2, 0.0, 0.0]
        {cable}
        "#
    );
    let file = SceneFile::parse("bar.toml", &text, &[]).unwrap();
    Scene::build(&file, &Path::new(ROOT).join("meshes")).unwrap()
}

/// (pull = 0.1 − length (m), tension (N)) of the cable in `state`.
fn pull_and_force(scene: &Scene, state: &State) -> (f64, f64) {
    let a = &FinalState::new(scene, state).actuators[0];
    (0.1 - a.value, a.force)
}

#[test]
fn statics_hold_the_pull_at_its_bound_with_the_force_a_displacement_drive_needs() {
    // Free: 2 N pull about 2 mm; bound 1 mm.
    let bounded = bar("force = 2.0\nmax_displacement = 0.001");
    let mut state = bounded.initial_state();
    solve_static(&bounded, &mut state, StaticOptions::default()).unwrap();
    let (pull, force) = pull_and_force(&bounded, &state);
    assert!((pull - 0.001).abs() < 1e-9, "pull {pull}");
    // Second method: the displacement-driven cable at 1 mm.
    let driven = bar("displacement = 0.001");
    let mut reference = driven.initial_state();
    solve_static(&driven, &mut reference, StaticOptions::default()).unwrap();
    let (pull_d, force_d) = pull_and_force(&driven, &reference);
    assert!((pull_d - 0.001).abs() < 1e-9, "pull {pull_d}");
    assert!(force < 2.0 && force > 0.5, "held force {force}");
    assert!(
        (force - force_d).abs() < 1e-6 * force_d,
        "held {force} vs displacement-driven {force_d}"
    );
    // A bound the free pull does not reach changes nothing: the tension is the given one and
    // the equilibrium is that of the plain force-driven cable.
    let loose = bar("force = 2.0\nmax_displacement = 0.01");
    let free = bar("force = 2.0");
    let (mut a, mut b) = (loose.initial_state(), free.initial_state());
    solve_static(&loose, &mut a, StaticOptions::default()).unwrap();
    solve_static(&free, &mut b, StaticOptions::default()).unwrap();
    let (pull_a, force_a) = pull_and_force(&loose, &a);
    let (pull_b, _) = pull_and_force(&free, &b);
    assert_eq!(force_a, 2.0);
    assert!(pull_a > 0.0015 && pull_a < 0.01, "{pull_a}");
    assert!(
        (pull_a - pull_b).abs() < 1e-9 * pull_b,
        "{pull_a} vs {pull_b}"
    );
}

#[test]
fn every_step_keeps_the_bound_and_the_run_settles_where_the_displacement_drive_does() {
    let run = |scene: &Scene, steps: usize, check: &mut dyn FnMut(f64, f64)| {
        let mut state = scene.initial_state();
        let mut stepper = Stepper::new(scene).unwrap();
        for _ in 0..steps {
            stepper.step(scene, &mut state).unwrap();
            let (pull, force) = pull_and_force(scene, &state);
            check(pull, force);
        }
        state
    };
    let bounded = bar("force = 2.0\nmax_displacement = 0.001");
    let mut held_steps = 0;
    let state = run(&bounded, 300, &mut |pull, force| {
        // The cable is straight along the bar's axis, so the linearised step's prediction of
        // the length is exact to round-off: the pull never exceeds the bound.
        assert!(pull <= 0.001 * (1.0 + 1e-9), "pull {pull}");
        assert!((0.0..=2.0).contains(&force), "force {force}");
        if force < 2.0 {
            held_steps += 1;
            assert!((pull - 0.001).abs() < 1e-9, "held at {pull}");
        }
    });
    assert!(held_steps > 100, "held in {held_steps} steps");
    let (pull, force) = pull_and_force(&bounded, &state);
    let driven = bar("displacement = 0.001");
    let reference = run(&driven, 300, &mut |_, _| {});
    let (pull_d, force_d) = pull_and_force(&driven, &reference);
    assert!((pull - pull_d).abs() < 1e-9, "{pull} vs {pull_d}");
    assert!(
        (force - force_d).abs() < 1e-6 * force_d,
        "held {force} vs displacement-driven {force_d}"
    );
    // At rest both are the static equilibrium at 1 mm.
    let mut statics = bounded.initial_state();
    solve_static(&bounded, &mut statics, StaticOptions::default()).unwrap();
    let (_, force_s) = pull_and_force(&bounded, &statics);
    assert!(
        (force - force_s).abs() < 1e-4 * force_s,
        "{force} vs {force_s}"
    );
}

#[test]
fn full_newton_steps_hold_the_bound_too() {
    let scene = bar_with("force = 2.0\nmax_displacement = 0.001", 4);
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    for _ in 0..100 {
        stepper.step(&scene, &mut state).unwrap();
        let (pull, force) = pull_and_force(&scene, &state);
        assert!(pull <= 0.001 * (1.0 + 1e-9), "pull {pull}");
        assert!((0.0..=2.0).contains(&force), "force {force}");
    }
    let (pull, force) = pull_and_force(&scene, &state);
    assert!((pull - 0.001).abs() < 1e-9 && force < 2.0, "{pull} {force}");
}

#[test]
fn min_displacement_raises_the_tension_and_min_force_bounds_it() {
    // Given 0.5 N (about 0.5 mm) but the pull must reach at least 1 mm: the tension rises to
    // the displacement-driven one at 1 mm.
    let bounded = bar("force = 0.5\nmin_displacement = 0.001");
    let mut state = bounded.initial_state();
    solve_static(&bounded, &mut state, StaticOptions::default()).unwrap();
    let (pull, force) = pull_and_force(&bounded, &state);
    let driven = bar("displacement = 0.001");
    let mut reference = driven.initial_state();
    solve_static(&driven, &mut reference, StaticOptions::default()).unwrap();
    let (_, force_d) = pull_and_force(&driven, &reference);
    assert!((pull - 0.001).abs() < 1e-9, "{pull}");
    assert!(
        (force - force_d).abs() < 1e-6 * force_d,
        "{force} vs {force_d}"
    );
    // With a max_force below that, the force bound wins: the tension is max_force and the pull
    // that of a plain 0.6 N.
    let capped = bar("force = 0.5\nmin_displacement = 0.001\nmax_force = 0.6");
    let plain = bar("force = 0.6");
    let (mut a, mut b) = (capped.initial_state(), plain.initial_state());
    solve_static(&capped, &mut a, StaticOptions::default()).unwrap();
    solve_static(&plain, &mut b, StaticOptions::default()).unwrap();
    let (pull_a, force_a) = pull_and_force(&capped, &a);
    let (pull_b, _) = pull_and_force(&plain, &b);
    assert_eq!(force_a, 0.6);
    assert!(
        (pull_a - pull_b).abs() < 1e-9 * pull_b,
        "{pull_a} vs {pull_b}"
    );
}

#[test]
fn bad_bounds_are_named() {
    for (cable, key) in [
        (
            "force = 2.0\nmax_force = 1.0",
            "soft_body.bar.cable.c.force",
        ),
        (
            "force = 0.1\nmin_force = 0.5",
            "soft_body.bar.cable.c.force",
        ),
        (
            "force = 0.1\nmin_force = -1.0",
            "soft_body.bar.cable.c.min_force",
        ),
        (
            "force = 0.1\nmin_force = 2.0\nmax_force = 1.0",
            "soft_body.bar.cable.c.min_force",
        ),
        (
            "force = 0.1\nmin_displacement = 0.002\nmax_displacement = 0.001",
            "soft_body.bar.cable.c.min_displacement",
        ),
        (
            "displacement = 0.003\nmax_displacement = 0.001",
            "soft_body.bar.cable.c.displacement",
        ),
        (
            "force = 0.1\nmax_displacement = nan",
            "soft_body.bar.cable.c.max_displacement",
        ),
    ] {
        let text = format!(
            "[simulation]\ndt = 0.01\n[[soft_body]]\nname = \"bar\"\nmesh = \"beam_1.msh\"\nlaw = \"corotational\"\nyoung_modulus = 1e6\npoisson_ratio = 0.3\ndensity = 1000.0\n[[soft_body.cable]]\nname = \"c\"\npoints = [[0.1, 0.0, 0.0]]\npull_point = [0.2, 0.0, 0.0]\n{cable}\n"
        );
        let e = SceneFile::parse("bar.toml", &text, &[])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(key), "{cable}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
