//! Contact inverse dynamics (paper 002 §V-B, Eq. 15): the quadruped of
//! `scenes/quadruped_standing.toml` settles on its four feet under its PD; stopped there, which
//! joint torques keep it still through one step, contact forces included? Gauss–Newton on
//! the step's Jacobian ∂v⁺/∂τ, from τ = 0.
//!
//! `cargo run --release --example contact_inverse_dynamics`

use diffsoro::control::{InverseDynamicsResult, contact_inverse_dynamics};
use diffsoro::scene::{Scene, Stepper};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    run()?;
    Ok(())
}

/// The settling, the Gauss–Newton solve and the printout; returns the solve.
pub fn run() -> Result<InverseDynamicsResult, Box<dyn std::error::Error>> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/quadruped_standing.toml");
    let overrides = [
        "contact.tolerance=1e-12".to_string(),
        "contact.max_iterations=100000".to_string(),
    ];
    let scene = Scene::load(&path, &overrides)?;
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene)?;
    for _ in 0..1000 {
        stepper.step(&scene, &mut state)?;
    }
    state.rigid[0].v.fill(0.0);
    let nv = scene.rigid.systems[0].nv();
    let result = contact_inverse_dynamics(&scene, "dog", &state, &vec![0.0; nv], 1e-5, 15)?;
    for (k, r) in result.history.iter().enumerate() {
        println!("iteration {k:2}: max |v⁺| = {r:.3e}");
    }
    println!("joint torques (N·m), leg by leg:");
    for leg in result.tau[6..].chunks(3) {
        println!("  {:8.4} {:8.4} {:8.4}", leg[0], leg[1], leg[2]);
    }
    Ok(result)
}
