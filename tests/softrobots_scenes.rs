//! The published SoftRobots robots as SOFA sets them up (`scenes/softrobots/`), on the
//! published meshes (not in the repository: docs/real-meshes.md). Ignored unless asked for.

use std::path::Path;

use crate::real_meshes;
use real_meshes::real_meshes;

use diffsoro::math::Vec3;
use diffsoro::scene::{Scene, State, StaticOptions, Stepper, solve_static};

/// Runs `scenes/softrobots/NAME.toml` on its published mesh (`mesh` under the folder) for
/// 100 steps; returns the tip's displacement (m).
fn run(name: &str, body: &str, mesh: &str) -> diffsoro::math::Vec3 {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = real_meshes().join(mesh);
    let scene = Scene::load(
        &root.join(format!("scenes/softrobots/{name}.toml")),
        &[format!("soft_body.{body}.mesh={}", path.display())],
    )
    .unwrap();
    assert!(scene.simulation.steps == 100);
    let tip = &scene.body_actuation(0).effectors[0].point;
    let start = tip.position(&scene.initial_state().bodies[0].positions);
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    for step in 0..scene.simulation.steps {
        let r = stepper.step(&scene, &mut state).unwrap();
        assert!(r.contact_converged, "{name}: step {step}");
    }
    let x = &state.bodies[0].positions;
    assert!(x.iter().all(|p| p.iter().all(|c| c.is_finite())));
    tip.position(x) - start
}

#[test]
#[ignore = "needs the published SoftRobots meshes (docs/real-meshes.md); run with --ignored"]
fn the_published_trunk_and_finger_run_and_sag_under_gravity() {
    // Gravity is −y in both: after 1 s the tips have come down.
    let trunk = run("trunk", "trunk", "trunk/trunk.vtk");
    assert!(trunk.y < -0.05, "trunk tip moved {trunk:?} m");
    let finger = run("finger", "finger", "finger/finger.vtk");
    assert!(finger.y < -0.01, "finger tip moved {finger:?} m");
}

/// `scenes/softrobots/NAME.toml` with its files read from the published meshes' folder (each
/// `(scene key, file under the folder)` set with `--set`, so the test needs no environment
/// variable) and the further overrides `extra`.
fn load(name: &str, files: &[(&str, &str)], extra: &[&str]) -> Scene {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = real_meshes();
    let mut overrides: Vec<String> = files
        .iter()
        .map(|(key, file)| format!("{key}=\"{}\"", dir.join(file).display()))
        .collect();
    overrides.extend(extra.iter().map(|s| s.to_string()));
    Scene::load(
        &root.join(format!("scenes/softrobots/{name}.toml")),
        &overrides,
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The static equilibrium of `scene` (from rest) and the state after `steps` time steps from
/// rest under the same constant loads.
fn static_and_dynamic(scene: &Scene, steps: usize) -> (State, State) {
    let mut at_rest = scene.initial_state();
    solve_static(scene, &mut at_rest, StaticOptions::default()).unwrap();
    let mut moving = scene.initial_state();
    let mut stepper = Stepper::new(scene).unwrap();
    for step in 0..steps {
        let r = stepper.step(scene, &mut moving).unwrap();
        assert!(r.contact_converged, "step {step}");
    }
    (at_rest, moving)
}

/// Largest distance between two node sets (m).
fn max_distance(a: &[Vec3], b: &[Vec3]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(p, q)| (p - q).norm())
        .fold(0.0, f64::max)
}

/// The dynamic run has come to rest where the static solve puts the body: every node within
/// `1e-6` of the static answer's largest node displacement. The fixed point of the linearised
/// implicit Euler step (v = 0, x unchanged) is exactly f(x) + f_ext = 0, and each scene's
/// step count is chosen (comment at the call) so that its slowest mode has decayed far below
/// that; the static solve itself stops at a relative residual of 1e-9.
fn assert_settled(name: &str, scene: &Scene, at_rest: &State, moving: &State) {
    let rest = scene.bodies[0].rest_positions();
    let x_static = &at_rest.bodies[0].positions;
    let x_dynamic = &moving.bodies[0].positions;
    assert!(x_dynamic.iter().all(|p| p.iter().all(|c| c.is_finite())));
    let motion = max_distance(x_static, rest);
    let gap = max_distance(x_static, x_dynamic);
    assert!(
        gap <= 1e-6 * motion,
        "{name}: after {} s the nodes are up to {gap:.3e} m from the static answer (largest displacement {motion:.3e} m)",
        moving.time
    );
}

/// Signed volume (m³) enclosed by the triangles of a Wavefront `.obj` (`v x y z`, `f a b c`
/// with 1-based indices, optionally `a/t/n`), read here independently of the program's reader,
/// its coordinates multiplied by `scale`.
fn obj_volume(path: &Path, scale: f64) -> f64 {
    let text = std::fs::read_to_string(path).unwrap();
    let mut v: Vec<Vec3> = Vec::new();
    let mut volume = 0.0;
    for line in text.lines() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("v") => {
                let c: Vec<f64> = words.take(3).map(|w| w.parse().unwrap()).collect();
                v.push(Vec3::new(c[0], c[1], c[2]) * scale);
            }
            Some("f") => {
                let idx: Vec<usize> = words
                    .map(|w| w.split('/').next().unwrap().parse::<usize>().unwrap() - 1)
                    .collect();
                // A fan over the face's corners (triangles here: one term).
                for k in 1..idx.len() - 1 {
                    let (a, b, c) = (v[idx[0]], v[idx[k]], v[idx[k + 1]]);
                    volume += a.dot(&b.cross(&c)) / 6.0;
                }
            }
            _ => {}
        }
    }
    volume
}

#[test]
#[ignore = "needs the published SoftRobots meshes (docs/real-meshes.md); run with --ignored"]
fn the_published_pneunet_inflates_and_settles_to_its_static_answer() {
    let files = [
        ("soft_body.pneunet.mesh", "pneunet/pneunetCutCoarse.vtk"),
        (
            "soft_body.pneunet.pneumatic.cavity.surface",
            "pneunet/pneunetCavityCut.stl",
        ),
    ];
    let idle = load("pneunet", &files, &[]);
    assert!(idle.simulation.steps == 100);
    // The stiff layer: the tets whose centre lies in the published box, 100 of 1,195 (counted
    // offline from the file with a short Python script, independently of the mesh reader).
    assert_eq!(idle.bodies[0].region_element_count(), 100);
    // The published controller's largest pressure, 1.5 kPa.
    let pressed = load(
        "pneunet",
        &files,
        &["soft_body.pneunet.pneumatic.cavity.pressure=1500"],
    );
    let volume = |scene: &Scene, state: &State| {
        scene.body_actuation(0).actuators[0]
            .kind
            .value(&state.bodies[0].positions)
    };
    // β = 0.1 s: every mode with βω² ≫ α = 0.1/s is overdamped, and the step shrinks its slow
    // part by 1/(1 + h/β) = 1/1.1 (faster for the others): from ≲ 3 mm away, 300 steps (3 s)
    // leave ≲ 3e-3 · 1.1⁻³⁰⁰ ≈ 1e-15 m, far below 1e-6 of the ≈ 2 mm motion.
    let (rest_idle, _) = static_and_dynamic(&idle, 0);
    let (rest_pressed, moving) = static_and_dynamic(&pressed, 300);
    assert_settled("pneunet", &pressed, &rest_pressed, &moving);
    // The pressure inflates the cavity (V at rest: 8,887 mm³, meshes-real/README.md): it does
    // positive work p ΔV from the unpressurised equilibrium to the pressurised one.
    let v0 = volume(&idle, &idle.initial_state());
    assert!((v0 - 8.8875e-6).abs() < 1e-3 * 8.8875e-6, "{v0} m³");
    let (v_idle, v_pressed) = (volume(&idle, &rest_idle), volume(&pressed, &rest_pressed));
    assert!(
        1500.0 * (v_pressed - v_idle) > 0.0 && v_pressed > v_idle,
        "cavity {v_idle} → {v_pressed} m³"
    );
}

#[test]
#[ignore = "needs the published SoftRobots meshes (docs/real-meshes.md); run with --ignored"]
fn the_published_diamond_shortens_its_pulled_cable_within_its_bound() {
    let files = [("soft_body.diamond.mesh", "diamond/diamond.vtk")];
    let idle = load("diamond", &files, &[]);
    assert!(idle.simulation.steps == 100);
    let pulled = load(
        "diamond",
        &files,
        &["soft_body.diamond.cable.north.force=0.5"],
    );
    let north = |scene: &Scene, x: &[Vec3]| scene.body_actuation(0).actuators[0].kind.value(x);
    // At rest the cable `north` is the segment from the apex (0, 97, 45) mm to the pull point
    // (0, 10, 30) mm: √(87² + 15²) mm.
    let rest_length = (0.087f64.powi(2) + 0.015f64.powi(2)).sqrt();
    let l0 = north(&idle, idle.bodies[0].rest_positions());
    assert!((l0 - rest_length).abs() < 1e-9, "{l0} m");
    // No damping: implicit Euler with h = 1 s shrinks a mode of angular frequency ω by
    // 1/√(1 + ω²h²) per step; the diamond's lowest mode, from its 31 mm sag under gravity, is
    // near √(g/δ) ≈ 18 rad/s, so its scene's 100 steps leave nothing of the start. (From
    // about 2 N on, the tension softens a sideways mode and 100 steps of 1 s are not enough.)
    let (rest_idle, _) = static_and_dynamic(&idle, 0);
    let (rest_pulled, moving) = static_and_dynamic(&pulled, idle.simulation.steps);
    assert_settled("diamond", &pulled, &rest_pulled, &moving);
    // The tension shortens its cable from the gravity-only equilibrium: positive work F ΔL.
    let l_idle = north(&idle, &rest_idle.bodies[0].positions);
    let l_pulled = north(&pulled, &rest_pulled.bodies[0].positions);
    assert!(l_pulled < l_idle, "north {l_idle} → {l_pulled} m");
    // 5 N would shorten it by more than maxPositiveDisp = 20 mm: the tension is lowered until
    // the cable is exactly 20 mm shorter than at rest.
    let hard = load(
        "diamond",
        &files,
        &["soft_body.diamond.cable.north.force=5"],
    );
    let (held, _) = static_and_dynamic(&hard, 0);
    let l_held = north(&hard, &held.bodies[0].positions);
    assert!(
        (rest_length - l_held - 0.02).abs() < 1e-9,
        "shortened by {} m",
        rest_length - l_held
    );
    let tension = held.actuator_forces[0][0];
    assert!(tension > 0.0 && tension < 5.0, "{tension} N");
}

#[test]
#[ignore = "needs the published SoftRobots meshes (docs/real-meshes.md); run with --ignored"]
fn the_published_bunny_inflates_and_settles_to_its_static_answer() {
    let files = [
        ("soft_body.bunny.mesh", "bunny/Hollow_Stanford_Bunny.vtu"),
        (
            "soft_body.bunny.pneumatic.cavity.surface",
            "bunny/Hollow_Bunny_Body_Cavity.obj",
        ),
    ];
    let idle = load("bunny", &files, &[]);
    assert!(idle.simulation.steps == 100);
    // SOFA's older bunny scene's pressure value, 40 (kPa in mm, kg, s).
    let pressed = load(
        "bunny",
        &files,
        &["soft_body.bunny.pneumatic.cavity.pressure=40e3"],
    );
    let volume = |scene: &Scene, x: &[Vec3]| scene.body_actuation(0).actuators[0].kind.value(x);
    // The embedded cavity at rest holds the volume of the .obj file, read here on its own.
    let v0 = volume(&idle, idle.bodies[0].rest_positions());
    let expected = obj_volume(
        &real_meshes().join("bunny/Hollow_Bunny_Body_Cavity.obj"),
        1e-3,
    );
    assert!(
        expected > 0.0 && (v0 - expected).abs() < 1e-9 * expected,
        "{v0} vs {expected} m³"
    );
    // No damping, h = 0.01 s: the bunny sags δ ≈ 1.6e-6 m under its (mm/s²) gravity, so its
    // lowest mode is near √(g/δ) ≈ 78 rad/s and each step shrinks it by 1/√(1 + ω²h²) ≈ 0.79:
    // after the scene's 100 steps, 0.79¹⁰⁰ ≈ 6e-11 of the start.
    let (rest_idle, _) = static_and_dynamic(&idle, 0);
    let (rest_pressed, moving) = static_and_dynamic(&pressed, idle.simulation.steps);
    assert_settled("bunny", &pressed, &rest_pressed, &moving);
    let v_idle = volume(&idle, &rest_idle.bodies[0].positions);
    let v_pressed = volume(&pressed, &rest_pressed.bodies[0].positions);
    assert!(v_pressed > v_idle, "cavity {v_idle} → {v_pressed} m³");
}

#[test]
#[ignore = "needs the published SoftRobots meshes (docs/real-meshes.md); run with --ignored"]
fn the_published_servo_finger_curls_forward_and_settles_to_its_static_answer() {
    let files = [("soft_body.finger.mesh", "servo-finger/finger.msh")];
    let scene = load("servo_finger", &files, &[]);
    assert!(scene.simulation.steps == 100);
    let body = &scene.bodies[0];
    let rest = body.rest_positions();
    // The published boxes hold 67 fixed nodes (the front foot) and 12 horn nodes (counted
    // offline from the file with a short Python script).
    let fixed = (0..rest.len()).filter(|&n| body.is_fixed(n)).count();
    let in_box =
        |p: &Vec3, lo: [f64; 3], hi: [f64; 3]| (0..3).all(|a| lo[a] <= p[a] && p[a] <= hi[a]);
    let horn: Vec<usize> = (0..rest.len())
        .filter(|&n| {
            in_box(
                &rest[n],
                [-0.0325, -0.0225, -0.015],
                [-0.0175, 0.0225, 0.015],
            )
        })
        .collect();
    assert_eq!(horn.len(), 12);
    assert_eq!(
        fixed,
        67 + 12,
        "the pinned horn nodes leave the system like fixed ones"
    );
    // The ramp reaches π/6 after 300 steps; 100 more let it settle (no Rayleigh damping, but
    // implicit Euler shrinks a mode of ω by 1/√(1 + ω²h²) per step, and this stiff 15 g
    // finger's lowest modes are far above 1/h).
    let (at_rest, moving) = static_and_dynamic(&scene, 400);
    assert_settled("servo_finger", &scene, &at_rest, &moving);
    // The horn nodes sit where the horn's rotation by π/6 about +y through the origin puts
    // them (pinned: to round-off).
    let (s, c) = (std::f64::consts::FRAC_PI_6).sin_cos();
    for &n in &horn {
        let p = rest[n];
        let turned = Vec3::new(c * p.x + s * p.z, p.y, -s * p.x + c * p.z);
        let x = moving.bodies[0].positions[n];
        assert!(
            (x - turned).norm() < 1e-12,
            "horn node {n}: {x:?} vs {turned:?}"
        );
    }
    // Lifting the back foot curls the finger toward its front (+x), as the demo closes it.
    let tip = &scene.body_actuation(0).effectors[0].point;
    let moved = tip.position(&moving.bodies[0].positions) - tip.position(rest);
    assert!(moved.x > 0.01, "tip moved {moved:?} m");
}
