//! The derivatives of steps where soft and rigid bodies share an NCP: the
//! forward mode (`StepDerivative::jvp`) over a few steps, with soft inputs (x, v, E) and rigid
//! ones (q, v, the cube's mass) together (`diff_support::unit_directions`), against Richardson-extrapolated central differences of the forward
//! simulator, in sticking and sliding configurations: a rigid cube resting on a soft block
//! (its nodes against the cube's faces, the cube's corners against the block's triangles),
//! the cube sliding over the block, and a soft pad attached to a robot's palm held by a PD.
//! Each difference restarts from the same state with a fresh stepper and an NCP solved to
//! 1e-12 m/s, so it differentiates the step itself; the soft and the rigid parts of the
//! output are each checked to 1e-6 of their own size.

use crate::diff_support;
use crate::scene_support;

use diffsoro::contact::{ContactMode, ModeTolerance, classify};
use diffsoro::diff::{
    InputTangent, Parameter, Recorder, StateTangent, StepDerivative, TapeOptions, adjoint,
    record_trajectory,
};
use diffsoro::math::{SplitMix64, relative_error};
use diffsoro::scene::{Scene, SceneFile, State, Stepper};
use scene_support::{SOFT_BLOCK, root};

/// A committed scene with the NCP solved to 1e-12 m/s and `extra` overrides (`key=value`).
fn load(name: &str, extra: &[&str]) -> Scene {
    let path = root().join("scenes").join(name);
    let mut text = std::fs::read_to_string(&path).unwrap();
    if !text.contains("[contact]") {
        text.push_str("\n[contact]\n");
    }
    let mut overrides: Vec<String> = vec![
        "contact.tolerance=1e-12".into(),
        "contact.max_iterations=100000".into(),
    ];
    overrides.extend(extra.iter().map(|s| s.to_string()));
    let file = SceneFile::parse(path.to_str().unwrap(), &text, &overrides).unwrap();
    file.validate().unwrap();
    Scene::build(&file, path.parent().unwrap()).unwrap()
}

/// The modes of every NCP of one step from `state` (with the tight tolerances).
fn modes(scene: &Scene, state: &State) -> Vec<ContactMode> {
    let mut s = state.clone();
    let mut stepper = Stepper::new(scene).unwrap();
    stepper.step(scene, &mut s).unwrap();
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

/// The JVP of `steps` steps from `start` along each direction equals the finite difference:
/// soft and rigid parts each to 1e-6 of their size.
fn check(scene: &Scene, start: &State, steps: usize, names: &[&str], eps: f64, what: &str) {
    check_except(scene, start, steps, names, eps, what, &[]);
}

/// [`check`] but for the directions named in `except` (`"x"`, `"v"`, a parameter).
fn check_except(
    scene: &Scene,
    start: &State,
    steps: usize,
    names: &[&str],
    eps: f64,
    what: &str,
    except: &[&str],
) {
    let params: Vec<Parameter> = names
        .iter()
        .map(|n| Parameter::parse(scene, n).unwrap())
        .collect();
    for (dir_name, dir) in diff_support::unit_directions(scene, &params, 5) {
        if except.contains(&dir_name.as_str()) {
            continue;
        }
        let mut recorder = Recorder::new(scene).unwrap();
        let mut derivative = StepDerivative::new(scene);
        let mut state = start.clone();
        let mut input = dir.clone();
        for _ in 0..steps {
            let (_, record) = recorder.step(scene, &mut state).unwrap();
            let out = derivative
                .jvp(scene, &record, &params, std::slice::from_ref(&input))
                .unwrap();
            input.state = out.into_iter().next().unwrap();
            recorder.recycle(record);
        }
        // Both laid out as StateTangent::to_vec: the soft bodies, then the rigid systems.
        let soft_len = 6 * scene.bodies.iter().map(|b| b.node_count()).sum::<usize>();
        let all = input.state.to_vec();
        let fd = diff_support::finite_difference(scene, start, steps, &params, &dir, eps);
        let (soft, rigid) = all.split_at(soft_len);
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
}

/// A rigid 25 mm cube falling at `velocity` (m/s) onto the 40 × 40 × 20 mm soft block of
/// `cube_on_block.toml`, clamped at its bottom face (no floor: a body resting on a floor sits at
/// gap Φ = 0, the kink of the penetration correction, where the step has no derivative), its
/// bottom face 1 mm above the block's top, off the block's centre so that no corner lies on an edge of
/// the block's surface mesh (where the corner's triangle, hence its weights, switch).
fn landing(friction: f64, velocity: [f64; 3]) -> Scene {
    let text = format!(
        r#"
[simulation]
dt = 0.005
steps = 10
gravity = [0.0, 0.0, -9.81]

[contact]
friction = {friction}
tolerance = 1e-12
max_iterations = 100000

{SOFT_BLOCK}fixed_box = [[-1.0, -1.0, -1.0], [1.0, 1.0, 0.001]]

[[rigid_body]]
name = "cube"
shape = "box"
half_extents = [0.0125, 0.0125, 0.0125]
density = 1000.0
position = [0.0013, -0.0021, 0.0335]
velocity = {velocity:?}
"#
    );
    let file = SceneFile::parse("landing.toml", &text, &[]).unwrap();
    file.validate().unwrap();
    Scene::build(&file, &root().join("scenes")).unwrap()
}

/// The state one step before the cube lands (`scene_support::before_landing`), with both kinds
/// of soft–rigid rows in the landing step: the block's nodes under the cube's face, and the
/// cube's corners on the block's triangles.
fn before_landing(scene: &Scene) -> State {
    let (state, stepper) = scene_support::before_landing(scene, 20);
    let kinds: Vec<u8> = stepper
        .body(0)
        .contact()
        .rigid_rows()
        .iter()
        .map(|r| r.key.0)
        .collect();
    assert!(kinds.contains(&0) && kinds.contains(&3), "{kinds:?}");
    state
}

/// ⟨w, J u⟩ = ⟨Jᵀ w, u⟩ to 1e-10 on one step from `start` (`diff_support::check_adjointness`,
/// whose random tangents cover the rigid coordinates too).
fn check_adjoint(scene: &Scene, start: &State, names: &[&str]) {
    let params: Vec<Parameter> = names
        .iter()
        .map(|n| Parameter::parse(scene, n).unwrap())
        .collect();
    let mut recorder = Recorder::new(scene).unwrap();
    let mut state = start.clone();
    let (_, record) = recorder.step(scene, &mut state).unwrap();
    diff_support::check_adjointness(scene, &record, &params, 11);
}

#[test]
fn a_cube_landing_on_a_soft_block_sticks() {
    let scene = landing(0.5, [0.0, 0.0, -0.1]);
    let start = before_landing(&scene);
    let m = modes(&scene, &start);
    assert!(
        m.contains(&ContactMode::Sticking) && !m.contains(&ContactMode::Sliding),
        "sticking rows expected, got {m:?}"
    );
    check(
        &scene,
        &start,
        1,
        &["young_modulus:block", "mass:cube"],
        1e-3,
        "cube landing",
    );
    check_adjoint(&scene, &start, &["young_modulus:block", "mass:cube"]);
}

#[test]
fn a_cube_landing_on_a_soft_block_slides() {
    let scene = landing(0.1, [0.2, 0.05, -0.1]);
    let start = before_landing(&scene);
    let m = modes(&scene, &start);
    assert!(
        m.contains(&ContactMode::Sliding),
        "sliding rows expected, got {m:?}"
    );
    check(
        &scene,
        &start,
        1,
        &["young_modulus:block", "mass:cube"],
        1e-3,
        "cube sliding",
    );
    check_adjoint(&scene, &start, &["young_modulus:block", "mass:cube"]);
}

#[test]
fn a_pad_attached_to_a_palm() {
    let scene = load("lift_pad.toml", &["robot.lift.kd=[5.0]"]);
    let start = diff_support::run_state(&scene, &scene.initial_state(), 30);
    check(
        &scene,
        &start,
        2,
        &["young_modulus:pad"],
        1e-3,
        "pad on palm",
    );
    check_adjoint(&scene, &start, &["young_modulus:pad"]);
}

/// The pad on the palm held by its PD, differentiated with respect to the PD's target
/// (`target:lift[0]`, m, a constant offset: kp times `tau:lift[0]`, the input never near the
/// 100 N effort limit) with E, against the forward simulator run with the target moved
/// (`Parameter::set`), and adjointness.
#[test]
fn a_pad_on_a_palm_and_the_pds_target() {
    let scene = load("lift_pad.toml", &["robot.lift.kd=[5.0]"]);
    let start = diff_support::run_state(&scene, &scene.initial_state(), 30);
    let names = ["young_modulus:pad", "target:lift[0]"];
    check(&scene, &start, 2, &names, 1e-3, "pad on palm, target");
    check_adjoint(&scene, &start, &names);
}

/// An attachment holds a body, it does not touch it: the hanging pad's NCP holds only the
/// bilateral rows of its attachment (so the pad is in an NCP), yet it has no contact force
/// λ_c and no contact-force tangent (the terms paper 004 Eq. 17 penalises), since it touches
/// nothing.
#[test]
fn an_attachment_is_not_a_contact_force() {
    let scene = load("lift_pad.toml", &[]);
    let mut state = diff_support::run_state(&scene, &scene.initial_state(), 5);
    let mut recorder = Recorder::new(&scene).unwrap();
    let (_, record) = recorder.step(&scene, &mut state).unwrap();
    let contact = record
        .contact(0)
        .expect("the attachment puts the pad in an NCP");
    assert!(contact.body_contact_count(0) > 0, "the attachment's rows");
    assert!(
        contact.body_lambda(0).is_empty(),
        "{:?}",
        contact.body_lambda(0)
    );
    let params = vec![Parameter::parse(&scene, "young_modulus:pad").unwrap()];
    let input = InputTangent {
        state: StateTangent::zeros(&scene),
        parameters: vec![1.0],
    };
    let mut derivative = StepDerivative::new(&scene);
    derivative.jvp(&scene, &record, &params, &[input]).unwrap();
    assert_eq!(derivative.contact_force_tangents(0).nrows(), 0);
}

/// The floor's friction coefficient (`friction:obstacle0`) under the rigid cube of
/// `cube_push.toml` sliding on it (sunk 0.1 mm, so the penetration correction stays on one
/// side of its kink at Φ = 0): the rigid rows against an obstacle take the obstacle's μ, and
/// their derivative with respect to it matches central differences over three steps, with
/// the state directions; adjointness.
#[test]
fn a_cube_sliding_on_the_floor_and_the_floors_friction() {
    let scene = load(
        "cube_push.toml",
        &["rigid_body.cube.position=[0.0, 0.0, 0.0499]"],
    );
    let start = diff_support::run_state(&scene, &scene.initial_state(), 2);
    let names = ["friction:obstacle0"];
    check(&scene, &start, 3, &names, 1e-3, "cube sliding on the floor");
    check_adjoint(&scene, &start, &names);
}

/// The cube of `cube_push.toml` at rest, tilted about x by 2 mrad so that its bottom face
/// straddles the floor (two corners 0.1 mm in, two 0.1 mm out), μ = 2: the penetration
/// correction's branch is shared by the four corners (`PenetrationCorrection::apply_shared`,
/// s = ½), so each corner's row depends on every corner's gap. One step's NCP converges, and
/// its JVP along a change of the start positions (which moves the gaps) matches central
/// differences (the start velocity's direction is left out: the sticking corners absorb it,
/// and JVP and difference are both round-off); the VJP is its adjoint.
#[test]
fn a_cube_straddling_the_floor() {
    let scene = load(
        "cube_push.toml",
        &[
            "rigid_body.cube.position=[0.0, 0.0, 0.05]",
            "rigid_body.cube.rotation=[0.002, 0.0, 0.0]",
            "rigid_body.cube.velocity=[0.0, 0.0, 0.0]",
            "contact.friction=2.0",
        ],
    );
    let start = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    let mut end = start.clone();
    assert!(stepper.step(&scene, &mut end).unwrap().contact_converged);
    let gaps: Vec<f64> = stepper.rigid().contacts().iter().map(|c| c.gap).collect();
    assert_eq!(gaps.len(), 4, "{gaps:?}");
    assert_eq!(gaps.iter().filter(|&&g| g < 0.0).count(), 2, "{gaps:?}");
    check_except(
        &scene,
        &start,
        1,
        &[],
        1e-3,
        "cube straddling the floor",
        &["v"],
    );
    check_adjoint(&scene, &start, &[]);
}

/// Over 20 steps of the pad hanging from the palm, the adjoint's gradient of a loss on the
/// final state (a random linear form on the soft and the rigid parts) with respect to E
/// equals the forward sensitivity's, and its initial-state cotangent equals the forward
/// mode's along a random initial direction, both to 1e-10: the two modes of the trajectory
/// agree through mixed steps.
#[test]
fn the_adjoint_of_a_pad_on_a_palm_run_matches_the_forward_sensitivities() {
    let scene = load("lift_pad.toml", &["robot.lift.kd=[5.0]"]);
    let start = diff_support::run_state(&scene, &scene.initial_state(), 10);
    let params = vec![Parameter::parse(&scene, "young_modulus:pad").unwrap()];
    let steps = 20;
    let mut rng = SplitMix64::new(3);
    let w = diff_support::random_tangent(&scene, &mut rng, 1.0, 1.0);
    // Forward: dE and a random initial direction.
    let u0 = diff_support::random_tangent(&scene, &mut rng, 1.0, 1.0);
    let mut recorder = Recorder::new(&scene).unwrap();
    let mut derivative = StepDerivative::new(&scene);
    let mut state = start.clone();
    let mut inputs = vec![
        InputTangent {
            state: StateTangent::zeros(&scene),
            parameters: vec![1.0],
        },
        InputTangent {
            state: u0.clone(),
            parameters: vec![0.0],
        },
    ];
    for _ in 0..steps {
        let (_, record) = recorder.step(&scene, &mut state).unwrap();
        let out = derivative.jvp(&scene, &record, &params, &inputs).unwrap();
        for (i, o) in inputs.iter_mut().zip(out) {
            i.state = o;
        }
        recorder.recycle(record);
    }
    let forward_e = w.dot(&inputs[0].state);
    let forward_u = w.dot(&inputs[1].state);
    // Reverse.
    let mut s = start.clone();
    let mut tape =
        record_trajectory(&scene, &mut s, steps, TapeOptions::default(), &mut |_| {}).unwrap();
    let result = adjoint(&scene, &mut tape, &params, &w).unwrap();
    let reverse_e = result.parameters[0];
    let reverse_u = result.state.dot(&u0);
    for (what, f, r) in [("E", forward_e, reverse_e), ("x0", forward_u, reverse_u)] {
        assert!(
            (f - r).abs() <= 1e-10 * f.abs().max(r.abs()),
            "d/d{what}: forward {f:e}, adjoint {r:e}"
        );
    }
}

/// The same pad on a palm driven by a constant force instead of a PD (`torque`, N, about the
/// pad's and the palm's weight): the derivatives with respect to that input, `tau:lift[0]`,
/// with the rest, against finite differences, and adjointness.
#[test]
fn a_pad_on_a_palm_pushed_by_a_constant_force() {
    let path = root().join("scenes/lift_pad.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("kp = [200.0]", "torque = [1.2]")
        .replace("kd = [20.0]", "")
        .replace("target = [0.0]", "")
        + "\n[contact]\ntolerance = 1e-12\nmax_iterations = 100000\n";
    let file = SceneFile::parse(path.to_str().unwrap(), &text, &[]).unwrap();
    file.validate().unwrap();
    let scene = Scene::build(&file, path.parent().unwrap()).unwrap();
    let start = diff_support::run_state(&scene, &scene.initial_state(), 10);
    let names = ["young_modulus:pad", "tau:lift[0]"];
    check(&scene, &start, 2, &names, 1e-3, "pad pushed");
    check_adjoint(&scene, &start, &names);
}

/// A tape's steps recomputed in the backward sweep (records not kept, or consumed by an
/// earlier sweep) repeat the recorded steps bit for bit: each starts from the warm starts and
/// screened-out candidates its recorded run had (`Stepper::memory`), not from whatever the
/// recorder's last step left. So the gradient of the cube resting on the block is the same
/// number from kept records, from records recomputed under a memory bound of 0, and from a
/// second sweep of the same tape.
#[test]
fn recomputed_steps_repeat_the_recorded_ones_bit_for_bit() {
    let scene = load("cube_on_block.toml", &[]);
    let params = diff_support::parameters(&scene, &["young_modulus:block", "mass:cube"]);
    let start = diff_support::warm_state(&scene, 20);
    let mut rng = SplitMix64::new(21);
    let w = diff_support::random_tangent(&scene, &mut rng, 1.0, 0.1);
    let sweep = |limit: usize, sweeps: usize| {
        let mut s = start.clone();
        let options = TapeOptions {
            memory_limit: limit,
            ..TapeOptions::default()
        };
        let mut tape = record_trajectory(&scene, &mut s, 15, options, &mut |_| {}).unwrap();
        let mut result = None;
        for _ in 0..sweeps {
            let r = adjoint(&scene, &mut tape, &params, &w).unwrap();
            result = Some((r.parameters, r.state.to_vec()));
        }
        result.unwrap()
    };
    let kept = sweep(usize::MAX, 1);
    assert!(
        kept.0.iter().all(|g| g.is_finite() && *g != 0.0),
        "{:?}",
        kept.0
    );
    for (what, other) in [
        ("records recomputed under a memory bound of 0", sweep(0, 1)),
        ("a second sweep of the same tape", sweep(usize::MAX, 2)),
    ] {
        let differing = |a: &[f64], b: &[f64]| a.iter().zip(b).filter(|(x, y)| x != y).count();
        assert!(
            other == kept,
            "{what}: {} of {} parameter gradients and {} of {} state cotangents differ ({:?} against {:?})",
            differing(&other.0, &kept.0),
            kept.0.len(),
            differing(&other.1, &kept.1),
            kept.1.len(),
            other.0,
            kept.0
        );
    }
}
