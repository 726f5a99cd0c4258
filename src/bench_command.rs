//! `diffsoro bench`: the median step time of a scene and, where the step is differentiable,
//! of its Jacobian (soft parameters, or a rigid scene's ∂(q⁺, v⁺)/∂(q, v, τ)) and of its
//! central differences.

use std::path::Path;
use std::time::Instant;

use diffsoro::contact::BoundaryGradient;
use diffsoro::diff::{
    InputTangent, Recorder, RigidJacobianWorkspace, RigidStepJacobian, StateTangent,
    StepDerivative, check_differentiable, every_parameter, step_parameter_jacobian_fd,
};
use diffsoro::linalg::NumericFactor;
use diffsoro::scene::{CommandRun, Stepper};
use serde::Serialize;

use crate::simulate_command::{InputsFlags, report_start};
use crate::{load_scene, print_json, progress};

/// The `bench` result (docs/outputs.md); fields of later features are `null` until they exist.
#[derive(Serialize)]
struct BenchReport {
    nodes: usize,
    tetrahedra: usize,
    /// Median number of active contacts over the timed steps.
    contacts: usize,
    step_ms: f64,
    /// Median of a bare numeric factorisation of the step's own matrix A (every soft body's,
    /// summed; the same symbolic analysis, one more factorisation after each timed step),
    /// ms; `null` without soft bodies.
    factorisation_ms: Option<f64>,
    /// Median over the timed steps of each step's time over the bare factorisation timed right
    /// after it (the speed goal of a step within 1.5× its factorisation, docs/speed.md): each
    /// ratio's two times are measured a moment apart, so the ratio drifts less with the machine's
    /// speed than `step_ms / factorisation_ms`; `null` without soft bodies.
    step_over_factorisation: Option<f64>,
    /// Medians of the step's stages (`scene::StageTimes`), ms.
    stages_ms: Stages,
    gradient_ms: Option<f64>,
    finite_difference_ms: Option<f64>,
    /// Timed steps whose contact NCP stopped at its iteration limit (their time is that of
    /// an unfinished solve, so `step_ms` understates a converged one).
    unconverged_steps: usize,
    /// Solver iterations (ADMM iterations or PGS sweeps) of each timed step's largest NCP:
    /// their median and maximum over the steps (0 in steps without contact). A count, not
    /// a time, so it compares solvers across machines and loads.
    ncp_iterations: NcpIterations,
    /// The CPU model (`/proc/cpuinfo`'s model name, or "unknown").
    cpu: String,
    /// What tells two CPUs of one model name apart (`crate::cpu_id::identification`: family,
    /// model and stepping numbers, logical CPUs, widest vector extension).
    cpu_id: String,
    /// The threads the step's parallel loops ran on (`--threads`, or the cores).
    threads: usize,
}

/// The medians of a step's stages over the timed steps (ms).
#[derive(Serialize)]
struct Stages {
    free: f64,
    rigid: f64,
    contact: f64,
    update: f64,
    /// The parts of `free` (`scene::FreeStageTimes`), each its own median.
    free_parts: FreeParts,
}

/// [`Stages::free_parts`], ms.
#[derive(Serialize)]
struct FreeParts {
    elastic: f64,
    assembly: f64,
    factorisation: f64,
    solve: f64,
}

/// [`BenchReport::ncp_iterations`].
#[derive(Serialize)]
struct NcpIterations {
    median: f64,
    max: usize,
}

pub(crate) fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        values[n / 2]
    } else {
        0.5 * (values[n / 2 - 1] + values[n / 2])
    }
}

/// `bench`: times `steps` steps (after one warm-up step) of the scene; with `inputs`, each
/// step (the warm-up first) takes its inputs from the command file.
pub(crate) fn bench(
    path: &Path,
    steps: usize,
    set: &[String],
    strict: bool,
    inputs: InputsFlags<'_>,
) -> diffsoro::Result<()> {
    if steps == 0 {
        return Err(diffsoro::Error::invalid("--steps", "must be at least 1"));
    }
    let mut scene = load_scene(path, set)?;
    let (mut state, mut stepper, mut schedule) = match inputs.read()? {
        Some((log, start)) => {
            let (mut run, state) = CommandRun::start(&mut scene, log, Some(steps + 1), start)?;
            report_start(&mut run, &scene);
            let (schedule, stepper) = run.into_parts();
            (state, stepper, Some(schedule))
        }
        None => (scene.initial_state(), Stepper::new(&scene)?, None),
    };
    // Sets the next step's inputs of a run under commands.
    let mut next_inputs = |scene: &mut diffsoro::scene::Scene| {
        if let Some(s) = schedule.as_mut() {
            s.apply_next(scene);
            for w in s.take_warnings() {
                eprintln!("warning: {w}");
            }
        }
    };
    next_inputs(&mut scene);
    stepper.step(&scene, &mut state)?; // warm-up: first-touch of every buffer
    // The gradient figures: the step Jacobian with respect to every actuator and both
    // material parameters of every body, analytical (from the step's record) and by central
    // differences of the step; `null` when the scene's step is not differentiable.
    let parameters = every_parameter(&scene);
    let differentiable = check_differentiable(&scene).and_then(|()| {
        if parameters.is_empty() {
            Err(diffsoro::Error::invalid(
                "bench",
                "the scene has no soft body, actuator or material parameter to differentiate",
            ))
        } else {
            Ok(())
        }
    });
    // A scene of rigid bodies alone: gradient_ms times the rigid step's full Jacobian
    // ∂(q⁺, v⁺)/∂(q, v, τ) (diff::RigidStepJacobian), finite_difference_ms stays null.
    let rigid_only = scene.bodies.is_empty() && !scene.rigid.systems.is_empty();
    if rigid_only {
        eprintln!(
            "gradient_ms: the rigid step's Jacobian ∂(q⁺, v⁺)/∂(q, v, τ); finite_difference_ms is null for rigid scenes"
        );
    } else if let Err(e) = &differentiable {
        eprintln!("gradient_ms and finite_difference_ms are null: {e}");
    }
    let mut derivative = (differentiable.is_ok())
        .then(|| Ok::<_, diffsoro::Error>((Recorder::new(&scene)?, StepDerivative::new(&scene))))
        .transpose()?;
    let unit_inputs: Vec<InputTangent> = (0..parameters.len())
        .map(|p| InputTangent {
            state: StateTangent::zeros(&scene),
            parameters: (0..parameters.len())
                .map(|q| if p == q { 1.0 } else { 0.0 })
                .collect(),
        })
        .collect();
    let mut contacts = Vec::with_capacity(steps);
    let mut ncp_iterations: Vec<usize> = Vec::with_capacity(steps);
    let mut stages: Vec<diffsoro::scene::StageTimes> = Vec::with_capacity(steps);
    let bar = progress(steps as u64, "bench");
    let (mut times, mut gradient, mut fd) = (Vec::new(), Vec::new(), Vec::new());
    // One spare numeric factor per body on the step's symbolic analysis.
    let mut spare: Vec<NumericFactor> = (0..scene.bodies.len())
        .map(|i| {
            let f = stepper.body(i).factor();
            NumericFactor::new(f.symbolic().clone(), f.kind())
        })
        .collect();
    let mut factorisation = Vec::with_capacity(steps);
    let mut unconverged_steps = 0;
    let mut underivable = 0;
    // The rigid Jacobian and its buffers, reused from step to step.
    let mut rigid_jacobian = RigidStepJacobian::default();
    let mut rigid_workspace = RigidJacobianWorkspace::default();
    for _ in 0..steps {
        next_inputs(&mut scene);
        let start_state = state.clone();
        let start = Instant::now();
        let report = stepper.step(&scene, &mut state)?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
        stages.push(report.times);
        contacts.push(report.active_contacts as f64);
        ncp_iterations.push(report.largest_ncp_iterations());
        if strict && !report.contact_converged {
            bar.finish_and_clear();
            return Err(diffsoro::Error::invalid(
                "contact",
                format!(
                    "step {}: the contact NCP stopped at its iteration limit ({} iterations); bench --strict times converged steps only",
                    state.steps, scene.contact.settings.max_iterations
                ),
            ));
        }
        unconverged_steps += usize::from(!report.contact_converged);
        if !spare.is_empty() {
            let start = Instant::now();
            for (i, f) in spare.iter_mut().enumerate() {
                let a = stepper.body(i).step_matrix();
                f.factorize(scene.bodies[i].pattern(), a).map_err(|e| {
                    diffsoro::Error::invalid("bench", format!("refactorising A: {e}"))
                })?;
            }
            factorisation.push(start.elapsed().as_secs_f64() * 1e3);
        }
        if rigid_only {
            let start = Instant::now();
            match rigid_jacobian.of_step_into(
                &scene,
                &stepper,
                &start_state.rigid,
                &state.rigid,
                BoundaryGradient::OneSided,
                &[],
                &mut rigid_workspace,
            ) {
                Ok(()) => {
                    gradient.push(start.elapsed().as_secs_f64() * 1e3);
                    std::hint::black_box(&rigid_jacobian);
                }
                Err(e) => {
                    underivable += 1;
                    if underivable == 1 {
                        bar.suspend(|| eprintln!("step {}: no Jacobian timed: {e} (later ones counted, not repeated)", state.steps));
                    }
                }
            }
        }
        if let Some((recorder, derivative)) = derivative.as_mut() {
            let mut s = start_state.clone();
            let (_, record) = recorder.step(&scene, &mut s)?;
            let start = Instant::now();
            let jacobian = derivative.jvp(&scene, &record, &parameters, &unit_inputs)?;
            gradient.push(start.elapsed().as_secs_f64() * 1e3);
            std::hint::black_box(jacobian);
            recorder.recycle(record);
            let start = Instant::now();
            let jacobian =
                step_parameter_jacobian_fd(&scene, &start_state, &parameters, &mut stepper, 1e-6)?;
            fd.push(start.elapsed().as_secs_f64() * 1e3);
            std::hint::black_box(jacobian);
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if unconverged_steps > 0 {
        eprintln!(
            "warning: the contact NCP stopped at its iteration limit in {unconverged_steps} of {steps} timed steps: step_ms times unfinished solves"
        );
    }
    if underivable > 0 {
        eprintln!(
            "warning: {underivable} of {steps} steps had no rigid Jacobian (a contact changing features within the geometry's differentiation step); gradient_ms times the others"
        );
    }
    let step_over_factorisation = (!factorisation.is_empty()).then(|| {
        median(
            times
                .iter()
                .zip(&factorisation)
                .map(|(s, f)| s / f)
                .collect(),
        )
    });
    let (cpu, cpu_id) = crate::cpu_id::cpu_model_and_id();
    print_json(&BenchReport {
        nodes: scene.bodies.iter().map(|b| b.node_count()).sum(),
        tetrahedra: scene.bodies.iter().map(|b| b.elements().len()).sum(),
        contacts: median(contacts).round() as usize,
        step_ms: median(times),
        step_over_factorisation,
        factorisation_ms: (!factorisation.is_empty()).then(|| median(factorisation)),
        stages_ms: Stages {
            free: median(stages.iter().map(|t| 1e3 * t.free).collect()),
            rigid: median(stages.iter().map(|t| 1e3 * t.rigid).collect()),
            contact: median(stages.iter().map(|t| 1e3 * t.contact).collect()),
            update: median(stages.iter().map(|t| 1e3 * t.update).collect()),
            free_parts: FreeParts {
                elastic: median(stages.iter().map(|t| 1e3 * t.free_parts.elastic).collect()),
                assembly: median(stages.iter().map(|t| 1e3 * t.free_parts.assembly).collect()),
                factorisation: median(
                    stages
                        .iter()
                        .map(|t| 1e3 * t.free_parts.factorisation)
                        .collect(),
                ),
                solve: median(stages.iter().map(|t| 1e3 * t.free_parts.solve).collect()),
            },
        },
        gradient_ms: (!gradient.is_empty()).then(|| median(gradient)),
        finite_difference_ms: (!fd.is_empty()).then(|| median(fd)),
        unconverged_steps,
        ncp_iterations: NcpIterations {
            median: median(ncp_iterations.iter().map(|&i| i as f64).collect()),
            max: ncp_iterations.iter().copied().max().unwrap_or(0),
        },
        cpu,
        cpu_id,
        threads: rayon::current_num_threads(),
    })
}
