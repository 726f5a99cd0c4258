//! One step of QP inverse control of an effector (paper 004 §IV-D, Eq. 15-16): the effector's
//! linearisation with respect to the actuation from the recorded step (`diff::StepRecord`),
//! and the bounded least-squares QPs that choose the actuation of the next step.
//!
//! # The formulation, and why
//!
//! The step derivative's one-step sensitivity `∂x⁺/∂λ = h² A⁻¹ H̃` (`H̃ = σ H_aᵀ`, `A = (1 + hα)
//! M + (hβ + h²) K`) is tiny on a soft robot: the Trunk's first bending mode (≈ 10 rad/s) is
//! mass-dominated over a step (`(hβ + h²) ω² ≈ 0.1`), so one step moves the effector by
//! about 1 % of the quasi-static response. A controller that asks each step to land on the
//! target (one-step deadbeat) demands tensions a hundred times too large; one that feeds
//! the current error through a compliance winds up while the body lags (its first mode has
//! a 0.65 s period, 65 steps) and overshoots. A first version that scaled the one-step
//! sensitivity by `1 + β/h` (exact for a massless, stiffness-damped body) underestimated
//! the Trunk's compliance tenfold and chattered against the per-step limit.
//!
//! So the QP aims at the *static equilibrium* the body is heading to, computed exactly for
//! the linearised step. Implicit Euler's momentum balance after the step,
//! `M (v⁺ − v)/h = f(x) − h K v⁺ + f_ext + H̃ λ + H_cᵀ λ_c − (αM + βK) v⁺`, gives the net
//! static force at x⁺ (to first order) as `r(x⁺) = M ((v⁺ − v)/h + α v⁺) + β K v⁺`, and one
//! Newton step to equilibrium:
//!
//! ```text
//! x_eq = x⁺ + β v⁺ + K⁻¹ M ((v⁺ − v)/h + α v⁺)      (equilibrium under the current λ)
//! ∂x_eq/∂λ = K⁻¹ H̃                                 (the quasi-static compliance)
//! ```
//!
//! from the step's record (`diff::Recorder`: v, v⁺, K(xₙ), the factor's symbolic analysis)
//! and one numeric Cholesky factorisation of K with one (k+1)-column solve. Every load
//! (gravity, actuation, contact) enters through v and v⁺, so nothing is reassembled. Each
//! control step then solves
//!
//! ```text
//! Δλ₁ = argmin  ½‖p_eq + W Δλ − target‖² + ½ ε s ‖Δλ‖²,   W = J_e K⁻¹ H̃,  s = tr(WᵀW)/k
//!        s.t.    max(λ_lo − λ, −Δ_max) ≤ Δλ ≤ min(λ_hi − λ, Δ_max)
//! Δλ  = argmin  ½‖λ + Δλ‖² + ½ ε ‖Δλ‖²   s.t. the same bounds and W Δλ = W Δλ₁
//! ```
//!
//! (`J_e` the effector's barycentric weights; cables only pull: λ_lo = 0; λ_hi the actuator's
//! maximum; Δ_max the largest change per step) and applies λ + Δλ in the next step. The
//! second QP picks, among the changes with the same predicted effector position, the
//! smallest tensions: it fixes the actuation's null space (8 cables for 3 coordinates on the
//! Trunk) without biasing the effector, so antagonistic cables do not co-contract (a
//! compressed Trunk turns its tangent stiffness indefinite and the step eventually fails;
//! a single QP with a ‖λ + Δλ‖² term does the same only with a bias of the effector, 2 mm
//! on the Trunk at a weight that prevents co-contraction). This is one Gauss-Newton step per time step on the static map λ ↦ p_eq(λ)
//! with the state fed back; at a fixed point (v = v⁺ = 0, Δλ = 0) the effector sits where
//! the QP put it. K stands for the static tangent K + K_a, the force-driven cables' tangent
//! included (`scene::step::free::actuator_tangent`; the step holds it in A and in the damping, so the
//! prediction above stays exact to first order). Neglected: the contacts' compliance (with contact, `W` is the contact-free
//! compliance; the contact forces of the current step are in `p_eq`). When K is not
//! positive definite (the co-rotational tangent is exact, and indefinite in the Trunk's
//! compressed, gravity-sagged states) K + μM with μ = 10, 100, 1000 s⁻² stands in for it (a
//! damped Newton step; the search starts one rung below the last μ that worked, so it costs
//! about two factorisations per step), and last the step's own `A/(hβ + h²)`. The fixed point
//! does not depend on W when no bound is active, so a damped W slows convergence but does
//! not bias it (with active bounds the fixed point is a KKT point of the linearised problem).

use crate::actuator::EmbeddedPoint;
use crate::diff::{Parameter, StepRecord, check_differentiable};
use crate::error::{Error, Result};
use crate::fem::Stiffness;
use crate::linalg::NumericFactor;
use crate::math::{DMat, DVec, Vec3};
use crate::scene::{Scene, State};

use super::actuation_qp::ActuationQp;
use super::qp::{Qp, QpSolution, QpSolver, QpStatus};
use super::static_compliance::StaticCompliance;

/// Limits and weights of the inverse-control QP. The bounds on λ are not here: they are the
/// scene's (a cable's `[0, max_force]`, `[0, ∞)` without `max_force`; a cavity's
/// `[min_pressure, max_pressure]`; a servo's `±max_torque`), which `control --max-force`
/// sets ([`super::set_max_forces`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ControlOptions {
    /// Largest change of each λ per control step (the actuator's units), which keeps the
    /// steps small where the scene gives no maximum.
    pub max_change: f64,
    /// Relative weight ε of the regularisation ½ ε s ‖Δλ‖² of the change (s = tr(WᵀW)/k
    /// makes it independent of units).
    pub regularisation: f64,
}

impl Default for ControlOptions {
    /// `max_change = 0.02`, `regularisation = 1e-3`, sized for the Trunk's cables (N): 0.02 N
    /// per step (2 N/s) keeps the transients mild.
    fn default() -> Self {
        ControlOptions {
            max_change: 0.02,
            regularisation: 1e-3,
        }
    }
}

impl ControlOptions {
    /// The defaults with the values the scene's `[control]` section gives (validated when
    /// the scene was loaded).
    pub fn for_scene(scene: &Scene) -> ControlOptions {
        let defaults = ControlOptions::default();
        ControlOptions {
            max_change: scene.control.max_change.unwrap_or(defaults.max_change),
            regularisation: scene
                .control
                .regularisation
                .unwrap_or(defaults.regularisation),
        }
    }

    /// These options with the command line's `--regularisation` and `--max-change`, when
    /// given. Errors naming the flag: a regularisation that is not finite and ≥ 0, a change
    /// that is not finite and > 0.
    pub fn with_overrides(
        self,
        regularisation: Option<f64>,
        max_change: Option<f64>,
    ) -> Result<ControlOptions> {
        use crate::scene::{check_max_change, check_regularisation};
        check_regularisation("--regularisation", regularisation)?;
        check_max_change("--max-change", max_change)?;
        Ok(ControlOptions {
            max_change: max_change.unwrap_or(self.max_change),
            regularisation: regularisation.unwrap_or(self.regularisation),
        })
    }
}

/// The effector's linearisation after a step (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct Linearisation {
    /// The effector's position after the step, p⁺ (m).
    pub position: Vec3,
    /// The predicted equilibrium under the current actuation, p_eq (m).
    pub predicted: Vec3,
    /// W = J_e K⁻¹ H̃ (3 × k, m per unit of actuation), columns in actuator order.
    pub jacobian: DMat,
    /// Whether K (or K + μM) was positive definite (false: the step's A/(hβ + h²) stood in
    /// for it).
    pub stiffness_factored: bool,
    /// The shift μ (s⁻²) of K + μM used (0 when K itself was positive definite; ∞ when A
    /// stood in).
    pub shift: f64,
}

impl Linearisation {
    /// This linearisation with the effector `measured` (m) on the robot in place of the
    /// model's p⁺: position p_m and prediction p_m + (p_eq − p⁺), the measured effector
    /// moved as the model expects it to settle (`control::feedback`). W is the model's.
    pub fn measured(self, measured: Vec3) -> Linearisation {
        if measured == self.position {
            return self;
        }
        Linearisation {
            predicted: measured + (self.predicted - self.position),
            position: measured,
            ..self
        }
    }
}

/// The state of the inverse-control loop: which effector, which actuators (every force-driven
/// actuator of the scene, in [`crate::diff::every_parameter`] order), their bounds and current
/// λ, and the buffers of the step derivative.
pub struct InverseController {
    body: usize,
    effector: EmbeddedPoint,
    actuation: ActuationQp,
    /// The factor of K + K_a, reused across steps.
    compliance: StaticCompliance,
    columns: Vec<f64>,
    reduced: Vec<f64>,
}

impl InverseController {
    /// A controller of effector `effector` of `scene`, starting from the scene's forces
    /// (clamped into the scene's bounds, the only bounds on λ). Errors: a scene the derivatives do not cover
    /// ([`check_differentiable`]: target-driven actuators, full Newton, per-step force limits), an
    /// unknown effector, a scene without force-driven actuators, bad options.
    pub fn new(scene: &Scene, effector: &str, options: ControlOptions) -> Result<Self> {
        check_differentiable(scene)?;
        let found = (0..scene.bodies.len()).find_map(|b| {
            scene
                .body_actuation(b)
                .effectors
                .iter()
                .find(|e| e.name == effector)
                .map(|e| (b, e.point))
        });
        let Some((body, point)) = found else {
            return Err(Error::invalid(
                format!("effector `{effector}`"),
                "the scene has no such effector",
            ));
        };
        let actuation = ActuationQp::new(scene, options)?;
        Ok(InverseController {
            body,
            effector: point,
            actuation,
            compliance: StaticCompliance::new(scene, body)?,
            columns: Vec::new(),
            reduced: Vec::new(),
        })
    }

    /// The controlled actuators' names, in the order of [`InverseController::actuation`].
    pub fn actuators(&self) -> &[String] {
        self.actuation.actuators()
    }

    /// The current λ of each controlled actuator (N, Pa or N·m).
    pub fn actuation(&self) -> &[f64] {
        self.actuation.actuation()
    }

    /// Sets the λ of each controlled actuator, clamped into its bounds.
    pub fn set_actuation(&mut self, lambda: &[f64]) {
        self.actuation.set_actuation(lambda);
    }

    /// The controlled actuators as differentiable parameters (`diff::Parameter::Actuator`).
    pub fn parameters(&self) -> &[Parameter] {
        self.actuation.parameters()
    }

    /// The soft body carrying the effector.
    pub fn effector_body(&self) -> usize {
        self.body
    }

    /// The effector's position (m) for node positions (or a tangent of them) `x` of its body:
    /// the embedded point's barycentric combination, linear in `x`.
    pub fn effector_at(&self, x: &[Vec3]) -> Vec3 {
        self.effector.position(x)
    }

    /// The bounds [λ_lo, λ_hi] of each controlled actuator.
    pub fn bounds(&self) -> (&[f64], &[f64]) {
        self.actuation.bounds()
    }

    /// The options in use.
    pub fn options(&self) -> &ControlOptions {
        self.actuation.options()
    }

    /// The last QP's solution (None before the first [`InverseController::update`]).
    pub fn last_solution(&self) -> Option<&QpSolution> {
        self.actuation.last_solution()
    }

    /// The effector's position (m) in `state`.
    pub fn effector_position(&self, state: &State) -> Vec3 {
        self.effector.position(&state.bodies[self.body].positions)
    }

    /// Sets the current λ as the force of each controlled actuator of `scene`.
    pub fn apply(&self, scene: &mut Scene) -> Result<()> {
        self.actuation.apply(scene)
    }

    /// The effector's linearisation after the step recorded in `record`, `state` being the
    /// state it ended in (module doc): one numeric factorisation of K + K_a at xₙ and one
    /// (k+1)-column solve. No allocation after the first call.
    pub fn linearise(
        &mut self,
        scene: &Scene,
        record: &StepRecord,
        state: &State,
    ) -> Result<Linearisation> {
        let b = self.body;
        let model = &scene.bodies[b];
        let rec = &record.bodies[b];
        let h = record.h;
        let (alpha, beta) = (
            model.options().rayleigh_mass,
            model.options().rayleigh_stiffness,
        );
        let c_k = h * beta + h * h;
        let momentum = Momentum {
            v: &rec.v,
            v_plus: &rec.v_plus,
            h,
            alpha,
            beta,
        };
        let position = self.effector_position(state);
        self.linearise_at(
            scene,
            &rec.x,
            rec.stiffness(),
            &rec.actuator_forces,
            position,
            Some((momentum, rec.factor(), c_k)),
        )
    }

    /// The effector's linearisation at a static equilibrium `state` of `scene` (λ applied):
    /// position = prediction = the effector there, and W = J_e (K + K_a)⁻¹ H̃ at it, the
    /// static compliance ([`static_control`](super::static_control)). Errors: an element
    /// the law cannot evaluate.
    pub fn linearise_static(&mut self, scene: &Scene, state: &State) -> Result<Linearisation> {
        let b = self.body;
        let model = &scene.bodies[b];
        let x = &state.bodies[b].positions;
        let mut elastic = model.elastic_state();
        model.evaluate_elastic(x, Stiffness::Assemble, &mut elastic)?;
        let position = self.effector_position(state);
        let forces = state.actuator_forces[b].clone();
        self.linearise_at(scene, x, &elastic.stiffness, &forces, position, None)
    }

    /// The shared core of [`Self::linearise`] and [`Self::linearise_static`]: factorises
    /// K + K_a (`stiffness` = K at `x`, λ = `forces`), shifted by μM when indefinite, and
    /// solves for the compliance columns and, after a step (`step`: its momentum, its
    /// factor and c_K, the fallback when every shift fails), the equilibrium prediction.
    fn linearise_at(
        &mut self,
        scene: &Scene,
        x: &[Vec3],
        stiffness: &[f64],
        forces: &[f64],
        position: Vec3,
        step: Option<(Momentum, &NumericFactor, f64)>,
    ) -> Result<Linearisation> {
        let b = self.body;
        let model = &scene.bodies[b];
        let pattern = model.pattern();
        let dofs = pattern.dofs();
        let n = pattern.n();
        let k = self.actuation.parameters().len();
        let columns = k + 1;
        // K + μM for μ from the ladder (`StaticCompliance::factorize`), else A/(hβ + h²).
        let shift = self.compliance.factorize(
            scene,
            step.as_ref().map(|(_, f, _)| *f),
            x,
            stiffness,
            forces,
        )?;
        let factored = shift.is_some();
        let shift = shift.unwrap_or(f64::INFINITY);
        // Column 0: M ((v⁺ − v)/h + α v⁺) after a step (zero at equilibrium); column 1 + j:
        // H̃_j at x (zero for an actuator of another body).
        self.columns.clear();
        self.columns.resize(n * columns, 0.0);
        if let Some((m, _, _)) = &step {
            StaticCompliance::momentum_column(
                model,
                (m.v, m.v_plus),
                m.h,
                m.alpha,
                &mut self.reduced,
                &mut self.columns[..n],
            );
        }
        self.compliance.actuation_columns(
            scene,
            self.actuation.parameters(),
            x,
            &mut self.columns[n..],
        );
        if factored {
            self.compliance.solve(&mut self.columns, columns, None);
        } else if let Some((_, step_factor, c_k)) = &step {
            self.compliance
                .solve(&mut self.columns, columns, Some(step_factor));
            self.columns.iter_mut().for_each(|c| *c *= c_k);
        } else {
            return Err(Error::invalid(
                format!("soft_body.{}", model.name()),
                "the static tangent K + K_a is not positive definite at the equilibrium (an unstable equilibrium): no static compliance",
            ));
        }
        // J_e applied to each column.
        let effector = self.effector;
        let apply = |col: &[f64]| -> Vec3 {
            let mut out = Vec3::zeros();
            for (&node, &w) in effector.nodes.iter().zip(&effector.weights) {
                for c in 0..3 {
                    if let Some(r) = dofs.reduced_index(3 * node + c) {
                        out[c] += w * col[r];
                    }
                }
            }
            out
        };
        let mut jacobian = DMat::zeros(3, k);
        for j in 0..k {
            let d = apply(&self.columns[(j + 1) * n..(j + 2) * n]);
            jacobian.set_column(j, &d);
        }
        let predicted = match &step {
            Some((m, _, _)) => {
                let velocity = effector.position(m.v_plus);
                position + m.beta * velocity + apply(&self.columns[..n])
            }
            None => position,
        };
        Ok(Linearisation {
            position,
            predicted,
            jacobian,
            stiffness_factored: factored,
            shift,
        })
    }

    /// The QP of the module doc for `lin` and `target` (m), scaled so that its Hessian has a
    /// unit mean diagonal ([`ActuationQp::qp`]).
    pub fn qp(&self, lin: &Linearisation, target: Vec3) -> Qp {
        self.actuation.qp(&lin.jacobian, &residual(lin, target))
    }

    /// The second QP (module doc): the smallest actuation `‖λ + Δλ‖²` (plus ½ε‖Δλ‖²) among
    /// the changes that predict the same effector position as `first` (`W Δλ = W Δλ₁`),
    /// within the same bounds.
    pub fn null_space_qp(&self, first: &Qp, lin: &Linearisation, change: &DVec) -> Qp {
        self.actuation.null_space_qp(first, &lin.jacobian, change)
    }

    /// Solves the two QPs for `lin` and `target` with `solver` (the effector QP, then the
    /// smallest actuation giving the same prediction) and moves λ to λ + Δλ (clamped onto
    /// the bounds, which removes the interior point's 1e-10-sized slack). When the first QP
    /// is not solved λ is kept; when only the second fails, the first's change is used.
    /// Returns the first QP's status. Errors only for bad input.
    pub fn update(
        &mut self,
        lin: &Linearisation,
        target: Vec3,
        solver: &mut dyn QpSolver,
    ) -> Result<QpStatus> {
        self.actuation
            .update(&lin.jacobian, &residual(lin, target), solver)
    }
}

/// p_eq − target (m).
fn residual(lin: &Linearisation, target: Vec3) -> DVec {
    DVec::from_column_slice((lin.predicted - target).as_slice())
}

/// The momentum terms of a recorded step the equilibrium prediction needs.
struct Momentum<'a> {
    v: &'a [Vec3],
    v_plus: &'a [Vec3],
    h: f64,
    alpha: f64,
    beta: f64,
}
