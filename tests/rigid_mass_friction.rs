//! Sensitivities of rigid runs with respect to a free body's mass (`mass:BODY`, its inertia
//! scaled with it) and an obstacle's friction coefficient (`friction:OBSTACLE`), carried by
//! the rigid step Jacobian's parameter columns (`diff::RigidSensitivityStepper`) and swept
//! back by the adjoint (`diff::RigidTape`), against answers derived without the program:
//!
//! - a body alone against fixed obstacles moves independently of its mass (M = m M̂ makes
//!   λ = m λ̂ and every velocity m-free): its mass sensitivity is zero, falling or landing;
//! - a box sliding down an incline accelerates at a = g (sin θ − μ cos θ), so after N steps of
//!   the semi-implicit scheme its displacement along the slope is h² a N(N+1)/2 and
//!   d(displacement)/dμ = −g cos θ h² N(N+1)/2 (→ −g cos θ t²/2);
//! - a box thrown onto a slab lying on a frictionless floor drags it until they move
//!   together at the velocity the horizontal momentum gives, v_f = m_t v₀ / (m_t + m_s):
//!   dv_f/dm_t = v₀ m_s / (m_t + m_s)², dv_f/dm_s = −m_t v₀ / (m_t + m_s)²;
//!
//! and central differences of the forward runs, with the parameter set in the scene
//! (`diff::Parameter::set`).

use crate::scene_support;

use diffsoro::contact::BoundaryGradient;
use diffsoro::diff::{
    Parameter, RigidSensitivity, RigidSensitivityStepper, record_rigid_trajectory,
};
use diffsoro::math::DMat;
use diffsoro::scene::{Scene, State};
use scene_support::{run_steps, scene};

/// The run's sensitivities with respect to `params` (one column each) after `steps` steps,
/// and the final state.
fn sensitivities(s: &Scene, params: &[Parameter], steps: usize) -> (RigidSensitivity, State) {
    let n: usize = s.rigid.systems.iter().map(|x| x.nv()).sum();
    let k = params.len();
    let zero = DMat::zeros(n, k);
    let mut stepper = RigidSensitivityStepper::with_parameters(
        s,
        [&zero, &zero, &zero],
        params,
        &DMat::identity(k, k),
    )
    .unwrap();
    let mut state = s.initial_state();
    for _ in 0..steps {
        let report = stepper.step(s, &mut state).unwrap();
        assert!(report.contact_converged, "{report:?}");
    }
    (stepper.sensitivity().clone(), state)
}

/// Central differences of the final stacked rigid state (q tangent at the base run's final
/// configuration, then v) along parameter `p`, relative step `rel`.
fn central(s: &Scene, p: Parameter, steps: usize, rel: f64) -> Vec<f64> {
    let mut base = s.initial_state();
    run_steps(s, &mut base, steps);
    let h = rel * p.value(s).abs().max(1e-3);
    let moved = |sign: f64| {
        let mut sc = s.clone();
        p.set(&mut sc, p.value(s) + sign * h).unwrap();
        let mut st = sc.initial_state();
        run_steps(&sc, &mut st, steps);
        let mut out = Vec::new();
        let mut v = Vec::new();
        for (t, sys) in s.rigid.systems.iter().enumerate() {
            let mut d = vec![0.0; sys.nv()];
            sys.difference(&base.rigid[t].q, &st.rigid[t].q, &mut d);
            out.extend(d);
            v.extend(st.rigid[t].v.iter().copied());
        }
        out.extend(v);
        out
    };
    let (plus, minus) = (moved(1.0), moved(-1.0));
    plus.iter()
        .zip(&minus)
        .map(|(a, b)| (a - b) / (2.0 * h))
        .collect()
}

/// Column `c` of the sensitivities, stacked (q then v).
fn column(t: &RigidSensitivity, c: usize) -> Vec<f64> {
    t.q.column(c)
        .iter()
        .chain(t.v.column(c).iter())
        .copied()
        .collect()
}

fn max_abs(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |m, a| m.max(a.abs()))
}

const FLOOR: &str = r#"
[simulation]
dt = 0.005
gravity = [0.0, 0.0, -9.81]

[contact]
tolerance = 1e-12
max_iterations = 100000
"#;

const CUBE: &str = r#"
[[rigid_body]]
name = "cube"
shape = "box"
half_extents = [0.05, 0.04, 0.03]
mass = 0.3
"#;

#[test]
fn a_falling_body_does_not_depend_on_its_mass() {
    let s = scene(&format!(
        "{FLOOR}{CUBE}position = [0.0, 0.0, 1.0]\nvelocity = [0.3, 0.0, 1.0]\nangular_velocity = [1.0, 2.0, 3.0]\n"
    ));
    let mass = Parameter::parse(&s, "mass:cube").unwrap();
    let (t, _) = sensitivities(&s, &[mass], 40);
    // No contact force: ∂v⁺/∂m = −h M⁻¹ Q / m = 0 exactly, and the gyroscopic term is
    // invariant under scaling the inertia.
    assert_eq!(max_abs(&column(&t, 0)), 0.0);
    let fd = central(&s, mass, 40, 1e-5);
    assert!(max_abs(&fd) < 1e-9, "{fd:?}");
}

#[test]
fn a_box_landing_and_sticking_on_a_plane_does_not_depend_on_its_mass() {
    let s = scene(&format!(
        r#"{FLOOR}friction = 0.8

[[obstacle]]
type = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
{CUBE}position = [0.0, 0.0, 0.0301]
rotation = [0.0, 0.0, 0.3]
velocity = [0.01, 0.0, -0.05]
"#
    ));
    let mass = Parameter::parse(&s, "mass:cube").unwrap();
    let steps = 30;
    let (t, end) = sensitivities(&s, &[mass], steps);
    // Landed and at rest: the run did go through contact.
    assert!(
        end.rigid[0].v.iter().all(|x| x.abs() < 1e-6),
        "{:?}",
        end.rigid[0].v
    );
    // Scale: a displacement of the 0.03 m order per 0.3 kg; the analytic answer is zero.
    let scale = 0.03 / 0.3;
    let analytic = column(&t, 0);
    assert!(max_abs(&analytic) < 1e-6 * scale, "{analytic:?}");
    let fd = central(&s, mass, steps, 1e-5);
    assert!(max_abs(&fd) < 1e-6 * scale, "{fd:?}");
}

/// The box of `tests/rigid_scenes.rs` on a 20° incline (normal tilted about x), at rest on
/// it, obstacle friction `mu`.
fn incline(mu: f64) -> Scene {
    let theta = 20f64.to_radians();
    let n = [0.0, -theta.sin(), theta.cos()];
    scene(&format!(
        r#"{FLOOR}
[[obstacle]]
name = "slope"
type = "plane"
point = [0.0, 0.0, 0.0]
normal = [{}, {}, {}]
friction = {mu}

[[rigid_body]]
name = "cube"
shape = "box"
half_extents = [0.05, 0.05, 0.05]
density = 500.0
position = [{}, {}, {}]
rotation = [{theta}, 0.0, 0.0]
"#,
        n[0],
        n[1],
        n[2],
        0.05 * n[0],
        0.05 * n[1],
        0.05 * n[2]
    ))
}

#[test]
fn a_box_sliding_down_an_incline_has_coulombs_friction_derivative() {
    let theta = 20f64.to_radians();
    let down = [0.0, -theta.cos(), -theta.sin()];
    let (h, g, steps) = (0.005, 9.81, 40);
    let s = incline(0.2);
    let params = [
        Parameter::parse(&s, "friction:slope").unwrap(),
        Parameter::parse(&s, "mass:cube").unwrap(),
    ];
    let (t, _) = sensitivities(&s, &params, steps);
    let along = |x: &[f64]| (0..3).map(|k| x[k] * down[k]).sum::<f64>();
    let nf = steps as f64;
    // Discrete: x_N = h² a N(N+1)/2, a = g (sin θ − μ cos θ).
    let want_q = -g * theta.cos() * h * h * nf * (nf + 1.0) / 2.0;
    let want_v = -g * theta.cos() * h * nf;
    let dq = along(&column(&t, 0)[0..3]);
    let dv = along(&column(&t, 0)[6..9]);
    assert!(
        (dq - want_q).abs() <= 1e-6 * want_q.abs(),
        "{dq} vs {want_q}"
    );
    assert!(
        (dv - want_v).abs() <= 1e-6 * want_v.abs(),
        "{dv} vs {want_v}"
    );
    // The continuous −g cos θ t²/2, to O(h/t).
    let time = nf * h;
    let continuous = -g * theta.cos() * time * time / 2.0;
    assert!((dq - continuous).abs() <= 1.5 / nf * continuous.abs());
    // Against central differences of the runs, every component.
    let analytic = column(&t, 0);
    let fd = central(&s, params[0], steps, 1e-5);
    let scale = max_abs(&fd);
    for (r, (a, f)) in analytic.iter().zip(&fd).enumerate() {
        assert!((a - f).abs() <= 1e-6 * scale, "[{r}] {a} vs {f}");
    }
    // The mass does not move a lone body: zero, and so are the differences.
    let mass = column(&t, 1);
    let fd = central(&s, params[1], steps, 1e-5);
    assert!(
        max_abs(&mass) <= 1e-9 && max_abs(&fd) <= 1e-7,
        "{mass:?} {fd:?}"
    );
}

/// A 0.5 kg box thrown at `V0` along x onto a 2 kg slab that lies on a frictionless floor;
/// the box has its own friction 0.8 against the slab.
const V0: f64 = 0.5;

fn box_on_slab() -> Scene {
    scene(&format!(
        r#"{FLOOR}
[[obstacle]]
name = "floor"
type = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
friction = 0.0

[[rigid_body]]
name = "slab"
shape = "box"
half_extents = [0.3, 0.2, 0.02]
mass = 2.0
position = [0.0, 0.0, 0.02]

[[rigid_body]]
name = "top"
shape = "box"
half_extents = [0.05, 0.05, 0.05]
mass = 0.5
friction = 0.8
position = [-0.1, 0.0, 0.09]
velocity = [{V0}, 0.0, 0.0]
"#
    ))
}

#[test]
fn a_box_dragging_a_free_slab_has_the_momentum_mass_derivatives() {
    let s = box_on_slab();
    let params = [
        Parameter::parse(&s, "mass:top").unwrap(),
        Parameter::parse(&s, "mass:slab").unwrap(),
    ];
    let steps = 30;
    let (t, end) = sensitivities(&s, &params, steps);
    let (mt, ms) = (0.5, 2.0);
    let total = mt + ms;
    let vf = mt * V0 / total;
    // They move together at the momentum's velocity (the run did stick).
    for b in 0..2 {
        let v = end.rigid[b].v[0];
        assert!((v - vf).abs() < 1e-9 * vf, "body {b}: {v} vs {vf}");
    }
    // Velocity x of both bodies: rows 6 + 0 (slab), 12 + 6 (top).
    let n = 12;
    let want = [V0 * ms / (total * total), -mt * V0 / (total * total)];
    for (c, w) in want.iter().enumerate() {
        let col = column(&t, c);
        for row in [n, n + 6] {
            assert!(
                (col[row] - w).abs() <= 1e-6 * w.abs(),
                "{c}, {row}: {} vs {w}",
                col[row]
            );
        }
        // A relative step of 1e-4: the NCP's 1e-12 m/s tolerance is then 5e-9 of noise in
        // the quotients (the box's roll, zero by symmetry, shows it).
        let fd = central(&s, params[c], steps, 1e-4);
        let scale = max_abs(&fd);
        for (r, (a, f)) in col.iter().zip(&fd).enumerate() {
            assert!((a - f).abs() <= 1e-6 * scale, "{c} [{r}] {a} vs {f}");
        }
    }
    // Reverse mode: the adjoint of the slab's final x velocity gives the same two numbers.
    let mut state = s.initial_state();
    let tape = record_rigid_trajectory(&s, &mut state, steps, &params, BoundaryGradient::OneSided)
        .unwrap();
    let mut v_bar = vec![0.0; n];
    v_bar[0] = 1.0;
    let grad = tape.adjoint(&vec![0.0; n], &v_bar);
    for (c, w) in want.iter().enumerate() {
        assert!(
            (grad.parameters[c] - w).abs() <= 1e-6 * w.abs(),
            "adjoint {c}: {} vs {w}",
            grad.parameters[c]
        );
    }
}
