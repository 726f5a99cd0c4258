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
//! over the free degrees of freedom: fixed nodes are removed from the system and keep v = 0;
//! the horn nodes of angle-driven servos are removed too but move with the horn
//! (`free::prescribed`, which adds their coupling to the free rows and computes the servo's
//! reaction torque).
//!
//! K_a = −∂f_a/∂x is the tangent of the force-driven cables (`free::actuator_tangent`): their
//! force is linearised at the end of the step like the elastic force, and the
//! stiffness-proportional damping uses the same total stiffness K̂. Both matter once cable
//! tension compresses a body past its own buckling load (the Trunk under ~1 N): the elastic
//! K is then indefinite and only the cables' bow-string stiffness K_a holds the body, so a
//! cable held at xₙ, or a damping βK without K_a (negative along the buckling mode), feeds
//! energy into every step and the robot never comes to rest.
//!
//! Actuators add h H_aᵀλ_a to the right-hand side (docs/step.md): force-driven ones with
//! their given λ, displacement-driven ones with λ solved in the same step
//! (`free::actuation`, which states the sign conventions). Full Newton
//! (`free::newton`) solves R(v⁺) = M(v⁺ − v) − h (f_ext + f(x + h v⁺) − D v⁺) = 0; its first
//! iteration, from the guess v⁺ = 0 (so x + h v⁺ = x), is exactly the linearised step above.
//!
//! Contact follows every body's free solve: each NCP is built with the same factorisations of
//! A and corrects v⁺ = v_free + A⁻¹ h H_cᵀ λ (with Newton, after the last iteration, with its
//! last factorisation); bodies that touch each other share one NCP, and rigid bodies and
//! robots join it. So [`Stepper::step`] is this list of stages, each in its folder:
//!
//! 1. `free`: every soft body's free velocity v_free (stages 1–4: forces and stiffness,
//!    actuator inputs, A and its factorisation, the right-hand side, Δv; Newton's iterations);
//! 2. `rigid`: the rigid systems' start (inputs, mass factors, free velocities, poses, their
//!    own contacts and limits);
//! 3. `contact`: detection over all bodies, one NCP per group of bodies that touch, and
//!    v⁺ = v_free + A⁻¹ h H_cᵀ λ (and the rigid systems' impulses);
//! 4. `update`: every soft body's v⁺, x⁺ and servo reactions (stage 5), and the rigid
//!    systems' q⁺.

use crate::error::Result;

use super::model::{Scene, State};
use clock::StageClock;
use contact::stage::{
    ContactBody, ContactMemory, ContactOutcome, RigidCoupling, SceneContactWorkspace,
    resolve_contacts,
};
use free::free_step::free_step;
use rigid::stage::{RigidOutcome, RigidWorkspace};
use update::update;

pub mod clock;
pub mod contact;
pub mod free;
pub mod rigid;
pub mod update;
pub mod workspace;

pub use free::workspace::FreeStageTimes;
pub use workspace::BodyWorkspace;

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
    /// An empty report for a scene of `bodies` soft bodies.
    fn new(bodies: usize) -> StepReport {
        StepReport {
            iterations: Vec::with_capacity(bodies),
            residuals: Vec::with_capacity(bodies),
            contact: Vec::new(),
            contact_converged: true,
            active_contacts: 0,
            rigid: RigidOutcome::default(),
            times: StageTimes::default(),
        }
    }

    /// Closes the step: the rigid stage's outcome joins the totals, and `state` counts the
    /// step, its active contacts and whether its NCPs converged.
    fn close(&mut self, state: &mut State, h: f64) {
        self.contact_converged &= self.rigid.converged;
        self.active_contacts += self.rigid.active;
        state.contacts = self.active_contacts;
        if !self.contact_converged {
            state.unconverged_steps += 1;
        }
        // Time as steps × dt, not a running sum (which drifts: 1e5 steps of 0.01 s summed
        // give 999.9999999992356 s).
        state.steps += 1;
        state.time = state.steps as f64 * h;
    }

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

/// The stepper: the scene's per-body workspaces (symbolic factorisation done once).
pub struct Stepper {
    bodies: Vec<BodyWorkspace>,
    contact: SceneContactWorkspace,
    rigid: RigidWorkspace,
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

    /// Advances `state` by one time step of `scene` (see the module doc for the equations and
    /// the stages). Errors: an element the law cannot evaluate (inverted), or A not positive
    /// definite.
    pub fn step(&mut self, scene: &Scene, state: &mut State) -> Result<StepReport> {
        let mut report = StepReport::new(scene.bodies.len());
        let mut clock = StageClock::start();
        self.free_stage(scene, state, &mut report)?;
        report.times.free = clock.lap();
        self.rigid_stage(scene, state)?;
        report.times.rigid = clock.lap();
        self.contact_stage(scene, state, &mut report)?;
        report.times.contact = clock.lap();
        self.update_stage(scene, state, &mut report);
        report.times.update = clock.lap();
        report.close(state, scene.simulation.dt);
        Ok(report)
    }

    /// Stages 1–4 of every soft body: v_free, the actuators' λ of this step.
    fn free_stage(
        &mut self,
        scene: &Scene,
        state: &mut State,
        report: &mut StepReport,
    ) -> Result<()> {
        let (h, g) = (scene.simulation.dt, scene.gravity());
        if state.actuator_forces.len() != scene.bodies.len() {
            state.actuator_forces = (0..scene.bodies.len())
                .map(|i| scene.body_actuation(i).initial_forces())
                .collect();
        }
        for (i, ((body, ws), bs)) in scene
            .bodies
            .iter()
            .zip(&mut self.bodies)
            .zip(&state.bodies)
            .enumerate()
        {
            let act = scene.body_actuation(i);
            let forces = &mut state.actuator_forces[i];
            let newton = scene.simulation.newton_iterations;
            let (iterations, residual) =
                free_step(body, act, &mut ws.free, bs, forces, h, g, newton)?;
            report.iterations.push(iterations);
            report.residuals.push(residual);
            report.times.free_parts.add(&ws.free.parts);
        }
        Ok(())
    }

    /// The rigid systems' start (`rigid::stage`): inputs, mass factors, free velocities, poses
    /// and their own contacts and limits.
    fn rigid_stage(&mut self, scene: &Scene, state: &mut State) -> Result<()> {
        if state.rigid.len() != scene.rigid.systems.len() {
            state.rigid = scene.initial_state().rigid;
        }
        self.rigid.prepare(
            &scene.rigid,
            &scene.contact,
            scene.simulation.dt,
            state.time,
            &scene.gravity(),
            &mut state.rigid,
        )
    }

    /// The contact stage (`contact::stage`): detect at xₙ, solve the NCPs with G from the
    /// factors of A just used (and the rigid M where soft meets rigid), and correct
    /// v⁺ = v_free + A⁻¹ h H_cᵀ λ.
    fn contact_stage(
        &mut self,
        scene: &Scene,
        state: &mut State,
        report: &mut StepReport,
    ) -> Result<()> {
        let mut contact_bodies: Vec<ContactBody> = scene
            .bodies
            .iter()
            .zip(&mut self.bodies)
            .zip(&state.bodies)
            .map(|((body, ws), bs)| ContactBody {
                dofs: body.pattern().dofs(),
                pattern: body.pattern(),
                a_values: &ws.free.a,
                factor: &ws.free.factor,
                state: bs,
                velocity: &mut ws.free.vp_red,
                workspace: &mut ws.contact,
            })
            .collect();
        report.contact = resolve_contacts(
            &scene.contact,
            scene.simulation.dt,
            &mut contact_bodies,
            &mut self.contact,
            Some(RigidCoupling {
                scene: &scene.rigid,
                coupling: &scene.coupling,
                ws: &mut self.rigid,
                states: &mut state.rigid,
            }),
        )?;
        report.contact_converged = report.contact.iter().all(|c| c.converged);
        report.active_contacts = self.contact.active_contacts();
        Ok(())
    }

    /// Stage 5 of every soft body (`update`): v⁺, x⁺ and the servos' reactions; and the rigid
    /// systems' end, q⁺ = q ⊕ h v⁺.
    fn update_stage(&mut self, scene: &Scene, state: &mut State, report: &mut StepReport) {
        let (h, g) = (scene.simulation.dt, scene.gravity());
        let linearised = scene.simulation.newton_iterations <= 1;
        for (i, ((body, ws), bs)) in scene
            .bodies
            .iter()
            .zip(&mut self.bodies)
            .zip(&mut state.bodies)
            .enumerate()
        {
            let act = scene.body_actuation(i);
            let forces = &mut state.actuator_forces[i];
            update(body, act, ws, bs, forces, h, g, linearised);
        }
        report.rigid = self.rigid.finish(&scene.rigid, h, &mut state.rigid);
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
