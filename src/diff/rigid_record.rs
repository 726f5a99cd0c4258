//! What the derivatives of one step need of its rigid systems (paper 002 Eq. 3 and Appendix
//! D): the start and end states and, per system, the derivatives of the velocity update
//! `v⁺ = v + h (a(q, v, τ) + M⁻¹ Q)` with the generalised contact force Q held, of the
//! configuration update `q⁺ = q ⊕ h v⁺`, and of the input's dependence on the state (a PD
//! servo's −kp, −kd), stacked over the systems (`offsets`), each block diagonal.

use crate::error::Result;
use crate::math::DMat;
use crate::rigid::spatial::Vec6;
use crate::scene::{RigidSide, RigidState, Scene, SystemBuffers, VelocityUpdateBlocks};

use super::tangent::RigidTangent;

/// The rigid part of a step record (module doc); n the total number of velocity
/// coordinates.
pub struct RigidRecord {
    /// Where each system's coordinates start (systems + 1 entries, the last is n).
    pub offsets: Vec<usize>,
    /// The states at the start of the step.
    pub start: Vec<RigidState>,
    /// The states at its end (τ: the input applied in the step).
    pub end: Vec<RigidState>,
    /// `[∂v⁺/∂q, ∂v⁺/∂v, ∂v⁺/∂τ = h M⁻¹]` with Q held (n × 3n).
    pub(crate) update: DMat,
    /// ∂v⁺/∂m with Q held, each free body's on its rows for its own mass (n; zero on a
    /// robot's rows): `−h M⁻¹ Q / m` (`rigid::FreeBody::velocity_update_mass_derivative`).
    pub(crate) dmass: Vec<f64>,
    /// ∂q⁺/∂q and ∂q⁺/∂v⁺ (n × n, tangent spaces).
    pub(crate) jq: DMat,
    pub(crate) jv: DMat,
    /// ∂τ/∂q and ∂τ/∂v (diagonal, n each).
    pub(crate) dtau_dq: Vec<f64>,
    pub(crate) dtau_dv: Vec<f64>,
    /// Each system's buffers with its kinematics at the start configuration.
    buffers: Vec<SystemBuffers>,
    /// Reused per-system temporaries.
    scratch: Scratch,
}

/// A record's temporaries: one system's ∂q⁺/∂q and ∂q⁺/∂v⁺, `h v⁺`, a robot's applied torque.
#[derive(Default)]
struct Scratch {
    iq: DMat,
    iv: DMat,
    nu: Vec<f64>,
    tau: Vec<f64>,
}

/// `to = from.to_vec()` reusing `to` and each state's buffers.
fn clone_states(to: &mut Vec<RigidState>, from: &[RigidState]) {
    to.truncate(from.len());
    let k = to.len();
    for (a, b) in to.iter_mut().zip(from) {
        a.q.clone_from(&b.q);
        a.v.clone_from(&b.v);
        a.tau.clone_from(&b.tau);
    }
    to.extend_from_slice(&from[k..]);
}

impl RigidRecord {
    /// The record of a step of `scene` from `start` to `end`, its velocity update's
    /// derivatives still to be taken ([`Self::set_force`]). Errors as
    /// `RigidSystem::input_jacobian`.
    pub fn new(scene: &Scene, start: &[RigidState], end: &[RigidState]) -> Result<RigidRecord> {
        let buffers = scene.rigid.systems.iter().map(SystemBuffers::new).collect();
        RigidRecord::with_buffers(scene, start, end, buffers)
    }

    /// [`Self::new`] on per-system buffers built for `scene` (`scene::SystemBuffers`, e.g. a
    /// stepper's spare ones, `RigidWorkspace::spare_buffers`; their contents are overwritten).
    pub fn with_buffers(
        scene: &Scene,
        start: &[RigidState],
        end: &[RigidState],
        buffers: Vec<SystemBuffers>,
    ) -> Result<RigidRecord> {
        assert_eq!(
            buffers.len(),
            scene.rigid.systems.len(),
            "one buffer per system"
        );
        let mut rec = RigidRecord {
            offsets: Vec::new(),
            start: Vec::new(),
            end: Vec::new(),
            update: DMat::zeros(0, 0),
            dmass: Vec::new(),
            jq: DMat::zeros(0, 0),
            jv: DMat::zeros(0, 0),
            dtau_dq: Vec::new(),
            dtau_dv: Vec::new(),
            buffers,
            scratch: Scratch::default(),
        };
        rec.refill(scene, start, end)?;
        Ok(rec)
    }

    /// Makes this record (built for `scene`) that of the step from `start` to `end`, reusing
    /// its buffers: no allocation once it has held a step of the same scene. Errors as
    /// [`Self::new`].
    pub(crate) fn refill(
        &mut self,
        scene: &Scene,
        start: &[RigidState],
        end: &[RigidState],
    ) -> Result<()> {
        let systems = &scene.rigid.systems;
        let h = scene.simulation.dt;
        self.offsets.clear();
        self.offsets.push(0);
        for s in systems {
            let last = *self.offsets.last().expect("non-empty");
            self.offsets.push(last + s.nv());
        }
        let n = self.n();
        clone_states(&mut self.start, start);
        clone_states(&mut self.end, end);
        super::rigid_step::reshape(&mut self.jq, n, n);
        super::rigid_step::reshape(&mut self.jv, n, n);
        super::rigid_step::reshape(&mut self.update, n, 3 * n);
        self.jq.fill(0.0);
        self.jv.fill(0.0);
        self.update.fill(0.0);
        for v in [&mut self.dtau_dq, &mut self.dtau_dv, &mut self.dmass] {
            v.clear();
            v.resize(n, 0.0);
        }
        let Scratch { iq, iv, nu, .. } = &mut self.scratch;
        for (t, sys) in systems.iter().enumerate() {
            let (o, nv) = (self.offsets[t], sys.nv());
            // The input applied in the step is the end state's τ.
            sys.input_jacobian(
                &end[t],
                &mut self.dtau_dq[o..o + nv],
                &mut self.dtau_dv[o..o + nv],
            )?;
            super::rigid_step::reshape(iq, nv, nv);
            super::rigid_step::reshape(iv, nv, nv);
            sys.integrate_jacobians(&end[t].v, h, iq, iv, nu);
            self.jq.view_mut((o, o), (nv, nv)).copy_from(iq);
            self.jv.view_mut((o, o), (nv, nv)).copy_from(iv);
            sys.kinematics(&mut self.buffers[t], &start[t].q);
        }
        Ok(())
    }

    /// The per-system buffers, taken out of the record (for reuse; the record's later
    /// derivatives need them).
    pub fn take_buffers(&mut self) -> Vec<SystemBuffers> {
        std::mem::take(&mut self.buffers)
    }

    /// Takes the velocity update's derivatives with the generalised contact force `force`
    /// (n; N, N·m) that the step's rows exerted on the systems held.
    pub fn set_force(&mut self, scene: &Scene, force: &[f64]) {
        let h = scene.simulation.dt;
        let n = self.n();
        debug_assert_eq!(self.update.nrows(), n);
        for (t, sys) in scene.rigid.systems.iter().enumerate() {
            let (o, nv) = (self.offsets[t], sys.nv());
            // The start state with the input the step applied.
            let (s, e) = (&self.start[t], &self.end[t]);
            sys.velocity_update_jacobian_into(
                &mut self.buffers[t],
                (&s.q, &s.v, &e.tau),
                &force[o..o + nv],
                h,
                &mut VelocityUpdateBlocks {
                    update: &mut self.update,
                    at: o,
                    dmass: &mut self.dmass[o..o + nv],
                    tau: &mut self.scratch.tau,
                },
            );
            // The twists read the kinematics at q (the ABA derivatives leave other values).
            sys.kinematics(&mut self.buffers[t], &self.start[t].q);
        }
    }

    /// ∂v⁺/∂m with Q held of system `system`'s mass (n, zero off its rows; module doc of
    /// `rigid::free_body_derivative`).
    pub(crate) fn mass_column(&self, system: usize) -> crate::math::DVec {
        let mut out = crate::math::DVec::zeros(self.n());
        let rows = self.offsets[system]..self.offsets[system + 1];
        for r in rows {
            out[r] = self.dmass[r];
        }
        out
    }

    /// Number of velocity coordinates n.
    pub fn n(&self) -> usize {
        *self.offsets.last().expect("non-empty")
    }

    /// h M⁻¹ (n × n, block diagonal): a view of the update's third block.
    pub(crate) fn minv_h(&self) -> nalgebra::DMatrixView<'_, f64> {
        let n = self.n();
        self.update.columns(2 * n, n)
    }

    /// The twists of system `side.system`'s coordinates at the side's body, at the start.
    pub(crate) fn twists(&self, scene: &Scene, side: RigidSide) -> Vec<Vec6> {
        side_twists(scene, &self.buffers, &self.start, side)
    }

    /// [`Self::twists`] into `out` (no allocation once it has held the system's nv).
    pub(crate) fn twists_into(&self, scene: &Scene, side: RigidSide, out: &mut Vec<Vec6>) {
        scene.rigid.systems[side.system].body_twists(
            &self.buffers[side.system],
            &self.start[side.system].q,
            side.joint,
            out,
        );
    }

    /// Stacks per-system tangents `t` (empty: zero) into `q` and `v` (n each).
    pub(crate) fn stack(
        &self,
        t: &[RigidTangent],
        mut q: impl FnMut(usize, f64),
        mut v: impl FnMut(usize, f64),
    ) {
        for (s, t) in t.iter().enumerate() {
            let o = self.offsets[s];
            for (i, (a, b)) in t.q.iter().zip(&t.v).enumerate() {
                q(o + i, *a);
                v(o + i, *b);
            }
        }
    }

    /// Splits stacked `q` and `v` (n each) into per-system tangents.
    pub(crate) fn split(&self, q: &[f64], v: &[f64]) -> Vec<RigidTangent> {
        self.offsets
            .windows(2)
            .map(|w| RigidTangent {
                q: q[w[0]..w[1]].to_vec(),
                v: v[w[0]..w[1]].to_vec(),
            })
            .collect()
    }

    /// [`Self::velocities`] into `v0` and `vp` (no allocation once they have held n entries).
    pub(crate) fn velocities_into(&self, v0: &mut Vec<f64>, vp: &mut Vec<f64>) {
        v0.clear();
        v0.extend(self.start.iter().flat_map(|s| s.v.iter().copied()));
        vp.clear();
        vp.extend(self.end.iter().flat_map(|s| s.v.iter().copied()));
    }

    /// Stacked start velocities, end velocities (n each).
    pub(crate) fn velocities(&self) -> (Vec<f64>, Vec<f64>) {
        let (mut v0, mut vp) = (Vec::new(), Vec::new());
        self.velocities_into(&mut v0, &mut vp);
        (v0, vp)
    }

    /// Bytes held (the dense blocks).
    pub fn bytes(&self) -> usize {
        8 * (self.update.len()
            + self.dmass.len()
            + self.jq.len()
            + self.jv.len()
            + 2 * self.dtau_dq.len())
    }
}

/// The twists at `side`'s body given each system's buffers `buffers` holding its kinematics
/// at `start`.
pub(crate) fn side_twists(
    scene: &Scene,
    buffers: &[SystemBuffers],
    start: &[RigidState],
    side: RigidSide,
) -> Vec<Vec6> {
    let mut twists = Vec::new();
    scene.rigid.systems[side.system].body_twists(
        &buffers[side.system],
        &start[side.system].q,
        side.joint,
        &mut twists,
    );
    twists
}
