//! The jobs `calibrate` and `control`, returning the CLI's reports as dicts; the GIL is
//! released while they run and taken back only to call a progress callback.

use std::path::PathBuf;

use std::collections::BTreeMap;

use diffsoro::calibrate::trials::calibrate_trials;
use diffsoro::calibrate::{
    CalibrationProgress, CalibrationSetup, DEFAULT_RESTARTS, LmOptions, Parametrisation,
    calibrate_scene, check_targets, load_observation, parse_initial_values,
};
use diffsoro::control::{
    ControlSetup, JointSetup, QpSettings, control_scene_with_progress, default_qp_solver,
    joint_control, set_max_forces, static_control,
};
use diffsoro::scene::FinalState;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::convert::{to_json_text, to_python};
use crate::errors::{guarded, invalid};
use crate::scene::PyScene;
use crate::trials::trial_setup;

/// Calls the optional Python callback with the dict `make` builds, keeping the first error
/// it raises (raised when the job is done). Takes the GIL for the call only.
struct Callback {
    function: Option<Py<PyAny>>,
    error: Option<PyErr>,
}

impl Callback {
    fn new(function: Option<Py<PyAny>>) -> Callback {
        Callback {
            function,
            error: None,
        }
    }

    fn call(&mut self, make: impl FnOnce(Python<'_>) -> PyResult<Bound<'_, PyDict>>) {
        let (Some(f), None) = (&self.function, &self.error) else {
            return;
        };
        Python::attach(|py| {
            if let Err(e) = make(py).and_then(|d| f.call1(py, (d,))) {
                self.error = Some(e);
            }
        });
    }

    fn finish(self) -> PyResult<()> {
        self.error.map_or(Ok(()), Err)
    }
}

/// A parameter's range (lo, hi), `None` for the default end.
type Range = (Option<f64>, Option<f64>);

/// {name: value} of a calibration progress event.
fn named_values<'py>(
    py: Python<'py>,
    names: &[String],
    values: &[f64],
) -> PyResult<Bound<'py, PyDict>> {
    let v = PyDict::new(py);
    for (n, x) in names.iter().zip(values) {
        v.set_item(n, *x)?;
    }
    Ok(v)
}

/// The observed final state: a dict as `Simulation.final_state()` returns (or the CLI
/// writes), or the path of a JSON file.
fn observation(
    observed: &Bound<'_, PyAny>,
    scene: &diffsoro::scene::Scene,
) -> PyResult<FinalState> {
    if observed.is_instance_of::<PyDict>() {
        let text = to_json_text(observed)?;
        return serde_json::from_str(&text)
            .map_err(|e| invalid("observed", format!("is not a final state: {e}")));
    }
    if observed.is_instance_of::<PyString>() || observed.hasattr("__fspath__")? {
        let path: PathBuf = observed.extract()?;
        return guarded(|| load_observation(&path, scene));
    }
    Err(invalid(
        "observed",
        "expected a final-state dict or the path of a final-state JSON file",
    ))
}

/// Fits parameters of `scene` so that its final state after `simulation.steps` steps matches
/// `observed` (Levenberg–Marquardt on the forward sensitivities), as `diffsoro calibrate`; or,
/// with `trials`, to real experiments, as `diffsoro calibrate --trial`.
///
/// `observed`: a final-state dict (`Simulation.final_state()`) or the path of a final-state
/// JSON file; `params`: names `young_modulus:BODY` (Pa), `poisson_ratio:BODY`,
/// `actuator:NAME`, `friction:OBSTACLE`, `mass:BODY` (kg), `rayleigh_mass:BODY` (1/s),
/// `rayleigh_stiffness:BODY` (s), `density:BODY` (kg/m³), and with trials `gain:ACTUATOR`,
/// `offset:ACTUATOR`, `time_constant:ACTUATOR` (s); `init`: optional starting values by name
/// (default: the scene's); `bounds`: optional {name: (lo, hi)} ranges to fit inside (either
/// end may be None for the default end; the CLI's `--bounds`); `restarts`: further fits
/// started from a grid when the first misses (the CLI's `--restarts`; None: its default, 4;
/// not used with trials); `progress`: optional callable called after each simulation with
/// {"event": "evaluated", "evaluation", "values": {name: value}, "loss" (m²),
/// "unconverged_contact_steps"}, at each restart with {"event": "restart", "restart",
/// "values"}, and for a failed trial step with {"event": "failed", "evaluation", "values",
/// "error"}.
///
/// `trials` (instead of `observed`): a list of dicts, each {"times": (R,) s, "commands":
/// {actuator: (R,) command units}, "markers": {"times": (N,) s, "names": [N names], "xyz":
/// (N, 3)} or {name: (times (T,), positions (T, 3))} (as `read_marker_tracks` returns),
/// optional "label"}, both on one clock; NaN samples are skipped. `compare` ("absolute" or
/// "displacement"), `register` ("none", "translation", "rigid"), `start` ("static" or
/// "scene") and `marker_unit` ("m" or "mm") as the CLI's flags.
///
/// Returns the CLI's report: {"params": {name: value}, "iterations", "loss": [m² per
/// iteration], "converged", …} (the same keys as `diffsoro calibrate`; with trials also
/// "std_errors", "correlation", "rms", "frame", …).
#[pyfunction]
#[pyo3(signature = (scene, observed = None, params = None, init = None, bounds = None, restarts = None, progress = None, trials = None, compare = None, register = None, start = None, marker_unit = "m"))]
#[allow(clippy::too_many_arguments)]
pub fn calibrate<'py>(
    py: Python<'py>,
    scene: &PyScene,
    observed: Option<&Bound<'py, PyAny>>,
    params: Option<Vec<String>>,
    init: Option<BTreeMap<String, f64>>,
    bounds: Option<BTreeMap<String, Range>>,
    restarts: Option<usize>,
    progress: Option<Py<PyAny>>,
    trials: Option<&Bound<'py, PyList>>,
    compare: Option<&str>,
    register: Option<&str>,
    start: Option<&str>,
    marker_unit: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let scene = &scene.scene;
    let Some(params) = params else {
        return Err(invalid("params", "give the names of the parameters to fit"));
    };
    // The CLI's `--bounds NAME=LO,HI` and `--init NAME=VALUE` (`f64` Display round-trips).
    let bounds: Vec<String> = bounds
        .unwrap_or_default()
        .iter()
        .map(|(name, (lo, hi))| {
            let end = |v: &Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
            format!("{name}={},{}", end(lo), end(hi))
        })
        .collect();
    let init: Vec<String> = init
        .unwrap_or_default()
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    let names: Vec<String> = params.to_vec();
    let mut callback = Callback::new(progress);
    let trial_flags = compare.is_some() || register.is_some() || start.is_some();
    let report = match (observed, trials) {
        (Some(_), Some(_)) | (None, None) => {
            return Err(invalid(
                "calibrate",
                "give either observed (a final state) or trials (real experiments)",
            ));
        }
        (Some(observed), None) => {
            if trial_flags {
                return Err(invalid(
                    "compare, register, start",
                    "apply to a fit to trials (trials=[…])",
                ));
            }
            let map = guarded(|| Parametrisation::parse(&params)?.with_bounds(&bounds))?;
            guarded(|| check_targets(scene, &map))?;
            let initial = guarded(|| parse_initial_values(&map, &init))?;
            let setup = CalibrationSetup {
                params: map,
                initial,
                observed: observation(observed, scene)?,
                restarts: restarts.unwrap_or(DEFAULT_RESTARTS),
            };
            let report = py.detach(|| {
                guarded(|| {
                    let mut on_progress = progress_events(&mut callback, &names);
                    calibrate_scene(scene, &setup, &LmOptions::default(), &mut on_progress)
                })
            })?;
            to_python(py, &report)?
        }
        (None, Some(trials)) => {
            let setup = trial_setup(
                scene,
                trials,
                &params,
                &bounds,
                &init,
                (compare, register, start, marker_unit),
            )?;
            let report = py.detach(|| {
                guarded(|| {
                    let mut on_progress = progress_events(&mut callback, &names);
                    calibrate_trials(scene, &setup, &LmOptions::default(), &mut on_progress)
                })
            })?;
            to_python(py, &report)?
        }
    };
    callback.finish()?;
    Ok(report)
}

/// A fit's progress events passed to `callback` as dicts (`calibrate`'s `progress`).
fn progress_events<'a>(
    callback: &'a mut Callback,
    names: &'a [String],
) -> impl FnMut(CalibrationProgress<'_>) + 'a {
    move |event: CalibrationProgress<'_>| match event {
        CalibrationProgress::Evaluated {
            evaluation,
            values,
            loss,
            unconverged_contact_steps,
        } => callback.call(|py| {
            let d = PyDict::new(py);
            d.set_item("event", "evaluated")?;
            d.set_item("evaluation", evaluation)?;
            d.set_item("values", named_values(py, names, values)?)?;
            d.set_item("loss", loss)?;
            d.set_item("unconverged_contact_steps", unconverged_contact_steps)?;
            Ok(d)
        }),
        CalibrationProgress::Restart { restart, values } => callback.call(|py| {
            let d = PyDict::new(py);
            d.set_item("event", "restart")?;
            d.set_item("restart", restart)?;
            d.set_item("values", named_values(py, names, values)?)?;
            Ok(d)
        }),
        CalibrationProgress::Failed {
            evaluation,
            values,
            error,
        } => callback.call(|py| {
            let d = PyDict::new(py);
            d.set_item("event", "failed")?;
            d.set_item("evaluation", evaluation)?;
            d.set_item("values", named_values(py, names, values)?)?;
            d.set_item("error", error.to_string())?;
            Ok(d)
        }),
        CalibrationProgress::Step { .. } => {}
    }
}

/// A control target as the CLI's `--target` text: a number or a sequence of numbers, joined
/// by commas (`f64` Display round-trips exactly; the CLI's parsers check the count).
fn target_text(target: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(v) = target.extract::<f64>() {
        return Ok(v.to_string());
    }
    let values: Vec<f64> = target
        .extract()
        .map_err(|_| invalid("target", "expected a number or a sequence of numbers"))?;
    Ok(values
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(","))
}

/// What `control` drives: a robot's joint coordinate or a soft effector.
enum Job {
    Joint(JointSetup),
    Track(Box<ControlSetup>),
}

/// Drives effector `effector` of `scene` to `target` by QP inverse control of the actuators,
/// as `diffsoro control`: a soft effector (its name, `target` = (x, y, z) in m) or a robot's
/// joint coordinate `q:ROBOT[k]` (`target` one number, rad for a revolute joint, m for a
/// prismatic one; a float or a one-element sequence), `steps` control steps (default: the
/// scene's `simulation.steps`), or for a soft effector with `static=True` static inverse
/// control (`steps` bounds the iterations). `max_force`: optional {actuator: largest input}
/// (N, Pa or N·m; the CLI's `--max-force`). `progress`: optional callable called with
/// {"done": steps done}.
///
/// Returns the CLI's report: {"target", "final_position" (m, or the joint's [θ]),
/// "final_error", "error_history" (per step), "position_history" (the effector's (x, y, z)
/// or [θ] per step), "actuation_history" (per step, N / Pa / N·m per actuator), "actuators"
/// (names ordering each row)}, and for a joint effector its "effector", "unit",
/// "final_velocity", "status", … (the same keys as `diffsoro control`).
#[pyfunction]
#[pyo3(signature = (scene, effector, target, steps = None, r#static = false, max_force = None, progress = None))]
#[allow(clippy::too_many_arguments)]
pub fn control<'py>(
    py: Python<'py>,
    scene: &PyScene,
    effector: &str,
    target: &Bound<'py, PyAny>,
    steps: Option<usize>,
    r#static: bool,
    max_force: Option<BTreeMap<String, f64>>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let mut scene = scene.scene.clone();
    let entries: Vec<String> = max_force
        .unwrap_or_default()
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    guarded(|| set_max_forces(&mut scene, &entries))?;
    let scene = &scene;
    let text = target_text(target)?;
    // A `q:ROBOT[k]` name is a joint effector (`None`: a soft effector's name).
    let job = match guarded(|| JointSetup::new(scene, effector, &text, steps))? {
        Some(_) if r#static => {
            return Err(invalid(
                "static",
                "static inverse control drives a soft effector; a joint effector (q:ROBOT[k]) is driven in time (drop static=True)",
            ));
        }
        Some(joint) => Job::Joint(joint),
        None => Job::Track(Box::new(guarded(|| {
            ControlSetup::new(scene, effector, &text, steps)
        })?)),
    };
    let mut callback = Callback::new(progress);
    let report = py.detach(|| {
        guarded(|| {
            let mut solver = default_qp_solver(QpSettings::default());
            let mut tick = |done: usize| {
                callback.call(|py| {
                    let d = PyDict::new(py);
                    d.set_item("done", done)?;
                    Ok(d)
                })
            };
            match &job {
                Job::Joint(setup) => {
                    joint_control(scene, setup, solver.as_mut(), &mut tick, &mut |_, _, _| {
                        Ok(())
                    })
                }
                Job::Track(setup) if r#static => {
                    static_control(scene, setup, solver.as_mut(), &mut tick)
                }
                Job::Track(setup) => {
                    control_scene_with_progress(scene, setup, solver.as_mut(), &mut tick)
                }
            }
        })
    })?;
    callback.finish()?;
    to_python(py, &report)
}
