//! The rigid step's Jacobian against central finite differences of the forward
//! step, in sticking and sliding configurations: a box on a plane, a box on a box, a ball and a
//! capsule on a triangle mesh, a quadruped's feet on the floor, a pendulum held at its joint
//! limit; the columns of each free body's mass and each obstacle's friction coefficient with
//! them. Each finite difference restarts the step from the same state with a fresh stepper
//! and an NCP solved to 1e-12 m/s, so it differentiates the step itself.

use crate::scene_support;

use diffsoro::contact::{BoundaryGradient, ContactMode, ModeTolerance, classify};
use diffsoro::diff::{Parameter, RigidStepJacobian, rigid_step_jacobian};
use diffsoro::math::DMat;
use diffsoro::scene::{RigidInput, RigidKind, Scene, State, Stepper};
use scene_support::{root, run_steps, scene};

/// The state after `steps` steps.
fn settle(scene: &Scene, steps: usize) -> State {
    let mut state = scene.initial_state();
    run_steps(scene, &mut state, steps);
    state
}

/// One step from `state` with a fresh stepper; the rigid state after it, stacked as
/// (q of each system, v stacked).
fn step_from(scene: &Scene, state: &State) -> State {
    let mut s = state.clone();
    let mut stepper = Stepper::new(scene).unwrap();
    let report = stepper.step(scene, &mut s).unwrap();
    // A rank-deficient sticking NCP (four corners, six degrees of freedom) stalls near
    // 1e-12 m/s (up to 1e-9 with eight corners); 1e-9 m/s perturbs a difference quotient by
    // 1e-9 / 2ε.
    assert!(report.rigid.residual <= 1e-9, "{report:?}");
    s
}

/// `(q⁺ ⊖ base, v⁺ − base)` stacked over the systems.
fn tangent(scene: &Scene, base: &State, other: &State) -> Vec<f64> {
    let mut dq = Vec::new();
    let mut dv = Vec::new();
    for (s, sys) in scene.rigid.systems.iter().enumerate() {
        let mut d = vec![0.0; sys.nv()];
        sys.difference(&base.rigid[s].q, &other.rigid[s].q, &mut d);
        dq.extend(d);
        dv.extend(
            other.rigid[s]
                .v
                .iter()
                .zip(&base.rigid[s].v)
                .map(|(a, b)| a - b),
        );
    }
    dq.extend(dv);
    dq
}

/// Checks every column of the Jacobian at `state` against central differences (step `eps`)
/// along q (tangent), v and, for systems with a constant torque input, τ. Returns the
/// Jacobian and the modes of the step's contacts (and limits) for the caller's own checks.
fn check(
    scene: &Scene,
    state: &State,
    eps: f64,
    what: &str,
) -> (RigidStepJacobian, Vec<ContactMode>) {
    let mut s = state.clone();
    let mut stepper = Stepper::new(scene).unwrap();
    let parameters = step_parameters(scene);
    let (report, jac) = rigid_step_jacobian(
        scene,
        &mut stepper,
        &mut s,
        BoundaryGradient::OneSided,
        &parameters,
    )
    .unwrap();
    assert!(report.contact_converged, "{what}: {report:?}");
    let modes = stepper
        .contact()
        .groups()
        .iter()
        .find(|g| g.members().is_empty())
        .map(|g| {
            let tol = ModeTolerance {
                force: 1e-9,
                velocity: 1e-9,
            };
            classify(g.lambda(), g.sigma(), tol)
        })
        .unwrap_or_default();
    let contacts = modes.len();
    let base = s;
    let n = *jac.offsets.last().unwrap();
    let stacked = |a: &DMat, b: &DMat, c: usize| -> Vec<f64> {
        (0..n)
            .map(|r| a[(r, c)])
            .chain((0..n).map(|r| b[(r, c)]))
            .collect()
    };
    let scale = [&jac.dq_dq, &jac.dq_dv, &jac.dv_dq, &jac.dv_dv]
        .iter()
        .map(|m| m.amax())
        .fold(0.0, f64::max);
    let mut worst: f64 = 0.0;
    let mut failures = Vec::new();
    for (t, sys) in scene.rigid.systems.iter().enumerate() {
        let o = jac.offsets[t];
        for k in 0..sys.nv() {
            for (kind, analytic) in [
                ("q", stacked(&jac.dq_dq, &jac.dv_dq, o + k)),
                ("v", stacked(&jac.dq_dv, &jac.dv_dv, o + k)),
                ("tau", stacked(&jac.dq_dtau, &jac.dv_dtau, o + k)),
            ] {
                let moved = |sign: f64| {
                    let mut sc = scene.clone();
                    let mut st = state.clone();
                    match kind {
                        "q" => {
                            let mut e = vec![0.0; sys.nv()];
                            e[k] = sign * eps;
                            let q0 = st.rigid[t].q.clone();
                            sys.displace(&q0, &e, &mut st.rigid[t].q);
                        }
                        "v" => st.rigid[t].v[k] += sign * eps,
                        _ => {
                            let RigidInput::Torque(tau) = &mut sc.rigid.systems[t].input else {
                                return None;
                            };
                            tau[k] += sign * eps;
                        }
                    }
                    Some(tangent(scene, &base, &step_from(&sc, &st)))
                };
                let (Some(plus), Some(minus)) = (moved(1.0), moved(-1.0)) else {
                    continue;
                };
                for r in 0..2 * n {
                    let fd = (plus[r] - minus[r]) / (2.0 * eps);
                    let err = (fd - analytic[r]).abs();
                    worst = worst.max(err / scale);
                    if !(err <= 1e-6 * scale) {
                        failures.push(format!(
                            "d{}[{}]/d{kind}[{}] = {} analytic, {fd} by differences",
                            if r < n { "q⁺" } else { "v⁺" },
                            r % n,
                            o + k,
                            analytic[r]
                        ));
                    }
                }
            }
        }
    }
    // The parameter columns: each free body's mass (its inertia scaled with it, moved by a
    // relative ε) and each obstacle's friction coefficient.
    for (j, p) in parameters.iter().enumerate() {
        let analytic = stacked(&jac.dq_dp, &jac.dv_dp, j);
        let step = eps * p.value(scene).max(1.0);
        let moved = |sign: f64| {
            let mut sc = scene.clone();
            p.set(&mut sc, p.value(scene) + sign * step).unwrap();
            tangent(scene, &base, &step_from(&sc, state))
        };
        let (plus, minus) = (moved(1.0), moved(-1.0));
        let mut col_scale: f64 = 0.0;
        for r in 0..2 * n {
            let fd = (plus[r] - minus[r]) / (2.0 * step);
            col_scale = col_scale.max(fd.abs());
            let err = (fd - analytic[r]).abs();
            worst = worst.max(err / scale);
            if !(err <= 1e-6 * scale) {
                failures.push(format!(
                    "d{}[{}]/d{} = {} analytic, {fd} by differences",
                    if r < n { "q⁺" } else { "v⁺" },
                    r % n,
                    p.name(scene),
                    analytic[r]
                ));
            }
        }
        eprintln!("{what}: d/d{} up to {col_scale:.2e}", p.name(scene));
    }
    assert!(
        failures.is_empty(),
        "{what} (scale {scale:.3e}), {} entries off:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{what}: {contacts} contacts, worst relative error {worst:.1e}");
    (jac, modes)
}

/// Every free body's `mass:` and every obstacle's `friction:` parameter of `scene`.
fn step_parameters(scene: &Scene) -> Vec<Parameter> {
    let masses = scene
        .rigid
        .systems
        .iter()
        .enumerate()
        .filter(|(_, s)| s.kind() == RigidKind::FreeBody)
        .map(|(system, _)| Parameter::RigidMass { system });
    let frictions =
        (0..scene.contact.obstacles.len()).map(|obstacle| Parameter::Friction { obstacle });
    masses.chain(frictions).collect()
}

const PLANE: &str = r#"
[simulation]
dt = 0.005
gravity = [0.0, 0.0, -9.81]

[contact]
tolerance = 1e-12
max_iterations = 100000

[[obstacle]]
type = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
"#;

#[test]
fn a_box_resting_on_a_plane_sticking() {
    let s = scene(&format!(
        r#"{PLANE}friction = 0.8

[[rigid_body]]
name = "cube"
shape = "box"
half_extents = [0.05, 0.04, 0.03]
density = 500.0
position = [0.0, 0.0, 0.0301]
rotation = [0.0, 0.0, 0.3]
velocity = [0.01, 0.0, -0.05]
"#
    ));
    // 0.1 mm above the plane and falling onto it: four corners land in this step (their
    // gaps stay away from zero, where the penetration correction's slope switches).
    let state = s.initial_state();
    let (_, modes) = check(&s, &state, 1e-5, "box sticking");
    assert_eq!(modes, vec![ContactMode::Sticking; 4]);
}

#[test]
fn a_box_sliding_on_a_plane() {
    let s = scene(&format!(
        r#"{PLANE}friction = 0.2

[[rigid_body]]
name = "cube"
shape = "box"
half_extents = [0.05, 0.04, 0.03]
density = 500.0
position = [0.0, 0.0, 0.0374488]
rotation = [0.2, 0.0, 0.3]
velocity = [1.0, 0.3, -0.05]
angular_velocity = [0.0, 0.0, 2.0]
"#
    ));
    // Tilted 0.2 rad about x, its lowest edge 0.1 mm above the plane (0.04 sin 0.2 +
    // 0.03 cos 0.2 = 0.0373488 m below the centre): two corners land sliding. (Flat on four
    // sliding corners the normal forces are not unique — a table on four legs — and the
    // friction torque with them, so the step has no derivative to check.)
    let state = s.initial_state();
    let (_, modes) = check(&s, &state, 1e-5, "box sliding");
    assert!(
        modes.contains(&ContactMode::Sliding) && !modes.contains(&ContactMode::Sticking),
        "{modes:?}"
    );
}

#[test]
fn a_box_on_a_box_both_free() {
    // A 0.1 × 0.08 × 0.06 m box on a 0.3 × 0.3 × 0.1 m slab on the floor; the top box lands
    // sticking on the slab, the slab on the floor (4 + 4 corners).
    let s = scene(&format!(
        r#"{PLANE}friction = 0.8

[[rigid_body]]
name = "slab"
shape = "box"
half_extents = [0.15, 0.15, 0.05]
density = 500.0
position = [0.0, 0.0, 0.0501]
velocity = [0.0, 0.0, -0.02]

[[rigid_body]]
name = "top"
shape = "box"
half_extents = [0.05, 0.04, 0.03]
density = 800.0
position = [0.02, 0.01, 0.1303]
rotation = [0.0, 0.0, 0.4]
velocity = [0.01, 0.0, -0.06]
"#
    ));
    let state = s.initial_state();
    let (_, modes) = check(&s, &state, 1e-5, "box on box");
    assert_eq!(modes, vec![ContactMode::Sticking; 8]);
}

#[test]
fn a_ball_and_a_capsule_on_a_triangle_mesh() {
    // meshes/finger_obstacle.stl: a closed block whose top face is z = 0.035 m; a ball rolling
    // and sliding on it, a capsule tilted 1.2 rad landing on its lower end, sliding.
    let s = scene(
        r#"
[simulation]
dt = 0.002
gravity = [0.0, 0.0, -9.81]

[contact]
tolerance = 1e-12
max_iterations = 100000
friction = 0.3

[[obstacle]]
type = "mesh"
path = "../meshes/finger_obstacle.stl"

[[rigid_body]]
name = "ball"
shape = "sphere"
radius = 0.005
density = 1000.0
position = [-0.1, 0.029, 0.04005]
velocity = [0.2, 0.0, -0.05]
angular_velocity = [0.0, 5.0, 1.0]

[[rigid_body]]
name = "pill"
shape = "capsule"
radius = 0.004
half_length = 0.005
density = 1000.0
position = [-0.06, 0.029, 0.040912]
rotation = [1.2, 0.0, 0.2]
velocity = [0.3, 0.0, -0.05]
"#,
    );
    let state = s.initial_state();
    let (_, modes) = check(&s, &state, 1e-6, "ball and capsule on a mesh");
    // parry reports one contact per triangle of the face a shape is near (here four).
    let sliding = modes.iter().filter(|m| **m == ContactMode::Sliding).count();
    assert!(
        sliding >= 2 && !modes.contains(&ContactMode::Sticking),
        "{modes:?}"
    );
}

#[test]
fn a_quadruped_standing_on_its_feet() {
    let s = Scene::load(
        &root().join("scenes/quadruped_standing.toml"),
        &[
            "contact.tolerance=1e-12".into(),
            "contact.max_iterations=100000".into(),
        ],
    )
    .unwrap();
    // Settled, then lifted 20 µm and moving down at 5 cm/s: the feet land in this step with
    // their gaps away from zero (a resting contact sits at Φ ≈ 0, where the penetration
    // correction's slope switches between 1/h and (1 − K_p)/h: no derivative there).
    let mut state = settle(&s, 300);
    state.rigid[0].q[2] += 2e-5;
    state.rigid[0].v[2] = -0.05;
    let (_, modes) = check(&s, &state, 1e-6, "quadruped feet");
    assert_eq!(modes, vec![ContactMode::Sticking; 4]);
}

#[test]
fn a_pendulum_pushed_against_its_joint_limit() {
    // A constant torque holds the pendulum against its upper limit (0.5 rad).
    let s = scene(
        r#"
[simulation]
dt = 0.005
gravity = [0.0, 0.0, -9.81]

[contact]
tolerance = 1e-12

[[robot]]
name = "pendulum"
urdf = "../urdf/limited_pendulum.urdf"
q = [0.4999]
v = [0.1]
torque = [3.0]
"#,
    );
    let state = s.initial_state();
    let (jac, modes) = check(&s, &state, 1e-7, "pendulum at its limit");
    assert_eq!(modes.len(), 1);
    assert_ne!(modes[0], ContactMode::Breaking);
    // Held at the limit: q⁺ does not move with the torque.
    assert!(jac.dq_dtau[(0, 0)].abs() < 1e-12, "{}", jac.dq_dtau[(0, 0)]);
}
