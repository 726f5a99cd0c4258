//! Derivatives of steps with contact between two soft bodies (`[contact] between_bodies =
//! true`) against central finite differences of the forward simulator (1e-6 relative,
//! norm-wise, docs/derivatives.md), and against a second method.
//!
//! A 30 mm cube (3³ cells) on the floor and a 20 mm cube (2³ cells) resting on it, offset by
//! (5.3, 4.1) mm so that nodes of each project inside the other's facing triangles away from
//! every edge and diagonal (as in tests/body_contact.rs): 16 floor contacts and 4 + 9 contacts
//! between the bodies, all in one NCP whose rows span both bodies' Jacobians. The upper cube
//! starts 0.1 mm into the lower one and the lower cube 0.1 mm into the floor, so every gap
//! stays negative through the finite-difference perturbations: no contact mode switches.
//!
//! Sticking and sliding (the upper cube moving along +x at 0.1 m/s on μ = 0.2) over one and
//! several steps with respect to x, v, E and ν of both bodies; JVP/VJP adjointness; the
//! adjoint over several steps against forward mode; and the second method: the same two cubes
//! as ONE body with self-contact (one mesh, one factorisation) give the same derivatives (the
//! derivative with respect to the one body's E is the sum of those with respect to both
//! bodies' E).

use crate::diff_support;

use diff_support::{
    check_adjoint_against_forward, check_adjointness, check_jvp_against_fd_from, parameters,
    random_tangent,
    stacked_cubes::{UPPER_NODES, one_body, start, two_bodies},
};
use diffsoro::diff::{InputTangent, Recorder, StateTangent, StepDerivative};
use diffsoro::material::Law;
use diffsoro::math::{SplitMix64, Vec3, relative_error};
use diffsoro::scene::{Scene, State};

const PARAMS: [&str; 4] = [
    "young_modulus:lower",
    "young_modulus:upper",
    "poisson_ratio:lower",
    "poisson_ratio:upper",
];

/// (floor contacts, contacts between the bodies, active contacts) of one step from `state`.
fn contact_counts(scene: &Scene, state: &State) -> (usize, usize, usize) {
    let mut s = state.clone();
    let mut recorder = Recorder::new(scene).unwrap();
    let (report, record) = recorder.step(scene, &mut s).unwrap();
    assert!(report.contact_converged, "NCP did not converge");
    assert_eq!(record.contacts.len(), 1, "one NCP for both bodies");
    let c = &record.contacts[0];
    let active = report.contact[0].active + report.contact[1].active - c.body_contacts().len();
    (c.contacts().len(), c.body_contacts().len(), active)
}

#[test]
fn sticking_bodies() {
    for law in [Law::Corotational, Law::NeoHookean] {
        let scene = two_bodies(law, 0.9, 0.9);
        let state = start(&scene, UPPER_NODES, Vec3::zeros());
        let (floor, between, active) = contact_counts(&scene, &state);
        assert_eq!((floor, between), (16, 13));
        assert!(
            active > 16,
            "{active} active: the contacts between bodies carry force"
        );
        check_jvp_against_fd_from(&scene, &PARAMS, &state, 1, 1e-3);
        check_jvp_against_fd_from(&scene, &PARAMS, &state, 4, 1e-3);
    }
}

#[test]
fn sliding_bodies() {
    let scene = two_bodies(Law::StVK, 0.9, 0.2);
    let state = start(&scene, UPPER_NODES, Vec3::new(0.1, 0.0, 0.0));
    let (floor, between, active) = contact_counts(&scene, &state);
    assert_eq!((floor, between), (16, 13));
    assert!(active > 16, "{active} active");
    // The loaded contacts between the bodies slide: |λ_T| = μ λ_N.
    let mut s = state.clone();
    let (_, record) = Recorder::new(&scene).unwrap().step(&scene, &mut s).unwrap();
    let c = &record.contacts[0];
    let mut sliding = 0;
    for l in c.lambda()[3 * c.contacts().len()..]
        .chunks(3)
        .filter(|l| l[2] > 1e-6)
    {
        assert!((l[0].hypot(l[1]) - 0.2 * l[2]).abs() < 1e-6 * l[2], "{l:?}");
        sliding += 1;
    }
    assert!(sliding > 0);
    check_jvp_against_fd_from(&scene, &PARAMS, &state, 1, 1e-3);
    check_jvp_against_fd_from(&scene, &PARAMS, &state, 3, 1e-3);
}

/// ⟨w, J u⟩ = ⟨Jᵀ w, u⟩ over both bodies with sliding contacts between them.
#[test]
fn jvp_and_vjp_are_adjoint_with_contact_between_bodies() {
    let scene = two_bodies(Law::NeoHookean, 0.9, 0.2);
    let params = parameters(&scene, &PARAMS);
    let mut state = start(&scene, UPPER_NODES, Vec3::new(0.1, 0.0, 0.0));
    let mut recorder = Recorder::new(&scene).unwrap();
    let (_, record) = recorder.step(&scene, &mut state).unwrap();
    assert_eq!(record.bodies[0].contacts(), 16 + 13);
    assert_eq!(record.bodies[1].contacts(), 13);
    check_adjointness(&scene, &record, &params, 11);
}

/// The adjoint gradient of a scalar loss after 6 sliding steps equals the forward-mode one.
#[test]
fn adjoint_equals_forward_mode_with_contact_between_bodies() {
    let scene = two_bodies(Law::Corotational, 0.9, 0.2);
    let params = parameters(&scene, &PARAMS);
    let start = start(&scene, UPPER_NODES, Vec3::new(0.1, 0.0, 0.0));
    check_adjoint_against_forward(&scene, &start, 6, &params, 37);
}

/// Second method: the JVP of 3 sliding steps of the two-body scene equals that of the same
/// cubes as one body with self-contact, in random state directions (the one body's tangent
/// is the two bodies' concatenated) and along E (one body's E = both bodies' E together).
#[test]
fn two_bodies_differentiate_as_one_body_with_self_contact() {
    let two = two_bodies(Law::NeoHookean, 0.9, 0.2);
    let one = one_body(Law::NeoHookean, 0.9, 0.2);
    let v = Vec3::new(0.1, 0.0, 0.0);
    let (start_two, start_one) = (start(&two, UPPER_NODES, v), start(&one, UPPER_NODES, v));
    let params_two = parameters(&two, &["young_modulus:lower", "young_modulus:upper"]);
    let params_one = parameters(&one, &["young_modulus:stack"]);
    let mut rng = SplitMix64::new(41);
    let mut dirs_two = Vec::new();
    let mut dirs_one = Vec::new();
    for d in 0..3 {
        let state = if d < 2 {
            random_tangent(&two, &mut rng, 1e-4, 1e-1)
        } else {
            StateTangent::zeros(&two)
        };
        let joined = |f: &dyn Fn(&diffsoro::diff::BodyTangent) -> &Vec<Vec3>| -> Vec<Vec3> {
            f(&state.bodies[0])
                .iter()
                .chain(f(&state.bodies[1]))
                .copied()
                .collect()
        };
        let mut state_one = StateTangent::zeros(&one);
        state_one.bodies[0].positions = joined(&|b| &b.positions);
        state_one.bodies[0].velocities = joined(&|b| &b.velocities);
        let de = if d == 2 { 1e5 } else { 0.0 };
        dirs_two.push(InputTangent {
            state,
            parameters: vec![de, de],
        });
        dirs_one.push(InputTangent {
            state: state_one,
            parameters: vec![de],
        });
    }
    let run = |scene: &Scene, start: &State, params, dirs: Vec<InputTangent>| {
        let mut recorder = Recorder::new(scene).unwrap();
        let mut derivative = StepDerivative::new(scene);
        let mut state = start.clone();
        let mut dirs = dirs;
        for _ in 0..3 {
            let (_, record) = recorder.step(scene, &mut state).unwrap();
            let out = derivative.jvp(scene, &record, params, &dirs).unwrap();
            for (d, o) in dirs.iter_mut().zip(out) {
                d.state = o;
            }
            recorder.recycle(record);
        }
        dirs.into_iter()
            .map(|d| d.state.to_vec())
            .collect::<Vec<_>>()
    };
    let a = run(&two, &start_two, &params_two, dirs_two);
    let b = run(&one, &start_one, &params_one, dirs_one);
    for (d, (a, b)) in a.iter().zip(&b).enumerate() {
        // Per body positions then velocities: reorder the two-body vector as one body's.
        let n0 = 3 * two.bodies[0].node_count();
        let n1 = 3 * two.bodies[1].node_count();
        let (p0, v0) = (&a[..n0], &a[n0..2 * n0]);
        let (p1, v1) = (&a[2 * n0..2 * n0 + n1], &a[2 * n0 + n1..]);
        let joined: Vec<f64> = p0.iter().chain(p1).chain(v0).chain(v1).copied().collect();
        let err = relative_error(&joined, b, 0.0);
        assert!(err < 1e-8, "direction {d}: two bodies vs one body {err:e}");
    }
}
