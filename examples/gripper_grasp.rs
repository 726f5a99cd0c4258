//! Contact-force control (paper 004 §IV-D, Eq. 17, Table I) on the servo Gripper of
//! `scenes/gripper_grasp.toml`: two soft fingers, each turned by its own angle-driven servo,
//! closing on a rigid cylinder between them. The optimised strategy minimises
//! α‖X_e‖² + β‖λ_c‖² step by step with the simulator's derivatives through the pinned servos
//! (both fingertips' offsets from the grasp origin and both fingers' contact forces with respect
//! to the two angle targets); the heuristic commands the maximal closing angle all along.
//! Prints both terms of the loss for both strategies (Table I), and writes their histories to
//! `out/examples/gripper_grasp/`.
//!
//! Run: `cargo run --release --example gripper_grasp`.

use std::path::Path;

use diffsoro::control::{
    ControlOptions, ForceLimiting, GraspReport, QpSettings, default_qp_solver, grasp,
};
use diffsoro::math::Vec3;
use diffsoro::scene::Scene;

fn main() -> diffsoro::Result<()> {
    run(Path::new("out/examples/gripper_grasp"))
}

/// Both strategies, their histories written into `out/grasp.csv`.
pub fn run(out: &Path) -> diffsoro::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scene = Scene::load(&root.join("scenes/gripper_grasp.toml"), &[])?;
    let (effectors, options, weights) = setup();
    let steps = scene.simulation.steps;
    let mut solver = default_qp_solver(QpSettings::default());
    let start = std::time::Instant::now();
    let optimised = grasp(
        &scene,
        &effectors,
        steps,
        options,
        Some(weights),
        solver.as_mut(),
    )?;
    let elapsed = start.elapsed().as_secs_f64();
    let heuristic = grasp(&scene, &effectors, steps, options, None, solver.as_mut())?;
    println!(
        "after {steps} steps (α = {} 1/m², β = {} 1/N²):",
        weights.alpha, weights.beta
    );
    let line = |name: &str, r: &GraspReport| {
        let d = r.effector_distance.last().copied().unwrap_or(0.0);
        let f = r.contact_force.last().copied().unwrap_or(0.0);
        let (td, tf) = r.final_terms(weights.alpha, weights.beta);
        let a = r.actuation.last().cloned().unwrap_or_default();
        println!(
            "{name:>10}: ‖X_e‖ = {:.2} mm, ‖λ_c‖ = {:.3} N, α‖X_e‖² = {td:.3e}, β‖λ_c‖² = {tf:.3e}, loss = {:.3e}, final angle targets {:.3?} rad",
            d * 1e3,
            f,
            td + tf,
            a
        );
    };
    line("heuristic", &heuristic);
    line("optimised", &optimised);
    println!(
        "optimised loop: {steps} steps in {elapsed:.2} s ({:.1} ms per step with derivatives and QP)",
        elapsed * 1e3 / steps as f64
    );
    std::fs::create_dir_all(out).map_err(|e| diffsoro::Error::io(out, e))?;
    let mut csv = String::from(
        "step,heuristic_distance_m,heuristic_force_N,heuristic_angle_rad,optimised_distance_m,optimised_force_N,optimised_angle_left_rad,optimised_angle_right_rad\n",
    );
    for s in 0..steps {
        csv.push_str(&format!(
            "{s},{},{},{},{},{},{},{}\n",
            heuristic.effector_distance[s],
            heuristic.contact_force[s],
            heuristic.actuation[s][0],
            optimised.effector_distance[s],
            optimised.contact_force[s],
            optimised.actuation[s][0],
            optimised.actuation[s][1]
        ));
    }
    let path = out.join("grasp.csv");
    std::fs::write(&path, csv).map_err(|e| diffsoro::Error::io(&path, e))?;
    println!("wrote {}", path.display());
    Ok(())
}

/// The grasp origin of both fingertips (the middle of the gripper, on the symmetry plane
/// x = 50 mm at the tips' height), the actuation limits and the weights of Eq. 17.
fn setup() -> (Vec<(&'static str, Vec3)>, ControlOptions, ForceLimiting) {
    let origin = Vec3::new(0.05, 0.0575, 0.01);
    let options = ControlOptions {
        // Below the servos' 0.005 rad per step, so the targets stay within reach.
        max_change: 0.004,
        regularisation: 1e-3,
    };
    let weights = ForceLimiting {
        alpha: 1.0,
        beta: 1e-4,
        regularisation: 1e-6,
    };
    (
        vec![("tip", origin), ("tip_right", origin)],
        options,
        weights,
    )
}
