//! `diffsoro simulate`: steps a scene (or solves its statics), writes the final state and
//! the frames, and the forward sensitivities or one reverse-mode gradient asked for.

use std::path::Path;

use diffsoro::calibrate::trials::{Comparison, Registration, marker_error, parse_comparison};
use diffsoro::diff::{
    CommandSensitivity, Parameter, RigidSensitivityStepper, RunParameter, SensitivityStepper,
    parse_rigid_parameter, rigid_seeds,
};
use diffsoro::math::DMat;
use diffsoro::reduce::{ReducedModel, ReducedRun};
use diffsoro::scene::{
    CommandLog, CommandRun, FinalState, FrameSeries, MarkerTracks, MarkerUnit, RigidTangentOutput,
    RunStart, Scene, StaticOptions, StaticReport, Stepper, solve_static,
};

use crate::gradient_command::{self, ContactGradient};
use crate::{load_scene, progress};

/// `--inputs FILE.csv` and `--start` of `simulate` and `bench` (docs/cli.md).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct InputsFlags<'a> {
    /// The command file.
    pub inputs: Option<&'a Path>,
    /// Where the run starts (default: static).
    pub start: Option<RunStart>,
    /// The reduced model the run steps instead of the full one (`--reduced`).
    pub reduced: Option<&'a Path>,
}

impl InputsFlags<'_> {
    /// The command log and the start, or `None` without `--inputs`; errors: `--start` without
    /// `--inputs`, a bad command file.
    pub(crate) fn read(&self) -> diffsoro::Result<Option<(CommandLog, RunStart)>> {
        match (self.inputs, self.start) {
            (None, Some(_)) => Err(diffsoro::Error::invalid(
                "--start",
                "says where a run under --inputs starts (static: at rest under the first commands; scene: the scene's initial state); give --inputs FILE.csv",
            )),
            (None, None) => Ok(None),
            (Some(path), start) => Ok(Some((CommandLog::read(path)?, start.unwrap_or_default()))),
        }
    }
}

/// `--markers-out`, `--observed-markers`, `--marker-unit`, `--compare` and `--register` of
/// `simulate` (docs/cli.md).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct MarkerFlags<'a> {
    /// The marker track file to write.
    pub out: Option<&'a Path>,
    /// Both files' coordinate unit.
    pub unit: Option<MarkerUnit>,
    /// A recording to compare the run's markers with.
    pub observed: Option<&'a Path>,
    /// `absolute` or `displacement`.
    pub compare: Option<&'a str>,
    /// `none`, `translation` or `rigid`.
    pub register: Option<&'a str>,
}

/// The recording of `--observed-markers` read for `scene`, with how it is compared; `None`
/// without it. Errors: `--marker-unit` without a marker file, a bad `--compare` or
/// `--register`, `displacement` with a frame, a scene without markers, the file's own (file
/// and line).
fn read_observed_markers(
    scene: &Scene,
    flags: &MarkerFlags<'_>,
) -> diffsoro::Result<Option<(MarkerTracks, Comparison, Registration)>> {
    if flags.unit.is_some() && flags.out.is_none() && flags.observed.is_none() {
        return Err(diffsoro::Error::invalid(
            "--marker-unit",
            "is the unit of --markers-out or --observed-markers: give one of them",
        ));
    }
    let Some(file) = flags.observed else {
        return Ok(None);
    };
    let (comparison, registration) =
        parse_comparison(flags.compare, flags.register, ["--compare", "--register"])?;
    if scene.markers.is_empty() {
        return Err(diffsoro::Error::invalid(
            format!("--observed-markers `{}`", file.display()),
            "the scene has no marker to compare with: add a [[soft_body.marker]] (docs/scene-file.md)",
        ));
    }
    let tracks = MarkerTracks::read(file, &scene.markers.names(), flags.unit.unwrap_or_default())?;
    Ok(Some((tracks, comparison, registration)))
}

/// Prints the static start's reports and the start's clamp warnings of a run under commands.
pub(crate) fn report_start(run: &mut CommandRun, scene: &diffsoro::scene::Scene) {
    let reports: &[StaticReport] = run.static_reports();
    for (body, r) in scene.bodies.iter().zip(reports) {
        eprintln!(
            "static start of {}: {} Newton iterations, {} load steps, relative residual {:.1e}",
            body.name(),
            r.iterations,
            r.load_steps,
            r.residual
        );
    }
    for w in run.take_warnings() {
        eprintln!("warning: {w}");
    }
}

/// `simulate`: steps (or solves statically) and returns the final state; with `out`, writes the
/// frames, `.pvd` indexes and `final.json` (all or nothing). `gradient_of`: the loss of a
/// reverse-mode gradient (its boundary `contact_gradient`) instead of the forward
/// sensitivities. `markers`: the marker track file to write (`--markers-out`, all or
/// nothing, committed after the `out` folder's files), a recording to compare the markers
/// with (`--observed-markers`: `"marker_error"` in the final state) and their coordinates'
/// unit. `inputs`: a run under logged commands (the markers' times then in the log's clock).
#[allow(clippy::too_many_arguments)]
pub(crate) fn simulate(
    path: &Path,
    steps: Option<usize>,
    out: Option<&Path>,
    set: &[String],
    statics: bool,
    strict: bool,
    sensitivity: &[String],
    gradient_of: Option<&str>,
    contact_gradient: ContactGradient,
    markers: MarkerFlags<'_>,
    inputs: InputsFlags<'_>,
) -> diffsoro::Result<FinalState> {
    let markers_out = markers.out.map(|p| (p, markers.unit.unwrap_or_default()));
    if gradient_of.is_none() && contact_gradient == ContactGradient::ComplementarityAware {
        return Err(diffsoro::Error::invalid(
            "--contact-gradient complementarity-aware",
            "applies to reverse-mode gradients (--gradient-of), where the loss picks each touching contact's side; the forward tangents of --sensitivity are one-sided",
        ));
    }
    if inputs.inputs.is_some() {
        if statics {
            return Err(diffsoro::Error::invalid(
                "--inputs",
                "runs the logged commands over time steps; it cannot be combined with --static (--start static starts the run at rest under the first commands)",
            ));
        }
        if gradient_of.is_some() {
            return Err(diffsoro::Error::invalid(
                "--gradient-of with --inputs",
                "a reverse-mode gradient through a run under logged commands is not built yet: use --sensitivity, which follows the log",
            ));
        }
    }
    if inputs.reduced.is_some() {
        let unsupported = if statics {
            Some("--static")
        } else if gradient_of.is_some() {
            Some("--gradient-of")
        } else if !sensitivity.is_empty() {
            Some("--sensitivity")
        } else {
            None
        };
        if let Some(flag) = unsupported {
            return Err(diffsoro::Error::invalid(
                "--reduced",
                format!(
                    "steps the reduced model forward; {flag} is not built on reduced models yet: run the full model"
                ),
            ));
        }
    }
    let mut scene = load_scene(path, set)?;
    let reduced_model = inputs.reduced.map(ReducedModel::read).transpose()?;
    let commands = inputs.read()?;
    if let Some((file, _)) = markers_out {
        check_markers_out(&scene, file, out)?;
    }
    // The markers' tracks, and the run's time origin in their clock: the log's first row
    // time t₀ under --inputs, 0 otherwise.
    let observed = read_observed_markers(&scene, &markers)?;
    let mut tracks =
        (markers_out.is_some() || observed.is_some()).then(|| MarkerTracks::for_scene(&scene));
    let t0 = commands.as_ref().map_or(0.0, |(log, _)| log.t0());
    // Under logged commands the sensitivities are the run's (`diff::RunParameter`: the step's
    // parameters and the logged actuators' gains, offsets and lags), parsed once the log is
    // scheduled; the names below are the other runs'.
    let (sensitivity, run_sensitivity) = if commands.is_some() {
        (&[][..], sensitivity)
    } else {
        (sensitivity, &[][..])
    };
    // Rigid names (`velocity:cube`, `q:arm[2]`, …) and soft ones (`young_modulus:beam`, …).
    let mut parameters = Vec::new();
    let mut rigid_parameters = Vec::new();
    // Where soft and rigid bodies can meet, a robot's constant input `tau:ROBOT[k]` and a PD
    // robot's target `target:ROBOT[k]` are parameters of the mixed step derivatives like E or
    // an actuator (docs/derivatives.md).
    let mixed = scene.coupling.is_active(&scene.rigid, scene.bodies.len());
    // Outside mixed scenes a free body's mass, and in rigid-only scenes an obstacle's
    // friction, are parameters of the rigid step Jacobian's columns.
    let mut rigid_step_parameters = Vec::new();
    for name in sensitivity {
        let name = name.trim();
        if mixed && (name.starts_with("tau:") || name.starts_with("target:")) {
            // A whole robot (`target:arm`) stands for each of its coordinates.
            parameters.extend(Parameter::parse_each(&scene, name)?);
            continue;
        }
        match parse_rigid_parameter(&scene, name)? {
            Some(list) => rigid_parameters.extend(list),
            None => match Parameter::parse(&scene, name)? {
                p @ Parameter::RigidMass { .. } if !mixed => rigid_step_parameters.push(p),
                p @ Parameter::Friction { .. } if scene.bodies.is_empty() => {
                    rigid_step_parameters.push(p)
                }
                p => parameters.push(p),
            },
        }
    }
    // In a mixed scene the rigid initial-state names (`velocity:cube[0]`, `q:arm`, …) seed
    // the rigid part of the mixed step derivatives' initial tangent, beside the soft names.
    let mut seeds: Vec<(String, diffsoro::diff::InputTangent)> = Vec::new();
    // `--gradient-of` reads every rigid name from the reverse sweep's start cotangent instead.
    if mixed && !rigid_parameters.is_empty() {
        let [q, v, _] = rigid_seeds(&scene, &rigid_parameters);
        for (c, p) in rigid_parameters.iter().enumerate() {
            let mut t = diffsoro::diff::StateTangent::zeros(&scene);
            let mut o = 0;
            for r in &mut t.rigid {
                let nv = r.v.len();
                for k in 0..nv {
                    r.q[k] = q[(o + k, c)];
                    r.v[k] = v[(o + k, c)];
                }
                o += nv;
            }
            seeds.push((
                p.name.clone(),
                diffsoro::diff::InputTangent {
                    state: t,
                    parameters: vec![0.0; parameters.len()],
                },
            ));
        }
    }
    // Outside mixed scenes the rigid initial-state names are the rigid step Jacobian's first
    // columns (in mixed ones they went into `seeds` above).
    let rigid_initial: &[_] = if mixed { &[] } else { &rigid_parameters };
    let any_rigid = !(rigid_initial.is_empty() && rigid_step_parameters.is_empty());
    if !parameters.is_empty() && any_rigid {
        return Err(diffsoro::Error::invalid(
            "--sensitivity",
            "names soft and rigid parameters: one run computes the sensitivities of one kind",
        ));
    }
    if statics
        && !(parameters.is_empty()
            && rigid_initial.is_empty()
            && rigid_step_parameters.is_empty()
            && seeds.is_empty())
    {
        return Err(diffsoro::Error::invalid(
            "--sensitivity",
            "is computed through time steps; it cannot be combined with --static",
        ));
    }
    // A reverse-mode gradient, by its own recorded run of the same steps; the run below
    // then takes plain steps.
    let gradient = match gradient_of {
        Some(loss) if !statics => Some(gradient_command::gradient(
            &scene,
            steps.unwrap_or(scene.simulation.steps),
            loss,
            &rigid_parameters,
            if scene.bodies.is_empty() {
                &rigid_step_parameters
            } else {
                &parameters
            },
            contact_gradient,
        )?),
        _ => None,
    };
    let forward = gradient.is_none();
    // A run under commands: its start inputs set on the scene, its start state, and the
    // tangents its sensitivities carry.
    let mut run = None;
    let mut reduced_run: Option<ReducedRun> = None;
    let mut command_sensitivity: Option<CommandSensitivity> = None;
    let mut run_names: Vec<String> = Vec::new();
    let mut state = match commands {
        _ if reduced_model.is_some() => {
            let model = reduced_model.as_ref().expect("checked");
            let (log, start) = commands.map_or((None, RunStart::Scene), |(l, s)| (Some(l), s));
            let (mut r, state) = ReducedRun::start(&mut scene, model, log, steps, start)?;
            eprintln!(
                "reduced model: {} modes, {} of {} elements",
                r.stepper().modes(),
                r.stepper().sampled_elements(),
                scene.bodies[0].elements().len()
            );
            for w in r.take_warnings() {
                eprintln!("warning: {w}");
            }
            reduced_run = Some(r);
            state
        }
        Some((log, start)) => {
            let (mut r, state) = CommandRun::start(&mut scene, log, steps, start)?;
            report_start(&mut r, &scene);
            if !run_sensitivity.is_empty() {
                let columns = run_sensitivity
                    .iter()
                    .map(|n| RunParameter::parse(&scene, r.schedule(), n))
                    .collect::<diffsoro::Result<Vec<_>>>()?;
                run_names = columns
                    .iter()
                    .map(|c| c.name(&scene, r.schedule()))
                    .collect();
                command_sensitivity = Some(CommandSensitivity::new(
                    &scene,
                    r.schedule(),
                    &state,
                    start,
                    &columns,
                )?);
            }
            run = Some(r);
            state
        }
        None => scene.initial_state(),
    };
    if let Some(dir) = out
        && dir.exists()
        && !dir.is_dir()
    {
        return Err(diffsoro::Error::invalid(
            format!("--out `{}`", dir.display()),
            "exists and is not a folder",
        ));
    }
    let mut frames = out
        .map(|dir| FrameSeries::create(dir, &scene))
        .transpose()?;
    // With --out and an effector: the paths and inputs for `summary.svg`.
    let mut trace = out
        .map(|_| diffsoro::scene::RunTrace::new(&scene))
        .filter(diffsoro::scene::RunTrace::has_path);
    if let Some(f) = frames.as_mut() {
        f.write(&scene, &state)?;
        if let Some(t) = trace.as_mut() {
            t.record(&scene, &state);
        }
    }
    if let (Some(t), false) = (tracks.as_mut(), statics) {
        t.record_state(&scene, &state, t0);
    }
    let mut sensitivities = std::collections::BTreeMap::new();
    let mut rigid_sensitivities = std::collections::BTreeMap::new();
    if statics {
        let reports = solve_static(&scene, &mut state, StaticOptions::default())?;
        for (body, r) in scene.bodies.iter().zip(&reports) {
            eprintln!(
                "static equilibrium of {}: {} Newton iterations, {} load steps, relative residual {:.1e}",
                body.name(),
                r.iterations,
                r.load_steps,
                r.residual
            );
        }
        record_outputs(
            &mut frames,
            &mut trace,
            &mut tracks,
            &scene,
            &state,
            None,
            t0,
        )?;
    } else {
        let steps = match (&run, &reduced_run) {
            (Some(r), _) => r.steps(),
            (None, Some(r)) => r.steps(),
            (None, None) => steps.unwrap_or(scene.simulation.steps),
        };
        // Plain steps, or steps carrying the forward sensitivities.
        let mut plain = None;
        let mut sensitive = None;
        let mut rigid_sensitive = None;
        if run.is_some() || reduced_run.is_some() {
            // The run's own stepper.
        } else if !forward {
            plain = Some(Stepper::new(&scene)?);
        } else if any_rigid {
            // The initial-state names' columns, then one per step parameter.
            let (k0, np) = (rigid_initial.len(), rigid_step_parameters.len());
            let widen = |m: DMat| m.resize_horizontally(k0 + np, 0.0);
            let [q, v, tau] = rigid_seeds(&scene, rigid_initial).map(widen);
            let mut directions = DMat::zeros(np, k0 + np);
            for j in 0..np {
                directions[(j, k0 + j)] = 1.0;
            }
            rigid_sensitive = Some(RigidSensitivityStepper::with_parameters(
                &scene,
                [&q, &v, &tau],
                &rigid_step_parameters,
                &directions,
            )?);
        } else if parameters.is_empty() && seeds.is_empty() {
            plain = Some(Stepper::new(&scene)?);
        } else {
            let directions = seeds.iter().map(|(_, d)| d.clone()).collect();
            sensitive = Some(SensitivityStepper::with_directions(
                &scene,
                &parameters,
                directions,
            )?);
        }
        let bar = progress(steps as u64, "simulate");
        let mut warned = false;
        for _ in 0..steps {
            if let Some(r) = reduced_run.as_mut() {
                r.step(&mut scene, &mut state)?;
                for w in r.take_warnings() {
                    bar.suspend(|| eprintln!("warning: {w}"));
                }
                record_outputs(
                    &mut frames,
                    &mut trace,
                    &mut tracks,
                    &scene,
                    &state,
                    None,
                    t0,
                )?;
                bar.inc(1);
                continue;
            }
            let report = match (&mut run, &mut plain, &mut sensitive, &mut rigid_sensitive) {
                (Some(run), _, _, _) => {
                    let report = match command_sensitivity.as_mut() {
                        Some(c) => c.step(&mut scene, run.schedule_mut(), &mut state)?,
                        None => run.step(&mut scene, &mut state)?,
                    };
                    for w in run.take_warnings() {
                        bar.suspend(|| eprintln!("warning: {w}"));
                    }
                    report
                }
                (None, Some(stepper), _, _) => stepper.step(&scene, &mut state)?,
                (None, None, Some(stepper), _) => stepper.step(&scene, &mut state)?,
                (None, None, None, Some(stepper)) => stepper.step(&scene, &mut state)?,
                (None, None, None, None) => unreachable!("one stepper exists"),
            };
            if !report.contact_converged {
                let tolerance = scene.contact.settings.tolerance;
                let message = match scene
                    .bodies
                    .iter()
                    .zip(&report.contact)
                    .find(|(_, c)| !c.converged)
                {
                    Some((body, c)) => format!(
                        "step {}: the contact NCP of soft body {} did not converge in {} iterations (residual {:.1e} > tolerance {:.1e})",
                        state.steps,
                        body.name(),
                        c.iterations,
                        c.residual,
                        tolerance
                    ),
                    None => format!(
                        "step {}: the rigid bodies' contact NCP did not converge in {} iterations (residual {:.1e} > tolerance {:.1e})",
                        state.steps, report.rigid.iterations, report.rigid.residual, tolerance
                    ),
                };
                if strict {
                    bar.finish_and_clear();
                    return Err(diffsoro::Error::invalid("contact", message));
                }
                if !warned {
                    bar.suspend(|| eprintln!("warning: {message} (later ones not repeated; --strict makes this an error)"));
                    warned = true;
                }
            }
            record_outputs(
                &mut frames,
                &mut trace,
                &mut tracks,
                &scene,
                &state,
                Some(&report.contact),
                t0,
            )?;
            bar.inc(1);
        }
        bar.finish_and_clear();
        // The names of the tangents: the parameters', then the rigid seeds'.
        let names: Vec<String> = parameters
            .iter()
            .map(|p| p.name(&scene))
            .chain(seeds.iter().map(|(n, _)| n.clone()))
            .collect();
        if let Some(stepper) = &sensitive {
            sensitivities = position_rows(&names, stepper.tangents());
            // The rigid systems' part of the same tangents (mixed scenes).
            for (name, t) in names.iter().zip(stepper.tangents()) {
                if t.rigid.is_empty() {
                    continue;
                }
                let systems = scene
                    .rigid
                    .systems
                    .iter()
                    .zip(&t.rigid)
                    .map(|(sys, r)| {
                        let out = RigidTangentOutput {
                            q: r.q.clone(),
                            v: r.v.clone(),
                        };
                        (sys.name.clone(), out)
                    })
                    .collect();
                rigid_sensitivities.insert(name.clone(), systems);
            }
        }
        if let Some(c) = &command_sensitivity {
            sensitivities = position_rows(&run_names, c.tangents());
        }
        if let Some(stepper) = &rigid_sensitive {
            let t = stepper.sensitivity();
            let rigid_names = rigid_initial
                .iter()
                .map(|p| p.name.clone())
                .chain(rigid_step_parameters.iter().map(|p| p.name(&scene)));
            for (c, name) in rigid_names.enumerate() {
                let mut systems = std::collections::BTreeMap::new();
                let mut o = 0;
                for sys in &scene.rigid.systems {
                    let rows = o..o + sys.nv();
                    systems.insert(
                        sys.name.clone(),
                        RigidTangentOutput {
                            q: rows.clone().map(|r| t.q[(r, c)]).collect(),
                            v: rows.map(|r| t.v[(r, c)]).collect(),
                        },
                    );
                    o += sys.nv();
                }
                rigid_sensitivities.insert(name, systems);
            }
        }
    }
    let mut final_state = FinalState::new(&scene, &state);
    final_state.sensitivities = sensitivities;
    final_state.rigid_sensitivities = rigid_sensitivities;
    final_state.gradient = gradient.unwrap_or_default();
    final_state.inputs = run.as_ref().map(CommandRun::output).or_else(|| {
        reduced_run
            .as_ref()
            .and_then(|r| r.schedule().map(|s| s.output()))
    });
    if let (Some((recorded, comparison, registration)), Some(simulated)) = (&observed, &tracks) {
        let error = marker_error(recorded, simulated, t0, *comparison, *registration);
        if error.outside > 0 {
            eprintln!(
                "warning: {} observed marker samples lie outside the run ({} s to {} s on the recording's clock) and are not compared",
                error.outside,
                t0,
                t0 + state.time
            );
        }
        final_state.marker_error = Some(error);
    }
    // Staged beside its destination now, moved into place once the `--out` files are.
    let staged_markers = match (&tracks, markers_out) {
        (Some(t), Some((file, unit))) => Some((t.stage(file, unit)?, t.samples())),
        _ => None,
    };
    if let (Some(f), Some(dir)) = (frames, out) {
        let json = serde_json::to_vec(&final_state)
            .map_err(|e| diffsoro::Error::invalid("final state", e.to_string()))?;
        // Rendered before the frames are moved into place, so a summary that cannot be drawn
        // (a path gone non-finite) fails the run with nothing written.
        let summary = trace
            .as_ref()
            .and_then(|t| t.summary())
            .map(|s| s.to_svg())
            .transpose()?;
        let pvds = f.finish(&scene, &json)?;
        eprintln!(
            "wrote {} (final state) and {} for ParaView",
            dir.join("final.json").display(),
            pvds.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        if let Some(svg) = summary {
            let path = dir.join("summary.svg");
            diffsoro::mesh::io::write_file_atomic(&path, svg.as_bytes())?;
            eprintln!(
                "wrote {}: the effector paths and the actuation on one page",
                path.display()
            );
        }
    }
    if let Some((staged, rows)) = staged_markers {
        let file = staged.path().display().to_string();
        staged.commit()?;
        eprintln!(
            "wrote {file}: {rows} rows of {} markers",
            scene.markers.len()
        );
    }
    Ok(final_state)
}

/// Records `state` of `scene` in the run's outputs: a frame (with the step's `contacts`, if
/// any) and the summary's trace with `--out`, the marker tracks (times from t₀ on the
/// recording's clock) with `--markers-out` or `--observed-markers`.
#[allow(clippy::too_many_arguments)]
fn record_outputs(
    frames: &mut Option<FrameSeries>,
    trace: &mut Option<diffsoro::scene::RunTrace>,
    tracks: &mut Option<MarkerTracks>,
    scene: &Scene,
    state: &diffsoro::scene::State,
    contacts: Option<&[diffsoro::scene::ContactOutcome]>,
    t0: f64,
) -> diffsoro::Result<()> {
    if let Some(f) = frames.as_mut() {
        f.write_with_contacts(scene, state, contacts)?;
        if let Some(t) = trace.as_mut() {
            t.record(scene, state);
        }
    }
    if let Some(t) = tracks.as_mut() {
        t.record_state(scene, state, t0);
    }
    Ok(())
}

/// Checks `--markers-out FILE` before the run: the scene has a marker, `FILE` is not a
/// folder, and its folder exists or is the `--out` folder `out` (which the run creates), so
/// that a run does not fail only at its end.
fn check_markers_out(scene: &Scene, file: &Path, out: Option<&Path>) -> diffsoro::Result<()> {
    let what = || format!("--markers-out `{}`", file.display());
    if scene.markers.is_empty() {
        return Err(diffsoro::Error::invalid(
            what(),
            "the scene has no marker: add a [[soft_body.marker]] (docs/scene-file.md)",
        ));
    }
    if file.is_dir() {
        return Err(diffsoro::Error::invalid(what(), "is a folder, not a file"));
    }
    let folder = file.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(folder) = folder
        && !folder.is_dir()
        && out != Some(folder)
    {
        return Err(diffsoro::Error::invalid(
            what(),
            format!("folder {} does not exist", folder.display()),
        ));
    }
    Ok(())
}

/// The final state's `sensitivities`: per name, the position rows of its tangent (every body's
/// nodes in scene order, m per unit of the parameter).
fn position_rows<'a>(
    names: &[String],
    tangents: impl Iterator<Item = &'a diffsoro::diff::StateTangent>,
) -> std::collections::BTreeMap<String, Vec<[f64; 3]>> {
    names
        .iter()
        .zip(tangents)
        .map(|(name, t)| {
            let rows = t
                .bodies
                .iter()
                .flat_map(|b| b.positions.iter().map(|d| [d.x, d.y, d.z]))
                .collect();
            (name.clone(), rows)
        })
        .collect()
}
