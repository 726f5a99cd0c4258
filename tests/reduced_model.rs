//! Reduced models (`diffsoro reduce`, `--reduced`): the reduced step against the full step on
//! a complete basis (a Galerkin projection on every degree of freedom with every element at
//! weight 1 is the full step), the reduced statics against the full statics, the training
//! error's bound by the basis's own projection error, and bad input.

use diffsoro::math::DMat;
use diffsoro::reduce::fingerprint::fingerprint;
use diffsoro::reduce::model::{FORMAT, VERSION};
use diffsoro::reduce::{ReducedModel, ReducedStepper, TrainingError};
use diffsoro::scene::{RunStart, Scene, Stepper};

use crate::cli_support::{run, run_json, scratch};
use crate::diff_support::clamped_beam;

/// The damped clamped beam with its cable at 0.3 N.
fn beam(law: &str) -> Scene {
    clamped_beam::build(
        &clamped_beam::text(law, clamped_beam::DAMPED, clamped_beam::CABLE_C),
        &[],
    )
}

/// The complete reduced model of `scene`'s body: V = I over the free DOFs, ū = 0, every
/// element at weight 1.
fn complete(scene: &Scene) -> ReducedModel {
    let body = &scene.bodies[0];
    let n = body.pattern().dofs().n_reduced();
    let ne = body.elements().len();
    ReducedModel {
        format: FORMAT.into(),
        version: VERSION,
        body: body.name().into(),
        fingerprint: fingerprint(body, scene.body_actuation(0)),
        dofs: n,
        modes: n,
        basis: DMat::identity(n, n).as_slice().to_vec(),
        offset: vec![0.0; n],
        elements: (0..ne).collect(),
        weights: vec![1.0; ne],
        q_range: vec![[-1.0, 1.0]; n],
        training: Vec::new(),
        training_error: TrainingError::default(),
        offline_s: 0.0,
    }
}

#[test]
fn on_a_complete_basis_the_reduced_step_is_the_full_step() {
    for law in ["corotational", "neo_hookean"] {
        let scene = beam(law);
        let model = complete(&scene);
        let mut full = scene.initial_state();
        let mut stepper = Stepper::new(&scene).unwrap();
        let mut reduced = ReducedStepper::new(&scene, &model).unwrap();
        let mut r = reduced.project(&scene, &full);
        let mut state = full.clone();
        let mut forces = state.actuator_forces[0].clone();
        let mut largest: f64 = 0.0;
        for _ in 0..40 {
            stepper.step(&scene, &mut full).unwrap();
            reduced.step(&scene, &mut r, &mut forces).unwrap();
            reduced.expand(&scene, &r, &mut state);
            for (a, b) in full.bodies[0]
                .positions
                .iter()
                .zip(&state.bodies[0].positions)
            {
                largest = largest.max((a - b).norm());
            }
        }
        // The tip moves millimetres; the two steps differ by round-off (one Cholesky of the
        // sparse A against one dense Cholesky of VᵀAV = A).
        let tip = full.bodies[0]
            .positions
            .iter()
            .zip(scene.bodies[0].rest_positions())
            .map(|(x, x0)| (x - x0).norm())
            .fold(0.0, f64::max);
        assert!(tip > 1e-3, "{law}: the beam moved {tip} m");
        assert!(largest < 1e-9 * tip, "{law}: {largest} m against {tip} m");
    }
}

#[test]
fn on_a_complete_basis_the_reduced_statics_are_the_full_statics() {
    let scene = beam("corotational");
    let model = complete(&scene);
    let (full, _) = RunStart::Static.state(&scene).unwrap();
    let mut reduced = ReducedStepper::new(&scene, &model).unwrap();
    let mut r = reduced.project(&scene, &scene.initial_state());
    let forces = full.actuator_forces[0].clone();
    reduced.settle(&scene, &mut r, &forces).unwrap();
    let mut state = full.clone();
    reduced.expand(&scene, &r, &mut state);
    let sag = full.bodies[0]
        .positions
        .iter()
        .zip(scene.bodies[0].rest_positions())
        .map(|(x, x0)| (x - x0).norm())
        .fold(0.0, f64::max);
    let largest = full.bodies[0]
        .positions
        .iter()
        .zip(&state.bodies[0].positions)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    assert!(largest < 1e-8 * sag, "{largest} m against a sag of {sag} m");
}

/// A command log of the beam's cable: a ramp to `peak` N and a sine about half of it.
fn cable_log(peak: f64, hz: f64) -> String {
    let mut text = String::from("time,c\n");
    for k in 0..=150 {
        let t = k as f64 * 0.01;
        let c = if t < 0.3 {
            peak * t / 0.3
        } else {
            peak * (0.5 + 0.5 * (std::f64::consts::TAU * hz * (t - 0.3)).cos())
        };
        text.push_str(&format!("{t},{c}\n"));
    }
    text
}

#[test]
fn reduce_writes_a_model_whose_training_error_is_no_better_than_its_basis() {
    let dir = scratch("train");
    let scene = dir.join("beam.toml");
    let text = clamped_beam::text("corotational", clamped_beam::DAMPED, clamped_beam::CABLE_C)
        .replace(
            "beam_1.msh",
            &crate::cli_support::root()
                .join("meshes/beam_1.msh")
                .display()
                .to_string(),
        );
    std::fs::write(&scene, text).unwrap();
    let train = dir.join("train.csv");
    std::fs::write(&train, cable_log(0.6, 2.0)).unwrap();
    let out = dir.join("beam.reduced");
    let (scene, train, out) = (
        scene.to_str().unwrap(),
        train.to_str().unwrap(),
        out.to_str().unwrap(),
    );
    let report = run_json(&[
        "reduce", scene, "--train", train, "--modes", "6", "--out", out,
    ]);
    assert_eq!(report["modes"], 6);
    let e = &report["training_error"];
    let (rms, projection) = (
        e["position_rms"].as_f64().unwrap(),
        e["projection_rms"].as_f64().unwrap(),
    );
    // Every reduced state lies in ū + span V, whose closest point to a snapshot is its
    // projection: the run's error cannot be smaller.
    assert!(
        rms >= projection && projection > 0.0,
        "{rms} < {projection}"
    );
    assert!(e["force"].as_f64().unwrap() <= 0.01);
    let model = ReducedModel::read(std::path::Path::new(out)).unwrap();
    assert_eq!(
        model.elements.len(),
        report["elements_kept"].as_u64().unwrap() as usize
    );
    // The model steps a run of other commands, with every node in its outputs.
    let held = dir.join("held.csv");
    std::fs::write(&held, cable_log(0.4, 3.0)).unwrap();
    let fin = run_json(&[
        "simulate",
        scene,
        "--inputs",
        held.to_str().unwrap(),
        "--reduced",
        out,
    ]);
    assert_eq!(fin["inputs"]["steps"], 150);
    // A scene whose cable runs elsewhere is not the model's: refused, naming the fingerprint.
    let other = dir.join("other.toml");
    std::fs::write(
        &other,
        std::fs::read_to_string(scene)
            .unwrap()
            .replace("0.004]", "0.003]"),
    )
    .unwrap();
    let refused = run(&["simulate", other.to_str().unwrap(), "--reduced", out]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && err.contains("fingerprint"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn bad_reduce_input_is_one_line_naming_it_and_writes_nothing() {
    let dir = scratch("bad");
    let model = dir.join("m.reduced");
    let m = model.to_str().unwrap();
    // A missing training log.
    let out = run(&[
        "reduce",
        "scenes/trunk.toml",
        "--train",
        "missing.csv",
        "--out",
        m,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("missing.csv"),
        "{err}"
    );
    // A folder that does not exist.
    let out = run(&[
        "reduce",
        "scenes/trunk.toml",
        "--train",
        "scenes/trunk_reach.csv",
        "--out",
        "no/such/m.reduced",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("no/such"), "{err}");
    // A scene with contact is not taken.
    let out = run(&[
        "reduce",
        "scenes/finger_obstacle.toml",
        "--train",
        "scenes/finger_pull.csv",
        "--out",
        m,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("contact"), "{err}");
    // A file that is not a model, named.
    std::fs::write(&model, "{\"format\": \"something else\"}").unwrap();
    let out = run(&[
        "simulate",
        "scenes/trunk.toml",
        "--reduced",
        m,
        "--steps",
        "2",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("m.reduced") && err.contains("not a reduced model"),
        "{err}"
    );
    // --reduced with what is not built on reduced models yet.
    let out = run(&["simulate", "scenes/trunk.toml", "--reduced", m, "--static"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--static"), "{err}");
    // The failed runs left the file as it was and nothing beside it.
    assert_eq!(
        std::fs::read_to_string(&model).unwrap(),
        "{\"format\": \"something else\"}"
    );
    assert_eq!(std::fs::read_dir(&*dir).unwrap().count(), 1);
}
