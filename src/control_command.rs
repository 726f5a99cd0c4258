//! `diffsoro control`: QP inverse control of an effector (a soft point, a robot's joint
//! coordinate) or Eq. 17 contact-force control, its report and run folder.

use std::path::Path;

use diffsoro::scene::Scene;

use crate::view_frames::ViewFrames;
use crate::{load_scene, print_json, progress, with_out_folder};

/// Eq. 17's (α, β, maximum change per step, heuristic) from the `control` flags.
type ForceLimitingFlags = (f64, f64, Option<f64>, bool);

/// The `control` flags that define the problem.
pub(crate) struct ControlFlags<'a> {
    pub(crate) effectors: &'a [String],
    pub(crate) targets: &'a [String],
    pub(crate) steps: Option<usize>,
    pub(crate) set: &'a [String],
    pub(crate) max_force: &'a [String],
    pub(crate) error_scale: diffsoro::chart::ScaleChoice,
    /// `--view`: write the frames and the viewer page into `--out`.
    pub(crate) view: bool,
    /// `--regularisation`: the QP's relative damping ε, over the scene's.
    pub(crate) regularisation: Option<f64>,
    /// `--max-change`: the largest change per step, over the scene's.
    pub(crate) max_change: Option<f64>,
    /// `--target-path`: moving targets, one per effector (instead of `--target`).
    pub(crate) target_paths: &'a [std::path::PathBuf],
    /// `--settle`: `tracking_rms` covers the steps ending after this time (s).
    pub(crate) settle: Option<f64>,
    /// `--plant-set`: the robot is the scene with these overrides too.
    pub(crate) plant_set: &'a [String],
    /// `--measurement-noise`: σ (m) on the effector the controller sees.
    pub(crate) measurement_noise: Option<f64>,
    /// `--seed`: of the measurement noise.
    pub(crate) seed: u64,
}

impl ControlFlags<'_> {
    /// Whether a flag of tracking with feedback (a path, `--settle`, a plant, noise) was
    /// given: the first one's name.
    fn tracking_flag(&self) -> Option<&'static str> {
        [
            (!self.target_paths.is_empty(), "--target-path"),
            (self.settle.is_some(), "--settle"),
            (!self.plant_set.is_empty(), "--plant-set"),
            (self.measurement_noise.is_some(), "--measurement-noise"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    }
}

/// `control`: loads the scene with `--set` and `--max-force`, checks the input against it and
/// `--out` (created before the run, removed again if the run fails), runs the control loop
/// (or, with `force_limiting`, Eq. 17), prints the report; with `out`, writes `control.json`
/// and the plots. `grasp_only_flags` says whether a flag that needs `--contact-weight` was
/// given.
pub(crate) fn control(
    path: &Path,
    flags: &ControlFlags<'_>,
    out: Option<&Path>,
    force_limiting: Option<ForceLimitingFlags>,
    grasp_only_flags: bool,
    static_mode: bool,
) -> diffsoro::Result<()> {
    use diffsoro::control::{
        ControlSetup, GraspSetup, JointSetup, Plant, QpSettings, control_scene_observed,
        default_qp_solver, grasp_scene_observed, joint_control, set_max_forces, static_control,
    };
    if static_mode && flags.view {
        return Err(diffsoro::Error::invalid(
            "--view",
            "shows a motion; static inverse control's iterates are poses (view a `simulate` of the result instead)",
        ));
    }
    if static_mode && force_limiting.is_some() {
        return Err(diffsoro::Error::invalid(
            "--static",
            "static inverse control drives one effector; it does not combine with --contact-weight",
        ));
    }
    if let Some(flag) = flags.tracking_flag()
        && (static_mode || force_limiting.is_some())
    {
        return Err(diffsoro::Error::invalid(
            flag,
            "belongs to tracking a soft effector in time: not with --static or --contact-weight",
        ));
    }
    let (effectors, targets, steps) = (flags.effectors, flags.targets, flags.steps);
    let mut scene = load_scene(path, flags.set)?;
    set_max_forces(&mut scene, flags.max_force)?;
    let mut solver = default_qp_solver(QpSettings::default());
    enum Job {
        Grasp(GraspSetup),
        Track(Box<ControlSetup>),
        Joint(JointSetup),
    }
    if force_limiting.is_some() && flags.regularisation.is_some() {
        return Err(diffsoro::Error::invalid(
            "--regularisation",
            "weights effector tracking's QP; contact-force limiting (--contact-weight) has its own weights",
        ));
    }
    let overrides = |o: diffsoro::control::ControlOptions| {
        o.with_overrides(flags.regularisation, flags.max_change)
    };
    let job = match force_limiting {
        Some((alpha, beta, max_change, heuristic)) => Job::Grasp(GraspSetup::new(
            &scene, effectors, targets, steps, alpha, beta, max_change, heuristic,
        )?),
        None => {
            if grasp_only_flags {
                return Err(diffsoro::Error::invalid(
                    "--heuristic",
                    "belongs to contact-force limiting: give --contact-weight BETA too",
                ));
            }
            if !targets.is_empty() && !flags.target_paths.is_empty() {
                return Err(diffsoro::Error::invalid(
                    "--target-path",
                    "is the effector's target (a moving one): give --target or --target-path, not both",
                ));
            }
            let given = targets.len() + flags.target_paths.len();
            if effectors.len() != 1 || given != 1 {
                return Err(diffsoro::Error::invalid(
                    "--effector/--target",
                    format!(
                        "inverse control drives one effector to one target or path ({} effector(s), {} target(s)); several effectors need --contact-weight (paper 004 Eq. 17)",
                        effectors.len(),
                        given
                    ),
                ));
            }
            let joint = match targets.first() {
                Some(target) => JointSetup::new(&scene, &effectors[0], target, steps)?,
                None => None,
            };
            if let (Some(_), Some(flag)) = (&joint, flags.tracking_flag()) {
                return Err(diffsoro::Error::invalid(
                    flag,
                    "belongs to tracking a soft effector: a joint effector (q:ROBOT[k]) takes a fixed --target",
                ));
            }
            match joint {
                Some(_) if static_mode => {
                    return Err(diffsoro::Error::invalid(
                        "--static",
                        "static inverse control drives a soft effector; a joint effector (q:ROBOT[k]) is driven in time (drop --static)",
                    ));
                }
                Some(mut joint) => {
                    joint.options = overrides(joint.options)?;
                    Job::Joint(joint)
                }
                None => {
                    let mut setup = match (targets.first(), flags.target_paths.first()) {
                        (Some(target), _) => {
                            ControlSetup::new(&scene, &effectors[0], target, steps)?
                        }
                        (None, Some(file)) => {
                            ControlSetup::with_path(&scene, &effectors[0], file, steps)?
                        }
                        (None, None) => unreachable!("one target or path, checked above"),
                    }
                    .settle_after(flags.settle)?;
                    setup.options = overrides(setup.options)?;
                    if !flags.plant_set.is_empty() || flags.measurement_noise.is_some() {
                        let all: Vec<String> =
                            flags.set.iter().chain(flags.plant_set).cloned().collect();
                        let mut robot = load_scene(path, &all)?;
                        set_max_forces(&mut robot, flags.max_force)?;
                        setup.plant = Some(Plant::new(
                            robot,
                            flags.measurement_noise.unwrap_or(0.0),
                            flags.seed,
                        )?);
                    }
                    Job::Track(Box::new(setup))
                }
            }
        }
    };
    with_out_folder(out, |out| {
        // With --view, the frames of the run as driven, staged until it has succeeded.
        let mut frames = ViewFrames::new(flags.view, out, &scene)?;
        let mut observe = |driven: &Scene,
                           state: &diffsoro::scene::State,
                           contacts: &[diffsoro::scene::ContactOutcome]| {
            frames.record(driven, state, contacts)
        };
        let report = match &job {
            Job::Grasp(setup) => {
                let bar = progress(setup.steps as u64, "control (Eq. 17)");
                let report = grasp_scene_observed(
                    &scene,
                    setup,
                    solver.as_mut(),
                    &mut |done| bar.set_position(done as u64),
                    &mut observe,
                )?;
                bar.finish_and_clear();
                report
            }
            Job::Joint(setup) => {
                let bar = progress(setup.steps as u64, "control (joint)");
                let report = joint_control(
                    &scene,
                    setup,
                    solver.as_mut(),
                    &mut |done| bar.set_position(done as u64),
                    &mut observe,
                )?;
                bar.finish_and_clear();
                report
            }
            Job::Track(setup) => {
                let bar = progress(
                    setup.steps as u64,
                    if static_mode {
                        "control (static)"
                    } else {
                        "control"
                    },
                );
                let mut tick = |done: usize| bar.set_position(done as u64);
                let report = if static_mode {
                    static_control(&scene, setup, solver.as_mut(), &mut tick)?
                } else {
                    control_scene_observed(&scene, setup, solver.as_mut(), &mut tick, &mut observe)?
                };
                bar.finish_and_clear();
                report
            }
        };
        if let Some(dir) = out {
            let written = report.write_outputs(dir, flags.error_scale)?;
            frames.finish(dir, &scene, written.len())?;
        }
        print_json(&report)
    })
}
