//! `diffsoro.Simulation`: a scene's state stepped in time, read and written as NumPy arrays,
//! with one step's derivatives.

use std::collections::BTreeMap;

use diffsoro::diff::{InputTangent, Parameter, StateTangent, TapeOptions};
use diffsoro::math::Vec3;
use diffsoro::scene::{
    CommandLog, CommandRun, FinalState, RunStart, Scene, State, StaticOptions, StepReport, Stepper,
    solve_static,
};
use numpy::{AllowTypeChange, PyArray1, PyArray2, PyArrayLike1, PyArrayLike2};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{array_to_nodes, nodes_to_array, to_python, vec3_to_array};
use crate::derivatives::{Derivatives, parameter_jacobian};
use crate::errors::{ConvergenceError, guarded, invalid, to_py};
use crate::scene::PyScene;
use crate::tape::PyTape;

/// An (n, 3) array-like of nodal values (any real dtype, converted to float64).
type Nodes<'py> = PyArrayLike2<'py, f64, AllowTypeChange>;

/// Per body name, an array: (n, 3) for a soft body, (nv,) for a rigid body or robot.
pub type Fields<'py> = BTreeMap<String, Bound<'py, PyAny>>;

/// A simulation of a scene: its own copy of the scene (actuation set by `set_actuation`), the
/// state (positions m, velocities m/s, time s) and the stepper. Starts at the scene's rest
/// state, time 0. Steps release the GIL.
///
/// With `strict=True`, a step whose contact NCP stops at its iteration limit raises
/// `diffsoro.ConvergenceError` (the CLI's `simulate --strict`); otherwise the step goes on with
/// the solver's last iterate and `final_state()` counts it in `unconverged_steps`.
#[pyclass(module = "diffsoro._diffsoro", name = "Simulation")]
pub struct PySimulation {
    scene: Scene,
    state: State,
    stepper: Stepper,
    strict: bool,
    derivatives: Option<Derivatives>,
}

/// The CLI's message for a step whose contact NCP did not converge (`None` if all did).
fn unconverged(scene: &Scene, state: &State, report: &StepReport) -> Option<String> {
    if report.contact_converged {
        return None;
    }
    let tolerance = scene.contact.settings.tolerance;
    Some(
        match scene
            .bodies
            .iter()
            .zip(&report.contact)
            .find(|(_, c)| !c.converged)
        {
            Some((body, c)) => format!(
                "contact: step {}: the contact NCP of soft body {} did not converge in {} iterations (residual {:.1e} > tolerance {:.1e})",
                state.steps,
                body.name(),
                c.iterations,
                c.residual,
                tolerance
            ),
            None => format!(
                "contact: step {}: the rigid bodies' contact NCP did not converge in {} iterations (residual {:.1e} > tolerance {:.1e})",
                state.steps, report.rigid.iterations, report.rigid.residual, tolerance
            ),
        },
    )
}

/// An error of a run of steps: the library's, or a strict run's unconverged contact.
enum RunError {
    Library(diffsoro::Error),
    Convergence(String),
}

impl PySimulation {
    /// The rigid system named `name`, or a `ValueError` listing the scene's.
    fn rigid_index(&self, name: &str) -> PyResult<usize> {
        self.scene.rigid.system(name).ok_or_else(|| {
            let known: Vec<&str> = self
                .scene
                .rigid
                .systems
                .iter()
                .map(|s| s.name.as_str())
                .collect();
            invalid(
                format!("rigid body or robot `{name}`"),
                format!("the scene has no such rigid body or robot (it has {known:?})"),
            )
        })
    }

    /// `steps` steps, stopping at the first error (the state keeps the steps done).
    fn advance(&mut self, py: Python<'_>, steps: usize) -> PyResult<()> {
        let (scene, state, stepper, strict) =
            (&self.scene, &mut self.state, &mut self.stepper, self.strict);
        let outcome = py.detach(|| {
            crate::errors::on_worker(|| {
                crate::errors::guarded_py(|| {
                    for _ in 0..steps {
                        match stepper.step(scene, state) {
                            Err(e) => return Ok(Err(RunError::Library(e))),
                            Ok(report) => {
                                if let (true, Some(m)) =
                                    (strict, unconverged(scene, state, &report))
                                {
                                    return Ok(Err(RunError::Convergence(m)));
                                }
                            }
                        }
                    }
                    Ok(Ok(()))
                })
            })
        })?;
        match outcome {
            Ok(()) => Ok(()),
            Err(RunError::Library(e)) => Err(to_py(e)),
            Err(RunError::Convergence(m)) => Err(ConvergenceError::new_err(m)),
        }
    }

    /// The parsed parameter names (errors name the bad one).
    fn parameters(&self, names: &[String]) -> PyResult<Vec<Parameter>> {
        parse_parameters(&self.scene, names)
    }

    /// Runs `f` with the derivative buffers (built on first use), the GIL released.
    fn with_derivatives<T: Send>(
        &mut self,
        py: Python<'_>,
        f: impl FnOnce(&mut Derivatives, &Scene, &State) -> diffsoro::Result<T> + Send,
    ) -> PyResult<T> {
        let (scene, state, cache) = (&self.scene, &self.state, &mut self.derivatives);
        py.detach(|| {
            guarded(|| {
                if cache.is_none() {
                    *cache = Some(Derivatives::new(scene)?);
                }
                f(cache.as_mut().expect("built above"), scene, state)
            })
        })
    }
}

/// A state tangent from per-body arrays (bodies not given: zero): (n, 3) for a soft body,
/// (nv,) for a rigid body or robot (its configuration tangent or velocity).
pub fn tangent(
    scene: &Scene,
    positions: Option<Fields<'_>>,
    velocities: Option<Fields<'_>>,
    what: &str,
) -> PyResult<StateTangent> {
    distinct_names(scene)?;
    let mut t = StateTangent::zeros(scene);
    for (field, map) in [("positions", positions), ("velocities", velocities)] {
        for (name, object) in map.unwrap_or_default() {
            let at = format!("{what} {field}[{name:?}]");
            if let Some(b) = scene.bodies.iter().position(|b| b.name() == name) {
                let array: Nodes<'_> = object.extract()?;
                let n = scene.bodies[b].node_count();
                let rows = array_to_nodes(&array, n, &at)?;
                let slot = &mut t.bodies[b];
                if field == "positions" {
                    slot.positions = rows;
                } else {
                    slot.velocities = rows;
                }
            } else if let Some(s) = scene.rigid.system(&name) {
                let array: PyArrayLike1<'_, f64, AllowTypeChange> = object.extract()?;
                let values = array.as_array().to_vec();
                let nv = scene.rigid.systems[s].nv();
                if values.len() != nv {
                    return Err(invalid(
                        at,
                        format!("has {} entries, expected {nv}", values.len()),
                    ));
                }
                if values.iter().any(|c| !c.is_finite()) {
                    return Err(invalid(at, "is not finite"));
                }
                let slot = &mut t.rigid[s];
                if field == "positions" {
                    slot.q = values;
                } else {
                    slot.v = values;
                }
            } else {
                return Err(invalid(
                    at,
                    "names no soft body, rigid body or robot of the scene",
                ));
            }
        }
    }
    Ok(t)
}

/// Errors when a soft body and a rigid body or robot share a name (the derivatives' dicts
/// are keyed by name).
fn distinct_names(scene: &Scene) -> PyResult<()> {
    match scene
        .bodies
        .iter()
        .find(|b| scene.rigid.system(b.name()).is_some())
    {
        Some(b) => Err(invalid(
            format!("name `{}`", b.name()),
            "is both a soft body's and a rigid body's or robot's: the derivatives' arrays are keyed by name",
        )),
        None => Ok(()),
    }
}

/// Per body name, an owned (n, 3) array of each body's field of `t`.
pub fn per_body<'py>(
    scene: &Scene,
    py: Python<'py>,
    t: &StateTangent,
    velocities: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (body, bt) in scene.bodies.iter().zip(&t.bodies) {
        let field = if velocities {
            &bt.velocities
        } else {
            &bt.positions
        };
        out.set_item(body.name(), nodes_to_array(py, field))?;
    }
    for (sys, rt) in scene.rigid.systems.iter().zip(&t.rigid) {
        let field = if velocities { &rt.v } else { &rt.q };
        out.set_item(&sys.name, PyArray1::from_slice(py, field))?;
    }
    Ok(out)
}

/// The parsed parameter names of `scene` (errors name the bad one).
fn parse_parameters(scene: &Scene, names: &[String]) -> PyResult<Vec<Parameter>> {
    guarded(|| {
        names
            .iter()
            .map(|n| Parameter::parse(scene, n.trim()))
            .collect()
    })
}

/// The parameter names of a list that returns one result per name (`step_jacobian`, `vjp`,
/// `Tape.adjoint`), a robot's whole input (`tau:ROBOT`, `target:ROBOT`) standing for each of
/// its coordinates (`Parameter::parse_each`): the names the results are keyed by, and the
/// parameters.
pub fn expand_parameters(
    scene: &Scene,
    names: &[String],
) -> PyResult<(Vec<String>, Vec<Parameter>)> {
    guarded(|| {
        let mut keys = Vec::new();
        let mut parsed = Vec::new();
        for name in names {
            let name = name.trim();
            let each = Parameter::parse_each(scene, name)?;
            if each.len() == 1 {
                keys.push(name.to_string());
            } else {
                keys.extend(each.iter().map(|p| p.name(scene)));
            }
            parsed.extend(each);
        }
        Ok((keys, parsed))
    })
}

/// A reverse-mode result as Python sees it: {"positions": {body: …}, "velocities": {body: …},
/// "parameters": {name: value}} (the state cotangent per body, the parameters' by name).
pub fn cotangents<'py>(
    py: Python<'py>,
    scene: &Scene,
    state: &StateTangent,
    names: &[String],
    values: &[f64],
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("positions", per_body(scene, py, state, false)?)?;
    out.set_item("velocities", per_body(scene, py, state, true)?)?;
    let p = PyDict::new(py);
    for (name, value) in names.iter().zip(values) {
        p.set_item(name.trim(), *value)?;
    }
    out.set_item("parameters", p)?;
    Ok(out)
}

#[pymethods]
impl PySimulation {
    /// A simulation of `scene` from its rest state (time 0).
    #[new]
    #[pyo3(signature = (scene, strict = false))]
    fn new(py: Python<'_>, scene: &PyScene, strict: bool) -> PyResult<Self> {
        let scene = scene.scene.clone();
        let stepper = py.detach(|| guarded(|| Stepper::new(&scene)))?;
        let state = scene.initial_state();
        Ok(PySimulation {
            scene,
            state,
            stepper,
            strict,
            derivatives: None,
        })
    }

    /// Advances the state by one time step (dt s).
    fn step(&mut self, py: Python<'_>) -> PyResult<()> {
        self.advance(py, 1)
    }

    /// Advances the state by `steps` time steps (default: the scene's `simulation.steps`).
    #[pyo3(signature = (steps = None))]
    fn run(&mut self, py: Python<'_>, steps: Option<usize>) -> PyResult<()> {
        let steps = steps.unwrap_or(self.scene.simulation.steps);
        self.advance(py, steps)
    }

    /// Simulated time (s): steps × dt.
    #[getter]
    fn time(&self) -> f64 {
        self.state.time
    }

    /// Steps taken.
    #[getter]
    fn steps(&self) -> usize {
        self.state.steps
    }

    /// A copy of the simulation's scene (with the actuation set by `set_actuation`).
    #[getter]
    fn scene(&self) -> PyScene {
        PyScene {
            scene: self.scene.clone(),
        }
    }

    /// Node positions of soft body `body` (m): an owned (n, 3) float64 array in mesh-file
    /// node order.
    fn positions<'py>(&self, py: Python<'py>, body: &str) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let b = PyScene::body_index(&self.scene, body)?;
        Ok(nodes_to_array(py, &self.state.bodies[b].positions))
    }

    /// Node velocities of soft body `body` (m/s): an owned (n, 3) float64 array in mesh-file
    /// node order.
    fn velocities<'py>(&self, py: Python<'py>, body: &str) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let b = PyScene::body_index(&self.scene, body)?;
        Ok(nodes_to_array(py, &self.state.bodies[b].velocities))
    }

    /// Sets soft body `body`'s node positions (m) and velocities (m/s), each an (n, 3) array
    /// in mesh-file node order (copied; finite values). Time and step count are kept.
    fn set_state(
        &mut self,
        body: &str,
        positions: Nodes<'_>,
        velocities: Nodes<'_>,
    ) -> PyResult<()> {
        let b = PyScene::body_index(&self.scene, body)?;
        let n = self.scene.bodies[b].node_count();
        let x = array_to_nodes(&positions, n, "positions")?;
        let v = array_to_nodes(&velocities, n, "velocities")?;
        let s = &mut self.state.bodies[b];
        s.positions = x;
        s.velocities = v;
        Ok(())
    }

    /// Sets actuator `name`'s input for the next steps, in its unit, keeping its kind of
    /// drive: a force-driven actuator's force λ (N for a cable, Pa for a cavity, N·m for a
    /// servo), a displacement-driven cable's shortening (m), a volume-driven cavity's volume
    /// change (m³), an angle-driven servo's angle (rad, from rest). Not clamped to the
    /// actuator's bounds (`run_commands` clamps).
    fn set_actuation(&mut self, name: &str, value: f64) -> PyResult<()> {
        let p = self.parameters(&[format!("actuator:{name}")])?[0];
        let Parameter::Actuator { .. } = p else {
            unreachable!("an actuator name parses to an actuator")
        };
        // The drive's kind is kept, so the stepper's workspaces (which know the solved
        // actuators) stay valid.
        guarded(|| p.set(&mut self.scene, value))?;
        self.derivatives = None;
        Ok(())
    }

    /// Runs the scene under logged actuator commands, as the CLI's `simulate --inputs`
    /// (docs/cli.md#commands-over-time): `times` (T,) in s on the log's clock, strictly
    /// increasing; `commands` {actuator: (T,) array} (or a (T, n) array with `names=`, one
    /// column per name), mapped to each actuator's input by its `gain`, `offset` and
    /// `time_constant` and clamped to its bounds. The run starts anew at time 0 = `times[0]`:
    /// `start="static"` (default) at rest at the static equilibrium under the first commands,
    /// `"scene"` from the scene's initial state; it runs `steps` steps (default: the whole
    /// steps that reach the last time), step k taking the commands at
    /// times[0] + (k+1)·dt. Actuators not named keep their inputs. Returns {"t0", "steps",
    /// "clamped": {actuator: steps clamped}, "warnings": [...]} (each actuator's first clamp
    /// is also a Python warning). Afterwards the scene keeps the last inputs and `step()`
    /// goes on from the final state. The final positions equal the CLI's bit for bit. On an
    /// error the state keeps the steps done. The GIL is released.
    #[pyo3(signature = (times, commands, steps = None, start = "static", names = None))]
    fn run_commands<'py>(
        &mut self,
        py: Python<'py>,
        times: PyArrayLike1<'py, f64, AllowTypeChange>,
        commands: &Bound<'py, PyAny>,
        steps: Option<usize>,
        start: &str,
        names: Option<Vec<String>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let times = times.as_array().to_vec();
        let mut columns: Vec<(String, Vec<f64>)> = Vec::new();
        if let Ok(dict) = commands.cast::<PyDict>() {
            if names.is_some() {
                return Err(invalid(
                    "run_commands names",
                    "goes with a (T, n) array of commands, not a dict (whose keys name the actuators)",
                ));
            }
            for (key, value) in dict.iter() {
                let name: String = key.extract()?;
                let column: PyArrayLike1<'_, f64, AllowTypeChange> = value.extract()?;
                columns.push((name, column.as_array().to_vec()));
            }
        } else {
            let Some(names) = names else {
                return Err(invalid(
                    "run_commands commands",
                    "is not a dict {actuator: (T,) array}: give a (T, n) array with names=[…] (n actuator names)",
                ));
            };
            let array: PyArrayLike2<'_, f64, AllowTypeChange> = commands.extract()?;
            let view = array.as_array();
            if view.ncols() != names.len() {
                return Err(invalid(
                    "run_commands commands",
                    format!(
                        "has shape {:?}: expected (T, {}), one column per name",
                        view.shape(),
                        names.len()
                    ),
                ));
            }
            for (j, name) in names.into_iter().enumerate() {
                columns.push((name, view.column(j).to_vec()));
            }
        }
        // Names the scene lacks, named as the argument they came in.
        for (name, _) in &columns {
            guarded(|| Parameter::parse(&self.scene, &format!("actuator:{name}")).map(|_| ()))
                .map_err(|e| {
                    invalid(
                        format!("run_commands commands[{name:?}]"),
                        e.value(py).to_string(),
                    )
                })?;
        }
        let log = guarded(|| CommandLog::from_columns("run_commands", times, columns))?;
        let start = guarded(|| RunStart::parse("run_commands start", start))?;
        let (scene, state, stepper, strict) = (
            &mut self.scene,
            &mut self.state,
            &mut self.stepper,
            self.strict,
        );
        self.derivatives = None;
        let outcome = py.detach(|| {
            crate::errors::on_worker(|| {
                crate::errors::guarded_py(|| {
                    let (mut run, start_state) = match CommandRun::start(scene, log, steps, start) {
                        Ok(started) => started,
                        Err(e) => return Ok(Err(RunError::Library(e))),
                    };
                    *state = start_state;
                    let mut warnings = run.take_warnings();
                    let mut failure = None;
                    for _ in 0..run.steps() {
                        match run.step(scene, state) {
                            Err(e) => {
                                failure = Some(RunError::Library(e));
                                break;
                            }
                            Ok(report) => {
                                warnings.extend(run.take_warnings());
                                if let (true, Some(m)) =
                                    (strict, unconverged(scene, state, &report))
                                {
                                    failure = Some(RunError::Convergence(m));
                                    break;
                                }
                            }
                        }
                    }
                    let output = run.output();
                    // Later steps go on with the run's stepper (its contact warm start).
                    *stepper = run.into_parts().1;
                    Ok(match failure {
                        Some(f) => Err(f),
                        None => Ok((output, warnings)),
                    })
                })
            })
        })?;
        let (output, warnings) = match outcome {
            Ok(done) => done,
            Err(RunError::Library(e)) => return Err(to_py(e)),
            Err(RunError::Convergence(m)) => return Err(ConvergenceError::new_err(m)),
        };
        let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
        for w in &warnings {
            let message = std::ffi::CString::new(w.as_str())
                .unwrap_or_else(|_| c"a command was clamped".to_owned());
            PyErr::warn(py, &category, &message, 1)?;
        }
        let out = PyDict::new(py);
        out.set_item("t0", output.t0)?;
        out.set_item("steps", output.steps)?;
        out.set_item("clamped", output.clamped)?;
        out.set_item("warnings", warnings)?;
        Ok(out)
    }

    /// Sets named differentiable parameters for the next steps ({name: value}):
    /// `young_modulus:BODY` (Pa), `poisson_ratio:BODY`, `actuator:NAME` (N, Pa, N·m, or rad
    /// for an angle-driven servo, as `set_actuation`), `tau:ROBOT[k]` (N·m or N, a robot
    /// driven by constant inputs), `target:ROBOT[k]` (a PD-driven robot's target, rad or m),
    /// `friction:OBSTACLE` (Coulomb coefficient), `mass:BODY` (a free rigid body's mass, kg,
    /// its inertia scaled with it), `rayleigh_mass:BODY` (α of D = αM + βK̂, 1/s),
    /// `rayleigh_stiffness:BODY` (β, s), `density:BODY` (ρ, kg/m³; not of a body with
    /// `mass = "uniform"`). The names are the derivatives' (`step_jacobian`, `jvp`, `vjp`,
    /// `Tape.adjoint`). Raises `ValueError` naming an unknown parameter or an invalid value
    /// (E ≤ 0, ν outside (−1, 0.5), μ < 0, m ≤ 0, α < 0, β < 0, ρ ≤ 0, not finite); nothing is
    /// changed then.
    fn set_parameters(&mut self, py: Python<'_>, values: BTreeMap<String, f64>) -> PyResult<()> {
        let names: Vec<String> = values.keys().cloned().collect();
        let parsed = self.parameters(&names)?;
        let mut scene = self.scene.clone();
        for (p, value) in parsed.iter().zip(values.values()) {
            guarded(|| p.set(&mut scene, *value))?;
        }
        // The stepper's workspaces depend on the materials and on which actuators are solved.
        let stepper = py.detach(|| guarded(|| Stepper::new(&scene)))?;
        self.scene = scene;
        self.stepper = stepper;
        self.derivatives = None;
        Ok(())
    }

    /// Advances the state by `steps` time steps (default: the scene's `simulation.steps`)
    /// while recording what the adjoint needs, and returns the recording (`Tape`): every
    /// step's start state and, while under `memory_limit` bytes (default 2 GiB), every step's
    /// factorisations (steps beyond it are recomputed by `Tape.adjoint`). The states are
    /// those of `run(steps)`: bit for bit without contact, to the NCP's tolerance with it (a
    /// recorded step forms G from every column A⁻¹Hᵀ, which the derivatives reuse; `run`
    /// takes the forward half of the solve, or eliminates attachments without G). `strict` is
    /// not checked here: `final_state()` counts unconverged steps.
    ///
    /// With `knots` ({actuator: (K,) array}) and `knot_times` ((K,) s, strictly increasing,
    /// on the simulation's clock `time`), the named actuators' inputs follow the knots
    /// piecewise linearly (held before the first and after the last): step k from time t₀
    /// takes the inputs at t₀ + (k+1)·dt, the end of the step, as a command log does. Inputs
    /// are in the actuator's unit (N for a cable's tension, Pa, N·m) and not clamped; only
    /// force-driven actuators follow knots (a displacement-driven cable, volume-driven cavity
    /// or angle-driven servo is a `ValueError`). Afterwards the simulation keeps the last
    /// step's inputs. `Tape.adjoint` then also returns the gradient along each knot. The GIL
    /// is released.
    #[pyo3(signature = (steps = None, memory_limit = None, knots = None, knot_times = None))]
    fn record(
        &mut self,
        py: Python<'_>,
        steps: Option<usize>,
        memory_limit: Option<usize>,
        knots: Option<Bound<'_, PyAny>>,
        knot_times: Option<Bound<'_, PyAny>>,
    ) -> PyResult<PyTape> {
        let steps = steps.unwrap_or(self.scene.simulation.steps);
        let mut options = TapeOptions::default();
        if let Some(limit) = memory_limit {
            options.memory_limit = limit;
        }
        let followed = knots.is_some();
        let tape = crate::tape::record(
            py,
            &mut self.scene,
            &mut self.state,
            steps,
            options,
            knots.as_ref(),
            knot_times.as_ref(),
        )?;
        if followed {
            self.derivatives = None;
        }
        Ok(tape)
    }

    /// Configuration of rigid body or robot `name`: an owned float64 array of shape (nq,) (a
    /// free body's `[x, y, z, qx, qy, qz, qw]`, m; a robot's joint coordinates in URDF
    /// depth-first order, rad or m, a free-flyer base first).
    fn rigid_q<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let s = self.rigid_index(name)?;
        Ok(PyArray1::from_slice(py, &self.state.rigid[s].q))
    }

    /// Velocity of rigid body or robot `name`: an owned float64 array of shape (nv,) (a free
    /// body's `[vx, vy, vz, wx, wy, wz]` in world axes, m/s and rad/s; a robot's joint
    /// velocities).
    fn rigid_v<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let s = self.rigid_index(name)?;
        Ok(PyArray1::from_slice(py, &self.state.rigid[s].v))
    }

    /// Sets rigid body or robot `name`'s configuration (nq) and velocity (nv), copied; a
    /// quaternion is normalised. Time and step count are kept.
    fn set_rigid_state(
        &mut self,
        name: &str,
        q: PyArrayLike1<'_, f64, AllowTypeChange>,
        v: PyArrayLike1<'_, f64, AllowTypeChange>,
    ) -> PyResult<()> {
        let s = self.rigid_index(name)?;
        let system = &self.scene.rigid.systems[s];
        let (q, v) = (q.as_array().to_vec(), v.as_array().to_vec());
        for (what, x, n) in [("q", &q, system.nq()), ("v", &v, system.nv())] {
            if x.len() != n {
                return Err(invalid(
                    format!("{name}: {what}"),
                    format!("has {} entries, expected {n}", x.len()),
                ));
            }
            if x.iter().any(|c| !c.is_finite()) {
                return Err(invalid(format!("{name}: {what}"), "not finite"));
            }
        }
        let state = &mut self.state.rigid[s];
        state.q = q;
        state.v = v;
        if let diffsoro::scene::RigidDynamics::Free(_) = system.dynamics {
            let norm = state.q[3..7].iter().map(|c| c * c).sum::<f64>().sqrt();
            if !(norm > 0.0) {
                return Err(invalid(
                    format!("{name}: q"),
                    "the quaternion q[3..7] is zero",
                ));
            }
            state.q[3..7].iter_mut().for_each(|c| *c /= norm);
        }
        Ok(())
    }

    /// Position of effector `name` (m): an owned float64 array of shape (3,).
    fn effector<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyArray1<f64>>> {
        for (i, bs) in self.state.bodies.iter().enumerate() {
            if let Some(e) = self
                .scene
                .body_actuation(i)
                .effectors
                .iter()
                .find(|e| e.name == name)
            {
                return Ok(vec3_to_array(py, e.point.position(&bs.positions)));
            }
        }
        guarded(|| diffsoro::control::check_effector(&self.scene, name))?;
        Err(invalid(format!("effector `{name}`"), "not found"))
    }

    /// Every marker's position (m, scene frame) in the current state: {name: owned float64
    /// array of shape (3,)}, in the scene's marker order (`Scene.marker_names`); empty when the
    /// scene has no `[[soft_body.marker]]`.
    fn markers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (m, p) in self
            .scene
            .markers
            .list
            .iter()
            .zip(self.scene.markers.positions(&self.state))
        {
            out.set_item(&m.name, vec3_to_array(py, p))?;
        }
        Ok(out)
    }

    /// Every marker's position (m, scene frame) in the current state, one row per marker in
    /// the scene's marker order (`Scene.marker_names`): an owned (M, 3) float64 array ((0, 3)
    /// without markers).
    fn marker_positions<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        nodes_to_array(py, &self.scene.markers.positions(&self.state))
    }

    /// Solves for static equilibrium under the scene's loads from the current state
    /// (velocities set to zero; time unchanged), as `diffsoro simulate --static`. Returns
    /// {body: {"iterations", "load_steps", "residual"}} (Newton iterations, load steps,
    /// relative residual). Raises `ValueError` when a body does not converge or the scene has
    /// contact.
    fn static_equilibrium<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (scene, state) = (&self.scene, &mut self.state);
        let reports =
            py.detach(|| guarded(|| solve_static(scene, state, StaticOptions::default())))?;
        let out = PyDict::new(py);
        for (body, r) in self.scene.bodies.iter().zip(&reports) {
            let d = PyDict::new(py);
            d.set_item("iterations", r.iterations)?;
            d.set_item("load_steps", r.load_steps)?;
            d.set_item("residual", r.residual)?;
            out.set_item(body.name(), d)?;
        }
        Ok(out)
    }

    /// The final-state dict of the current state, equal to the CLI's final-state JSON
    /// (`diffsoro simulate`): time (s), steps, contacts, soft_bodies (positions m, velocities
    /// m/s), actuators (value δ, force λ), effectors (position m, body, nodes, weights),
    /// robots, gravity (m/s²), obstacles (if any), unconverged_steps.
    fn final_state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &FinalState::new(&self.scene, &self.state))
    }

    /// The mechanical energy of the current state (J): {"kinetic", "elastic", "gravity",
    /// "actuators", "total"}.
    fn energy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let e = guarded(|| self.scene.energy(&self.state))?;
        let out = PyDict::new(py);
        out.set_item("kinetic", e.kinetic)?;
        out.set_item("elastic", e.elastic)?;
        out.set_item("gravity", e.gravity)?;
        out.set_item("actuators", e.actuators)?;
        out.set_item("total", e.total())?;
        Ok(out)
    }

    /// The one-step Jacobian of the positions with respect to named parameters, from the
    /// current state (the state is not advanced): {name: (N, 3) array of d x⁺/d p}, N the
    /// nodes of every soft body in scene order (the CLI's `sensitivities` layout). Names:
    /// `young_modulus:BODY` (m/Pa), `poisson_ratio:BODY` (m), `actuator:NAME` (m per N, Pa,
    /// N·m or rad), `rayleigh_mass:BODY` (m per 1/s), `rayleigh_stiffness:BODY` (m per s),
    /// `density:BODY` (m per kg/m³), and those of `set_parameters`; the rigid bodies' and
    /// robots' columns come from `jvp(parameters={name: 1.0})`.
    fn step_jacobian<'py>(
        &mut self,
        py: Python<'py>,
        params: Vec<String>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (keys, parameters) = expand_parameters(&self.scene, &params)?;
        let tangents = self.with_derivatives(py, |d, scene, state| {
            parameter_jacobian(d, scene, state, &parameters)
        })?;
        let out = PyDict::new(py);
        for (name, t) in keys.iter().zip(&tangents) {
            let rows: Vec<Vec3> = t.bodies.iter().flat_map(|b| b.positions.clone()).collect();
            out.set_item(name.trim(), nodes_to_array(py, &rows))?;
        }
        Ok(out)
    }

    /// Forward mode of one step from the current state (not advanced): the tangents of
    /// (x⁺, v⁺) for the input direction given by `parameters` ({name: dp}, the names of
    /// `set_parameters`), `positions` and
    /// `velocities` ({body: (n, 3) dx or dv}; bodies left out: zero). Returns
    /// (dx⁺, dv⁺), each {body: (n, 3) array}. Rigid bodies and robots take part by name
    /// with (nv,) arrays: the configuration's tangent (a free body's [δc; δθ], m and rad; a
    /// robot's joint coordinates) in `positions`, the velocity's in `velocities`, in and out
    /// (steps where soft and rigid bodies meet included).
    #[pyo3(signature = (parameters = None, positions = None, velocities = None))]
    fn jvp<'py>(
        &mut self,
        py: Python<'py>,
        parameters: Option<BTreeMap<String, f64>>,
        positions: Option<Fields<'_>>,
        velocities: Option<Fields<'_>>,
    ) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
        let parameters = parameters.unwrap_or_default();
        let names: Vec<String> = parameters.keys().cloned().collect();
        let parsed = self.parameters(&names)?;
        let input = InputTangent {
            state: tangent(&self.scene, positions, velocities, "jvp")?,
            parameters: parameters.values().copied().collect(),
        };
        let mut out = self.with_derivatives(py, |d, scene, state| {
            d.jvp(scene, state, &parsed, std::slice::from_ref(&input))
        })?;
        let t = out.pop().expect("one direction");
        Ok((
            per_body(&self.scene, py, &t, false)?,
            per_body(&self.scene, py, &t, true)?,
        ))
    }

    /// Reverse mode of one step from the current state (not advanced): for the cotangent
    /// of (x⁺, v⁺) given by `positions` and `velocities` ({body: (n, 3)}; bodies left out:
    /// zero), the cotangents of the step's inputs: {"positions": {body: (n, 3)},
    /// "velocities": {body: (n, 3)}, "parameters": {name: float}} for the names in `params`.
    /// Rigid bodies and robots take part by name with (nv,) arrays, as in `jvp`.
    #[pyo3(signature = (positions = None, velocities = None, params = Vec::new()))]
    fn vjp<'py>(
        &mut self,
        py: Python<'py>,
        positions: Option<Fields<'_>>,
        velocities: Option<Fields<'_>>,
        params: Vec<String>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (keys, parsed) = expand_parameters(&self.scene, &params)?;
        let output = tangent(&self.scene, positions, velocities, "vjp")?;
        let result =
            self.with_derivatives(py, |d, scene, state| d.vjp(scene, state, &parsed, &output))?;
        cotangents(py, &self.scene, &result.state, &keys, &result.parameters)
    }

    fn __repr__(&self) -> String {
        format!(
            "Simulation(time={}, steps={}, bodies={:?})",
            self.state.time,
            self.state.steps,
            self.scene
                .bodies
                .iter()
                .map(|b| b.name())
                .collect::<Vec<_>>()
        )
    }
}
