//! The scene's rigid part built from its `[[rigid_body]]` and `[[robot]]` sections: each free
//! body (`rigid::FreeBody`) and each robot (`rigid::Model`) is one rigid system, with its
//! colliders (convex shapes attached to joints), its joint input (constant torques or a
//! joint-space PD, clamped to the effort limits), and its initial state. Fixed rigid bodies
//! are static colliders. `scene` is where rigid poses meet the contact layer's shapes:
//! `rigid` and `contact` never see each other.

use std::path::Path;

use crate::contact::{Collider, ConvexShape, ShapePose};
use crate::error::{Error, Result};
use crate::math::{Mat3, Vec3};
use crate::mesh::read_surface;
use crate::rigid::{Base, FreeBody, Model, Se3, Shape, load_urdf};

use super::rigid_body_shape::body_shape;
use crate::scene::file::contact::axis_angle_matrix;
use crate::scene::file::rigid::{BaseKind, RigidBodySection, RobotSection};

/// Whether a rigid system is a free body or a robot (they differ in the final state's keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RigidKind {
    /// A `[[rigid_body]]`.
    FreeBody,
    /// A `[[robot]]` (URDF).
    Robot,
}

/// The dynamics of a rigid system.
#[derive(Debug, Clone)]
pub enum RigidDynamics {
    /// A free body (Newton–Euler, world-frame velocities; `rigid::FreeBody`); its
    /// configuration is `[c; qx qy qz qw]`, its velocity `[ċ; ω]` in world axes.
    Free(FreeBody),
    /// An articulated robot (`rigid::Model`; placements include a fixed base's placement).
    Robot(Box<Model>),
}

/// A convex shape carried by a joint's body.
#[derive(Debug, Clone, PartialEq)]
pub struct JointCollider {
    /// Name for messages and outputs (`cube`, or the URDF link).
    pub name: String,
    /// The joint whose body carries the shape (0: the world, for a fixed robot's base link;
    /// a free body's shape is on joint 1, its own frame).
    pub joint: usize,
    /// The shape's pose in the joint frame.
    pub placement: ShapePose,
    /// The shape.
    pub collider: Collider,
}

/// The joint input of a rigid system, clamped to the effort limits every step.
#[derive(Debug, Clone, PartialEq)]
pub enum RigidInput {
    /// No input (τ = 0).
    None,
    /// Constant joint torques or forces (N·m, N; length nv).
    Torque(Vec<f64>),
    /// τ = kp ∘ (target ⊖ q) − kd ∘ v (length nv each; target length nq).
    Pd {
        /// Stiffness gains (N·m/rad, N/m).
        kp: Vec<f64>,
        /// Damping gains (N·m·s/rad, N·s/m).
        kd: Vec<f64>,
        /// Target configuration.
        target: Vec<f64>,
        /// Waypoints `(t, q)` (s, configuration) of a moving target, followed
        /// piecewise-linearly (`target` unused); empty: `target` throughout.
        path: Vec<(f64, Vec<f64>)>,
    },
}

/// One free body or robot.
#[derive(Debug, Clone)]
pub struct RigidSystem {
    /// Its name in the scene.
    pub name: String,
    /// Its dynamics.
    pub dynamics: RigidDynamics,
    /// Its collision shapes.
    pub colliders: Vec<JointCollider>,
    /// Coulomb coefficient of its contacts, if it sets its own.
    pub friction: Option<f64>,
    /// Its joint input.
    pub input: RigidInput,
    /// Initial configuration (nq).
    pub q0: Vec<f64>,
    /// Initial velocity (nv).
    pub v0: Vec<f64>,
}

impl RigidSystem {
    /// Free body or robot.
    pub fn kind(&self) -> RigidKind {
        match self.dynamics {
            RigidDynamics::Free(_) => RigidKind::FreeBody,
            RigidDynamics::Robot(_) => RigidKind::Robot,
        }
    }

    /// Configuration dimension.
    pub fn nq(&self) -> usize {
        match &self.dynamics {
            RigidDynamics::Free(_) => 7,
            RigidDynamics::Robot(m) => m.nq,
        }
    }

    /// Velocity dimension.
    pub fn nv(&self) -> usize {
        match &self.dynamics {
            RigidDynamics::Free(_) => 6,
            RigidDynamics::Robot(m) => m.nv,
        }
    }
}

/// A fixed rigid body: a static shape at a pose.
#[derive(Debug, Clone)]
pub struct StaticCollider {
    /// Its name in the scene.
    pub name: String,
    /// The shape.
    pub collider: Collider,
    /// Its pose in the world.
    pub pose: ShapePose,
    /// Coulomb coefficient of its contacts, if it sets its own.
    pub friction: Option<f64>,
}

/// The rigid part of a scene.
#[derive(Debug, Clone, Default)]
pub struct RigidScene {
    /// Free bodies first, then robots, each in file order.
    pub systems: Vec<RigidSystem>,
    /// Fixed rigid bodies.
    pub statics: Vec<StaticCollider>,
    /// What a user should hear about the rigid part as built (a robot's mesh collision
    /// shape whose file is missing, left out).
    pub warnings: Vec<String>,
    /// Collider pairs that never touch (`[contact] ignore`): `(s, c, t, d)` for collider `c`
    /// of system `s` and collider `d` of system `t` (both orders stored), or `t = usize::MAX`
    /// and `d` a fixed body.
    pub ignored: std::collections::BTreeSet<(usize, usize, usize, usize)>,
}

/// A part named in `[contact] ignore`: colliders of systems, or a fixed body.
enum IgnorePart {
    Colliders(Vec<(usize, usize)>),
    Fixed(usize),
}

impl RigidScene {
    /// Whether the scene has no rigid body or robot.
    pub fn is_empty(&self) -> bool {
        self.systems.is_empty() && self.statics.is_empty()
    }

    /// Resolves the `[contact] ignore` pairs into [`Self::ignored`]. Errors name the entry
    /// (`contact.ignore[k]`) and the part that matches nothing.
    pub fn resolve_ignore(&mut self, pairs: &[[String; 2]]) -> Result<()> {
        let entries: Vec<(usize, [String; 2])> = pairs.iter().cloned().enumerate().collect();
        self.resolve_ignore_entries(&entries)
    }

    /// As [`Self::resolve_ignore`] for entries given with their index `k` in the list.
    pub fn resolve_ignore_entries(&mut self, pairs: &[(usize, [String; 2])]) -> Result<()> {
        for &(k, ref pair) in pairs {
            let a = self.ignore_part(&pair[0], k)?;
            let b = self.ignore_part(&pair[1], k)?;
            match (a, b) {
                (IgnorePart::Colliders(a), IgnorePart::Colliders(b)) => {
                    for &(s, c) in &a {
                        for &(t, d) in &b {
                            self.ignored.insert((s, c, t, d));
                            self.ignored.insert((t, d, s, c));
                        }
                    }
                }
                (IgnorePart::Colliders(a), IgnorePart::Fixed(f))
                | (IgnorePart::Fixed(f), IgnorePart::Colliders(a)) => {
                    for &(s, c) in &a {
                        self.ignored.insert((s, c, usize::MAX, f));
                    }
                }
                (IgnorePart::Fixed(_), IgnorePart::Fixed(_)) => {}
            }
        }
        Ok(())
    }

    fn ignore_part(&self, name: &str, k: usize) -> Result<IgnorePart> {
        let (system, link) = match name.split_once('/') {
            Some((s, l)) => (s, Some(l)),
            None => (name, None),
        };
        if link.is_none()
            && let Some(f) = self.statics.iter().position(|f| f.name == name)
        {
            return Ok(IgnorePart::Fixed(f));
        }
        let parts: Vec<(usize, usize)> = self
            .systems
            .iter()
            .enumerate()
            .filter(|(_, s)| s.name == system)
            .flat_map(|(s, sys)| {
                sys.colliders
                    .iter()
                    .enumerate()
                    .filter(move |(_, c)| link.is_none_or(|l| c.name == l))
                    .map(move |(c, _)| (s, c))
            })
            .collect();
        if parts.is_empty() {
            return Err(Error::invalid(
                format!("contact.ignore[{k}]"),
                format!("{name:?} names no rigid body, robot or robot link with a collision shape"),
            ));
        }
        Ok(IgnorePart::Colliders(parts))
    }

    /// The colliders a `[contact] ignore` entry (number `k`) names: `(system, collider)`
    /// pairs, or `(usize::MAX, f)` for the fixed rigid body `f`.
    pub fn colliders_named(&self, name: &str, k: usize) -> Result<Vec<(usize, usize)>> {
        Ok(match self.ignore_part(name, k)? {
            IgnorePart::Colliders(c) => c,
            IgnorePart::Fixed(f) => vec![(usize::MAX, f)],
        })
    }

    /// The system named `name`.
    pub fn system(&self, name: &str) -> Option<usize> {
        self.systems.iter().position(|s| s.name == name)
    }

    /// Builds the rigid part from the sections (files relative to `dir`); robots get the
    /// scene's `gravity` (m/s²), free bodies read it from the scene at each step.
    pub fn build(
        bodies: &[RigidBodySection],
        robots: &[RobotSection],
        dir: &Path,
        gravity: Vec3,
    ) -> Result<RigidScene> {
        let mut scene = RigidScene::default();
        let mut names = std::collections::BTreeSet::new();
        for b in bodies {
            if !names.insert(b.name.clone()) {
                return Err(Error::invalid(
                    format!("rigid_body.{}", b.name),
                    "two rigid bodies or robots have this name",
                ));
            }
            b.validate()?;
            let (collider, volume, inertia) = body_shape(b, dir)?;
            let rotation = axis_angle_matrix(b.rotation);
            let position = Vec3::from(b.position);
            if b.fixed {
                scene.statics.push(StaticCollider {
                    name: b.name.clone(),
                    collider,
                    pose: ShapePose {
                        rotation,
                        translation: position,
                    },
                    friction: b.friction,
                });
                continue;
            }
            let mass = b.mass.unwrap_or_else(|| b.density.unwrap_or(0.0) * volume);
            let inertia = match b.inertia {
                Some(i) => Mat3::from_fn(|r, c| i[r][c]),
                None => inertia * mass,
            };
            let body = FreeBody::new(&b.name, mass, inertia)?;
            let q = nalgebra::UnitQuaternion::from_matrix(&rotation);
            let q0 = vec![position.x, position.y, position.z, q.i, q.j, q.k, q.w];
            let (lin, ang) = (b.velocity, b.angular_velocity);
            let v0 = vec![lin[0], lin[1], lin[2], ang[0], ang[1], ang[2]];
            scene.systems.push(RigidSystem {
                name: b.name.clone(),
                dynamics: RigidDynamics::Free(body),
                colliders: vec![JointCollider {
                    name: b.name.clone(),
                    joint: 1,
                    placement: ShapePose::identity(),
                    collider,
                }],
                friction: b.friction,
                input: RigidInput::None,
                q0,
                v0,
            });
        }
        for r in robots {
            if !names.insert(r.name.clone()) {
                return Err(Error::invalid(
                    format!("robot.{}", r.name),
                    "two rigid bodies or robots have this name",
                ));
            }
            r.validate()?;
            let system = robot(r, dir, gravity, &mut scene.warnings)?;
            scene.systems.push(system);
        }
        Ok(scene)
    }
}

/// A `[[robot]]`: its URDF with the base placed, its colliders, input and initial state.
fn robot(
    r: &RobotSection,
    dir: &Path,
    gravity: Vec3,
    warnings: &mut Vec<String>,
) -> Result<RigidSystem> {
    let at = |key: &str| format!("robot.{}.{key}", r.name);
    let path = dir.join(&r.urdf);
    if !path.is_file() {
        return Err(Error::invalid(
            at("urdf"),
            format!("file {} not found", path.display()),
        ));
    }
    let base = match r.base {
        BaseKind::Fixed => Base::Fixed,
        BaseKind::FreeFlyer => Base::FreeFlyer,
    };
    let mut model = load_urdf(&path, base)?;
    model.gravity = crate::rigid::spatial::spatial(gravity, Vec3::zeros());
    let rotation = axis_angle_matrix(r.rotation);
    let position = Vec3::from(r.position);
    let placement = Se3::new(rotation, position);
    if r.base == BaseKind::Fixed {
        // The URDF root is bolted at the base placement: every joint hanging from the world,
        // and every shape or frame carried by the world, moves with it.
        for j in 1..model.njoints() {
            if model.parents[j] == 0 {
                model.placements[j] = placement.mul(&model.placements[j]);
            }
        }
        for g in model.geometries.iter_mut().filter(|g| g.parent_joint == 0) {
            g.placement = placement.mul(&g.placement);
        }
        for f in model.frames.iter_mut().filter(|f| f.parent_joint == 0) {
            f.placement = placement.mul(&f.placement);
        }
    }
    let len = |key: &str, v: &Option<Vec<f64>>, n: usize, what: &str| -> Result<()> {
        match v {
            Some(v) if v.len() != n => Err(Error::invalid(
                at(key),
                format!("has {} entries, the robot has {n} {what}", v.len()),
            )),
            _ => Ok(()),
        }
    };
    len("q", &r.q, model.nq, "configuration coordinates (nq)")?;
    len("v", &r.v, model.nv, "velocity coordinates (nv)")?;
    len("torque", &r.torque, model.nv, "velocity coordinates (nv)")?;
    len("kp", &r.kp, model.nv, "velocity coordinates (nv)")?;
    len("kd", &r.kd, model.nv, "velocity coordinates (nv)")?;
    len(
        "target",
        &r.target,
        model.nq,
        "configuration coordinates (nq)",
    )?;
    for (k, w) in r.target_path.iter().flatten().enumerate() {
        if w.len() != 1 + model.nq {
            return Err(Error::invalid(
                at(&format!("target_path[{k}]")),
                format!(
                    "has {} entries, expected 1 + nq = {} (the time, s, then a configuration)",
                    w.len(),
                    1 + model.nq
                ),
            ));
        }
    }
    if r.torque.is_some() && r.kp.is_some() {
        return Err(Error::invalid(
            at("torque"),
            "give constant torques or a PD (kp, kd, target), not both",
        ));
    }
    let q0 = match &r.q {
        Some(q) => q.clone(),
        None => {
            let mut q = model.neutral();
            if r.base == BaseKind::FreeFlyer {
                let quat = nalgebra::UnitQuaternion::from_matrix(&rotation);
                q[..7].copy_from_slice(&[
                    position.x, position.y, position.z, quat.i, quat.j, quat.k, quat.w,
                ]);
            }
            q
        }
    };
    let mut outside = Vec::new();
    for j in &model.joints[1..] {
        if !matches!(
            j.kind,
            crate::rigid::JointKind::Revolute { .. } | crate::rigid::JointKind::Prismatic { .. }
        ) {
            continue;
        }
        let (lo, hi, x) = (
            model.limits.lower[j.idx_q],
            model.limits.upper[j.idx_q],
            q0[j.idx_q],
        );
        if x < lo || x > hi {
            outside.push(format!("{} at {x} (limits [{lo}, {hi}])", j.name));
        }
    }
    if let Some(first) = outside.first() {
        warnings.push(format!(
            "robot.{}.q: {} joint(s) start outside their limits (first: {first}); the limits push them back in",
            r.name,
            outside.len()
        ));
    }
    let v0 = r.v.clone().unwrap_or_else(|| vec![0.0; model.nv]);
    let path: Vec<(f64, Vec<f64>)> = r
        .target_path
        .iter()
        .flatten()
        .map(|w| (w[0], w[1..].to_vec()))
        .collect();
    let target = r
        .target
        .clone()
        .or_else(|| path.last().map(|(_, q)| q.clone()));
    let input = match (&r.torque, &r.kp, &r.kd, target) {
        (Some(t), _, _, _) => RigidInput::Torque(t.clone()),
        (None, Some(kp), Some(kd), Some(target)) => RigidInput::Pd {
            kp: kp.clone(),
            kd: kd.clone(),
            target,
            path,
        },
        _ => RigidInput::None,
    };
    let mut colliders = Vec::new();
    let mut missing: Vec<(String, String)> = Vec::new();
    for g in &model.geometries {
        let shape = match &g.shape {
            Shape::Box { size } => ConvexShape::Cuboid {
                half_extents: size / 2.0,
            },
            Shape::Sphere { radius } => ConvexShape::Ball { radius: *radius },
            Shape::Cylinder { radius, length } => ConvexShape::Cylinder {
                radius: *radius,
                half_length: length / 2.0,
            },
            Shape::Capsule { radius, length } => ConvexShape::Capsule {
                radius: *radius,
                half_length: length / 2.0,
            },
            Shape::Mesh {
                uri, path, scale, ..
            } => match path {
                Some(p) => {
                    let surface = read_surface(p)?;
                    ConvexShape::Hull {
                        points: surface
                            .vertices
                            .iter()
                            .map(|v| v.component_mul(scale))
                            .collect(),
                    }
                }
                None => {
                    missing.push((uri.clone(), g.link.clone()));
                    continue;
                }
            },
        };
        let collider = Collider::new(shape).map_err(|e| match e {
            Error::Invalid { what, message } => Error::invalid(
                format!("robot.{}: collision shape {} ({what})", r.name, g.name),
                message,
            ),
            other => other,
        })?;
        colliders.push(JointCollider {
            name: g.link.clone(),
            joint: g.parent_joint,
            placement: ShapePose {
                rotation: g.placement.rot,
                translation: g.placement.trans,
            },
            collider,
        });
    }
    if let Some((uri, link)) = missing.first() {
        warnings.push(format!(
            "robot.{}: {} collision mesh(es) not found beside the URDF (first: {uri} of link {link}); those shapes are left out of contact",
            r.name,
            missing.len()
        ));
    }
    Ok(RigidSystem {
        name: r.name.clone(),
        dynamics: RigidDynamics::Robot(Box::new(model)),
        colliders,
        friction: r.friction,
        input,
        q0,
        v0,
    })
}

/// Where one side of a contact sits: system and joint (whose body carries the point).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RigidSide {
    /// Index of the system in the scene's rigid part.
    pub system: usize,
    /// Its joint (0: the world, for a fixed robot's base).
    pub joint: usize,
}
