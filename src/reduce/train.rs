//! The offline reduction (`diffsoro reduce`): the full model run on training command logs,
//! its displacement snapshots, the POD basis, the ECSW element sampling, and the reduced
//! model re-run on the same commands to state its training error.

use std::time::Instant;

use crate::error::{Error, Result};
use crate::math::{DMat, DVec, Vec3};
use crate::scene::{CommandLog, CommandRun, CommandSchedule, RunStart, Scene};

use super::basis::{ModeChoice, pod};
use super::ecsw::sample_elements;
use super::fingerprint::fingerprint;
use super::model::{FORMAT, ReducedModel, TrainingError, VERSION};
use super::nodal_basis::NodalBasis;
use super::run::ReducedRun;
use super::stepper::check_reducible;

/// Options of a reduction.
#[derive(Debug, Clone, Copy)]
pub struct ReduceOptions {
    /// How many modes (a count, or a share of the snapshots' energy left out).
    pub modes: ModeChoice,
    /// ECSW's relative force error τ (dimensionless).
    pub force_tolerance: f64,
    /// How the training runs start.
    pub start: RunStart,
}

impl Default for ReduceOptions {
    /// 1e-6 of the snapshots' energy left out, 0.1 % force error, static starts.
    fn default() -> Self {
        ReduceOptions {
            modes: ModeChoice::Tolerance(1e-6),
            force_tolerance: 1e-3,
            start: RunStart::Static,
        }
    }
}

/// Most snapshots the basis and the sampling see: every run's states, evenly thinned.
const BASIS_SNAPSHOTS: usize = 1200;
const SAMPLING_SNAPSHOTS: usize = 80;

/// Reduces `scene`'s soft body on the training `logs` (`progress(stage, done, total)` on long
/// parts). Errors: a scene reduced models do not take, a training run that fails, a
/// tolerance out of range.
pub fn reduce(
    scene: &Scene,
    logs: Vec<CommandLog>,
    options: ReduceOptions,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<ReducedModel> {
    let clock = Instant::now();
    check_reducible(scene)?;
    if logs.is_empty() {
        return Err(Error::invalid("--train", "give at least one command log"));
    }
    let body = &scene.bodies[0];
    let dofs = body.pattern().dofs();
    let rest = body.rest_positions().to_vec();
    let files: Vec<String> = logs.iter().map(|l| l.file.clone()).collect();
    // The full runs: every state's free displacements.
    let total: usize = logs
        .iter()
        .map(|l| CommandSchedule::new(scene, l.clone()).map(|s| s.steps_to_last_row()))
        .sum::<Result<usize>>()?;
    let mut runs: Vec<Vec<DVec>> = Vec::new();
    let mut done = 0;
    for log in &logs {
        let mut s = scene.clone();
        let (mut run, mut state) = CommandRun::start(&mut s, log.clone(), None, options.start)?;
        let displacement = |x: &[Vec3]| {
            DVec::from_iterator(
                dofs.n_reduced(),
                dofs.free_components().map(|(n, c)| x[n][c] - rest[n][c]),
            )
        };
        let mut states = vec![displacement(&state.bodies[0].positions)];
        for _ in 0..run.steps() {
            run.step(&mut s, &mut state).map_err(|e| {
                Error::invalid(
                    format!("--train {}", log.file),
                    format!("the full model's training run failed: {e}"),
                )
            })?;
            states.push(displacement(&state.bodies[0].positions));
            done += 1;
            progress("training runs", done, total);
        }
        runs.push(states);
    }
    // The basis is of the displacements about their mean ū (x = X + ū + Vq): the mean sag
    // and pull cost no mode.
    let count = runs.iter().map(Vec::len).sum::<usize>();
    let mean = runs
        .iter()
        .flatten()
        .fold(DVec::zeros(dofs.n_reduced()), |m, u| m + u)
        / count as f64;
    let centred: Vec<DVec> = runs.iter().flatten().map(|u| u - &mean).collect();
    let all: Vec<&DVec> = centred.iter().collect();
    let y = thinned(&all, BASIS_SNAPSHOTS);
    progress("basis", 0, 1);
    let p = pod(&y, options.modes)?;
    let v = p.modes;
    let basis = NodalBasis::new(body, &v, mean.as_slice());
    let k = v.ncols();
    // The projections of every snapshot: range, and the sampling's configurations.
    let qs: Vec<DVec> = all.iter().map(|u| v.tr_mul(u)).collect();
    let mut q_range = vec![[f64::INFINITY, f64::NEG_INFINITY]; k];
    for q in &qs {
        for (r, qj) in q_range.iter_mut().zip(q.iter()) {
            r[0] = r[0].min(*qj);
            r[1] = r[1].max(*qj);
        }
    }
    // Over the free nodes, as the training error's position_rms.
    let free_nodes = (0..body.node_count())
        .filter(|&n| !body.is_fixed(n))
        .count();
    let projection_rms = {
        let sum: f64 = all
            .iter()
            .zip(&qs)
            .map(|(u, q)| (*u - &v * q).norm_squared())
            .sum();
        (sum / (all.len() * free_nodes) as f64).sqrt()
    };
    let sampling_q: Vec<DVec> = thinned_indices(qs.len(), SAMPLING_SNAPSHOTS)
        .map(|i| qs[i].clone())
        .collect();
    progress("element sampling", 0, 1);
    let sampling = sample_elements(body, &basis, &sampling_q, options.force_tolerance)?;
    let mut model = ReducedModel {
        format: FORMAT.to_string(),
        version: VERSION,
        body: body.name().to_string(),
        fingerprint: fingerprint(body, scene.body_actuation(0)),
        dofs: dofs.n_reduced(),
        modes: k,
        basis: v.as_slice().to_vec(),
        offset: mean.as_slice().to_vec(),
        elements: sampling.elements,
        weights: sampling.weights,
        q_range,
        training: files,
        training_error: TrainingError {
            projection_rms,
            basis: p.discarded,
            force: sampling.force_error,
            ..TrainingError::default()
        },
        offline_s: 0.0,
    };
    // The reduced model re-run on the training commands, against the full runs.
    let (mut sum, mut count, mut max) = (0.0, 0usize, 0.0f64);
    let mut done = 0;
    for (log, full) in logs.into_iter().zip(&runs) {
        let mut s = scene.clone();
        let file = log.file.clone();
        let (mut run, mut state) =
            ReducedRun::start(&mut s, &model, Some(log), None, options.start)?;
        // Every free node's distance from the full run's.
        let mut node_error = vec![0.0; body.node_count()];
        let mut compare = |x: &[Vec3], u: &DVec| {
            node_error.fill(0.0);
            for (r, (n, c)) in dofs.free_components().enumerate() {
                node_error[n] += (x[n][c] - rest[n][c] - u[r]).powi(2);
            }
            for (n, e2) in node_error.iter().enumerate() {
                if !body.is_fixed(n) {
                    sum += e2;
                    max = max.max(e2.sqrt());
                    count += 1;
                }
            }
        };
        compare(&state.bodies[0].positions, &full[0]);
        for u in &full[1..] {
            run.step(&mut s, &mut state).map_err(|e| {
                Error::invalid(
                    format!("--train {file}"),
                    format!("the reduced model's re-run of its training commands failed: {e}"),
                )
            })?;
            compare(&state.bodies[0].positions, u);
            done += 1;
            progress("checking", done, total);
        }
    }
    model.training_error.position_rms = (sum / count.max(1) as f64).sqrt();
    model.training_error.position_max = max;
    model.offline_s = clock.elapsed().as_secs_f64();
    Ok(model)
}

/// At most `most` indices of `0..n`, evenly spread, first and last included.
fn thinned_indices(n: usize, most: usize) -> impl Iterator<Item = usize> {
    let take = n.min(most).max(1);
    (0..take).map(move |i| {
        if take == 1 {
            0
        } else {
            i * (n - 1) / (take - 1)
        }
    })
}

/// The snapshots `all`, thinned to at most `most`, as columns.
fn thinned(all: &[&DVec], most: usize) -> DMat {
    let picks: Vec<usize> = thinned_indices(all.len(), most).collect();
    let n = all.first().map_or(0, |u| u.len());
    DMat::from_fn(n, picks.len(), |r, c| all[picks[c]][r])
}
