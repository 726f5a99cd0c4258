//! Differentiable parameters of a scene and their names (docs/derivatives.md):
//! `young_modulus:BODY`, `poisson_ratio:BODY`, `actuator:NAME`, `tau:ROBOT[k]`,
//! `target:ROBOT[k]`, `friction:OBSTACLE`, `mass:BODY`, `rayleigh_mass:BODY`,
//! `rayleigh_stiffness:BODY`, `density:BODY`.

use crate::actuator::{Actuator, ActuatorKind, Drive};
use crate::error::{Error, Result};
use crate::fem::{MassDampingParameter, MassKind, MaterialParameter};
use crate::material::Material;
use crate::scene::{RigidDynamics, RigidInput, Scene};

use super::rigid_parameter::{parse_rigid_parameter, pd_gain};
use super::rigid_target::{shift_target, target_coordinate};

/// One scalar parameter of a scene the step can be differentiated with respect to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Parameter {
    /// Young's modulus (Pa) or Poisson's ratio of soft body `body`.
    Material {
        /// Index of the soft body in the scene.
        body: usize,
        /// Which material parameter.
        parameter: MaterialParameter,
    },
    /// The input of an actuator in its own unit (`scene::BodyActuation::input`), held
    /// constant over a run: λ_a of a force-driven actuator (N for a cable, Pa for a cavity,
    /// N·m for a servo), or the angle target (rad, from rest) of an angle-driven (pinned)
    /// servo, which the horn follows at most `max_angle_step` per step
    /// (`scene::PrescribedDerivative` for the one-sided derivative at that limit). A
    /// displacement-driven cable's shortening (m) and a volume-driven cavity's volume change
    /// (m³) are read and set too (their drive kept), but have no derivatives
    /// (`diff::check_differentiable` refuses them).
    Actuator {
        /// Index of the soft body in the scene.
        body: usize,
        /// Index of the actuator in the body's actuators.
        index: usize,
    },
    /// A robot's constant input on one velocity coordinate (N·m for a revolute joint, N for
    /// a prismatic one; `tau:ROBOT[k]`), of a robot driven by constant inputs (`input =
    /// "torque"`, or none).
    RigidInput {
        /// Index of the rigid system in the scene's rigid part.
        system: usize,
        /// Its velocity coordinate.
        dof: usize,
    },
    /// A constant offset (rad for a revolute joint, m for a prismatic one) added over the run
    /// to the target of a PD-driven robot on one velocity coordinate (`target:ROBOT[k]`):
    /// it moves the input before the effort clamp by kp_k per unit
    /// ([`Parameter::input_gain`]), so it enters the step as `tau:ROBOT[k]` scaled by kp_k.
    RigidTarget {
        /// Index of the rigid system in the scene's rigid part.
        system: usize,
        /// Its velocity coordinate.
        dof: usize,
    },
    /// The Coulomb coefficient μ of an obstacle (`friction:OBSTACLE`, dimensionless), for
    /// every contact that uses it: soft nodes against the obstacle, and rigid bodies without
    /// their own `friction` against it (`scene::GroupNcp::friction_obstacle`). To first
    /// order μ moves sliding contacts only (`contact::NcpDerivative::friction_tangent`).
    Friction {
        /// Index of the obstacle in the scene's contact model.
        obstacle: usize,
    },
    /// The mass m of a free rigid body (`mass:BODY`, kg), its inertia scaled with it at a
    /// fixed shape: the spatial inertia is `m M̂`, M̂ the unit-mass one
    /// (`rigid::FreeBody::with_mass`). Gravity's acceleration does not change with m; the
    /// body's velocity update moves by `−h M⁻¹ Q / m` with its contact force Q held, and
    /// the NCP (whose Delassus matrix holds M⁻¹) answers that change.
    RigidMass {
        /// Index of the free body in the scene's rigid systems.
        system: usize,
    },
    /// A soft body's Rayleigh mass coefficient α (1/s, `rayleigh_mass:BODY`), Rayleigh
    /// stiffness coefficient β (s, `rayleigh_stiffness:BODY`) or density ρ (kg/m³,
    /// `density:BODY`, lumped or consistent mass only). They enter the step
    /// A v⁺ = M v + h (m g + f + f_a) + h H_cᵀλ_c, A = (1 + hα) M + (hβ + h²) K̂, through A,
    /// and ρ through M and the weights m g too; the right-hand sides of A dv⁺ per unit of each
    /// are in `diff::step_derivative::mass_damping`. [`Parameter::set`] takes α ≥ 0, β ≥ 0,
    /// ρ > 0 (finite; else an error naming the parameter) and rebuilds the body's masses for
    /// ρ (`fem::SoftBody::set_density`).
    MassDamping {
        /// Index of the soft body in the scene.
        body: usize,
        /// Which of α, β, ρ.
        parameter: MassDampingParameter,
    },
}

impl Parameter {
    /// [`Parameter::parse`], except that `tau:ROBOT` and `target:ROBOT` without a component
    /// stand for every coordinate of the robot, in order (`tau:ROBOT[0]`, `tau:ROBOT[1]`, …).
    /// Errors as [`Parameter::parse`] for each.
    pub fn parse_each(scene: &Scene, name: &str) -> Result<Vec<Parameter>> {
        let whole_robot =
            (name.starts_with("tau:") || name.starts_with("target:")) && !name.ends_with(']');
        if whole_robot && let Some(list) = parse_rigid_parameter(scene, name)? {
            return list
                .iter()
                .map(|p| Parameter::parse(scene, &p.name))
                .collect();
        }
        Ok(vec![Parameter::parse(scene, name)?])
    }

    /// Parses `young_modulus:BODY`, `poisson_ratio:BODY`, `actuator:NAME`, `tau:ROBOT[k]`,
    /// `target:ROBOT[k]`, `friction:OBSTACLE`, `mass:BODY`, `rayleigh_mass:BODY`,
    /// `rayleigh_stiffness:BODY` or `density:BODY` against `scene`. Errors name the unknown
    /// kind, body or actuator and list the known ones; `density:` of a body with
    /// `mass = "uniform"` is an error naming the body.
    pub fn parse(scene: &Scene, name: &str) -> Result<Parameter> {
        let what = format!("parameter `{name}`");
        let Some((kind, target)) = name.split_once(':') else {
            return Err(Error::invalid(
                what,
                "expected `young_modulus:BODY`, `poisson_ratio:BODY`, `actuator:NAME`, `tau:ROBOT[k]`, `target:ROBOT[k]`, `friction:OBSTACLE`, `mass:BODY`, `rayleigh_mass:BODY`, `rayleigh_stiffness:BODY` or `density:BODY`",
            ));
        };
        let body_index = |body: &str| {
            scene
                .bodies
                .iter()
                .position(|b| b.name() == body)
                .ok_or_else(|| {
                    let known: Vec<&str> = scene.bodies.iter().map(|b| b.name()).collect();
                    Error::invalid(
                        &what,
                        format!("the scene has no soft body `{body}` (it has {known:?})"),
                    )
                })
        };
        match kind {
            "young_modulus" | "poisson_ratio" => Ok(Parameter::Material {
                body: body_index(target)?,
                parameter: if kind == "young_modulus" {
                    MaterialParameter::YoungModulus
                } else {
                    MaterialParameter::PoissonRatio
                },
            }),
            "actuator" => {
                let mut found = Vec::new();
                for b in 0..scene.bodies.len() {
                    for (index, a) in scene.body_actuation(b).actuators.iter().enumerate() {
                        if a.name == target {
                            found.push(Parameter::Actuator { body: b, index });
                        }
                    }
                }
                match found.as_slice() {
                    [p] => Ok(*p),
                    [] => {
                        let known: Vec<&str> = (0..scene.bodies.len())
                            .flat_map(|b| scene.body_actuation(b).actuators.iter())
                            .map(|a| a.name.as_str())
                            .collect();
                        Err(Error::invalid(
                            what,
                            format!("the scene has no actuator `{target}` (it has {known:?})"),
                        ))
                    }
                    _ => Err(Error::invalid(
                        what,
                        format!("several bodies have an actuator `{target}`"),
                    )),
                }
            }
            "tau" | "target" => parse_rigid_input(scene, name, &what),
            "friction" => {
                let contact = &scene.contact;
                (0..contact.obstacles.len())
                    .find(|&o| contact.obstacle_name(o) == target)
                    .map(|obstacle| Parameter::Friction { obstacle })
                    .ok_or_else(|| {
                        let known: Vec<String> = (0..contact.obstacles.len())
                            .map(|o| contact.obstacle_name(o))
                            .collect();
                        Error::invalid(
                            what,
                            format!("the scene has no obstacle `{target}` (it has {known:?})"),
                        )
                    })
            }
            "mass" => parse_mass(scene, target, &what),
            "rayleigh_mass" | "rayleigh_stiffness" | "density" => {
                parse_mass_damping(scene, kind, body_index(target)?, &what)
            }
            other => Err(Error::invalid(
                what,
                format!(
                    "unknown kind `{other}`: expected `young_modulus`, `poisson_ratio`, `actuator`, `tau`, `target`, `friction`, `mass`, `rayleigh_mass`, `rayleigh_stiffness` or `density`"
                ),
            )),
        }
    }

    /// The parameter's name, as [`Parameter::parse`] reads it.
    pub fn name(&self, scene: &Scene) -> String {
        match *self {
            Parameter::Material { body, parameter } => {
                format!("{}:{}", parameter.name(), scene.bodies[body].name())
            }
            Parameter::Actuator { body, index } => {
                format!(
                    "actuator:{}",
                    scene.body_actuation(body).actuators[index].name
                )
            }
            Parameter::RigidInput { system, dof } => {
                format!("tau:{}[{dof}]", scene.rigid.systems[system].name)
            }
            Parameter::RigidTarget { system, dof } => {
                format!("target:{}[{dof}]", scene.rigid.systems[system].name)
            }
            Parameter::Friction { obstacle } => {
                format!("friction:{}", scene.contact.obstacle_name(obstacle))
            }
            Parameter::RigidMass { system } => format!("mass:{}", scene.rigid.systems[system].name),
            Parameter::MassDamping { body, parameter } => {
                format!("{}:{}", parameter.name(), scene.bodies[body].name())
            }
        }
    }

    /// The soft body the parameter belongs to (`None` for a rigid system's input or mass and
    /// an obstacle's friction).
    pub fn body(&self) -> Option<usize> {
        match *self {
            Parameter::Material { body, .. }
            | Parameter::Actuator { body, .. }
            | Parameter::MassDamping { body, .. } => Some(body),
            Parameter::RigidInput { .. }
            | Parameter::RigidTarget { .. }
            | Parameter::Friction { .. }
            | Parameter::RigidMass { .. } => None,
        }
    }

    /// The change of a robot's input before the effort clamp per unit of the parameter: 1 for
    /// `tau:ROBOT[k]`, kp_k (N·m/rad, N/m) for `target:ROBOT[k]`, 0 for the others.
    pub fn input_gain(&self, scene: &Scene) -> f64 {
        match *self {
            Parameter::RigidInput { .. } => 1.0,
            Parameter::RigidTarget { system, dof } => {
                pd_gain(&scene.rigid.systems[system].input, dof)
            }
            _ => 0.0,
        }
    }

    /// The parameter's current value in `scene` (an actuator's input in its unit: a given
    /// force, an angle-driven servo's angle target, a displacement-driven cable's shortening
    /// (m), a volume-driven cavity's volume change (m³); `scene::BodyActuation::input`).
    pub fn value(&self, scene: &Scene) -> f64 {
        match *self {
            Parameter::Material { body, parameter } => {
                let m = scene.bodies[body].material();
                match parameter {
                    MaterialParameter::YoungModulus => m.young_modulus(),
                    MaterialParameter::PoissonRatio => m.poisson_ratio(),
                }
            }
            Parameter::Actuator { body, index } => scene.body_actuation(body).input(index),
            Parameter::RigidInput { system, dof } => match &scene.rigid.systems[system].input {
                RigidInput::Torque(t) => t[dof],
                _ => 0.0,
            },
            Parameter::RigidTarget { system, dof } => target_coordinate(scene, system, dof),
            Parameter::Friction { obstacle } => scene.contact.friction[obstacle],
            Parameter::RigidMass { system } => match &scene.rigid.systems[system].dynamics {
                RigidDynamics::Free(body) => body.mass,
                RigidDynamics::Robot(_) => unreachable!("parse admits free bodies only"),
            },
            Parameter::MassDamping { body, parameter } => parameter.value(&scene.bodies[body]),
        }
    }

    /// Sets the parameter in `scene`. An actuator keeps its kind of drive and takes `value`
    /// as its input in its unit (`scene::BodyActuation::set_input`: λ of a force-driven one, a
    /// cable's shortening in m, a cavity's volume change in m³, a servo's angle in rad;
    /// not clamped to its bounds). Errors on an invalid material value (E ≤ 0, ν outside
    /// (−1, 0.5)) naming it, or a non-finite actuator input.
    pub fn set(&self, scene: &mut Scene, value: f64) -> Result<()> {
        match *self {
            Parameter::Material { body, parameter } => {
                let m = *scene.bodies[body].material();
                let (e, nu) = match parameter {
                    MaterialParameter::YoungModulus => (value, m.poisson_ratio()),
                    MaterialParameter::PoissonRatio => (m.young_modulus(), value),
                };
                let what = format!("soft_body.{}", scene.bodies[body].name());
                let material = Material::new(m.law(), e, nu).map_err(|err| match err {
                    Error::Invalid {
                        what: item,
                        message,
                    } => Error::invalid(format!("{what}.{item}"), message),
                    other => other,
                })?;
                scene.bodies[body].set_material(material);
                Ok(())
            }
            Parameter::Actuator { body, index } => {
                if !value.is_finite() {
                    return Err(Error::invalid(
                        format!("actuator {}", self.name(scene)),
                        format!("input {value} is not finite"),
                    ));
                }
                scene.actuation[body].set_input(index, value);
                Ok(())
            }
            Parameter::RigidInput { system, dof } => {
                if !value.is_finite() {
                    return Err(Error::invalid(
                        self.name(scene),
                        format!("input {value} is not finite"),
                    ));
                }
                let sys = &mut scene.rigid.systems[system];
                let nv = sys.nv();
                if let RigidInput::None = sys.input {
                    sys.input = RigidInput::Torque(vec![0.0; nv]);
                }
                match &mut sys.input {
                    RigidInput::Torque(t) => t[dof] = value,
                    _ => unreachable!("parse admits robots driven by constant inputs only"),
                }
                Ok(())
            }
            Parameter::RigidTarget { system, dof } => {
                if !value.is_finite() {
                    return Err(Error::invalid(
                        self.name(scene),
                        format!("target {value} is not finite"),
                    ));
                }
                let shift = value - target_coordinate(scene, system, dof);
                shift_target(scene, system, dof, shift);
                Ok(())
            }
            Parameter::Friction { obstacle } => {
                if !(value >= 0.0 && value.is_finite()) {
                    return Err(Error::invalid(
                        self.name(scene),
                        format!("must be finite and non-negative, got {value}"),
                    ));
                }
                scene.contact.friction[obstacle] = value;
                Ok(())
            }
            Parameter::RigidMass { system } => {
                let sys = &mut scene.rigid.systems[system];
                match &mut sys.dynamics {
                    RigidDynamics::Free(body) => *body = body.with_mass(&sys.name, value)?,
                    RigidDynamics::Robot(_) => unreachable!("parse admits free bodies only"),
                }
                Ok(())
            }
            Parameter::MassDamping { body, parameter } => {
                set_mass_damping(self, scene, body, parameter, value)
            }
        }
    }
}

/// `tau:ROBOT[k]` or `target:ROBOT[k]` (module doc), resolved by [`parse_rigid_parameter`]:
/// one component of a robot driven by constant inputs (or none) for `tau:`, of a PD-driven
/// robot for `target:`. Errors name the robot, the component, or the robot's other input.
fn parse_rigid_input(scene: &Scene, name: &str, what: &str) -> Result<Parameter> {
    let list = parse_rigid_parameter(scene, name)?.expect("a `tau:`/`target:` name is rigid");
    let target = name.starts_with("target:");
    let [one] = list.as_slice() else {
        let kind = if target { "target" } else { "tau" };
        return Err(Error::invalid(
            what,
            format!("names every coordinate of the robot: give one, `{kind}:ROBOT[k]`"),
        ));
    };
    let (system, dof) = one.system_coordinate(scene);
    if target {
        return Ok(Parameter::RigidTarget { system, dof });
    }
    if let RigidInput::Pd { .. } = scene.rigid.systems[system].input {
        return Err(Error::invalid(
            what,
            format!(
                "robot `{}` is driven by a PD (kp, kd, target): its input follows its state; `tau` is a parameter of robots driven by constant inputs (`torque = [...]`), `target:` of PD-driven ones",
                scene.rigid.systems[system].name
            ),
        ));
    }
    Ok(Parameter::RigidInput { system, dof })
}

/// `mass:BODY` (module doc): a free rigid body's mass. Errors name a robot, a fixed rigid body
/// or an unknown one.
fn parse_mass(scene: &Scene, target: &str, what: &str) -> Result<Parameter> {
    let rigid = &scene.rigid;
    if let Some(system) = rigid.systems.iter().position(|s| s.name == target) {
        return match rigid.systems[system].dynamics {
            RigidDynamics::Free(_) => Ok(Parameter::RigidMass { system }),
            RigidDynamics::Robot(_) => Err(Error::invalid(
                what,
                format!(
                    "`{target}` is a robot: `mass:` names a free rigid body (a robot's link masses are not parameters)"
                ),
            )),
        };
    }
    if rigid.statics.iter().any(|s| s.name == target) {
        return Err(Error::invalid(
            what,
            format!(
                "`{target}` is a fixed rigid body: it has no mass to differentiate with respect to"
            ),
        ));
    }
    let known: Vec<&str> = rigid
        .systems
        .iter()
        .filter(|s| matches!(s.dynamics, RigidDynamics::Free(_)))
        .map(|s| s.name.as_str())
        .collect();
    Err(Error::invalid(
        what,
        format!("the scene has no free rigid body `{target}` (it has {known:?})"),
    ))
}

/// `rayleigh_mass:BODY`, `rayleigh_stiffness:BODY` or `density:BODY` of soft body `body`
/// ([`Parameter::MassDamping`]). `density:` of a body with `mass = "uniform"` is an error
/// naming the body: its masses are its `total_mass` spread over its nodes, which no density
/// enters.
fn parse_mass_damping(scene: &Scene, kind: &str, body: usize, what: &str) -> Result<Parameter> {
    let parameter = MassDampingParameter::from_name(kind).expect("a mass or damping kind");
    if parameter == MassDampingParameter::Density {
        uniform_mass_error(scene, body, what)?;
    }
    Ok(Parameter::MassDamping { body, parameter })
}

/// An error naming soft body `body` when its mass is uniform (`density:` is then no
/// parameter, [`parse_mass_damping`]).
fn uniform_mass_error(scene: &Scene, body: usize, what: &str) -> Result<()> {
    let b = &scene.bodies[body];
    if b.options().mass != MassKind::Uniform {
        return Ok(());
    }
    Err(Error::invalid(
        what,
        format!(
            "soft body `{}` has mass = \"uniform\": its nodes' masses are its total_mass (kg) spread evenly over them, which no density enters; `density:` is a parameter of lumped and consistent masses",
            b.name()
        ),
    ))
}

/// Sets α, β or ρ of soft body `body` ([`Parameter::set`] of [`Parameter::MassDamping`]):
/// α ≥ 0, β ≥ 0, ρ > 0, finite, else an error naming the parameter; ρ rebuilds the body's
/// masses (`SoftBody::set_density`).
fn set_mass_damping(
    p: &Parameter,
    scene: &mut Scene,
    body: usize,
    parameter: MassDampingParameter,
    value: f64,
) -> Result<()> {
    let name = p.name(scene);
    if parameter == MassDampingParameter::Density {
        uniform_mass_error(scene, body, &format!("parameter `{name}`"))?;
    }
    if !parameter.admits(value) {
        return Err(Error::invalid(
            name,
            format!("must be {}, got {value}", parameter.range_text()),
        ));
    }
    scene.bodies[body].set_mass_damping(parameter, value)
}

/// Whether `a` is an angle-driven servo (its horn pinned, `scene::step::free::prescribed`).
fn is_angle_driven(a: &Actuator) -> bool {
    matches!(a.drive, Drive::Target(_)) && matches!(a.kind, ActuatorKind::Servo(_))
}

/// Every parameter of `scene`: per body, E and ν, then each force-driven actuator and
/// angle-driven servo. The mass and damping parameters ([`Parameter::MassDamping`]: α, β,
/// ρ) are not in the list; name them (`rayleigh_mass:BODY`, …) where they are wanted.
pub fn every_parameter(scene: &Scene) -> Vec<Parameter> {
    let mut out = Vec::new();
    for body in 0..scene.bodies.len() {
        for parameter in crate::fem::MaterialParameter::ALL {
            out.push(Parameter::Material { body, parameter });
        }
        for (index, a) in scene.body_actuation(body).actuators.iter().enumerate() {
            if matches!(a.drive, Drive::Force(_)) || is_angle_driven(a) {
                out.push(Parameter::Actuator { body, index });
            }
        }
    }
    out
}
