//! `diffsoro reduce`: the offline reduction of a scene's soft body on training command logs
//! (`diffsoro::reduce`), written to one versioned model file.

use std::path::{Path, PathBuf};

use diffsoro::reduce::{ModeChoice, ReduceOptions, reduce as reduce_model};
use diffsoro::scene::{CommandLog, RunStart};
use serde::Serialize;

use crate::{load_scene, print_json, progress};

/// The `reduce` flags.
pub(crate) struct ReduceFlags<'a> {
    pub train: &'a [PathBuf],
    pub modes: Option<usize>,
    pub basis_tolerance: Option<f64>,
    pub force_tolerance: Option<f64>,
    pub start: Option<RunStart>,
    pub set: &'a [String],
}

/// What `reduce` prints (docs/reduced.md).
#[derive(Serialize)]
struct ReduceReport<'a> {
    modes: usize,
    elements_kept: usize,
    elements: usize,
    training_error: &'a diffsoro::reduce::TrainingError,
    offline_s: f64,
    out: String,
}

/// `reduce`: reduces the scene's soft body on the `--train` logs and writes the model to
/// `out` (all or nothing).
pub(crate) fn reduce(scene: &Path, flags: &ReduceFlags<'_>, out: &Path) -> diffsoro::Result<()> {
    let what = || format!("--out `{}`", out.display());
    if out.is_dir() {
        return Err(diffsoro::Error::invalid(what(), "is a folder, not a file"));
    }
    if let Some(folder) = out.parent().filter(|p| !p.as_os_str().is_empty())
        && !folder.is_dir()
    {
        return Err(diffsoro::Error::invalid(
            what(),
            format!("folder {} does not exist", folder.display()),
        ));
    }
    let modes = match (flags.modes, flags.basis_tolerance) {
        (Some(k), _) => ModeChoice::Count(k),
        (None, Some(t)) => ModeChoice::Tolerance(t),
        (None, None) => ReduceOptions::default().modes,
    };
    let options = ReduceOptions {
        modes,
        force_tolerance: flags
            .force_tolerance
            .unwrap_or(ReduceOptions::default().force_tolerance),
        start: flags.start.unwrap_or_default(),
    };
    let scene = load_scene(scene, flags.set)?;
    let logs = flags
        .train
        .iter()
        .map(|p| CommandLog::read(p))
        .collect::<diffsoro::Result<Vec<_>>>()?;
    let mut bar: Option<(String, indicatif::ProgressBar)> = None;
    let model = reduce_model(&scene, logs, options, &mut |stage, done, total| {
        if bar.as_ref().map(|(s, _)| s.as_str()) != Some(stage) {
            if let Some((_, b)) = bar.take() {
                b.finish_and_clear();
            }
            bar = Some((stage.to_string(), progress(total as u64, stage)));
        }
        if let Some((_, b)) = &bar {
            b.set_position(done as u64);
        }
    });
    if let Some((_, b)) = bar {
        b.finish_and_clear();
    }
    let model = model?;
    model.write(out)?;
    eprintln!(
        "wrote {}: {} modes, {} of {} elements, training RMS {:.3} mm",
        out.display(),
        model.modes,
        model.elements.len(),
        scene.bodies[0].elements().len(),
        model.training_error.position_rms * 1e3
    );
    print_json(&ReduceReport {
        modes: model.modes,
        elements_kept: model.elements.len(),
        elements: scene.bodies[0].elements().len(),
        training_error: &model.training_error,
        offline_s: model.offline_s,
        out: out.display().to_string(),
    })
}
