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

use std::path::Path;

use calibration_demo::{Case, project_file, run_case};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    run(Path::new("out/examples/calibrate_beam_contact"))
}

/// The three fits of [`cases`], each writing its files into `out/CASE/`.
pub fn run(out: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let scene = project_file("scenes/beam_supports.toml");
    for case in cases() {
        run_case(&scene, &[], &case, &out.join(case.name))?;
    }
    Ok(())
}

/// E from 3× too large, ν from 0.3, and both.
pub fn cases() -> [Case<'static>; 3] {
    [
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
    ]
}
