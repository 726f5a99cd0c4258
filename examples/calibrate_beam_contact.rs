//! Calibration with contact: a soft 200 × 20 × 20 mm beam settles under gravity on two capsule
//! supports (`scenes/beam_supports.toml`, frictional contact solved in every step and
//! differentiated through). An observation is simulated with known material values, then
//! Levenberg–Marquardt recovers them from a wrong guess: Young's modulus from 3× too large,
//! Poisson's ratio from 0.3, and both together.
//!
//! `cargo run --release --example calibrate_beam_contact` (output in
//! `out/examples/calibrate_beam_contact/`).

#[path = "common/calibration_demo.rs"]
mod calibration_demo;

use calibration_demo::{Case, project_file, run_case};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scene = project_file("scenes/beam_supports.toml");
    let out = std::path::PathBuf::from("out/examples/calibrate_beam_contact");
    for case in [
        Case {
            name: "young_modulus",
            params: &[("young_modulus:beam", 1.5e6, 4.5e6)],
        },
        Case {
            name: "poisson_ratio",
            params: &[("poisson_ratio:beam", 0.45, 0.3)],
        },
        Case {
            name: "both",
            params: &[
                ("young_modulus:beam", 1.5e6, 4.5e6),
                ("poisson_ratio:beam", 0.45, 0.3),
            ],
        },
    ] {
        run_case(&scene, &[], &case, &out.join(case.name))?;
    }
    Ok(())
}
