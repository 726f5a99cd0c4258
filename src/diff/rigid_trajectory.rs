//! Forward sensitivities of the rigid state along a run: the tangents of every free body's
//! and robot's `(q, v)` with respect to k directions of the initial state, of a constant
//! input and of the step's parameters (`mass:BODY`, `friction:OBSTACLE`, held over the run),
//! carried step by step by the rigid step's Jacobian ([`RigidStepJacobian`]):
//!
//! ```text
//! S_q⁺ = ∂q⁺/∂q S_q + ∂q⁺/∂v S_v + ∂q⁺/∂τ P S_τ + ∂q⁺/∂p S_p
//! S_v⁺ = ∂v⁺/∂q S_q + ∂v⁺/∂v S_v + ∂v⁺/∂τ P S_τ + ∂v⁺/∂p S_p
//! ```
//!
//! (N × k each, N the stacked velocity coordinates, q in the tangent spaces; S_p the
//! parameters' directions, P × k; P zeroes the coordinates whose input the effort limit
//! clamped in that step, where a change of the input changes nothing). Reverse mode
//! ([`RigidTape::adjoint`]) runs the transposed recursion backwards over the recorded steps
//! (`diff::rigid_step_vjp`, through each NCP's cotangent, so that the complementarity-aware
//! boundary of paper 003 §IV-D applies): one sweep gives the gradient of a loss on the final
//! state with respect to the whole initial state, the constant input and the parameters.

use crate::contact::BoundaryGradient;
use crate::error::{Error, Result};
use crate::math::DMat;
use crate::scene::{Scene, State, StepReport, Stepper};

use super::parameter::Parameter;
use super::rigid_step::{
    RigidStepParts, check_rigid_parameters, rigid_step_jacobian, rigid_step_parts,
};
use crate::contact::CotangentSide;

/// The tangents of the stacked rigid state after a run (N × k each).
#[derive(Debug, Clone, PartialEq)]
pub struct RigidSensitivity {
    /// `∂q_T/∂(inputs)` (tangent spaces).
    pub q: DMat,
    /// `∂v_T/∂(inputs)`.
    pub v: DMat,
    /// Steps whose rigid NCP stopped at its iteration limit.
    pub unconverged_steps: usize,
}

/// A stepper that carries the rigid forward sensitivities (module doc) along its steps.
pub struct RigidSensitivityStepper {
    stepper: Stepper,
    sensitivity: RigidSensitivity,
    tau: DMat,
    parameters: Vec<Parameter>,
    /// S_p (P × k).
    directions: DMat,
}

impl RigidSensitivityStepper {
    /// Tangents seeded by `seeds = [S_q, S_v, S_τ]` (N × k each: of the initial
    /// configuration, velocity, and of a constant input added to each robot's). Errors on
    /// seeds whose shapes do not match the scene, and as [`Stepper::new`].
    pub fn new(scene: &Scene, seeds: [&DMat; 3]) -> Result<RigidSensitivityStepper> {
        let k = seeds[0].ncols();
        Self::with_parameters(scene, seeds, &[], &DMat::zeros(0, k))
    }

    /// Tangents seeded by `seeds` ([`Self::new`]) and by `directions` (P × k) of the
    /// `parameters` (`mass:BODY`, `friction:OBSTACLE`). Errors as [`Self::new`], on
    /// directions whose shape does not match, and on a parameter of another kind.
    pub fn with_parameters(
        scene: &Scene,
        seeds: [&DMat; 3],
        parameters: &[Parameter],
        directions: &DMat,
    ) -> Result<RigidSensitivityStepper> {
        let n: usize = scene.rigid.systems.iter().map(|s| s.nv()).sum();
        let k = seeds[0].ncols();
        check_rigid_parameters(scene, parameters)?;
        if directions.shape() != (parameters.len(), k) {
            return Err(Error::invalid(
                "rigid sensitivity parameter directions",
                format!(
                    "must be {} × {k} (the parameters × directions), got {:?}",
                    parameters.len(),
                    directions.shape()
                ),
            ));
        }
        if seeds.iter().any(|s| s.shape() != (n, k)) {
            return Err(Error::invalid(
                "rigid sensitivity seeds",
                format!(
                    "must be {n} × {k} (the scene's rigid velocity coordinates × directions), got {:?}",
                    seeds.map(|s| s.shape())
                ),
            ));
        }
        Ok(RigidSensitivityStepper {
            stepper: Stepper::new(scene)?,
            sensitivity: RigidSensitivity {
                q: seeds[0].clone(),
                v: seeds[1].clone(),
                unconverged_steps: 0,
            },
            tau: seeds[2].clone(),
            parameters: parameters.to_vec(),
            directions: directions.clone(),
        })
    }

    /// One step of `scene` from `state`, the tangents carried along. Errors as
    /// [`rigid_step_jacobian`].
    pub fn step(&mut self, scene: &Scene, state: &mut State) -> Result<StepReport> {
        let (report, j) = rigid_step_jacobian(
            scene,
            &mut self.stepper,
            state,
            BoundaryGradient::OneSided,
            &self.parameters,
        )?;
        let s = &mut self.sensitivity;
        s.unconverged_steps += usize::from(!report.rigid.converged);
        // P S_τ: no change where the effort limit clamped the input in this step.
        let mut tau = self.tau.clone();
        for (k, free) in unclamped(scene, state).into_iter().enumerate() {
            if !free {
                tau.row_mut(k).fill(0.0);
            }
        }
        let q = &j.dq_dq * &s.q + &j.dq_dv * &s.v + &j.dq_dtau * &tau + &j.dq_dp * &self.directions;
        let v = &j.dv_dq * &s.q + &j.dv_dv * &s.v + &j.dv_dtau * &tau + &j.dv_dp * &self.directions;
        s.q = q;
        s.v = v;
        Ok(report)
    }

    /// The tangents after the steps taken.
    pub fn sensitivity(&self) -> &RigidSensitivity {
        &self.sensitivity
    }
}

/// Advances `state` by `steps` steps of `scene` and returns the tangents seeded by `seeds`
/// ([`RigidSensitivityStepper::new`]) after them; `progress(step)` is called after each step.
pub fn rigid_forward_sensitivities(
    scene: &Scene,
    state: &mut State,
    steps: usize,
    seeds: [&DMat; 3],
    progress: &mut dyn FnMut(usize),
) -> Result<RigidSensitivity> {
    let mut stepper = RigidSensitivityStepper::new(scene, seeds)?;
    for step in 0..steps {
        stepper.step(scene, state)?;
        progress(step + 1);
    }
    Ok(stepper.sensitivity.clone())
}

/// Per stacked coordinate, whether the input of the step that ended in `state` was applied
/// as given (not clamped by the effort limit; always for free bodies).
fn unclamped(scene: &Scene, state: &State) -> Vec<bool> {
    scene
        .rigid
        .systems
        .iter()
        .zip(&state.rigid)
        .flat_map(|(sys, st)| (0..sys.nv()).map(move |k| sys.input_unclamped(st, k)))
        .collect()
}

/// The recorded step derivatives of a rigid run, for reverse mode.
pub struct RigidTape {
    steps: Vec<(RigidStepParts, Vec<bool>)>,
}

/// The gradient of a loss on the final rigid state (stacked, N each).
#[derive(Debug, Clone, PartialEq)]
pub struct RigidGradient {
    /// With respect to the initial configuration (tangent spaces).
    pub q: Vec<f64>,
    /// With respect to the initial velocity.
    pub v: Vec<f64>,
    /// With respect to a constant input added to each robot's (zero where clamped).
    pub tau: Vec<f64>,
    /// With respect to the parameters the tape was recorded with
    /// ([`record_rigid_trajectory`]), in their order.
    pub parameters: Vec<f64>,
    /// Steps whose NCP cotangent relabelled tied contacts as closed (only with
    /// `BoundaryGradient::ComplementarityAware`).
    pub relabelled_steps: usize,
}

/// Advances `state` by `steps` steps of `scene`, recording each step's derivative with its
/// columns for `parameters` (`mass:BODY`, `friction:OBSTACLE`) and the side `boundary` its
/// NCP's cotangents take at contact-mode boundaries. Errors as [`rigid_step_jacobian`].
pub fn record_rigid_trajectory(
    scene: &Scene,
    state: &mut State,
    steps: usize,
    parameters: &[Parameter],
    boundary: BoundaryGradient,
) -> Result<RigidTape> {
    let mut stepper = Stepper::new(scene)?;
    let mut tape = Vec::with_capacity(steps);
    for _ in 0..steps {
        let (_, parts) = rigid_step_parts(scene, &mut stepper, state, boundary, parameters)?;
        tape.push((parts, unclamped(scene, state)));
    }
    Ok(RigidTape { steps: tape })
}

impl RigidTape {
    /// The gradient of a loss whose gradient on the final state is `(q_bar, v_bar)` (N each):
    /// the transposed recursion of the module doc, run backwards. Panics on lengths that are
    /// not the scene's N.
    pub fn adjoint(&self, q_bar: &[f64], v_bar: &[f64]) -> RigidGradient {
        let n = q_bar.len();
        assert_eq!(v_bar.len(), n, "one cotangent entry per rigid coordinate");
        let mut lq = crate::math::DVec::from_column_slice(q_bar);
        let mut lv = crate::math::DVec::from_column_slice(v_bar);
        let mut tau = crate::math::DVec::zeros(n);
        let np = self.steps.first().map_or(0, |(p, _)| p.dlambda_dp.ncols());
        let mut parameters = crate::math::DVec::zeros(np);
        let mut relabelled_steps = 0;
        for (parts, free) in self.steps.iter().rev() {
            assert_eq!(parts.n(), n, "one cotangent entry per rigid coordinate");
            let c = parts.vjp(&lq, &lv);
            for k in 0..n {
                if free[k] {
                    tau[k] += c.tau[k];
                }
            }
            parameters += c.parameters;
            relabelled_steps += usize::from(c.side != CotangentSide::Classified);
            lq = c.q;
            lv = c.v;
        }
        RigidGradient {
            q: lq.as_slice().to_vec(),
            v: lv.as_slice().to_vec(),
            tau: tau.as_slice().to_vec(),
            parameters: parameters.as_slice().to_vec(),
            relabelled_steps,
        }
    }
}
