//! The time step: linearised implicit Euler (paper 004 Eq. 1, one Newton iteration as in
//! SOFA) by default, full Newton with a line search on the same equation when
//! `newton_iterations > 1`.
//!
//! Sign conventions (used by every derivative built on this step): f(x) = −∂E/∂x is the
//! internal elastic force, K = ∂²E/∂x² = −∂f/∂x the stiffness, D = αM + βK the Rayleigh
//! damping (K taken at the start of the step), and per body
//!
//! ```text
//! A Δv = h (f_ext + f(x) − D v) − h² K̂ v,     A = M + hD + h²K̂ = (1 + hα) M + (hβ + h²) K̂
//! v⁺ = v + Δv,   x⁺ = x + h v⁺,               K̂ = K + K_a,  D = αM + βK̂
//! ```
//!
//! where K_a = −∂f_a/∂x is the tangent of the force-driven cables (`scene::step::free::actuator_tangent`):
//! their force is linearised at the end of the step like the elastic force, and the
//! stiffness-proportional damping uses the same total stiffness K̂. Both matter once cable
//! tension compresses a body past its own buckling load (the Trunk under ~1 N): the elastic
//! K is then indefinite and only the cables' bow-string stiffness K_a holds the body, so a
//! cable held at xₙ, or a damping βK without K_a (negative along the buckling mode), feeds
//! energy into every step and the robot never comes to rest.
//!
//! over the free degrees of freedom (fixed nodes are removed from the system and keep v = 0;
//! the horn nodes of angle-driven servos are removed too but move with the horn,
//! `scene::step::free::prescribed`, which adds their coupling to the free rows and computes the servo's
//! reaction torque).
//! Actuators add h H_aᵀλ_a to the right-hand side (docs/step.md): force-driven ones with
//! their given λ, displacement-driven ones with λ solved in the same step
//! (`scene::model::actuation`, which states the sign conventions).
//! Contact (`scene::step::contact::stage`) follows every body's free solve: each NCP is built with the
//! same factorisations of A and corrects v⁺ = v_free + A⁻¹ h H_cᵀ λ (with Newton, after the
//! last iteration, with its last factorisation); bodies that touch each other share one NCP.
//! So a step is: every body's free step (stages 1–4, `step/free_step.rs`), the contact stage
//! over all bodies, and every body's update (stage 5).
//! Full Newton solves R(v⁺) = M(v⁺ − v) − h (f_ext + f(x + h v⁺) − D v⁺) = 0; its first
//! iteration, from the guess v⁺ = 0 (so x + h v⁺ = x), is exactly the linearised step above.
//! With displacement-driven actuators, R also holds −h Σ σλ H(xₙ)ᵀ of the solved ones and each
//! iteration re-solves their λ so that δ(xₖ) + h H(xₖ) d meets the targets (met exactly at
//! convergence); a full step is always tried, and iterating stops once the targets are met
//! and R no longer halves (its round-off floor).

use faer::dyn_stack::MemBuffer;

use crate::contact::ContactPoints;
use crate::error::Result;
use crate::fem::{ElasticState, SoftBody};
use crate::linalg::{FactorKind, FactorOrdering, NumericFactor, SymbolicFactor, SymbolicOptions};
use crate::math::Vec3;

use super::model::{BodyState, Scene, State};
use crate::scene::model::actuation::BodyActuation;
use crate::scene::step::contact::stage::{
    ContactBody, ContactMemory, ContactOutcome, RigidCoupling, SceneContactWorkspace,
    resolve_contacts,
};
use crate::scene::step::contact::workspace::ContactWorkspace;
use crate::scene::step::free::actuation::ActuationWorkspace;
use crate::scene::step::free::actuator_tangent::ActuatorTangent;
use crate::scene::step::free::prescribed::{PrescribedWorkspace, ReactionInputs, reaction_torques};
use crate::scene::step::rigid::stage::{RigidOutcome, RigidWorkspace};

pub mod contact;
pub mod free;
pub mod rigid;

use free::free_step::free_step;

/// Reusable per-body buffers of the step: allocated once, so a step allocates nothing.
pub struct BodyWorkspace {
    elastic: ElasticState,
    /// K(xₙ) at the start of the step (Rayleigh damping term), when Newton iterates.
    k_start: Vec<f64>,
    /// A's values on the body's pattern.
    a: Vec<f64>,
    factor: NumericFactor,
    solve_buffer: MemBuffer,
    /// Reduced (free-DOF) vectors.
    rhs: Vec<f64>,
    v_red: Vec<f64>,
    vp_red: Vec<f64>,
    tmp: Vec<f64>,
    direction: Vec<f64>,
    base: Vec<f64>,
    full: Vec<f64>,
    x_trial: Vec<Vec3>,
    actuation: ActuationWorkspace,
    /// Where the force-driven cables' tangent K_a goes in A (`scene::step::free::actuator_tangent`).
    tangent: ActuatorTangent,
    /// Nodal scratch: the free velocities, and K_a applied to them.
    nodal_v: Vec<Vec3>,
    nodal_f: Vec<Vec3>,
    prescribed: PrescribedWorkspace,
    /// v⁺ per node (stage 5).
    v_new: Vec<Vec3>,
    contact: ContactWorkspace,
    /// The parts of the last free step.
    free_parts: FreeStageTimes,
}

/// What one step did, per body: Newton iterations and final residual norm (N·s).
#[derive(Debug, Clone, PartialEq)]
pub struct StepReport {
    /// Newton iterations taken by each body (1 for the linearised step).
    pub iterations: Vec<usize>,
    /// ‖R(v⁺)‖₂ of each body at the end of the step (N·s), `None` for the linearised step
    /// (which does not evaluate it).
    pub residuals: Vec<Option<f64>>,
    /// The contact stage of each body (detected and active contacts, NCP status).
    pub contact: Vec<ContactOutcome>,
    /// Whether every contact NCP reached its tolerance (a status, not an error: the step
    /// keeps the solver's last iterate).
    pub contact_converged: bool,
    /// Active (sticking or sliding) contacts over the scene, each counted once (a contact
    /// between two bodies is in both bodies' outcomes), rigid contacts and limits included.
    pub active_contacts: usize,
    /// The rigid stage (free bodies and robots; `scene::step::rigid::stage`).
    pub rigid: RigidOutcome,
    /// Wall time of each stage of the step.
    pub times: StageTimes,
}

impl StepReport {
    /// The solver iterations (ADMM iterations or PGS sweeps) of the step's largest NCP: the
    /// soft bodies' groups and the rigid systems' own; 0 without contact.
    pub fn largest_ncp_iterations(&self) -> usize {
        self.contact
            .iter()
            .map(|c| c.iterations)
            .chain([self.rigid.iterations])
            .max()
            .unwrap_or(0)
    }
}

/// Wall time (s) of the stages of one step ([`Stepper::step`]), measured with the monotonic
/// clock around each (a few tens of nanoseconds each).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StageTimes {
    /// Stages 1–4 of every soft body: forces, stiffness, assembly of A, its numeric
    /// factorisation and the free velocity v_free (the step without contact).
    pub free: f64,
    /// The rigid systems' start: inputs, mass matrix factors, free velocities, poses and
    /// their own contacts and limits.
    pub rigid: f64,
    /// The contact stage: detection, the Delassus matrices, the NCPs and v⁺ = v_free + A⁻¹ h
    /// H_cᵀ λ (and the rigid systems' impulses).
    pub contact: f64,
    /// Stage 5 and the rigid end: x⁺, the servos' reactions, q⁺.
    pub update: f64,
    /// The parts of `free`, summed over the soft bodies.
    pub free_parts: FreeStageTimes,
}

/// Wall time (s) of the parts of the soft bodies' step without contact (`StageTimes::free`),
/// summed over the bodies: where a linearised implicit step spends its time beside the
/// factorisation it cannot avoid.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FreeStageTimes {
    /// Stage 1: every element's forces and stiffness at xₙ (the material law, the
    /// co-rotational polar factor) and their scatter into K.
    pub elastic: f64,
    /// Stages 1b–3: actuator inputs, A = (1 + hα) M + (hβ + h²)(K + K_a) and the right-hand
    /// side b (products with M and K). b is assembled while A is factorised: on two threads
    /// at once, so that this part and [`FreeStageTimes::factorisation`] overlap.
    pub assembly: f64,
    /// Stage 4: the numeric factorisation of A (on the symbolic analysis done once).
    pub factorisation: f64,
    /// Stage 4: the triangular solves for Δv, the displacement-driven actuators' solves, and
    /// Newton's further iterations when `newton_iterations` > 1.
    pub solve: f64,
}

/// The stepper: the scene's per-body workspaces (symbolic factorisation done once).
pub struct Stepper {
    bodies: Vec<BodyWorkspace>,
    contact: SceneContactWorkspace,
    rigid: RigidWorkspace,
}

impl BodyWorkspace {
    /// Buffers for `body` without actuators, with the symbolic analysis of its pattern.
    pub fn new(body: &SoftBody) -> Result<BodyWorkspace> {
        BodyWorkspace::with_actuation(body, &BodyActuation::default(), ContactPoints::Nodes, &[])
    }

    /// Buffers for `body` driven by the actuators of `act`, meeting obstacles and rigid
    /// shapes at `points`, with its `attached` nodes (held to rigid bodies; ascending, each
    /// once, `SoftRigid::attached_nodes`) eliminated last in
    /// its factorisation, so that their Delassus rows come from the factor's trailing block
    /// (`contact::assemble_delassus`). Errors when a node pinned by an angle-driven servo is
    /// not fixed in the body.
    pub fn with_actuation(
        body: &SoftBody,
        act: &BodyActuation,
        points: ContactPoints,
        attached: &[usize],
    ) -> Result<BodyWorkspace> {
        let pattern = body.pattern();
        let dofs = pattern.dofs();
        // Ascending and each once, as the nodes are.
        let last: Vec<usize> = attached
            .iter()
            .flat_map(|&node| (0..3).filter_map(move |p| dofs.reduced_index(3 * node + p)))
            .collect();
        let options = SymbolicOptions {
            ordering: if last.is_empty() {
                FactorOrdering::Amd
            } else {
                FactorOrdering::AmdWithLast(&last)
            },
            ..Default::default()
        };
        let symbolic = std::sync::Arc::new(SymbolicFactor::with_options(pattern, options)?);
        let factor = NumericFactor::new(symbolic, FactorKind::Llt);
        let solve_buffer = MemBuffer::new(factor.solve_scratch(1));
        let n = pattern.n();
        let actuation = ActuationWorkspace::new(act, body.node_count(), &factor);
        let contact = ContactWorkspace::new(body, points, &factor);
        let prescribed = PrescribedWorkspace::new(body, act)?;
        let tangent = ActuatorTangent::new(
            act,
            pattern,
            body.rest_positions(),
            &format!("soft_body.{}", body.name()),
        )?;
        Ok(BodyWorkspace {
            elastic: body.elastic_state(),
            k_start: vec![0.0; pattern.nnz()],
            a: vec![0.0; pattern.nnz()],
            factor,
            solve_buffer,
            rhs: vec![0.0; n],
            v_red: vec![0.0; n],
            vp_red: vec![0.0; n],
            tmp: vec![0.0; n],
            direction: vec![0.0; n],
            base: vec![0.0; n],
            full: vec![0.0; 3 * body.node_count()],
            x_trial: vec![Vec3::zeros(); body.node_count()],
            actuation,
            tangent,
            nodal_v: vec![Vec3::zeros(); body.node_count()],
            nodal_f: vec![Vec3::zeros(); body.node_count()],
            prescribed,
            v_new: vec![Vec3::zeros(); body.node_count()],
            contact,
            free_parts: FreeStageTimes::default(),
        })
    }
}

impl BodyWorkspace {
    /// The factorisation of the last step's matrix A = M + hD + h²K(xₙ) over the free DOFs
    /// (with full Newton, of the last iteration's Jacobian).
    pub fn factor(&self) -> &NumericFactor {
        &self.factor
    }

    /// The last step's matrix A (lower triangle on the body's pattern, the values its
    /// [`Self::factor`] factorised; kg): `diffsoro bench` times a bare refactorisation of it.
    pub fn step_matrix(&self) -> &[f64] {
        &self.a
    }

    /// K(xₙ) of the last linearised step on the body's pattern (N/m): the stiffness the
    /// step's derivatives need (with full Newton, K at the last iterate).
    pub fn stiffness(&self) -> &[f64] {
        &self.elastic.stiffness
    }

    /// f(xₙ), the elastic forces of the last linearised step (N, every node).
    pub fn forces(&self) -> &[Vec3] {
        &self.elastic.forces
    }

    /// The contact stage's buffers after the last step (its contacts, λ, Delassus matrix).
    pub fn contact(&self) -> &ContactWorkspace {
        &self.contact
    }

    /// Exchanges the factorisation with `other` (built on the same symbolic analysis), so a
    /// caller can keep a step's factor without copying it; the next step refactorises.
    ///
    /// Panics if `other` was analysed for another pattern.
    pub fn swap_factor(&mut self, other: &mut NumericFactor) {
        assert!(
            std::sync::Arc::ptr_eq(self.factor.symbolic(), other.symbolic()),
            "swap_factor: another symbolic analysis"
        );
        std::mem::swap(&mut self.factor, other);
    }

    /// Whether the step keeps what derivative passes reuse instead of computing again (a
    /// `diff::Recorder`'s stepper): every element's material point
    /// ([`crate::fem::ElasticState::keep_material_points`]) and every column `A⁻¹ H_cᵀ` of its
    /// Delassus matrices ([`crate::contact::DelassusWorkspace::keep_columns`]).
    pub fn keep_for_derivatives(&mut self, keep: bool) {
        self.elastic.keep_material_points(keep);
        self.contact.delassus_ws.keep_columns(keep);
    }

    /// Exchanges the kept material points of the last step with `other`, like
    /// [`Self::swap_factor`] (the next step refills them).
    pub fn swap_material_points(&mut self, other: &mut Vec<crate::material::MaterialPoint>) {
        std::mem::swap(&mut self.elastic.points, other);
    }

    /// Exchanges the stiffness values with `other` (same length), like [`Self::swap_factor`].
    pub fn swap_stiffness(&mut self, other: &mut Vec<f64>) {
        assert_eq!(other.len(), self.elastic.stiffness.len(), "swap_stiffness");
        std::mem::swap(&mut self.elastic.stiffness, other);
    }
}

impl Stepper {
    /// Workspaces for every body of `scene`.
    pub fn new(scene: &Scene) -> Result<Stepper> {
        Ok(Stepper {
            bodies: scene
                .bodies
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    BodyWorkspace::with_actuation(
                        b,
                        scene.body_actuation(i),
                        scene.contact.points(i),
                        &scene.coupling.attached_nodes(i),
                    )
                })
                .collect::<Result<_>>()?,
            contact: SceneContactWorkspace::default(),
            rigid: RigidWorkspace::new(&scene.rigid),
        })
    }

    /// The buffers of body `i` after the last step.
    pub fn body(&self, i: usize) -> &BodyWorkspace {
        &self.bodies[i]
    }

    /// The buffers of body `i`, mutable (to swap out its factorisation, see
    /// [`BodyWorkspace::swap_factor`]).
    pub fn body_mut(&mut self, i: usize) -> &mut BodyWorkspace {
        &mut self.bodies[i]
    }

    /// Advances `state` by one time step of `scene` (see the module doc for the equations).
    /// Errors: an element the law cannot evaluate (inverted), or A not positive definite.
    pub fn step(&mut self, scene: &Scene, state: &mut State) -> Result<StepReport> {
        let h = scene.simulation.dt;
        let g = scene.gravity();
        let newton = scene.simulation.newton_iterations;
        let mut report = StepReport {
            iterations: Vec::new(),
            residuals: Vec::new(),
            contact: Vec::new(),
            contact_converged: true,
            active_contacts: 0,
            rigid: RigidOutcome::default(),
            times: StageTimes::default(),
        };
        let mut clock = std::time::Instant::now();
        let mut lap = || {
            let now = std::time::Instant::now();
            let dt = (now - clock).as_secs_f64();
            clock = now;
            dt
        };
        if state.actuator_forces.len() != scene.bodies.len() {
            state.actuator_forces = (0..scene.bodies.len())
                .map(|i| scene.body_actuation(i).initial_forces())
                .collect();
        }
        // Stages 1–4 of every body: v_free.
        for (i, ((body, ws), bs)) in scene
            .bodies
            .iter()
            .zip(&mut self.bodies)
            .zip(&state.bodies)
            .enumerate()
        {
            let act = scene.body_actuation(i);
            let forces = &mut state.actuator_forces[i];
            let (iterations, residual) = free_step(body, act, ws, bs, forces, h, g, newton)?;
            report.iterations.push(iterations);
            report.residuals.push(residual);
            let (sum, part) = (&mut report.times.free_parts, ws.free_parts);
            sum.elastic += part.elastic;
            sum.assembly += part.assembly;
            sum.factorisation += part.factorisation;
            sum.solve += part.solve;
        }
        report.times.free = lap();
        // The rigid systems' start (scene::step::rigid::stage): input, M factor, v_free, poses and
        // their own contacts.
        if state.rigid.len() != scene.rigid.systems.len() {
            state.rigid = scene.initial_state().rigid;
        }
        self.rigid.prepare(
            &scene.rigid,
            &scene.contact,
            h,
            state.time,
            &g,
            &mut state.rigid,
        )?;
        report.times.rigid = lap();
        // Stage 4c: contact (scene::step::contact::stage): detect at xₙ, solve the NCPs with G from
        // the factors of A just used (and the rigid M where soft meets rigid), and correct
        // v⁺ = v_free + A⁻¹ h H_cᵀ λ.
        let mut contact_bodies: Vec<ContactBody> = scene
            .bodies
            .iter()
            .zip(&mut self.bodies)
            .zip(&state.bodies)
            .map(|((body, ws), bs)| ContactBody {
                dofs: body.pattern().dofs(),
                pattern: body.pattern(),
                a_values: &ws.a,
                factor: &ws.factor,
                state: bs,
                velocity: &mut ws.vp_red,
                workspace: &mut ws.contact,
            })
            .collect();
        report.contact = resolve_contacts(
            &scene.contact,
            h,
            &mut contact_bodies,
            &mut self.contact,
            Some(RigidCoupling {
                scene: &scene.rigid,
                coupling: &scene.coupling,
                ws: &mut self.rigid,
                states: &mut state.rigid,
            }),
        )?;
        drop(contact_bodies);
        report.times.contact = lap();
        report.contact_converged = report.contact.iter().all(|c| c.converged);
        report.active_contacts = self.contact.active_contacts();
        // Stage 5 of every body: v⁺, x⁺ and the servos' reactions.
        for (i, ((body, ws), bs)) in scene
            .bodies
            .iter()
            .zip(&mut self.bodies)
            .zip(&mut state.bodies)
            .enumerate()
        {
            let act = scene.body_actuation(i);
            let forces = &mut state.actuator_forces[i];
            update(body, act, ws, bs, forces, h, g, newton);
        }
        // The rigid systems' end: q⁺ = q ⊕ h v⁺.
        report.rigid = self.rigid.finish(&scene.rigid, h, &mut state.rigid);
        report.times.update = lap();
        report.contact_converged &= report.rigid.converged;
        report.active_contacts += report.rigid.active;
        state.contacts = report.active_contacts;
        if !report.contact_converged {
            state.unconverged_steps += 1;
        }
        // Time as steps × dt, not a running sum (which drifts: 1e5 steps of 0.01 s summed
        // give 999.9999999992356 s).
        state.steps += 1;
        state.time = state.steps as f64 * h;
        Ok(report)
    }

    /// The contact stage's shared buffers after the last step (contacts between bodies).
    pub fn contact(&self) -> &SceneContactWorkspace {
        &self.contact
    }

    /// What the next step carries over from the last beside the state (its NCPs' warm starts
    /// and screened-out candidates, [`ContactMemory`]): saved with a state, and restored with
    /// [`Self::restore_memory`] before stepping from it again, the step repeats bit for bit
    /// when the bodies keep their material points (a `diff::Recorder`'s stepper). A plain
    /// stepper's co-rotational elements also start their polar decomposition from their last
    /// rotation (docs/step.md), which is not part of the memory: its repeat agrees to
    /// round-off.
    pub fn memory(&self) -> ContactMemory {
        self.contact.memory()
    }

    /// Restores what [`Self::memory`] took.
    pub fn restore_memory(&mut self, memory: &ContactMemory) {
        self.contact.restore_memory(memory);
    }

    /// The rigid stage's buffers after the last step (its contacts and λ).
    pub fn rigid(&self) -> &RigidWorkspace {
        &self.rigid
    }
}

/// Stage 5 of one body, after the contact stage: v⁺ and x⁺ from `ws.vp_red`, and the pinned
/// servos' reaction torques.
#[allow(clippy::too_many_arguments)]
fn update(
    body: &SoftBody,
    act: &BodyActuation,
    ws: &mut BodyWorkspace,
    bs: &mut BodyState,
    forces: &mut [f64],
    h: f64,
    g: Vec3,
    newton: usize,
) {
    let dofs = body.pattern().dofs();
    // Stage 5: v⁺ (fixed nodes keep v = 0, prescribed ones get v_p⁺) and x⁺ = x + h v⁺.
    ws.full.fill(0.0); // fixed nodes keep v = 0
    dofs.expand(&ws.vp_red, &mut ws.full);
    ws.prescribed.fill_full(&mut ws.full);
    for (n, (v, x)) in ws.v_new.iter_mut().zip(ws.x_trial.iter_mut()).enumerate() {
        *v = Vec3::new(ws.full[3 * n], ws.full[3 * n + 1], ws.full[3 * n + 2]);
        *x = bs.positions[n] + h * *v;
    }
    // Stage 5b: the pinned servos' reaction torques (their λ), from the momentum balance of
    // the prescribed nodes.
    reaction_torques(
        body,
        act,
        &mut ws.prescribed,
        &ReactionInputs {
            v_old: &bs.velocities,
            v_new: &ws.v_new,
            x_new: &ws.x_trial,
            elastic: &ws.elastic.forces,
            actuators: ws.actuation.nodal_forces(),
            linearised: newton <= 1,
        },
        h,
        g,
        forces,
    );
    bs.velocities.copy_from_slice(&ws.v_new);
    bs.positions.copy_from_slice(&ws.x_trial);
}
