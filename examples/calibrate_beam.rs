//! Calibration without contact: a cantilever (`scenes/beam.toml`, 100 × 10 × 10 mm, clamped at
//! x = 0) sags under gravity with mass damping (`rayleigh_mass = 20`, so it nearly settles in
//! its 30 steps). An observation is simulated with known material values, then
//! Levenberg–Marquardt recovers them from a wrong guess: Young's modulus from 3× too small,
//! Poisson's ratio from 0.3, and both together.
//!
//! `cargo run --release --example calibrate_beam` (output in `out/examples/calibrate_beam/`).

#[path = "common/calibration_demo.rs"]
mod calibration_demo;

use std::path::Path;

use calibration_demo::{Case, project_file, run_case};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    run(Path::new("out/examples/calibrate_beam"))
}

/// The three fits of [`cases`], each writing its files into `out/CASE/`.
pub fn run(out: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let scene = project_file("scenes/beam.toml");
    let overrides = vec!["soft_body.beam.rayleigh_mass=20".to_string()];
    for case in cases() {
        run_case(&scene, &overrides, &case, &out.join(case.name))?;
    }
    Ok(())
}

/// E from 3× too small, ν from 0.3, and both.
pub fn cases() -> [Case<'static>; 3] {
    [
        Case {
            name: "young_modulus",
            params: &[("young_modulus:beam", 3.0e5, 1.0e5)],
        },
        Case {
            name: "poisson_ratio",
            params: &[("poisson_ratio:beam", 0.45, 0.3)],
        },
        Case {
            name: "both",
            params: &[
                ("young_modulus:beam", 3.0e5, 1.0e5),
                ("poisson_ratio:beam", 0.45, 0.3),
            ],
        },
    ]
}
