//! One step's derivatives from the current state (the crate's `diff` module): the parameter
//! Jacobian, JVP and VJP. The simulation's state is not advanced: the step is taken on a copy.

use diffsoro::diff::{
    InputTangent, Parameter, Recorder, StateTangent, StepDerivative, StepVjp, check_differentiable,
};
use diffsoro::scene::{Scene, State};

/// The recorder and derivative buffers of a scene, built on first use.
pub struct Derivatives {
    recorder: Recorder,
    derivative: StepDerivative,
}

impl Derivatives {
    /// Buffers for `scene`. Errors: a scene whose step is not differentiable.
    pub fn new(scene: &Scene) -> diffsoro::Result<Derivatives> {
        check_differentiable(scene)?;
        Ok(Derivatives {
            recorder: Recorder::new(scene)?,
            derivative: StepDerivative::new(scene),
        })
    }

    /// Tangents of (x⁺, v⁺) of one step of `scene` from `state` for each input direction.
    pub fn jvp(
        &mut self,
        scene: &Scene,
        state: &State,
        parameters: &[Parameter],
        inputs: &[InputTangent],
    ) -> diffsoro::Result<Vec<StateTangent>> {
        let mut s = state.clone();
        let (_, record) = self.recorder.step(scene, &mut s)?;
        let out = self.derivative.jvp(scene, &record, parameters, inputs);
        self.recorder.recycle(record);
        out
    }

    /// Cotangents of one step's inputs (start state, `parameters`) for the cotangent
    /// `output` of (x⁺, v⁺).
    pub fn vjp(
        &mut self,
        scene: &Scene,
        state: &State,
        parameters: &[Parameter],
        output: &StateTangent,
    ) -> diffsoro::Result<StepVjp> {
        let mut s = state.clone();
        let (_, record) = self.recorder.step(scene, &mut s)?;
        let out = self.derivative.vjp(scene, &record, parameters, output);
        self.recorder.recycle(record);
        out
    }
}

/// d x⁺/d p for each of `parameters` (one unit direction each, the state fixed).
pub fn parameter_jacobian(
    derivatives: &mut Derivatives,
    scene: &Scene,
    state: &State,
    parameters: &[Parameter],
) -> diffsoro::Result<Vec<StateTangent>> {
    let inputs: Vec<InputTangent> = (0..parameters.len())
        .map(|p| InputTangent {
            state: StateTangent::zeros(scene),
            parameters: (0..parameters.len())
                .map(|q| if p == q { 1.0 } else { 0.0 })
                .collect(),
        })
        .collect();
    derivatives.jvp(scene, state, parameters, &inputs)
}
