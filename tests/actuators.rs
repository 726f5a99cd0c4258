//! Actuators in the step and in statics: force balance, bending directions, displacement
//! control, the robots' scenes, and input errors. Every expected number comes from a
//! conservation law, geometry or a second method (statics vs dynamics).

use std::path::Path;

use diffsoro::actuator::{Cavity, Drive};
use diffsoro::fem::Stiffness;
use diffsoro::math::Vec3;
use diffsoro::mesh::read_mesh;
use diffsoro::scene::{FinalState, Scene, SceneFile, StaticOptions, Stepper, solve_static};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The 100 × 10 × 10 mm beam (meshes/beam_1.msh) clamped at x = 0, no gravity, with the
/// actuator sections `extra` appended.
fn bar(extra: &str, overrides: &[&str]) -> Scene {
    let text = format!(
        r#"
        [simulation]
        dt = 0.01
        steps = 1
        gravity = [0.0, 0.0, 0.0]
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
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let file = SceneFile::parse("bar.toml", &text, &overrides).unwrap();
    Scene::build(&file, &Path::new(ROOT).join("meshes")).unwrap()
}

fn robot(name: &str, overrides: &[String]) -> Scene {
    Scene::load(&Path::new(ROOT).join("scenes").join(name), overrides).unwrap()
}

fn statics(scene: &Scene) -> diffsoro::scene::State {
    let mut state = scene.initial_state();
    solve_static(scene, &mut state, StaticOptions::default()).unwrap();
    state
}

fn effector(scene: &Scene, state: &diffsoro::scene::State, name: &str) -> Vec3 {
    let fs = FinalState::new(scene, state);
    let e = fs.effectors.iter().find(|e| e.name == name).unwrap();
    Vec3::from(e.position)
}

#[test]
fn axial_cable_tension_is_carried_by_the_clamp() {
    let t = 0.5;
    let scene = bar(
        "[[soft_body.cable]]\nname = \"c\"\npoints = [[0.1, 0.0, 0.0]]\npull_point = [0.2, 0.0, 0.0]\nforce = 0.5\n[[soft_body.effector]]\nname = \"end\"\npoint = [0.1, 0.0, 0.0]",
        &[],
    );
    let state = statics(&scene);
    let body = &scene.bodies[0];
    let mut es = body.elastic_state();
    body.evaluate_elastic(&state.bodies[0].positions, Stiffness::Skip, &mut es)
        .unwrap();
    // The clamp holds the fixed nodes against the elastic forces on them: reaction = −Σ f.
    let reaction: Vec3 = (0..body.node_count())
        .filter(|&n| body.is_fixed(n))
        .map(|n| -es.forces[n])
        .sum();
    // …and the clamp carries the cable tension along the cable's last segment.
    let tip = effector(&scene, &state, "end");
    let u = (Vec3::new(0.2, 0.0, 0.0) - tip).normalize();
    assert!(
        (reaction + t * u).norm() < 1e-6 * t,
        "{reaction:?} vs {:?}",
        -t * u
    );
    // The bar stretches (the cable point moves toward the pull point).
    let fs = FinalState::new(&scene, &state);
    assert!(fs.actuators[0].value < 0.1 && fs.actuators[0].force == t);
}

#[test]
fn off_axis_cable_bends_the_bar_toward_it() {
    // A cable along the top fibre (z = +4 mm), pulled from the clamp side.
    let scene = bar(
        "[[soft_body.cable]]\nname = \"c\"\npoints = [[0.02, 0.0, 0.004], [0.06, 0.0, 0.004], [0.1, 0.0, 0.004]]\npull_point = [0.0, 0.0, 0.004]\nforce = 0.3\n[[soft_body.effector]]\nname = \"tip\"\npoint = [0.1, 0.0, 0.0]",
        &[],
    );
    let state = statics(&scene);
    let tip = effector(&scene, &state, "tip");
    assert!(tip.z > 1e-4, "tip {tip:?}");
    assert!(tip.x < 0.1);
    // Same from the other side: bends toward −z, by the same amount (mirror symmetry of the
    // beam mesh about z = 0 is not exact, so only the sign and a loose ratio are checked).
    let scene = bar(
        "[[soft_body.cable]]\nname = \"c\"\npoints = [[0.02, 0.0, -0.004], [0.06, 0.0, -0.004], [0.1, 0.0, -0.004]]\npull_point = [0.0, 0.0, -0.004]\nforce = 0.3\n[[soft_body.effector]]\nname = \"tip\"\npoint = [0.1, 0.0, 0.0]",
        &[],
    );
    let down = effector(&scene, &statics(&scene), "tip");
    assert!(
        down.z < 0.0 && (down.z / tip.z + 1.0).abs() < 0.2,
        "{down:?} vs {tip:?}"
    );
}

#[test]
fn pressure_forces_balance_and_do_the_work_p_dv() {
    let mesh = read_mesh(Path::new(ROOT).join("meshes/pneumatic.msh")).unwrap();
    let tris = &mesh.groups().triangles["cavity"];
    let cavity = Cavity::on_nodes(tris.iter().map(|&t| mesh.triangles()[t]).collect());
    let x0 = mesh.positions();
    // 7 chambers 5 × 11 × 15 mm and the gallery 83 × 2.5 × 15 mm (meshes/pneumatic.geo).
    assert!(
        (cavity.value(x0) - 8.8875e-6).abs() < 1e-12,
        "{}",
        cavity.value(x0)
    );
    // A deformed configuration (no constraint: the body is free).
    let x: Vec<Vec3> = x0
        .iter()
        .enumerate()
        .map(|(i, p)| {
            p + 2e-4
                * Vec3::new(
                    (i as f64).sin(),
                    (1.7 * i as f64).cos(),
                    (0.3 * i as f64).sin(),
                )
        })
        .collect();
    let p = 3.0e4;
    let act = diffsoro::actuator::Actuator {
        name: "c".into(),
        kind: diffsoro::actuator::ActuatorKind::Pneumatic(cavity.clone()),
        drive: Drive::Force(p),
        bounds: [f64::NEG_INFINITY, f64::INFINITY],
        max_value_step: f64::INFINITY,
        max_force_step: f64::INFINITY,
        value_bounds: [f64::NEG_INFINITY, f64::INFINITY],
    };
    let mut f = vec![Vec3::zeros(); x.len()];
    act.add_forces(&x, p, &mut Vec::new(), &mut f);
    let total: Vec3 = f.iter().sum();
    let scale: f64 = f.iter().map(|v| v.norm()).sum();
    assert!(total.norm() < 1e-12 * scale, "{total:?} vs {scale}");
    // Work of the nodal forces over a small displacement = p ΔV (second order in the step).
    let dx: Vec<Vec3> = (0..x.len())
        .map(|i| 1e-7 * Vec3::new((2.1 * i as f64).cos(), (i as f64).sin(), 0.5))
        .collect();
    let x1: Vec<Vec3> = x.iter().zip(&dx).map(|(a, b)| a + b).collect();
    let xm: Vec<Vec3> = x.iter().zip(&dx).map(|(a, b)| a + 0.5 * b).collect();
    let mut fm = vec![Vec3::zeros(); x.len()];
    act.add_forces(&xm, p, &mut Vec::new(), &mut fm);
    let work: f64 = fm.iter().zip(&dx).map(|(f, d)| f.dot(d)).sum();
    let dv = cavity.value(&x1) - cavity.value(&x);
    assert!(
        (work - p * dv).abs() < 1e-6 * (p * dv).abs(),
        "{work} vs {}",
        p * dv
    );
}

#[test]
fn displacement_control_reaches_its_target_and_never_pushes() {
    let cable = "[[soft_body.cable]]\nname = \"c\"\npoints = [[0.02, 0.0, 0.004], [0.06, 0.0, 0.004], [0.1, 0.0, 0.004]]\npull_point = [0.0, 0.0, 0.004]\ndisplacement = 0.001";
    let scene = bar(cable, &[]);
    let rest = 0.1;
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    for _ in 0..300 {
        stepper.step(&scene, &mut state).unwrap();
        assert!(state.actuator_forces[0][0] >= 0.0);
    }
    let fs = FinalState::new(&scene, &state);
    let (length, tension) = (fs.actuators[0].value, fs.actuators[0].force);
    assert!((length - (rest - 0.001)).abs() < 1e-6, "length {length}");
    assert!(tension > 0.0);
    // Second method: the static equilibrium under that tension has that length.
    let forced = bar(
        &cable.replace("displacement = 0.001", &format!("force = {tension:e}")),
        &[],
    );
    let fs = FinalState::new(&forced, &statics(&forced));
    assert!(
        (fs.actuators[0].value - (rest - 0.001)).abs() < 1e-6,
        "{}",
        fs.actuators[0].value
    );
    // Asked to lengthen, a cable goes slack: zero tension, the bar stays at rest.
    let scene = bar(&cable.replace("0.001", "-0.001"), &[]);
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    for _ in 0..20 {
        stepper.step(&scene, &mut state).unwrap();
        assert_eq!(state.actuator_forces[0][0], 0.0);
    }
    let moved = state.bodies[0]
        .positions
        .iter()
        .zip(scene.bodies[0].rest_positions())
        .map(|(x, r)| (x - r).norm())
        .fold(0.0, f64::max);
    assert!(moved < 1e-12, "{moved}");
}

#[test]
fn max_force_bounds_the_solved_tension() {
    let scene = bar(
        "[[soft_body.cable]]\nname = \"c\"\npoints = [[0.1, 0.0, 0.0]]\npull_point = [0.2, 0.0, 0.0]\ndisplacement = 0.01\nmax_force = 0.05",
        &[],
    );
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    for _ in 0..50 {
        stepper.step(&scene, &mut state).unwrap();
        assert!(state.actuator_forces[0][0] <= 0.05);
    }
    assert_eq!(state.actuator_forces[0][0], 0.05);
}

#[test]
fn the_trunk_bends_toward_a_pulled_cable() {
    let rest = robot("trunk.toml", &[]);
    let tip0 = effector(&rest, &statics(&rest), "tip");
    // c1 runs along +y, c2 along −x (trunk_cables: θ = 1.57·i).
    for (cable, dir) in [("c1", Vec3::y()), ("c2", -Vec3::x())] {
        let scene = robot(
            "trunk.toml",
            &[format!("soft_body.trunk.cable.{cable}.force=0.5")],
        );
        let tip = effector(&scene, &statics(&scene), "tip");
        let d = tip - tip0;
        assert!(
            d.dot(&dir) > 0.5 * d.norm() && d.norm() > 1e-3,
            "{cable}: {d:?}"
        );
    }
}

#[test]
fn the_finger_curls_when_its_cable_is_pulled() {
    // Without gravity (so the rest shape is the mesh), the finger curls up: its tip (rest
    // (−100, 7, 7) mm) rises (+y) and comes back toward the base (+x), the cable running near
    // the top face (y = 12.5 of 15 mm) and being pulled toward the base (x = 0).
    let scene = robot(
        "finger.toml",
        &[
            "soft_body.finger.cable.cable.force=1.0".into(),
            "simulation.gravity=[0.0, 0.0, 0.0]".into(),
        ],
    );
    let tip = effector(&scene, &statics(&scene), "tip");
    assert!(tip.y > 0.007 + 1e-3 && tip.x > -0.1 + 1e-4, "{tip:?}");
    // With gravity (−y), pulling still lifts the tip.
    let rest = robot("finger.toml", &[]);
    let tip0 = effector(&rest, &statics(&rest), "tip");
    let scene = robot(
        "finger.toml",
        &["soft_body.finger.cable.cable.force=1.0".into()],
    );
    let tip = effector(&scene, &statics(&scene), "tip");
    assert!(tip.y - tip0.y > 1e-3, "{tip:?} vs {tip0:?}");
}

#[test]
fn the_pneumatic_finger_bends_away_from_its_chambers() {
    let rest = robot("pneumatic.toml", &[]);
    let tip0 = effector(&rest, &statics(&rest), "tip");
    let scene = robot(
        "pneumatic.toml",
        &["soft_body.pneunet.pneumatic.cavity.pressure=2e4".into()],
    );
    let state = statics(&scene);
    let tip = effector(&scene, &state, "tip");
    // The chambers sit above the strain-limiting bottom layer (y ∈ [0, 8] mm): inflating them
    // lengthens the top, so the free end curls down (−y); the cavity grows.
    let d = tip - tip0;
    assert!(d.y < -1e-3 && d.y.abs() > d.z.abs(), "{d:?}");
    let fs = FinalState::new(&scene, &state);
    assert!(fs.actuators[0].value > 8.8875e-6);
}

#[test]
fn the_gripper_fingers_close_toward_each_other_when_the_servos_turn() {
    // The fingers face each other across the gap x ∈ [0.04, 0.06] (the right one is the left
    // one turned by π about y): a negative angle turns each horn foot toward its contact side
    // (the foot lies above the shaft, so a rotation about the finger's own z by θ < 0 moves it
    // along the finger's +x), which leans the Fin-Ray walls and the tip toward the object.
    let run = |angle: f64| {
        let scene = robot(
            "gripper.toml",
            &[
                format!("soft_body.finger.servo.servo.angle={angle}"),
                format!("soft_body.finger_right.servo.servo_right.angle={angle}"),
            ],
        );
        let mut state = scene.initial_state();
        let mut stepper = Stepper::new(&scene).unwrap();
        for _ in 0..40 {
            stepper.step(&scene, &mut state).unwrap();
        }
        let fs = FinalState::new(&scene, &state);
        let angles: Vec<f64> = fs.actuators.iter().map(|a| a.value).collect();
        (
            effector(&scene, &state, "tip"),
            effector(&scene, &state, "tip_right"),
            angles,
            fs.actuators.iter().map(|a| a.force).collect::<Vec<f64>>(),
        )
    };
    let (l0, r0, _, _) = run(0.0);
    // At rest the right tip mirrors the left one: (x, y, z) → (0.1 − x, y, 0.02 − z).
    assert!((r0.x - (0.1 - l0.x)).abs() < 1e-5 && (r0.y - l0.y).abs() < 1e-5);
    let (l, r, angles, torques) = run(-0.05);
    // 40 steps at ≤ 0.002 rad per step: −0.05 is reached after 25.
    for a in &angles {
        assert!((a + 0.05).abs() < 1e-12, "{angles:?}");
    }
    let (dl, dr) = (l - l0, r - r0);
    assert!(dl.x > 1e-4 && dr.x < -1e-4, "{dl:?} {dr:?}");
    // Mirror images: the gap closes symmetrically.
    assert!((dl.x + dr.x).abs() < 1e-2 * dl.x, "{dl:?} {dr:?}");
    // Each servo pushes the way it turns, against the finger's stiffness.
    assert!(torques.iter().all(|t| *t < 0.0), "{torques:?}");
}

#[test]
fn every_actuator_input_can_be_set_from_the_command_line() {
    let s = robot("trunk.toml", &["soft_body.trunk.cable.c3.force=0.5".into()]);
    assert_eq!(s.actuation[0].actuators[2].drive, Drive::Force(0.5));
    let s = robot("trunk.toml", &["soft_body.trunk.cable.c3.force=0.5".into()]);
    assert_eq!(s.initial_state().actuator_forces[0][2], 0.5);
    let s = robot(
        "pneumatic.toml",
        &["soft_body.pneunet.pneumatic.cavity.pressure=1e4".into()],
    );
    assert_eq!(s.actuation[0].actuators[0].drive, Drive::Force(1e4));
    let s = robot(
        "gripper.toml",
        &["soft_body.finger.servo.servo.angle=0.3".into()],
    );
    assert_eq!(s.actuation[0].actuators[0].drive, Drive::Target(0.3));
    let s = robot(
        "gripper.toml",
        &["soft_body.finger_right.translation=[0.11, 0.0, 0.02]".into()],
    );
    let moved =
        s.bodies[1].rest_positions()[0] - robot("gripper.toml", &[]).bodies[1].rest_positions()[0];
    assert!(
        (moved - Vec3::new(0.01, 0.0, 0.0)).norm() < 1e-15,
        "{moved:?}"
    );
    let s = robot(
        "finger.toml",
        &["soft_body.finger.cable.cable.force=2".into()],
    );
    assert_eq!(s.actuation[0].actuators[0].drive, Drive::Force(2.0));
}

#[test]
fn bad_actuator_input_is_named() {
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "trunk.toml",
            &["soft_body.trunk.cable.c1.points=[[0.0, 0.0, 0.5], [0.0, 0.0, 0.1]]"],
            "soft_body.trunk.cable.c1.points[0]",
        ),
        (
            "trunk.toml",
            &["soft_body.trunk.cable.c1.displacement=0.01"],
            "soft_body.trunk.cable.c1",
        ),
        (
            "trunk.toml",
            &["soft_body.trunk.cable.c1.force=-1"],
            "soft_body.trunk.cable.c1.force",
        ),
        (
            "trunk.toml",
            &["soft_body.trunk.cable.c1.max_force=-1"],
            "soft_body.trunk.cable.c1.max_force",
        ),
        (
            "trunk.toml",
            &["soft_body.trunk.cable.c1.pulling=1"],
            "pulling",
        ),
        (
            "pneumatic.toml",
            &["soft_body.pneunet.pneumatic.cavity.group=nope"],
            "soft_body.pneunet.pneumatic.cavity.group",
        ),
        (
            "pneumatic.toml",
            &[
                "soft_body.pneunet.pneumatic.cavity.min_pressure=5",
                "soft_body.pneunet.pneumatic.cavity.max_pressure=-5",
            ],
            "soft_body.pneunet.pneumatic.cavity.max_pressure",
        ),
        (
            "pneumatic.toml",
            &[
                "soft_body.pneunet.pneumatic.cavity.max_pressure=1500",
                "soft_body.pneunet.pneumatic.cavity.pressure=3000",
            ],
            "soft_body.pneunet.pneumatic.cavity.pressure",
        ),
        (
            "gripper.toml",
            &["soft_body.finger.servo.servo.group=nope"],
            "soft_body.finger.servo.servo.group",
        ),
        (
            "gripper.toml",
            &["soft_body.finger.servo.servo.axis_direction=[0.0, 0.0, 0.0]"],
            "soft_body.finger.servo.servo.axis_direction",
        ),
        (
            "gripper.toml",
            &["soft_body.finger.effector.tip.point=[1.0, 0.0, 0.0]"],
            "soft_body.finger.effector.tip.point",
        ),
        (
            "gripper.toml",
            &["soft_body.finger.servo.servo.angle=4.0"],
            "soft_body.finger.servo.servo.angle",
        ),
        (
            "gripper.toml",
            &["soft_body.finger_right.effector.tip_right.name=tip"],
            "soft_body.finger_right.effector.tip",
        ),
        (
            "gripper.toml",
            &["soft_body.finger.servo.servo.max_angle_step=0"],
            "soft_body.finger.servo.servo.max_angle_step",
        ),
    ];
    for (file, sets, key) in cases {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let e = Scene::load(&Path::new(ROOT).join("scenes").join(file), &sets)
            .unwrap_err()
            .to_string();
        assert!(e.contains(key), "{sets:?}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}

#[test]
fn simulate_reports_actuators_and_effectors() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_diffsoro"))
        .args([
            "simulate",
            &format!("{ROOT}/scenes/trunk.toml"),
            "--steps",
            "2",
        ])
        .args(["--set", "soft_body.trunk.cable.c3.force=0.5"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let acts = v["actuators"].as_array().unwrap();
    assert_eq!(acts.len(), 8);
    assert_eq!(acts[2]["name"], "c3");
    assert_eq!(acts[2]["kind"], "cable");
    assert_eq!(acts[2]["force"], 0.5);
    assert!(acts[2]["value"].as_f64().unwrap() > 0.18);
    assert_eq!(v["effectors"][0]["name"], "tip");
    assert_eq!(v["effectors"][0]["position"].as_array().unwrap().len(), 3);
}

#[test]
fn every_robot_cable_point_and_effector_lies_inside_its_mesh() {
    // Inside = barycentric in a tetrahedron (not the nearest-node fallback): the embedding
    // reproduces the scene's point exactly at rest.
    for (file, body) in [
        ("trunk.toml", "trunk"),
        ("finger.toml", "finger"),
        ("gripper.toml", "finger"),
        ("gripper.toml", "finger_right"),
        ("pneumatic.toml", "pneunet"),
    ] {
        let path = Path::new(ROOT).join("scenes").join(file);
        let parsed = SceneFile::read(&path, &[]).unwrap();
        let index = parsed
            .soft_body
            .iter()
            .position(|b| b.name == body)
            .unwrap();
        let section = &parsed.soft_body[index];
        let scene = robot(file, &[]);
        let rest = scene.bodies[index].rest_positions();
        let act = &scene.actuation[index];
        let mut points = Vec::new();
        for (c, a) in section.cable.iter().zip(&act.actuators) {
            let diffsoro::actuator::ActuatorKind::Cable(cable) = &a.kind else {
                panic!("{file}: cables come first");
            };
            for (p, e) in c.points.iter().zip(&cable.points) {
                points.push((Vec3::from(*p), e.position(rest)));
            }
        }
        for (s, e) in section.effector.iter().zip(&act.effectors) {
            points.push((Vec3::from(s.point), e.point.position(rest)));
        }
        assert!(!points.is_empty());
        for (want, got) in points {
            assert!(
                (want - got).norm() < 1e-12,
                "{file}: {want:?} embedded at {got:?}"
            );
        }
    }
}
