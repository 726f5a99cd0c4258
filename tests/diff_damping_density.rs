//! The mass and damping parameters `rayleigh_mass:BODY` (α, 1/s), `rayleigh_stiffness:BODY`
//! (β, s) and `density:BODY` (ρ, kg/m³) against central finite differences of the forward
//! simulator (Richardson-extrapolated; 1e-6 relative, norm-wise, docs/derivatives.md):
//!
//! - one step, JVP and VJP, on the cable-pulled beam of tests/diff_step.rs (α, β nonzero; the
//!   cable's tangent K_a in β's right-hand side) with lumped and with consistent mass, on a
//!   block resting on the floor in sticking contact (no mode switch), and on the servo
//!   Gripper's pinned horns with consistent mass (the couplings M_fp and K_fp);
//! - mixed steps: a rigid cube landing on the block, the pad attached to a robot's palm (soft
//!   and rigid parts of the tangents, each to 1e-6 of its size);
//! - ⟨w, J u⟩ = ⟨Jᵀ w, u⟩ to 1e-10 on each of those steps;
//! - 20 steps: the forward sensitivities and the adjoint's gradient of a loss;
//! - the CLI: `simulate --sensitivity` against central differences of the CLI's own final
//!   positions with the value moved by `--set`, and `calibrate --param rayleigh_stiffness:beam`
//!   recovering β from a guess 3× off;
//! - `Parameter::set` then a new stepper steps as the scene built with the value, bit for bit;
//!   bad input: `density:` of a uniform-mass body, negative or non-finite values.

use std::path::Path;

use crate::cli_support;
use crate::diff_support;
use crate::scene_support;

use cli_support::{run, run_json, scratch};
use diff_support::{
    check_adjointness, check_directions_against_fd, clamped_beam, finite_difference, parameters,
    random_tangent, unit_directions, warm_state,
};
use diffsoro::contact::Obstacle;
use diffsoro::diff::{
    InputTangent, Parameter, Recorder, StateTangent, StepDerivative, TapeOptions, adjoint,
    forward_sensitivities, record_trajectory,
};
use diffsoro::fem::{MassKind, SoftBody, SoftBodyOptions};
use diffsoro::material::{Law, Material};
use diffsoro::math::{SplitMix64, Vec3, relative_error};
use diffsoro::mesh::box_mesh;
use diffsoro::scene::{
    ContactSection, Scene, SceneContact, SceneFile, SimulationSection, State, Stepper,
};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

const NAMES: [&str; 3] = [
    "rayleigh_mass:beam",
    "rayleigh_stiffness:beam",
    "density:beam",
];

/// The 100 × 10 × 10 mm beam (meshes/beam_1.msh) clamped at x = 0 under gravity, α = 0.5 /s,
/// β = 0.01 s, an off-axis cable pulled with 0.3 N (its tangent K_a is in A), `mass` lumped
/// or consistent.
fn beam(law: &str, mass: &str) -> Scene {
    clamped_beam::build(&beam_text(law, mass), &[])
}

/// The text of [`beam`].
fn beam_text(law: &str, mass: &str) -> String {
    clamped_beam::text(
        law,
        &format!("mass = \"{mass}\"\n{}", clamped_beam::DAMPED),
        clamped_beam::CABLE_C,
    )
}

/// The input directions of the parameters alone, each scaled by 5|p| so that the differences'
/// ε = 1e-3 moves p by 0.5 % of its value (under `diff_support::unit_directions`'
/// 5 max(|p|, 0.2) the block's β = 0.005 s moves by 20 %, and the extrapolated difference
/// misses the JVP by 5e-6).
fn parameter_directions(scene: &Scene, params: &[Parameter]) -> Vec<InputTangent> {
    (0..params.len())
        .map(|i| InputTangent {
            state: StateTangent::zeros(scene),
            parameters: (0..params.len())
                .map(|j| {
                    if i == j {
                        5.0 * params[i].value(scene).abs()
                    } else {
                        0.0
                    }
                })
                .collect(),
        })
        .collect()
}

/// The JVP of one step from `start` along x, v (`diff_support::unit_directions`) and each
/// parameter of `names` ([`parameter_directions`]) equals the Richardson-extrapolated central
/// difference of the step, with step `eps` along each direction, to 1e-6 relative.
fn check_jvp_against_fd(scene: &Scene, names: &[&str], start: &State, eps: f64) {
    let params = parameters(scene, names);
    let mut dirs: Vec<(String, InputTangent)> = unit_directions(scene, &params, 17)
        .into_iter()
        .take(2)
        .collect();
    for (p, d) in params.iter().zip(parameter_directions(scene, &params)) {
        dirs.push((p.name(scene), d));
    }
    check_directions_against_fd(scene, &params, start, 1, eps, &dirs);
}

/// The VJP of one step from `start` for three random output cotangents w gives, for each
/// parameter, ⟨w, ∂(x⁺, v⁺)/∂p⟩ of the Richardson-extrapolated central difference of the
/// step with step `eps` (1e-6 relative over the three cotangents, per parameter).
fn check_vjp_against_fd(scene: &Scene, names: &[&str], start: &State, eps: f64, what: &str) {
    let params = parameters(scene, names);
    let dirs = parameter_directions(scene, &params);
    let fd: Vec<Vec<f64>> = dirs
        .iter()
        .map(|d| finite_difference(scene, start, 1, &params, d, eps))
        .collect();
    let mut recorder = Recorder::new(scene).unwrap();
    let mut state = start.clone();
    let (_, record) = recorder.step(scene, &mut state).unwrap();
    let mut derivative = StepDerivative::new(scene);
    let mut rng = SplitMix64::new(29);
    // Per parameter: its cotangent for each w, and ⟨w, FD column⟩.
    let mut vjp = vec![Vec::new(); params.len()];
    let mut reference = vec![Vec::new(); params.len()];
    for _ in 0..3 {
        let w = random_tangent(scene, &mut rng, 1.0, 0.1);
        let flat = w.to_vec();
        let out = derivative.vjp(scene, &record, &params, &w).unwrap();
        for (p, column) in fd.iter().enumerate() {
            // The direction moved p by dirs[p] per unit: divide it out.
            let scale = dirs[p].parameters[p];
            vjp[p].push(out.parameters[p]);
            reference[p].push(flat.iter().zip(column).map(|(a, b)| a * b).sum::<f64>() / scale);
        }
    }
    for (p, name) in names.iter().enumerate() {
        let err = relative_error(&vjp[p], &reference[p], 0.0);
        assert!(
            err < 1e-6,
            "{what}, {name}: VJP {:?} vs FD {:?}: relative error {err:e}",
            vjp[p],
            reference[p]
        );
    }
}

#[test]
fn one_step_on_a_beam_with_lumped_and_consistent_mass() {
    for (law, mass) in [
        ("neo_hookean", "lumped"),
        ("corotational", "consistent"),
        ("stvk", "consistent"),
    ] {
        let scene = beam(law, mass);
        let start = warm_state(&scene, 5);
        check_jvp_against_fd(&scene, &NAMES, &start, 1e-3);
        check_vjp_against_fd(&scene, &NAMES, &start, 1e-3, &format!("{law}, {mass} mass"));
    }
}

#[test]
fn jvp_and_vjp_are_adjoint_on_a_beam() {
    for mass in ["lumped", "consistent"] {
        let scene = beam("neo_hookean", mass);
        let mut names = NAMES.to_vec();
        names.extend(["young_modulus:beam", "actuator:c"]);
        let params = parameters(&scene, &names);
        let mut state = warm_state(&scene, 4);
        let mut recorder = Recorder::new(&scene).unwrap();
        let (_, record) = recorder.step(&scene, &mut state).unwrap();
        check_adjointness(&scene, &record, &params, 3);
    }
}

const SIDE: f64 = 0.02;
const SINK: f64 = 1e-4;

/// A 20 mm soft cube (2×2×2 cells) on a floor (μ = 0.9), α = 1 /s, β = 0.005 s, `mass`, the
/// NCP solved to 1e-13 (tests/diff_contact.rs's block, damped both ways).
fn block(mass: MassKind) -> Scene {
    let mesh = box_mesh([2, 2, 2], [0.0; 3], [SIDE; 3]).unwrap();
    let n = mesh.node_count();
    let body = SoftBody::new(
        "block",
        mesh,
        SoftBodyOptions {
            material: Material::new(Law::NeoHookean, 1e5, 0.3).unwrap(),
            density: 1000.0,
            mass,
            rayleigh_mass: 1.0,
            rayleigh_stiffness: 0.005,
            fixed: vec![false; n],
        },
    )
    .unwrap();
    Scene {
        rigid: Default::default(),
        contact: SceneContact {
            names: Vec::new(),
            obstacles: vec![Obstacle::plane(Vec3::zeros(), Vec3::z()).unwrap()],
            friction: vec![0.9],
            settings: ContactSection {
                tolerance: 1e-13,
                max_iterations: 50_000,
                ..ContactSection::default()
            },
            ..SceneContact::default()
        },
        ..Scene::new(
            SimulationSection {
                dt: 0.01,
                steps: 0,
                gravity: [0.0, 0.0, -9.81],
                newton_iterations: 1,
            },
            vec![body],
        )
    }
}

/// The block's rest state 0.1 mm into the floor (its gaps stay negative through the
/// differences: no crossing of the penetration correction's kink at Φ = 0), at rest.
fn sunk(scene: &Scene) -> State {
    let mut state = scene.initial_state();
    for x in &mut state.bodies[0].positions {
        x.z -= SINK;
    }
    state
}

const BLOCK_NAMES: [&str; 3] = [
    "rayleigh_mass:block",
    "rayleigh_stiffness:block",
    "density:block",
];

/// Resting on the floor with its 9 bottom nodes sticking: one step, JVP and VJP, and
/// adjointness, with lumped and consistent mass (the NCP sees ρ, α, β through A in its
/// Delassus matrix and its free velocity). The differences move each parameter by 1.5 %
/// (ε = 3e-3): the block barely moves, dv⁺/dα is small, and at 0.5 % the NCP's residual
/// (1e-13) leaves 3e-7 of noise in α's difference (7e-8 at 1.5 %).
#[test]
fn one_step_resting_on_the_floor_in_sticking_contact() {
    for mass in [MassKind::Lumped, MassKind::Consistent] {
        let scene = block(mass);
        let start = sunk(&scene);
        let mut s = start.clone();
        let report = Stepper::new(&scene).unwrap().step(&scene, &mut s).unwrap();
        assert!(report.contact_converged);
        assert_eq!(
            (report.contact[0].detected, report.contact[0].active),
            (9, 9)
        );
        check_jvp_against_fd(&scene, &BLOCK_NAMES, &start, 3e-3);
        let what = format!("block, {mass:?}");
        check_vjp_against_fd(&scene, &BLOCK_NAMES, &start, 3e-3, &what);
        let mut names = BLOCK_NAMES.to_vec();
        names.push("young_modulus:block");
        let params = parameters(&scene, &names);
        let mut state = start.clone();
        let mut recorder = Recorder::new(&scene).unwrap();
        let (_, record) = recorder.step(&scene, &mut state).unwrap();
        assert_eq!(record.bodies[0].contacts(), 9);
        check_adjointness(&scene, &record, &params, 7);
    }
}

/// The servo Gripper of scenes/gripper.toml with consistent mass and Rayleigh damping, its
/// horns turning at their per-step limit (0.002 rad per step toward −0.2 rad): the horn nodes
/// are pinned and move, so the free rows' coupling to them,
/// −c_k K_fp v_p⁺ − M_fp (c_m v_p⁺ − v_p), moves with α, β, ρ (M_fp ≠ 0 for the consistent
/// mass). The targets are beyond reach: their derivative is zero (tests/diff_servo.rs).
#[test]
fn one_step_of_the_servo_gripper_with_pinned_horns() {
    let overrides: Vec<String> = [
        "soft_body.finger.mass=\"consistent\"",
        "simulation.gravity=[0.0, 0.0, 0.0]",
        "soft_body.finger.rayleigh_mass=2.0",
        "soft_body.finger.rayleigh_stiffness=0.01",
        "soft_body.finger_right.rayleigh_stiffness=0.005",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let scene = Scene::load(&Path::new(ROOT).join("scenes/gripper.toml"), &overrides).unwrap();
    assert!(!scene.body_actuation(0).pinned.is_empty());
    let names = [
        "rayleigh_mass:finger",
        "rayleigh_stiffness:finger",
        "density:finger",
        "rayleigh_stiffness:finger_right",
        "density:finger_right",
    ];
    // From rest (the horns start turning: v_p = 0, v_p⁺ ≠ 0, so M_fp (v_p − c_m v_p⁺) is
    // large) and after 5 steps (v_p ≈ v_p⁺ at the constant ramp).
    for warm in [0, 5] {
        let start = warm_state(&scene, warm);
        check_jvp_against_fd(&scene, &names, &start, 3e-3);
        check_vjp_against_fd(&scene, &names, &start, 3e-3, &format!("gripper, {warm}"));
    }
    let start = warm_state(&scene, 5);
    let mut with_target = names.to_vec();
    with_target.push("actuator:servo");
    let params = parameters(&scene, &with_target);
    let mut state = start.clone();
    let mut recorder = Recorder::new(&scene).unwrap();
    let (_, record) = recorder.step(&scene, &mut state).unwrap();
    check_adjointness(&scene, &record, &params, 11);
}

/// The JVP of `steps` steps from `start` along x, v and each parameter of `names`
/// ([`parameter_directions`]) equals the Richardson-extrapolated central difference (step
/// `eps`), the soft bodies' part and the rigid systems' part each to 1e-6 of its size; and the
/// VJP of one step is its adjoint (1e-10).
fn check_mixed(scene: &Scene, start: &State, names: &[&str], steps: usize, eps: f64, what: &str) {
    let params = parameters(scene, names);
    let mut dirs: Vec<(String, InputTangent)> = unit_directions(scene, &params, 5)
        .into_iter()
        .take(2)
        .collect();
    for (p, d) in params.iter().zip(parameter_directions(scene, &params)) {
        dirs.push((p.name(scene), d));
    }
    let soft_len = 6 * scene.bodies.iter().map(|b| b.node_count()).sum::<usize>();
    for (dir_name, dir) in &dirs {
        let mut recorder = Recorder::new(scene).unwrap();
        let mut derivative = StepDerivative::new(scene);
        let mut state = start.clone();
        let mut input = dir.clone();
        for _ in 0..steps {
            let (_, record) = recorder.step(scene, &mut state).unwrap();
            let out = derivative
                .jvp(scene, &record, &params, std::slice::from_ref(&input))
                .unwrap();
            input.state = out.into_iter().next().unwrap();
            recorder.recycle(record);
        }
        let jvp = input.state.to_vec();
        let fd = finite_difference(scene, start, steps, &params, dir, eps);
        let (soft, rigid) = jvp.split_at(soft_len);
        let (fd_soft, fd_rigid) = fd.split_at(soft_len);
        for (part, a, b) in [("soft", soft, fd_soft), ("rigid", rigid, fd_rigid)] {
            let err = relative_error(a, b, 0.0);
            let size = a.iter().map(|x| x * x).sum::<f64>().sqrt();
            assert!(
                size > 0.0 && err < 1e-6,
                "{what}, d/d({dir_name}), {part} part: JVP vs FD {err:e} (|jvp| = {size:e})"
            );
        }
    }
    let mut recorder = Recorder::new(scene).unwrap();
    let mut state = start.clone();
    let (_, record) = recorder.step(scene, &mut state).unwrap();
    check_adjointness(scene, &record, &params, 17);
}

/// Steps where the soft block meets a rigid body in one NCP (tests/mixed_step_derivative.rs's
/// scenes): a 25 mm rigid cube landing on the clamped block (α = 2, β = 0.01) and sticking,
/// its face on the block's nodes and its corners on the block's triangles; and the pad of
/// `lift_pad.toml` attached to the robot's palm, held by its PD (one step: over two, the
/// palm's tangent along β nearly cancels, 5e-8 against 8e-6 after one, below what the
/// differences resolve to 1e-6). The rigid systems' tangents move with the block's α, β, ρ
/// through the shared NCP.
#[test]
fn mixed_steps_with_a_rigid_cube_and_an_attached_palm() {
    let text = format!(
        r#"
[simulation]
dt = 0.005
steps = 10
gravity = [0.0, 0.0, -9.81]

[contact]
friction = 0.5
tolerance = 1e-12
max_iterations = 100000

{}fixed_box = [[-1.0, -1.0, -1.0], [1.0, 1.0, 0.001]]

[[rigid_body]]
name = "cube"
shape = "box"
half_extents = [0.0125, 0.0125, 0.0125]
density = 1000.0
position = [0.0013, -0.0021, 0.0335]
velocity = [0.0, 0.0, -0.1]
"#,
        scene_support::SOFT_BLOCK
    );
    let file = SceneFile::parse("landing.toml", &text, &[]).unwrap();
    let landing = Scene::build(&file, &scene_support::root().join("scenes")).unwrap();
    let (start, _) = scene_support::before_landing(&landing, 20);
    let names = [
        "rayleigh_mass:block",
        "rayleigh_stiffness:block",
        "density:block",
    ];
    check_mixed(&landing, &start, &names, 1, 1e-3, "cube landing");

    let path = Path::new(ROOT).join("scenes/lift_pad.toml");
    let text = std::fs::read_to_string(&path).unwrap() + "\n[contact]\n";
    let overrides = [
        "robot.lift.kd=[5.0]",
        "contact.tolerance=1e-12",
        "contact.max_iterations=100000",
    ]
    .map(String::from);
    let file = SceneFile::parse(path.to_str().unwrap(), &text, &overrides).unwrap();
    let pad = Scene::build(&file, path.parent().unwrap()).unwrap();
    let start = diff_support::run_state(&pad, &pad.initial_state(), 30);
    let names = ["rayleigh_mass:pad", "rayleigh_stiffness:pad", "density:pad"];
    check_mixed(&pad, &start, &names, 1, 1e-3, "pad on palm");
}

/// Over 20 steps of the beam: the forward sensitivities of α, β, ρ against central
/// differences of the whole run, and the adjoint's gradient of a loss wᵀ(x, v) against the
/// same differences (each 1e-6 relative).
#[test]
fn twenty_steps_forward_and_adjoint_against_finite_differences() {
    let scene = beam("neo_hookean", "consistent");
    let params = parameters(&scene, &NAMES);
    let start = scene.initial_state();
    let steps = 20;
    let dirs = parameter_directions(&scene, &params);
    let fd: Vec<Vec<f64>> = dirs
        .iter()
        .enumerate()
        .map(|(p, d)| {
            let scale = d.parameters[p];
            finite_difference(&scene, &start, steps, &params, d, 1e-3)
                .into_iter()
                .map(|x| x / scale)
                .collect()
        })
        .collect();
    let mut s = start.clone();
    let tangents = forward_sensitivities(&scene, &mut s, steps, &params, &mut |_| {}).unwrap();
    for (p, (t, column)) in tangents.iter().zip(&fd).enumerate() {
        let err = relative_error(&t.to_vec(), column, 0.0);
        assert!(err < 1e-6, "{}: forward vs FD {err:e}", NAMES[p]);
    }
    let mut rng = SplitMix64::new(31);
    let w = random_tangent(&scene, &mut rng, 1.0, 0.1);
    let flat = w.to_vec();
    let mut s = start.clone();
    let mut tape =
        record_trajectory(&scene, &mut s, steps, TapeOptions::default(), &mut |_| {}).unwrap();
    let adj = adjoint(&scene, &mut tape, &params, &w).unwrap();
    let reference: Vec<f64> = fd
        .iter()
        .map(|c| flat.iter().zip(c).map(|(a, b)| a * b).sum())
        .collect();
    for (p, (a, r)) in adj.parameters.iter().zip(&reference).enumerate() {
        let err = (a - r).abs() / r.abs();
        assert!(
            err < 1e-6,
            "{}: adjoint {a:e} vs FD {r:e}: {err:e}",
            NAMES[p]
        );
    }
}

/// `Parameter::set` of α, β, ρ, then a stepper built afterwards, steps exactly as the scene
/// built with the value in its file (`--set soft_body.beam.KEY=…`), and `value` returns it.
#[test]
fn set_then_step_equals_the_scene_built_with_the_value() {
    for mass in ["lumped", "consistent"] {
        let scene = beam("stvk", mass);
        for (name, key, value) in [
            ("rayleigh_mass:beam", "rayleigh_mass", 1.25),
            ("rayleigh_stiffness:beam", "rayleigh_stiffness", 0.003),
            ("density:beam", "density", 1234.5),
        ] {
            let mut set = scene.clone();
            let p = Parameter::parse(&set, name).unwrap();
            p.set(&mut set, value).unwrap();
            assert_eq!(p.value(&set), value);
            let built = rebuild_with(mass, key, value);
            assert_eq!(
                set.bodies[0].node_masses(),
                built.bodies[0].node_masses(),
                "{name}"
            );
            assert_eq!(
                set.bodies[0].mass_values(),
                built.bodies[0].mass_values(),
                "{name}"
            );
            let run = |s: &Scene| {
                let mut state = warm_state(s, 0);
                let mut stepper = Stepper::new(s).unwrap();
                for _ in 0..3 {
                    stepper.step(s, &mut state).unwrap();
                }
                state
            };
            let (a, b) = (run(&set), run(&built));
            assert_eq!(a.bodies[0].positions, b.bodies[0].positions, "{name}");
            assert_eq!(a.bodies[0].velocities, b.bodies[0].velocities, "{name}");
            // And the value moved the run.
            assert_ne!(
                a.bodies[0].positions,
                run(&scene).bodies[0].positions,
                "{name}"
            );
        }
    }
}

/// The beam of [`beam`] (law `stvk`, `mass`) built from its text with the override
/// `soft_body.beam.KEY=VALUE`, as `--set` builds it.
fn rebuild_with(mass: &str, key: &str, value: f64) -> Scene {
    clamped_beam::build(
        &beam_text("stvk", mass),
        &[format!("soft_body.beam.{key}={value}")],
    )
}

#[test]
fn bad_values_and_a_uniform_mass_density_are_errors_naming_them() {
    let mut scene = beam("stvk", "lumped");
    for (name, value, needle) in [
        ("rayleigh_mass:beam", -0.1, "rayleigh_mass:beam"),
        ("rayleigh_stiffness:beam", -1e-3, "rayleigh_stiffness:beam"),
        ("rayleigh_mass:beam", f64::NAN, "rayleigh_mass:beam"),
        (
            "rayleigh_stiffness:beam",
            f64::INFINITY,
            "rayleigh_stiffness:beam",
        ),
        ("density:beam", 0.0, "density:beam"),
        ("density:beam", -1000.0, "density:beam"),
        ("density:beam", f64::NAN, "density:beam"),
    ] {
        let p = Parameter::parse(&scene, name).unwrap();
        let before = p.value(&scene);
        let e = p.set(&mut scene, value).unwrap_err().to_string();
        assert!(
            e.contains(needle) && e.contains("must be"),
            "{name}={value}: {e}"
        );
        assert_eq!(e.lines().count(), 1, "{e}");
        assert_eq!(p.value(&scene), before, "{name} unchanged");
    }
    // α = 0 and β = 0 (no damping) are values a parameter can take.
    for name in ["rayleigh_mass:beam", "rayleigh_stiffness:beam"] {
        Parameter::parse(&scene, name)
            .unwrap()
            .set(&mut scene, 0.0)
            .unwrap();
    }
    let e = Parameter::parse(&scene, "density:nope")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no soft body `nope`"), "{e}");

    // A uniform mass: the body's total_mass sets its masses, no density enters them.
    let dir = scratch("uniform");
    let text = std::fs::read_to_string(Path::new(ROOT).join("scenes/beam.toml"))
        .unwrap()
        .replace("../meshes/beam_2.msh", &format!("{ROOT}/meshes/beam_1.msh"))
        .replace("density = 1000.0", "total_mass = 0.01")
        .replace("mass = \"lumped\"", "mass = \"uniform\"");
    let path = dir.join("uniform_beam.toml");
    std::fs::write(&path, text).unwrap();
    let uniform = Scene::load(&path, &[]).unwrap();
    let e = Parameter::parse(&uniform, "density:beam")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`beam`") && e.contains("uniform") && e.contains("total_mass"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    // α and β are parameters of a uniform-mass body all the same.
    Parameter::parse(&uniform, "rayleigh_mass:beam").unwrap();
    let out = run(&[
        "simulate",
        path.to_str().unwrap(),
        "--steps",
        "1",
        "--sensitivity",
        "density:beam",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains("`beam`") && err.contains("uniform"), "{err}");
}

/// The final positions of `simulate scenes/beam.toml` (10 steps, coarse mesh, α = 0.5,
/// β = 0.01) with `extra` arguments.
fn cli_beam(extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "simulate",
        "scenes/beam.toml",
        "--steps",
        "10",
        "--set",
        "soft_body.beam.mesh=../meshes/beam_1.msh",
        "--set",
        "soft_body.beam.rayleigh_mass=0.5",
        "--set",
        "soft_body.beam.rayleigh_stiffness=0.01",
    ];
    args.extend_from_slice(extra);
    run_json(&args)
}

fn flat(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p.as_array().unwrap().iter().map(|c| c.as_f64().unwrap()))
        .collect()
}

/// `simulate --sensitivity rayleigh_mass:beam,rayleigh_stiffness:beam,density:beam` against
/// the Richardson-extrapolated central difference of the CLI's own final positions with the
/// value moved by `--set soft_body.beam.KEY=…` (1e-6 relative).
#[test]
fn cli_sensitivities_match_differences_of_cli_runs() {
    let v = cli_beam(&[
        "--sensitivity",
        "rayleigh_mass:beam,density:beam",
        "--sensitivity",
        "rayleigh_stiffness:beam",
    ]);
    for (name, key, value) in [
        ("rayleigh_mass:beam", "rayleigh_mass", 0.5),
        ("rayleigh_stiffness:beam", "rayleigh_stiffness", 0.01),
        ("density:beam", "density", 1000.0),
    ] {
        let sens = flat(&v["sensitivities"][name]);
        let delta = 5e-3 * value;
        let at = |d: f64| {
            let set = format!("soft_body.beam.{key}={}", value + d);
            flat(&cli_beam(&["--set", &set])["soft_bodies"][0]["positions"])
        };
        let (p1, m1, p2, m2) = (at(delta), at(-delta), at(delta / 2.0), at(-delta / 2.0));
        let fd: Vec<f64> = (0..p1.len())
            .map(|i| {
                let d1 = (p1[i] - m1[i]) / (2.0 * delta);
                let d2 = (p2[i] - m2[i]) / delta;
                (4.0 * d2 - d1) / 3.0
            })
            .collect();
        let err = relative_error(&sens, &fd, 0.0);
        let size = fd.iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!(
            size > 0.0 && err < 1e-6,
            "{name}: {err:e} (|fd| = {size:e})"
        );
    }
}

/// `calibrate --param rayleigh_stiffness:beam` recovers β = 0.02 s, observed by `simulate`
/// after 10 steps (0.1 s, the beam's first downswing: its first bending mode, about 5 Hz, has
/// a damping ratio βω/2 ≈ 0.3, and the sag falls monotonically with β between β/3 and 3β,
/// while after 20 and 30 steps the loss has other minima there), from guesses 3× too large
/// and 3× too small, to 1e-6 relative.
#[test]
fn calibrate_recovers_the_rayleigh_stiffness() {
    let dir = scratch("beta");
    let base = [
        "scenes/beam.toml",
        "--set",
        "soft_body.beam.mesh=../meshes/beam_1.msh",
        "--set",
        "simulation.steps=10",
    ];
    let truth = 0.02;
    let obs = run_json(
        &[
            &["simulate"][..],
            &base,
            &[
                "--set",
                &format!("soft_body.beam.rayleigh_stiffness={truth}"),
            ],
        ]
        .concat(),
    );
    let observed = dir.join("observed.json");
    std::fs::write(&observed, obs.to_string()).unwrap();
    for guess in [3.0 * truth, truth / 3.0] {
        let report = run_json(
            &[
                &["calibrate"][..],
                &base,
                &[
                    "--observed",
                    observed.to_str().unwrap(),
                    "--param",
                    "rayleigh_stiffness:beam",
                    "--init",
                    &format!("rayleigh_stiffness:beam={guess}"),
                ],
            ]
            .concat(),
        );
        let beta = report["params"]["rayleigh_stiffness:beam"]
            .as_f64()
            .unwrap();
        let err = ((beta - truth) / truth).abs();
        assert!(err < 1e-6, "from {guess}: β = {beta} ({err:e}); {report}");
        assert_eq!(report["converged"], true, "{report}");
    }
    // A negative start is a one-line error naming the parameter and its range.
    let out = run(&[
        &["calibrate"][..],
        &base,
        &[
            "--observed",
            observed.to_str().unwrap(),
            "--param",
            "rayleigh_stiffness:beam",
            "--init",
            "rayleigh_stiffness:beam=-0.01",
        ],
    ]
    .concat());
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("rayleigh_stiffness:beam") && err.contains("β"),
        "{err}"
    );
}
