//! Derivatives through angle-driven (pinned) servos, on the servo Gripper of
//! scenes/gripper.toml, against Richardson-extrapolated central finite differences of the
//! forward simulator (1e-6 relative, norm-wise, docs/derivatives.md): one step and twenty steps with
//! respect to x (free and horn nodes), v, E and the servos' angle targets, both while the
//! per-step angle limit is active (the servos ramp toward −0.2 rad at 0.002 rad per step: the
//! target has no first-order effect and θ⁺ follows the current angle) and while the target is
//! within reach; JVP/VJP adjointness; the adjoint against forward sensitivities; the position
//! Jacobian against the JVP.

use std::path::Path;

use crate::diff_support;

use diff_support::{
    check_adjointness, check_jvp_against_fd_from, parameters, random_tangent, warm_state,
};
use diffsoro::actuator::{ActuatorKind, Drive};
use diffsoro::contact::Obstacle;
use diffsoro::diff::{
    InputTangent, Recorder, StateTangent, StepDerivative, TapeOptions, adjoint,
    forward_sensitivities, record_trajectory,
};
use diffsoro::math::{SplitMix64, Vec3, relative_error};
use diffsoro::scene::{Scene, State};

const NAMES: [&str; 4] = [
    "young_modulus:finger",
    "young_modulus:finger_right",
    "actuator:servo",
    "actuator:servo_right",
];

fn gripper(overrides: &[&str]) -> Scene {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Scene::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/gripper.toml"),
        &overrides,
    )
    .unwrap()
}

/// The servos' targets within reach: −0.01 rad, at most 0.05 rad per step.
const WITHIN_REACH: [&str; 4] = [
    "soft_body.finger.servo.servo.angle=-0.01",
    "soft_body.finger.servo.servo.max_angle_step=0.05",
    "soft_body.finger_right.servo.servo_right.angle=-0.01",
    "soft_body.finger_right.servo.servo_right.max_angle_step=0.05",
];

/// Per servo of the scene: |target − θₙ| − max_angle_step at `state` (> 0: the limit is
/// active).
fn margins(scene: &Scene, state: &State) -> Vec<f64> {
    let mut out = Vec::new();
    for b in 0..scene.bodies.len() {
        for a in &scene.body_actuation(b).actuators {
            if let (ActuatorKind::Servo(s), Drive::Target(t)) = (&a.kind, a.drive) {
                let now = s.value(&state.bodies[b].positions);
                out.push((t - now).abs() - a.max_value_step);
            }
        }
    }
    out
}

#[test]
fn one_step_with_the_angle_limit_active() {
    let scene = gripper(&[]);
    let start = warm_state(&scene, 5);
    // Limit active with room for the perturbations (1e-3 rad on the target).
    assert!(margins(&scene, &start).iter().all(|m| *m > 0.1));
    check_jvp_against_fd_from(&scene, &NAMES, &start, 1, 1e-3);
}

#[test]
fn one_step_within_reach() {
    let scene = gripper(&WITHIN_REACH);
    let start = warm_state(&scene, 5);
    assert!(margins(&scene, &start).iter().all(|m| *m < -0.04));
    check_jvp_against_fd_from(&scene, &NAMES, &start, 1, 1e-3);
}

/// The consistent mass couples the horn nodes' velocities to the free rows (M_fp ≠ 0).
#[test]
fn one_step_with_the_consistent_mass() {
    let mut overrides = WITHIN_REACH.to_vec();
    overrides.extend(["soft_body.finger.mass=consistent"]);
    let scene = gripper(&overrides);
    let start = warm_state(&scene, 5);
    check_jvp_against_fd_from(&scene, &NAMES, &start, 1, 1e-3);
    let limited = gripper(&["soft_body.finger.mass=consistent"]);
    check_jvp_against_fd_from(&limited, &NAMES, &warm_state(&limited, 5), 1, 1e-3);
}

/// Fingers 100× softer than the 32 MPa of gripper.toml: implicit Euler damps the stiff
/// fingers' response to a perturbation of the start state to round-off (≈ 1e-20 of it)
/// within twenty steps, below what a finite difference resolves; the softer ones keep it.
const SOFT: [&str; 2] = [
    "soft_body.finger.young_modulus=3.2e5",
    "soft_body.finger_right.young_modulus=3.2e5",
];

#[test]
fn twenty_steps_with_the_angle_limit_active() {
    let scene = gripper(&SOFT);
    let start = warm_state(&scene, 2);
    assert!(margins(&scene, &start).iter().all(|m| *m > 0.1));
    check_jvp_against_fd_from(&scene, &NAMES, &start, 20, 1e-3);
}

#[test]
fn twenty_steps_within_reach() {
    let mut overrides = WITHIN_REACH.to_vec();
    overrides.extend(SOFT);
    let scene = gripper(&overrides);
    let start = warm_state(&scene, 2);
    check_jvp_against_fd_from(&scene, &NAMES, &start, 20, 1e-3);
}

#[test]
fn jvp_and_vjp_are_adjoint_through_pinned_servos() {
    for overrides in [&[][..], &WITHIN_REACH[..]] {
        let scene = gripper(overrides);
        let params = parameters(&scene, &NAMES);
        let mut state = warm_state(&scene, 4);
        let mut recorder = Recorder::new(&scene).unwrap();
        let (_, record) = recorder.step(&scene, &mut state).unwrap();
        check_adjointness(&scene, &record, &params, 5);
    }
    let scene = gripper(&["soft_body.finger.mass=consistent"]);
    let params = parameters(&scene, &NAMES);
    let mut state = warm_state(&scene, 4);
    let (_, record) = Recorder::new(&scene)
        .unwrap()
        .step(&scene, &mut state)
        .unwrap();
    check_adjointness(&scene, &record, &params, 6);
}

/// Over fifteen steps (the targets within reach for ten, then the limit active), the adjoint's
/// gradient of ⟨w, final state⟩ equals the forward sensitivities' and the JVP of the start
/// state.
#[test]
fn adjoint_equals_forward_mode_through_pinned_servos() {
    let scene = gripper(&[
        "soft_body.finger.servo.servo.angle=-0.03",
        "soft_body.finger.servo.servo.max_angle_step=0.003",
        "soft_body.finger_right.servo.servo_right.angle=-0.02",
        "soft_body.finger_right.servo.servo_right.max_angle_step=0.05",
    ]);
    let params = parameters(&scene, &NAMES);
    let start = warm_state(&scene, 1);
    let steps = 15;
    let mut rng = SplitMix64::new(11);
    let w = random_tangent(&scene, &mut rng, 1.0, 0.1);
    let u = random_tangent(&scene, &mut rng, 1e-4, 1e-3);
    let mut s = start.clone();
    let forward = forward_sensitivities(&scene, &mut s, steps, &params, &mut |_| {}).unwrap();
    let mut s = start.clone();
    let mut tape =
        record_trajectory(&scene, &mut s, steps, TapeOptions::default(), &mut |_| {}).unwrap();
    let result = adjoint(&scene, &mut tape, &params, &w).unwrap();
    let fwd: Vec<f64> = forward.iter().map(|t| w.dot(t)).collect();
    let err = relative_error(&result.parameters, &fwd, 0.0);
    assert!(
        err < 1e-9,
        "adjoint {:?} vs forward {fwd:?}",
        result.parameters
    );
    // The start state: ⟨adjoint, u⟩ = ⟨w, JVP u⟩.
    let mut recorder = Recorder::new(&scene).unwrap();
    let mut derivative = StepDerivative::new(&scene);
    let mut state = start.clone();
    let mut input = InputTangent {
        state: u.clone(),
        parameters: vec![0.0; params.len()],
    };
    for _ in 0..steps {
        let (_, record) = recorder.step(&scene, &mut state).unwrap();
        input.state = derivative
            .jvp(&scene, &record, &params, std::slice::from_ref(&input))
            .unwrap()
            .remove(0);
        recorder.recycle(record);
    }
    let (lhs, rhs) = (w.dot(&input.state), result.state.dot(&u));
    assert!(
        (lhs - rhs).abs() <= 1e-9 * lhs.abs().max(rhs.abs()),
        "⟨w, J u⟩ = {lhs:e}, ⟨adjoint, u⟩ = {rhs:e}"
    );
}

/// The free block of dv⁺/dx (the horn nodes are driven, not free) equals the JVP's velocity
/// tangent for a direction on the free nodes.
#[test]
fn position_jacobian_with_pinned_servos_agrees_with_the_jvp() {
    let scene = gripper(&[]);
    let params = parameters(&scene, &NAMES);
    let mut state = warm_state(&scene, 3);
    let mut recorder = Recorder::new(&scene).unwrap();
    let (_, record) = recorder.step(&scene, &mut state).unwrap();
    let mut derivative = StepDerivative::new(&scene);
    let jac = derivative.position_jacobian(&scene, &record, 0).unwrap();
    let body = &scene.bodies[0];
    let dofs = body.pattern().dofs();
    let mut rng = SplitMix64::new(3);
    let dx: Vec<f64> = (0..dofs.n_reduced()).map(|_| rng.uniform()).collect();
    let mut t = StateTangent::zeros(&scene);
    for (r, &full) in dx.iter().zip(dofs.free_dofs()) {
        t.bodies[0].positions[full / 3][full % 3] = *r;
    }
    let out = derivative
        .jvp(
            &scene,
            &record,
            &params,
            &[InputTangent {
                state: t,
                parameters: vec![0.0; params.len()],
            }],
        )
        .unwrap();
    let from_jac = &jac * diffsoro::math::DVec::from_vec(dx);
    let from_jvp: Vec<f64> = dofs
        .free_dofs()
        .iter()
        .map(|&f| out[0].bodies[0].velocities[f / 3][f % 3])
        .collect();
    let err = relative_error(from_jac.as_slice(), &from_jvp, 0.0);
    assert!(err < 1e-10, "position Jacobian vs JVP: {err:e}");
}

/// The fingers of scenes/gripper_grasp.toml pressing on the cylinder: after 40 steps of
/// closing at 0.005 rad per step (θ = −0.2 rad, contact from about step 32), one step's
/// derivatives (x, v, E, both angle targets) against finite differences, with the targets
/// 3 mrad ahead of the current angle (within reach) and at the scene's −0.35 rad (the limit
/// active), and JVP/VJP adjointness; the NCP solved to 1e-13.
///
/// A node that reached the cylinder lands exactly on it (its gap is 1e-12 m or less after the
/// step: the contact velocity closes the gap), on the penetration correction's kink at
/// Φ = 0, where finite differences see the average of two one-sided derivatives. So the test
/// steps with the cylinder's radius 0.1 mm larger, which sinks those nodes 0.1 mm into it
/// (as tests/diff_contact.rs sinks its blocks).
#[test]
fn fingers_pressing_the_object() {
    let load = |overrides: &[&str]| {
        let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
        let mut scene = Scene::load(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/gripper_grasp.toml"),
            &overrides,
        )
        .unwrap();
        scene.contact.settings.tolerance = 1e-13;
        scene.contact.settings.max_iterations = 100_000;
        scene
    };
    let start = warm_state(&load(&[]), 40);
    let sunk = |mut scene: Scene| {
        scene.contact.obstacles[0] = Obstacle::capsule(
            Vec3::new(0.05, 0.04, -0.02),
            Vec3::new(0.05, 0.04, 0.04),
            0.0081,
        )
        .unwrap();
        scene
    };
    let limited = sunk(load(&[]));
    let mut probe = start.clone();
    let report = diffsoro::scene::Stepper::new(&limited)
        .unwrap()
        .step(&limited, &mut probe)
        .unwrap();
    assert!(report.contact_converged);
    assert!(
        report.contact.iter().all(|c| c.active > 0),
        "{:?}",
        report.contact
    );
    let theta: Vec<f64> = margins(&limited, &start);
    assert!(theta.iter().all(|m| *m > 0.1), "{theta:?}");
    let within = sunk(load(&[
        "soft_body.finger.servo.servo.angle=-0.203",
        "soft_body.finger_right.servo.servo_right.angle=-0.203",
    ]));
    assert!(margins(&within, &start).iter().all(|m| *m < -0.001));
    for scene in [&limited, &within] {
        check_jvp_against_fd_from(scene, &NAMES, &start, 1, 1e-3);
        let mut state = start.clone();
        let (_, record) = Recorder::new(scene)
            .unwrap()
            .step(scene, &mut state)
            .unwrap();
        for b in 0..record.bodies.len() {
            let contact = record.contact(b).unwrap();
            // Every contact's gap is away from the kink by far more than the perturbations.
            assert!(contact.contacts().iter().all(|(_, c)| c.gap.abs() > 1e-5));
        }
        check_adjointness(scene, &record, &parameters(scene, &NAMES), 9);
    }
}

/// What the derivatives still do not cover is refused with an error naming it: a
/// displacement-driven cable (its λ is solved inside the step) and full Newton, also with
/// pinned servos.
#[test]
fn uncovered_drives_are_refused_by_name() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("scenes/finger_obstacle.toml"))
        .unwrap()
        .replace("force = 3.0", "displacement = 0.002");
    let file = diffsoro::scene::SceneFile::parse("finger.toml", &text, &[]).unwrap();
    let scene = Scene::build(&file, &root.join("scenes")).unwrap();
    let e = Recorder::new(&scene).err().unwrap().to_string();
    assert!(
        e.contains("soft_body.finger.cable") && e.contains("displacement/volume-driven"),
        "{e}"
    );
    let newton = gripper(&["simulation.newton_iterations=3"]);
    let e = Recorder::new(&newton).err().unwrap().to_string();
    assert!(e.contains("newton_iterations"), "{e}");
    // The pinned servos are covered, and their targets are parameters (rad).
    let scene = gripper(&[]);
    Recorder::new(&scene).unwrap();
    let p = diffsoro::diff::Parameter::parse(&scene, "actuator:servo").unwrap();
    assert_eq!(p.value(&scene), -0.2);
    assert!(diffsoro::diff::every_parameter(&scene).contains(&p));
}
