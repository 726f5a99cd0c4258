//! Derivatives of the step and of trajectories against central finite differences of the
//! forward simulator (docs/derivatives.md: 1e-6 relative, norm-wise), JVP/VJP adjointness, and the
//! adjoint against forward mode. No contact here (see tests/diff_contact.rs).

use std::path::Path;

use crate::diff_support;

use diff_support::{
    check_adjointness, check_jvp_against_fd, check_jvp_against_fd_from, parameters, random_tangent,
    warm_state,
};
use diffsoro::diff::{
    InputTangent, Parameter, Recorder, StepDerivative, TapeOptions, adjoint, forward_sensitivities,
    record_trajectory,
};
use diffsoro::math::{SplitMix64, Vec3, relative_error};
use diffsoro::scene::{Scene, SceneFile};

use crate::diff_support::clamped_beam;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The 100 × 10 × 10 mm beam (meshes/beam_1.msh) clamped at x = 0 under gravity, with
/// Rayleigh damping and an off-axis cable pulled with 0.3 N.
fn beam(law: &str) -> Scene {
    clamped_beam::build(
        &clamped_beam::text(law, clamped_beam::DAMPED, clamped_beam::CABLE_C),
        &[],
    )
}

/// The PneuNet finger of scenes/pneumatic.toml with its cavity at 3 kPa.
fn pneunet() -> Scene {
    Scene::load(
        &Path::new(ROOT).join("scenes/pneumatic.toml"),
        &["soft_body.pneunet.pneumatic.cavity.pressure=3000".to_string()],
    )
    .unwrap()
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

/// The two-finger gripper of scenes/gripper.toml with torque-driven servos (spread over the
/// horn nodes; the angle-driven servos of the scene itself, which pin their horn, are in
/// tests/diff_servo.rs): both servo torques, E and ν.
#[test]
fn servo_torque_derivatives_match_finite_differences() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/gripper.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("angle = -0.2\nmax_angle_step = 0.002", "torque = -0.02");
    assert_eq!(text.matches("torque = -0.02").count(), 2);
    let file = SceneFile::parse("gripper.toml", &text, &[]).unwrap();
    let scene = Scene::build(&file, path.parent().unwrap()).unwrap();
    check_jvp_against_fd_from(
        &scene,
        &[
            "actuator:servo",
            "actuator:servo_right",
            "young_modulus:finger",
            "poisson_ratio:finger_right",
        ],
        &warm_state(&scene, 2),
        1,
        1e-3,
    );
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
        check_adjointness(&scene, &record, &params, 3);
    }
}

/// A JVP asked for E and ν together (their right-hand sides from one element pass, K v⁺
/// included) equals the JVPs asked for each alone (K v⁺ by the assembled stiffness), to
/// round-off, for every law.
#[test]
fn young_modulus_and_poisson_ratio_together_equal_each_alone() {
    for law in ["corotational", "stvk", "neo_hookean"] {
        let scene = beam(law);
        let params = parameters(&scene, &["young_modulus:beam", "poisson_ratio:beam"]);
        let mut state = warm_state(&scene, 4);
        let mut recorder = Recorder::new(&scene).unwrap();
        let (_, record) = recorder.step(&scene, &mut state).unwrap();
        let unit = |p: usize| InputTangent {
            state: diffsoro::diff::StateTangent::zeros(&scene),
            parameters: (0..2).map(|q| if q == p { 1.0 } else { 0.0 }).collect(),
        };
        let mut derivative = StepDerivative::new(&scene);
        let together = derivative
            .jvp(&scene, &record, &params, &[unit(0), unit(1)])
            .unwrap();
        for (p, both) in together.iter().enumerate() {
            let alone = derivative
                .jvp(&scene, &record, &params, &[unit(p)])
                .unwrap();
            let (a, t) = (alone[0].to_vec(), both.to_vec());
            let e = relative_error(&t, &a, 0.0);
            assert!(e < 1e-12, "{law}, parameter {p}: relative difference {e:e}");
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
                ..TapeOptions::default()
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
        ("viscosity:beam", "unknown kind `viscosity`"),
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

/// The step Jacobian of the Trunk (8 cables at 0.2 N, E and ν; supernodal factor) has the
/// same bits on one thread as on two, for 3, 5 and 10 tangents: one interleaved solve on one
/// thread, two interleaved halves on two (3 stays whole), and an interleaved column's bits do
/// not depend on the columns beside it (`NumericFactor::solve_columns_in_place`).
#[test]
fn the_step_jacobian_has_the_same_bits_on_one_and_two_threads() {
    let scene = Scene::load(
        &Path::new(ROOT).join("scenes/trunk.toml"),
        &(1..=8)
            .map(|i| format!("soft_body.trunk.cable.c{i}.force=0.2"))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let params = diffsoro::diff::every_parameter(&scene);
    assert_eq!(params.len(), 10);
    let mut state = warm_state(&scene, 3);
    let mut recorder = Recorder::new(&scene).unwrap();
    let (_, record) = recorder.step(&scene, &mut state).unwrap();
    let mut rng = SplitMix64::new(12);
    let tangents: Vec<InputTangent> = (0..10)
        .map(|_| InputTangent {
            state: random_tangent(&scene, &mut rng, 1e-4, 1e-3),
            parameters: (0..params.len()).map(|_| rng.uniform() - 0.5).collect(),
        })
        .collect();
    let on = |threads: usize, k: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                let mut derivative = StepDerivative::new(&scene);
                let out = derivative
                    .jvp(&scene, &record, &params, &tangents[..k])
                    .unwrap();
                out.iter().map(|t| t.to_vec()).collect::<Vec<_>>()
            })
    };
    for k in [3, 5, 10] {
        let one = on(1, k);
        assert!(one.iter().all(|t| t.iter().any(|&x| x != 0.0)));
        assert_eq!(one, on(2, k), "{k} tangents");
    }
}
