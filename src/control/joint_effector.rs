//! A rigid joint coordinate as the effector of inverse control (`--effector q:ROBOT[k]`,
//! e.g. the piano key's angle `q:key[0]` in `scenes/pianist.toml`, paper 004 §IV), and its
//! quasi-static linearisation with respect to the actuation through the contact rows
//! between the soft bodies and the robot.
//!
//! # The coupled equilibrium sensitivity, and why
//!
//! The soft controller (module doc of `control::controller`) aims each step at the static
//! equilibrium through the compliance W = J_e K⁻¹ H̃. A key pushed by a soft finger moves
//! only through contact, so its compliance is the *coupled* one. At a static equilibrium,
//! with the step's active contacts between the soft bodies and the robot held (their rows
//! `σ = H v_soft + J v_rigid`, `diff::MixedRows`), a change dλ_a of the actuation and dλ_h of
//! the held rows' forces move the soft nodes and the robot's coordinates by
//!
//! ```text
//! K dx   = H̃ dλ_a + H_hᵀ dλ_h        (soft: K + K_a, the static tangent, per body)
//! K_r dq = J_hᵀ dλ_h                  (robot: K_r = diag(kp), its PD's spring)
//! H_h dx + J_h dq = 0                 (the held rows stay closed)
//! ⇒ (C_s + J_h K_r⁻¹ J_hᵀ) dλ_h = −H_h K⁻¹ H̃ dλ_a,   C_s = H_h K⁻¹ H_hᵀ
//!    dθ/dλ_a = e_kᵀ K_r⁻¹ J_hᵀ dλ_h/dλ_a
//! ```
//!
//! (paper 004 Eq. 10-11's contact coupling, taken at equilibrium rather than over one step:
//! the step's G = Σ h H A⁻¹ Hᵀ + Σ h J M⁻¹ Jᵀ with A → K and M → K_r). The forces are H_hᵀλ
//! on the soft nodes and J_hᵀλ on the robot, as in the step (`scene::soft_rigid`), so the
//! signs follow from the rows. Held rows ([`HeldRows`]): by default the normal row of every
//! contact between a soft body and the effector's robot whose normal force is positive
//! after the step (the contact slides freely: a frictionless equilibrium, always
//! well-posed); [`HeldRows::Sticking`] holds the tangential rows too (every active contact
//! sticks). The test `tests/joint_control.rs` compares both with central differences of
//! settled runs. Neglected: the derivative of the robot's gravity torque (for the piano key
//! m g (L/2) |sin θ| ≤ 0.02·9.81·0.04·0.13 ≈ 1e-3 N·m/rad against kp = 0.2 N·m/rad: 0.5 %),
//! rows with sides on other rigid systems, and the geometry's change with x (the contact
//! point and normal at the step's start positions).
//!
//! The equilibrium under the current λ is predicted as for a soft effector: the soft
//! bodies' Newton step K⁻¹ r_s (r_s = M((v⁺ − v)/h + αv⁺) + βKv⁺, the step's unbalanced
//! static force) moves the key through the held rows, `Δθ = e_kᵀ K_r⁻¹ J_hᵀ dλ` with
//! `(C_s + J_h K_r⁻¹ J_hᵀ) dλ = −H_h K⁻¹ r_s`; the key's own inertia and damping are
//! neglected there (its period, 2π √(I/kp) ≈ 0.09 s for the piano key, is short against
//! the finger's settling).
//!
//! Without a held row the key does not depend on the actuation (W = 0): the finger has not
//! reached it yet, or has let go. The control loop (`control::joint_control`) then keeps
//! the last sensitivity it had, or, before any contact, presses harder by the largest
//! change per step ("the finger must first reach the key").

use crate::diff::{MixedRowKind, Parameter, RigidSeed, StepRecord, parse_rigid_parameter};
use crate::error::{Error, Result};
use crate::math::DMat;
use crate::scene::{RigidInput, RigidKind, Scene, State};

use super::static_compliance::StaticCompliance;

/// λ_N (N) above which a contact of the step counts as active.
pub const ACTIVE_FORCE: f64 = 1e-9;

/// Which rows of an active contact the coupled equilibrium holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HeldRows {
    /// The normal row (the contact may slide): the default.
    #[default]
    Normal,
    /// The normal and both tangential rows (the contact sticks).
    Sticking,
}

/// A robot's joint coordinate named `q:ROBOT[k]` (rad for a revolute joint, m for a
/// prismatic one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JointEffector {
    /// The name as given, with its component (`q:key[0]`).
    pub name: String,
    /// The robot (scene index of the rigid system).
    pub system: usize,
    /// The coordinate within the robot.
    pub coordinate: usize,
    /// Its row in the stacked rigid coordinates of every system.
    pub index: usize,
}

impl JointEffector {
    /// The joint effector `name` of `scene`: `None` when `name` is not of the form
    /// `q:…` (a soft effector's name); errors for a `q:` name that is not one coordinate of
    /// a robot with a fixed base and a PD spring on it (`kp > 0`), and for the other rigid
    /// names (`v:`, `tau:`, …).
    pub fn parse(scene: &Scene, name: &str) -> Result<Option<JointEffector>> {
        let what = || format!("--effector `{name}`");
        let Some(params) = parse_rigid_parameter(scene, name)? else {
            return Ok(None);
        };
        let [p] = params.as_slice() else {
            return Err(Error::invalid(
                what(),
                format!(
                    "names {} coordinates; name one, e.g. `{}[0]`",
                    params.len(),
                    name
                ),
            ));
        };
        if p.seed != RigidSeed::Configuration {
            return Err(Error::invalid(
                what(),
                "a joint effector is a robot's joint coordinate, `q:ROBOT[k]`",
            ));
        }
        let systems = &scene.rigid.systems;
        let mut offset = 0;
        let mut found = None;
        for (s, sys) in systems.iter().enumerate() {
            if p.index >= offset && p.index < offset + sys.nv() {
                found = Some((s, p.index - offset));
                break;
            }
            offset += sys.nv();
        }
        let (system, coordinate) = found.expect("parse_rigid_parameter checked the index");
        let sys = &systems[system];
        if sys.kind() != RigidKind::Robot || sys.nq() != sys.nv() {
            return Err(Error::invalid(
                what(),
                "the robot must have a fixed base (its q are its joint coordinates)",
            ));
        }
        match &sys.input {
            RigidInput::Pd { kp, .. } if kp[coordinate] > 0.0 => {}
            _ => {
                return Err(Error::invalid(
                    what(),
                    format!(
                        "the joint needs a spring to have a static equilibrium: give robot `{}` a PD (kp > 0 on coordinate {coordinate}; kp, kd, target)",
                        sys.name
                    ),
                ));
            }
        }
        Ok(Some(JointEffector {
            name: p.name.clone(),
            system,
            coordinate,
            index: p.index,
        }))
    }

    /// The coordinate in `state` (rad or m).
    pub fn value(&self, state: &State) -> f64 {
        state.rigid[self.system].q[self.coordinate]
    }

    /// Its velocity in `state` (rad/s or m/s).
    pub fn velocity(&self, state: &State) -> f64 {
        state.rigid[self.system].v[self.coordinate]
    }

    /// The robot's static stiffness K_r = diag(kp) (N·m/rad, N/m; length nv).
    fn stiffness(&self, scene: &Scene) -> Vec<f64> {
        match &scene.rigid.systems[self.system].input {
            RigidInput::Pd { kp, .. } => kp.clone(),
            _ => unreachable!("checked by parse"),
        }
    }
}

/// A joint effector's linearisation after a step (module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct JointLinearisation {
    /// The coordinate after the step, θ⁺ (rad or m).
    pub value: f64,
    /// The predicted equilibrium under the current actuation, θ_eq.
    pub predicted: f64,
    /// dθ_eq/dλ_a, one per controlled actuator (rad per unit of actuation).
    pub sensitivity: Vec<f64>,
    /// Number of held rows (0: no contact couples the robot to the soft bodies).
    pub held_rows: usize,
}

/// The held rows gathered from a step: per row, its soft part (one entry per local soft
/// node and axis) and its robot part.
struct Held {
    /// Per row: (body, node, axis, weight) entries of H_h.
    soft: Vec<Vec<(usize, usize, usize, f64)>>,
    /// J_h over the robot's coordinates (rows × nv).
    rigid: DMat,
}

/// The coupled linearisation of a [`JointEffector`] (module doc), with one static
/// compliance per soft body it needs, reused across steps.
pub struct JointLinearizer {
    effector: JointEffector,
    held: HeldRows,
    compliance: Vec<Option<StaticCompliance>>,
    columns: Vec<f64>,
}

impl JointLinearizer {
    /// A linearizer of `effector` in `scene`, holding `held` rows of each active contact.
    pub fn new(scene: &Scene, effector: JointEffector, held: HeldRows) -> JointLinearizer {
        JointLinearizer {
            effector,
            held,
            compliance: (0..scene.bodies.len()).map(|_| None).collect(),
            columns: Vec::new(),
        }
    }

    /// The effector.
    pub fn effector(&self) -> &JointEffector {
        &self.effector
    }

    /// The held rows of the step recorded in `record`: the active contacts between a soft
    /// body and the effector's robot (and nothing else).
    fn held_rows(&self, scene: &Scene, record: &StepRecord) -> Held {
        let sys = self.effector.system;
        let offset: usize = scene.rigid.systems[..sys].iter().map(|s| s.nv()).sum();
        let nv = scene.rigid.systems[sys].nv();
        let mut soft = Vec::new();
        let mut rigid_rows: Vec<Vec<f64>> = Vec::new();
        for contact in &record.contacts {
            let Some(rows) = contact.mixed_rows() else {
                continue;
            };
            let nodes = rows.soft_nodes();
            for i in 0..rows.len() {
                let ours = rows.systems(i).count() > 0 && rows.systems(i).all(|s| s == sys);
                if rows.kind(i) != MixedRowKind::Contact
                    || !ours
                    || nodes.is_empty()
                    || rows.lambda()[3 * i + 2] <= ACTIVE_FORCE
                {
                    continue;
                }
                let axes: &[usize] = match self.held {
                    HeldRows::Normal => &[2],
                    HeldRows::Sticking => &[0, 1, 2],
                };
                for &a in axes {
                    let r = 3 * i + a;
                    let h = rows.soft_jacobian();
                    let entries: Vec<(usize, usize, usize, f64)> = nodes
                        .iter()
                        .enumerate()
                        .flat_map(|(l, &(b, n))| {
                            (0..3).map(move |d| (b, n, d, h[(r, 3 * l + d)]))
                        })
                        .filter(|e| e.3 != 0.0)
                        .collect();
                    if entries.is_empty() {
                        continue;
                    }
                    soft.push(entries);
                    let j = rows.rigid_jacobian();
                    rigid_rows.push((0..nv).map(|c| j[(r, offset + c)]).collect());
                }
            }
        }
        let rigid = DMat::from_fn(rigid_rows.len(), nv, |r, c| rigid_rows[r][c]);
        Held { soft, rigid }
    }

    /// The linearisation after the step recorded in `record` (`state` the state it ended
    /// in) for the actuators `parameters` (module doc): per soft body the held rows touch
    /// or an actuator drives, one factorisation of K + K_a at the step's start and one solve
    /// with 1 + k + (held rows) columns. Errors: a soft body whose static tangent is not
    /// positive definite even shifted (no static compliance), an element the law cannot
    /// evaluate.
    pub fn linearise(
        &mut self,
        scene: &Scene,
        record: &StepRecord,
        state: &State,
        parameters: &[Parameter],
    ) -> Result<JointLinearisation> {
        let value = self.effector.value(state);
        let k = parameters.len();
        let held = self.held_rows(scene, record);
        let m = held.soft.len();
        if m == 0 {
            return Ok(JointLinearisation {
                value,
                predicted: value,
                sensitivity: vec![0.0; k],
                held_rows: 0,
            });
        }
        // Per body: H_h K⁻¹ [r_s, H̃, H_hᵀ] (m × (1 + k + m)), summed over the bodies.
        let mut coupled = DMat::zeros(m, 1 + k + m);
        for b in 0..scene.bodies.len() {
            let touched = held.soft.iter().flatten().any(|e| e.0 == b);
            if !touched {
                // H_h has no entry on body b: its compliance does not enter.
                continue;
            }
            self.add_body(scene, record, b, parameters, &held, &mut coupled)?;
        }
        // S = C_s + J_h K_r⁻¹ J_hᵀ, and the rigid response e_kᵀ K_r⁻¹ J_hᵀ (1 × m).
        let kr = self.effector.stiffness(scene);
        let jk = DMat::from_fn(m, kr.len(), |r, c| held.rigid[(r, c)] / kr[c]);
        let s = coupled.columns(1 + k, m).into_owned() + &jk * held.rigid.transpose();
        let response = jk.column(self.effector.coordinate).transpose();
        // dλ = −S⁻¹ [H K⁻¹ r_s, H K⁻¹ H̃] (SVD: rows may be nearly dependent).
        let svd = s.svd(true, true);
        let rhs = -coupled.columns(0, 1 + k).into_owned();
        let tol = 1e-12 * svd.singular_values.max();
        let dlambda = svd
            .solve(&rhs, tol)
            .map_err(|e| Error::invalid("joint effector", e.to_string()))?;
        let moved = response * dlambda;
        Ok(JointLinearisation {
            value,
            predicted: value + moved[(0, 0)],
            sensitivity: (0..k).map(|j| moved[(0, 1 + j)]).collect(),
            held_rows: m,
        })
    }

    /// Adds body `b`'s H_h K⁻¹ [r_s, H̃, H_hᵀ] to `coupled` (module doc; r_s from the step's
    /// momentum, K + K_a at the step's start).
    fn add_body(
        &mut self,
        scene: &Scene,
        record: &StepRecord,
        b: usize,
        parameters: &[Parameter],
        held: &Held,
        coupled: &mut DMat,
    ) -> Result<()> {
        let model = &scene.bodies[b];
        let rec = &record.bodies[b];
        let pattern = model.pattern();
        let dofs = pattern.dofs();
        let n = pattern.n();
        let (k, m) = (parameters.len(), held.soft.len());
        let ncols = 1 + k + m;
        if self.compliance[b].is_none() {
            self.compliance[b] = Some(StaticCompliance::new(scene, b)?);
        }
        let compliance = self.compliance[b].as_mut().expect("set above");
        let shift = compliance.factorize(
            scene,
            Some(rec.factor()),
            &rec.x,
            rec.stiffness(),
            &rec.actuator_forces,
        )?;
        self.columns.clear();
        self.columns.resize(n * ncols, 0.0);
        // Column 0: M((v⁺ − v)/h + α v⁺) (the β v⁺ part is added after the solve).
        let (h, alpha, beta) = (
            record.h,
            model.options().rayleigh_mass,
            model.options().rayleigh_stiffness,
        );
        let reduced: Vec<f64> = dofs
            .free_dofs()
            .iter()
            .map(|&full| {
                let (v, vp) = (rec.v[full / 3][full % 3], rec.v_plus[full / 3][full % 3]);
                (vp - v) / h + alpha * vp
            })
            .collect();
        pattern.symmetric_product(model.mass_values(), &reduced, &mut self.columns[..n]);
        compliance.actuation_columns(scene, parameters, &rec.x, &mut self.columns[n..]);
        for (r, entries) in held.soft.iter().enumerate() {
            let col = &mut self.columns[(1 + k + r) * n..(2 + k + r) * n];
            for &(body, node, d, w) in entries {
                if body != b {
                    continue;
                }
                if let Some(i) = dofs.reduced_index(3 * node + d) {
                    col[i] += w;
                }
            }
        }
        match shift {
            Some(_) => compliance.solve(&mut self.columns, ncols, None),
            None => {
                return Err(Error::invalid(
                    format!("soft_body.{}", model.name()),
                    "the static tangent K + K_a is not positive definite, even shifted: no static compliance for the joint effector",
                ));
            }
        }
        // β v⁺ joins K⁻¹ r_s (K⁻¹ β K v⁺ = β v⁺).
        for (c, &full) in self.columns[..n].iter_mut().zip(dofs.free_dofs()) {
            *c += beta * rec.v_plus[full / 3][full % 3];
        }
        // H_h applied to each column.
        for (r, entries) in held.soft.iter().enumerate() {
            for c in 0..ncols {
                let col = &self.columns[c * n..(c + 1) * n];
                let mut sum = 0.0;
                for &(body, node, d, w) in entries {
                    if body != b {
                        continue;
                    }
                    if let Some(i) = dofs.reduced_index(3 * node + d) {
                        sum += w * col[i];
                    }
                }
                coupled[(r, c)] += sum;
            }
        }
        Ok(())
    }
}
