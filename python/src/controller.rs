//! `diffsoro.Controller`: feedback inverse control of a robot from its measured effector
//! positions (`diffsoro::control::Controller`), one update per control period.

use std::collections::BTreeMap;

use diffsoro::control::{ControlOptions, Controller};
use diffsoro::math::Vec3;
use numpy::{AllowTypeChange, PyArrayLike1};
use pyo3::prelude::*;

use crate::errors::{guarded, invalid};
use crate::scene::PyScene;

/// A position (3,) array-like of any real dtype (m).
type Point<'py> = PyArrayLike1<'py, f64, AllowTypeChange>;

/// A QP inverse controller whose model (the scene) runs beside a robot and aims from the
/// robot's measured effector positions. Not shared between threads.
#[pyclass(module = "diffsoro._diffsoro", name = "Controller", unsendable)]
pub struct PyController {
    controller: Controller,
}

/// The (3,) point `name` of `points` (m), checked finite by the controller.
fn point(points: &BTreeMap<String, Point<'_>>, name: &str, what: &str) -> PyResult<Vec3> {
    let Some(p) = points.get(name) else {
        return Err(invalid(
            what.to_string(),
            format!("has no entry for effector `{name}`"),
        ));
    };
    let p = p.as_slice().map_err(|e| invalid(what, e))?;
    match p {
        [x, y, z] => Ok(Vec3::new(*x, *y, *z)),
        _ => Err(invalid(
            format!("{what}[\"{name}\"]"),
            format!("expected 3 coordinates (m), got {}", p.len()),
        )),
    }
}

#[pymethods]
impl PyController {
    /// A controller of `effectors` (one name) of `scene`, the model; `regularisation` and
    /// `max_change` override the scene's `[control]` values.
    #[new]
    #[pyo3(signature = (scene, effectors, regularisation = None, max_change = None))]
    fn new(
        scene: &PyScene,
        effectors: Vec<String>,
        regularisation: Option<f64>,
        max_change: Option<f64>,
    ) -> PyResult<Self> {
        let names: Vec<&str> = effectors.iter().map(String::as_str).collect();
        let controller = guarded(|| {
            let options = ControlOptions::for_scene(&scene.scene)
                .with_overrides(regularisation, max_change)?;
            Controller::new(&scene.scene, &names, options)
        })?;
        Ok(PyController { controller })
    }

    /// The controlled actuators' names (every force-driven actuator of the scene).
    #[getter]
    fn actuators(&self) -> Vec<String> {
        self.controller.actuators().to_vec()
    }

    /// The controlled effectors' names.
    #[getter]
    fn effectors(&self) -> Vec<String> {
        vec![self.controller.effector().to_string()]
    }

    /// The commands for the robot's next step, {actuator: input} (N, Pa or N·m): before the
    /// first update the scene's forces clamped into the bounds.
    #[getter]
    fn commands(&self) -> BTreeMap<String, f64> {
        self.commands_map()
    }

    /// The lead (s) to aim a moving target with: the model's Rayleigh β (the lag of a
    /// stiffness-damped body behind the equilibrium its inputs set).
    #[getter]
    fn lead(&self) -> f64 {
        self.controller.lead()
    }

    /// The model's simulated time (s): updates × dt.
    #[getter]
    fn time(&self) -> f64 {
        self.controller.model_state().time
    }

    /// One control period: the model steps with the commands the robot has just executed,
    /// then the QPs aim from `measured` {effector: (3,) m} at `targets` {effector: (3,) m}.
    /// Returns the commands for the robot's next step, {actuator: input}.
    fn update(
        &mut self,
        measured: BTreeMap<String, Point<'_>>,
        targets: BTreeMap<String, Point<'_>>,
    ) -> PyResult<BTreeMap<String, f64>> {
        let name = self.controller.effector().to_string();
        for (what, points) in [("measured", &measured), ("targets", &targets)] {
            if let Some(other) = points.keys().find(|k| **k != name) {
                return Err(invalid(
                    what,
                    format!("unknown effector `{other}` (the controller drives `{name}`)"),
                ));
            }
        }
        let m = point(&measured, &name, "measured")?;
        let t = point(&targets, &name, "targets")?;
        guarded(|| self.controller.update(m, t).map(|_| ()))?;
        Ok(self.commands_map())
    }

    fn __repr__(&self) -> String {
        format!(
            "Controller(effector={:?}, actuators={}, time={} s)",
            self.controller.effector(),
            self.controller.actuators().len(),
            self.controller.model_state().time
        )
    }
}

impl PyController {
    fn commands_map(&self) -> BTreeMap<String, f64> {
        self.controller
            .actuators()
            .iter()
            .cloned()
            .zip(self.controller.commands().iter().copied())
            .collect()
    }
}
