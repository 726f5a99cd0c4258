//! The scene file's contact sections (docs/scene-file.md): `[contact]` (friction and NCP solver
//! settings) and `[[obstacle]]` (static plane, box, sphere, capsule and triangle-mesh
//! obstacles), with their checks and their conversion to [`Obstacle`]s. Errors name the key
//! (`obstacle[0].normal`).

use std::path::Path;

use serde::Deserialize;

use crate::contact::Obstacle;
use crate::error::{Error, Result};
use crate::math::{Mat3, Vec3};
use crate::mesh::{TriangleSurface, read_mesh, read_surface};

/// `[contact]`: the Coulomb friction coefficient and the NCP solver.
///
/// Defaults: `friction = 0.5`, `solver = "admm"`, `tolerance = 1e-10` (absolute, on each NCP
/// residual measure in N, m/s, W), `max_iterations = 1000` (ADMM) — the same as the solvers'
/// own defaults except PGS, whose default is also 1000 sweeps here.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContactSection {
    /// Coulomb coefficient μ ≥ 0 of every obstacle without its own `friction`.
    #[serde(default = "default_friction")]
    pub friction: f64,
    /// The NCP solver.
    #[serde(default)]
    pub solver: ContactSolverKind,
    /// Absolute tolerance on each NCP residual measure, > 0.
    #[serde(default = "default_tolerance")]
    pub tolerance: f64,
    /// Iteration limit (ADMM iterations or PGS sweeps), ≥ 1. Reaching it is a status
    /// (`StepReport::contact_converged = false`), not an error.
    #[serde(default = "default_max_iterations")]
    pub max_iterations: usize,
    /// Whether each soft body's surface nodes also touch its own non-adjacent surface
    /// triangles (`contact::detect_self_contacts`), with the Coulomb coefficient `friction`.
    /// Default false.
    #[serde(default)]
    pub self_contact: bool,
    /// Whether the soft bodies touch each other: each body's surface nodes against every
    /// other body's surface triangles (`contact::detect_body_contacts`), with the Coulomb
    /// coefficient `friction`; touching bodies share one NCP. Default false.
    #[serde(default)]
    pub between_bodies: bool,
    /// Pairs of rigid parts that never touch each other: `[["arm/link_a", "arm/link_b"],
    /// ["cube", "table"]]`, a part being a free or fixed rigid body by name, or a robot's
    /// link as `ROBOT/LINK` (a robot's name alone: all its links). Default none.
    #[serde(default)]
    pub ignore: Vec<[String; 2]>,
    /// Whether candidates that the free motion keeps open, or that carried no force in the
    /// last step, wait outside the NCP and are checked after the solve
    /// (`scene::step::contact::screen`: the same solution, fewer Delassus columns). Default true.
    #[serde(default = "default_true")]
    pub screen: bool,
    /// Whether the ADMM solver extrapolates its iterates (Anderson acceleration,
    /// `contact::AdmmSettings::anderson_memory`): the same solution to the tolerance, in a
    /// half to a sixth of the iterations on the committed contact scenes (docs/speed.md; a warm
    /// start that already converges in a few iterations may take a few more). Groups with rows between rigid bodies alone
    /// (non-unique forces) are solved without it whatever this says. Default true.
    #[serde(default = "default_true")]
    pub acceleration: bool,
    /// Whether ADMM polishes its iterate once every contact's force has kept its face of the
    /// cone (apex, interior, boundary) for a few iterations: Newton's method on the NCP
    /// restricted to those faces (`contact::AdmmSettings::polish`), kept only if its
    /// residuals meet the tolerance; the same solution, in a fraction of the iterations
    /// (docs/speed.md). Assembled NCPs only. Default true.
    #[serde(default = "default_true")]
    pub polish: bool,
    /// How the ADMM solver holds each NCP's Delassus matrix G (docs/scene-file.md):
    /// `"assembled"` (default) forms it; `"factored"` never forms it for an NCP of one soft
    /// body against obstacles or fixed rigid shapes, applying it through the body's factor of
    /// A instead (`contact::FactoredDelassus`): the same solution, several times faster from a
    /// few hundred contacts on, but no step derivatives (they need G). Other NCPs are
    /// assembled whatever this says. Needs `solver = "admm"`.
    #[serde(default)]
    pub delassus: DelassusKind,
    /// Whether a face of a rigid box or convex hull lying flat on a soft face is held where
    /// no soft node lies under it and none of its corners over the face's triangles (a face
    /// narrower than the node spacing): rows where its edges cross the surface's edges
    /// (`scene::step::contact::flat_face_rows`, docs/rigid.md). Default true; false leaves such a face to the
    /// nodes' and corners' rows alone, as before these rows existed.
    #[serde(default = "default_true")]
    pub flat_faces: bool,
    /// Whether a rigid ball resting on a soft face is also held at its support point towards
    /// each surface triangle its centre projects onto (`scene::step::contact::ball_rows`, docs/rigid.md): a
    /// ball smaller than the node spacing, between nodes, which the nodes' rows alone let
    /// through; a capsule's two end balls likewise, and its axis where it lies across a
    /// convex ridge. Default false (opt-in): a fixed rigid sphere then acts as a sphere obstacle
    /// does, on the nodes only. Bodies with an embedded contact surface never get these rows
    /// (their surface's points hold the ball).
    #[serde(default)]
    pub small_shapes: bool,
}

fn default_true() -> bool {
    true
}

impl Default for ContactSection {
    fn default() -> Self {
        ContactSection {
            friction: default_friction(),
            solver: ContactSolverKind::default(),
            tolerance: default_tolerance(),
            max_iterations: default_max_iterations(),
            self_contact: false,
            between_bodies: false,
            ignore: Vec::new(),
            screen: true,
            acceleration: true,
            polish: true,
            delassus: DelassusKind::default(),
            flat_faces: true,
            small_shapes: false,
        }
    }
}

fn default_friction() -> f64 {
    0.5
}
fn default_tolerance() -> f64 {
    1e-10
}
fn default_max_iterations() -> usize {
    1000
}

/// Which NCP solver resolves the contacts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContactSolverKind {
    /// ADMM (paper 002, `AdmmSolver`).
    #[default]
    Admm,
    /// Projected Gauss–Seidel (`PgsSolver`).
    Pgs,
}

/// How an NCP's Delassus matrix reaches the solver (`[contact] delassus`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DelassusKind {
    /// Formed as a dense matrix, `G = h H A⁻¹ Hᵀ` by one multi-right-hand-side solve
    /// (`contact::assemble_delassus`).
    #[default]
    Assembled,
    /// Never formed where it can be avoided: products through the factor of A, shifted
    /// solves by the Woodbury identity (`contact::FactoredDelassus`).
    Factored,
}

/// Kind of an `[[obstacle]]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ObstacleKind {
    /// Half-space below a plane: `point`, `normal`.
    Plane,
    /// Box: `center`, `half_extents`, optional `rotation` (axis-angle, rad).
    Box,
    /// Ball: `center`, `radius`.
    Sphere,
    /// Capsule: `start`, `end` (the axis), `radius`.
    Capsule,
    /// Triangle mesh: `path` (`.stl` ASCII or binary, `.obj`, or a tetrahedral mesh file
    /// whose boundary surface is used), optional `scale`, `rotation` (axis-angle, rad),
    /// `translation` (m), applied as x ↦ R (s x) + t.
    Mesh,
}

/// One `[[obstacle]]`: a static rigid obstacle. Which keys apply depends on `type`; a key that
/// does not belong to the type is an error.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObstacleSection {
    /// Optional name, unique among the obstacles (parameter names such as
    /// `friction:NAME`); default `obstacleK`, K its 0-based place in the file.
    #[serde(default)]
    pub name: Option<String>,
    /// `"plane" | "box" | "sphere" | "capsule" | "mesh"`.
    #[serde(rename = "type")]
    pub kind: ObstacleKind,
    /// Plane: a point of the plane (m).
    #[serde(default)]
    pub point: Option<[f64; 3]>,
    /// Plane: outward normal (any length > 0).
    #[serde(default)]
    pub normal: Option<[f64; 3]>,
    /// Box and sphere: centre (m).
    #[serde(default)]
    pub center: Option<[f64; 3]>,
    /// Box: half extents along the box axes (m), > 0.
    #[serde(default)]
    pub half_extents: Option<[f64; 3]>,
    /// Box and mesh: rotation (body → world) as an axis-angle vector (rad); default none.
    #[serde(default)]
    pub rotation: Option<[f64; 3]>,
    /// Capsule: first end of the axis (m).
    #[serde(default)]
    pub start: Option<[f64; 3]>,
    /// Capsule: second end of the axis (m).
    #[serde(default)]
    pub end: Option<[f64; 3]>,
    /// Sphere and capsule: radius (m), > 0.
    #[serde(default)]
    pub radius: Option<f64>,
    /// Coulomb coefficient of this obstacle, ≥ 0; default `[contact].friction`.
    #[serde(default)]
    pub friction: Option<f64>,
    /// Mesh: the surface file, relative to the scene file.
    #[serde(default)]
    pub path: Option<String>,
    /// Mesh: file unit → metres, > 0; default 1.
    #[serde(default)]
    pub scale: Option<f64>,
    /// Mesh: translation (m) applied after the rotation; default none.
    #[serde(default)]
    pub translation: Option<[f64; 3]>,
}

fn v3(a: [f64; 3]) -> Vec3 {
    Vec3::new(a[0], a[1], a[2])
}

/// Rotation matrix of the axis-angle vector `r` (rad): angle |r| about r/|r| (Rodrigues).
pub fn axis_angle_matrix(r: [f64; 3]) -> Mat3 {
    *nalgebra::Rotation3::new(v3(r)).matrix()
}

impl ContactSection {
    /// Checks the ranges; errors name `contact.KEY`.
    pub fn validate(&self) -> Result<()> {
        if !(self.friction >= 0.0) || !self.friction.is_finite() {
            return Err(Error::invalid(
                "contact.friction",
                format!("must be finite and non-negative, got {}", self.friction),
            ));
        }
        if !(self.tolerance > 0.0) || !self.tolerance.is_finite() {
            return Err(Error::invalid(
                "contact.tolerance",
                format!("must be positive and finite, got {}", self.tolerance),
            ));
        }
        if self.max_iterations == 0 {
            return Err(Error::invalid(
                "contact.max_iterations",
                "must be at least 1",
            ));
        }
        if self.delassus == DelassusKind::Factored && self.solver != ContactSolverKind::Admm {
            return Err(Error::invalid(
                "contact.delassus",
                "\"factored\" needs solver = \"admm\" (PGS reads the entries of G)",
            ));
        }
        Ok(())
    }
}

impl ObstacleSection {
    /// Checks this section without reading files: the keys of its type are present, finite
    /// and in range, no key of another type is given. `index` is its place among the
    /// `[[obstacle]]`s and names it in errors (`obstacle[2].radius: …`).
    pub fn validate(&self, index: usize) -> Result<()> {
        self.build(index, None).map(|_| ())
    }

    /// The obstacle this section describes, reading a mesh's `path` relative to `dir`. Errors:
    /// those of [`ObstacleSection::validate`], and a mesh file that is missing, malformed,
    /// empty, or not a consistently oriented surface (naming the file and line or byte).
    pub fn to_obstacle(&self, index: usize, dir: &Path) -> Result<Obstacle> {
        self.build(index, Some(dir))
            .map(|o| o.expect("an obstacle when a folder is given"))
    }

    /// Validates, and builds the obstacle when `dir` is given (meshes need their file).
    fn build(&self, index: usize, dir: Option<&Path>) -> Result<Option<Obstacle>> {
        let at = |key: &str| format!("obstacle[{index}].{key}");
        let need3 = |key: &str, v: Option<[f64; 3]>| -> Result<Vec3> {
            let v = v.ok_or_else(|| Error::invalid(at(key), "missing"))?;
            if v.iter().any(|x| !x.is_finite()) {
                return Err(Error::invalid(at(key), format!("{v:?} is not finite")));
            }
            Ok(v3(v))
        };
        let positive = |key: &str, v: Option<f64>| -> Result<f64> {
            let v = v.ok_or_else(|| Error::invalid(at(key), "missing"))?;
            if !(v > 0.0) || !v.is_finite() {
                return Err(Error::invalid(
                    at(key),
                    format!("must be positive and finite, got {v}"),
                ));
            }
            Ok(v)
        };
        let rotation = |r: Option<[f64; 3]>| -> Result<Mat3> {
            match r {
                Some(r) if r.iter().any(|x| !x.is_finite()) => {
                    Err(Error::invalid(at("rotation"), "not finite"))
                }
                Some(r) => Ok(axis_angle_matrix(r)),
                None => Ok(Mat3::identity()),
            }
        };
        let kind = match self.kind {
            ObstacleKind::Plane => "plane",
            ObstacleKind::Box => "box",
            ObstacleKind::Sphere => "sphere",
            ObstacleKind::Capsule => "capsule",
            ObstacleKind::Mesh => "mesh",
        };
        // The keys each type takes (besides `type` and `friction`).
        let allowed: &[&str] = match self.kind {
            ObstacleKind::Plane => &["point", "normal"],
            ObstacleKind::Box => &["center", "half_extents", "rotation"],
            ObstacleKind::Sphere => &["center", "radius"],
            ObstacleKind::Capsule => &["start", "end", "radius"],
            ObstacleKind::Mesh => &["path", "scale", "rotation", "translation"],
        };
        for (key, present) in [
            ("point", self.point.is_some()),
            ("normal", self.normal.is_some()),
            ("center", self.center.is_some()),
            ("half_extents", self.half_extents.is_some()),
            ("rotation", self.rotation.is_some()),
            ("start", self.start.is_some()),
            ("end", self.end.is_some()),
            ("radius", self.radius.is_some()),
            ("path", self.path.is_some()),
            ("scale", self.scale.is_some()),
            ("translation", self.translation.is_some()),
        ] {
            if present && !allowed.contains(&key) {
                return Err(Error::invalid(
                    at(key),
                    format!("does not apply to a {kind} obstacle"),
                ));
            }
        }
        if let Some(mu) = self.friction
            && (!(mu >= 0.0) || !mu.is_finite())
        {
            return Err(Error::invalid(
                at("friction"),
                format!("must be finite and non-negative, got {mu}"),
            ));
        }
        let obstacle = match self.kind {
            ObstacleKind::Plane => {
                let point = need3("point", self.point)?;
                let normal = need3("normal", self.normal)?;
                if !(normal.norm() > 1e-12) {
                    return Err(Error::invalid(at("normal"), "must not be zero"));
                }
                Obstacle::plane(point, normal)?
            }
            ObstacleKind::Sphere => {
                let center = need3("center", self.center)?;
                Obstacle::sphere(center, positive("radius", self.radius)?)?
            }
            ObstacleKind::Box => {
                let center = need3("center", self.center)?;
                let half = need3("half_extents", self.half_extents)?;
                if !half.iter().all(|e| *e > 0.0) {
                    return Err(Error::invalid(
                        at("half_extents"),
                        format!("{:?} must all be positive", half.as_slice()),
                    ));
                }
                Obstacle::cuboid(center, half, rotation(self.rotation)?)?
            }
            ObstacleKind::Capsule => {
                let a = need3("start", self.start)?;
                let b = need3("end", self.end)?;
                let radius = positive("radius", self.radius)?;
                if !((b - a).norm() > 0.0) {
                    return Err(Error::invalid(
                        at("end"),
                        "equals `start` (a ball is a sphere obstacle)",
                    ));
                }
                Obstacle::capsule(a, b, radius)?
            }
            ObstacleKind::Mesh => {
                let path = self
                    .path
                    .as_deref()
                    .ok_or_else(|| Error::invalid(at("path"), "missing"))?;
                let scale = match self.scale {
                    Some(_) => positive("scale", self.scale)?,
                    None => 1.0,
                };
                let rot = rotation(self.rotation)?;
                let translation = match self.translation {
                    Some(_) => need3("translation", self.translation)?,
                    None => Vec3::zeros(),
                };
                let Some(dir) = dir else { return Ok(None) };
                let file = dir.join(path);
                if !file.is_file() {
                    return Err(Error::invalid(
                        at("path"),
                        format!("file {} not found", file.display()),
                    ));
                }
                let surface = read_obstacle_surface(&file)?;
                let name = file.display().to_string();
                Obstacle::mesh(&name, surface.transformed(scale, &rot, &translation))?
            }
        };
        Ok(Some(obstacle))
    }
}

/// The surface of an obstacle file: `.stl` / `.obj` directly, any other file as a tetrahedral
/// mesh (gmsh, VTK) whose boundary triangles are used.
pub(in crate::scene) fn read_obstacle_surface(file: &Path) -> Result<TriangleSurface> {
    let ext = file
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if matches!(ext.as_deref(), Some("stl") | Some("obj")) {
        return read_surface(file);
    }
    let mesh = read_mesh(file)?;
    TriangleSurface::new(
        &file.display().to_string(),
        mesh.positions().to_vec(),
        mesh.boundary_triangles(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_angle_quarter_turn_about_z_maps_x_to_y() {
        let r = axis_angle_matrix([0.0, 0.0, std::f64::consts::FRAC_PI_2]);
        let y = r * Vec3::x();
        assert!((y - Vec3::y()).norm() < 1e-15);
    }

    const BASE: &str = r#"
        [simulation]
        dt = 0.01
    "#;

    fn parse(extra: &str) -> Result<crate::scene::SceneFile> {
        crate::scene::SceneFile::parse("s.toml", &format!("{BASE}\n{extra}"), &[])
    }

    #[test]
    fn contact_defaults_and_obstacles_parse() {
        let s = parse(
            r#"
            [[obstacle]]
            type = "plane"
            point = [0.0, 0.0, -0.02]
            normal = [0.0, 0.0, 2.0]
            friction = 0.3
            [[obstacle]]
            type = "box"
            center = [0.0, 0.0, 0.0]
            half_extents = [1.0, 2.0, 3.0]
            rotation = [0.0, 0.0, 0.5]
            [[obstacle]]
            type = "sphere"
            center = [1.0, 0.0, 0.0]
            radius = 0.5
            "#,
        )
        .unwrap();
        assert_eq!(s.contact.friction, 0.5);
        assert_eq!(s.contact.solver, ContactSolverKind::Admm);
        assert_eq!(s.obstacle.len(), 3);
        match s.obstacle[0].to_obstacle(0, Path::new(".")).unwrap() {
            Obstacle::Plane { normal, .. } => assert!((normal - Vec3::z()).norm() < 1e-15),
            o => panic!("{o:?}"),
        }
        let s = parse("[contact]\nsolver = \"pgs\"\nfriction = 0.2\n").unwrap();
        assert_eq!(s.contact.solver, ContactSolverKind::Pgs);
    }

    #[test]
    fn bad_obstacles_are_errors_naming_the_key() {
        for (text, key) in [
            (
                "[[obstacle]]\ntype = \"plane\"\npoint = [0.0,0.0,0.0]\nnormal = [0.0,0.0,0.0]",
                "obstacle[0].normal",
            ),
            (
                "[[obstacle]]\ntype = \"sphere\"\ncenter = [0.0,0.0,0.0]\nradius = -1.0",
                "obstacle[0].radius",
            ),
            (
                "[[obstacle]]\ntype = \"box\"\ncenter = [0.0,0.0,0.0]\nhalf_extents = [1.0,0.0,1.0]",
                "obstacle[0].half_extents",
            ),
            (
                "[[obstacle]]\ntype = \"sphere\"\ncenter = [0.0,0.0,0.0]",
                "obstacle[0].radius",
            ),
            (
                "[[obstacle]]\ntype = \"mesh\"\nscale = 2.0",
                "obstacle[0].path",
            ),
            (
                "[[obstacle]]\ntype = \"mesh\"\npath = \"a.stl\"\nscale = 0.0",
                "obstacle[0].scale",
            ),
            (
                "[[obstacle]]\ntype = \"mesh\"\npath = \"a.stl\"\nradius = 1.0",
                "obstacle[0].radius",
            ),
            (
                "[[obstacle]]\ntype = \"capsule\"\nstart = [0.0,0.0,0.0]\nend = [0.0,0.0,0.0]\nradius = 1.0",
                "obstacle[0].end",
            ),
            (
                "[[obstacle]]\ntype = \"capsule\"\nstart = [0.0,0.0,0.0]\nend = [1.0,0.0,0.0]\nradius = 0.0",
                "obstacle[0].radius",
            ),
            (
                "[[obstacle]]\ntype = \"box\"\ncenter = [0.0,0.0,0.0]\nhalf_extents = [1.0,1.0,1.0]\nstart = [0.0,0.0,0.0]",
                "obstacle[0].start",
            ),
            ("[contact]\nfriction = -0.1", "contact.friction"),
            ("[contact]\ntolerance = 0.0", "contact.tolerance"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.starts_with(key), "{text}: {e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
        // A mesh's file is read when the scene is built, relative to the scene's folder.
        let s = parse("[[obstacle]]\ntype = \"mesh\"\npath = \"missing.stl\"").unwrap();
        let e = s.obstacle[0]
            .to_obstacle(0, Path::new("/nonexistent"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("obstacle[0].path: file /nonexistent/missing.stl not found"),
            "{e}"
        );
        for text in [
            "[[obstacle]]\ntype = \"cone\"",
            "[[obstacle]]\ntype = \"plane\"\nnormalz = [0.0,0.0,1.0]",
            "[contact]\nsolver = \"lcp\"",
        ] {
            assert!(parse(text).is_err(), "{text}");
        }
    }
}
