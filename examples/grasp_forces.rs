//! Contact-force control (paper 004 §IV-D, Eq. 17, Table I) on the cable Finger closing on the
//! rigid block of `scenes/finger_obstacle.toml` (one finger of a symmetric gripper): the
//! optimised strategy minimises α‖X_e‖² + β‖λ_c‖² step by step with the simulator's
//! derivatives (effector and contact forces with respect to the cable tension); the heuristic
//! pulls the cable at its maximal tension all along. Prints both terms of the loss for both,
//! and writes their histories to `out/examples/grasp_forces/`.
//!
//! Run: `cargo run --release --example grasp_forces`.

use std::path::Path;

use diffsoro::control::{
    ControlOptions, ForceLimiting, GraspReport, QpSettings, default_qp_solver, grasp,
};
use diffsoro::math::Vec3;
use diffsoro::scene::Scene;

fn main() -> diffsoro::Result<()> {
    run(Path::new("out/examples/grasp_forces"))
}

/// Both strategies, their histories written into `out/grasp.csv`.
pub fn run(out: &Path) -> diffsoro::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The cable's bound, stated: control takes bounds from the scene only.
    let scene = Scene::load(
        &root.join("scenes/finger_obstacle.toml"),
        &["soft_body.finger.cable.cable.max_force=3".to_string()],
    )?;
    // The grasp origin: 10 mm up from the rest tip, inside the block the finger closes on.
    let tip = scene.body_actuation(0).effectors[0]
        .point
        .position(scene.bodies[0].rest_positions());
    let origin = tip + Vec3::new(0.0, 0.010, 0.0);
    let options = ControlOptions {
        max_change: 0.05,
        regularisation: 1e-3,
    };
    // Weights balancing 10 mm of distance against 0.1 N of contact force (α·0.01² = β·0.1²).
    let weights = ForceLimiting {
        alpha: 1.0,
        beta: 1e-2,
        regularisation: 1e-4,
    };
    let steps = 150;
    let mut solver = default_qp_solver(QpSettings::default());
    let start = std::time::Instant::now();
    let optimised = grasp(
        &scene,
        &[("tip", origin)],
        steps,
        options,
        Some(weights),
        solver.as_mut(),
    )?;
    let elapsed = start.elapsed().as_secs_f64();
    let heuristic = grasp(
        &scene,
        &[("tip", origin)],
        steps,
        options,
        None,
        solver.as_mut(),
    )?;
    let line = |name: &str, r: &GraspReport| {
        let d = r.effector_distance.last().copied().unwrap_or(0.0);
        let f = r.contact_force.last().copied().unwrap_or(0.0);
        println!(
            "{name:>10}: ‖X_e‖ = {:.2} mm, ‖λ_c‖ = {:.1} mN, loss α‖X_e‖² + β‖λ_c‖² = {:.3e}, final tension {:.3} N",
            d * 1e3,
            f * 1e3,
            r.final_loss(weights.alpha, weights.beta),
            r.actuation.last().map_or(0.0, |a| a[0])
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
        "step,heuristic_distance_m,heuristic_force_N,heuristic_tension_N,optimised_distance_m,optimised_force_N,optimised_tension_N\n",
    );
    for s in 0..steps {
        csv.push_str(&format!(
            "{s},{},{},{},{},{},{}\n",
            heuristic.effector_distance[s],
            heuristic.contact_force[s],
            heuristic.actuation[s][0],
            optimised.effector_distance[s],
            optimised.contact_force[s],
            optimised.actuation[s][0]
        ));
    }
    let path = out.join("grasp.csv");
    std::fs::write(&path, csv).map_err(|e| diffsoro::Error::io(&path, e))?;
    println!("wrote {}", path.display());
    Ok(())
}
