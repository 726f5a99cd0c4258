//! Derivatives of the step and of trajectories against central finite differences of the
//! forward simulator (DESIGN.md §2: 1e-6 relative, norm-wise), JVP/VJP adjointness, and the
//! adjoint against forward mode. No contact here (see tests/diff_contact.rs).

use std::path::Path;

use diffsoro::diff::{
    InputTangent, Parameter, Recorder, StateTangent, StepDerivative, TapeOptions, adjoint,
    forward_sensitivities, record_trajectory,
};
use diffsoro::math::{SplitMix64, Vec3, relative_error};
use diffsoro::scene::{Scene, SceneFile, State, Stepper};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The 100 × 10 × 10 mm beam (meshes/beam_1.msh) clamped at x = 0 under gravity, with
/// Rayleigh damping and an off-axis cable pulled with 0.3 N.
fn beam(law: &str) -> Scene {
    let text = format!(
        r#"
        [simulation]
        dt = 0.01
        steps = 1
        gravity = [0.0, 0.0, -9.81]
        [[soft_body]]
        name = "beam"
        mesh = "beam_1.msh"
        law = "{law}"
        young_modulus = 2.0e5
        poisson_ratio = 0.35
        density = 1000.0
        rayleigh_mass = 0.5
        rayleigh_stiffness = 0.01
        fixed_group = "clamp"
        [[soft_body.cable]]
        name = "c"
        points = [[0.1, 0.0, 0.004], [0.05, 0.0, 0.004], [0.0, 0.0, 0.004]]
        force = 0.3
        "#
    );
    let file = SceneFile::parse("beam.toml", &text, &[]).unwrap();
    Scene::build(&file, &Path::new(ROOT).join("meshes")).unwrap()
}

/// The PneuNet finger of scenes/pneumatic.toml with its cavity at 3 kPa.
fn pneunet() -> Scene {
    Scene::load(
        &Path::new(ROOT).join("scenes/pneumatic.toml"),
        &["soft_body.pneunet.pneumatic.cavity.pressure=3000".to_string()],
    )
    .unwrap()
}

/// A moving, deformed state: `steps` steps from rest.
fn warm_state(scene: &Scene, steps: usize) -> State {
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(scene).unwrap();
    for _ in 0..steps {
        stepper.step(scene, &mut state).unwrap();
    }
    state
}

fn run(scene: &Scene, start: &State, steps: usize) -> Vec<f64> {
    let mut state = start.clone();
    let mut stepper = Stepper::new(scene).unwrap();
    for _ in 0..steps {
        stepper.step(scene, &mut state).unwrap();
    }
    state
        .bodies
        .iter()
        .flat_map(|b| b.positions.iter().chain(&b.velocities))
        .flat_map(|p| [p.x, p.y, p.z])
        .collect()
}

/// A random tangent of the state, zero on fixed nodes, positions scaled by `sx` (m) and
/// velocities by `sv` (m/s).
fn random_tangent(scene: &Scene, rng: &mut SplitMix64, sx: f64, sv: f64) -> StateTangent {
    let mut t = StateTangent::zeros(scene);
    for (tb, body) in t.bodies.iter_mut().zip(&scene.bodies) {
        for n in 0..body.node_count() {
            if body.is_fixed(n) {
                continue;
            }
            tb.positions[n] = sx * Vec3::new(rng.uniform(), rng.uniform(), rng.uniform());
            tb.velocities[n] = sv * Vec3::new(rng.uniform(), rng.uniform(), rng.uniform());
        }
    }
    t
}

/// Central finite difference of the `steps`-step rollout in the direction `dir` (state and
/// parameters), step `eps`.
fn finite_difference(
    scene: &Scene,
    start: &State,
    steps: usize,
    parameters: &[Parameter],
    dir: &InputTangent,
    eps: f64,
) -> Vec<f64> {
    let shifted = |sign: f64| {
        let mut s = scene.clone();
        for (p, d) in parameters.iter().zip(&dir.parameters) {
            p.set(&mut s, p.value(scene) + sign * eps * d).unwrap();
        }
        let mut st = start.clone();
        dir.state.add_to(&mut st, sign * eps);
        run(&s, &st, steps)
    };
    // Central differences at ε and ε/2, Richardson-extrapolated: the O(ε²) truncation error
    // cancels, so ε can stay large enough for round-off not to matter.
    let (p1, m1) = (shifted(1.0), shifted(-1.0));
    let (p2, m2) = (shifted(0.5), shifted(-0.5));
    (0..p1.len())
        .map(|i| {
            let d1 = (p1[i] - m1[i]) / (2.0 * eps);
            let d2 = (p2[i] - m2[i]) / eps;
            (4.0 * d2 - d1) / 3.0
        })
        .collect()
}

fn parameters(scene: &Scene, names: &[&str]) -> Vec<Parameter> {
    names
        .iter()
        .map(|n| Parameter::parse(scene, n).unwrap())
        .collect()
}

/// The directions of the issue, one at a time: x, v, E, ν, each actuator.
fn unit_directions(
    scene: &Scene,
    parameters: &[Parameter],
    seed: u64,
) -> Vec<(String, InputTangent)> {
    let mut rng = SplitMix64::new(seed);
    let np = parameters.len();
    let zero = || vec![0.0; np];
    let mut dirs = vec![
        (
            "x".to_string(),
            InputTangent {
                state: {
                    let mut t = random_tangent(scene, &mut rng, 1e-3, 0.0);
                    t.bodies
                        .iter_mut()
                        .for_each(|b| b.velocities.fill(Vec3::zeros()));
                    t
                },
                parameters: zero(),
            },
        ),
        (
            "v".to_string(),
            InputTangent {
                state: {
                    let mut t = random_tangent(scene, &mut rng, 0.0, 1e-2);
                    t.bodies
                        .iter_mut()
                        .for_each(|b| b.positions.fill(Vec3::zeros()));
                    t
                },
                parameters: zero(),
            },
        ),
    ];
    for (i, p) in parameters.iter().enumerate() {
        let mut d = zero();
        // Scale so a unit step moves the parameter by a few percent of its value or 0.01.
        d[i] = 0.05 * p.value(scene).abs().max(0.2);
        dirs.push((
            p.name(scene),
            InputTangent {
                state: StateTangent::zeros(scene),
                parameters: d,
            },
        ));
    }
    dirs
}

fn check_jvp_against_fd(scene: &Scene, names: &[&str], steps: usize, warm: usize) {
    let params = parameters(scene, names);
    let start = warm_state(scene, warm);
    for (what, dir) in unit_directions(scene, &params, 17) {
        // JVP, step by step.
        let mut recorder = Recorder::new(scene).unwrap();
        let mut derivative = StepDerivative::new(scene);
        let mut state = start.clone();
        let mut input = dir.clone();
        for _ in 0..steps {
            let (_, record) = recorder.step(scene, &mut state).unwrap();
            let out = derivative
                .jvp(scene, &record, &params, &[input.clone()])
                .unwrap();
            input.state = out.into_iter().next().unwrap();
            recorder.recycle(record);
        }
        let jvp = input.state.to_vec();
        let fd = finite_difference(scene, &start, steps, &params, &dir, 1e-3);
        let err = relative_error(&jvp, &fd, 0.0);
        assert!(
            err < 1e-6,
            "{}: {steps} steps, d/d{what}: JVP vs FD {err:e} (|jvp| = {:e})",
            scene.bodies[0].material().law().name(),
            jvp.iter().map(|x| x * x).sum::<f64>().sqrt()
        );
    }
}

#[test]
fn one_step_derivatives_match_finite_differences_for_every_law() {
    for law in ["corotational", "stvk", "neo_hookean"] {
        let scene = beam(law);
        check_jvp_against_fd(
            &scene,
            &["young_modulus:beam", "poisson_ratio:beam", "actuator:c"],
            1,
            5,
        );
    }
}

#[test]
fn thirty_step_derivatives_match_finite_differences_for_every_law() {
    for law in ["corotational", "stvk", "neo_hookean"] {
        let scene = beam(law);
        check_jvp_against_fd(
            &scene,
            &["young_modulus:beam", "poisson_ratio:beam", "actuator:c"],
            30,
            0,
        );
    }
}

#[test]
fn pressure_derivatives_match_finite_differences() {
    let scene = pneunet();
    check_jvp_against_fd(&scene, &["actuator:cavity", "young_modulus:pneunet"], 3, 3);
}

/// ⟨w, J u⟩ = ⟨Jᵀ w, u⟩ for random u (state and parameters) and w.
#[test]
fn jvp_and_vjp_are_adjoint() {
    for law in ["corotational", "stvk", "neo_hookean"] {
        let scene = beam(law);
        let params = parameters(
            &scene,
            &["young_modulus:beam", "poisson_ratio:beam", "actuator:c"],
        );
        let mut state = warm_state(&scene, 4);
        let mut recorder = Recorder::new(&scene).unwrap();
        let (_, record) = recorder.step(&scene, &mut state).unwrap();
        let mut derivative = StepDerivative::new(&scene);
        let mut rng = SplitMix64::new(3);
        for _ in 0..3 {
            let u = InputTangent {
                state: random_tangent(&scene, &mut rng, 1.0, 1.0),
                parameters: (0..params.len()).map(|_| rng.uniform()).collect(),
            };
            let w = random_tangent(&scene, &mut rng, 1.0, 1.0);
            let ju = derivative
                .jvp(&scene, &record, &params, std::slice::from_ref(&u))
                .unwrap();
            let jtw = derivative.vjp(&scene, &record, &params, &w).unwrap();
            let lhs = w.dot(&ju[0]);
            let rhs = jtw.state.dot(&u.state)
                + jtw
                    .parameters
                    .iter()
                    .zip(&u.parameters)
                    .map(|(a, b)| a * b)
                    .sum::<f64>();
            assert!(
                (lhs - rhs).abs() <= 1e-10 * lhs.abs().max(rhs.abs()),
                "{law}: ⟨w, Ju⟩ = {lhs:e}, ⟨Jᵀw, u⟩ = {rhs:e}"
            );
        }
    }
}

/// The adjoint gradient of a scalar loss of the state after 30 steps equals the forward-mode
/// one, with every record kept and with every record recomputed (memory bound 0).
#[test]
fn adjoint_equals_forward_mode_over_thirty_steps() {
    let scene = beam("neo_hookean");
    let params = parameters(
        &scene,
        &["young_modulus:beam", "poisson_ratio:beam", "actuator:c"],
    );
    let mut rng = SplitMix64::new(9);
    let w = random_tangent(&scene, &mut rng, 1.0, 0.1);
    let start = scene.initial_state();
    let mut s = start.clone();
    let tangents = forward_sensitivities(&scene, &mut s, 30, &params, &mut |_| {}).unwrap();
    let forward: Vec<f64> = tangents.iter().map(|t| w.dot(t)).collect();
    for limit in [usize::MAX, 0] {
        let mut s = start.clone();
        let mut tape = record_trajectory(
            &scene,
            &mut s,
            30,
            TapeOptions {
                memory_limit: limit,
            },
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(tape.kept_records(), if limit == 0 { 0 } else { 30 });
        let adj = adjoint(&scene, &mut tape, &params, &w).unwrap();
        let err = relative_error(&adj.parameters, &forward, 0.0);
        assert!(
            err < 1e-10,
            "limit {limit}: adjoint {:?} vs forward {forward:?}",
            adj.parameters
        );
    }
}

#[test]
fn unknown_parameters_and_undifferentiable_scenes_are_named() {
    let scene = beam("stvk");
    for (name, needle) in [
        ("young_modulus:nope", "no soft body `nope`"),
        ("actuator:zz", "no actuator `zz`"),
        ("density:beam", "unknown kind `density`"),
        ("young_modulus", "expected"),
    ] {
        let e = Parameter::parse(&scene, name).unwrap_err().to_string();
        assert!(e.contains(needle), "{name}: {e}");
    }
    let mut newton = scene.clone();
    newton.simulation.newton_iterations = 3;
    let e = Recorder::new(&newton).err().unwrap().to_string();
    assert!(e.contains("newton_iterations"), "{e}");
}

/// The dense position Jacobian d v⁺/d x applied to a random direction equals the JVP of
/// that direction (itself checked against finite differences above).
#[test]
fn position_jacobian_agrees_with_the_jvp() {
    let scene = beam("corotational");
    let mut state = warm_state(&scene, 3);
    let mut recorder = Recorder::new(&scene).unwrap();
    let (_, record) = recorder.step(&scene, &mut state).unwrap();
    let mut derivative = StepDerivative::new(&scene);
    let jac = derivative.position_jacobian(&scene, &record, 0).unwrap();
    let mut rng = SplitMix64::new(21);
    let mut u = random_tangent(&scene, &mut rng, 1.0, 0.0);
    u.bodies[0].velocities.fill(Vec3::zeros());
    let dofs = scene.bodies[0].pattern().dofs();
    let u_red: Vec<f64> = dofs
        .free_dofs()
        .iter()
        .map(|&f| u.bodies[0].positions[f / 3][f % 3])
        .collect();
    let ju = &jac * diffsoro::math::DVec::from_vec(u_red);
    let jvp = derivative
        .jvp(
            &scene,
            &record,
            &[],
            &[InputTangent {
                state: u,
                parameters: vec![],
            }],
        )
        .unwrap();
    let jvp_red: Vec<f64> = dofs
        .free_dofs()
        .iter()
        .map(|&f| jvp[0].bodies[0].velocities[f / 3][f % 3])
        .collect();
    let err = relative_error(ju.as_slice(), &jvp_red, 0.0);
    assert!(err < 1e-10, "J u vs JVP: {err:e}");
}
