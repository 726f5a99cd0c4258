//! Rigid scenes from the outside: their ParaView frames, the one-line errors of
//! their scene keys, the documented example, shape masses against parry's, and one step
//! cross-checked against Pinocchio.

use crate::scene_support;

use diffsoro::scene::{FinalState, RigidDynamics, Scene, SceneFile, Stepper};
use scene_support::{root, scene};

/// A 0.1 m cube of 500 kg/m³ (0.5 kg) on the plane z = 0.
const CUBE: &str = r#"
[simulation]
dt = 0.005
gravity = [0.0, 0.0, -9.81]

[[obstacle]]
type = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]

[[rigid_body]]
name = "cube"
shape = "box"
half_extents = [0.05, 0.05, 0.05]
density = 500.0
"#;

fn scene_error(text: &str) -> String {
    let file = match SceneFile::parse("test.toml", text, &[]) {
        Ok(f) => f,
        Err(e) => return e.to_string(),
    };
    if let Err(e) = file.validate() {
        return e.to_string();
    }
    match Scene::build(&file, &root().join("scenes")) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_run_with_out_writes_the_rigid_shapes_as_paraview_frames() {
    let dir = std::env::temp_dir().join(format!("diffsoro-rigid-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let scene_file = dir.with_extension("toml");
    std::fs::write(&scene_file, format!("{CUBE}position = [0.0, 0.0, 0.06]\n")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_diffsoro"))
        .args([
            "simulate",
            scene_file.to_str().unwrap(),
            "--steps",
            "200",
            "--out",
            dir.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pvd = std::fs::read_to_string(dir.join("cube.pvd")).unwrap();
    assert_eq!(
        pvd.matches("<DataSet").count(),
        201,
        "initial frame + 200 steps"
    );
    // The last frame: a cube resting on z = 0, 0.1 m tall.
    let last = std::fs::read_to_string(dir.join("cube_000200.vtu")).unwrap();
    let points = last
        .split("<Points>")
        .nth(1)
        .unwrap()
        .split("</DataArray>")
        .next()
        .unwrap();
    let z: Vec<f64> = points
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).and_then(|x| x.parse().ok()))
        .collect();
    assert_eq!(z.len(), 8, "a box has 8 corners");
    let (lo, hi) = z
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    assert!(
        lo.abs() < 1e-6 && (hi - 0.1).abs() < 1e-6,
        "z from {lo} to {hi}"
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&scene_file);
}

#[test]
fn bad_rigid_sections_are_refused_naming_the_key() {
    let sim = "[simulation]\ndt = 0.01\n";
    let cases = [
        (
            format!("{sim}[[rigid_body]]\nname = \"cube\"\nshape = \"box\"\ndensity = 1.0\n"),
            "rigid_body.cube.half_extents",
        ),
        (
            format!(
                "{sim}[[rigid_body]]\nname = \"cube\"\nshape = \"box\"\nhalf_extents = [0.1, 0.1, 0.1]\n"
            ),
            "rigid_body.cube.density",
        ),
        (
            format!(
                "{sim}[[rigid_body]]\nname = \"ball\"\nshape = \"sphere\"\nradius = 0.1\nhalf_extents = [0.1, 0.1, 0.1]\nmass = 1.0\n"
            ),
            "rigid_body.ball.half_extents",
        ),
        (
            format!(
                "{sim}[[rigid_body]]\nname = \"cube\"\nshape = \"box\"\nhalf_extents = [0.1, 0.1, 0.1]\nmass = 1.0\ncolour = 3\n"
            ),
            "colour",
        ),
        (
            format!(
                "{sim}[[robot]]\nname = \"arm\"\nurdf = \"../urdf/limited_pendulum.urdf\"\nq = [0.0, 1.0]\n"
            ),
            "robot.arm.q: has 2 entries, the robot has 1",
        ),
        (
            format!("{sim}[[robot]]\nname = \"arm\"\nurdf = \"../urdf/nothing_here.urdf\"\n"),
            "robot.arm.urdf",
        ),
        (
            format!(
                "{sim}[contact]\nignore = [[\"cube\", \"arm/wrist\"]]\n[[rigid_body]]\nname = \"cube\"\nshape = \"box\"\nhalf_extents = [0.1, 0.1, 0.1]\nmass = 1.0\n"
            ),
            "contact.ignore[0]",
        ),
    ];
    for (text, expected) in cases {
        let e = scene_error(&text);
        assert!(e.contains(expected), "expected {expected:?} in: {e}");
    }
}

/// The 0.5 kg cube of [`CUBE`] given the rotational inertia `rows` (kg·m²), run for one step by
/// the command: its output.
fn cube_with_inertia(rows: &str, tag: &str) -> std::process::Output {
    let file = std::env::temp_dir().join(format!(
        "diffsoro-inertia-{tag}-{}.toml",
        std::process::id()
    ));
    std::fs::write(&file, format!("{CUBE}inertia = {rows}\n")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_diffsoro"))
        .args(["simulate", file.to_str().unwrap(), "--steps", "1"])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&file);
    out
}

#[test]
fn an_inertia_no_body_has_is_a_one_line_error_naming_the_body_and_the_rule() {
    // A rod heavier about its own axis than across it: principal moments 1e-6, 1e-6, 1e-5
    // kg·m² (the diagonal of a diagonal matrix), 1e-6 + 1e-6 < 1e-5.
    // The same moments turned so that the axis is (1, 1, 1)/√3:
    // 1e-6·1 + 9e-6·n nᵀ = [[4, 3, 3], [3, 4, 3], [3, 3, 4]]·1e-6, whose diagonal entries
    // (4, 4, 4)·1e-6 satisfy the inequality: the rule is on the eigenvalues, not the diagonal.
    for (tag, rows) in [
        (
            "axes",
            "[[1e-5, 0.0, 0.0], [0.0, 1e-6, 0.0], [0.0, 0.0, 1e-6]]",
        ),
        (
            "turned",
            "[[4e-6, 3e-6, 3e-6], [3e-6, 4e-6, 3e-6], [3e-6, 3e-6, 4e-6]]",
        ),
    ] {
        let out = cube_with_inertia(rows, tag);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "accepted: {rows}");
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "one line expected: {err}"
        );
        assert!(err.contains("rigid_body.cube.inertia: "), "{err}");
        assert!(err.contains("triangle inequality I₁ + I₂ ≥ I₃"), "{err}");
        assert!(
            err.contains("[1.0000e-6, 1.0000e-6, 1.0000e-5] kg·m²"),
            "{tag}: {err}"
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn a_physical_inertia_off_the_axes_and_thin_shapes_load() {
    // 4e-6·1 + 1e-6·𝟙𝟙ᵀ: off-diagonal, principal moments 4e-6, 4e-6 and 4e-6 + 3·1e-6 =
    // 7e-6 kg·m² (4 + 4 ≥ 7).
    let rows = [[5e-6, 1e-6, 1e-6], [1e-6, 5e-6, 1e-6], [1e-6, 1e-6, 5e-6]];
    let out = cube_with_inertia(&format!("{rows:?}"), "physical");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = scene(&format!("{CUBE}inertia = {rows:?}\n"));
    let RigidDynamics::Free(body) = &s.rigid.systems[0].dynamics else {
        unreachable!()
    };
    assert_eq!(body.inertia, nalgebra::Matrix3::from_fn(|r, c| rows[r][c]));
    // Shapes whose inertia lies on the boundary up to their thickness: a plate 0.2 × 0.2 m and
    // 0.2 µm thick (I₁ + I₂ − I₃ = 2z²/3 per unit mass, z the half thickness) and a rod 0.2 m
    // long and 2 nm across (I₁ = r²/2 per unit mass, I₂ = I₃): both bodies exist.
    let s = scene(
        r#"
[simulation]
dt = 0.01

[[rigid_body]]
name = "plate"
shape = "box"
half_extents = [0.1, 0.1, 1e-7]
mass = 0.1

[[rigid_body]]
name = "rod"
shape = "cylinder"
radius = 1e-9
half_length = 0.1
mass = 0.1
"#,
    );
    assert_eq!(s.rigid.systems.len(), 2);
}

/// docs/rigid.md's first example: the tilted cube lands and rests on a face at z = 0.05 m,
/// every step's NCP solved to its tolerance (while it tips onto the face its four corners
/// straddle the floor, where per-corner penetration corrections left the NCP without a
/// solution: `PenetrationCorrection::apply_shared`).
#[test]
fn the_documented_cube_drop_rests_on_a_face() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_diffsoro"))
        .args([
            "simulate",
            root().join("scenes/cube_drop.toml").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fs: FinalState = serde_json::from_slice(&out.stdout).unwrap();
    let cube = &fs.rigid_bodies[0];
    assert!((cube.position[2] - 0.05).abs() < 1e-6, "{cube:?}");
    assert_eq!(fs.unconverged_steps, 0, "{:?}", fs.warnings);
    let docs = std::fs::read_to_string(root().join("docs/rigid.md")).unwrap();
    assert!(docs.contains("simulate scenes/cube_drop.toml") && docs.contains("z = 0.05 m"));
}

/// One step of the standing quadruped (4 sticking feet) against the same step computed with
/// Pinocchio 4.1.0's algorithms and its ADMM constraint solver
/// (`tests/data/make_rigid_step_fixture.py`, provenance in the fixture).
#[test]
fn one_quadruped_step_agrees_with_pinocchio() {
    let fixture: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/data/quadruped_step_pinocchio.json")).unwrap(),
    )
    .unwrap();
    let vec = |key: &str| -> Vec<f64> {
        fixture[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    let s = Scene::load(&root().join("scenes/quadruped_standing.toml"), &[]).unwrap();
    let mut state = s.initial_state();
    state.rigid[0].q = vec("q");
    state.rigid[0].v = vec("v");
    let mut stepper = Stepper::new(&s).unwrap();
    let report = stepper.step(&s, &mut state).unwrap();
    assert!(report.contact_converged);
    let tau = vec("tau");
    for (a, b) in state.rigid[0].tau.iter().zip(&tau) {
        assert!((a - b).abs() <= 1e-9 * (1.0 + b.abs()), "τ {a} vs {b}");
    }
    // Contacts matched by their points (m), λ per contact (N).
    let ws = stepper.rigid();
    assert_eq!(ws.contacts().len(), 4);
    let points = fixture["points"].as_array().unwrap();
    let lambda = vec("lambda");
    let scale = lambda.iter().map(|x| x.abs()).fold(0.0, f64::max);
    for (i, c) in ws.contacts().iter().enumerate() {
        let diffsoro::scene::RigidRow::Contact { point, frame, .. } = c.row else {
            panic!("a contact row")
        };
        assert!((frame - nalgebra::Matrix3::identity()).norm() < 1e-15);
        let j = points
            .iter()
            .position(|p| {
                let p: Vec<f64> = p
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap())
                    .collect();
                (point - nalgebra::Vector3::new(p[0], p[1], p[2])).norm() < 1e-12
            })
            .expect("the same contact point");
        for k in 0..3 {
            let (a, b) = (ws.lambda()[3 * i + k], lambda[3 * j + k]);
            assert!(
                (a - b).abs() <= 1e-7 * scale,
                "λ[{i}][{k}] {a} vs Pinocchio {b}"
            );
        }
    }
    for (name, got, want) in [
        ("v⁺", &state.rigid[0].v, &vec("v_plus")),
        ("q⁺", &state.rigid[0].q, &vec("q_plus")),
    ] {
        for (k, (a, b)) in got.iter().zip(want.iter()).enumerate() {
            assert!((a - b).abs() <= 1e-9, "{name}[{k}] {a} vs Pinocchio {b}");
        }
    }
}

#[test]
fn shape_masses_and_inertias_agree_with_parrys_mass_properties() {
    use diffsoro::contact::{Collider, ConvexShape};
    let s = scene(
        r#"
[simulation]
dt = 0.01

[[rigid_body]]
name = "box"
shape = "box"
half_extents = [0.01, 0.02, 0.03]
density = 700.0

[[rigid_body]]
name = "ball"
shape = "sphere"
radius = 0.02
density = 700.0

[[rigid_body]]
name = "pill"
shape = "capsule"
radius = 0.01
half_length = 0.03
density = 700.0

[[rigid_body]]
name = "can"
shape = "cylinder"
radius = 0.01
half_length = 0.03
density = 700.0
"#,
    );
    let shapes = [
        ConvexShape::Cuboid {
            half_extents: nalgebra::Vector3::new(0.01, 0.02, 0.03),
        },
        ConvexShape::Ball { radius: 0.02 },
        ConvexShape::Capsule {
            radius: 0.01,
            half_length: 0.03,
        },
        ConvexShape::Cylinder {
            radius: 0.01,
            half_length: 0.03,
        },
    ];
    for (sys, shape) in s.rigid.systems.iter().zip(shapes) {
        let RigidDynamics::Free(body) = &sys.dynamics else {
            unreachable!()
        };
        let (volume, com, unit) = Collider::new(shape)
            .unwrap()
            .unit_mass_properties()
            .unwrap();
        assert!(com.norm() < 1e-15, "{}: centre of mass {com}", sys.name);
        assert!(
            (body.mass - 700.0 * volume).abs() < 1e-12 * body.mass,
            "{}: mass",
            sys.name
        );
        let parry = unit * body.mass;
        assert!(
            (body.inertia - parry).norm() < 1e-9 * parry.norm(),
            "{}: {} vs parry {}",
            sys.name,
            body.inertia,
            parry
        );
    }
}

#[test]
fn real_robots_load_into_a_scene_with_one_warning_each() {
    let s = scene(
        r#"
[simulation]
dt = 0.001

[[robot]]
name = "ur5"
urdf = "../urdf/real/ur5_robot.urdf"

[[robot]]
name = "go1"
urdf = "../urdf/real/go1.urdf"
base = "free_flyer"
"#,
    );
    let w = s.warnings();
    assert_eq!(w.len(), 2, "{w:?}");
    // The UR5's collision meshes are not shipped beside its URDF (robot-data packages keep
    // them apart); the Go1's neutral configuration bends the calves outside their limits.
    assert!(
        w[0].starts_with("robot.ur5: 7 collision mesh(es) not found"),
        "{w:?}"
    );
    assert!(
        w[1].starts_with("robot.go1.q: 4 joint(s) start outside their limits"),
        "{w:?}"
    );
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    for _ in 0..100 {
        stepper.step(&s, &mut state).unwrap();
    }
    assert!(
        state
            .rigid
            .iter()
            .all(|r| r.q.iter().chain(&r.v).all(|x| x.is_finite()))
    );
}
