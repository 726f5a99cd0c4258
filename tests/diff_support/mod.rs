//! Shared helpers of the `diff_*` tests: warm states, random tangents, and central finite
//! differences of the forward simulator (Richardson-extrapolated) to check derivatives with.
#![allow(dead_code)]

pub mod clamped_beam;
pub mod stacked_cubes;

use diffsoro::contact::{ContactMode, ModeTolerance, classify};
use diffsoro::diff::{
    InputTangent, Parameter, Recorder, StateTangent, StepDerivative, StepRecord, TapeOptions,
    adjoint, forward_sensitivities, record_trajectory,
};
use diffsoro::math::{SplitMix64, Vec3, relative_error};
use diffsoro::scene::{Scene, State, Stepper};

/// A moving, deformed state: `steps` steps from rest.
pub fn warm_state(scene: &Scene, steps: usize) -> State {
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(scene).unwrap();
    for _ in 0..steps {
        stepper.step(scene, &mut state).unwrap();
    }
    state
}

/// The state after `steps` steps from `start` with a fresh stepper, every contact solve
/// converged.
pub fn run_state(scene: &Scene, start: &State, steps: usize) -> State {
    let mut state = start.clone();
    let mut stepper = Stepper::new(scene).unwrap();
    for _ in 0..steps {
        let report = stepper.step(scene, &mut state).unwrap();
        assert!(report.contact_converged, "{report:?}");
    }
    state
}

/// `state` flattened as `StateTangent::to_vec` lays a tangent out: per soft body positions
/// then velocities, then per rigid system its configuration as a tangent from `base`'s
/// (`RigidSystem::difference`) and its velocity.
pub fn flatten(scene: &Scene, base: &State, state: &State) -> Vec<f64> {
    let mut out: Vec<f64> = state
        .bodies
        .iter()
        .flat_map(|b| b.positions.iter().chain(&b.velocities))
        .flat_map(|p| [p.x, p.y, p.z])
        .collect();
    for (s, sys) in scene.rigid.systems.iter().enumerate() {
        let mut d = vec![0.0; sys.nv()];
        sys.difference(&base.rigid[s].q, &state.rigid[s].q, &mut d);
        out.extend(d);
        out.extend(&state.rigid[s].v);
    }
    out
}

/// A random tangent of the state, zero on fixed nodes (but not on the horn nodes of pinned
/// servos, which move and whose start state is an input), positions scaled by `sx` (m) and
/// velocities by `sv` (m/s); every rigid coordinate likewise (q by `sx`, v by `sv`).
pub fn random_tangent(scene: &Scene, rng: &mut SplitMix64, sx: f64, sv: f64) -> StateTangent {
    let mut t = StateTangent::zeros(scene);
    for (b, (tb, body)) in t.bodies.iter_mut().zip(&scene.bodies).enumerate() {
        let mut pinned = vec![false; body.node_count()];
        for n in scene.body_actuation(b).pinned_nodes() {
            pinned[n] = true;
        }
        for (n, &pin) in pinned.iter().enumerate() {
            if body.is_fixed(n) && !pin {
                continue;
            }
            tb.positions[n] = sx * Vec3::new(rng.uniform(), rng.uniform(), rng.uniform());
            tb.velocities[n] = sv * Vec3::new(rng.uniform(), rng.uniform(), rng.uniform());
        }
    }
    for r in &mut t.rigid {
        r.q.iter_mut().for_each(|x| *x = sx * rng.uniform());
        r.v.iter_mut().for_each(|x| *x = sv * rng.uniform());
    }
    t
}

/// Central finite difference of the `steps`-step rollout in the direction `dir` (state and
/// parameters), step `eps`, laid out as `StateTangent::to_vec` (rigid systems included).
pub fn finite_difference(
    scene: &Scene,
    start: &State,
    steps: usize,
    parameters: &[Parameter],
    dir: &InputTangent,
    eps: f64,
) -> Vec<f64> {
    // Rigid configurations are differenced on their manifold from the unperturbed run's.
    let base = if scene.rigid.systems.is_empty() {
        start.clone()
    } else {
        run_state(scene, start, steps)
    };
    let shifted = |sign: f64| {
        let mut s = scene.clone();
        for (p, d) in parameters.iter().zip(&dir.parameters) {
            p.set(&mut s, p.value(scene) + sign * eps * d).unwrap();
        }
        let mut st = start.clone();
        dir.state.displace(scene, &mut st, sign * eps);
        let mut stepper = Stepper::new(&s).unwrap();
        for _ in 0..steps {
            stepper.step(&s, &mut st).unwrap();
        }
        flatten(scene, &base, &st)
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

pub fn parameters(scene: &Scene, names: &[&str]) -> Vec<Parameter> {
    names
        .iter()
        .map(|n| Parameter::parse(scene, n).unwrap())
        .collect()
}

/// The input directions, one at a time: x (with the rigid configurations), v (with
/// the rigid velocities), E, ν, each actuator.
pub fn unit_directions(
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
                    let mut t = random_tangent(scene, &mut rng, 1e-4, 0.0);
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
                    let mut t = random_tangent(scene, &mut rng, 0.0, 1e-1);
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
        // Scale so a unit step moves the parameter by five times its value (or by 1): with
        // the ε = 1e-3 of the tests, a 0.5 % change, large enough for the NCP's residual noise
        // (the Richardson extrapolation keeps the truncation error negligible).
        d[i] = 5.0 * p.value(scene).abs().max(0.2);
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

pub fn check_jvp_against_fd(scene: &Scene, names: &[&str], steps: usize, warm: usize) {
    check_jvp_against_fd_from(scene, names, &warm_state(scene, warm), steps, 1e-3);
}

/// The JVP of `steps` steps from `start` in every unit direction (x, v, each parameter) equals
/// the Richardson-extrapolated central difference with step `eps` to 1e-6 relative.
pub fn check_jvp_against_fd_from(
    scene: &Scene,
    names: &[&str],
    start: &State,
    steps: usize,
    eps: f64,
) {
    let params = parameters(scene, names);
    let dirs = unit_directions(scene, &params, 17);
    check_directions_against_fd(scene, &params, start, steps, eps, &dirs);
}

/// The JVP of `steps` steps from `start` in each of `dirs` equals the Richardson-extrapolated
/// central difference with step `eps` to 1e-6 relative.
pub fn check_directions_against_fd(
    scene: &Scene,
    params: &[Parameter],
    start: &State,
    steps: usize,
    eps: f64,
    dirs: &[(String, InputTangent)],
) {
    let start = start.clone();
    for (what, dir) in dirs {
        // JVP, step by step.
        let mut recorder = Recorder::new(scene).unwrap();
        let mut derivative = StepDerivative::new(scene);
        let mut state = start.clone();
        let mut input = dir.clone();
        for _ in 0..steps {
            let (_, record) = recorder.step(scene, &mut state).unwrap();
            let out = derivative
                .jvp(scene, &record, params, &[input.clone()])
                .unwrap();
            input.state = out.into_iter().next().unwrap();
            recorder.recycle(record);
        }
        let jvp = input.state.to_vec();
        let fd = finite_difference(scene, &start, steps, params, dir, eps);
        // Both exactly zero (e.g. a servo target beyond its per-step limit): agreement.
        let zero = jvp.iter().chain(&fd).all(|v| *v == 0.0);
        let err = if zero {
            0.0
        } else {
            relative_error(&jvp, &fd, 0.0)
        };
        assert!(
            err < 1e-6,
            "{}: {steps} steps, d/d{what}: JVP vs FD {err:e} (|jvp| = {:e})",
            scene.bodies[0].material().law().name(),
            jvp.iter().map(|x| x * x).sum::<f64>().sqrt()
        );
    }
}

/// ⟨w, J u⟩ = ⟨Jᵀ w, u⟩ to 1e-10 for three random pairs (u: state and parameters, w: state)
/// on the step of `record`.
pub fn check_adjointness(scene: &Scene, record: &StepRecord, params: &[Parameter], seed: u64) {
    let mut derivative = StepDerivative::new(scene);
    let mut rng = SplitMix64::new(seed);
    for _ in 0..3 {
        let u = InputTangent {
            state: random_tangent(scene, &mut rng, 1.0, 1.0),
            parameters: (0..params.len()).map(|_| rng.uniform()).collect(),
        };
        let w = random_tangent(scene, &mut rng, 1.0, 1.0);
        let ju = derivative
            .jvp(scene, record, params, std::slice::from_ref(&u))
            .unwrap();
        let jtw = derivative.vjp(scene, record, params, &w).unwrap();
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
            "⟨w, Ju⟩ = {lhs:e}, ⟨Jᵀw, u⟩ = {rhs:e}"
        );
    }
}

/// The adjoint gradient of the scalar loss wᵀ(x, v) after `steps` steps from `start`, for a
/// random cotangent w (`seed`), equals the forward-mode gradient along `params` (1e-10).
pub fn check_adjoint_against_forward(
    scene: &Scene,
    start: &State,
    steps: usize,
    params: &[Parameter],
    seed: u64,
) {
    let mut rng = SplitMix64::new(seed);
    let w = random_tangent(scene, &mut rng, 1.0, 0.1);
    let mut s = start.clone();
    let tangents = forward_sensitivities(scene, &mut s, steps, params, &mut |_| {}).unwrap();
    let forward: Vec<f64> = tangents.iter().map(|t| w.dot(t)).collect();
    let mut s = start.clone();
    let mut tape =
        record_trajectory(scene, &mut s, steps, TapeOptions::default(), &mut |_| {}).unwrap();
    let adj = adjoint(scene, &mut tape, params, &w).unwrap();
    let err = relative_error(&adj.parameters, &forward, 0.0);
    assert!(
        err < 1e-10,
        "adjoint {:?} vs forward {forward:?}",
        adj.parameters
    );
}

/// The modes of the NCP rows of one step of `scene` from `state` (forces and velocities
/// below 1e-9 count as zero); the step's NCPs must converge.
pub fn step_modes(scene: &Scene, state: &State) -> Vec<ContactMode> {
    let mut next = state.clone();
    let mut stepper = Stepper::new(scene).unwrap();
    let report = stepper.step(scene, &mut next).unwrap();
    assert!(report.contact_converged, "the step's NCPs did not converge");
    let tol = ModeTolerance {
        force: 1e-9,
        velocity: 1e-9,
    };
    stepper
        .contact()
        .groups()
        .iter()
        .flat_map(|g| classify(g.lambda(), g.sigma(), tol))
        .collect()
}

/// For a scene of one soft body and rigid bodies: the JVP of one step from `start` along each
/// unit direction of the state and of the parameters `names` equals the Richardson-
/// extrapolated central difference of the forward step, the soft and the rigid parts each to
/// 1e-6 of their own size; and the VJP is its adjoint (1e-10). `what` names the case.
pub fn check_soft_rigid_step(scene: &Scene, start: &State, names: &[&str], what: &str) {
    let params = parameters(scene, names);
    for (dir_name, dir) in unit_directions(scene, &params, 5) {
        let mut recorder = Recorder::new(scene).unwrap();
        let mut derivative = StepDerivative::new(scene);
        let mut state = start.clone();
        let (_, record) = recorder.step(scene, &mut state).unwrap();
        let out = derivative
            .jvp(scene, &record, &params, std::slice::from_ref(&dir))
            .unwrap();
        let jvp = out.into_iter().next().unwrap().to_vec();
        let fd = finite_difference(scene, start, 1, &params, &dir, 1e-3);
        let soft_len = 6 * scene.bodies[0].node_count();
        let (soft, rigid) = jvp.split_at(soft_len);
        let (fd_soft, fd_rigid) = fd.split_at(soft_len);
        for (part, a, b) in [("soft", soft, fd_soft), ("rigid", rigid, fd_rigid)] {
            if a.is_empty() {
                continue;
            }
            let err = relative_error(a, b, 0.0);
            let size = a.iter().map(|x| x * x).sum::<f64>().sqrt();
            assert!(
                err < 1e-6,
                "{what}, d/d({dir_name}), {part} part: JVP vs FD {err:e} (|jvp| = {size:e})"
            );
        }
    }
    let mut recorder = Recorder::new(scene).unwrap();
    let mut state = start.clone();
    let (_, record) = recorder.step(scene, &mut state).unwrap();
    check_adjointness(scene, &record, &params, 13);
}
