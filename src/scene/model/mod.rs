//! The scene model built from a scene file (meshes loaded and scaled, materials checked,
//! fixed nodes resolved) and the simulation state (positions, velocities, time).

pub mod actuation;
pub mod actuation_build;
pub mod actuator_input;
pub mod contact;
pub mod energy;
pub mod markers;
pub mod pinned_servo;
pub mod rigid;
pub mod rigid_body_shape;
pub mod rigid_system;
pub mod rigid_system_derivative;
pub mod soft_point;
pub mod soft_rigid;

use std::path::{Path, PathBuf};

use crate::actuator::Effector;
use crate::error::{Error, Result};
use crate::fem::{SoftBody, SoftBodyOptions, fixed_nodes};
use crate::material::Material;
use crate::math::Vec3;
use crate::mesh::read_mesh;

use self::actuation::BodyActuation;
use self::contact::SceneContact;
use self::markers::Markers;
use self::rigid::RigidScene;
use self::soft_rigid::SoftRigid;
use super::file::{SceneFile, SimulationSection};

/// An immutable scene: time-stepping settings and the soft-body models.
#[derive(Debug, Clone)]
pub struct Scene {
    /// Time step, number of steps, gravity, Newton iterations.
    pub simulation: SimulationSection,
    /// The soft bodies, in file order.
    pub bodies: Vec<SoftBody>,
    /// Each body's actuators and effectors (same order as `bodies`; may be shorter, missing
    /// entries meaning none).
    pub actuation: Vec<BodyActuation>,
    /// The scene file it was read from (for messages), if any.
    pub source: Option<PathBuf>,
    /// Static obstacles and the contact solver (`Default`: no obstacle, no contact).
    pub contact: SceneContact,
    /// Free rigid bodies, robots and fixed rigid bodies (`Default`: none).
    pub rigid: RigidScene,
    /// Attachments of soft nodes to rigid bodies, and soft–rigid pairs that never touch
    /// (`Default`: none).
    pub coupling: SoftRigid,
    /// The tracked points (`[[soft_body.marker]]`), body by body in scene order (`Default`:
    /// none).
    pub markers: Markers,
    /// `[control]`: the inverse-control QP's settings (`Default`: none given).
    pub control: crate::scene::ControlSection,
}

/// Largest bounding-box side (m) above which a soft body is suspected of being in millimetres.
pub const LARGEST_PLAUSIBLE_SIZE: f64 = 10.0;
/// Largest bounding-box side (m) below which a soft body is suspected of a scale applied twice.
pub const SMALLEST_PLAUSIBLE_SIZE: f64 = 1e-3;

/// The warning for a soft body `name` whose largest bounding-box side is `size` (m, after the
/// body's `scale`): larger than [`LARGEST_PLAUSIBLE_SIZE`] (a mesh in millimetres read as
/// metres) or smaller than [`SMALLEST_PLAUSIBLE_SIZE`] (a mesh in metres given
/// `scale = 0.001`); `None` for a plausible size.
pub fn size_warning(name: &str, size: f64) -> Option<String> {
    if size > LARGEST_PLAUSIBLE_SIZE {
        Some(format!(
            "soft_body.{name}: the body is {size} m across, larger than 10 m; is its mesh in millimetres? did you mean scale = 0.001?"
        ))
    } else if size < SMALLEST_PLAUSIBLE_SIZE {
        Some(format!(
            "soft_body.{name}: the body is {size} m across, smaller than 1 mm; is its mesh already in metres? did you mean scale = 1 (or a scale 1000 times larger)?"
        ))
    } else {
        None
    }
}

/// Positions and velocities of one soft body's nodes (m, m/s), one per mesh node in the
/// mesh file's order.
#[derive(Debug, Clone, PartialEq)]
pub struct BodyState {
    /// Node positions (m).
    pub positions: Vec<Vec3>,
    /// Node velocities (m/s).
    pub velocities: Vec<Vec3>,
}

/// The state of a whole scene.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    /// Simulated time (s): steps × dt after a step (exact to one rounding, not a running sum).
    pub time: f64,
    /// Steps taken.
    pub steps: usize,
    /// One per soft body, in scene order.
    pub bodies: Vec<BodyState>,
    /// Per soft body, each actuator's current λ (N, Pa or N·m; `Scene::actuation` order): the
    /// input of force-driven ones, the last solved value of target-driven ones.
    pub actuator_forces: Vec<Vec<f64>>,
    /// Active (sticking or sliding) contacts after the last step, all bodies.
    pub contacts: usize,
    /// One per rigid system (free bodies, then robots; `Scene::rigid` order).
    pub rigid: Vec<RigidState>,
    /// Steps whose contact NCP stopped at its iteration limit (the step went on with the
    /// solver's last iterate; `StepReport::contact_converged`).
    pub unconverged_steps: usize,
}

/// The state of one rigid system (a free body or a robot).
#[derive(Debug, Clone, PartialEq)]
pub struct RigidState {
    /// Configuration (nq): joint angles and positions, a free-flyer's `x y z qx qy qz qw`.
    pub q: Vec<f64>,
    /// Velocity (nv; a free-flyer's twist in its own frame).
    pub v: Vec<f64>,
    /// The joint input applied in the last step (N·m, N; nv), after clamping.
    pub tau: Vec<f64>,
}

impl Scene {
    /// A scene of `bodies` with no actuator, no obstacle and no source file (tests,
    /// benchmarks and programs that build their bodies in code); add the rest by field.
    pub fn new(simulation: SimulationSection, bodies: Vec<SoftBody>) -> Scene {
        Scene {
            simulation,
            bodies,
            actuation: Vec::new(),
            source: None,
            contact: SceneContact::default(),
            rigid: RigidScene::default(),
            coupling: SoftRigid::default(),
            markers: Markers::default(),
            control: Default::default(),
        }
    }

    /// Reads the scene file at `path`, applies the `--set` overrides, loads every mesh
    /// (relative to the scene file's folder) and builds the models.
    pub fn load(path: &Path, overrides: &[String]) -> Result<Scene> {
        let file = SceneFile::read(path, overrides)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut scene = Scene::build(&file, dir)?;
        scene.source = Some(path.to_path_buf());
        Ok(scene)
    }

    /// Builds the models of a parsed scene file whose relative paths start at `dir`.
    pub fn build(file: &SceneFile, dir: &Path) -> Result<Scene> {
        let mut bodies = Vec::with_capacity(file.soft_body.len());
        let mut actuation = Vec::with_capacity(file.soft_body.len());
        let mut points = Vec::with_capacity(file.soft_body.len());
        let mut point_warnings = Vec::new();
        let mut markers = Markers::default();
        for (i, b) in file.soft_body.iter().enumerate() {
            let what = format!("soft_body.{}", b.name);
            let mesh_path = crate::scene::file::path::scene_path(
                dir,
                &b.mesh,
                &format!("soft_body.{}.mesh", b.name),
            )?;
            if mesh_path.is_dir() {
                return Err(Error::invalid(
                    format!("{what}.mesh"),
                    format!("{} is a folder, not a mesh file", mesh_path.display()),
                ));
            }
            if !mesh_path.is_file() {
                return Err(Error::invalid(
                    format!("{what}.mesh"),
                    format!("file {} not found", mesh_path.display()),
                ));
            }
            let mesh = read_mesh(&mesh_path)?;
            let mesh = if b.scale == 1.0 {
                mesh
            } else {
                mesh.scaled(b.scale)?
            };
            // Rigid placement after scaling (the mesh only: everything else is in world
            // coordinates).
            let mesh = if b.rotation.is_some() || b.translation.is_some() {
                let rotation =
                    crate::scene::file::contact::axis_angle_matrix(b.rotation.unwrap_or([0.0; 3]));
                mesh.placed(&rotation, Vec3::from(b.translation.unwrap_or([0.0; 3])))?
            } else {
                mesh
            };
            let material = Material::new(b.law, b.young_modulus, b.poisson_ratio)
                .map_err(|e| prefix(e, &what))?;
            let mut fixed = fixed_nodes(&mesh, b.fixed_box, b.fixed_group.as_deref(), &what)?;
            let act = BodyActuation::build(b, &mesh, &what, dir)?;
            markers.add_body(&b.name, i, &b.marker, &mesh)?;
            let (body_points, warning) =
                crate::scene::file::contact_surface::contact_points(b, &mesh, &what, dir)?;
            points.push(body_points);
            point_warnings.extend(warning);
            // Pinned servo horns are removed from the system like fixed nodes (and moved).
            for n in act.pinned_nodes() {
                fixed[n] = true;
            }
            // Uniform mass: the mean density total_mass / V, whose ρV/N per node is
            // total_mass/N (fem::uniform_masses); validate() saw exactly one of the two keys.
            let density = match (b.density, b.total_mass) {
                (Some(rho), _) => rho,
                (None, Some(m)) => m / mesh.volume(),
                (None, None) => {
                    return Err(Error::invalid(
                        format!("{what}.density"),
                        "is required (kg/m³), or mass = \"uniform\" with total_mass (kg)",
                    ));
                }
            };
            let options = SoftBodyOptions {
                material,
                density,
                mass: b.mass,
                rayleigh_mass: b.rayleigh_mass,
                rayleigh_stiffness: b.rayleigh_stiffness,
                fixed,
            };
            let couplings = crate::scene::model::actuation::couplings(&act);
            let regions = crate::scene::file::region::material_regions(
                &b.region,
                &mesh,
                &b.name,
                b.law,
                b.poisson_ratio,
            )?;
            actuation.push(act);
            let mut body = SoftBody::with_couplings(&b.name, mesh, options, &couplings)?;
            body.set_material_regions(&regions)?;
            bodies.push(body);
        }
        // `[contact] ignore` pairs naming a soft body are the coupling's, the others the
        // rigid part's.
        let (soft_ignore, rigid_ignore): (Vec<_>, Vec<_>) = file
            .contact
            .ignore
            .iter()
            .cloned()
            .enumerate()
            .partition(|(_, pair)| pair.iter().any(|n| bodies.iter().any(|b| b.name() == n)));
        let mut rigid = RigidScene::build(
            &file.rigid_body,
            &file.robot,
            dir,
            Vec3::from(file.simulation.gravity),
        )?;
        rigid.resolve_ignore_entries(&rigid_ignore)?;
        let mut contact = SceneContact::build(&file.contact, &file.obstacle, dir)?;
        contact.points = points;
        contact.warnings = point_warnings;
        Ok(Scene {
            simulation: file.simulation.clone(),
            actuation,
            source: None,
            contact,
            coupling: SoftRigid::build(&file.attachment, &bodies, &rigid, &soft_ignore)?,
            rigid,
            bodies,
            markers,
            control: file.control,
        })
    }

    /// The rest state: every body at its rest positions, at rest, time 0.
    pub fn initial_state(&self) -> State {
        State {
            time: 0.0,
            steps: 0,
            bodies: self
                .bodies
                .iter()
                .map(|b| BodyState {
                    positions: b.rest_positions().to_vec(),
                    velocities: vec![Vec3::zeros(); b.node_count()],
                })
                .collect(),
            actuator_forces: (0..self.bodies.len())
                .map(|i| self.body_actuation(i).initial_forces())
                .collect(),
            rigid: self
                .rigid
                .systems
                .iter()
                .map(|s| RigidState {
                    q: s.q0.clone(),
                    v: s.v0.clone(),
                    tau: vec![0.0; s.nv()],
                })
                .collect(),
            contacts: 0,
            unconverged_steps: 0,
        }
    }

    /// What a user should hear about the scene as built, one line each, naming the key:
    /// meshes whose tetrahedra were re-oriented (`mesh::Mesh::reoriented`), bodies whose
    /// size suggests a unit mistake (see [`size_warning`]), embedded points outside their mesh
    /// (`BodyActuation::warnings`) and embedded contact surfaces' vertices outside it when the
    /// scene did not state the body's `embed_tolerance`, and the rigid part's
    /// (`RigidScene::warnings`). The CLI prints them on stderr.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings: Vec<String> = self
            .bodies
            .iter()
            .filter_map(|b| match b.mesh().reoriented() {
                (0, _) => None,
                (count, first) => Some(format!(
                    "soft_body.{}.mesh: {count} tetrahedra had a negative signed volume and were re-oriented (nodes 2 and 3 swapped; first: tetrahedron {})",
                    b.name(),
                    first.unwrap_or(0)
                )),
            })
            .collect();
        for b in &self.bodies {
            let [lo, hi] = b.mesh().bounding_box();
            if let Some(w) = size_warning(b.name(), (hi - lo).max()) {
                warnings.push(w);
            }
        }
        warnings.extend(
            self.actuation
                .iter()
                .flat_map(|a| a.warnings.iter().cloned()),
        );
        warnings.extend(self.contact.warnings.iter().cloned());
        warnings.extend(self.rigid.warnings.iter().cloned());
        warnings
    }

    /// The actuators and effectors of body `i` (none when `actuation` has no entry for it).
    pub fn body_actuation(&self, i: usize) -> &BodyActuation {
        static NONE: BodyActuation = BodyActuation {
            actuators: Vec::new(),
            inputs: Vec::new(),
            effectors: Vec::new(),
            pinned: Vec::new(),
            warnings: Vec::new(),
        };
        self.actuation.get(i).unwrap_or(&NONE)
    }

    /// The effector named `name` (names are unique in a scene) and the index of its soft
    /// body, if any. Its position is linear in that body's node positions
    /// ([`crate::actuator::EmbeddedPoint::position`]); a cotangent of the position spreads onto
    /// the nodes' by the transpose ([`crate::actuator::EmbeddedPoint::spread`]).
    pub fn effector(&self, name: &str) -> Option<(usize, &Effector)> {
        (0..self.bodies.len()).find_map(|b| {
            self.body_actuation(b)
                .effectors
                .iter()
                .find(|e| e.name == name)
                .map(|e| (b, e))
        })
    }

    /// Gravity (m/s²).
    pub fn gravity(&self) -> Vec3 {
        Vec3::from(self.simulation.gravity)
    }
}

/// Prefixes an `Invalid` error's item with the body path (`young_modulus` →
/// `soft_body.beam.young_modulus`).
fn prefix(e: Error, what: &str) -> Error {
    match e {
        Error::Invalid {
            what: item,
            message,
        } => Error::invalid(format!("{what}.{item}"), message),
        other => other,
    }
}
