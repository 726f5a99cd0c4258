//! `diffsoro.Tape`: a recorded trajectory (`Simulation.record`), its actuators' inputs held
//! or following piecewise-linear knots, the states along it, and the adjoint of a loss of
//! those states (docs/derivatives.md, "Losses along a trajectory").

use std::collections::BTreeMap;

use diffsoro::actuator::Drive;
use diffsoro::diff::{
    ActuationKnots, Parameter, StateTangent, Tape, TapeOptions, adjoint_series,
    check_differentiable, record_trajectory, record_trajectory_with,
};
use diffsoro::math::Vec3;
use diffsoro::scene::{Scene, State};
use numpy::ndarray::Array3;
use numpy::{AllowTypeChange, IntoPyArray, PyArray1, PyArray3, PyArrayLikeDyn};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt};

use crate::errors::{guarded, invalid};
use crate::simulation::{cotangents, expand_parameters, tangent};

/// A recorded trajectory (`Simulation.record`) for reverse-mode gradients of a loss of the
/// states along it with respect to its start state, named parameters held constant over the
/// run and, when it was recorded under knots, the knots' values (one backward sweep of step
/// VJPs).
#[pyclass(module = "diffsoro._diffsoro", name = "Tape")]
pub struct PyTape {
    /// The scene as the run left it (a recomputed step takes its own inputs from the tape).
    scene: Scene,
    tape: Tape,
    /// The state after the last step.
    last: State,
    /// The knots the run's inputs followed, if any.
    knots: Option<RecordedKnots>,
}

/// Knots a run's inputs followed: the crate's knots (times from the run's start), the times
/// as given (s, the simulation's clock) and the actuators' names in their order.
struct RecordedKnots {
    knots: ActuationKnots,
    times: Vec<f64>,
    names: Vec<String>,
}

/// A float64 array of exactly `shape` from any array-like (any real dtype), finite; `what`
/// names it in the `ValueError`s (not an array of numbers, shape, a non-finite entry).
fn array_of_shape(object: &Bound<'_, PyAny>, shape: &[usize], what: &str) -> PyResult<Vec<f64>> {
    let array: PyArrayLikeDyn<'_, f64, AllowTypeChange> = object
        .extract()
        .map_err(|_| invalid(what, "is not an array of numbers"))?;
    let view = array.as_array();
    if view.shape() != shape {
        let expected: Vec<String> = shape.iter().map(|n| n.to_string()).collect();
        let expected = match expected.len() {
            1 => format!("({},)", expected[0]),
            _ => format!("({})", expected.join(", ")),
        };
        return Err(invalid(
            what,
            format!("has shape {:?}, expected {expected}", view.shape()),
        ));
    }
    let values: Vec<f64> = view.iter().copied().collect();
    if let Some(i) = values.iter().position(|c| !c.is_finite()) {
        return Err(invalid(what, format!("entry {i} is not finite")));
    }
    Ok(values)
}

/// A 1-D float64 array of any length from any array-like; `what` names it in errors.
fn vector(object: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<f64>> {
    let array: PyArrayLikeDyn<'_, f64, AllowTypeChange> = object
        .extract()
        .map_err(|_| invalid(what, "is not an array of numbers"))?;
    let n = array.as_array().len();
    if array.as_array().ndim() != 1 {
        return Err(invalid(
            what,
            format!("has shape {:?}, expected (K,)", array.as_array().shape()),
        ));
    }
    array_of_shape(object, &[n], what)
}

/// The knots of `record(knots=, knot_times=)`: `knots` {actuator: (K,) inputs in its unit},
/// `knot_times` (K,) s on the simulation's clock, strictly increasing; `t0` (s) the time the
/// run starts at. Only force-driven actuators (a cable's tension N, a cavity's pressure Pa, a
/// servo's torque N·m) follow knots. Errors name the argument.
fn parse_knots(
    scene: &Scene,
    knots: Option<&Bound<'_, PyAny>>,
    knot_times: Option<&Bound<'_, PyAny>>,
    t0: f64,
) -> PyResult<Option<RecordedKnots>> {
    let (knots, times) = match (knots, knot_times) {
        (None, None) => return Ok(None),
        (Some(_), None) => {
            return Err(invalid(
                "record knot_times",
                "is needed with knots: the knots' times, a (K,) array in s",
            ));
        }
        (None, Some(_)) => {
            return Err(invalid(
                "record knots",
                "is needed with knot_times: {actuator: (K,) array of its inputs}",
            ));
        }
        (Some(k), Some(t)) => (k, t),
    };
    let times = vector(times, "record knot_times")?;
    if times.is_empty() {
        return Err(invalid(
            "record knot_times",
            "is empty: give at least one knot",
        ));
    }
    for (j, w) in times.windows(2).enumerate() {
        if !(w[1] > w[0]) {
            return Err(invalid(
                format!("record knot_times[{}]", j + 1),
                format!(
                    "{} does not follow {}: knot times increase strictly",
                    w[1], w[0]
                ),
            ));
        }
    }
    let dict = knots.cast::<PyDict>().map_err(|_| {
        invalid(
            "record knots",
            "is not a dict {actuator: (K,) array of its inputs}",
        )
    })?;
    if dict.is_empty() {
        return Err(invalid("record knots", "names no actuator"));
    }
    let mut names = Vec::new();
    let mut values = Vec::new();
    for (key, value) in dict.iter() {
        let name: String = key
            .extract()
            .map_err(|_| invalid("record knots", "keys must be actuator names (str)"))?;
        let what = format!("record knots[{name:?}]");
        let known: Vec<&str> = (0..scene.bodies.len())
            .flat_map(|b| scene.body_actuation(b).actuators.iter())
            .map(|a| a.name.as_str())
            .collect();
        if !known.contains(&name.as_str()) {
            return Err(invalid(
                &what,
                format!("the scene has no actuator `{name}` (it has {known:?})"),
            ));
        }
        let p = guarded(|| Parameter::parse(scene, &format!("actuator:{name}")))
            .map_err(|e| invalid(&what, e.value(key.py()).to_string()))?;
        let Parameter::Actuator { body, index } = p else {
            unreachable!("an actuator name parses to an actuator")
        };
        let a = &scene.body_actuation(body).actuators[index];
        if let Drive::Target(_) = a.drive {
            return Err(invalid(
                &what,
                format!(
                    "actuator `{name}` is driven by its {} ({}): knots drive force-driven actuators only (a cable's tension N, a cavity's pressure Pa, a servo's torque N·m)",
                    if matches!(a.kind, diffsoro::actuator::ActuatorKind::Servo(_)) {
                        "angle"
                    } else {
                        "displacement or volume"
                    },
                    diffsoro::scene::input_unit(a)
                ),
            ));
        }
        values.push(array_of_shape(&value, &[times.len()], &what)?);
        names.push(name);
    }
    // The crate's knots run on the run's own clock (0 at its start).
    let relative: Vec<f64> = times.iter().map(|t| t - t0).collect();
    let mut knots = guarded(|| ActuationKnots::at_current_inputs(scene, &names, relative))
        .map_err(|e| invalid("record knot_times", e.value(knots.py()).to_string()))?;
    knots.values = values;
    Ok(Some(RecordedKnots {
        knots,
        times,
        names,
    }))
}

/// `Simulation.record`: advances `state` by `steps` steps of `scene`, recording, with the
/// inputs following `knots` at `knot_times` when given (`scene` then keeps the last step's
/// inputs). The GIL is released during the run.
pub fn record(
    py: Python<'_>,
    scene: &mut Scene,
    state: &mut State,
    steps: usize,
    options: TapeOptions,
    knots: Option<&Bound<'_, PyAny>>,
    knot_times: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTape> {
    let knots = parse_knots(scene, knots, knot_times, state.time)?;
    let tape = py.detach(|| {
        guarded(|| {
            check_differentiable(scene)?;
            match &knots {
                None => record_trajectory(scene, state, steps, options, &mut |_| {}),
                Some(k) => {
                    let dt = scene.simulation.dt;
                    record_trajectory_with(
                        scene,
                        state,
                        steps,
                        options,
                        &mut |step, s| {
                            k.knots.apply(s, ActuationKnots::step_time(dt, step));
                            Ok(())
                        },
                        &mut |_| {},
                    )
                }
            }
        })
    })?;
    Ok(PyTape {
        scene: scene.clone(),
        tape,
        last: state.clone(),
        knots,
    })
}

/// What `Tape.trajectory` records.
#[derive(Clone, Copy)]
enum Quantity {
    Markers,
    Effectors,
    Nodes,
}

impl PyTape {
    /// The state after `s` steps of the run (0: its start; `steps`: its end).
    fn state(&self, s: usize) -> &State {
        if s == self.tape.steps() {
            &self.last
        } else {
            self.tape.start(s)
        }
    }

    /// A step index `s` of `what` (an int in 0..=steps), or a `ValueError` naming it.
    fn index(&self, object: &Bound<'_, PyAny>, what: &str) -> PyResult<usize> {
        let steps = self.tape.steps();
        let out_of_range = || {
            invalid(
                what,
                format!(
                    "step index {object} is out of range: states 0 (the start) to {steps} (after the last step) were recorded"
                ),
            )
        };
        // Python ints and NumPy integers (whatever has `__index__`), not floats or bools.
        if object.is_instance_of::<PyBool>() {
            return Err(invalid(what, format!("step index {object} is not an int")));
        }
        let s: i64 = object.extract().map_err(|_| {
            if object.is_instance_of::<PyInt>() {
                out_of_range()
            } else {
                invalid(what, format!("step index {object} is not an int"))
            }
        })?;
        match usize::try_from(s) {
            Ok(s) if s <= steps => Ok(s),
            _ => Err(out_of_range()),
        }
    }

    /// Adds `entry` = {"positions", "velocities", "markers", "effectors"} (∂L/∂ of the state
    /// after `s` steps) onto `out`; `what` names it in errors.
    fn add_series_entry(
        &self,
        entry: &Bound<'_, PyAny>,
        what: &str,
        out: &mut StateTangent,
    ) -> PyResult<()> {
        let scene = &self.scene;
        let dict = entry.cast::<PyDict>().map_err(|_| {
            invalid(
                what,
                "is not a dict with keys among \"positions\", \"velocities\", \"markers\", \"effectors\"",
            )
        })?;
        let mut fields: [Option<BTreeMap<String, Bound<'_, PyAny>>>; 2] = [None, None];
        for (key, value) in dict.iter() {
            let key: String = key.extract().map_err(|_| {
                invalid(
                    what,
                    "keys must be \"positions\", \"velocities\", \"markers\" or \"effectors\"",
                )
            })?;
            let at = format!("{what}[{key:?}]");
            let named = value
                .cast::<PyDict>()
                .map_err(|_| invalid(&at, "is not a dict {name: array}"))?;
            let mut map = BTreeMap::new();
            for (k, v) in named.iter() {
                let name: String = k
                    .extract()
                    .map_err(|_| invalid(&at, "keys must be names (str)"))?;
                map.insert(name, v);
            }
            match key.as_str() {
                "positions" => fields[0] = Some(map),
                "velocities" => fields[1] = Some(map),
                "markers" => {
                    for (name, v) in map {
                        let here = format!("{at}[{name:?}]");
                        let m = scene.markers.index(&name).ok_or_else(|| {
                            invalid(
                                &here,
                                format!(
                                    "the scene has no marker `{name}` (it has {:?})",
                                    scene.markers.names()
                                ),
                            )
                        })?;
                        let marker = &scene.markers.list[m];
                        let g = array_of_shape(&v, &[3], &here)?;
                        marker.spread(
                            Vec3::new(g[0], g[1], g[2]),
                            &mut out.bodies[marker.body].positions,
                        );
                    }
                }
                "effectors" => {
                    for (name, v) in map {
                        let here = format!("{at}[{name:?}]");
                        let (body, e) = scene.effector(&name).ok_or_else(|| {
                            let known: Vec<&str> = (0..scene.bodies.len())
                                .flat_map(|b| scene.body_actuation(b).effectors.iter())
                                .map(|e| e.name.as_str())
                                .collect();
                            invalid(
                                &here,
                                format!("the scene has no effector `{name}` (it has {known:?})"),
                            )
                        })?;
                        let g = array_of_shape(&v, &[3], &here)?;
                        e.point
                            .spread(Vec3::new(g[0], g[1], g[2]), &mut out.bodies[body].positions);
                    }
                }
                other => {
                    return Err(invalid(
                        what,
                        format!(
                            "unknown key {other:?}: expected \"positions\", \"velocities\", \"markers\" or \"effectors\""
                        ),
                    ));
                }
            }
        }
        let [positions, velocities] = fields;
        if positions.is_some() || velocities.is_some() {
            out.add(&tangent(scene, positions, velocities, what)?);
        }
        Ok(())
    }
}

#[pymethods]
impl PyTape {
    /// Steps recorded.
    #[getter]
    fn steps(&self) -> usize {
        self.tape.steps()
    }

    /// The knots' times (s, the simulation's clock) and values ({actuator: (K,) inputs in its
    /// unit}) the run's inputs followed, or None when they were held.
    #[getter]
    fn knots<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(k) = &self.knots else {
            return Ok(None);
        };
        let out = PyDict::new(py);
        out.set_item("times", PyArray1::from_slice(py, &k.times))?;
        let values = PyDict::new(py);
        for (name, v) in k.names.iter().zip(&k.knots.values) {
            values.set_item(name, PyArray1::from_slice(py, v))?;
        }
        out.set_item("values", values)?;
        Ok(Some(out))
    }

    /// The recorded states' points, an owned (len(steps), M, 3) float64 array (m): for each
    /// state index s of `steps` (the state after s steps: 0 the start, `Tape.steps` the
    /// end; default 1, 2, …, `Tape.steps`), `quantity` = "markers" (every marker, in
    /// `Scene.marker_names` order), "effectors" (every effector, in `Scene.effectors` order)
    /// or "nodes" (every soft body's nodes in scene order, mesh-file node order). The
    /// cotangents of these rows go to `adjoint(series=...)` under "markers", "effectors" and
    /// "positions".
    #[pyo3(signature = (quantity, steps = None))]
    fn trajectory<'py>(
        &self,
        py: Python<'py>,
        quantity: &str,
        steps: Option<Vec<Bound<'py, PyAny>>>,
    ) -> PyResult<Bound<'py, PyArray3<f64>>> {
        let quantity = match quantity {
            "markers" => Quantity::Markers,
            "effectors" => Quantity::Effectors,
            "nodes" => Quantity::Nodes,
            other => {
                return Err(invalid(
                    "trajectory quantity",
                    format!("{other:?} is not \"markers\", \"effectors\" or \"nodes\""),
                ));
            }
        };
        let indices: Vec<usize> = match steps {
            None => (1..=self.tape.steps()).collect(),
            Some(list) => list
                .iter()
                .enumerate()
                .map(|(i, s)| self.index(s, &format!("trajectory steps[{i}]")))
                .collect::<PyResult<_>>()?,
        };
        let scene = &self.scene;
        let rows = |state: &State| -> Vec<Vec3> {
            match quantity {
                Quantity::Markers => scene.markers.positions(state),
                Quantity::Effectors => (0..scene.bodies.len())
                    .flat_map(|b| {
                        let x = &state.bodies[b].positions;
                        scene
                            .body_actuation(b)
                            .effectors
                            .iter()
                            .map(move |e| e.point.position(x))
                    })
                    .collect(),
                Quantity::Nodes => state
                    .bodies
                    .iter()
                    .flat_map(|b| b.positions.iter().copied())
                    .collect(),
            }
        };
        let width = rows(self.state(0)).len();
        let mut flat = Vec::with_capacity(indices.len() * width * 3);
        for &s in &indices {
            flat.extend(rows(self.state(s)).iter().flat_map(|p| [p.x, p.y, p.z]));
        }
        Ok(Array3::from_shape_vec((indices.len(), width, 3), flat)
            .expect("3 components per row")
            .into_pyarray(py))
    }

    /// The adjoint sweep of a loss L of the recorded states. `positions` and `velocities`
    /// ({body: (n, 3)}: ∂L/∂x in 1/m and ∂L/∂v in s/m of the final state; bodies left out:
    /// zero; rigid bodies and robots by name with (nv,) arrays, as in `Simulation.vjp`) and
    /// `series` ({s: {"positions": {body: (n, 3)}, "velocities": {body: (n, 3)}, "markers":
    /// {name: (3,)}, "effectors": {name: (3,)}}}: ∂L/∂ of the state after s steps, s = 0 the
    /// start to `Tape.steps` the end, each key optional; a marker's or an effector's
    /// cotangent, 1/m, spreads onto its nodes by its weights) are summed in one reverse
    /// sweep: s̄_T = ∂L/∂s_T, s̄_t = VJP_t(s̄_{t+1}) + ∂L/∂s_t. Returns {"positions": {body:
    /// ∂L/∂x_start}, "velocities": {body: ∂L/∂v_start}, "parameters": {name: ∂L/∂p}} for the
    /// names in `params` (held constant over the run, per unit of the parameter: 1/Pa, 1/N,
    /// …) and, when the run followed knots, "knots": {actuator: (K,) ∂L/∂q_j} (per unit of
    /// the actuator's input: 1/N, 1/Pa, 1/(N·m)). Can be called again (the steps whose
    /// records the previous sweep used are then recomputed). Errors (`ValueError`) name the
    /// argument: an unknown body, marker or effector, a wrong shape, a step index out of
    /// range. GIL released during the sweep.
    #[pyo3(signature = (positions = None, velocities = None, params = Vec::new(), series = None))]
    fn adjoint<'py>(
        &mut self,
        py: Python<'py>,
        positions: Option<crate::simulation::Fields<'_>>,
        velocities: Option<crate::simulation::Fields<'_>>,
        params: Vec<String>,
        series: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let steps = self.tape.steps();
        let (keys, mut parsed) = expand_parameters(&self.scene, &params)?;
        let mut at: Vec<Option<StateTangent>> = vec![None; steps + 1];
        if positions.is_some() || velocities.is_some() {
            at[steps] = Some(tangent(&self.scene, positions, velocities, "adjoint")?);
        }
        if let Some(series) = series {
            let dict = series.cast::<PyDict>().map_err(|_| {
                invalid(
                    "adjoint series",
                    "is not a dict {step index: {\"positions\": …, \"velocities\": …, \"markers\": …, \"effectors\": …}}",
                )
            })?;
            for (key, entry) in dict.iter() {
                let s = self.index(&key, "adjoint series")?;
                let what = format!("adjoint series[{s}]");
                let slot = at[s].get_or_insert_with(|| StateTangent::zeros(&self.scene));
                self.add_series_entry(&entry, &what, slot)?;
            }
        }
        // The knots' actuators follow the constant parameters in the step's list.
        let columns: Vec<usize> = match &self.knots {
            Some(k) => {
                let first = parsed.len();
                parsed.extend(k.knots.actuators.iter().copied());
                (first..parsed.len()).collect()
            }
            None => Vec::new(),
        };
        let (scene, tape, knots) = (&self.scene, &mut self.tape, &self.knots);
        let (result, knot_gradients) = py.detach(|| {
            guarded(|| {
                let result =
                    adjoint_series(scene, tape, &parsed, &mut |s| at[s].take(), knots.is_some())?;
                let chained = knots.as_ref().map(|k| {
                    k.knots
                        .chain(&result.per_step, &columns, scene.simulation.dt)
                });
                Ok((result, chained))
            })
        })?;
        let out = cotangents(
            py,
            scene,
            &result.state,
            &keys,
            &result.parameters[..keys.len()],
        )?;
        if let (Some(k), Some(g)) = (knots, knot_gradients) {
            let d = PyDict::new(py);
            for (name, row) in k.names.iter().zip(g) {
                d.set_item(name, PyArray1::from_vec(py, row))?;
            }
            out.set_item("knots", d)?;
        }
        Ok(out)
    }

    fn __repr__(&self) -> String {
        format!(
            "Tape(steps={}, knots={:?})",
            self.tape.steps(),
            self.knots.as_ref().map(|k| &k.names)
        )
    }
}
