//! The Finger pressing a rigid block by QP inverse control, with contact in the loop
//! (`scenes/finger_obstacle.toml`: the block's bottom face is 3 mm above the finger's top).
//!
//! The effector `tip` is asked to rise `DEPTH` beyond where the block lets it go: the
//! controller pulls the cable until the finger presses the block, the contact forces hold the
//! tip, and the tension settles where the QP's prediction and the contact agree (or at the
//! cable's maximum). `cargo run --release --example finger_press` writes
//! `out/examples/finger_press/` (`control.json`, `error.svg`/`.csv`, `actuation.svg`/`.csv`,
//! and `contacts.csv`: per step the number of contacts and the total normal force, N).

use std::fmt::Write as _;
use std::path::Path;

use diffsoro::control::{
    ControlOptions, ControlReport, InverseController, QpSettings, default_qp_solver,
};
use diffsoro::diff::Recorder;
use diffsoro::math::Vec3;
use diffsoro::scene::Scene;

fn main() -> diffsoro::Result<()> {
    run(Path::new("out/examples/finger_press"))
}

/// The 150 control steps, the report and `contacts.csv` written into `out`.
pub fn run(out: &Path) -> diffsoro::Result<()> {
    let mut scene = Scene::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/finger_obstacle.toml"),
        &[
            "soft_body.finger.cable.cable.force=0".to_string(),
            // The cable's bound, stated: control takes bounds from the scene only.
            "soft_body.finger.cable.cable.max_force=3".to_string(),
        ],
    )?;
    let options = ControlOptions {
        max_change: 0.05,
        regularisation: 1e-3,
    };
    let mut controller = InverseController::new(&scene, "tip", options)?;
    controller.apply(&mut scene)?;
    let mut recorder = Recorder::new(&scene)?;
    let mut state = scene.initial_state();
    let start = controller.effector_position(&state);
    // 10 mm up (+y) from the rest tip: the tip meets the block about 3 mm up, so the target
    // lies 7 mm inside the block.
    let target = start + Vec3::new(0.0, 0.010, 0.0);
    let mut solver = default_qp_solver(QpSettings::default());
    let (mut errors, mut actuation) = (Vec::new(), Vec::new());
    let mut path: Vec<Vec<f64>> = Vec::new();
    let mut csv = String::from("step,contacts,normal_force_N,tip_y_m\n");
    let mut position = start;
    for step in 1..=150 {
        actuation.push(controller.actuation().to_vec());
        let (_, record) = recorder.step(&scene, &mut state)?;
        position = controller.effector_position(&state);
        errors.push((position - target).norm());
        path.push(position.as_slice().to_vec());
        let (count, normal) = record.contact(0).map_or((0, 0.0), |c| {
            // λ per contact in its frame [t₁, t₂, n]: the normal component is the third.
            let normal: f64 = c.lambda().chunks(3).map(|l| l[2]).sum();
            (c.len(), normal)
        });
        writeln!(csv, "{step},{count},{normal},{}", position.y).unwrap();
        let lin = controller.linearise(&scene, &record, &state)?;
        controller.update(&lin, target, solver.as_mut())?;
        controller.apply(&mut scene)?;
        recorder.recycle(record);
        if step % 25 == 0 {
            println!(
                "step {step}: tension {:.3} N, tip y {:.2} mm (target {:.2} mm), {count} contacts, normal force {normal:.3} N",
                actuation.last().unwrap()[0],
                position.y * 1e3,
                target.y * 1e3
            );
        }
    }
    let report = ControlReport {
        target: target.as_slice().to_vec(),
        final_position: position.as_slice().to_vec(),
        final_error: (position - target).norm(),
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
    std::fs::write(out.join("contacts.csv"), csv)
        .map_err(|e| diffsoro::Error::io(out.join("contacts.csv"), e))?;
    println!("wrote {}", out.display());
    Ok(())
}
