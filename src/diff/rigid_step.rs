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
//! dv⁺|_λ = ∂v⁺/∂q dq + ∂v⁺/∂v dv + h M⁻¹ (dτ + d(J(q)ᵀλ))         (scene::VelocityUpdateJacobian)
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

use crate::contact::{BoundaryGradient, NcpDerivative};
use crate::error::{Error, Result};
use crate::math::DMat;
use crate::scene::{RigidState, Scene, StepReport, Stepper};

use super::chain_rows::rigid_rows;
use super::contact_chain::{friction_directions, ncp_derivative};
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
    /// The NCP's derivative (None without rows).
    pub(crate) ncp: Option<NcpDerivative>,
    /// ∂q⁺/∂q, ∂q⁺/∂v⁺ (n × n) and ∂τ/∂q, ∂τ/∂v (diagonal, n each).
    pub(crate) jq: DMat,
    pub(crate) jv: DMat,
    pub(crate) dtau_dq: Vec<f64>,
    pub(crate) dtau_dv: Vec<f64>,
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
        check_rigid_parameters(scene, parameters)?;
        let h = scene.simulation.dt;
        let ws = stepper.rigid();
        let mut rec = RigidRecord::with_buffers(scene, start, end, ws.spare_buffers(&scene.rigid))?;
        let n = rec.n();
        let rows = rigid_rows(scene, ws, &rec)?;
        if rows.len() != ws.contacts().len() {
            return Err(Error::invalid(
                "rigid step derivative",
                "the step has rows between soft and rigid bodies: use the step's record (diff::Recorder) and StepDerivative",
            ));
        }
        let (v0, vp) = rec.velocities();
        let lambda = ws.lambda();
        let chain = RowChain::new(
            &scene.rigid,
            &rec.offsets,
            rows,
            Vec::new(),
            &ChainPoint {
                v_rigid: &v0,
                v_plus_rigid: &vp,
                v_soft: &[],
                v_plus_soft: &[],
                lambda,
                h,
            },
        )?;
        rec.set_force(scene, &chain.generalised_force());
        let m = chain.rows.len();
        let minv_h = rec.minv_h();
        let np = parameters.len();
        // dv⁺|_λ: the update's derivatives, plus h M⁻¹ d(Jᵀλ)/dq in the q columns, then a
        // column per parameter (a mass's ∂v⁺/∂m; zero for a friction coefficient).
        let mut dvl = DMat::zeros(n, 3 * n + np);
        dvl.columns_mut(0, 3 * n).copy_from(&rec.update);
        let coupled = minv_h * &chain.dforce;
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
        let mut dsigma = &chain.jac * &dvl;
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
        let mut dlambda_dp = DMat::zeros(3 * m, np);
        let mut ncp = None;
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
            let d = ncp_derivative(scene, group, boundary)?;
            // A friction coefficient moves λ itself, at the contacts sliding on its obstacle.
            let friction = friction_directions(group, &d);
            for (j, p) in parameters.iter().enumerate() {
                if let Parameter::Friction { obstacle } = *p
                    && let Some((_, t)) = friction.iter().find(|(o, _)| *o == obstacle)
                {
                    dlambda_dp.set_column(j, &crate::math::DVec::from_column_slice(t));
                }
            }
            ncp = Some(d);
        }
        let response = minv_h * chain.jac.transpose();
        ws.recycle_buffers(rec.take_buffers());
        Ok(RigidStepParts {
            response,
            dvl,
            dsigma,
            dlambda_dp,
            ncp,
            jq: rec.jq,
            jv: rec.jv,
            dtau_dq: rec.dtau_dq,
            dtau_dv: rec.dtau_dv,
            offsets: rec.offsets,
        })
    }

    /// Number of velocity coordinates n.
    pub(crate) fn n(&self) -> usize {
        *self.offsets.last().expect("non-empty")
    }

    /// The dense Jacobian (module doc): dλ = L dσ|_λ + ∂λ/∂p, dv⁺ = dv⁺|_λ + h M⁻¹ Jᵀ dλ,
    /// dq⁺ = J_q dq + J_v dv⁺, then the input's dependence on the state folded in.
    pub(crate) fn jacobian(&self) -> RigidStepJacobian {
        let n = self.n();
        let np = self.dlambda_dp.ncols();
        let mut dv = self.dvl.clone();
        if let Some(ncp) = &self.ncp {
            let mut dlambda = DMat::zeros(self.dsigma.nrows(), 3 * n + np);
            ncp.tangent_many(&self.dsigma, &mut dlambda);
            let mut direct = dlambda.columns_mut(3 * n, np);
            direct += &self.dlambda_dp;
            dv += &self.response * dlambda;
        }
        // dq⁺ = J_q [I 0 0 0] + J_v dv⁺.
        let mut dq = &self.jv * &dv;
        for (a, b) in dq.as_mut_slice()[..n * n]
            .iter_mut()
            .zip(self.jq.as_slice())
        {
            *a += b;
        }
        // The input's dependence on the state: column c of the q and v blocks gains column c
        // of the τ block times ∂τ_c/∂q_c and ∂τ_c/∂v_c (column-major, n rows).
        for mat in [&mut dq, &mut dv] {
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
        let columns = |m: &DMat, c0: usize, k: usize| {
            DMat::from_column_slice(n, k, &m.as_slice()[c0 * n..(c0 + k) * n])
        };
        RigidStepJacobian {
            dq_dq: columns(&dq, 0, n),
            dq_dv: columns(&dq, n, n),
            dq_dtau: columns(&dq, 2 * n, n),
            dv_dq: columns(&dv, 0, n),
            dv_dv: columns(&dv, n, n),
            dv_dtau: columns(&dv, 2 * n, n),
            dq_dp: columns(&dq, 3 * n, np),
            dv_dp: columns(&dv, 3 * n, np),
            offsets: self.offsets.clone(),
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
}
