//! The actuation stage of the step (DESIGN.md §1): the actuators and effectors of each body
//! built from the scene file, the force-driven actuators' h f_a added to the right-hand side,
//! and the displacement-driven actuators' λ solved inside the same step.
//!
//! With the step's factorisation A, Δv = A⁻¹(b + h Σⱼ Gⱼ λⱼ), Gⱼ = σⱼ Hⱼᵀ (the nodal force of a
//! unit λⱼ, `actuator::kind`). A target-driven actuator i asks δᵢ(x⁺) = tᵢ to first order,
//! δᵢ(x) + h Hᵢ v⁺ = tᵢ, i.e. with Δv₀ = A⁻¹b:
//!
//! ```text
//! Σⱼ h² σᵢσⱼ (Hᵢ A⁻¹ Hⱼᵀ) λⱼ = σᵢ (tᵢ − δᵢ(x) − h Hᵢ (v + Δv₀)),   λ ∈ [lo, hi]
//! ```
//!
//! a small symmetric positive semi-definite system built from one multi-right-hand-side solve
//! A⁻¹[G₁ … G_k], solved with the bounds by `actuator::bounded_solve`. Actuator forces use H at
//! the start of the step (xₙ), as SOFA's constraint forces do; ∂(Hᵀλ)/∂x is not in A.

use faer::dyn_stack::{MemBuffer, MemStack};

use crate::actuator::{
    Actuator, ActuatorKind, Cable, Cavity, Drive, Effector, EmbeddedPoint, Servo, bounded_solve,
};
use crate::error::{Error, Result};
use crate::linalg::{DofMap, NumericFactor};
use crate::math::{DMat, DVec, Vec3};
use crate::mesh::Mesh;

use super::file::SoftBodySection;

/// Points farther outside the mesh than this fraction of its bounding-box diagonal are errors.
pub const EMBEDDING_TOLERANCE: f64 = 1e-3;

/// The actuators and effectors of one soft body (model data, immutable).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BodyActuation {
    /// Cables, then cavities, then servos, each in file order.
    pub actuators: Vec<Actuator>,
    /// Effectors, in file order.
    pub effectors: Vec<Effector>,
}

impl BodyActuation {
    /// Builds the actuators and effectors of `section` on `mesh` (m, after scaling); `what`
    /// is `soft_body.NAME`. Errors name the key: a point outside the mesh, an unknown group,
    /// a group without triangles, a servo that drives no node off its axis.
    pub fn build(section: &SoftBodySection, mesh: &Mesh, what: &str) -> Result<BodyActuation> {
        let [lo, hi] = mesh.bounding_box();
        let tol = EMBEDDING_TOLERANCE * (hi - lo).norm();
        let locate =
            |p: [f64; 3], key: String| EmbeddedPoint::locate(mesh, Vec3::from(p), tol, &key);
        let mut actuators = Vec::new();
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
            actuators.push(Actuator {
                name: c.name.clone(),
                kind: ActuatorKind::Cable(cable),
                drive,
                bounds: [0.0, c.max_force.unwrap_or(f64::INFINITY)],
            });
        }
        for p in &section.pneumatic {
            let at = format!("{what}.pneumatic.{}.group", p.name);
            let triangles = mesh.groups().triangles.get(&p.group).ok_or_else(|| {
                let known: Vec<&String> = mesh.groups().triangles.keys().collect();
                Error::invalid(
                    &at,
                    format!(
                        "the mesh has no triangle group `{}` (it has {known:?})",
                        p.group
                    ),
                )
            })?;
            let cavity = Cavity {
                triangles: triangles.iter().map(|&t| mesh.triangles()[t]).collect(),
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
            actuators.push(Actuator {
                name: s.name.clone(),
                kind: ActuatorKind::Servo(servo),
                drive,
                bounds: [-m, m],
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
        Ok(BodyActuation {
            actuators,
            effectors,
        })
    }

    /// Whether an actuator is target-driven (its λ is solved).
    pub fn has_targets(&self) -> bool {
        self.actuators
            .iter()
            .any(|a| matches!(a.drive, Drive::Target(_)))
    }

    /// λ at the start of a run: the given force, or 0 for target-driven actuators.
    pub fn initial_forces(&self) -> Vec<f64> {
        self.actuators
            .iter()
            .map(|a| match a.drive {
                Drive::Force(f) => f,
                Drive::Target(_) => 0.0,
            })
            .collect()
    }

    /// Adds `scale` · Σ f_a of the force-driven actuators (N) at `x` into `out`.
    pub fn add_driven_forces(
        &self,
        x: &[Vec3],
        scale: f64,
        rows: &mut Vec<(usize, Vec3)>,
        out: &mut [Vec3],
    ) {
        for a in &self.actuators {
            if let Drive::Force(f) = a.drive {
                a.add_forces(x, scale * f, rows, out);
            }
        }
    }

    /// Adds `scale` · Σ ∂f_a/∂x · dx of the force-driven actuators (N) into `out`.
    pub fn add_driven_force_derivative(
        &self,
        x: &[Vec3],
        scale: f64,
        dx: &[Vec3],
        out: &mut [Vec3],
    ) {
        for a in &self.actuators {
            if let Drive::Force(f) = a.drive {
                a.add_force_derivative_action(x, scale * f, dx, out);
            }
        }
    }

    /// Σ σλδ(x) of the force-driven actuators (J): the work whose gradient is their force.
    pub fn driven_work(&self, x: &[Vec3]) -> f64 {
        self.actuators
            .iter()
            .map(|a| match a.drive {
                Drive::Force(f) => a.kind.sign() * f * a.kind.value(x),
                Drive::Target(_) => 0.0,
            })
            .sum()
    }
}

/// Reusable buffers of the actuation stage of one body.
pub struct ActuationWorkspace {
    rows: Vec<(usize, Vec3)>,
    /// Per target-driven actuator: its index, and its H rows.
    targets: Vec<usize>,
    target_rows: Vec<Vec<(usize, Vec3)>>,
    /// A⁻¹Gⱼ, column-major (n_reduced × k).
    columns: Vec<f64>,
    buffer: MemBuffer,
    s: DMat,
    c: DVec,
    lambda: DVec,
    bounds: Vec<[f64; 2]>,
    /// Nodal force scratch (one per node).
    nodal: Vec<Vec3>,
}

impl ActuationWorkspace {
    /// Buffers for `act` on a body of `nodes` nodes whose step factorisation is `factor`.
    pub fn new(act: &BodyActuation, nodes: usize, factor: &NumericFactor) -> ActuationWorkspace {
        let k = act
            .actuators
            .iter()
            .filter(|a| matches!(a.drive, Drive::Target(_)))
            .count();
        let n = factor.symbolic().n();
        ActuationWorkspace {
            rows: Vec::new(),
            targets: Vec::with_capacity(k),
            target_rows: vec![Vec::new(); k],
            columns: vec![0.0; n * k],
            buffer: MemBuffer::new(factor.solve_scratch(k.max(1))),
            s: DMat::zeros(k, k),
            c: DVec::zeros(k),
            lambda: DVec::zeros(k),
            bounds: Vec::with_capacity(k),
            nodal: vec![Vec3::zeros(); nodes],
        }
    }
}

/// Adds `scale` · Σ f_a of the force-driven actuators at `x` (the step passes h, the Newton
/// residual −h) to the reduced right-hand side `rhs`.
pub fn add_force_driven(
    act: &BodyActuation,
    ws: &mut ActuationWorkspace,
    dofs: &DofMap,
    x: &[Vec3],
    scale: f64,
    rhs: &mut [f64],
) {
    if act.actuators.is_empty() {
        return;
    }
    ws.nodal.iter_mut().for_each(|f| *f = Vec3::zeros());
    act.add_driven_forces(x, scale, &mut ws.rows, &mut ws.nodal);
    add_reduced(dofs, &ws.nodal, 1.0, rhs);
}

fn add_reduced(dofs: &DofMap, nodal: &[Vec3], scale: f64, out: &mut [f64]) {
    for (n, f) in nodal.iter().enumerate() {
        for k in 0..3 {
            if let Some(r) = dofs.reduced_index(3 * n + k) {
                out[r] += scale * f[k];
            }
        }
    }
}

fn dot_rows(dofs: &DofMap, rows: &[(usize, Vec3)], v: &[f64]) -> f64 {
    let mut s = 0.0;
    for (n, g) in rows {
        for k in 0..3 {
            if let Some(r) = dofs.reduced_index(3 * n + k) {
                s += g[k] * v[r];
            }
        }
    }
    s
}

/// Solves the λ of the target-driven actuators (module doc) and adds h A⁻¹ Σ Gⱼλⱼ to `dv`
/// (reduced Δv, holding Δv₀ = A⁻¹b on entry). `v` is the reduced velocity at the start of the
/// step, `factor` the factorisation of A, `forces` the body's λ (updated for the solved ones).
#[allow(clippy::too_many_arguments)]
pub fn solve_target_driven(
    act: &BodyActuation,
    ws: &mut ActuationWorkspace,
    dofs: &DofMap,
    factor: &NumericFactor,
    x: &[Vec3],
    v: &[f64],
    h: f64,
    dv: &mut [f64],
    forces: &mut [f64],
) {
    let n = dv.len();
    let k = ws.s.nrows();
    if k == 0 {
        return;
    }
    ws.targets.clear();
    ws.bounds.clear();
    ws.columns.fill(0.0);
    for (i, a) in act.actuators.iter().enumerate() {
        let Drive::Target(target) = a.drive else {
            continue;
        };
        let j = ws.targets.len();
        let rows = &mut ws.target_rows[j];
        a.kind.jacobian(x, rows);
        let sigma = a.kind.sign();
        let col = &mut ws.columns[j * n..(j + 1) * n];
        for (node, g) in rows.iter() {
            for c in 0..3 {
                if let Some(r) = dofs.reduced_index(3 * node + c) {
                    col[r] += sigma * g[c];
                }
            }
        }
        // Right-hand side before the solve overwrites nothing it needs: δ, H(v + Δv₀).
        let predicted = a.kind.value(x) + h * (dot_rows(dofs, rows, v) + dot_rows(dofs, rows, dv));
        ws.c[j] = sigma * (target - predicted);
        ws.lambda[j] = forces[i];
        ws.bounds.push(a.bounds);
        ws.targets.push(i);
    }
    factor.solve_columns_in_place(&mut ws.columns, k, MemStack::new(&mut ws.buffer));
    for (i, (ai, rows)) in ws.targets.iter().zip(&ws.target_rows).enumerate() {
        let si = act.actuators[*ai].kind.sign();
        for j in 0..k {
            ws.s[(i, j)] = h * h * si * dot_rows(dofs, rows, &ws.columns[j * n..(j + 1) * n]);
        }
    }
    // Symmetrise round-off.
    for i in 0..k {
        for j in 0..i {
            let m = 0.5 * (ws.s[(i, j)] + ws.s[(j, i)]);
            ws.s[(i, j)] = m;
            ws.s[(j, i)] = m;
        }
    }
    bounded_solve(&ws.s, &ws.c, &ws.bounds, &mut ws.lambda, 1e-14, 10_000);
    for (j, ai) in ws.targets.iter().enumerate() {
        forces[*ai] = ws.lambda[j];
        let col = &ws.columns[j * n..(j + 1) * n];
        for (d, c) in dv.iter_mut().zip(col) {
            *d += h * ws.lambda[j] * c;
        }
    }
}
