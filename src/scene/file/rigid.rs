//! The scene file's rigid sections (docs/rigid.md): `[[rigid_body]]` (a free or fixed rigid
//! body of a simple shape) and `[[robot]]` (a URDF robot on a fixed or free-floating base).
//! Plain data deserialised with serde; unknown keys are errors that name the key, and
//! [`RigidBodySection::validate`] / [`RobotSection::validate`] check the values, naming
//! `rigid_body.NAME.KEY` or `robot.NAME.KEY`.

use serde::Deserialize;

use crate::error::{Error, Result};

/// The shape of a `[[rigid_body]]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RigidShapeKind {
    /// A box: `half_extents` (m).
    Box,
    /// A ball: `radius` (m).
    Sphere,
    /// A capsule along the body's z axis: `radius`, `half_length` (m).
    Capsule,
    /// A cylinder along the body's z axis: `radius`, `half_length` (m).
    Cylinder,
    /// The convex hull of a surface file's vertices: `path` (`.stl`, `.obj`), `scale`.
    Mesh,
}

/// One `[[rigid_body]]`: a rigid body, free (six degrees of freedom under gravity, contact and
/// nothing else) or fixed (a static obstacle of the same shape).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RigidBodySection {
    /// Unique name (`--set rigid_body.NAME.…`, outputs, sensitivities `position:NAME`).
    pub name: String,
    /// `"box" | "sphere" | "capsule" | "cylinder" | "mesh"`.
    pub shape: RigidShapeKind,
    /// Box: half side lengths along the body axes (m), > 0.
    #[serde(default)]
    pub half_extents: Option<[f64; 3]>,
    /// Sphere, capsule, cylinder: radius (m), > 0.
    #[serde(default)]
    pub radius: Option<f64>,
    /// Capsule, cylinder: half length along the body's z axis (m), > 0.
    #[serde(default)]
    pub half_length: Option<f64>,
    /// Mesh: the surface file (relative to the scene file), taken as its convex hull.
    #[serde(default)]
    pub path: Option<String>,
    /// Mesh: file unit → metres, > 0; default 1.
    #[serde(default)]
    pub scale: Option<f64>,
    /// Density (kg/m³), > 0: the mass is density × the shape's volume. Give this or `mass`.
    #[serde(default)]
    pub density: Option<f64>,
    /// Mass (kg), > 0. Give this or `density`.
    #[serde(default)]
    pub mass: Option<f64>,
    /// Rotational inertia about the centre of mass in body axes (kg·m²); default the shape's
    /// own (uniform density).
    #[serde(default)]
    pub inertia: Option<[[f64; 3]; 3]>,
    /// Position of the centre of mass (m).
    #[serde(default)]
    pub position: [f64; 3],
    /// Orientation as an axis-angle vector (rad).
    #[serde(default)]
    pub rotation: [f64; 3],
    /// Velocity of the centre of mass (m/s, world axes).
    #[serde(default)]
    pub velocity: [f64; 3],
    /// Angular velocity (rad/s, world axes).
    #[serde(default)]
    pub angular_velocity: [f64; 3],
    /// Coulomb coefficient of this body's contacts, ≥ 0; default the obstacle's or
    /// `[contact].friction`.
    #[serde(default)]
    pub friction: Option<f64>,
    /// `true`: a static body (no mass needed, never moves).
    #[serde(default)]
    pub fixed: bool,
}

/// How a robot's base is attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum BaseKind {
    /// Bolted to the world at `position` / `rotation`.
    #[default]
    Fixed,
    /// A free-flying base (the first seven coordinates of `q`: position, quaternion xyzw).
    FreeFlyer,
}

/// One `[[robot]]`: a URDF robot.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobotSection {
    /// Unique name (outputs, `q:NAME`, `v:NAME`, `tau:NAME`).
    pub name: String,
    /// The URDF file, relative to the scene file.
    pub urdf: String,
    /// `"fixed"` (default) or `"free_flyer"`.
    #[serde(default)]
    pub base: BaseKind,
    /// Base placement (m): where the URDF root sits (a free-flyer's initial position when
    /// `q` is not given).
    #[serde(default)]
    pub position: [f64; 3],
    /// Base orientation as an axis-angle vector (rad).
    #[serde(default)]
    pub rotation: [f64; 3],
    /// Initial configuration (length nq, URDF joint order depth-first); default neutral.
    #[serde(default)]
    pub q: Option<Vec<f64>>,
    /// Initial velocity (length nv); default zero.
    #[serde(default)]
    pub v: Option<Vec<f64>>,
    /// Constant joint inputs (N·m or N, length nv; a free-flyer's six are usually zero).
    #[serde(default)]
    pub torque: Option<Vec<f64>>,
    /// Joint-space PD gains (N·m/rad or N/m, length nv), with `kd` and `target`.
    #[serde(default)]
    pub kp: Option<Vec<f64>>,
    /// Joint-space damping gains of the PD (N·m·s/rad or N·s/m, length nv).
    #[serde(default)]
    pub kd: Option<Vec<f64>>,
    /// PD target configuration (length nq).
    #[serde(default)]
    pub target: Option<Vec<f64>>,
    /// A PD target that moves: waypoints `[t, q₁, …, q_nq]` (time in s, increasing; then a
    /// configuration), followed piecewise-linearly (held at the first before its time and at
    /// the last after). Replaces `target`.
    #[serde(default)]
    pub target_path: Option<Vec<Vec<f64>>>,
    /// Coulomb coefficient of the robot's contacts, ≥ 0; default the obstacle's or
    /// `[contact].friction`.
    #[serde(default)]
    pub friction: Option<f64>,
}

fn finite3(what: String, v: &[f64; 3]) -> Result<()> {
    if v.iter().all(|x| x.is_finite()) {
        Ok(())
    } else {
        Err(Error::invalid(what, format!("must be finite, got {v:?}")))
    }
}

fn non_negative_friction(what: String, f: Option<f64>) -> Result<()> {
    match f {
        Some(mu) if !(mu >= 0.0) || !mu.is_finite() => Err(Error::invalid(
            what,
            format!("must be finite and non-negative, got {mu}"),
        )),
        _ => Ok(()),
    }
}

impl RigidBodySection {
    /// Checks the keys of the shape (present, positive, no key of another shape), the mass
    /// (exactly one of `density`, `mass` unless fixed) and finite placements.
    pub fn validate(&self) -> Result<()> {
        let at = |key: &str| format!("rigid_body.{}.{key}", self.name);
        let uses = |key: &str| -> bool {
            matches!(
                (self.shape, key),
                (RigidShapeKind::Box, "half_extents")
                    | (RigidShapeKind::Sphere, "radius")
                    | (RigidShapeKind::Capsule | RigidShapeKind::Cylinder, "radius")
                    | (
                        RigidShapeKind::Capsule | RigidShapeKind::Cylinder,
                        "half_length"
                    )
                    | (RigidShapeKind::Mesh, "path" | "scale")
            )
        };
        let given = [
            ("half_extents", self.half_extents.is_some()),
            ("radius", self.radius.is_some()),
            ("half_length", self.half_length.is_some()),
            ("path", self.path.is_some()),
            ("scale", self.scale.is_some()),
        ];
        for (key, is_given) in given {
            if is_given && !uses(key) {
                return Err(Error::invalid(
                    at(key),
                    format!("is not a key of shape = \"{:?}\"", self.shape).to_lowercase(),
                ));
            }
            if !is_given && uses(key) && key != "scale" {
                return Err(Error::invalid(
                    at(key),
                    format!("is required for shape = \"{:?}\"", self.shape).to_lowercase(),
                ));
            }
        }
        let positive = |key: &str, v: f64| {
            if v > 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err(Error::invalid(
                    at(key),
                    format!("must be positive and finite, got {v}"),
                ))
            }
        };
        if let Some(h) = self.half_extents {
            for (k, x) in h.iter().enumerate() {
                positive(&format!("half_extents[{k}]"), *x)?;
            }
        }
        for (key, v) in [
            ("radius", self.radius),
            ("half_length", self.half_length),
            ("scale", self.scale),
        ] {
            if let Some(v) = v {
                positive(key, v)?;
            }
        }
        match (self.fixed, self.density, self.mass) {
            (false, Some(_), Some(_)) => {
                return Err(Error::invalid(
                    at("mass"),
                    "give density (kg/m³) or mass (kg), not both",
                ));
            }
            (false, None, None) => {
                return Err(Error::invalid(
                    at("density"),
                    "is required (kg/m³), or mass (kg), for a body that moves",
                ));
            }
            _ => {}
        }
        if let Some(rho) = self.density {
            positive("density", rho)?;
        }
        if let Some(m) = self.mass {
            positive("mass", m)?;
        }
        if let Some(i) = self.inertia
            && i.iter().flatten().any(|x| !x.is_finite())
        {
            return Err(Error::invalid(at("inertia"), "must be finite"));
        }
        finite3(at("position"), &self.position)?;
        finite3(at("rotation"), &self.rotation)?;
        finite3(at("velocity"), &self.velocity)?;
        finite3(at("angular_velocity"), &self.angular_velocity)?;
        non_negative_friction(at("friction"), self.friction)
    }
}

impl RobotSection {
    /// Checks what can be checked without the URDF (lengths are checked against it when the
    /// robot is built): finite placements and vectors, PD keys given together, friction.
    pub fn validate(&self) -> Result<()> {
        let at = |key: &str| format!("robot.{}.{key}", self.name);
        finite3(at("position"), &self.position)?;
        finite3(at("rotation"), &self.rotation)?;
        for (key, v) in [
            ("q", &self.q),
            ("v", &self.v),
            ("torque", &self.torque),
            ("kp", &self.kp),
            ("kd", &self.kd),
            ("target", &self.target),
        ] {
            if let Some(v) = v
                && let Some(k) = v.iter().position(|x| !x.is_finite())
            {
                return Err(Error::invalid(at(&format!("{key}[{k}]")), "not finite"));
            }
        }
        if self.target.is_some() && self.target_path.is_some() {
            return Err(Error::invalid(
                at("target_path"),
                "give a constant `target` or a `target_path`, not both",
            ));
        }
        let has_target = self.target.is_some() || self.target_path.is_some();
        let pd = [self.kp.is_some(), self.kd.is_some(), has_target];
        if pd.iter().any(|x| *x) && !pd.iter().all(|x| *x) {
            return Err(Error::invalid(
                at("kp"),
                "a PD input needs kp, kd and target (or target_path) together",
            ));
        }
        if let Some(path) = &self.target_path {
            if path.is_empty() {
                return Err(Error::invalid(at("target_path"), "has no waypoint"));
            }
            let mut last = f64::NEG_INFINITY;
            for (k, w) in path.iter().enumerate() {
                if let Some(i) = w.iter().position(|x| !x.is_finite()) {
                    return Err(Error::invalid(
                        at(&format!("target_path[{k}][{i}]")),
                        "not finite",
                    ));
                }
                match w.first() {
                    Some(&t) if t > last => last = t,
                    _ => {
                        return Err(Error::invalid(
                            at(&format!("target_path[{k}]")),
                            "must start with its time (s), later than the waypoint before",
                        ));
                    }
                }
            }
        }
        non_negative_friction(at("friction"), self.friction)
    }
}
