//! The Trunk reaching a sequence of targets by QP inverse control (paper 004 §IV-D), with
//! the wall time of each control step (linearisation + QPs).
//!
//! `cargo run --release --example trunk_targets` writes `out/examples/trunk_targets/`:
//! `control.json`, `error.svg`/`.csv` (distance to the current target per step) and
//! `actuation.svg`/`.csv` (the 8 cable tensions per step), and prints the timing.

use std::path::Path;
use std::time::Instant;

use diffsoro::control::{
    ControlOptions, ControlReport, InverseController, QpSettings, default_qp_solver,
};
use diffsoro::diff::Recorder;
use diffsoro::math::Vec3;
use diffsoro::scene::Scene;

/// Rest positions of the tip (m) under tensions the Trunk settles with (c2 + c6 at 0.035 N,
/// c3 + c7 at 0.035 N, c1 at 0.045 N; `diffsoro simulate --static --set`, rounded to 0.1 mm),
/// visited in turn.
pub const TARGETS: [[f64; 3]; 3] = [
    [-0.0111, -0.1512, 0.0911],
    [-0.0013, -0.1536, 0.0842],
    [-0.0015, -0.1493, 0.0983],
];

/// Steps per target (the Trunk first falls from straight to its sag, about 3 s).
pub const STEPS_PER_TARGET: usize = 300;

fn main() -> diffsoro::Result<()> {
    run(Path::new("out/examples/trunk_targets"))
}

/// The targets in turn ([`TARGETS`], [`STEPS_PER_TARGET`] steps each), the report (its error
/// history one entry per step) written into `out`.
pub fn run(out: &Path) -> diffsoro::Result<()> {
    // The cables' bound, stated (control takes bounds from the scene only): 0.3 N each.
    let caps: Vec<String> = (1..=8)
        .map(|i| format!("soft_body.trunk.cable.c{i}.max_force=0.3"))
        .collect();
    let mut scene = Scene::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/trunk.toml"),
        &caps,
    )?;
    let targets = TARGETS.map(|t| Vec3::new(t[0], t[1], t[2]));
    let steps_per_target = STEPS_PER_TARGET;
    let mut controller = InverseController::new(&scene, "tip", ControlOptions::default())?;
    controller.apply(&mut scene)?;
    let mut recorder = Recorder::new(&scene)?;
    let mut state = scene.initial_state();
    let mut solver = default_qp_solver(QpSettings::default());
    let (mut errors, mut actuation, mut timings) = (Vec::new(), Vec::new(), Vec::new());
    let mut path: Vec<Vec<f64>> = Vec::new();
    let mut position = controller.effector_position(&state);
    for (t, target) in targets.iter().enumerate() {
        for _ in 0..steps_per_target {
            actuation.push(controller.actuation().to_vec());
            let (_, record) = recorder.step(&scene, &mut state)?;
            position = controller.effector_position(&state);
            errors.push((position - target).norm());
            path.push(position.as_slice().to_vec());
            let start = Instant::now();
            let lin = controller.linearise(&scene, &record, &state)?;
            controller.update(&lin, *target, solver.as_mut())?;
            timings.push(start.elapsed().as_secs_f64() * 1e3);
            controller.apply(&mut scene)?;
            recorder.recycle(record);
        }
        println!(
            "target {t} {:?} m: error after {steps_per_target} steps {:.3} mm",
            target.as_slice(),
            errors.last().unwrap() * 1e3
        );
    }
    let report = ControlReport {
        target: targets.last().unwrap().as_slice().to_vec(),
        final_position: position.as_slice().to_vec(),
        final_error: (position - targets.last().unwrap()).norm(),
        error_history: errors,
        position_history: path,
        actuation_history: actuation,
        actuators: controller.actuators().to_vec(),
        actuator_units: diffsoro::control::actuation_units(&scene, controller.actuators()),
        tracking_rms: None,
        grasp: None,
        joint: None,
    };
    report.write_outputs(out, diffsoro::chart::ScaleChoice::Auto)?;
    timings.sort_by(f64::total_cmp);
    println!(
        "control step (linearisation + QPs): median {:.2} ms, 95th percentile {:.2} ms, max {:.2} ms over {} steps",
        timings[timings.len() / 2],
        timings[timings.len() * 95 / 100],
        timings[timings.len() - 1],
        timings.len()
    );
    println!("wrote {}", out.display());
    Ok(())
}
