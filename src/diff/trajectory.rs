//! Derivatives over trajectories: forward sensitivities (a few parameters, many steps) and the
//! reverse-mode adjoint (one backward sweep for a scalar loss of the states along the run,
//! whatever the number of parameters), with checkpointing under a memory bound.
//!
//! A loss L(s₀, s₁, …, s_T) of the states after each step gives one sweep: with s̄_T = ∂L/∂s_T,
//! for t = T − 1 down to 0, the step's VJP maps s̄_{t+1} to the cotangent of its start state and
//! of its parameters, and s̄_t = VJP(s̄_{t+1}) + ∂L/∂s_t. A parameter held constant over the run
//! sums every step's cotangent; a parameter whose value varies by step (an actuator's input
//! following knots or a command log) gets each step's cotangent on its own
//! ([`SeriesAdjoint::per_step`]), which the caller chains through what sets it. A trajectory's
//! start state is an input like the parameters.

use crate::contact::BoundaryGradient;
use crate::error::Result;
use crate::scene::{ContactMemory, Scene, State, StepReport};

use super::parameter::Parameter;
use super::record::{Recorder, StepRecord};
use super::step_derivative::{InputTangent, StepDerivative};
use super::tangent::StateTangent;

/// A stepper that carries forward sensitivities: after each step, the tangent of the state
/// with respect to each parameter of its list (zero at the start). Each step costs the forward
/// step plus one multi-right-hand-side solve with its own factorisation (one column per
/// parameter) and, once the tangents move x, one assembly of T_{v⁺} = ∂(K v⁺)/∂x.
pub struct SensitivityStepper {
    recorder: Recorder,
    derivative: StepDerivative,
    parameters: Vec<Parameter>,
    inputs: Vec<InputTangent>,
}

impl SensitivityStepper {
    /// Zero tangents for `parameters` of `scene`. Errors as [`Recorder::new`].
    pub fn new(scene: &Scene, parameters: &[Parameter]) -> Result<SensitivityStepper> {
        Ok(SensitivityStepper {
            recorder: Recorder::new(scene)?,
            derivative: StepDerivative::new(scene),
            parameters: parameters.to_vec(),
            inputs: (0..parameters.len())
                .map(|p| InputTangent {
                    state: StateTangent::zeros(scene),
                    parameters: (0..parameters.len())
                        .map(|q| if p == q { 1.0 } else { 0.0 })
                        .collect(),
                })
                .collect(),
        })
    }

    /// As [`SensitivityStepper::new`], followed by `directions`: further initial tangents
    /// (state seeds and parameter seeds, one [`InputTangent`] each, with one parameter entry
    /// per parameter), carried after the parameters' unit directions. Errors as
    /// [`Recorder::new`].
    pub fn with_directions(
        scene: &Scene,
        parameters: &[Parameter],
        directions: Vec<InputTangent>,
    ) -> Result<SensitivityStepper> {
        let mut stepper = SensitivityStepper::new(scene, parameters)?;
        stepper.inputs.extend(directions);
        Ok(stepper)
    }

    /// A stepper carrying the given initial tangents `inputs` (state seeds and parameter
    /// components, one entry per parameter of `parameters` each), and no others. Errors as
    /// [`Recorder::new`].
    pub fn from_inputs(
        scene: &Scene,
        parameters: &[Parameter],
        inputs: Vec<InputTangent>,
    ) -> Result<SensitivityStepper> {
        Ok(SensitivityStepper {
            recorder: Recorder::new(scene)?,
            derivative: StepDerivative::new(scene),
            parameters: parameters.to_vec(),
            inputs,
        })
    }

    /// Sets the component of direction `direction` along parameter `parameter` for the next
    /// steps: a parameter whose value changes from step to step with the direction (an input
    /// that follows a logged command through its gain) has a component of its own each step.
    pub fn set_parameter_component(&mut self, direction: usize, parameter: usize, value: f64) {
        self.inputs[direction].parameters[parameter] = value;
    }

    /// Advances `state` by one step and the tangents with it.
    pub fn step(&mut self, scene: &Scene, state: &mut State) -> Result<StepReport> {
        let (report, record) = self.recorder.step(scene, state)?;
        let outputs = self
            .derivative
            .jvp(scene, &record, &self.parameters, &self.inputs)?;
        for (input, out) in self.inputs.iter_mut().zip(outputs) {
            input.state = out;
        }
        self.recorder.recycle(record);
        Ok(report)
    }

    /// The tangent of the current state with respect to each parameter, in list order, then
    /// along each of the further directions ([`SensitivityStepper::with_directions`]).
    pub fn tangents(&self) -> impl Iterator<Item = &StateTangent> {
        self.inputs.iter().map(|i| &i.state)
    }
}

/// Forward sensitivities: advances `state` by `steps` steps and returns, per parameter, the
/// tangent of the final state (x, v) with respect to it ([`SensitivityStepper`]).
/// `progress` is called after every step with the number of steps done.
pub fn forward_sensitivities(
    scene: &Scene,
    state: &mut State,
    steps: usize,
    parameters: &[Parameter],
    progress: &mut dyn FnMut(usize),
) -> Result<Vec<StateTangent>> {
    let mut stepper = SensitivityStepper::new(scene, parameters)?;
    for s in 0..steps {
        stepper.step(scene, state)?;
        progress(s + 1);
    }
    Ok(stepper.tangents().cloned().collect())
}

/// Options of [`record_trajectory`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TapeOptions {
    /// Bound on the bytes of step records kept (factorisations and stiffness values); steps
    /// beyond it are recomputed during the backward sweep. Default 2 GiB.
    pub memory_limit: usize,
    /// How the records' NCP derivatives treat a contact at a mode boundary (default
    /// [`BoundaryGradient::OneSided`]; see [`Recorder::with_boundary`]).
    pub boundary: BoundaryGradient,
}

impl Default for TapeOptions {
    fn default() -> Self {
        TapeOptions {
            memory_limit: 2 << 30,
            boundary: BoundaryGradient::OneSided,
        }
    }
}

/// A recorded trajectory for the adjoint. It stores every step's start state (6n values per
/// body and step: the checkpoints) with what the step carried over from the one before
/// ([`crate::scene::ContactMemory`]: warm starts, idle candidates), so a recomputed step
/// repeats the recorded one bit for bit, and, while under [`TapeOptions::memory_limit`], every
/// step's [`StepRecord`] (the step's factorisation of A and K(x), about the size of the
/// Cholesky factor plus the matrix). A step whose record was not kept is recomputed from its
/// start state during the backward sweep (one more forward step each).
pub struct Tape {
    starts: Vec<State>,
    /// Each step's actuator inputs (per body, per actuator, in its own unit) when they were
    /// set step by step ([`record_trajectory_with`]), so that a recomputed step uses its own;
    /// empty when the scene's inputs held over the run.
    inputs: Vec<Vec<Vec<f64>>>,
    /// What each step carried over from the one before beside its start state (warm starts,
    /// screened-out candidates), so a recomputed step repeats the recorded one bit for bit.
    memories: Vec<ContactMemory>,
    records: Vec<Option<StepRecord>>,
    recorder: Recorder,
    /// Bytes of the records kept.
    pub record_bytes: usize,
}

impl Tape {
    /// Steps recorded.
    pub fn steps(&self) -> usize {
        self.starts.len()
    }

    /// The state step `t` (0-based, below [`Tape::steps`]) started from: the state after `t`
    /// steps of the run (t = 0: its start). The final state is the one the run left.
    pub fn start(&self, t: usize) -> &State {
        &self.starts[t]
    }

    /// Steps whose record was kept (the others are recomputed by the adjoint).
    pub fn kept_records(&self) -> usize {
        self.records.iter().filter(|r| r.is_some()).count()
    }
}

/// Advances `state` by `steps` steps of `scene`, recording what the adjoint needs (see
/// [`Tape`]). `progress` is called after every step.
pub fn record_trajectory(
    scene: &Scene,
    state: &mut State,
    steps: usize,
    options: TapeOptions,
    progress: &mut dyn FnMut(usize),
) -> Result<Tape> {
    let mut scene = scene.clone();
    record_steps(&mut scene, state, steps, options, None, progress)
}

/// What sets a step's inputs on the scene before it is taken: called with the step's index k
/// (0-based) and the scene.
pub type BeforeStep<'a> = &'a mut dyn FnMut(usize, &mut Scene) -> Result<()>;

/// [`record_trajectory`] for a run whose inputs change from step to step: `before_step(k,
/// scene)` sets step k's inputs on `scene` (knots, a command log) before the step is taken, and
/// the tape keeps every step's actuator inputs so that a recomputed step repeats the recorded
/// one. The adjoint is then taken with the scene as it ends (the inputs' values do not enter
/// a step's derivative, only which actuators are force-driven, which must not change).
pub fn record_trajectory_with(
    scene: &mut Scene,
    state: &mut State,
    steps: usize,
    options: TapeOptions,
    before_step: BeforeStep<'_>,
    progress: &mut dyn FnMut(usize),
) -> Result<Tape> {
    record_steps(scene, state, steps, options, Some(before_step), progress)
}

fn record_steps(
    scene: &mut Scene,
    state: &mut State,
    steps: usize,
    options: TapeOptions,
    mut before_step: Option<BeforeStep<'_>>,
    progress: &mut dyn FnMut(usize),
) -> Result<Tape> {
    let mut tape = Tape {
        starts: Vec::with_capacity(steps),
        inputs: Vec::new(),
        memories: Vec::with_capacity(steps),
        records: Vec::with_capacity(steps),
        recorder: Recorder::new(scene)?.with_boundary(options.boundary),
        record_bytes: 0,
    };
    for s in 0..steps {
        if let Some(set) = before_step.as_mut() {
            set(s, scene)?;
            tape.inputs.push(actuator_inputs(scene));
        }
        tape.starts.push(state.clone());
        tape.memories.push(tape.recorder.memory());
        let (_, record) = tape.recorder.step(scene, state)?;
        let bytes = record.bytes();
        if tape.record_bytes + bytes <= options.memory_limit {
            tape.record_bytes += bytes;
            tape.records.push(Some(record));
        } else {
            tape.recorder.recycle(record);
            tape.records.push(None);
        }
        progress(s + 1);
    }
    Ok(tape)
}

/// The gradient of a scalar loss of a trajectory's final state.
#[derive(Debug, Clone, PartialEq)]
pub struct AdjointResult {
    /// ∂loss/∂(start state).
    pub state: StateTangent,
    /// ∂loss/∂p for each parameter of the list.
    pub parameters: Vec<f64>,
}

/// The gradient of a scalar loss of the states along a trajectory ([`adjoint_series`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesAdjoint {
    /// ∂loss/∂(start state), the loss's own ∂L/∂s₀ included.
    pub state: StateTangent,
    /// ∂loss/∂p for each parameter of the list, held constant over the run: the sum over the
    /// steps of [`Self::per_step`].
    pub parameters: Vec<f64>,
    /// Per step t, the cotangent of each parameter as step t's input alone (empty unless asked
    /// for): what a parameter whose value varies by step chains through what sets it.
    pub per_step: Vec<Vec<f64>>,
}

/// The reverse-mode adjoint of a recorded trajectory for a final-state loss: given
/// `final_cotangent` = ∂loss/∂(final state), one backward sweep of step VJPs (one solve per step
/// and body with the recorded factorisations) gives ∂loss/∂(start state) and ∂loss/∂p for every
/// parameter. `scene` must be the scene the tape was recorded with. Consumes the tape's records.
pub fn adjoint(
    scene: &Scene,
    tape: &mut Tape,
    parameters: &[Parameter],
    final_cotangent: &StateTangent,
) -> Result<AdjointResult> {
    let steps = tape.steps();
    let result = adjoint_series(
        scene,
        tape,
        parameters,
        &mut |s| (s == steps).then(|| final_cotangent.clone()),
        false,
    )?;
    Ok(AdjointResult {
        state: result.state,
        parameters: result.parameters,
    })
}

/// The reverse-mode adjoint of a recorded trajectory for a loss of the states along it (module
/// doc): `cotangent_at(s)` is ∂L/∂s_s for the state after s steps (s = 0 the start, s = T the
/// final state; `None` where the loss does not read it). One backward sweep of step VJPs gives
/// ∂L/∂(start state), ∂L/∂p summed over the steps and, with `per_step`, each step's parameter
/// cotangents. `scene` must be the scene the tape was recorded with (its inputs at the end of
/// the run: a recomputed step takes its own from the tape). Consumes the tape's records.
pub fn adjoint_series(
    scene: &Scene,
    tape: &mut Tape,
    parameters: &[Parameter],
    cotangent_at: &mut dyn FnMut(usize) -> Option<StateTangent>,
    per_step: bool,
) -> Result<SeriesAdjoint> {
    let mut derivative = StepDerivative::new(scene);
    let steps = tape.starts.len();
    let mut cotangent = cotangent_at(steps).unwrap_or_else(|| StateTangent::zeros(scene));
    let mut grads = vec![0.0; parameters.len()];
    let mut each = if per_step {
        vec![Vec::new(); steps]
    } else {
        Vec::new()
    };
    let mut recompute_scene = None;
    for t in (0..steps).rev() {
        let record = match tape.records[t].take() {
            Some(r) => r,
            None => {
                let mut s = tape.starts[t].clone();
                tape.recorder.restore_memory(&tape.memories[t]);
                let at = match tape.inputs.get(t) {
                    Some(inputs) => {
                        let sc = recompute_scene.get_or_insert_with(|| scene.clone());
                        set_actuator_inputs(sc, inputs);
                        &*sc
                    }
                    None => scene,
                };
                tape.recorder.step(at, &mut s)?.1
            }
        };
        let vjp = derivative.vjp(scene, &record, parameters, &cotangent)?;
        tape.recorder.recycle(record);
        for (g, d) in grads.iter_mut().zip(&vjp.parameters) {
            *g += d;
        }
        if per_step {
            each[t] = vjp.parameters;
        }
        cotangent = vjp.state;
        if let Some(c) = cotangent_at(t) {
            cotangent.add(&c);
        }
    }
    tape.record_bytes = 0;
    Ok(SeriesAdjoint {
        state: cotangent,
        parameters: grads,
        per_step: each,
    })
}

/// Every actuator's input in its own unit, per body.
fn actuator_inputs(scene: &Scene) -> Vec<Vec<f64>> {
    (0..scene.bodies.len())
        .map(|b| {
            let act = scene.body_actuation(b);
            (0..act.actuators.len()).map(|i| act.input(i)).collect()
        })
        .collect()
}

/// Sets every actuator's input from [`actuator_inputs`]' output.
fn set_actuator_inputs(scene: &mut Scene, inputs: &[Vec<f64>]) {
    for (b, values) in inputs.iter().enumerate() {
        for (i, u) in values.iter().enumerate() {
            scene.actuation[b].set_input(i, *u);
        }
    }
}
