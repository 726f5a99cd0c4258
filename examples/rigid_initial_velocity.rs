//! Initial-condition estimation (paper 002 §V-A): a cube pushed along the floor
//! (`scenes/cube_push.toml`, 0.8 m/s along x and 0.3 along y) slides and stops; from where it
//! stopped, Levenberg–Marquardt on the rigid step's derivatives recovers the push from a wrong
//! guess (0.4, 0.6) m/s.
//!
//! `cargo run --release --example rigid_initial_velocity`

use diffsoro::calibrate::{LmResult, fit_initial_velocity};
use diffsoro::math::Vec3;
use diffsoro::scene::{Scene, Stepper};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    run()?;
    Ok(())
}

/// The observation, the fit and the printout; returns the fit.
pub fn run() -> Result<LmResult, Box<dyn std::error::Error>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/cube_push.toml");
    let scene = Scene::load(&path, &[])?;
    let steps = scene.simulation.steps;
    // The "observation": the scene as given.
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene)?;
    for _ in 0..steps {
        stepper.step(&scene, &mut state)?;
    }
    let q = &state.rigid[0].q;
    let observed = Vec3::new(q[0], q[1], q[2]);
    println!(
        "observed: the cube stopped at ({:.6}, {:.6}) m after {steps} steps",
        q[0], q[1]
    );
    let fit = fit_initial_velocity(&scene, "cube", &[0, 1], &[0.4, 0.6], observed, steps)?;
    for (k, it) in fit.history.iter().enumerate() {
        println!("iteration {k:2}: loss {:.3e} m²", it.loss);
    }
    println!(
        "recovered velocity ({:.9}, {:.9}) m/s (true 0.8, 0.3) in {} iterations",
        fit.params[0], fit.params[1], fit.iterations
    );
    Ok(fit)
}
