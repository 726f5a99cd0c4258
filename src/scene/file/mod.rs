//! The scene file (TOML, SI units; docs/scene-file.md) as plain data, deserialised with serde.
//! Unknown keys are errors that name the key; values are checked in [`SceneFile::validate`].

pub mod actuation;
pub mod attachment;
pub mod contact;
pub mod contact_surface;
pub mod control;
pub mod embedded_surface;
pub mod marker;
pub mod overrides;
pub mod path;
pub mod region;
pub mod rigid;

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::fem::MassKind;
use crate::material::Law;

use self::attachment::AttachmentSection;
use self::contact::{ContactSection, ObstacleSection};
use self::rigid::{RigidBodySection, RobotSection};

/// A whole scene file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneFile {
    /// Time stepping and gravity.
    pub simulation: SimulationSection,
    /// The soft bodies (tetrahedral FEM meshes).
    #[serde(default)]
    pub soft_body: Vec<SoftBodySection>,
    /// `[contact]`: friction and NCP solver settings (defaults in [`ContactSection`]).
    #[serde(default)]
    pub contact: ContactSection,
    /// `[[obstacle]]`: static rigid obstacles; none means no contact is resolved.
    #[serde(default)]
    pub obstacle: Vec<ObstacleSection>,
    /// `[[rigid_body]]`: free or fixed rigid bodies of simple shapes.
    #[serde(default)]
    pub rigid_body: Vec<RigidBodySection>,
    /// `[[robot]]`: URDF robots.
    #[serde(default)]
    pub robot: Vec<RobotSection>,
    /// `[[attachment]]`: soft nodes held to a rigid body or a robot link.
    #[serde(default)]
    pub attachment: Vec<AttachmentSection>,
    /// `[control]`: the inverse-control QP's settings.
    #[serde(default)]
    pub control: control::ControlSection,
}

/// `[simulation]`: time stepping.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationSection {
    /// Time step h (s).
    pub dt: f64,
    /// Number of steps `simulate` runs (overridden by `--steps`).
    #[serde(default = "default_steps")]
    pub steps: usize,
    /// Gravity (m/s²).
    #[serde(default = "default_gravity")]
    pub gravity: [f64; 3],
    /// Newton iterations per step on the implicit-Euler equation: 1 is the linearised step of
    /// paper 004 Eq. (1) (as SOFA); more re-linearise at the new iterate (full Newton).
    #[serde(default = "default_newton_iterations")]
    pub newton_iterations: usize,
}

fn default_steps() -> usize {
    1
}
fn default_gravity() -> [f64; 3] {
    [0.0, 0.0, -9.81]
}
fn default_newton_iterations() -> usize {
    1
}

/// One `[[soft_body]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SoftBodySection {
    /// Unique name, used by `--set soft_body.NAME.…` and in outputs.
    pub name: String,
    /// Mesh file, relative to the scene file (.msh, .vtk, .vtu).
    pub mesh: PathBuf,
    /// Constitutive law: `corotational`, `stvk`, `neo_hookean` or `corotational_sofa` (SOFA's
    /// `TetrahedronFEMForceField` polar convention: R = Q_s Q_mᵀ from the edges of the
    /// element's first node, stiffness R K₀ Rᵀ; depends on the node order, its exact tangent is
    /// not symmetric, a small net torque per element; no derivatives). See
    /// [`crate::material::Law`].
    pub law: Law,
    /// Young's modulus E (Pa), > 0.
    pub young_modulus: f64,
    /// Poisson's ratio ν, in (−1, 0.5).
    pub poisson_ratio: f64,
    /// Mass density ρ (kg/m³), > 0; required unless `mass = "uniform"`, where it must be
    /// absent (the mass is then `total_mass`).
    #[serde(default)]
    pub density: Option<f64>,
    /// Mass matrix kind: `"lumped"` (default; ρVₑ/4 to each node of every tetrahedron),
    /// `"consistent"` or `"uniform"` (SOFA's `UniformMass`: `total_mass` spread evenly over
    /// all the mesh's nodes, fixed ones included, diagonal).
    #[serde(default)]
    pub mass: MassKind,
    /// Total mass (kg), > 0: required with `mass = "uniform"` (each of the N nodes gets
    /// total_mass/N), not allowed otherwise.
    #[serde(default)]
    pub total_mass: Option<f64>,
    /// Rayleigh mass coefficient α (1/s) of D = αM + βK.
    #[serde(default)]
    pub rayleigh_mass: f64,
    /// Rayleigh stiffness coefficient β (s) of D = αM + βK.
    #[serde(default)]
    pub rayleigh_stiffness: f64,
    /// Mesh unit → metres (0.001 for a mesh in mm).
    #[serde(default = "default_scale")]
    pub scale: f64,
    /// Rigid placement of the mesh, applied after `scale`: a rotation vector [rx, ry, rz]
    /// (axis-angle, rad, about the origin) then `translation` (m). Only the mesh moves:
    /// actuator points, servo axes and boxes, effectors and `fixed_box` are in world
    /// coordinates (where the placed mesh is); mesh groups move with the mesh.
    #[serde(default)]
    pub rotation: Option<[f64; 3]>,
    /// See `rotation` (m).
    #[serde(default)]
    pub translation: Option<[f64; 3]>,
    /// Nodes inside this box `[min, max]` (m, after scaling and placement) are fixed.
    #[serde(default)]
    pub fixed_box: Option<[[f64; 3]; 2]>,
    /// Nodes of this mesh group (any kind) are fixed.
    #[serde(default)]
    pub fixed_group: Option<String>,
    /// How far outside the mesh (m), > 0, an embedded point (cable point, effector, cavity
    /// surface vertex) may lie: such a point is mapped into its nearest tetrahedron with
    /// extrapolated barycentric weights (SOFA's `BarycentricMapping`) and a warning names the
    /// farthest; a point farther out is an error. Default: 1e-3 of the mesh's bounding-box
    /// diagonal.
    #[serde(default)]
    pub embed_tolerance: Option<f64>,
    /// `[[soft_body.cable]]`: cables.
    #[serde(default)]
    pub cable: Vec<CableSection>,
    /// `[[soft_body.pneumatic]]`: pressurised cavities.
    #[serde(default)]
    pub pneumatic: Vec<PneumaticSection>,
    /// `[[soft_body.servo]]`: servos.
    #[serde(default)]
    pub servo: Vec<ServoSection>,
    /// `[[soft_body.effector]]`: named points whose position is reported.
    #[serde(default)]
    pub effector: Vec<EffectorSection>,
    /// `[[soft_body.marker]]`: points an experiment tracks (motion capture, camera), at a
    /// node or at a position carried by the mesh (no distance limit outside it).
    #[serde(default)]
    pub marker: Vec<self::marker::MarkerSection>,
    /// `[[soft_body.region]]`: boxes of elements made of another material.
    #[serde(default)]
    pub region: Vec<super::RegionSection>,
    /// `[soft_body.contact]`: a contact surface of its own, embedded in the mesh.
    #[serde(default)]
    pub contact: Option<super::SoftContactSection>,
}

/// `[[soft_body.cable]]`: a cable through points embedded in the mesh, pulled at its last
/// point from the pull point (SoftRobots `CableConstraint`). Exactly one of `force` and
/// `displacement`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CableSection {
    /// Unique name among the body's actuators.
    pub name: String,
    /// The cable's points (m, after `scale`), from the pull side to the actuated last point;
    /// each lies in the mesh or within the body's `embed_tolerance` of it.
    pub points: Vec<[f64; 3]>,
    /// Tension λ (N), ≥ 0 (a cable only pulls).
    #[serde(default)]
    pub force: Option<f64>,
    /// Shortening from the rest length (m): the tension is solved in each step to reach it.
    #[serde(default)]
    pub displacement: Option<f64>,
    /// A fixed point in space (m) the cable is pulled from; default: the first point, which
    /// moves with the body.
    #[serde(default)]
    pub pull_point: Option<[f64; 3]>,
    /// Upper bound of the tension (N), > 0, default unbounded: of the solved tension, and a
    /// given `force` must not exceed it (SOFA's `maxForce`).
    #[serde(default)]
    pub max_force: Option<f64>,
    /// Lower bound of the tension (N), ≥ 0 (default 0: a cable only pulls), ≤ `max_force`; a
    /// given `force` must not be below it (SOFA's `minForce`).
    #[serde(default)]
    pub min_force: Option<f64>,
    /// Largest total pull, rest length − length (m; SOFA's `maxPositiveDisp`), default
    /// unbounded. With `force`, the step holds the pull at this bound by lowering the tension
    /// (a complementarity solved in the step) when the given force would pull further; with
    /// `displacement`, the displacement must not exceed it.
    #[serde(default)]
    pub max_displacement: Option<f64>,
    /// Smallest total pull (m; negative: the cable lengthens; SOFA's `maxNegativeDisp` with
    /// the opposite sign), default unbounded, ≤ `max_displacement`. With `force`, the step
    /// raises the tension to hold the pull at this bound when the given force would let the
    /// cable lengthen further.
    #[serde(default)]
    pub min_displacement: Option<f64>,
    /// Largest change of the cable length per step (m), > 0, when `displacement` drives it
    /// (SOFA's `maxDispVariation`); default unlimited.
    #[serde(default)]
    pub max_displacement_step: Option<f64>,
    /// Largest change of the tension per step (N), > 0: a given `force` is ramped to from 0, a
    /// solved one changes by at most this; default unlimited.
    #[serde(default)]
    pub max_force_step: Option<f64>,
    /// Command map of `--inputs` (docs/scene-file.md#commands-over-time): the input is
    /// `gain` · command + `offset`, in the input's unit (N for `force`, m of shortening for
    /// `displacement`); finite, ≠ 0; default 1.
    #[serde(default = "default_gain")]
    pub gain: f64,
    /// See `gain`: added to gain · command, in the input's unit; finite; default 0.
    #[serde(default)]
    pub offset: f64,
    /// Time constant τ (s), ≥ 0, of a first-order lag of the input behind the command of
    /// `--inputs`; default 0 (no lag).
    #[serde(default)]
    pub time_constant: f64,
}

/// `[[soft_body.pneumatic]]`: a cavity bounded by a triangle group of the mesh (closed,
/// normals out of the cavity) or by its own closed surface file embedded in the mesh (SOFA's
/// `SurfacePressureConstraint` on a cavity `.stl`). Exactly one of `group` and `surface`, and
/// one of `pressure` and `volume_change`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PneumaticSection {
    /// Unique name among the body's actuators.
    pub name: String,
    /// The triangle group of the cavity's surface.
    #[serde(default)]
    pub group: Option<String>,
    /// A closed triangle surface file (`.stl` / `.obj`, relative to the scene file) of the
    /// cavity, in the mesh file's units and frame: the body's `scale`, `rotation` and
    /// `translation` place it with the mesh. Its vertices are embedded in the tetrahedra
    /// (barycentric weights; within `embed_tolerance` outside, extrapolated), so the cavity's
    /// volume follows the deformation. Any consistent orientation (the enclosed volume is
    /// taken positive).
    #[serde(default)]
    pub surface: Option<PathBuf>,
    /// Pressure λ (Pa, relative to ambient).
    #[serde(default)]
    pub pressure: Option<f64>,
    /// Volume growth from the rest volume (m³): the pressure is solved in each step.
    #[serde(default)]
    pub volume_change: Option<f64>,
    /// Bounds of the solved pressure (Pa); default unbounded. `min_pressure ≤ max_pressure`.
    #[serde(default)]
    pub min_pressure: Option<f64>,
    /// See `min_pressure`.
    #[serde(default)]
    pub max_pressure: Option<f64>,
    /// Largest change of the volume per step (m³), > 0, when `volume_change` drives it;
    /// default unlimited.
    #[serde(default)]
    pub max_volume_step: Option<f64>,
    /// Largest change of the pressure per step (Pa), > 0 (a given `pressure` is ramped to from
    /// 0); default unlimited.
    #[serde(default)]
    pub max_pressure_step: Option<f64>,
    /// Command map of `--inputs` (docs/scene-file.md#commands-over-time): the input is
    /// `gain` · command + `offset`, in the input's unit (Pa for `pressure`, m³ for
    /// `volume_change`); finite, ≠ 0; default 1.
    #[serde(default = "default_gain")]
    pub gain: f64,
    /// See `gain`: added to gain · command, in the input's unit; finite; default 0.
    #[serde(default)]
    pub offset: f64,
    /// Time constant τ (s), ≥ 0, of a first-order lag of the input behind the command of
    /// `--inputs`; default 0 (no lag).
    #[serde(default)]
    pub time_constant: f64,
}

/// `[[soft_body.servo]]`: nodes (a group and/or a box) turned about an axis. Exactly one of
/// `angle` and `torque`; at least one of `group` and `box`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServoSection {
    /// Unique name among the body's actuators.
    pub name: String,
    /// Mesh group (any kind) of the driven nodes.
    #[serde(default)]
    pub group: Option<String>,
    /// Nodes inside this box `[min, max]` (m) are driven.
    #[serde(default, rename = "box")]
    pub node_box: Option<[[f64; 3]; 2]>,
    /// A point on the rotation axis (m).
    pub axis_point: [f64; 3],
    /// The axis direction (any length > 0); positive angles turn by the right-hand rule.
    pub axis_direction: [f64; 3],
    /// Target angle (rad) from rest, |angle| < π: the horn nodes are pinned to the horn's rigid
    /// rotation (`scene::step::free::prescribed`) and the torque reported is the reaction that holds them.
    #[serde(default)]
    pub angle: Option<f64>,
    /// Torque λ (N·m) about the axis.
    #[serde(default)]
    pub torque: Option<f64>,
    /// Bound |λ| ≤ max_torque (N·m) of a solved torque, > 0; default unbounded. (An
    /// angle-driven servo pins its horn: its torque is the reaction, not bounded.)
    #[serde(default)]
    pub max_torque: Option<f64>,
    /// Largest change of the angle per step (rad), > 0, when `angle` drives it; default
    /// unlimited.
    #[serde(default)]
    pub max_angle_step: Option<f64>,
    /// Largest change of a given `torque` per step (N·m), > 0 (ramped to from 0); default
    /// unlimited.
    #[serde(default)]
    pub max_torque_step: Option<f64>,
    /// Command map of `--inputs` (docs/scene-file.md#commands-over-time): the input is
    /// `gain` · command + `offset`, in the input's unit (N·m for `torque`, rad for
    /// `angle`); finite, ≠ 0; default 1.
    #[serde(default = "default_gain")]
    pub gain: f64,
    /// See `gain`: added to gain · command, in the input's unit; finite; default 0.
    #[serde(default)]
    pub offset: f64,
    /// Time constant τ (s), ≥ 0, of a first-order lag of the input behind the command of
    /// `--inputs`; default 0 (no lag).
    #[serde(default)]
    pub time_constant: f64,
}

/// `[[soft_body.effector]]`: a named point embedded in the mesh.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EffectorSection {
    /// Unique name among the body's effectors.
    pub name: String,
    /// Its rest position (m), inside the mesh or within the body's `embed_tolerance` of it.
    pub point: [f64; 3],
}

fn default_scale() -> f64 {
    1.0
}

fn default_gain() -> f64 {
    1.0
}

impl SceneFile {
    /// Parses a scene from TOML text, after applying the `--set` overrides; `file` names it in
    /// errors. Unknown keys and type errors are reported with their key and line.
    pub fn parse(file: &str, text: &str, overrides: &[String]) -> Result<SceneFile> {
        // The file alone first, typed, so an error names its line (toml's span); then each
        // `--set` in turn, so a bad override is named as the argument it is, not the file.
        let located = |e: toml::de::Error| {
            let location = e.span().map_or(crate::error::Location::Whole, |span| {
                crate::error::Location::Line(
                    1 + text[..span.start.min(text.len())].matches('\n').count(),
                )
            });
            Error::parse(file, location, toml_message(&e))
        };
        let scene: SceneFile = toml::from_str(text).map_err(located)?;
        if overrides.is_empty() {
            scene.validate()?;
            return Ok(scene);
        }
        let mut table: toml::Table = toml::from_str(text).map_err(located)?;
        for o in overrides {
            self::overrides::apply_override(&mut table, o)?;
            table
                .clone()
                .try_into::<SceneFile>()
                .map_err(|e| Error::invalid(format!("--set {o}"), toml_message(&e)))?;
        }
        let scene: SceneFile = table
            .try_into()
            .map_err(|e: toml::de::Error| Error::invalid("--set", toml_message(&e)))?;
        scene.validate()?;
        Ok(scene)
    }

    /// Reads and parses a scene file.
    pub fn read(path: &Path, overrides: &[String]) -> Result<SceneFile> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        SceneFile::parse(&path.display().to_string(), &text, overrides)
    }

    /// Checks every value's range; errors name the value by its path in the file.
    pub fn validate(&self) -> Result<()> {
        let s = &self.simulation;
        positive("simulation.dt", s.dt)?;
        self.control.validate()?;
        if s.gravity.iter().any(|g| !g.is_finite()) {
            return Err(Error::invalid("simulation.gravity", "must be finite"));
        }
        if s.newton_iterations == 0 {
            return Err(Error::invalid(
                "simulation.newton_iterations",
                "must be at least 1",
            ));
        }
        let mut names = std::collections::BTreeSet::new();
        let mut effectors = std::collections::BTreeSet::new();
        for b in &self.soft_body {
            let at = |key: &str| format!("soft_body.{}.{key}", b.name);
            if !names.insert(b.name.as_str()) {
                return Err(Error::invalid(
                    format!("soft_body.{}", b.name),
                    "two soft bodies have this name",
                ));
            }
            positive(&at("young_modulus"), b.young_modulus)?;
            if !(b.poisson_ratio > -1.0 && b.poisson_ratio < 0.5) {
                return Err(Error::invalid(
                    at("poisson_ratio"),
                    format!("must be in (−1, 0.5), got {}", b.poisson_ratio),
                ));
            }
            validate_mass(b, &at)?;
            positive(&at("scale"), b.scale)?;
            if let Some(t) = b.embed_tolerance {
                positive(&at("embed_tolerance"), t)?;
            }
            non_negative(&at("rayleigh_mass"), b.rayleigh_mass)?;
            non_negative(&at("rayleigh_stiffness"), b.rayleigh_stiffness)?;
            if let Some([lo, hi]) = b.fixed_box
                && (0..3).any(|a| !(lo[a] <= hi[a]) || !lo[a].is_finite() || !hi[a].is_finite())
            {
                return Err(Error::invalid(
                    at("fixed_box"),
                    "must be [[min], [max]] with min ≤ max, finite",
                ));
            }
            for (key, v) in [("rotation", b.rotation), ("translation", b.translation)] {
                if let Some(v) = v
                    && !v.iter().all(|c| c.is_finite())
                {
                    return Err(Error::invalid(
                        at(key),
                        format!("must be finite, got {v:?}"),
                    ));
                }
            }
            self::actuation::validate_actuation(b)?;
            for r in &b.region {
                r.validate(&b.name)?;
            }
            for e in &b.effector {
                if !effectors.insert(e.name.as_str()) {
                    return Err(Error::invalid(
                        at(&format!("effector.{}", e.name)),
                        "another body has an effector of this name (effector names are unique in a scene)",
                    ));
                }
            }
            for m in &b.marker {
                m.validate(&b.name)?;
            }
        }
        self::marker::validate_marker_names(
            self.soft_body
                .iter()
                .map(|b| (b.name.as_str(), b.marker.as_slice())),
        )?;
        self.contact.validate()?;
        let obstacle_name = |j: usize| {
            self.obstacle[j]
                .name
                .clone()
                .unwrap_or_else(|| format!("obstacle{j}"))
        };
        for (i, o) in self.obstacle.iter().enumerate() {
            o.validate(i)?;
            if let Some(j) = (0..i).find(|&j| obstacle_name(j) == obstacle_name(i)) {
                return Err(Error::invalid(
                    format!("obstacle[{i}].name"),
                    format!(
                        "`{}` is already the name of obstacle[{j}]",
                        obstacle_name(i)
                    ),
                ));
            }
        }
        for b in &self.rigid_body {
            b.validate()?;
        }
        for r in &self.robot {
            r.validate()?;
        }
        for (k, a) in self.attachment.iter().enumerate() {
            a.validate(k)?;
        }
        Ok(())
    }
}

/// `density` alone (lumped or consistent mass) or `total_mass` alone (`mass = "uniform"`),
/// positive and finite.
fn validate_mass(b: &SoftBodySection, at: &dyn Fn(&str) -> String) -> Result<()> {
    match (b.mass, b.density, b.total_mass) {
        (MassKind::Uniform, None, Some(m)) => positive(&at("total_mass"), m),
        (MassKind::Uniform, Some(_), _) => Err(Error::invalid(
            at("density"),
            "is not used with mass = \"uniform\" (give total_mass, kg, only)",
        )),
        (MassKind::Uniform, None, None) => Err(Error::invalid(
            at("total_mass"),
            "is required with mass = \"uniform\" (kg, spread evenly over the nodes)",
        )),
        (_, _, Some(_)) => Err(Error::invalid(
            at("total_mass"),
            "is only used with mass = \"uniform\" (give density, kg/m³, for lumped or consistent mass)",
        )),
        (_, Some(rho), None) => positive(&at("density"), rho),
        (_, None, None) => Err(Error::invalid(
            at("density"),
            "is required (kg/m³), or mass = \"uniform\" with total_mass (kg)",
        )),
    }
}

fn positive(what: &str, v: f64) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(
            what,
            format!("must be positive and finite, got {v}"),
        ))
    }
}

fn non_negative(what: &str, v: f64) -> Result<()> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(
            what,
            format!("must be non-negative and finite, got {v}"),
        ))
    }
}

/// TOML errors span several lines (with a caret under the culprit); the CLI prints one line.
/// A toml error's own message on one line, without the snippet toml adds around the span.
fn toml_message(e: &toml::de::Error) -> String {
    one_line(e.message())
}

fn one_line(message: &str) -> String {
    message
        .split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.chars().all(|c| c == '|' || c == '^' || c == ' '))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests;
