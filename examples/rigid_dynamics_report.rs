//! Prints the dynamics report (docs/outputs.md) of a URDF robot for one case as JSON:
//! `cargo run --release --example rigid_dynamics_report -- URDF CASE.json`.
//! Used by `urdf/check_with_pinocchio.py` to compare against Pinocchio offline.

use diffsoro::rigid::{DynamicsCase, dynamics_report};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        return Err("usage: rigid_dynamics_report URDF CASE.json".into());
    }
    let case: DynamicsCase = serde_json::from_str(&std::fs::read_to_string(&args[2])?)?;
    let report = dynamics_report(std::path::Path::new(&args[1]), &case)?;
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}
