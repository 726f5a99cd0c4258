//! Forward (JVP) and reverse (VJP) derivatives of one step from its [`StepRecord`]
//! (equations in the module doc of `diff`).

use faer::dyn_stack::{MemBuffer, MemStack};

use crate::error::{Error, Result};
use crate::fem::{ParameterDerivatives, StiffnessDerivativeState};
use crate::math::Vec3;
use crate::scene::Scene;

use super::parameter::Parameter;
use super::record::StepRecord;
use super::tangent::{BodyTangent, StateTangent, add_reduced, expand_nodes, reduce_nodes};

/// One input direction of a step: a tangent of the start state and one component per
/// parameter of the list the derivative is taken for.
#[derive(Debug, Clone, PartialEq)]
pub struct InputTangent {
    /// Direction in the start state (x, v).
    pub state: StateTangent,
    /// Direction in the parameters (same order as the parameter list).
    pub parameters: Vec<f64>,
}

/// The cotangents of a step's inputs for one output cotangent (reverse mode).
#[derive(Debug, Clone, PartialEq)]
pub struct StepVjp {
    /// Cotangent of the start state (x, v).
    pub state: StateTangent,
    /// Cotangent of each parameter of the list.
    pub parameters: Vec<f64>,
}

/// Per-body buffers of the step derivatives, allocated once per scene.
struct BodyBuffers {
    t: StiffnessDerivativeState,
    params: ParameterDerivatives,
    nodal: Vec<Vec3>,
    nodal2: Vec<Vec3>,
    nodal3: Vec<Vec3>,
    rows: Vec<(usize, Vec3)>,
    red: Vec<f64>,
    red2: Vec<f64>,
    columns: Vec<f64>,
    solve: MemBuffer,
    solve_columns: usize,
}

/// The derivatives of one step (forward and reverse mode), with reusable buffers.
pub struct StepDerivative {
    bodies: Vec<BodyBuffers>,
}

impl StepDerivative {
    /// Buffers for the bodies of `scene`.
    pub fn new(scene: &Scene) -> StepDerivative {
        StepDerivative {
            bodies: scene
                .bodies
                .iter()
                .map(|b| {
                    let n = b.node_count();
                    let nr = b.pattern().n();
                    BodyBuffers {
                        t: b.stiffness_derivative_state(),
                        params: b.parameter_derivatives_state(),
                        nodal: vec![Vec3::zeros(); n],
                        nodal2: vec![Vec3::zeros(); n],
                        nodal3: vec![Vec3::zeros(); n],
                        rows: Vec::new(),
                        red: vec![0.0; nr],
                        red2: vec![0.0; nr],
                        columns: Vec::new(),
                        solve: MemBuffer::new(faer::dyn_stack::StackReq::EMPTY),
                        solve_columns: 0,
                    }
                })
                .collect(),
        }
    }

    /// Forward mode: the tangents of (x⁺, v⁺) for each input direction, from the step's
    /// record (`scene` must be the scene the step was taken with). Per body, one assembly of
    /// T_{v⁺} when a direction moves x, one element pass for the material parameters when
    /// one is asked, then k right-hand sides solved together with the step's factor.
    ///
    /// Errors: a direction or parameter list of the wrong size, an element the law cannot
    /// evaluate.
    pub fn jvp(
        &mut self,
        scene: &Scene,
        record: &StepRecord,
        parameters: &[Parameter],
        inputs: &[InputTangent],
    ) -> Result<Vec<StateTangent>> {
        for (c, input) in inputs.iter().enumerate() {
            check_shape(scene, &input.state, &format!("input direction {c}"))?;
            if input.parameters.len() != parameters.len() {
                return Err(Error::invalid(
                    format!("input direction {c}"),
                    format!(
                        "has {} parameter components for {} parameters",
                        input.parameters.len(),
                        parameters.len()
                    ),
                ));
            }
        }
        let h = record.h;
        let k = inputs.len();
        let mut outputs: Vec<StateTangent> = (0..k).map(|_| StateTangent::zeros(scene)).collect();
        for (b, (body, rec)) in scene.bodies.iter().zip(&record.bodies).enumerate() {
            let buf = &mut self.bodies[b];
            let pattern = body.pattern();
            let dofs = pattern.dofs();
            let nr = pattern.n();
            let opts = body.options();
            let c_k = h * opts.rayleigh_stiffness + h * h;
            let act = scene.body_actuation(b);
            let moves_x = inputs.iter().any(|i| {
                i.state.bodies[b]
                    .positions
                    .iter()
                    .any(|p| *p != Vec3::zeros())
            });
            let material_params = parameters.iter().enumerate().any(|(p, q)| {
                matches!(q, Parameter::Material { body, .. } if *body == b)
                    && inputs.iter().any(|i| i.parameters[p] != 0.0)
            });
            if moves_x {
                body.assemble_stiffness_derivative(&rec.x, &rec.v_plus, &mut buf.t)?;
            }
            if material_params {
                body.evaluate_parameter_derivatives(&rec.x, &rec.v_plus, &mut buf.params)?;
            }
            buf.columns.resize(nr * k, 0.0);
            for (c, input) in inputs.iter().enumerate() {
                let tan = &input.state.bodies[b];
                let col = &mut buf.columns[c * nr..(c + 1) * nr];
                // M dv
                reduce_nodes(dofs, &tan.velocities, &mut buf.red);
                pattern.symmetric_product(body.mass_values(), &buf.red, col);
                if moves_x {
                    // −h K dx − c_K T_{v⁺} dx + h ∂(H_aᵀλ)/∂x dx
                    reduce_nodes(dofs, &tan.positions, &mut buf.red);
                    pattern.symmetric_product_add(&rec.stiffness, -h, &buf.red, col);
                    pattern.symmetric_product_add(&buf.t.values, -c_k, &buf.red, col);
                    if !act.actuators.is_empty() {
                        expand_nodes(dofs, &buf.red, &mut buf.nodal2);
                        buf.nodal.iter_mut().for_each(|f| *f = Vec3::zeros());
                        act.add_driven_force_derivative(&rec.x, h, &buf.nodal2, &mut buf.nodal);
                        add_reduced(dofs, &buf.nodal, 1.0, col);
                    }
                }
                for (p, q) in parameters.iter().enumerate() {
                    let dp = input.parameters[p];
                    if dp == 0.0 || q.body() != b {
                        continue;
                    }
                    match *q {
                        Parameter::Material { parameter, .. } => {
                            let i = parameter.index();
                            add_reduced(dofs, &buf.params.forces[i], h * dp, col);
                            add_reduced(dofs, &buf.params.stiffness_action[i], -c_k * dp, col);
                        }
                        Parameter::Actuator { index, .. } => {
                            buf.nodal.iter_mut().for_each(|f| *f = Vec3::zeros());
                            act.actuators[index].add_forces(
                                &rec.x,
                                h * dp,
                                &mut buf.rows,
                                &mut buf.nodal,
                            );
                            add_reduced(dofs, &buf.nodal, 1.0, col);
                        }
                    }
                }
            }
            if buf.solve_columns < k.max(1) {
                buf.solve = MemBuffer::new(rec.factor.solve_scratch(k.max(1)));
                buf.solve_columns = k.max(1);
            }
            rec.factor
                .solve_columns_in_place(&mut buf.columns, k, MemStack::new(&mut buf.solve));
            for (c, (input, out)) in inputs.iter().zip(&mut outputs).enumerate() {
                let col = &buf.columns[c * nr..(c + 1) * nr];
                let tan = &input.state.bodies[b];
                let o = &mut out.bodies[b];
                expand_nodes(dofs, col, &mut o.velocities);
                reduce_nodes(dofs, &tan.positions, &mut buf.red);
                for (r, d) in buf.red.iter_mut().zip(col) {
                    *r += h * d;
                }
                expand_nodes(dofs, &buf.red, &mut o.positions);
            }
        }
        Ok(outputs)
    }

    /// Reverse mode: the cotangents of the step's inputs (start state and `parameters`) for
    /// the cotangent `output` of (x⁺, v⁺): one solve A r̄ = v̄⁺ + h x̄⁺ per body (A is
    /// symmetric), then the transposed terms of the forward equation, with K r̄ and T_{v⁺} r̄
    /// from one element pass.
    ///
    /// Errors: a cotangent of the wrong shape, an element the law cannot evaluate.
    pub fn vjp(
        &mut self,
        scene: &Scene,
        record: &StepRecord,
        parameters: &[Parameter],
        output: &StateTangent,
    ) -> Result<StepVjp> {
        check_shape(scene, output, "output cotangent")?;
        let h = record.h;
        let mut result = StepVjp {
            state: StateTangent::zeros(scene),
            parameters: vec![0.0; parameters.len()],
        };
        for (b, (body, rec)) in scene.bodies.iter().zip(&record.bodies).enumerate() {
            let buf = &mut self.bodies[b];
            let pattern = body.pattern();
            let dofs = pattern.dofs();
            let opts = body.options();
            let c_k = h * opts.rayleigh_stiffness + h * h;
            let act = scene.body_actuation(b);
            let out = &output.bodies[b];
            // r̄ = A⁻¹ (v̄⁺ + h x̄⁺)
            reduce_nodes(dofs, &out.velocities, &mut buf.red);
            add_reduced(dofs, &out.positions, h, &mut buf.red);
            if buf.solve_columns < 1 {
                buf.solve = MemBuffer::new(rec.factor.solve_scratch(1));
                buf.solve_columns = 1;
            }
            rec.factor
                .solve_vec_in_place(&mut buf.red, MemStack::new(&mut buf.solve));
            let res: &mut BodyTangent = &mut result.state.bodies[b];
            // v̄ = M r̄
            pattern.symmetric_product(body.mass_values(), &buf.red, &mut buf.red2);
            expand_nodes(dofs, &buf.red2, &mut res.velocities);
            // x̄ = x̄⁺ − h K r̄ − c_K T_{v⁺} r̄ + h ∂(H_aᵀλ)/∂x r̄
            expand_nodes(dofs, &buf.red, &mut buf.nodal3); // r̄ per node
            body.stiffness_actions(
                &rec.x,
                &rec.v_plus,
                &buf.nodal3,
                &mut buf.t,
                &mut buf.nodal,
                &mut buf.nodal2,
            )?;
            reduce_nodes(dofs, &out.positions, &mut buf.red2);
            add_reduced(dofs, &buf.nodal, -h, &mut buf.red2);
            add_reduced(dofs, &buf.nodal2, -c_k, &mut buf.red2);
            if !act.actuators.is_empty() {
                buf.nodal.iter_mut().for_each(|f| *f = Vec3::zeros());
                act.add_driven_force_derivative(&rec.x, h, &buf.nodal3, &mut buf.nodal);
                add_reduced(dofs, &buf.nodal, 1.0, &mut buf.red2);
            }
            expand_nodes(dofs, &buf.red2, &mut res.positions);
            // parameters
            let material_params = parameters
                .iter()
                .any(|q| matches!(q, Parameter::Material { body, .. } if *body == b));
            if material_params {
                body.evaluate_parameter_derivatives(&rec.x, &rec.v_plus, &mut buf.params)?;
            }
            for (p, q) in parameters.iter().enumerate() {
                if q.body() != b {
                    continue;
                }
                let r = &buf.nodal3;
                result.parameters[p] += match *q {
                    Parameter::Material { parameter, .. } => {
                        let i = parameter.index();
                        h * dot(&buf.params.forces[i], r)
                            - c_k * dot(&buf.params.stiffness_action[i], r)
                    }
                    Parameter::Actuator { index, .. } => {
                        buf.nodal.iter_mut().for_each(|f| *f = Vec3::zeros());
                        act.actuators[index].add_forces(&rec.x, h, &mut buf.rows, &mut buf.nodal);
                        dot(&buf.nodal, r)
                    }
                };
            }
        }
        Ok(result)
    }
}

fn dot(a: &[Vec3], b: &[Vec3]) -> f64 {
    a.iter().zip(b).map(|(u, v)| u.dot(v)).sum()
}

/// Errors unless `t` has one entry per body and one row per node of each.
fn check_shape(scene: &Scene, t: &StateTangent, what: &str) -> Result<()> {
    let ok = t.bodies.len() == scene.bodies.len()
        && t.bodies.iter().zip(&scene.bodies).all(|(tb, b)| {
            tb.positions.len() == b.node_count() && tb.velocities.len() == b.node_count()
        });
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(
            what,
            "does not have one row per node of every soft body of the scene",
        ))
    }
}
