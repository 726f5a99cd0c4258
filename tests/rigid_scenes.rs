//! Rigid bodies that move: free bodies and robots stepping with exact
//! frictional contact, checked against analytic solutions and conservation laws.

use crate::scene_support;

use diffsoro::rigid::{Base, Data, aba, load_urdf};
use diffsoro::scene::{FinalState, RigidDynamics, Scene, State, Stepper};
use scene_support::{root, scene};

fn run(scene: &Scene, steps: usize, each: impl FnMut(&State)) -> State {
    let (state, unconverged) = run_counting(scene, steps, each);
    assert_eq!(
        unconverged, 0,
        "the NCP did not converge in {unconverged} steps"
    );
    state
}

/// Runs `steps` steps; returns the state and the number of steps whose NCP stopped at its
/// iteration limit.
fn run_counting(scene: &Scene, steps: usize, mut each: impl FnMut(&State)) -> (State, usize) {
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(scene).unwrap();
    let mut unconverged = 0;
    for _ in 0..steps {
        let report = stepper.step(scene, &mut state).unwrap();
        unconverged += usize::from(!report.contact_converged);
        each(&state);
    }
    (state, unconverged)
}

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

/// Potential plus kinetic energy of a free body (J), z up.
fn energy(scene: &Scene, state: &State) -> f64 {
    let RigidDynamics::Free(body) = &scene.rigid.systems[0].dynamics else {
        panic!("a free body")
    };
    let (q, v) = (&state.rigid[0].q, &state.rigid[0].v);
    body.mass * 9.81 * q[2] + body.kinetic_energy(q, v)
}

#[test]
fn a_box_dropped_on_a_plane_comes_to_rest_at_its_half_height_and_never_sinks() {
    // Dropped from 0.2 m, tilted 0.3 rad about x and 0.2 about y so it lands on a corner.
    let s = scene(&format!(
        "{CUBE}position = [0.0, 0.0, 0.25]\nrotation = [0.3, 0.2, 0.0]\n"
    ));
    let mut previous = energy(&s, &s.initial_state());
    let mut lowest = f64::INFINITY;
    let mut depth: f64 = 0.0;
    let weight = 0.5 * 9.81;
    let mut step = 0;
    // The landing (a corner, then an edge, sliding and spinning on four contacts) stalls
    // ADMM at a residual ~1e-5 for a few steps (the redundant contacts' normal forces are not
    // unique); every other step converges.
    let mut last_unconverged = 0;
    let mut seen = 0;
    let (state, unconverged) = run_counting(&s, 10_000, |st| {
        step += 1;
        if st.unconverged_steps > seen {
            seen = st.unconverged_steps;
            last_unconverged = step;
        }
        let e = energy(&s, st);
        // Semi-implicit Euler loses ½ m h² g² per free step and contacts only dissipate; the
        // penetration correction may lift the cube by at most its last penetration depth, and
        // a converged NCP (tolerance 1e-10 m/s on σ) lets a contact move by h·1e-10 m.
        assert!(
            e <= previous + weight * (depth + 0.005 * 1e-10) + 1e-14,
            "step {step}: energy rose {previous} → {e} (penetration {depth} m)"
        );
        previous = e;
        // The lowest corner of the cube.
        let q = &st.rigid[0].q;
        let r = diffsoro::rigid::quaternion_rotation(&q[3..7]);
        let reach: f64 = (0..3).map(|k| 0.05 * r[(2, k)].abs()).sum();
        lowest = lowest.min(q[2] - reach);
        depth = (reach - q[2]).max(0.0);
    });
    assert!(unconverged <= 20, "{unconverged} unconverged steps");
    assert!(
        last_unconverged < 400,
        "step {last_unconverged} (after the landing) did not converge"
    );
    assert!(lowest > -1e-5, "the cube sank {lowest} m into the plane");
    let fs = FinalState::new(&s, &state);
    let cube = &fs.rigid_bodies[0];
    assert!(
        (cube.position[2] - 0.05).abs() < 1e-6,
        "rest height {}",
        cube.position[2]
    );
    let speed = cube
        .velocity
        .iter()
        .chain(&cube.angular_velocity)
        .map(|x| x.abs())
        .fold(0.0, f64::max);
    assert!(speed < 1e-8, "still moving: {cube:?}");
    // Resting on a face: one body axis is vertical.
    let q = &state.rigid[0].q;
    let r = diffsoro::rigid::quaternion_rotation(&q[3..7]);
    assert!(
        (0..3).any(|k| (r[(2, k)].abs() - 1.0).abs() < 1e-6),
        "not flat: {r}"
    );
    assert_eq!(fs.contacts, 4, "a face rests on four corners");
}

/// The cube on a 20° incline (normal tilted about x), starting at rest on it.
fn incline(mu: f64) -> Scene {
    let theta = 20f64.to_radians();
    let n = [0.0, -theta.sin(), theta.cos()];
    scene(&format!(
        r#"
[simulation]
dt = 0.005
gravity = [0.0, 0.0, -9.81]

[[obstacle]]
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
fn a_box_on_a_20_degree_incline_sticks_with_mu_half_and_slides_at_coulombs_rate_with_mu_0_2() {
    let theta = 20f64.to_radians();
    let down = [0.0, -theta.cos(), -theta.sin()];
    // μ = 0.5 > tan 20° = 0.364: it stays.
    let s = incline(0.5);
    let state = run(&s, 200, |_| {});
    let q = &state.rigid[0].q;
    let moved = ((q[0]).powi(2)
        + (q[1] - 0.05 * -theta.sin()).powi(2)
        + (q[2] - 0.05 * theta.cos()).powi(2))
    .sqrt();
    assert!(moved < 1e-7, "the sticking cube moved {moved} m");
    // μ = 0.2: it slides with a = g (sin θ − μ cos θ) along the slope.
    let s = incline(0.2);
    let steps = 200;
    let state = run(&s, steps, |_| {});
    let v = &state.rigid[0].v;
    let along = v[0] * down[0] + v[1] * down[1] + v[2] * down[2];
    let a = 9.81 * (theta.sin() - 0.2 * theta.cos());
    let expected = a * steps as f64 * 0.005;
    assert!(
        (along - expected).abs() < 0.01 * expected,
        "sliding speed {along} m/s, Coulomb says {expected} m/s"
    );
}

#[test]
fn two_free_boxes_colliding_in_zero_gravity_keep_their_momenta() {
    let s = scene(
        r#"
[simulation]
dt = 0.002
gravity = [0.0, 0.0, 0.0]

[contact]
friction = 0.4
tolerance = 1e-9
max_iterations = 10000

[[rigid_body]]
name = "a"
shape = "box"
half_extents = [0.05, 0.05, 0.05]
density = 500.0
position = [0.0, 0.0, 0.0]
velocity = [1.0, 0.1, 0.0]
angular_velocity = [0.0, 0.0, 2.0]

[[rigid_body]]
name = "b"
shape = "box"
half_extents = [0.04, 0.04, 0.04]
density = 800.0
position = [0.2, 0.06, 0.03]
"#,
    );
    // P = Σ m ċ, L = Σ (c × m ċ + I_w ω) about the origin.
    let momenta = |st: &State| {
        let (mut p, mut l) = (nalgebra::Vector3::zeros(), nalgebra::Vector3::zeros());
        for (sys, rs) in s.rigid.systems.iter().zip(&st.rigid) {
            let RigidDynamics::Free(body) = &sys.dynamics else {
                unreachable!()
            };
            let c = nalgebra::Vector3::new(rs.q[0], rs.q[1], rs.q[2]);
            let v = nalgebra::Vector3::new(rs.v[0], rs.v[1], rs.v[2]) * body.mass;
            let w = nalgebra::Vector3::new(rs.v[3], rs.v[4], rs.v[5]);
            p += v;
            l += c.cross(&v) + body.world_inertia(&rs.q) * w;
        }
        (p, l)
    };
    let (p0, l0) = momenta(&s.initial_state());
    let mut touched = 0;
    let mut stepper = Stepper::new(&s).unwrap();
    let mut state = s.initial_state();
    for _ in 0..300 {
        let report = stepper.step(&s, &mut state).unwrap();
        assert!(report.contact_converged);
        touched += usize::from(report.rigid.active > 0);
    }
    assert!(touched > 0, "the boxes never met");
    // b was hit: it moves now.
    assert!(state.rigid[1].v[0] > 0.1, "{:?}", state.rigid[1].v);
    let (p1, l1) = momenta(&state);
    assert!((p1 - p0).norm() <= 1e-10 * p0.norm(), "P {p0} → {p1}");
    assert!((l1 - l0).norm() <= 1e-10 * l0.norm(), "L {l0} → {l1}");
}

#[test]
fn a_pendulum_swung_into_its_joint_limit_stops_there() {
    let s = scene(
        r#"
[simulation]
dt = 0.005
gravity = [0.0, 0.0, -9.81]

[[robot]]
name = "pendulum"
urdf = "../urdf/limited_pendulum.urdf"
q = [0.0]
v = [6.0]
"#,
    );
    let mut highest = f64::NEG_INFINITY;
    let mut at_limit = 0;
    run(&s, 400, |st| {
        let q = st.rigid[0].q[0];
        highest = highest.max(q);
        at_limit += usize::from((q - 0.5).abs() < 1e-4);
    });
    // ½ I ω² = 0.0837·36/2 = 1.5 J against m g (L/2)(1 − cos θ): it would swing past 1 rad.
    assert!(
        highest <= 0.5 + 1e-4,
        "went {} rad past the limit",
        highest - 0.5
    );
    assert!(at_limit > 0, "never reached the limit (highest {highest})");
}

#[test]
fn a_robot_falling_freely_follows_aba_integrated_by_the_same_scheme() {
    let s = scene(
        r#"
[simulation]
dt = 0.002
gravity = [0.0, 0.0, -9.81]

[[robot]]
name = "dog"
urdf = "../urdf/quadruped.urdf"
base = "free_flyer"
# Base 1 m up; each leg's hip, thigh, calf within their limits.
q = [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.8, -1.5, 0.0, 0.8, -1.5, 0.0, 0.8, -1.5, 0.0, 0.8, -1.5]
"#,
    );
    let model = load_urdf(&root().join("urdf/quadruped.urdf"), Base::FreeFlyer).unwrap();
    let mut data = Data::new(&model);
    let mut q = s.initial_state().rigid[0].q.clone();
    let mut v: Vec<f64> = (0..model.nv).map(|k| 0.1 * (k as f64).sin()).collect();
    assert!(s.warnings().is_empty(), "{:?}", s.warnings());
    let mut state = s.initial_state();
    state.rigid[0].v = v.clone();
    let mut stepper = Stepper::new(&s).unwrap();
    let h = 0.002;
    for _ in 0..100 {
        let report = stepper.step(&s, &mut state).unwrap();
        assert_eq!(report.rigid.detected, 0, "no contact in free fall");
        let ddq = aba(&model, &mut data, &q, &v, &vec![0.0; model.nv]).clone();
        for k in 0..model.nv {
            v[k] += h * ddq[k];
        }
        let q0 = q.clone();
        model.integrate_dt(&q0, &v, h, &mut q);
    }
    let st = &state.rigid[0];
    for (name, got, want) in [("q", &st.q, &q), ("v", &st.v, &v)] {
        for (k, (a, b)) in got.iter().zip(want.iter()).enumerate() {
            assert!(
                (a - b).abs() <= 1e-12 * (1.0 + b.abs()),
                "{name}[{k}] {a} vs {b}"
            );
        }
    }
}

#[test]
fn a_quadruped_standing_on_its_four_feet_carries_its_weight_on_them() {
    let s = Scene::load(&root().join("scenes/quadruped_standing.toml"), &[]).unwrap();
    assert!(s.warnings().is_empty(), "{:?}", s.warnings());
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    for _ in 0..3000 {
        let report = stepper.step(&s, &mut state).unwrap();
        assert!(report.contact_converged, "{report:?}");
    }
    let RigidDynamics::Robot(model) = &s.rigid.systems[0].dynamics else {
        panic!("a robot")
    };
    // At rest, the floor carries the whole weight: Σ λ_N = m g (the contact frames' normal
    // is the floor's, +z).
    let ws = stepper.rigid();
    assert_eq!(ws.contacts().len(), 4, "one contact per foot");
    let normal: f64 = (0..4).map(|i| ws.lambda()[3 * i + 2]).sum();
    let weight = model.total_mass() * 9.81;
    let v = &state.rigid[0].v;
    let speed = v.iter().map(|x| x.abs()).fold(0.0, f64::max);
    assert!(speed < 1e-3, "still moving: {v:?}");
    assert!(
        (normal - weight).abs() < 1e-3 * weight,
        "the feet carry {normal} N of a {weight} N robot"
    );
    // Trunk upright and above the floor.
    let q = &state.rigid[0].q;
    assert!(
        q[3].abs() < 0.05 && q[4].abs() < 0.05,
        "trunk tilted: {q:?}"
    );
    assert!(q[2] > 0.2, "trunk at {} m", q[2]);
}

#[test]
fn an_ignored_pair_passes_through_each_other() {
    let two = |ignore: &str| {
        scene(&format!(
            r#"
[simulation]
dt = 0.005
gravity = [0.0, 0.0, -9.81]
[contact]
{ignore}
[[rigid_body]]
name = "table"
shape = "box"
half_extents = [0.2, 0.2, 0.05]
fixed = true
[[rigid_body]]
name = "cube"
shape = "box"
half_extents = [0.05, 0.05, 0.05]
mass = 1.0
position = [0.0, 0.0, 0.1]
"#
        ))
    };
    // Without the ignore the cube rests on the table's top (z = 0.05 + 0.05)...
    let state = run(&two(""), 200, |_| {});
    assert!(
        (state.rigid[0].q[2] - 0.1).abs() < 1e-6,
        "{:?}",
        state.rigid[0].q
    );
    // ...with it, it falls freely: z = 0.1 − g h² n(n+1)/2 after n semi-implicit steps.
    let state = run(&two("ignore = [[\"cube\", \"table\"]]"), 200, |_| {});
    let drop = 9.81 * 0.005f64.powi(2) * 200.0 * 201.0 / 2.0;
    assert!(
        (state.rigid[0].q[2] - (0.1 - drop)).abs() < 1e-12,
        "{:?}",
        state.rigid[0].q
    );
}

#[test]
fn balls_and_capsules_rest_on_a_triangle_mesh_obstacle() {
    // meshes/finger_obstacle.stl: a closed block x ∈ [−0.12, −0.04], y ∈ [0.018, 0.04],
    // z ∈ [−0.02, 0.035] (m). The NCP tolerance is tightened: at the default 1e-10 W of
    // complementarity, sticking contacts carrying the pill's 7.5 mN may still slip by
    // ~1e-8 m/s a step, which lets it roll about its axis at ~1e-6 rad/s, the speed this
    // test calls rest.
    let s = scene(
        r#"
[simulation]
dt = 0.002
gravity = [0.0, 0.0, -9.81]

[contact]
tolerance = 1e-13

[[obstacle]]
type = "mesh"
path = "../meshes/finger_obstacle.stl"

[[rigid_body]]
name = "ball"
shape = "sphere"
radius = 0.005
density = 1000.0
position = [-0.1, 0.029, 0.05]

[[rigid_body]]
name = "pill"
shape = "capsule"
radius = 0.004
half_length = 0.005
density = 1000.0
position = [-0.06, 0.029, 0.05]
rotation = [1.5707963267948966, 0.0, 0.0]
"#,
    );
    let state = run(&s, 500, |_| {});
    let fs = FinalState::new(&s, &state);
    // On the top face: z = 0.035 + radius, at rest.
    for (body, top) in fs.rigid_bodies.iter().zip([0.04, 0.039]) {
        assert!((body.position[2] - top).abs() < 1e-6, "{body:?}");
        let speed: f64 = body
            .velocity
            .iter()
            .chain(&body.angular_velocity)
            .map(|x| x.abs())
            .sum();
        assert!(speed < 1e-6, "{body:?}");
    }
}
