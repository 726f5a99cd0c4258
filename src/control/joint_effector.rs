//! A rigid joint coordinate as the effector of inverse control (`--effector q:ROBOT[k]`,
//! e.g. the piano key's angle `q:key[0]` in `scenes/pianist.toml`, paper 004 §IV), and its
//! quasi-static linearisation with respect to the actuation through the contact rows
//! between the soft bodies and the robot.
//!
//! # The coupled equilibrium sensitivity, and why
//!
//! The soft controller (module doc of `control::controller`) aims each step at the static
//! equilibrium through the compliance W = J_e K⁻¹ H̃. A key pushed by a soft finger moves
//! only through contact, so its compliance is the *coupled* one. The step's mixed rows
//! (`diff::MixedRows`: `σ = H v_soft + J v_rigid`, forces `Hᵀλ` on the soft nodes and
//! `Jᵀλ` on the robot's coordinates, as `scene::model::soft_rigid` builds them) are linearised at
//! a static equilibrium with the held rows kept closed. With y the displacements of the
//! soft nodes the rows touch (P picks them), q the robot's coordinates and z = [q; y]:
//!
//! ```text
//! K dx   = H̃ dλ_a + Pᵀ (H_hᵀ dλ_h + ∂(Hᵀλ)/∂z dz)     (soft: K + K_a, per body)
//! K_r dq = J_hᵀ dλ_h + ∂(Jᵀλ)/∂z dz                  (robot: K_r = diag(kp))
//! H_h y + J_h dq = 0                                 (held rows stay closed)
//! ```
//!
//! reduced to the touched nodes with C_L = P K⁻¹ Pᵀ (one solve per touched DOF):
//!
//! ```text
//! [ I − C_L G_yy   −C_L G_yq     −C_L H_hᵀ ] [ y    ]   [ P K⁻¹ H̃ dλ_a ]
//! [ −G_qy          K_r − G_qq    −J_hᵀ     ] [ dq   ] = [ 0            ]
//! [ H_h            J_h           0         ] [ dλ_h ]   [ 0            ]
//! ```
//!
//! (G = ∂(Hᵀλ, Jᵀλ)/∂(y, q) at the step's λ, the rows' `force_derivative`s: the contact
//! point and frame move with the nodes and the key), and dθ/dλ_a = e_kᵀ dq. Without the G
//! terms this is `(C_s + J_h K_r⁻¹ J_hᵀ) dλ_h = −H_h K⁻¹ H̃ dλ_a`, dq = K_r⁻¹ J_hᵀ dλ_h,
//! paper 004 Eq. 10-11's contact coupling taken at equilibrium (A → K, M → K_r) instead of
//! over one step; on the pianist that form overestimates |dθ/dF| by 40 %: the curling
//! finger's tip slides 0.08 m/N towards the hinge, shortening the lever of the contact
//! force (0.37 N), which only ∂(Jᵀλ)/∂y carries.
//!
//! Held rows ([`HeldRows`]): by default the normal row of every contact between a soft
//! body and the effector's robot with a positive normal force after the step, so the
//! contact slides (the frictionless equilibrium, always well-posed); [`HeldRows::Sticking`]
//! holds the tangential rows too. Checked in `tests/joint_control.rs` at 2 N: sliding model
//! −0.1045 rad/N against −0.1048 from central differences of settled frictionless runs;
//! sticking model +0.00983 against +0.00985, the fixed point (I − Φ_s)⁻¹Φ_a of the iterated
//! step derivative (whose mode rule makes resting contacts stick). With μ = 0.3, settled
//! runs give −0.087 rad/N (the loading partly sticks), a gain ratio of 0.85 for the loop.
//! Neglected: the derivative of the robot's gravity torque (for the piano key
//! m g (L/2) |sin θ| ≈ 0.02·9.81·0.04·0.05 ≈ 4e-4 N·m/rad against kp = 0.2 N·m/rad:
//! 0.2 %), rows with sides on other rigid systems.
//!
//! The equilibrium under the current λ is predicted as for a soft effector: the soft
//! bodies' Newton step K⁻¹ r_s (r_s = M((v⁺ − v)/h + αv⁺) + βKv⁺, the step's unbalanced
//! static force) enters the same system as P K⁻¹ r_s on the right; the key's own inertia
//! and damping are neglected there (its period, 2π √(I/kp) ≈ 0.09 s for the piano key, is
//! short against the finger's settling).
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
        let (system, coordinate) = p.system_coordinate(scene);
        let sys = &scene.rigid.systems[system];
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

/// What the coupled equilibrium needs from a step's mixed rows, over the soft nodes they
/// touch (`nodes`, y = their displacements, 3 per node) and the robot's coordinates.
struct Coupling {
    /// The soft nodes (body, node) of every NCP with mixed rows.
    nodes: Vec<(usize, usize)>,
    /// H_h (held rows × 3·nodes) and J_h (held rows × nv).
    h: DMat,
    j: DMat,
    /// ∂(Hᵀλ)/∂y, ∂(Hᵀλ)/∂q, ∂(Jᵀλ)/∂q, ∂(Jᵀλ)/∂y at the step's λ (every mixed row).
    g_yy: DMat,
    g_yq: DMat,
    g_qq: DMat,
    g_qy: DMat,
}

/// The compliance of a JointLinearizer's soft bodies over the coupling's nodes:
/// C_L = P K⁻¹ Pᵀ (3L × 3L), and P K⁻¹ [r_s, H̃] (3L × (1 + k)).
struct SoftCompliance {
    c: DMat,
    rhs: DMat,
}

/// The coupled linearisation of a [`JointEffector`] (module doc), with one static
/// compliance per soft body it needs, reused across steps.
pub struct JointLinearizer {
    effector: JointEffector,
    held: HeldRows,
    compliance: Vec<Option<StaticCompliance>>,
    columns: Vec<f64>,
    /// One value per free DOF (scratch of [`StaticCompliance::momentum_column`]).
    reduced: Vec<f64>,
}

impl JointLinearizer {
    /// A linearizer of `effector` in `scene`, holding `held` rows of each active contact.
    pub fn new(scene: &Scene, effector: JointEffector, held: HeldRows) -> JointLinearizer {
        JointLinearizer {
            effector,
            held,
            compliance: (0..scene.bodies.len()).map(|_| None).collect(),
            columns: Vec::new(),
            reduced: Vec::new(),
        }
    }

    /// The effector.
    pub fn effector(&self) -> &JointEffector {
        &self.effector
    }

    /// The coupling of the step recorded in `record`: its held rows (the active contacts
    /// between a soft body and the effector's robot, and nothing else) and the geometric
    /// terms of every mixed row; `None` without a held row.
    fn coupling(&self, scene: &Scene, record: &StepRecord) -> Option<Coupling> {
        let sys = self.effector.system;
        let offset: usize = scene.rigid.systems[..sys].iter().map(|s| s.nv()).sum();
        let nv = scene.rigid.systems[sys].nv();
        let mut nodes: Vec<(usize, usize)> = Vec::new();
        let mut chains = Vec::new();
        for contact in &record.contacts {
            let Some(rows) = contact.mixed_rows() else {
                continue;
            };
            let map: Vec<usize> = rows
                .soft_nodes()
                .iter()
                .map(|n| match nodes.iter().position(|m| m == n) {
                    Some(g) => g,
                    None => {
                        nodes.push(*n);
                        nodes.len() - 1
                    }
                })
                .collect();
            chains.push((rows, map));
        }
        let ny = 3 * nodes.len();
        let (mut h_rows, mut j_rows) = (Vec::new(), Vec::new());
        let mut c = Coupling {
            nodes: Vec::new(),
            h: DMat::zeros(0, 0),
            j: DMat::zeros(0, 0),
            g_yy: DMat::zeros(ny, ny),
            g_yq: DMat::zeros(ny, nv),
            g_qq: DMat::zeros(nv, nv),
            g_qy: DMat::zeros(nv, ny),
        };
        let axes: &[usize] = match self.held {
            HeldRows::Normal => &[2],
            HeldRows::Sticking => &[0, 1, 2],
        };
        for (rows, map) in &chains {
            let n_rigid = rows.force_derivative().nrows();
            let (h, j) = (rows.soft_jacobian(), rows.rigid_jacobian());
            for i in 0..rows.len() {
                let ours = rows.systems(i).count() > 0 && rows.systems(i).all(|s| s == sys);
                if rows.kind(i) != MixedRowKind::Contact
                    || !ours
                    || map.is_empty()
                    || rows.lambda()[3 * i + 2] <= ACTIVE_FORCE
                {
                    continue;
                }
                for &a in axes {
                    let r = 3 * i + a;
                    let mut hr = vec![0.0; ny];
                    for (l, &g) in map.iter().enumerate() {
                        for d in 0..3 {
                            hr[3 * g + d] += h[(r, 3 * l + d)];
                        }
                    }
                    h_rows.push(hr);
                    j_rows.push((0..nv).map(|k| j[(r, offset + k)]).collect::<Vec<f64>>());
                }
            }
            // Geometric terms: z = [q (n_rigid); x of the chain's nodes].
            let (df, dsf) = (rows.force_derivative(), rows.soft_force_derivative());
            let zcol = |col: usize| -> Option<Result<usize, usize>> {
                if col < n_rigid {
                    (col >= offset && col < offset + nv).then_some(Err(col - offset))
                } else {
                    let (l, d) = ((col - n_rigid) / 3, (col - n_rigid) % 3);
                    Some(Ok(3 * map[l] + d))
                }
            };
            for col in 0..df.ncols() {
                let Some(target) = zcol(col) else { continue };
                for k in 0..nv {
                    let v = df[(offset + k, col)];
                    match target {
                        Err(q) => c.g_qq[(k, q)] += v,
                        Ok(y) => c.g_qy[(k, y)] += v,
                    }
                }
                for (l, &g) in map.iter().enumerate() {
                    for d in 0..3 {
                        let v = dsf[(3 * l + d, col)];
                        match target {
                            Err(q) => c.g_yq[(3 * g + d, q)] += v,
                            Ok(y) => c.g_yy[(3 * g + d, y)] += v,
                        }
                    }
                }
            }
        }
        if h_rows.is_empty() {
            return None;
        }
        c.h = DMat::from_fn(h_rows.len(), ny, |r, k| h_rows[r][k]);
        c.j = DMat::from_fn(j_rows.len(), nv, |r, k| j_rows[r][k]);
        c.nodes = nodes;
        Some(c)
    }

    /// The linearisation after the step recorded in `record` (`state` the state it ended
    /// in) for the actuators `parameters` (module doc): per soft body the mixed rows touch,
    /// one factorisation of K + K_a at the step's start and one solve with 1 + k + 3·(its
    /// touched nodes) columns, then one dense solve of the coupled system. Errors: a soft
    /// body whose static tangent is not positive definite even shifted (no static
    /// compliance), an element the law cannot evaluate.
    pub fn linearise(
        &mut self,
        scene: &Scene,
        record: &StepRecord,
        state: &State,
        parameters: &[Parameter],
    ) -> Result<JointLinearisation> {
        let value = self.effector.value(state);
        let k = parameters.len();
        let Some(c) = self.coupling(scene, record) else {
            return Ok(JointLinearisation {
                value,
                predicted: value,
                sensitivity: vec![0.0; k],
                held_rows: 0,
            });
        };
        let soft = self.soft_compliance(scene, record, parameters, &c.nodes)?;
        let (ny, nv, m) = (3 * c.nodes.len(), c.j.ncols(), c.h.nrows());
        // [I − C_L G_yy, −C_L G_yq, −C_L H_hᵀ; −G_qy, K_r − G_qq, −J_hᵀ; H_h, J_h, 0]
        // · [y; dq; dλ] = [P K⁻¹ (r_s, H̃); 0; 0]
        let kr = self.effector.stiffness(scene);
        let size = ny + nv + m;
        let mut a = DMat::zeros(size, size);
        let cg = &soft.c * &c.g_yy;
        let cq = &soft.c * &c.g_yq;
        let ch = &soft.c * c.h.transpose();
        for r in 0..ny {
            a[(r, r)] += 1.0;
            for s in 0..ny {
                a[(r, s)] -= cg[(r, s)];
            }
            for q in 0..nv {
                a[(r, ny + q)] -= cq[(r, q)];
            }
            for l in 0..m {
                a[(r, ny + nv + l)] -= ch[(r, l)];
            }
        }
        for q in 0..nv {
            a[(ny + q, ny + q)] += kr[q];
            for p in 0..nv {
                a[(ny + q, ny + p)] -= c.g_qq[(q, p)];
            }
            for s in 0..ny {
                a[(ny + q, s)] -= c.g_qy[(q, s)];
            }
            for l in 0..m {
                a[(ny + q, ny + nv + l)] -= c.j[(l, q)];
            }
        }
        for l in 0..m {
            for s in 0..ny {
                a[(ny + nv + l, s)] = c.h[(l, s)];
            }
            for q in 0..nv {
                a[(ny + nv + l, ny + q)] = c.j[(l, q)];
            }
        }
        let mut rhs = DMat::zeros(size, 1 + k);
        rhs.view_mut((0, 0), (ny, 1 + k)).copy_from(&soft.rhs);
        // SVD: held rows may be nearly dependent.
        let svd = a.svd(true, true);
        let tol = 1e-12 * svd.singular_values.max();
        let solution = svd
            .solve(&rhs, tol)
            .map_err(|e| Error::invalid("joint effector", e.to_string()))?;
        let row = ny + self.effector.coordinate;
        Ok(JointLinearisation {
            value,
            predicted: value + solution[(row, 0)],
            sensitivity: (0..k).map(|j| solution[(row, 1 + j)]).collect(),
            held_rows: m,
        })
    }

    /// C_L = P K⁻¹ Pᵀ and P K⁻¹ [r_s, H̃] over `nodes` (P picks their displacements; r_s from
    /// the step's momentum, K + K_a at the step's start; module doc), body by body.
    fn soft_compliance(
        &mut self,
        scene: &Scene,
        record: &StepRecord,
        parameters: &[Parameter],
        nodes: &[(usize, usize)],
    ) -> Result<SoftCompliance> {
        let k = parameters.len();
        let ny = 3 * nodes.len();
        let mut out = SoftCompliance {
            c: DMat::zeros(ny, ny),
            rhs: DMat::zeros(ny, 1 + k),
        };
        for b in 0..scene.bodies.len() {
            // The coupling's displacements on body b: (index in y, reduced DOF).
            let model = &scene.bodies[b];
            let dofs = model.pattern().dofs();
            let local: Vec<(usize, usize)> = nodes
                .iter()
                .enumerate()
                .filter(|(_, (body, _))| *body == b)
                .flat_map(|(g, &(_, node))| {
                    (0..3).filter_map(move |d| {
                        dofs.reduced_index(3 * node + d).map(|r| (3 * g + d, r))
                    })
                })
                .collect();
            if local.is_empty() {
                continue;
            }
            let rec = &record.bodies[b];
            let pattern = model.pattern();
            let n = pattern.n();
            let ncols = 1 + k + local.len();
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
            if shift.is_none() {
                return Err(Error::invalid(
                    format!("soft_body.{}", model.name()),
                    "the static tangent K + K_a is not positive definite, even shifted: no static compliance for the joint effector",
                ));
            }
            self.columns.clear();
            self.columns.resize(n * ncols, 0.0);
            // Column 0: M((v⁺ − v)/h + α v⁺) (the β v⁺ part is added after the solve).
            let (h, alpha, beta) = (
                record.h,
                model.options().rayleigh_mass,
                model.options().rayleigh_stiffness,
            );
            StaticCompliance::momentum_column(
                model,
                (&rec.v, &rec.v_plus),
                h,
                alpha,
                &mut self.reduced,
                &mut self.columns[..n],
            );
            compliance.actuation_columns(scene, parameters, &rec.x, &mut self.columns[n..]);
            for (c, &(_, r)) in local.iter().enumerate() {
                self.columns[(1 + k + c) * n + r] = 1.0;
            }
            compliance.solve(&mut self.columns, ncols, None);
            // β v⁺ joins K⁻¹ r_s (K⁻¹ β K v⁺ = β v⁺).
            dofs.add_nodal(&rec.v_plus, beta, &mut self.columns[..n]);
            for &(y, r) in &local {
                for col in 0..1 + k {
                    out.rhs[(y, col)] = self.columns[col * n + r];
                }
                for (c, &(y2, _)) in local.iter().enumerate() {
                    out.c[(y, y2)] = self.columns[(1 + k + c) * n + r];
                }
            }
        }
        Ok(out)
    }
}
