//! `diffsoro.Scene`: a scene file (or TOML text) with its overrides, built into models.

use std::path::PathBuf;

use diffsoro::scene::{Scene, SceneFile};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::override_strings;
use crate::errors::guarded;

/// A scene: time-stepping settings, soft bodies (meshes, materials, fixed nodes), actuators,
/// effectors and obstacles, in SI units. Immutable: a `Simulation` works on its own copy.
///
/// Build one with `Scene.load(path, overrides={...})` or `Scene.from_toml(text, base_dir=...)`.
#[pyclass(module = "diffsoro._diffsoro", name = "Scene", frozen)]
pub struct PyScene {
    pub scene: Scene,
}

impl PyScene {
    /// The index of soft body `name` (a `ValueError` listing the bodies otherwise).
    pub fn body_index(scene: &Scene, name: &str) -> PyResult<usize> {
        scene
            .bodies
            .iter()
            .position(|b| b.name() == name)
            .ok_or_else(|| {
                let known: Vec<&str> = scene.bodies.iter().map(|b| b.name()).collect();
                crate::errors::invalid(
                    format!("soft body `{name}`"),
                    format!("the scene has no such soft body (it has {known:?})"),
                )
            })
    }
}

#[pymethods]
impl PyScene {
    /// Reads the scene file at `path` (TOML, SI units), applies `overrides` (dotted path →
    /// value, as the CLI's `--set PATH=VALUE`: `{"soft_body.beam.young_modulus": 3e5}`;
    /// arrays of tables are addressed by `name`; values are numbers, bools, strings or lists)
    /// and loads every mesh (paths relative to the scene file's folder).
    ///
    /// Raises `FileNotFoundError` for a missing scene or mesh file, `ValueError` for a bad
    /// value or an unknown key (the message names it).
    #[staticmethod]
    #[pyo3(signature = (path, overrides = None))]
    fn load(
        py: Python<'_>,
        path: PathBuf,
        overrides: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let set = override_strings(overrides)?;
        let scene = py.detach(|| guarded(|| Scene::load(&path, &set)))?;
        Ok(PyScene { scene })
    }

    /// Parses a scene from TOML `text`; relative mesh and obstacle paths start at `base_dir`
    /// (default: the current folder). `overrides` as for `Scene.load`.
    #[staticmethod]
    #[pyo3(signature = (text, base_dir = None, overrides = None))]
    fn from_toml(
        py: Python<'_>,
        text: String,
        base_dir: Option<PathBuf>,
        overrides: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let set = override_strings(overrides)?;
        let dir = base_dir.unwrap_or_else(|| PathBuf::from("."));
        let scene = py.detach(|| {
            guarded(|| {
                let file = SceneFile::parse("<toml text>", &text, &set)?;
                Scene::build(&file, &dir)
            })
        })?;
        Ok(PyScene { scene })
    }

    /// The soft bodies' names, in scene order.
    #[getter]
    fn bodies(&self) -> Vec<String> {
        self.scene
            .bodies
            .iter()
            .map(|b| b.name().to_string())
            .collect()
    }

    /// The actuators' names (cables, cavities, servos), body by body in scene order.
    #[getter]
    fn actuators(&self) -> Vec<String> {
        (0..self.scene.bodies.len())
            .flat_map(|i| self.scene.body_actuation(i).actuators.iter())
            .map(|a| a.name.clone())
            .collect()
    }

    /// The effectors' names, body by body in scene order.
    #[getter]
    fn effectors(&self) -> Vec<String> {
        (0..self.scene.bodies.len())
            .flat_map(|i| self.scene.body_actuation(i).effectors.iter())
            .map(|e| e.name.clone())
            .collect()
    }

    /// The time step (s).
    #[getter]
    fn dt(&self) -> f64 {
        self.scene.simulation.dt
    }

    /// The scene's number of steps (`simulation.steps`).
    #[getter]
    fn steps(&self) -> usize {
        self.scene.simulation.steps
    }

    /// Number of mesh nodes of soft body `body`.
    fn node_count(&self, body: &str) -> PyResult<usize> {
        Ok(self.scene.bodies[Self::body_index(&self.scene, body)?].node_count())
    }

    /// What a user should hear about the scene as built (e.g. re-oriented tetrahedra), one
    /// line each.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.scene.warnings()
    }

    fn __repr__(&self) -> String {
        format!(
            "Scene(bodies={:?}, actuators={:?}, dt={}, steps={})",
            self.bodies(),
            self.actuators(),
            self.scene.simulation.dt,
            self.scene.simulation.steps
        )
    }
}
