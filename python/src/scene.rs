//! `diffsoro.Scene`: a scene file (or TOML text) with its overrides, built into models.

use std::path::PathBuf;

use diffsoro::fem::{MassKind, SoftBody, SoftBodyOptions};
use diffsoro::material::{Law, Material};
use diffsoro::mesh::{Groups, Mesh};
use diffsoro::scene::{Scene, SceneFile, SimulationSection};
use numpy::{AllowTypeChange, PyArrayLike2};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{array_to_nodes, override_strings};
use crate::errors::{guarded, invalid};

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

    /// A scene of one soft body built from arrays (a mesh from meshio, gmsh or pyvista, no
    /// file): `nodes` (n, 3) positions (m), `tets` (m, 4) node indices (0-based; tetrahedra
    /// of negative volume are re-oriented), the law (`"corotational"`, `"stvk"`,
    /// `"neo_hookean"`, `"corotational_sofa"`), Young's modulus (Pa), Poisson's ratio,
    /// density (kg/m³, lumped mass), Rayleigh α (1/s) and β (s), `fixed` node indices, and
    /// the time stepping: `dt` (s), `steps`, `gravity` (m/s²).
    ///
    /// Raises `ValueError` naming what is wrong (an array's shape, a node index out of range,
    /// a degenerate or folded tetrahedron, a material value).
    #[staticmethod]
    #[pyo3(signature = (
        nodes, tets, *, young_modulus, poisson_ratio, density, name = "body",
        law = "corotational", fixed = None, rayleigh_mass = 0.0,
        rayleigh_stiffness = 0.0, dt = 0.01, steps = 1, gravity = [0.0, 0.0, -9.81]
    ))]
    #[allow(clippy::too_many_arguments)]
    fn from_arrays(
        py: Python<'_>,
        nodes: PyArrayLike2<'_, f64, AllowTypeChange>,
        tets: PyArrayLike2<'_, i64, AllowTypeChange>,
        young_modulus: f64,
        poisson_ratio: f64,
        density: f64,
        name: &str,
        law: &str,
        fixed: Option<Vec<i64>>,
        rayleigh_mass: f64,
        rayleigh_stiffness: f64,
        dt: f64,
        steps: usize,
        gravity: [f64; 3],
    ) -> PyResult<Self> {
        let positions = array_to_nodes(&nodes, nodes.as_array().nrows(), "nodes")?;
        let n = positions.len() as i64;
        let index = |v: i64, what: &str| {
            if (0..n).contains(&v) {
                Ok(v as usize)
            } else {
                Err(invalid(
                    what,
                    format!("node index {v} is out of range (the mesh has {n} nodes)"),
                ))
            }
        };
        let t = tets.as_array();
        if t.ncols() != 4 {
            return Err(invalid(
                "tets",
                format!("has shape {:?}, expected (m, 4)", t.shape()),
            ));
        }
        let mut tetrahedra = Vec::with_capacity(t.nrows());
        for (e, row) in t.outer_iter().enumerate() {
            let what = format!("tets row {e}");
            tetrahedra.push([
                index(row[0], &what)?,
                index(row[1], &what)?,
                index(row[2], &what)?,
                index(row[3], &what)?,
            ]);
        }
        let mut is_fixed = vec![false; positions.len()];
        for (k, &v) in fixed.iter().flatten().enumerate() {
            is_fixed[index(v, &format!("fixed[{k}]"))?] = true;
        }
        if !(dt > 0.0 && dt.is_finite()) {
            return Err(invalid(
                "dt",
                format!("{dt} must be a positive time step (s)"),
            ));
        }
        if gravity.iter().any(|g| !g.is_finite()) {
            return Err(invalid("gravity", "is not finite"));
        }
        let scene = py.detach(|| {
            guarded(|| {
                let law: Law = law.parse()?;
                let mesh = Mesh::new(positions, tetrahedra, Vec::new(), Groups::default())?;
                let options = SoftBodyOptions {
                    material: Material::new(law, young_modulus, poisson_ratio)?,
                    density,
                    mass: MassKind::Lumped,
                    rayleigh_mass,
                    rayleigh_stiffness,
                    fixed: is_fixed,
                };
                let body = SoftBody::new(name, mesh, options)?;
                let simulation = SimulationSection {
                    dt,
                    steps,
                    gravity,
                    newton_iterations: 1,
                };
                Ok(Scene::new(simulation, vec![body]))
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

    /// The markers' names (`[[soft_body.marker]]`), body by body in scene order and in file
    /// order within a body: the order of `Simulation.marker_positions()` and of a marker track
    /// file's rows at one time.
    #[getter]
    fn marker_names(&self) -> Vec<String> {
        self.scene
            .markers
            .names()
            .into_iter()
            .map(String::from)
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
