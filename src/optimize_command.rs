//! `diffsoro optimize`: actuation knots that take an effector through waypoints, its report
//! and run folder.

use std::path::Path;

use diffsoro::optimize::{OptimizeSetup, optimize as optimize_knots};
use diffsoro::scene::{PointPath, RunStart};

use crate::view_frames::ViewFrames;
use crate::{load_scene, print_json, progress, with_out_folder};

/// The `optimize` flags that define the problem.
pub(crate) struct OptimizeFlags<'a> {
    pub(crate) effector: &'a str,
    pub(crate) waypoints: &'a Path,
    pub(crate) knots: Option<usize>,
    pub(crate) effort: Option<f64>,
    pub(crate) steps: Option<usize>,
    pub(crate) start: RunStart,
    pub(crate) actuators: &'a [String],
    pub(crate) iterations: usize,
    pub(crate) set: &'a [String],
    /// `--view`: write the optimised run's frames and the viewer page into `--out`.
    pub(crate) view: bool,
}

/// `optimize`: loads the scene with `--set` and the waypoints, checks the problem and `--out`
/// (created before the optimisation, removed again if it fails), optimises with a progress
/// bar per run, prints the report; with `out`, writes `optimize.json` and the plots (and with
/// `--view` the optimised run's frames and page).
pub(crate) fn optimize(
    path: &Path,
    flags: &OptimizeFlags<'_>,
    out: Option<&Path>,
) -> diffsoro::Result<()> {
    if flags.iterations == 0 {
        return Err(diffsoro::Error::invalid(
            "--iterations",
            "must be at least 1",
        ));
    }
    let scene = load_scene(path, flags.set)?;
    let waypoints = PointPath::read(flags.waypoints)?;
    let mut setup = OptimizeSetup::new(
        &scene,
        flags.effector,
        waypoints,
        flags.knots,
        flags.effort,
        flags.steps,
        flags.start,
        flags.actuators,
    )?;
    setup.options.max_iterations = flags.iterations;
    with_out_folder(out, |out| {
        let mut frames = ViewFrames::new(flags.view, out, &scene)?;
        let mut observe = |driven: &diffsoro::scene::Scene, state: &diffsoro::scene::State| {
            frames.record(driven, state, &[])
        };
        let bar = progress(setup.steps as u64, "optimize: run 1");
        let mut shown = 1;
        let mut tick = |evaluation: usize, steps: usize| {
            if evaluation != shown {
                shown = evaluation;
                bar.set_message(format!("optimize: run {evaluation}"));
            }
            bar.set_position(steps as u64);
        };
        let report = optimize_knots(&scene, &setup, &mut tick, &mut observe)?;
        bar.finish_and_clear();
        if let Some(dir) = out {
            let written = report.write_outputs(dir)?;
            frames.finish(dir, &scene, written.len())?;
        }
        print_json(&report)
    })
}
