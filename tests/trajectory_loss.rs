//! Gradients of losses along a trajectory (`diff::adjoint_series`) with respect to actuation
//! knots (`diff::ActuationKnots`), E, ν, damping, density and the start state, against central
//! finite differences of the loss recomputed by forward runs (1e-6 relative where no contact
//! mode switches), and the adjoint against forward sensitivities (1e-10): a tracking loss
//! summed over 200 steps on a clamped beam pulled by two cables, and on a soft cube resting in
//! sticking contact on a floor, pulled across its top.

use std::path::Path;

use diffsoro::diff::{
    ActuationKnots, KnotSensitivity, Parameter, StateTangent, TapeOptions, adjoint_series,
    record_trajectory_with,
};
use diffsoro::math::{SplitMix64, Vec3};
use diffsoro::scene::{RunStart, Scene, SceneFile, State, Stepper};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A tracking problem: a scene, its start, the knots of its driven cables, the node whose
/// path is tracked and the targets it is compared with at every `EVERY`-th state.
struct Problem {
    scene: Scene,
    start: State,
    knots: ActuationKnots,
    node: usize,
    steps: usize,
    targets: Vec<Vec3>,
}

const EVERY: usize = 10;

impl Problem {
    /// A 200-step problem from the scene's initial state.
    fn new(scene: Scene, knots: ActuationKnots, node: usize, targets: Vec<Vec3>) -> Problem {
        Problem {
            start: scene.initial_state(),
            scene,
            knots,
            node,
            steps: 200,
            targets,
        }
    }

    /// The states after each step of a run with `knots` from `start`.
    fn run(&self, scene: &Scene, knots: &ActuationKnots, start: &State) -> Vec<State> {
        let mut scene = scene.clone();
        let mut state = start.clone();
        let mut stepper = Stepper::new(&scene).unwrap();
        let dt = scene.simulation.dt;
        let mut out = vec![state.clone()];
        for k in 0..self.steps {
            knots.apply(&mut scene, ActuationKnots::step_time(dt, k));
            stepper.step(&scene, &mut state).unwrap();
            out.push(state.clone());
        }
        out
    }

    /// L = ½ Σ_{s = EVERY, 2·EVERY, …} ‖x_node(s) − y_s‖² (m²).
    fn loss(&self, states: &[State]) -> f64 {
        (EVERY..=self.steps)
            .step_by(EVERY)
            .map(|s| {
                0.5 * (states[s].bodies[0].positions[self.node] - self.targets[s / EVERY - 1])
                    .norm_squared()
            })
            .sum()
    }

    /// ∂L/∂s_s: the tracked node's residual at the sampled states.
    fn cotangent(&self, states: &[State], s: usize) -> Option<StateTangent> {
        if s == 0 || !s.is_multiple_of(EVERY) {
            return None;
        }
        let mut c = StateTangent::zeros(&self.scene);
        c.bodies[0].positions[self.node] =
            states[s].bodies[0].positions[self.node] - self.targets[s / EVERY - 1];
        Some(c)
    }
}

/// What the adjoint gives: ∂L/∂(knots), ∂L/∂p for `parameters`, ∂L/∂(start state).
struct Gradient {
    knots: Vec<Vec<f64>>,
    parameters: Vec<f64>,
    state: StateTangent,
}

fn adjoint_gradient(p: &Problem, parameters: &[Parameter], limit: usize) -> Gradient {
    let states = p.run(&p.scene, &p.knots, &p.start);
    // The step parameters: the constant ones, then the knots' actuators.
    let list: Vec<Parameter> = parameters
        .iter()
        .chain(&p.knots.actuators)
        .copied()
        .collect();
    let mut scene = p.scene.clone();
    let mut state = p.start.clone();
    let dt = scene.simulation.dt;
    let knots = p.knots.clone();
    let mut tape = record_trajectory_with(
        &mut scene,
        &mut state,
        p.steps,
        TapeOptions {
            memory_limit: limit,
            ..TapeOptions::default()
        },
        &mut |k, s| {
            knots.apply(s, ActuationKnots::step_time(dt, k));
            Ok(())
        },
        &mut |_| {},
    )
    .unwrap();
    // The recorder's step is the plain step; through contact its NCP solve may differ from the
    // plain run's in round-off only.
    for (a, b) in state.bodies[0]
        .positions
        .iter()
        .zip(&states[p.steps].bodies[0].positions)
    {
        assert!((a - b).norm() < 1e-15, "the recorded run is the plain run");
    }
    let result = adjoint_series(
        &scene,
        &mut tape,
        &list,
        &mut |s| p.cotangent(&states, s),
        true,
    )
    .unwrap();
    let columns: Vec<usize> = (parameters.len()..list.len()).collect();
    Gradient {
        knots: p.knots.chain(&result.per_step, &columns, dt),
        parameters: result.parameters[..parameters.len()].to_vec(),
        state: result.state,
    }
}

/// Moves parameter `name` of `scene` by `d`.
fn moved(scene: &Scene, parameter: Parameter, d: f64) -> Scene {
    let mut s = scene.clone();
    let v = parameter.value(&s);
    parameter.set(&mut s, v + d).unwrap();
    s
}

fn central(f: impl Fn(f64) -> f64, step: f64) -> f64 {
    (f(step) - f(-step)) / (2.0 * step)
}

fn assert_close(name: &str, got: f64, fd: f64, tolerance: f64) {
    let err = (got - fd).abs() / fd.abs().max(1e-300);
    assert!(
        err < tolerance,
        "{name}: adjoint {got:e}, differences {fd:e}, relative error {err:.2e}"
    );
}

/// The adjoint against central differences of the loss for every knot, `parameters` (with
/// their steps) and a random start-state direction. Each difference step sits where the
/// truncation error (∝ step²) and the solvers' round-off in the loss (∝ 1/step) are both
/// below 1e-7 relative: the damping coefficients, whose effect on a slow run is small, take
/// larger steps than E.
fn check_against_differences(p: &Problem, parameters: &[(Parameter, f64)], knot_step: f64) {
    let list: Vec<Parameter> = parameters.iter().map(|(q, _)| *q).collect();
    let g = adjoint_gradient(p, &list, usize::MAX);
    let loss_at =
        |scene: &Scene, knots: &ActuationKnots, start: &State| p.loss(&p.run(scene, knots, start));
    assert!(loss_at(&p.scene, &p.knots, &p.start) > 0.0);
    for a in 0..p.knots.actuators.len() {
        for j in 0..p.knots.times.len() {
            let fd = central(
                |d| {
                    let mut k = p.knots.clone();
                    k.values[a][j] += d;
                    loss_at(&p.scene, &k, &p.start)
                },
                knot_step,
            );
            assert_close(&format!("knot {a},{j}"), g.knots[a][j], fd, 1e-6);
        }
    }
    for (i, (q, step)) in parameters.iter().enumerate() {
        let fd = central(
            |d| loss_at(&moved(&p.scene, *q, d), &p.knots, &p.start),
            *step,
        );
        assert_close(&q.name(&p.scene), g.parameters[i], fd, 1e-6);
    }
    // A random direction of the start state (free nodes; fixed ones are not inputs).
    let mut rng = SplitMix64::new(7);
    let mut r = || 2.0 * rng.uniform() - 1.0;
    let mut dir = StateTangent::zeros(&p.scene);
    let body = &mut dir.bodies[0];
    for (n, (x, v)) in body
        .positions
        .iter_mut()
        .zip(body.velocities.iter_mut())
        .enumerate()
    {
        if !p.scene.bodies[0].is_fixed(n) {
            *x = 1e-3 * Vec3::new(r(), r(), r());
            *v = 1e-2 * Vec3::new(r(), r(), r());
        }
    }
    let fd = central(
        |d| {
            let mut s = p.start.clone();
            dir.add_to(&mut s, d);
            loss_at(&p.scene, &p.knots, &s)
        },
        // 1e-8 m and 1e-7 m/s at most: a larger move unsticks a contact of the block.
        1e-5,
    );
    assert_close("start state", g.state.dot(&dir), fd, 1e-6);
}

/// The adjoint against forward sensitivities (`diff::KnotSensitivity`, the scene start): dL
/// along every parameter and knot from tangents carried through the run.
fn check_against_forward(p: &Problem, parameters: &[Parameter]) {
    let g = adjoint_gradient(p, parameters, usize::MAX);
    let mut scene = p.scene.clone();
    let mut state = p.start.clone();
    let mut stepper =
        KnotSensitivity::new(&scene, &p.knots, &state, RunStart::Scene, parameters).unwrap();
    let mut dl = vec![0.0; stepper.columns()];
    for k in 0..p.steps {
        stepper.step(&mut scene, &mut state).unwrap();
        let s = k + 1;
        if s.is_multiple_of(EVERY) {
            let r = state.bodies[0].positions[p.node] - p.targets[s / EVERY - 1];
            for (c, t) in stepper.tangents().enumerate() {
                dl[c] += r.dot(&t.bodies[0].positions[p.node]);
            }
        }
    }
    for (i, q) in parameters.iter().enumerate() {
        assert_close(&q.name(&p.scene), g.parameters[i], dl[i], 1e-10);
    }
    let (na, nk) = (p.knots.actuators.len(), p.knots.times.len());
    for a in 0..na {
        for j in 0..nk {
            assert_close(
                &format!("knot {a},{j}"),
                g.knots[a][j],
                dl[parameters.len() + a * nk + j],
                1e-10,
            );
        }
    }
}

/// The beam clamped at x = 0 under gravity, damped, pulled by two cables whose tensions
/// follow 5 knots over the 2 s run; its tip node tracks a path 5 mm above where it starts.
fn beam() -> Problem {
    let text = r#"
        [simulation]
        dt = 0.01
        steps = 200
        gravity = [0.0, 0.0, -9.81]
        [[soft_body]]
        name = "beam"
        mesh = "beam_1.msh"
        law = "neo_hookean"
        young_modulus = 2.0e5
        poisson_ratio = 0.35
        density = 1000.0
        rayleigh_mass = 0.5
        rayleigh_stiffness = 0.01
        fixed_group = "clamp"
        [[soft_body.cable]]
        name = "top"
        points = [[0.1, 0.0, 0.004], [0.05, 0.0, 0.004], [0.0, 0.0, 0.004]]
        force = 0.0
        [[soft_body.cable]]
        name = "side"
        points = [[0.1, 0.003, 0.0], [0.0, 0.003, 0.0]]
        force = 0.0
    "#;
    let file = SceneFile::parse("beam.toml", text, &[]).unwrap();
    let scene = Scene::build(&file, &Path::new(ROOT).join("meshes")).unwrap();
    let mut knots = ActuationKnots::at_current_inputs(
        &scene,
        &["top".to_string(), "side".to_string()],
        ActuationKnots::uniform_times(2.0, 5),
    )
    .unwrap();
    knots.values = vec![
        vec![0.0, 0.2, 0.35, 0.1, 0.25],
        vec![0.1, 0.05, 0.2, 0.3, 0.0],
    ];
    // The tip: the node farthest along x.
    let rest = scene.bodies[0].rest_positions();
    let node = (0..rest.len())
        .max_by(|&a, &b| rest[a].x.total_cmp(&rest[b].x))
        .unwrap();
    let targets = (1..=20)
        .map(|i| rest[node] + Vec3::new(0.0, 0.001 * (i as f64 * 0.3).sin(), 0.005))
        .collect();
    Problem::new(scene, knots, node, targets)
}

/// The contact tests' 40 × 40 × 20 mm silicone block (meshes/soft_block.msh, E = 100 kPa)
/// resting 0.1 mm into a floor with μ = 0.9 (its bottom nodes stick), damped, a cable across
/// its top pulled by 4 knots over 2 s; a top corner tracks a path.
fn block() -> Problem {
    let text = r#"
        [simulation]
        dt = 0.01
        steps = 200
        gravity = [0.0, 0.0, -9.81]
        [contact]
        friction = 0.9
        tolerance = 1e-13
        max_iterations = 50000
        [[soft_body]]
        name = "block"
        mesh = "soft_block.msh"
        law = "neo_hookean"
        young_modulus = 1.0e5
        poisson_ratio = 0.3
        density = 1000.0
        rayleigh_mass = 1.0
        rayleigh_stiffness = 0.005
        [[soft_body.cable]]
        name = "pull"
        points = [[0.019, 0.0, 0.019], [0.0, 0.0, 0.019], [-0.019, 0.0, 0.019]]
        force = 0.0
        [[obstacle]]
        type = "plane"
        point = [0.0, 0.0, 1.0e-4]
        normal = [0.0, 0.0, 1.0]
    "#;
    let file = SceneFile::parse("block.toml", text, &[]).unwrap();
    let scene = Scene::build(&file, &Path::new(ROOT).join("meshes")).unwrap();
    let mut knots = ActuationKnots::at_current_inputs(
        &scene,
        &["pull".to_string()],
        ActuationKnots::uniform_times(2.0, 4),
    )
    .unwrap();
    knots.values = vec![vec![0.0, 0.05, 0.02, 0.04]];
    let rest = scene.bodies[0].rest_positions();
    let node = rest
        .iter()
        .position(|x| (x - Vec3::new(0.02, 0.02, 0.02)).norm() < 1e-12)
        .unwrap();
    let corner = rest[node];
    let targets = (1..=20)
        .map(|i| corner + Vec3::new(-2e-4 * (i as f64 * 0.2).sin(), 0.0, -1e-4))
        .collect();
    Problem::new(scene, knots, node, targets)
}

fn beam_parameters(scene: &Scene) -> Vec<(Parameter, f64)> {
    [
        ("young_modulus:beam", 20.0),
        ("poisson_ratio:beam", 1e-5),
        ("density:beam", 0.1),
        ("rayleigh_mass:beam", 1e-3),
        ("rayleigh_stiffness:beam", 1e-6),
    ]
    .iter()
    .map(|(n, s)| (Parameter::parse(scene, n).unwrap(), *s))
    .collect()
}

#[test]
fn a_tracking_loss_over_200_beam_steps_has_the_gradient_its_differences_give() {
    let p = beam();
    let parameters = beam_parameters(&p.scene);
    check_against_differences(&p, &parameters, 1e-5);
}

#[test]
fn the_tracking_adjoint_agrees_with_forward_sensitivities_on_the_beam() {
    let p = beam();
    let parameters: Vec<Parameter> = beam_parameters(&p.scene)
        .into_iter()
        .map(|(q, _)| q)
        .collect();
    check_against_forward(&p, &parameters);
}

#[test]
fn a_tracking_loss_through_sticking_contact_has_the_gradient_its_differences_give() {
    let p = block();
    let parameters: Vec<(Parameter, f64)> =
        [("young_modulus:block", 10.0), ("rayleigh_mass:block", 0.05)]
            .iter()
            .map(|(n, s)| (Parameter::parse(&p.scene, n).unwrap(), *s))
            .collect();
    check_against_differences(&p, &parameters, 1e-5);
    let list: Vec<Parameter> = parameters.iter().map(|(q, _)| *q).collect();
    check_against_forward(&p, &list);
}

/// A tape that keeps no step record recomputes each step with the inputs it was recorded
/// with: the same gradient, bit for bit.
#[test]
fn a_recomputed_tape_gives_the_same_gradient_bit_for_bit() {
    let p = beam();
    let parameters: Vec<Parameter> = beam_parameters(&p.scene)
        .into_iter()
        .map(|(q, _)| q)
        .collect();
    let kept = adjoint_gradient(&p, &parameters, usize::MAX);
    let recomputed = adjoint_gradient(&p, &parameters, 0);
    assert_eq!(kept.knots, recomputed.knots);
    assert_eq!(kept.parameters, recomputed.parameters);
    assert_eq!(kept.state, recomputed.state);
}
