//! Building a body's actuators and effectors from its scene-file section (docs/design.md):
//! cable points, effectors and cavity-surface vertices embedded in the mesh (with
//! extrapolated weights just outside it, `actuator::EmbeddedPoint`), cavities from a triangle
//! group of the mesh or from their own closed surface file, servos from a group or a box.

use std::path::Path;

use crate::actuator::{Actuator, ActuatorKind, Cable, Cavity, Drive, Effector, Servo};
use crate::error::{Error, Result};
use crate::math::Vec3;
use crate::mesh::{Closure, Mesh, TriangleSurface, read_surface};

use super::actuation::{BodyActuation, NO_VALUE_BOUNDS, limit};
use super::actuator_input::{ANGLE_BOUNDS, ActuatorInput, CommandMap};
use super::pinned_servo::PinnedServo;
use crate::scene::file::SoftBodySection;
use crate::scene::file::embedded_surface::{
    BodyEmbedding, PlacedSurfaceFile, in_key, read_placed_surface,
};

impl BodyActuation {
    /// Builds the actuators and effectors of `section` on `mesh` (m, after scaling and
    /// placement); `what` is `soft_body.NAME`, `dir` the folder relative paths start at (the
    /// scene file's). Errors name the key: a point outside the mesh (beyond the body's
    /// `embed_tolerance`), an unknown group, a group without triangles, a cavity surface that
    /// is not closed, a servo that drives no node off its axis.
    pub fn build(
        section: &SoftBodySection,
        mesh: &Mesh,
        what: &str,
        dir: &Path,
    ) -> Result<BodyActuation> {
        let embedding = BodyEmbedding::new(section, mesh);
        let locate = |p: [f64; 3], key: String| embedding.locate(Vec3::from(p), key);
        let mut actuators = Vec::new();
        let mut inputs = Vec::new();
        let mut pinned = Vec::new();
        for c in &section.cable {
            let at = format!("{what}.cable.{}", c.name);
            let points = c
                .points
                .iter()
                .enumerate()
                .map(|(i, p)| locate(*p, format!("{at}.points[{i}]")))
                .collect::<Result<Vec<_>>>()?;
            let cable = Cable {
                points,
                pull_point: c.pull_point.map(Vec3::from),
            };
            let rest = cable.value(mesh.positions());
            let drive = match (c.force, c.displacement) {
                (Some(f), None) => Drive::Force(f),
                (None, Some(d)) => Drive::Target(rest - d),
                _ => {
                    return Err(Error::invalid(
                        &at,
                        "give exactly one of `force` and `displacement`",
                    ));
                }
            };
            // Pull = rest − L: pull ≤ max_displacement ⇔ L ≥ rest − max_displacement.
            let value_bounds = [
                c.max_displacement.map_or(f64::NEG_INFINITY, |d| rest - d),
                c.min_displacement.map_or(f64::INFINITY, |d| rest - d),
            ];
            actuators.push(Actuator {
                name: c.name.clone(),
                kind: ActuatorKind::Cable(cable),
                drive,
                bounds: [
                    c.min_force.unwrap_or(0.0),
                    c.max_force.unwrap_or(f64::INFINITY),
                ],
                value_bounds,
                max_value_step: limit(c.max_displacement_step),
                max_force_step: limit(c.max_force_step),
            });
            inputs.push(ActuatorInput {
                command: CommandMap {
                    gain: c.gain,
                    offset: c.offset,
                    time_constant: c.time_constant,
                },
                rest,
                target_bounds: [
                    c.min_displacement.unwrap_or(f64::NEG_INFINITY),
                    c.max_displacement.unwrap_or(f64::INFINITY),
                ],
            });
        }
        for p in &section.pneumatic {
            let at = format!("{what}.pneumatic.{}", p.name);
            let cavity = match (&p.group, &p.surface) {
                (Some(group), None) => group_cavity(mesh, group, &format!("{at}.group"))?,
                (None, Some(file)) => {
                    let key = format!("{at}.surface");
                    let surface = read_cavity_surface(section, dir, file, &key)?;
                    let vertices = surface
                        .vertices
                        .iter()
                        .enumerate()
                        .map(|(k, v)| embedding.locate(*v, format!("{key} vertex {k}")))
                        .collect::<Result<Vec<_>>>()?;
                    Cavity::embedded(vertices, surface.triangles)
                }
                _ => {
                    return Err(Error::invalid(
                        &at,
                        "give exactly one of `group` and `surface`",
                    ));
                }
            };
            let at = match &p.group {
                Some(_) => format!("{at}.group"),
                None => format!("{at}.surface"),
            };
            let rest = cavity.value(mesh.positions());
            if !(rest > 0.0) {
                return Err(Error::invalid(
                    &at,
                    format!(
                        "encloses a volume {rest:e} m³ ≤ 0: its triangles must be closed and oriented out of the cavity"
                    ),
                ));
            }
            let drive = match (p.pressure, p.volume_change) {
                (Some(f), None) => Drive::Force(f),
                (None, Some(d)) => Drive::Target(rest + d),
                _ => {
                    return Err(Error::invalid(
                        format!("{what}.pneumatic.{}", p.name),
                        "give exactly one of `pressure` and `volume_change`",
                    ));
                }
            };
            actuators.push(Actuator {
                name: p.name.clone(),
                kind: ActuatorKind::Pneumatic(cavity),
                drive,
                bounds: [
                    p.min_pressure.unwrap_or(f64::NEG_INFINITY),
                    p.max_pressure.unwrap_or(f64::INFINITY),
                ],
                max_value_step: limit(p.max_volume_step),
                max_force_step: limit(p.max_pressure_step),
                value_bounds: NO_VALUE_BOUNDS,
            });
            inputs.push(ActuatorInput {
                command: CommandMap {
                    gain: p.gain,
                    offset: p.offset,
                    time_constant: p.time_constant,
                },
                rest,
                target_bounds: NO_VALUE_BOUNDS,
            });
        }
        for s in &section.servo {
            let at = format!("{what}.servo.{}", s.name);
            let mut nodes = Vec::new();
            if let Some(g) = &s.group {
                nodes = mesh.group_nodes(g).ok_or_else(|| {
                    Error::invalid(
                        format!("{at}.group"),
                        format!("the mesh has no group `{g}`"),
                    )
                })?;
            }
            if let Some([lo, hi]) = s.node_box {
                nodes.extend((0..mesh.node_count()).filter(|&n| {
                    let p = mesh.positions()[n];
                    (0..3).all(|a| p[a] >= lo[a] && p[a] <= hi[a])
                }));
                nodes.sort_unstable();
                nodes.dedup();
            }
            let servo = Servo::new(
                Vec3::from(s.axis_point),
                Vec3::from(s.axis_direction),
                &nodes,
                mesh.positions(),
            )
            .ok_or_else(|| {
                Error::invalid(
                    &at,
                    format!(
                        "drives no node off its axis ({} nodes selected)",
                        nodes.len()
                    ),
                )
            })?;
            let drive = match (s.torque, s.angle) {
                (Some(f), None) => Drive::Force(f),
                (None, Some(a)) => Drive::Target(a),
                _ => {
                    return Err(Error::invalid(
                        &at,
                        "give exactly one of `angle` and `torque`",
                    ));
                }
            };
            let m = s.max_torque.unwrap_or(f64::INFINITY);
            if let Drive::Target(_) = drive {
                pinned.push(PinnedServo {
                    actuator: actuators.len(),
                    nodes: nodes.clone(),
                });
            }
            actuators.push(Actuator {
                name: s.name.clone(),
                kind: ActuatorKind::Servo(servo),
                drive,
                bounds: [-m, m],
                max_value_step: limit(s.max_angle_step),
                max_force_step: limit(s.max_torque_step),
                value_bounds: NO_VALUE_BOUNDS,
            });
            inputs.push(ActuatorInput {
                command: CommandMap {
                    gain: s.gain,
                    offset: s.offset,
                    time_constant: s.time_constant,
                },
                rest: 0.0,
                target_bounds: ANGLE_BOUNDS,
            });
        }
        let effectors = section
            .effector
            .iter()
            .map(|e| {
                Ok(Effector {
                    name: e.name.clone(),
                    point: locate(e.point, format!("{what}.effector.{}.point", e.name))?,
                })
            })
            .collect::<Result<_>>()?;
        let mut warnings = Vec::new();
        if let Some(o) = embedding.outside_to_warn() {
            warnings.push(format!(
                "{}: {} embedded point(s) of {what} {}",
                o.farthest,
                o.count,
                o.consequence("this one")
            ));
        }
        Ok(BodyActuation {
            actuators,
            inputs,
            effectors,
            pinned,
            warnings,
        })
    }
}

/// The cavity on the triangle group `group` of `mesh`; `at` names the key in errors.
fn group_cavity(mesh: &Mesh, group: &str, at: &str) -> Result<Cavity> {
    let triangles = mesh.groups().triangles.get(group).ok_or_else(|| {
        let known: Vec<&String> = mesh.groups().triangles.keys().collect();
        Error::invalid(
            at,
            format!("the mesh has no triangle group `{group}` (it has {known:?})"),
        )
    })?;
    Ok(Cavity::on_nodes(
        triangles.iter().map(|&t| mesh.triangles()[t]).collect(),
    ))
}

/// Reads a cavity's surface file (`.stl` / `.obj`, `file` relative to `dir`) and places it as
/// the body's mesh is placed (`embedded_surface::read_placed_surface`): m, in the world
/// frame. It must be closed and consistently oriented; it is turned, if needed, so its normals
/// point out of the cavity (a positive enclosed volume). `key` names the scene key in errors.
fn read_cavity_surface(
    section: &SoftBodySection,
    dir: &Path,
    file: &Path,
    key: &str,
) -> Result<TriangleSurface> {
    let PlacedSurfaceFile {
        path,
        surface: mut placed,
    } = read_placed_surface(section, dir, file, key, |p| read_surface(p))?;
    let name = path.display().to_string();
    if placed.closure(&name).map_err(in_key(key))? != Closure::Closed {
        return Err(Error::invalid(
            key,
            format!(
                "{name}: the cavity surface is not closed (an edge belongs to one triangle only)"
            ),
        ));
    }
    if placed.signed_volume() < 0.0 {
        placed.flip();
    }
    Ok(placed)
}
