//! The `diffsoro` command (layer 7): arguments → scene → job → JSON. No physics here.
//!
//! Every command prints its JSON result on stdout, human progress on stderr, and exits
//! non-zero with a one-line error on bad input (DESIGN.md §4).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use serde::Serialize;

/// diffsoro: a differentiable soft-robot simulator (tetrahedral FEM, exact frictional contact,
/// implicit differentiation). With no command, prints this help and runs the built-in demo.
#[derive(Parser)]
#[command(name = "diffsoro", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Summarise a tetrahedral mesh (.msh 2.2/4.1, .vtk, .vtu): counts, volume, bounding box,
    /// physical groups.
    Info {
        /// The mesh file; the format is detected from its content.
        mesh: PathBuf,
    },
    /// Run the built-in demo: the Trunk mesh of `meshes/trunk.msh`.
    Demo,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Info { mesh }) => info(&mesh),
        Some(Command::Demo) => demo(),
        None => {
            eprintln!("{}", Cli::command().render_help());
            eprintln!("\nNo command given: running the built-in demo (`diffsoro demo`).\n");
            demo()
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Prints `value` as JSON on stdout.
fn print_json(value: &impl Serialize) -> diffsoro::Result<()> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| diffsoro::Error::invalid("JSON output", e.to_string()))?;
    println!("{text}");
    Ok(())
}

fn info(mesh: &Path) -> diffsoro::Result<()> {
    let mesh = diffsoro::mesh::read_mesh(mesh)?;
    print_json(&mesh.info())
}

/// The project's own files (meshes, scenes) as shipped beside the sources.
fn project_file(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

fn demo() -> diffsoro::Result<()> {
    let path = project_file("meshes/trunk.msh");
    eprintln!("demo: reading the Trunk mesh {}", path.display());
    info(&path)?;
    eprintln!("demo: the summary above went to stdout (JSON, lengths in m, volume in m³)");
    Ok(())
}
