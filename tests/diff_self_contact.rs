//! Derivatives of steps with self-contact (`[contact] self_contact = true`) against central
//! finite differences of the forward simulator (1e-6 relative, norm-wise, docs/derivatives.md).
//!
//! The body is ONE mesh of two cubes: a 30 mm cube (3³ cells) on the floor and a 20 mm cube
//! (2³ cells) resting on it, offset by (5.3, 4.1) mm so that the 9 bottom nodes of the upper
//! cube project inside the lower cube's top triangles and the 4 inner top nodes of the lower
//! cube inside the upper cube's bottom triangles, away from every edge and diagonal (as in
//! tests/body_contact.rs): 16 floor contacts and 13 self-contacts, whose rows of H_c span a
//! node and a triangle of the same body and move with the four points (frame, weights, gap).
//! The upper cube starts 0.1 mm into the lower one and the lower cube 0.1 mm into the floor,
//! so every gap stays negative through the finite-difference perturbations (≤ 1e-6 m): the
//! penetration correction's kink at Φ = 0 is not crossed, and no contact appears or vanishes.
//!
//! Sticking (μ = 0.9) and sliding (the upper cube moving along +x at 0.1 m/s on μ = 0.2),
//! over one and several steps, with respect to x, v, E and ν; JVP/VJP adjointness; the
//! adjoint gradient over several steps against forward mode; the contact-force tangents
//! dλ/dE against finite differences of λ.

use crate::diff_support;

use diff_support::{
    check_adjoint_against_forward, check_adjointness, check_jvp_against_fd_from, parameters,
    stacked_cubes::{UPPER_NODES, one_body, start},
};
use diffsoro::diff::{InputTangent, Recorder, StateTangent, StepDerivative};
use diffsoro::material::Law;
use diffsoro::math::{Vec3, relative_error};
use diffsoro::scene::{Scene, State, Stepper};

const PARAMS: [&str; 2] = ["young_modulus:stack", "poisson_ratio:stack"];

/// (obstacle contacts, self-contacts, active contacts) of one step from `state`.
fn contact_counts(scene: &Scene, state: &State) -> (usize, usize, usize) {
    let mut s = state.clone();
    let mut recorder = Recorder::new(scene).unwrap();
    let (report, record) = recorder.step(scene, &mut s).unwrap();
    assert!(report.contact_converged, "NCP did not converge");
    let c = record.contact(0).unwrap();
    (
        c.contacts().len(),
        c.self_contacts().len(),
        report.contact[0].active,
    )
}

#[test]
fn sticking_stack() {
    for law in [Law::Corotational, Law::NeoHookean] {
        let scene = one_body(law, 0.9, 0.9);
        let state = start(&scene, UPPER_NODES, Vec3::zeros());
        // 4 × 4 bottom nodes on the floor; 9 + 4 node-triangle pairs between the cubes.
        let (floor, own, active) = contact_counts(&scene, &state);
        assert_eq!((floor, own), (16, 13));
        assert!(
            active > 16,
            "{active} active: the self-contacts carry force"
        );
        check_jvp_against_fd_from(&scene, &PARAMS, &state, 1, 1e-3);
        check_jvp_against_fd_from(&scene, &PARAMS, &state, 4, 1e-3);
    }
}

#[test]
fn sliding_stack() {
    let scene = one_body(Law::StVK, 0.9, 0.2);
    let state = start(&scene, UPPER_NODES, Vec3::new(0.1, 0.0, 0.0));
    let (floor, own, active) = contact_counts(&scene, &state);
    assert_eq!((floor, own), (16, 13));
    assert!(
        active > 16,
        "{active} active: the self-contacts carry force"
    );
    // The loaded self-contacts slide: on the boundary of the Coulomb cone, |λ_T| = μ λ_N.
    let mut s = state.clone();
    let (_, record) = Recorder::new(&scene).unwrap().step(&scene, &mut s).unwrap();
    let c = record.contact(0).unwrap();
    let lambda = &c.lambda()[3 * c.contacts().len()..];
    let mut sliding = 0;
    for l in lambda.chunks(3).filter(|l| l[2] > 1e-6) {
        let t = l[0].hypot(l[1]);
        assert!((t - 0.2 * l[2]).abs() < 1e-6 * l[2], "{l:?}");
        sliding += 1;
    }
    assert!(sliding > 0);
    check_jvp_against_fd_from(&scene, &PARAMS, &state, 1, 1e-3);
    check_jvp_against_fd_from(&scene, &PARAMS, &state, 3, 1e-3);
}

/// ⟨w, J u⟩ = ⟨Jᵀ w, u⟩ with sticking floor contacts and sliding self-contacts.
#[test]
fn jvp_and_vjp_are_adjoint_with_self_contact() {
    let scene = one_body(Law::NeoHookean, 0.9, 0.2);
    let params = parameters(&scene, &PARAMS);
    let mut state = start(&scene, UPPER_NODES, Vec3::new(0.1, 0.0, 0.0));
    let mut recorder = Recorder::new(&scene).unwrap();
    let (_, record) = recorder.step(&scene, &mut state).unwrap();
    assert_eq!(record.bodies[0].contacts(), 29);
    check_adjointness(&scene, &record, &params, 7);
}

/// The adjoint gradient of a scalar loss after 6 sliding steps equals the forward-mode one.
#[test]
fn adjoint_equals_forward_mode_with_self_contact() {
    let scene = one_body(Law::Corotational, 0.9, 0.2);
    let params = parameters(&scene, &PARAMS);
    let start = start(&scene, UPPER_NODES, Vec3::new(0.1, 0.0, 0.0));
    check_adjoint_against_forward(&scene, &start, 6, &params, 31);
}

/// dλ_c/dE of one sticking step (`StepDerivative::contact_force_tangents`, floor and
/// self-contacts) against central differences of the forward step's λ (a change of E moves
/// no contact frame).
#[test]
fn contact_force_tangents_with_self_contact() {
    let scene = one_body(Law::NeoHookean, 0.9, 0.9);
    let params = parameters(&scene, &PARAMS[..1]);
    let state = start(&scene, UPPER_NODES, Vec3::zeros());
    let mut recorder = Recorder::new(&scene).unwrap();
    let mut s = state.clone();
    let (_, record) = recorder.step(&scene, &mut s).unwrap();
    let mut derivative = StepDerivative::new(&scene);
    let e = params[0].value(&scene);
    derivative
        .jvp(
            &scene,
            &record,
            &params,
            &[InputTangent {
                state: StateTangent::zeros(&scene),
                parameters: vec![e],
            }],
        )
        .unwrap();
    let tangent: Vec<f64> = derivative
        .contact_force_tangents(0)
        .column(0)
        .iter()
        .copied()
        .collect();
    let lambda = |scale: f64| {
        let mut sc = scene.clone();
        params[0].set(&mut sc, e * (1.0 + scale)).unwrap();
        let mut st = state.clone();
        let mut stepper = Stepper::new(&sc).unwrap();
        stepper.step(&sc, &mut st).unwrap();
        stepper.body(0).contact().lambda().to_vec()
    };
    let eps = 1e-3;
    let (p1, m1, p2, m2) = (
        lambda(eps),
        lambda(-eps),
        lambda(eps / 2.0),
        lambda(-eps / 2.0),
    );
    let fd: Vec<f64> = (0..p1.len())
        .map(|i| (4.0 * (p2[i] - m2[i]) / eps - (p1[i] - m1[i]) / (2.0 * eps)) / 3.0)
        .collect();
    assert_eq!(tangent.len(), 3 * 29);
    let err = relative_error(&tangent, &fd, 0.0);
    assert!(err < 1e-6, "dλ/dE vs FD: {err:e}");
}
