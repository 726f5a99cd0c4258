//! `diffsoro bench --reduced`: the median reduced step against the full step of the same
//! scene, timed in one run (alternating), so their ratio is measured on one machine at one
//! load.

use std::path::Path;
use std::time::Instant;

use diffsoro::reduce::{ReducedModel, ReducedRun};
use diffsoro::scene::{CommandRun, RunStart, Stepper};
use serde::Serialize;

use crate::bench_command::median;
use crate::simulate_command::InputsFlags;
use crate::{load_scene, print_json, progress};

/// The `bench --reduced` result (docs/outputs.md).
#[derive(Serialize)]
struct ReducedBenchReport {
    nodes: usize,
    tetrahedra: usize,
    modes: usize,
    elements_kept: usize,
    /// Median reduced step (ms): forces and stiffness on the sampled elements and the
    /// actuators, the K × K solve; without rebuilding the full positions.
    step_ms: f64,
    /// Median of rebuilding every node's position and velocity from q, q̇ (ms).
    expand_ms: f64,
    /// Median full step of the same scene over the same inputs (ms).
    full_step_ms: f64,
    /// full_step_ms / step_ms.
    speedup: f64,
    cpu: String,
    cpu_id: String,
    threads: usize,
}

/// Times `steps` reduced and full steps (after one warm-up step each) of `path` with the
/// model `model`, each under the command file of `inputs` when given.
pub(crate) fn bench_reduced(
    path: &Path,
    model: &Path,
    steps: usize,
    set: &[String],
    inputs: InputsFlags<'_>,
) -> diffsoro::Result<()> {
    let model = ReducedModel::read(model)?;
    let mut scene = load_scene(path, set)?;
    let mut full_scene = scene.clone();
    let commands = inputs.read()?;
    let (mut full, mut full_state) = match &commands {
        Some((log, start)) => {
            let (run, state) =
                CommandRun::start(&mut full_scene, log.clone(), Some(steps + 1), *start)?;
            (Some(run), state)
        }
        None => (None, full_scene.initial_state()),
    };
    let mut plain = Stepper::new(&full_scene)?;
    let (log, start) = commands.map_or((None, RunStart::Scene), |(l, s)| (Some(l), s));
    let (mut reduced, mut state) =
        ReducedRun::start(&mut scene, &model, log, Some(steps + 1), start)?;
    let bar = progress(steps as u64, "bench --reduced");
    let (mut times, mut expand, mut full_times) = (Vec::new(), Vec::new(), Vec::new());
    for k in 0..=steps {
        let t = Instant::now();
        match full.as_mut() {
            Some(run) => {
                run.step(&mut full_scene, &mut full_state)?;
            }
            None => {
                plain.step(&full_scene, &mut full_state)?;
            }
        }
        let full_ms = t.elapsed().as_secs_f64() * 1e3;
        let (step_ms, expand_ms) = reduced.step_timed(&mut scene, &mut state)?;
        for w in reduced.take_warnings() {
            bar.suspend(|| eprintln!("warning: {w}"));
        }
        if k > 0 {
            times.push(step_ms);
            expand.push(expand_ms);
            full_times.push(full_ms);
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    let (cpu, cpu_id) = crate::cpu_id::cpu_model_and_id();
    let (step_ms, full_step_ms) = (median(times), median(full_times));
    print_json(&ReducedBenchReport {
        nodes: scene.bodies[0].node_count(),
        tetrahedra: scene.bodies[0].elements().len(),
        modes: model.modes,
        elements_kept: model.elements.len(),
        step_ms,
        expand_ms: median(expand),
        full_step_ms,
        speedup: full_step_ms / step_ms,
        cpu,
        cpu_id,
        threads: rayon::current_num_threads(),
    })
}
