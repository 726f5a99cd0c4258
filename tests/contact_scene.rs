//! Frictional contact in the step: a soft block on an inclined plane sticks below the
//! Coulomb threshold and slides with the analytic acceleration above it; a block resting on
//! the floor carries its weight; bad obstacles are clear errors.
//!
//! The incline is modelled by tilting gravity by θ about y over the floor z = 0 (the same
//! physics as a plane tilted by θ under vertical gravity): the slope's downhill direction is
//! +x. Expectations are Coulomb's law for a block: it sticks when tan θ < μ and otherwise
//! accelerates at a = g (sin θ − μ cos θ); at rest, Σλ_N = m g.

use diffsoro::contact::Obstacle;
use diffsoro::fem::{MassKind, SoftBody, SoftBodyOptions};
use diffsoro::material::{Law, Material};
use diffsoro::math::Vec3;
use diffsoro::mesh::box_mesh;
use diffsoro::scene::{
    ContactSection, ContactSolverKind, Scene, SceneContact, SceneFile, SimulationSection, Stepper,
};

const SIDE: f64 = 0.02;
const RHO: f64 = 1000.0;
const G: f64 = 9.81;
const MU: f64 = 0.5;
const DT: f64 = 0.01;
/// Penetration bound (m): a converged NCP lets a plane contact sink by at most about
/// h·tolerance per step, of which the correction removes 1 − K_p = 20 % per step, so
/// ≈ 5·h·tolerance = 5e-12 m here (scene::step::contact::stage doc); 20× that is asserted. Without
/// contact the block would fall h²g ≈ 1e-3 m in the first step alone.
const PENETRATION: f64 = 1e-10;

fn block_scene(theta: f64, rayleigh_mass: f64, solver: ContactSolverKind) -> Scene {
    let mesh = box_mesh([2, 2, 2], [0.0, 0.0, 0.0], [SIDE, SIDE, SIDE]).unwrap();
    let options = SoftBodyOptions {
        material: Material::new(Law::NeoHookean, 1e5, 0.3).unwrap(),
        density: RHO,
        mass: MassKind::Lumped,
        rayleigh_mass,
        rayleigh_stiffness: 0.0,
        fixed: vec![false; 27],
    };
    let body = SoftBody::new("block", mesh, options).unwrap();
    Scene {
        rigid: Default::default(),
        contact: SceneContact {
            names: Vec::new(),
            obstacles: vec![Obstacle::plane(Vec3::zeros(), Vec3::z()).unwrap()],
            friction: vec![MU],
            settings: ContactSection {
                solver,
                tolerance: 1e-10,
                max_iterations: 5000,
                ..ContactSection::default()
            },
            ..SceneContact::default()
        },
        ..Scene::new(
            SimulationSection {
                dt: DT,
                steps: 0,
                gravity: [G * theta.sin(), 0.0, -G * theta.cos()],
                newton_iterations: 1,
            },
            vec![body],
        )
    }
}

/// Mass-weighted mean velocity of body 0.
fn mean_velocity(scene: &Scene, v: &[Vec3]) -> Vec3 {
    let m = scene.bodies[0].node_masses();
    let total: f64 = m.iter().sum();
    v.iter().zip(m).map(|(v, m)| *m * v).sum::<Vec3>() / total
}

fn run_incline(tan_theta: f64, solver: ContactSolverKind) -> (Vec3, f64) {
    let theta = tan_theta.atan();
    let scene = block_scene(theta, 0.0, solver);
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    let steps = 30;
    for _ in 0..steps {
        let r = stepper.step(&scene, &mut state).unwrap();
        assert!(r.contact_converged, "{:?}", r.contact);
    }
    let min_z = state.bodies[0]
        .positions
        .iter()
        .map(|p| p.z)
        .fold(f64::INFINITY, f64::min);
    (mean_velocity(&scene, &state.bodies[0].velocities), min_z)
}

#[test]
fn block_sticks_below_the_friction_threshold() {
    for solver in [ContactSolverKind::Admm, ContactSolverKind::Pgs] {
        let tan = 0.8 * MU;
        let (v, min_z) = run_incline(tan, solver);
        // The free fall along the slope in the same time would reach g sin θ t ≈ 1.1 m/s.
        assert!(v.norm() < 1e-6, "{solver:?}: sticking block moves at {v:?}");
        assert!(min_z > -PENETRATION, "{solver:?}: penetration {min_z}");
    }
}

#[test]
fn block_slides_above_the_friction_threshold_with_coulomb_acceleration() {
    for solver in [ContactSolverKind::Admm, ContactSolverKind::Pgs] {
        let tan = 1.25 * MU;
        let theta = f64::atan(tan);
        let (v, min_z) = run_incline(tan, solver);
        let t = 30.0 * DT;
        let expected = G * (theta.sin() - MU * theta.cos()) * t;
        assert!(v.x > 0.0, "{solver:?}: slides down the slope (+x): {v:?}");
        assert!(
            (v.x - expected).abs() < 1e-3 * expected,
            "{solver:?}: v = {v:?}, expected {expected} m/s down the slope"
        );
        // The tetrahedra are not mirror-symmetric in y, so the elastic shear under friction
        // gives a small sideways drift; the sliding is down the slope.
        assert!(
            v.y.abs() < 1e-4 * expected && v.z.abs() < 1e-3 * expected,
            "{v:?}"
        );
        eprintln!("{solver:?}: v_x = {}, Coulomb {expected}", v.x);
        assert!(min_z > -PENETRATION, "{solver:?}: penetration {min_z}");
    }
}

#[test]
fn resting_block_carries_its_weight() {
    let scene = block_scene(0.0, 20.0, ContactSolverKind::Admm);
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    let mass: f64 = scene.bodies[0].node_masses().iter().sum();
    assert!((mass - RHO * SIDE.powi(3)).abs() < 1e-12 * mass);
    let mut report = None;
    for _ in 0..300 {
        report = Some(stepper.step(&scene, &mut state).unwrap());
    }
    let report = report.unwrap();
    let c = &report.contact[0];
    assert!(c.converged);
    // 9 nodes on the bottom face of a 2×2×2 box.
    assert_eq!(c.detected, 9);
    assert_eq!(state.contacts, c.active);
    let weight = mass * G;
    assert!(
        (c.normal_force - weight).abs() < 1e-6 * weight,
        "Σλ_N = {}, m g = {weight}",
        c.normal_force
    );
    let min_z = state.bodies[0]
        .positions
        .iter()
        .map(|p| p.z)
        .fold(f64::INFINITY, f64::min);
    assert!(min_z > -PENETRATION, "penetration {min_z} m");
}

#[test]
fn bad_obstacles_are_clear_errors() {
    let base = "[simulation]\ndt = 0.01\n";
    for (extra, key, words) in [
        (
            "[[obstacle]]\ntype = \"plane\"\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 0.0]",
            "obstacle[0].normal",
            "zero",
        ),
        (
            "[[obstacle]]\ntype = \"sphere\"\ncenter = [0.0, 0.0, 0.0]\nradius = -0.1",
            "obstacle[0].radius",
            "positive",
        ),
        (
            "[[obstacle]]\ntype = \"capsule\"\nstart = [0.0, 0.0, 0.0]\nend = [1.0, 0.0, 0.0]\nradius = -0.1",
            "obstacle[0].radius",
            "positive",
        ),
        (
            "[[obstacle]]\ntype = \"mesh\"\nscale = 2.0",
            "obstacle[0].path",
            "missing",
        ),
    ] {
        let e = SceneFile::parse("s.toml", &format!("{base}{extra}"), &[])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(key) && e.contains(words), "{e}");
    }
}

fn run_cli(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_diffsoro"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

/// `scenes/contact_incline.toml`: the cube sticks at μ = 0.5 > tan 20° and slides down the
/// slope at μ = 0.2 with the Coulomb speed g (sin θ − μ cos θ) t.
#[test]
fn incline_scene_sticks_and_slides() {
    let theta = 20f64.to_radians();
    let mean = |out: &std::process::Output| -> (Vec3, u64) {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let vel = v["soft_bodies"][0]["velocities"].as_array().unwrap();
        let mut sum = Vec3::zeros();
        for row in vel {
            sum += Vec3::new(
                row[0].as_f64().unwrap(),
                row[1].as_f64().unwrap(),
                row[2].as_f64().unwrap(),
            );
        }
        (sum / vel.len() as f64, v["contacts"].as_u64().unwrap())
    };
    let (v, contacts) = mean(&run_cli(&["simulate", "scenes/contact_incline.toml"]));
    assert!(v.norm() < 1e-6, "{v:?}");
    assert!(contacts > 0);
    let (v, _) = mean(&run_cli(&[
        "simulate",
        "scenes/contact_incline.toml",
        "--set",
        "contact.friction=0.2",
    ]));
    let downhill = Vec3::new(-theta.cos(), 0.0, -theta.sin());
    let expected = G * (theta.sin() - 0.2 * theta.cos()) * 0.5;
    // The nodes' plain mean (not mass-weighted): a sliding block moves nearly rigidly.
    assert!(
        (v.dot(&downhill) - expected).abs() < 1e-2 * expected,
        "{v:?} vs {expected}"
    );
}

/// An NCP stopped at its iteration limit is a warning, and an error with `--strict`.
#[test]
fn unconverged_contact_warns_or_fails_with_strict() {
    let args = [
        "simulate",
        "scenes/contact_incline.toml",
        "--steps",
        "3",
        "--set",
        "contact.max_iterations=1",
    ];
    let out = run_cli(&args);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning") && err.contains("did not converge"),
        "{err}"
    );
    // The final state says so too (how many of the 3 steps, and in words).
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let n = json["unconverged_steps"].as_u64().unwrap();
    assert!((1..=3).contains(&n), "{json}");
    assert!(
        json["warnings"][0]
            .as_str()
            .unwrap()
            .contains(&format!("{n} of 3 steps"))
    );
    // And bench, whose step time is then that of unfinished solves (3 iterations: with 1
    // the bench's extra finite-difference steps blow the cube up).
    let out = run_cli(&[
        "bench",
        "scenes/contact_incline.toml",
        "--steps",
        "3",
        "--set",
        "contact.max_iterations=3",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(json["unconverged_steps"].as_u64().unwrap() >= 1, "{json}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("iteration limit"));
    // An unconverged step ran the NCP to its limit: the largest iteration count is that limit.
    assert_eq!(json["ncp_iterations"]["max"], 3, "{json}");
    // bench --strict refuses to time them: an error naming the step, no JSON.
    let out = run_cli(&[
        "bench",
        "scenes/contact_incline.toml",
        "--steps",
        "3",
        "--set",
        "contact.max_iterations=3",
        "--strict",
    ]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("iteration limit") && err.contains("step "),
        "{err}"
    );
    // A converged run reports none.
    let out = run_cli(&["simulate", "scenes/contact_incline.toml", "--steps", "3"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["unconverged_steps"], 0, "{json}");
    assert!(json.get("warnings").is_none(), "{json}");
    let mut strict = args.to_vec();
    strict.push("--strict");
    let out = run_cli(&strict);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("did not converge") && err.trim().lines().count() == 1,
        "{err}"
    );
}

/// `--static` does not resolve contact yet: a scene with obstacles says so instead of
/// ignoring them.
#[test]
fn static_solve_with_obstacles_is_a_clear_error() {
    let out = run_cli(&["simulate", "scenes/contact_incline.toml", "--static"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not supported yet"), "{err}");
}

/// The per-obstacle `friction` overrides `[contact].friction`, on a box obstacle: with
/// μ_box = 0.2 < tan θ = 0.4 < 0.5 the block slides at the Coulomb acceleration of μ = 0.2.
/// Also with full Newton (`newton_iterations = 3`), whose last factorisation serves the NCP.
#[test]
fn box_obstacle_friction_override_and_newton_steps() {
    let file = SceneFile::parse(
        "s.toml",
        r#"
        [simulation]
        dt = 0.01
        [contact]
        friction = 0.5
        [[obstacle]]
        type = "box"
        center = [0.01, 0.01, -0.5]
        half_extents = [1.0, 1.0, 0.5]
        rotation = [0.0, 0.0, 0.3]
        friction = 0.2
        "#,
        &[],
    )
    .unwrap();
    let mu = 0.2;
    let tan = 0.4f64;
    let theta = tan.atan();
    for newton in [1, 3] {
        let mut scene = block_scene(theta, 0.0, ContactSolverKind::Admm);
        scene.simulation.newton_iterations = newton;
        scene.contact =
            SceneContact::build(&file.contact, &file.obstacle, std::path::Path::new(".")).unwrap();
        let mut state = scene.initial_state();
        let mut stepper = Stepper::new(&scene).unwrap();
        for _ in 0..30 {
            let r = stepper.step(&scene, &mut state).unwrap();
            assert!(r.contact_converged);
        }
        let v = mean_velocity(&scene, &state.bodies[0].velocities);
        let expected = G * (theta.sin() - mu * theta.cos()) * 30.0 * DT;
        assert!(
            (v.x - expected).abs() < 1e-3 * expected,
            "newton {newton}: {v:?}, expected {expected}"
        );
    }
}
