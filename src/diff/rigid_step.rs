//! The derivative of one rigid step (paper 002 Eq. 3 and Appendix D): the dense Jacobian of
//! `(q⁺, v⁺)` with respect to `(q, v, τ)` for every free body and robot of a scene, stacked in
//! scene order (`RigidStepJacobian::offsets`), q in the tangent space of each system
//! (`RigidSystem::difference` / `displace`), τ the input applied in the step (N·m, N; a free
//! body's "input" is a generalised force `[f; n]` about its centre of mass, world axes).
//!
//! The step is `v⁺ = v + h (a(q, v, τ) + M⁻¹ J(q)ᵀ λ)`, `σ = J v⁺ + e(Φ, J v)`, λ the NCP's
//! solution, `q⁺ = q ⊕ h v⁺`. With λ held, v⁺ moves by
//!
//! ```text
//! dv⁺|_λ = ∂v⁺/∂q dq + ∂v⁺/∂v dv + h M⁻¹ (dτ + d(J(q)ᵀλ))         (scene::RigidSystem::velocity_update_jacobian_into)
//! ```
//!
//! (for a robot the ABA derivatives at τ − d∘v + Jᵀλ, which include dM; for a free body its
//! Newton–Euler derivatives), and the contact velocity by `dσ|_λ = dJ v⁺ + J dv⁺|_λ + de`; the
//! NCP derivative on the active set (`contact::NcpDerivative`: breaking, sticking, sliding)
//! gives `dλ = N dσ|_λ`; then `dv⁺ = dv⁺|_λ + h M⁻¹ Jᵀ dλ` and
//! `dq⁺ = J_q dq + J_v dv⁺` (`rigid::integrate_jacobians`, `FreeBody::integrate_jacobians`).
//!
//! **Parameters** ([`Parameter`], columns `dq_dp`, `dv_dp`). A free body's mass m
//! (`mass:BODY`, its inertia scaled with it, M = m M̂) moves the velocity update by
//! `∂v⁺/∂m|_λ = −h M⁻¹ Q / m` (gravity's acceleration is m-free; `rigid::free_body_derivative`),
//! which enters the NCP as `dσ|_λ = J ∂v⁺/∂m|_λ` (the Delassus matrix's change `dG λ`, G = h J
//! M⁻¹ Jᵀ, is exactly this: the free velocity does not depend on m). An obstacle's Coulomb
//! coefficient μ (`friction:OBSTACLE`) moves λ directly, `dλ = L G p + p` at its sliding
//! contacts (`contact::NcpDerivative::friction_tangent`, `diff::contact_chain`). Either way
//! `dv⁺ = dv⁺|_λ + h M⁻¹ Jᵀ dλ` and `dq⁺ = J_v dv⁺`.
//!
//! `J(q)` depends on q through the twists of the coordinates (a joint moves the axes after it:
//! `∂T_k/∂q_j = T_j × T_k`) and through the contact point, frame and gap, which move with both
//! bodies (`contact::contact_geometry_jacobian`, by the bodies' twists). A PD input adds
//! `∂τ/∂q = −kp`, `∂τ/∂v = −kd` (zero where the effort limit clamps it). A joint limit's row
//! has a constant J and `dΦ = ±dq_k`.

use crate::contact::{BoundaryGradient, ContactMode, NcpDerivative, NcpSolveScratch};
use crate::error::{Error, Result};
use crate::math::DMat;
use crate::scene::{RigidState, Scene, StepReport, Stepper};

use super::chain_rows::rigid_rows_into;
use super::dense_product::mul_into;
use super::group_ncp_derivative::{friction_directions, ncp_derivative_into};
use super::parameter::Parameter;
use super::record::check_differentiable;
use super::rigid_record::RigidRecord;
use super::row_chain::{ChainPoint, RowChain};

/// `∂(q⁺, v⁺)/∂(q, v, τ)` of one step of a scene's rigid systems (module doc), each block
/// N × N with N the total number of velocity coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct RigidStepJacobian {
    /// Where each system's coordinates start in the stacked vectors (systems + 1 entries).
    pub offsets: Vec<usize>,
    /// ∂q⁺/∂q (tangent spaces).
    pub dq_dq: DMat,
    /// ∂q⁺/∂v (s).
    pub dq_dv: DMat,
    /// ∂q⁺/∂τ.
    pub dq_dtau: DMat,
    /// ∂v⁺/∂q (1/s).
    pub dv_dq: DMat,
    /// ∂v⁺/∂v.
    pub dv_dv: DMat,
    /// ∂v⁺/∂τ.
    pub dv_dtau: DMat,
    /// ∂q⁺/∂p of the parameters asked for (N × P; module doc).
    pub dq_dp: DMat,
    /// ∂v⁺/∂p (N × P).
    pub dv_dp: DMat,
}

/// Advances `state` by one step of `scene` with `stepper` and returns the step's report and
/// the Jacobian of its rigid part, with a column per parameter of `parameters` (`mass:BODY`,
/// `friction:OBSTACLE`). Errors as [`check_differentiable`] and [`Stepper::step`], when a
/// contact changes features within the geometry's differentiation step, and on a parameter
/// of another kind.
pub fn rigid_step_jacobian(
    scene: &Scene,
    stepper: &mut Stepper,
    state: &mut crate::scene::State,
    boundary: BoundaryGradient,
    parameters: &[Parameter],
) -> Result<(StepReport, RigidStepJacobian)> {
    let (report, parts) = rigid_step_parts(scene, stepper, state, boundary, parameters)?;
    Ok((report, parts.jacobian()))
}

/// [`rigid_step_jacobian`]'s step, returning the derivative's parts (for the reverse sweep,
/// `diff::rigid_step_vjp`). Errors as [`rigid_step_jacobian`].
pub(crate) fn rigid_step_parts(
    scene: &Scene,
    stepper: &mut Stepper,
    state: &mut crate::scene::State,
    boundary: BoundaryGradient,
    parameters: &[Parameter],
) -> Result<(StepReport, RigidStepParts)> {
    check_differentiable(scene)?;
    check_rigid_parameters(scene, parameters)?;
    let start = state.rigid.clone();
    let report = stepper.step(scene, state)?;
    let parts =
        RigidStepParts::of_step(scene, stepper, &start, &state.rigid, boundary, parameters)?;
    Ok((report, parts))
}

/// Errors, naming it, on a parameter the rigid step Jacobian has no column for: it takes
/// `mass:BODY` and `friction:OBSTACLE` (a robot's input is its τ block).
pub(crate) fn check_rigid_parameters(scene: &Scene, parameters: &[Parameter]) -> Result<()> {
    match parameters
        .iter()
        .find(|p| !matches!(p, Parameter::RigidMass { .. } | Parameter::Friction { .. }))
    {
        Some(p) => Err(Error::invalid(
            format!("parameter `{}`", p.name(scene)),
            "the rigid step's derivative takes `mass:BODY` and `friction:OBSTACLE` parameters (a robot's input is its τ block)",
        )),
        None => Ok(()),
    }
}

/// One rigid step's derivative before the NCP's derivative is applied (module doc), over the
/// inputs z = [dq; dv; dτ; dp] (3n + P columns; dτ the applied input, which a PD makes depend
/// on q and v): what the forward Jacobian ([`RigidStepParts::jacobian`]) and the reverse sweep
/// ([`RigidStepParts::vjp`], `diff::rigid_step_vjp`) both read.
pub(crate) struct RigidStepParts {
    pub(crate) offsets: Vec<usize>,
    /// dv⁺|_λ = DVL z (n × (3n + P)).
    pub(crate) dvl: DMat,
    /// dσ|_λ = DS z (3m × (3n + P)).
    pub(crate) dsigma: DMat,
    /// h M⁻¹ Jᵀ (n × 3m): dv⁺ = dv⁺|_λ + h M⁻¹ Jᵀ dλ.
    pub(crate) response: DMat,
    /// The parameters' direct ∂λ/∂p (3m × P; a friction coefficient's, at its sliding
    /// contacts).
    pub(crate) dlambda_dp: DMat,
    /// The NCP's derivative, refilled in place each step (its buffers kept); it holds this
    /// step's only when `ncp_active` ([`Self::ncp`]).
    ncp: NcpDerivative,
    ncp_active: bool,
    /// The contact modes the NCP's derivative was built with.
    modes: Vec<ContactMode>,
    /// ∂q⁺/∂q, ∂q⁺/∂v⁺ (n × n) and ∂τ/∂q, ∂τ/∂v (diagonal, n each).
    pub(crate) jq: DMat,
    pub(crate) jv: DMat,
    pub(crate) dtau_dq: Vec<f64>,
    pub(crate) dtau_dv: Vec<f64>,
    /// Scratch: h M⁻¹ ∂(Jᵀλ)/∂z (n × nz).
    coupled: DMat,
    /// Scratch: the stacked velocities and contact force.
    stacked: Stacked,
}

/// The start and end velocities and the generalised contact force Jᵀλ, stacked (n each),
/// and the rows' geometry derivatives.
#[derive(Default)]
struct Stacked {
    v0: Vec<f64>,
    vp: Vec<f64>,
    force: Vec<f64>,
    geometry: Vec<Option<crate::contact::ContactGeometryJacobian>>,
}

impl RigidStepParts {
    /// The parts of the step `stepper` just took from the rigid states `start` to `end`, with
    /// a column per parameter of `parameters`. Errors as [`rigid_step_jacobian`].
    pub(crate) fn of_step(
        scene: &Scene,
        stepper: &Stepper,
        start: &[RigidState],
        end: &[RigidState],
        boundary: BoundaryGradient,
        parameters: &[Parameter],
    ) -> Result<RigidStepParts> {
        let ws = stepper.rigid();
        let mut rec = RigidRecord::with_buffers(scene, start, end, ws.spare_buffers(&scene.rigid))?;
        let mut parts = RigidStepParts::empty();
        let mut chain = RowChain::empty();
        let filled = parts.fill(scene, stepper, &mut rec, &mut chain, boundary, parameters);
        ws.recycle_buffers(rec.take_buffers());
        filled.map(|()| parts)
    }

    /// Parts with no rows and no coordinates, to be [filled](Self::fill).
    pub(crate) fn empty() -> RigidStepParts {
        let e = || DMat::zeros(0, 0);
        RigidStepParts {
            offsets: Vec::new(),
            dvl: e(),
            dsigma: e(),
            response: e(),
            dlambda_dp: e(),
            ncp: NcpDerivative::default(),
            ncp_active: false,
            modes: Vec::new(),
            jq: e(),
            jv: e(),
            dtau_dq: Vec::new(),
            dtau_dv: Vec::new(),
            coupled: e(),
            stacked: Stacked::default(),
        }
    }

    /// [`Self::of_step`] into these parts, their buffers reused when their shapes match, from
    /// the step's record `rec` (its kinematics at the start; its update's derivatives are
    /// taken here).
    pub(crate) fn fill(
        &mut self,
        scene: &Scene,
        stepper: &Stepper,
        rec: &mut RigidRecord,
        chain: &mut RowChain,
        boundary: BoundaryGradient,
        parameters: &[Parameter],
    ) -> Result<()> {
        check_rigid_parameters(scene, parameters)?;
        let h = scene.simulation.dt;
        let ws = stepper.rigid();
        let n = rec.n();
        let mut rows = std::mem::take(&mut chain.rows);
        rigid_rows_into(scene, ws, rec, 0, &mut rows, &mut self.stacked.geometry)?;
        if rows.len() != ws.contacts().len() {
            return Err(Error::invalid(
                "rigid step derivative",
                "the step has rows between soft and rigid bodies: use the step's record (diff::Recorder) and StepDerivative",
            ));
        }
        let Stacked { v0, vp, force, .. } = &mut self.stacked;
        rec.velocities_into(v0, vp);
        let lambda = ws.lambda();
        chain.refill(
            &scene.rigid,
            &rec.offsets,
            rows,
            Vec::new(),
            &ChainPoint {
                v_rigid: v0,
                v_plus_rigid: vp,
                v_soft: &[],
                v_plus_soft: &[],
                lambda,
                h,
            },
        )?;
        chain.generalised_force_into(force);
        rec.set_force(scene, force);
        let m = chain.rows.len();
        // h M⁻¹, column-major: the update's third block of n columns.
        let minv_h_cols = &rec.update.as_slice()[2 * n * n..3 * n * n];
        let np = parameters.len();
        // dv⁺|_λ: the update's derivatives, plus h M⁻¹ d(Jᵀλ)/dq in the q columns, then a
        // column per parameter (a mass's ∂v⁺/∂m; zero for a friction coefficient).
        let dvl = &mut self.dvl;
        reshape(dvl, n, 3 * n + np);
        dvl.columns_mut(0, 3 * n).copy_from(&rec.update);
        dvl.columns_mut(3 * n, np).fill(0.0);
        let coupled = &mut self.coupled;
        reshape(coupled, n, chain.dforce.ncols());
        mul_into(coupled, minv_h_cols, &chain.dforce, false);
        for r in 0..n {
            for c in 0..n {
                dvl[(r, c)] += coupled[(r, c)];
            }
        }
        for (j, p) in parameters.iter().enumerate() {
            if let Parameter::RigidMass { system } = *p {
                dvl.set_column(3 * n + j, &rec.mass_column(system));
            }
        }
        // dσ|_λ = J dv⁺|_λ + (dJ v⁺ + de)(dq) + s_v J dv.
        let dsigma = &mut self.dsigma;
        reshape(dsigma, 3 * m, 3 * n + np);
        mul_into(dsigma, chain.jac.as_slice(), dvl, false);
        for (i, s_v) in chain.s_v.iter().enumerate() {
            for r in 0..3 {
                for c in 0..n {
                    dsigma[(3 * i + r, c)] += chain.dsigma[(3 * i + r, c)];
                }
            }
            for c in 0..n {
                dsigma[(3 * i + 2, n + c)] += s_v * chain.jac[(3 * i + 2, c)];
            }
        }
        reshape(&mut self.dlambda_dp, 3 * m, np);
        self.dlambda_dp.fill(0.0);
        self.ncp_active = false;
        if m > 0 {
            let group = stepper
                .contact()
                .groups()
                .iter()
                .find(|g| g.members().is_empty())
                .expect("a step with rigid rows solved a rigid NCP");
            assert_eq!(
                group.lambda().len(),
                3 * m,
                "the rigid NCP holds the rigid rows"
            );
            let d = &mut self.ncp;
            ncp_derivative_into(scene, group, boundary, &mut self.modes, d)?;
            // A friction coefficient moves λ itself, at the contacts sliding on its obstacle.
            if parameters
                .iter()
                .any(|p| matches!(p, Parameter::Friction { .. }))
            {
                let friction = friction_directions(group, d);
                for (j, p) in parameters.iter().enumerate() {
                    if let Parameter::Friction { obstacle } = *p
                        && let Some((_, t)) = friction.iter().find(|(o, _)| *o == obstacle)
                    {
                        self.dlambda_dp.column_mut(j).copy_from_slice(t);
                    }
                }
            }
            self.ncp_active = true;
        }
        // h M⁻¹ Jᵀ, column k of it the columns of h M⁻¹ weighted by row k of J (its zeros, the
        // coordinates that do not move the row's bodies, skipped).
        let response = &mut self.response;
        reshape(response, n, 3 * m);
        response.fill(0.0);
        let rs = response.as_mut_slice();
        for k in 0..3 * m {
            let rk = &mut rs[k * n..(k + 1) * n];
            for (c, mc) in minv_h_cols.chunks_exact(n).enumerate() {
                let j = chain.jac[(k, c)];
                if j != 0.0 {
                    for (x, y) in rk.iter_mut().zip(mc) {
                        *x += j * y;
                    }
                }
            }
        }
        // (A matrix's `clone_from` would allocate: copied into the reshaped buffers instead.)
        for (to, from) in [(&mut self.jq, &rec.jq), (&mut self.jv, &rec.jv)] {
            reshape(to, from.nrows(), from.ncols());
            to.copy_from(from);
        }
        self.dtau_dq.clone_from(&rec.dtau_dq);
        self.dtau_dv.clone_from(&rec.dtau_dv);
        self.offsets.clone_from(&rec.offsets);
        Ok(())
    }

    /// The NCP's derivative (None without rows).
    pub(crate) fn ncp(&self) -> Option<&NcpDerivative> {
        self.ncp_active.then_some(&self.ncp)
    }

    /// Number of velocity coordinates n.
    pub(crate) fn n(&self) -> usize {
        *self.offsets.last().expect("non-empty")
    }

    /// The dense Jacobian (module doc): dλ = L dσ|_λ + ∂λ/∂p, dv⁺ = dv⁺|_λ + h M⁻¹ Jᵀ dλ,
    /// dq⁺ = J_q dq + J_v dv⁺, then the input's dependence on the state folded in.
    pub(crate) fn jacobian(&self) -> RigidStepJacobian {
        let mut out = RigidStepJacobian::default();
        self.jacobian_into(&mut out, &mut JacobianScratch::default());
        out
    }

    /// [`Self::jacobian`] into `out`, its blocks and `scratch` resized only when their shapes
    /// change (then reused: no allocation).
    pub(crate) fn jacobian_into(&self, out: &mut RigidStepJacobian, scratch: &mut JacobianScratch) {
        let n = self.n();
        let np = self.dlambda_dp.ncols();
        let JacobianScratch {
            dv,
            dq,
            dlambda,
            ncp: ncp_scratch,
        } = scratch;
        reshape(dv, n, 3 * n + np);
        dv.copy_from(&self.dvl);
        if let Some(ncp) = self.ncp() {
            ncp.tangent_many_with(&self.dsigma, dlambda, ncp_scratch);
            let mut direct = dlambda.columns_mut(3 * n, np);
            direct += &self.dlambda_dp;
            mul_into(dv, self.response.as_slice(), dlambda, true);
        }
        // dq⁺ = J_q [I 0 0 0] + J_v dv⁺.
        reshape(dq, n, 3 * n + np);
        mul_into(dq, self.jv.as_slice(), dv, false);
        for (a, b) in dq.as_mut_slice()[..n * n]
            .iter_mut()
            .zip(self.jq.as_slice())
        {
            *a += b;
        }
        // The input's dependence on the state: column c of the q and v blocks gains column c
        // of the τ block times ∂τ_c/∂q_c and ∂τ_c/∂v_c (column-major, n rows).
        for mat in [&mut *dq, &mut *dv] {
            let (state, rest) = mat.as_mut_slice().split_at_mut(2 * n * n);
            let (dq_block, dv_block) = state.split_at_mut(n * n);
            for c in 0..n {
                let (a, b) = (self.dtau_dq[c], self.dtau_dv[c]);
                if a == 0.0 && b == 0.0 {
                    continue;
                }
                let t = &rest[c * n..(c + 1) * n];
                let cq = &mut dq_block[c * n..(c + 1) * n];
                let cv = &mut dv_block[c * n..(c + 1) * n];
                for ((q, v), t) in cq.iter_mut().zip(cv.iter_mut()).zip(t) {
                    *q += t * a;
                    *v += t * b;
                }
            }
        }
        // Columns c0..c0 + k of a column-major matrix of n rows: one contiguous slice.
        let columns = |to: &mut DMat, m: &DMat, c0: usize, k: usize| {
            reshape(to, n, k);
            to.as_mut_slice()
                .copy_from_slice(&m.as_slice()[c0 * n..(c0 + k) * n]);
        };
        columns(&mut out.dq_dq, dq, 0, n);
        columns(&mut out.dq_dv, dq, n, n);
        columns(&mut out.dq_dtau, dq, 2 * n, n);
        columns(&mut out.dv_dq, dv, 0, n);
        columns(&mut out.dv_dv, dv, n, n);
        columns(&mut out.dv_dtau, dv, 2 * n, n);
        columns(&mut out.dq_dp, dq, 3 * n, np);
        columns(&mut out.dv_dp, dv, 3 * n, np);
        out.offsets.clear();
        out.offsets.extend_from_slice(&self.offsets);
    }
}

/// The dense products [`RigidStepParts::jacobian_into`] forms before splitting them into
/// blocks: dv⁺ and dq⁺ over all the inputs (n × (3n + P)), dλ (3m × (3n + P)), and the NCP
/// derivative's solve buffers.
#[derive(Debug, Default)]
pub(crate) struct JacobianScratch {
    dv: DMat,
    dq: DMat,
    dlambda: DMat,
    ncp: NcpSolveScratch,
}

/// Makes `m` an `r × c` matrix, reallocating only when its shape changes (contents then
/// unspecified: callers overwrite them).
pub(crate) fn reshape(m: &mut DMat, r: usize, c: usize) {
    if m.shape() != (r, c) {
        *m = DMat::zeros(r, c);
    }
}

impl Default for RigidStepJacobian {
    /// An empty Jacobian (no systems), to be filled by [`RigidStepJacobian::of_step_into`].
    fn default() -> Self {
        let e = || DMat::zeros(0, 0);
        RigidStepJacobian {
            offsets: Vec::new(),
            dq_dq: e(),
            dq_dv: e(),
            dq_dtau: e(),
            dv_dq: e(),
            dv_dv: e(),
            dv_dtau: e(),
            dq_dp: e(),
            dv_dp: e(),
        }
    }
}

impl RigidStepJacobian {
    /// The Jacobian of the step `stepper` just took from the rigid states `start` to `end`
    /// (what [`rigid_step_jacobian`] does after stepping; public for timing it alone).
    /// Errors as [`rigid_step_jacobian`].
    pub fn of_step(
        scene: &Scene,
        stepper: &Stepper,
        start: &[RigidState],
        end: &[RigidState],
        boundary: BoundaryGradient,
        parameters: &[Parameter],
    ) -> Result<RigidStepJacobian> {
        Ok(RigidStepParts::of_step(scene, stepper, start, end, boundary, parameters)?.jacobian())
    }

    /// [`Self::of_step`] into `self`, with the buffers of `ws`: once `self` and `ws` have held
    /// a Jacobian of the same scene with the same contact count, a call does not allocate
    /// (the NCP derivative is refilled in place, `contact::NcpDerivative::refill`;
    /// `tests/rigid_jacobian_no_alloc.rs`) — unless its reduced system is rank deficient,
    /// whose SVD allocates, or `parameters` holds a friction coefficient. Errors as
    /// [`rigid_step_jacobian`].
    #[allow(clippy::too_many_arguments)]
    pub fn of_step_into(
        &mut self,
        scene: &Scene,
        stepper: &Stepper,
        start: &[RigidState],
        end: &[RigidState],
        boundary: BoundaryGradient,
        parameters: &[Parameter],
        ws: &mut RigidJacobianWorkspace,
    ) -> Result<()> {
        let RigidJacobianWorkspace {
            parts,
            record,
            chain,
            scratch,
        } = ws;
        // A record built for another scene is replaced.
        let systems = &scene.rigid.systems;
        let fits = |r: &RigidRecord| {
            r.offsets.len() == systems.len() + 1
                && systems
                    .iter()
                    .zip(r.offsets.windows(2))
                    .all(|(s, w)| w[1] - w[0] == s.nv())
        };
        let rec = match record {
            Some(r) if fits(r) => {
                r.refill(scene, start, end)?;
                r
            }
            _ => record.insert(RigidRecord::new(scene, start, end)?),
        };
        parts.fill(scene, stepper, rec, chain, boundary, parameters)?;
        parts.jacobian_into(self, scratch);
        Ok(())
    }
}

/// The buffers [`RigidStepJacobian::of_step_into`] reuses from call to call (faer-style
/// explicit workspace): the step's record (with its own per-system algorithm buffers), the
/// rows' chain, the derivative's parts (with the NCP derivative's factorisation) and the
/// dense products of the Jacobian (with the NCP derivative's solve buffers).
pub struct RigidJacobianWorkspace {
    parts: RigidStepParts,
    record: Option<RigidRecord>,
    chain: RowChain,
    scratch: JacobianScratch,
}

impl Default for RigidJacobianWorkspace {
    /// Empty buffers: the first call sizes them.
    fn default() -> Self {
        RigidJacobianWorkspace {
            parts: RigidStepParts::empty(),
            record: None,
            chain: RowChain::empty(),
            scratch: JacobianScratch::default(),
        }
    }
}
