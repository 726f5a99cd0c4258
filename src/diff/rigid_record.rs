//! What the derivatives of one step need of its rigid systems (paper 002 Eq. 3 and Appendix
//! D): the start and end states and, per system, the derivatives of the velocity update
//! `v⁺ = v + h (a(q, v, τ) + M⁻¹ Q)` with the generalised contact force Q held, of the
//! configuration update `q⁺ = q ⊕ h v⁺`, and of the input's dependence on the state (a PD
//! servo's −kp, −kd), stacked over the systems (`offsets`), each block diagonal.

use crate::error::Result;
use crate::math::DMat;
use crate::rigid::spatial::Vec6;
use crate::scene::{RigidSide, RigidState, Scene, SystemBuffers};

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
}

/// The first velocity coordinate of each system, and n.
pub(crate) fn offsets(scene: &Scene) -> Vec<usize> {
    let mut offsets = vec![0];
    for s in &scene.rigid.systems {
        offsets.push(offsets.last().expect("non-empty") + s.nv());
    }
    offsets
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
        mut buffers: Vec<SystemBuffers>,
    ) -> Result<RigidRecord> {
        let systems = &scene.rigid.systems;
        assert_eq!(buffers.len(), systems.len(), "one buffer per system");
        let h = scene.simulation.dt;
        let offsets = offsets(scene);
        let n = *offsets.last().expect("non-empty");
        let mut jq = DMat::zeros(n, n);
        let mut jv = DMat::zeros(n, n);
        let mut dtau_dq = vec![0.0; n];
        let mut dtau_dv = vec![0.0; n];
        for (t, sys) in systems.iter().enumerate() {
            let (o, nv) = (offsets[t], sys.nv());
            let (a, b) = sys.input_jacobian(&applied(&start[t], &end[t]))?;
            dtau_dq[o..o + nv].copy_from_slice(&a);
            dtau_dv[o..o + nv].copy_from_slice(&b);
            let (mut iq, mut iv) = (DMat::zeros(nv, nv), DMat::zeros(nv, nv));
            sys.integrate_jacobians(&end[t].v, h, &mut iq, &mut iv);
            jq.view_mut((o, o), (nv, nv)).copy_from(&iq);
            jv.view_mut((o, o), (nv, nv)).copy_from(&iv);
            sys.kinematics(&mut buffers[t], &start[t].q);
        }
        Ok(RigidRecord {
            offsets,
            start: start.to_vec(),
            end: end.to_vec(),
            update: DMat::zeros(n, 3 * n),
            dmass: vec![0.0; n],
            jq,
            jv,
            dtau_dq,
            dtau_dv,
            buffers,
        })
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
        for (t, sys) in scene.rigid.systems.iter().enumerate() {
            let (o, nv) = (self.offsets[t], sys.nv());
            let st = applied(&self.start[t], &self.end[t]);
            let vu = sys.velocity_update_jacobian(&mut self.buffers[t], &st, &force[o..o + nv], h);
            self.update.view_mut((o, o), (nv, nv)).copy_from(&vu.dq);
            self.update.view_mut((o, n + o), (nv, nv)).copy_from(&vu.dv);
            self.update
                .view_mut((o, 2 * n + o), (nv, nv))
                .copy_from(&vu.dforce);
            self.dmass[o..o + nv].copy_from_slice(&vu.dmass);
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

    /// Stacked start velocities, end velocities (n each).
    pub(crate) fn velocities(&self) -> (Vec<f64>, Vec<f64>) {
        (
            self.start
                .iter()
                .flat_map(|s| s.v.iter().copied())
                .collect(),
            self.end.iter().flat_map(|s| s.v.iter().copied()).collect(),
        )
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

/// The start state with the input the step applied.
fn applied(start: &RigidState, end: &RigidState) -> RigidState {
    RigidState {
        q: start.q.clone(),
        v: start.v.clone(),
        tau: end.tau.clone(),
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
