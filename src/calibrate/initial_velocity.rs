//! Initial-condition estimation for a free rigid body (paper 002 §V-A, paper 003 §V): a body
//! thrown or pushed along the floor slides and stops; from its observed final position,
//! recover components of its initial velocity by Levenberg–Marquardt on
//! `r(v₀) = c_T(v₀) − c_observed` (m), whose Jacobian `∂c_T/∂v₀` is the position part of the
//! rigid forward sensitivities (`diff::rigid_forward_sensitivities`), or, in a scene with
//! soft bodies, of the mixed step's (`diff::SensitivityStepper` seeded along v₀).

use super::levenberg_marquardt::{LeastSquares, LmOptions, LmResult, levenberg_marquardt};
use crate::diff::{InputTangent, SensitivityStepper, StateTangent, rigid_forward_sensitivities};
use crate::error::{Error, Result};
use crate::math::{DMat, DVec, Vec3};
use crate::scene::{RigidKind, Scene};

/// The least-squares problem of [`fit_initial_velocity`].
struct VelocityFit<'a> {
    scene: &'a Scene,
    system: usize,
    offset: usize,
    components: Vec<usize>,
    observed: Vec3,
    steps: usize,
}

impl LeastSquares for VelocityFit<'_> {
    fn evaluate(&mut self, params: &[f64]) -> Result<(DVec, DMat)> {
        let n: usize = self.scene.rigid.systems.iter().map(|s| s.nv()).sum();
        let mut state = self.scene.initial_state();
        let v = &mut state.rigid[self.system].v;
        for (&c, &x) in self.components.iter().zip(params) {
            v[c] = x;
        }
        let k = self.components.len();
        let jac = if self.scene.bodies.is_empty() {
            // Rigid bodies alone: the rigid step's sensitivities.
            let zero = DMat::zeros(n, k);
            let mut seed_v = DMat::zeros(n, k);
            for (j, &c) in self.components.iter().enumerate() {
                seed_v[(self.offset + c, j)] = 1.0;
            }
            let s = rigid_forward_sensitivities(
                self.scene,
                &mut state,
                self.steps,
                [&zero, &seed_v, &zero],
                &mut |_| {},
            )?;
            DMat::from_fn(3, k, |i, j| s.q[(self.offset + i, j)])
        } else {
            // With soft bodies (a body resting on or pushed across silicone): the mixed
            // step's forward sensitivities along each seeded component of v₀.
            let directions = self
                .components
                .iter()
                .map(|&c| {
                    let mut t = StateTangent::zeros(self.scene);
                    t.rigid[self.system].v[c] = 1.0;
                    InputTangent {
                        state: t,
                        parameters: Vec::new(),
                    }
                })
                .collect();
            let mut stepper = SensitivityStepper::with_directions(self.scene, &[], directions)?;
            for _ in 0..self.steps {
                stepper.step(self.scene, &mut state)?;
            }
            let tangents: Vec<&StateTangent> = stepper.tangents().collect();
            DMat::from_fn(3, k, |i, j| tangents[j].rigid[self.system].q[i])
        };
        let q = &state.rigid[self.system].q;
        let r = DVec::from_fn(3, |i, _| q[i] - self.observed[i]);
        Ok((r, jac))
    }
}

/// Fits the components `components` (indices into `[ċ; ω]`, world axes: 0–2 m/s, 3–5 rad/s)
/// of the initial velocity of the free body `body` of `scene` so that its centre ends at
/// `observed` (m) after `steps` steps, from the scene's initial velocity with those components
/// set to `guess`. Errors on an unknown or non-free body, a bad component, and as the
/// simulation does.
pub fn fit_initial_velocity(
    scene: &Scene,
    body: &str,
    components: &[usize],
    guess: &[f64],
    observed: Vec3,
    steps: usize,
) -> Result<LmResult> {
    let systems = &scene.rigid.systems;
    let system = systems
        .iter()
        .position(|s| s.name == body && s.kind() == RigidKind::FreeBody)
        .ok_or_else(|| {
            let known: Vec<&str> = systems
                .iter()
                .filter(|s| s.kind() == RigidKind::FreeBody)
                .map(|s| s.name.as_str())
                .collect();
            Error::invalid(
                format!("parameter `velocity:{body}`"),
                format!("the scene has no free rigid body `{body}` (it has {known:?})"),
            )
        })?;
    if components.is_empty() || components.iter().any(|&c| c > 5) || guess.len() != components.len()
    {
        return Err(Error::invalid(
            format!("parameter `velocity:{body}`"),
            "components are 0–5 of [ċ; ω], one guess each",
        ));
    }
    let offset = systems[..system].iter().map(|s| s.nv()).sum();
    let mut problem = VelocityFit {
        scene,
        system,
        offset,
        components: components.to_vec(),
        observed,
        steps,
    };
    let options = LmOptions {
        gradient_tolerance: 1e-16,
        loss_tolerance: 1e-16,
        ..LmOptions::default()
    };
    levenberg_marquardt(&mut problem, guess, &options)
}
