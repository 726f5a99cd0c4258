//! The `diffsoro` command (layer 8): arguments → scene → job → JSON. No physics here.
//!
//! Every command prints its JSON result on stdout, human progress on stderr, and exits
//! non-zero with a one-line error on bad input (docs/cli.md).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use diffsoro::rigid::{DynamicsCase, dynamics_report};
use diffsoro::scene::{FinalState, FrameSeries, RunStart, Scene, Stepper};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

mod bench_command;
mod calibrate_command;
mod control_command;
mod cpu_id;
mod simulate_command;
use control_command::{ControlFlags, control};
use simulate_command::{InputsFlags, MarkerFlags, simulate};
mod bench_reduced;
mod gradient_command;
mod optimize_command;
mod reduce_command;
use gradient_command::ContactGradient;
mod out_folder;
use out_folder::with_out_folder;
mod cli;
mod view_frames;
use cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The command runs on a worker of a rayon pool (as many threads as RAYON_NUM_THREADS or
    // the cores): each parallel loop of a step then starts on the thread that runs the step,
    // instead of being handed from the main thread to the pool and waited for (a futex wake
    // and sleep per loop: a tenth of a small contact step on one thread).
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(Command::Bench {
        threads: Some(n), ..
    }) = &cli.command
    {
        pool = pool.num_threads(usize::from(*n));
    }
    let result = match pool.build() {
        Ok(pool) => pool.install(|| run(cli)),
        Err(_) => run(cli),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the command of `cli`.
fn run(cli: Cli) -> diffsoro::Result<()> {
    match cli.command {
        Some(Command::Info { mesh }) => info(&mesh),
        Some(Command::Simulate {
            scene,
            steps,
            out,
            view,
            markers_out,
            marker_unit,
            observed_markers,
            compare,
            register,
            set,
            statics,
            strict,
            sensitivity,
            gradient_of,
            contact_gradient,
            inputs,
            start,
            reduced,
        }) => simulate(
            &scene,
            steps,
            out.as_deref(),
            &set,
            statics,
            strict,
            &sensitivity,
            gradient_of.as_deref(),
            contact_gradient,
            MarkerFlags {
                out: markers_out.as_deref(),
                unit: marker_unit,
                observed: observed_markers.as_deref(),
                compare: compare.as_deref(),
                register: register.as_deref(),
            },
            InputsFlags {
                inputs: inputs.as_deref(),
                start: start.map(RunStart::from),
                reduced: reduced.as_deref(),
            },
        )
        .and_then(|f| {
            if let (true, Some(dir)) = (view, out.as_deref()) {
                write_run_view(dir)?;
            }
            print_json_compact(&f)
        }),
        Some(Command::Calibrate {
            scene,
            observed,
            params,
            init,
            bounds,
            restarts,
            out,
            error_scale,
            view,
            set,
            inputs,
            start,
            trial,
            marker_unit,
            compare,
            register,
        }) => calibrate_command::calibrate(
            &scene,
            calibrate_command::Observed::new(
                observed.as_deref(),
                &trial,
                calibrate_command::TrialFlags {
                    unit: marker_unit.unwrap_or_default(),
                    compare: compare.as_deref(),
                    register: register.as_deref(),
                },
            ),
            &calibrate_command::CalibrateFlags {
                params: &params,
                bounds: &bounds,
                init: &init,
                restarts,
                error_scale,
                view,
                inputs: InputsFlags {
                    inputs: inputs.as_deref(),
                    start: start.map(RunStart::from),
                    reduced: None,
                },
            },
            out.as_deref(),
            &set,
        ),
        Some(Command::Control {
            scene,
            effector,
            target,
            target_path,
            settle,
            plant_set,
            measurement_noise,
            seed,
            steps,
            out,
            error_scale,
            set,
            max_force,
            contact_weight,
            effector_weight,
            max_change,
            regularisation,
            heuristic,
            static_mode,
            view,
        }) => control(
            &scene,
            &ControlFlags {
                effectors: &effector,
                targets: &target,
                steps,
                set: &set,
                max_force: &max_force,
                error_scale,
                view,
                regularisation,
                max_change,
                target_paths: &target_path,
                settle,
                plant_set: &plant_set,
                measurement_noise,
                seed,
            },
            out.as_deref(),
            contact_weight.map(|beta| (effector_weight, beta, max_change, heuristic)),
            heuristic,
            static_mode,
        ),
        Some(Command::Optimize {
            scene,
            effector,
            waypoints,
            knots,
            effort,
            steps,
            start,
            actuators,
            iterations,
            out,
            view,
            set,
        }) => optimize_command::optimize(
            &scene,
            &optimize_command::OptimizeFlags {
                effector: &effector,
                waypoints: &waypoints,
                knots,
                effort,
                steps,
                start: start.map_or(RunStart::Static, RunStart::from),
                actuators: &actuators,
                iterations,
                set: &set,
                view,
            },
            out.as_deref(),
        ),
        Some(Command::Bench {
            scene,
            steps,
            set,
            strict,
            threads: _,
            inputs,
            start,
            reduced,
        }) => {
            let inputs = InputsFlags {
                inputs: inputs.as_deref(),
                start: start.map(RunStart::from),
                reduced: None,
            };
            match reduced {
                Some(model) => bench_reduced::bench_reduced(&scene, &model, steps, &set, inputs),
                None => bench_command::bench(&scene, steps, &set, strict, inputs),
            }
        }
        Some(Command::Reduce {
            scene,
            train,
            modes,
            basis_tolerance,
            force_tolerance,
            start,
            out,
            set,
        }) => reduce_command::reduce(
            &scene,
            &reduce_command::ReduceFlags {
                train: &train,
                modes,
                basis_tolerance,
                force_tolerance,
                start: start.map(RunStart::from),
                set: &set,
            },
            &out,
        ),
        Some(Command::Dynamics { urdf, case }) => dynamics(&urdf, &case),
        Some(Command::View { dir, out }) => view(&dir, out.as_deref()),
        Some(Command::Demo { set }) => demo(&set),
        None => {
            eprintln!("{}", Cli::command().render_help());
            eprintln!("\nNo command given: running the built-in demo (`diffsoro demo`).\n");
            demo(&[])
        }
    }
}

/// Writes the viewer page of the run in `dir` and prints a summary of it as JSON.
fn view(dir: &Path, out: Option<&Path>) -> diffsoro::Result<()> {
    let (page, run) = diffsoro::view::write_view(dir, out)?;
    print_json(&serde_json::json!({
        "page": page,
        "frames": run.times.len(),
        "bodies": run.bodies.iter().map(|b| &b.name).collect::<Vec<_>>(),
    }))?;
    eprintln!("wrote {}: open it in a browser", page.display());
    Ok(())
}

/// Simulates `steps` steps of `scene` from its initial state and writes the frames, `.pvd`
/// files and `final.json` into `dir` as `simulate --out` does (staged, all or nothing); with
/// `inputs`, the run under those logged commands from the scene's initial state (to the log's
/// last row, as `simulate --inputs --start scene`) instead.
fn write_frames(
    scene: &Scene,
    steps: usize,
    dir: &Path,
    inputs: Option<&diffsoro::scene::CommandLog>,
) -> diffsoro::Result<()> {
    let mut scene = scene.clone();
    let mut frames = FrameSeries::create(dir, &scene)?;
    let (mut run, mut stepper, mut state, steps) = match inputs {
        Some(log) => {
            let (run, state) =
                diffsoro::scene::CommandRun::start(&mut scene, log.clone(), None, RunStart::Scene)?;
            let steps = run.steps();
            (Some(run), None, state, steps)
        }
        None => (
            None,
            Some(Stepper::new(&scene)?),
            scene.initial_state(),
            steps,
        ),
    };
    frames.write(&scene, &state)?;
    let bar = progress(steps as u64, "simulate (fitted values)");
    for _ in 0..steps {
        let report = match (&mut run, &mut stepper) {
            (Some(run), _) => run.step(&mut scene, &mut state)?,
            (None, Some(stepper)) => stepper.step(&scene, &mut state)?,
            (None, None) => unreachable!("a run or a stepper"),
        };
        frames.write_with_contacts(&scene, &state, Some(&report.contact))?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    let mut final_state = FinalState::new(&scene, &state);
    final_state.inputs = run.as_ref().map(diffsoro::scene::CommandRun::output);
    let json = serde_json::to_vec(&final_state)
        .map_err(|e| diffsoro::Error::invalid("final state", e.to_string()))?;
    frames.finish(&scene, &json)?;
    Ok(())
}

/// Writes `DIR/view.html` for the run just written into `dir` and says where it is on stderr.
fn write_run_view(dir: &Path) -> diffsoro::Result<()> {
    let (page, _) = diffsoro::view::write_view(dir, None)?;
    eprintln!(
        "wrote {}: the run in 3D, open it in a browser",
        page.display()
    );
    Ok(())
}

/// Prints `value` as JSON on stdout.
fn print_json(value: &impl Serialize) -> diffsoro::Result<()> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| diffsoro::Error::invalid("JSON output", e.to_string()))?;
    write_stdout(&text)
}

/// Writes `text` and a newline on stdout; a closed pipe (`| head`) is not an error.
fn write_stdout(text: &str) -> diffsoro::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(diffsoro::Error::io("stdout", e))
        }
        _ => Ok(()),
    }
}

/// Prints `value` as one-line JSON on stdout (large outputs: final states).
fn print_json_compact(value: &impl Serialize) -> diffsoro::Result<()> {
    let text = serde_json::to_string(value)
        .map_err(|e| diffsoro::Error::invalid("JSON output", e.to_string()))?;
    write_stdout(&text)
}

fn info(path: &Path) -> diffsoro::Result<()> {
    let mesh = diffsoro::mesh::read_mesh(path)?;
    if mesh.tetrahedra().is_empty() {
        return Err(diffsoro::Error::invalid(
            path.display().to_string(),
            format!(
                "the mesh has no tetrahedra ({} nodes, {} triangles): diffsoro needs a tetrahedral volume mesh",
                mesh.node_count(),
                mesh.triangles().len()
            ),
        ));
    }
    if let (count @ 1.., Some(first)) = mesh.reoriented() {
        eprintln!(
            "warning: {}: {count} tetrahedra had a negative signed volume and were re-oriented (first: tetrahedron {first})",
            path.display()
        );
    }
    print_json(&mesh.info())
}

/// Loads a scene (`Scene::load`) and prints its warnings on stderr, once each.
fn load_scene(path: &Path, set: &[String]) -> diffsoro::Result<Scene> {
    let scene = Scene::load(path, set)?;
    for warning in scene.warnings() {
        eprintln!("warning: {warning}");
    }
    Ok(scene)
}

/// A progress bar on stderr (hidden when stderr is not a terminal).
fn progress(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{msg} [{bar:40}] {pos}/{len} steps, {elapsed} elapsed, ETA {eta}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_string());
    bar
}

fn dynamics(urdf: &Path, case: &Path) -> diffsoro::Result<()> {
    let text = std::fs::read_to_string(case).map_err(|e| diffsoro::Error::io(case, e))?;
    let case: DynamicsCase = serde_json::from_str(&text).map_err(|e| {
        diffsoro::Error::parse(
            case.display().to_string(),
            diffsoro::error::Location::Line(e.line()),
            e.to_string(),
        )
    })?;
    print_json_compact(&dynamics_report(urdf, &case)?)
}

/// The demo's scene, built into the binary (so an installed `diffsoro demo` needs no clone).
const DEMO_SCENE: &str = include_str!("../scenes/trunk.toml");
/// The demo scene's mesh, built into the binary.
const DEMO_MESH: &[u8] = include_bytes!("../meshes/trunk.msh");

/// The prefix of the folder the demo unpacks into, followed by the pid of its run.
const DEMO_PREFIX: &str = "diffsoro-demo-";

/// The built-in demo: the Trunk under gravity for 1 s (with the `--set` overrides), frames in
/// `out/demo/` under the working folder. The scene and its mesh are the ones built into the
/// binary, unpacked into a private temporary folder for the run (as `scenes/trunk.toml` and
/// `meshes/trunk.msh`, so the scene's relative mesh path holds) and removed afterwards; the
/// folders of earlier demos that were killed before removing theirs go first.
fn demo(set: &[String]) -> diffsoro::Result<()> {
    let tmp = std::env::temp_dir();
    diffsoro::scene::remove_stale_folders(&tmp, DEMO_PREFIX);
    let unpacked = tmp.join(format!("{DEMO_PREFIX}{}", std::process::id()));
    let result = unpack_demo(&unpacked).and_then(|scene| demo_run(&scene, set));
    let _ = std::fs::remove_dir_all(&unpacked);
    result
}

/// Writes the built-in demo scene and mesh under `dir` and returns the scene's path.
fn unpack_demo(dir: &Path) -> diffsoro::Result<PathBuf> {
    let scene = dir.join("scenes/trunk.toml");
    let mesh = dir.join("meshes/trunk.msh");
    for (path, bytes) in [(&scene, DEMO_SCENE.as_bytes()), (&mesh, DEMO_MESH)] {
        let folder = path.parent().unwrap_or(dir);
        std::fs::create_dir_all(folder).map_err(|e| diffsoro::Error::io(folder, e))?;
        std::fs::write(path, bytes).map_err(|e| diffsoro::Error::io(path, e))?;
    }
    Ok(scene)
}

/// Runs the demo scene at `scene` into `out/demo/` and prints where its output went.
fn demo_run(scene: &Path, set: &[String]) -> diffsoro::Result<()> {
    let out = PathBuf::from("out/demo");
    eprintln!(
        "demo: simulating the built-in Trunk (scenes/trunk.toml, under gravity, 1 s) into {}/",
        out.display()
    );
    let final_state = simulate(
        scene,
        Some(100),
        Some(&out),
        set,
        false,
        false,
        &[],
        None,
        ContactGradient::OneSided,
        MarkerFlags::default(),
        InputsFlags::default(),
    )?;
    let body = &final_state.soft_bodies[0];
    let sag = body
        .positions
        .iter()
        .map(|p| p[1])
        .fold(f64::INFINITY, f64::min);
    print_json(&serde_json::json!({
        "scene": "scenes/trunk.toml (built in)",
        "steps": final_state.steps,
        "time": final_state.time,
        "output": out,
        "final_state": out.join("final.json"),
        "paraview": out.join(format!("{}.pvd", body.name)),
        "lowest_y_m": sag,
    }))?;
    eprintln!(
        "demo: open {} in ParaView to watch the Trunk sag, or run `diffsoro view {}` for a page any browser opens",
        out.join(format!("{}.pvd", body.name)).display(),
        out.display()
    );
    Ok(())
}
