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
//! `J(q)` depends on q through the twists of the coordinates (a joint moves the axes after it:
//! `∂T_k/∂q_j = T_j × T_k`) and through the contact point, frame and gap, which move with both
//! bodies (`contact::contact_geometry_jacobian`, by the bodies' twists). A PD input adds
//! `∂τ/∂q = −kp`, `∂τ/∂v = −kd` (zero where the effort limit clamps it). A joint limit's row
//! has a constant J and `dΦ = ±dq_k`.

use crate::contact::BoundaryGradient;
use crate::error::{Error, Result};
use crate::math::DMat;
use crate::scene::{RigidState, Scene, StepReport, Stepper};

use super::chain_rows::rigid_rows;
use super::contact_chain::ncp_derivative;
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
}

/// Advances `state` by one step of `scene` with `stepper` and returns the step's report and
/// the Jacobian of its rigid part. Errors as [`check_differentiable`] and [`Stepper::step`],
/// and when a contact changes features within the geometry's differentiation step.
pub fn rigid_step_jacobian(
    scene: &Scene,
    stepper: &mut Stepper,
    state: &mut crate::scene::State,
    boundary: BoundaryGradient,
) -> Result<(StepReport, RigidStepJacobian)> {
    check_differentiable(scene)?;
    let start = state.rigid.clone();
    let report = stepper.step(scene, state)?;
    let jac = RigidStepJacobian::of_step(scene, stepper, &start, &state.rigid, boundary)?;
    Ok((report, jac))
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
    ) -> Result<RigidStepJacobian> {
        let h = scene.simulation.dt;
        let ws = stepper.rigid();
        let mut rec = RigidRecord::new(scene, start, end)?;
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
        // dv⁺|_λ: the update's derivatives, plus h M⁻¹ d(Jᵀλ)/dq in the q columns.
        let mut dvl = rec.update.clone();
        let coupled = minv_h * &chain.dforce;
        for r in 0..n {
            for c in 0..n {
                dvl[(r, c)] += coupled[(r, c)];
            }
        }
        let mut dv = dvl.clone();
        if m > 0 {
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
            let ncp = ncp_derivative(scene, group, boundary)?;
            let mut dlambda = DMat::zeros(3 * m, 3 * n);
            ncp.tangent_many(&dsigma, &mut dlambda);
            dv += minv_h * chain.jac.transpose() * dlambda;
        }
        // dq⁺ = J_q [I 0 0] + J_v dv⁺.
        let mut dq = &rec.jv * &dv;
        for r in 0..n {
            for c in 0..n {
                dq[(r, c)] += rec.jq[(r, c)];
            }
        }
        // The input's dependence on the state.
        for mat in [&mut dq, &mut dv] {
            for c in 0..n {
                for r in 0..n {
                    let t = mat[(r, 2 * n + c)];
                    mat[(r, c)] += t * rec.dtau_dq[c];
                    mat[(r, n + c)] += t * rec.dtau_dv[c];
                }
            }
        }
        let block = |m: &DMat, k: usize| m.columns(k * n, n).into_owned();
        Ok(RigidStepJacobian {
            dq_dq: block(&dq, 0),
            dq_dv: block(&dq, 1),
            dq_dtau: block(&dq, 2),
            dv_dq: block(&dv, 0),
            dv_dv: block(&dv, 1),
            dv_dtau: block(&dv, 2),
            offsets: rec.offsets,
        })
    }
}
