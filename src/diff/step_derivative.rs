//! Forward (JVP) and reverse (VJP) derivatives of one step from its [`StepRecord`]
//! (equations in the module doc of `diff`).

use faer::dyn_stack::{MemBuffer, MemStack};

use crate::actuator::Drive;
use crate::error::{Error, Result};
use crate::fem::{MaterialParameter, ParameterDerivatives, StiffnessDerivativeState};
use crate::math::{DMat, Vec3};
use crate::scene::{PrescribedDerivative, Scene};

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
    /// Per material parameter (E, ν): its column of the right-hand side,
    /// h ∂f/∂p − c_K ∂(K v⁺)/∂p over the free DOFs, when computed for the current record.
    material_rhs: [Vec<f64>; 2],
    nodal: Vec<Vec3>,
    nodal2: Vec<Vec3>,
    nodal3: Vec<Vec3>,
    rows: Vec<(usize, Vec3)>,
    red: Vec<f64>,
    red2: Vec<f64>,
    columns: Vec<f64>,
    solve: MemBuffer,
    solve2: MemBuffer,
    /// dλ_c of the last forward pass (3 rows per contact, one column per direction).
    contact_force_tangents: DMat,
    /// Columns `solve` and `solve2` each hold scratch for.
    solve_columns: usize,
    /// The pinned servos' derivatives (`scene::prescribed_derivative`).
    prescribed: PrescribedDerivative,
    /// dθ⁺ per direction and pinned servo (direction-major).
    dtheta: Vec<f64>,
    /// Pinned rows: dx_p⁺ / x̄_p and dv_p⁺ / v̄_p⁺ scratch, and M r̄ (per node).
    pinned_x: Vec<Vec3>,
    pinned_v: Vec<Vec3>,
    pinned_m: Vec<Vec3>,
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
                .enumerate()
                .map(|(i, b)| {
                    let n = b.node_count();
                    let nr = b.pattern().n();
                    BodyBuffers {
                        t: b.stiffness_derivative_state(),
                        params: b.parameter_derivatives_state(),
                        material_rhs: [vec![0.0; nr], vec![0.0; nr]],
                        nodal: vec![Vec3::zeros(); n],
                        nodal2: vec![Vec3::zeros(); n],
                        nodal3: vec![Vec3::zeros(); n],
                        rows: Vec::new(),
                        red: vec![0.0; nr],
                        red2: vec![0.0; nr],
                        columns: Vec::new(),
                        solve: MemBuffer::new(faer::dyn_stack::StackReq::EMPTY),
                        solve2: MemBuffer::new(faer::dyn_stack::StackReq::EMPTY),
                        contact_force_tangents: DMat::zeros(0, 0),
                        solve_columns: 0,
                        prescribed: PrescribedDerivative::new(b, scene.body_actuation(i)),
                        dtheta: Vec::new(),
                        pinned_x: vec![Vec3::zeros(); n],
                        pinned_v: vec![Vec3::zeros(); n],
                        pinned_m: vec![Vec3::zeros(); n],
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
        // The contact terms' inputs, per direction and body: dx over the free DOFs (and the
        // pinned horn nodes, for the force variation), dv over the free DOFs, and
        // h dH_c(dx)ᵀλ (a contact between bodies moves with both bodies' nodes).
        let contact = self.contact_inputs(scene, record, inputs);
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
            if moves_x {
                body.assemble_stiffness_derivative(&rec.x, &rec.v_plus, &mut buf.t)?;
            }
            // Pinned servos: dθ⁺ per direction (target and, when clamped, x).
            let pinned = act.pinned.len();
            let c_m = 1.0 + h * opts.rayleigh_mass;
            if pinned > 0 {
                buf.prescribed.prepare(body, act, &rec.x);
                buf.dtheta.clear();
                for input in inputs {
                    for (kp, pin) in act.pinned.iter().enumerate() {
                        let d_target: f64 = parameters
                            .iter()
                            .zip(&input.parameters)
                            .filter(|(q, _)| {
                                **q == Parameter::Actuator {
                                    body: b,
                                    index: pin.actuator,
                                }
                            })
                            .map(|(_, d)| d)
                            .sum();
                        let dt = buf.prescribed.angle_tangent(
                            kp,
                            d_target,
                            &input.state.bodies[b].positions,
                        );
                        buf.dtheta.push(dt);
                    }
                }
                assert_points(body, rec);
            }
            for (p, q) in parameters.iter().enumerate() {
                if let Parameter::Material {
                    body: qb,
                    parameter,
                } = *q
                    && qb == b
                    && inputs.iter().any(|i| i.parameters[p] != 0.0)
                {
                    buf.material_rhs(body, rec, h, parameter)?;
                }
            }
            buf.columns.resize(nr * k, 0.0);
            for (c, input) in inputs.iter().enumerate() {
                let tan = &input.state.bodies[b];
                let col = &mut buf.columns[c * nr..(c + 1) * nr];
                // M dv
                col.fill(0.0);
                if tan.velocities.iter().any(|d| *d != Vec3::zeros()) {
                    reduce_nodes(dofs, &tan.velocities, &mut buf.red);
                    pattern.symmetric_product(body.mass_values(), &buf.red, col);
                }
                if pinned > 0 {
                    // The pinned rows' coupling (scene::prescribed_derivative).
                    buf.prescribed.motion_tangent(
                        act,
                        &buf.dtheta[c * pinned..(c + 1) * pinned],
                        &tan.positions,
                        h,
                        &mut buf.pinned_x,
                        &mut buf.pinned_v,
                    );
                    buf.nodal.iter_mut().for_each(|f| *f = Vec3::zeros());
                    buf.prescribed.add_coupling_tangent(
                        body,
                        &rec.points,
                        &rec.v_plus,
                        &tan.positions,
                        &tan.velocities,
                        &buf.pinned_v,
                        (h, c_m, c_k),
                        &mut buf.nodal,
                    );
                    add_reduced(dofs, &buf.nodal, 1.0, col);
                }
                if moves_x {
                    // −h K dx − c_K T_{v⁺} dx + h ∂(H_aᵀλ)/∂x dx
                    reduce_nodes(dofs, &tan.positions, &mut buf.red);
                    pattern.symmetric_product_add(rec.stiffness(), -h, &buf.red, col);
                    pattern.symmetric_product_add(&buf.t.values, -c_k, &buf.red, col);
                    if !act.actuators.is_empty() {
                        expand_nodes(dofs, &buf.red, &mut buf.nodal2);
                        for (n, d) in buf.nodal2.iter_mut().enumerate() {
                            if buf.prescribed.is_pinned(n) {
                                *d = tan.positions[n];
                            }
                        }
                        buf.nodal.iter_mut().for_each(|f| *f = Vec3::zeros());
                        act.add_driven_force_derivative(
                            &rec.x,
                            &rec.actuator_forces,
                            h,
                            0.0,
                            &buf.nodal2,
                            &mut buf.nodal,
                        );
                        add_reduced(dofs, &buf.nodal, 1.0, col);
                    }
                }
                if let Some(ci) = &contact
                    && rec.group.is_some()
                {
                    add_reduced(dofs, &ci.force[c][b], 1.0, col);
                }
                for (p, q) in parameters.iter().enumerate() {
                    let dp = input.parameters[p];
                    if dp == 0.0 || q.body() != b {
                        continue;
                    }
                    match *q {
                        Parameter::Material { parameter, .. } => {
                            let rhs = &buf.material_rhs[material_slot(parameter)];
                            for (c, r) in col.iter_mut().zip(rhs) {
                                *c += dp * r;
                            }
                        }
                        Parameter::Actuator { index, .. } => {
                            if let Drive::Target(_) = act.actuators[index].drive {
                                continue; // an angle target: through dθ⁺ above
                            }
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
            // The k solves, in two halves on two threads when k ≥ 2 (the factor is shared
            // read-only; each half has its own workspace).
            let half = k.div_ceil(2);
            if buf.solve_columns < half.max(1) {
                buf.solve = MemBuffer::new(rec.factor().solve_scratch(half.max(1)));
                buf.solve2 = MemBuffer::new(rec.factor().solve_scratch(half.max(1)));
                buf.solve_columns = half.max(1);
            }
            let factor = rec.factor();
            let (first, second) = buf.columns.split_at_mut(half * nr);
            let (s1, s2) = (&mut buf.solve, &mut buf.solve2);
            rayon::join(
                || factor.solve_columns_in_place(first, half, MemStack::new(s1)),
                || {
                    if k > half {
                        factor.solve_columns_in_place(second, k - half, MemStack::new(s2))
                    }
                },
            );
            buf.contact_force_tangents = DMat::zeros(0, k);
        }
        // dq = Σ_b P_b (H_b a_b + geometry terms), dλ = N dq, dv_b⁺ = a_b + h W_b P_bᵀ dλ per
        // NCP (contact_chain).
        if let Some(ci) = &contact {
            for group in &record.contacts {
                let mut dq = DMat::zeros(3 * group.len(), k);
                let mut a: Vec<Vec<Vec3>> = vec![Vec::new(); scene.bodies.len()];
                for c in 0..k {
                    for b in group.bodies() {
                        let nr = scene.bodies[b].pattern().n();
                        a[b].resize(scene.bodies[b].node_count(), Vec3::zeros());
                        expand_nodes(
                            scene.bodies[b].pattern().dofs(),
                            &self.bodies[b].columns[c * nr..(c + 1) * nr],
                            &mut a[b],
                        );
                    }
                    let mut column = dq.column_mut(c);
                    group.contact_velocity_variation(
                        |b, n| a[b][n],
                        |b, n| ci.dx_free[c][b][n],
                        |b, n| ci.dv_free[c][b][n],
                        |b, n| record.bodies[b].v[n],
                        |b, n| record.bodies[b].v_plus[n],
                        column.as_mut_slice(),
                    );
                }
                let mut dlambda = DMat::zeros(0, k);
                group.force_variation(&dq, &mut dlambda);
                for b in group.bodies() {
                    let buf = &mut self.bodies[b];
                    let nr = scene.bodies[b].pattern().n();
                    let mut rows = Vec::new();
                    for c in 0..k {
                        group.add_response(
                            b,
                            dlambda.column(c).as_slice(),
                            h,
                            &mut buf.columns[c * nr..(c + 1) * nr],
                        );
                        group.gather_body(b, dlambda.column(c).as_slice(), &mut rows);
                    }
                    let nrows = rows.len() / k.max(1);
                    buf.contact_force_tangents = DMat::from_column_slice(nrows, k, &rows);
                }
            }
        }
        for (b, body) in scene.bodies.iter().enumerate() {
            let buf = &mut self.bodies[b];
            let pattern = body.pattern();
            let dofs = pattern.dofs();
            let nr = pattern.n();
            let act = scene.body_actuation(b);
            let pinned = act.pinned.len();
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
                if pinned > 0 {
                    buf.prescribed.motion_tangent(
                        act,
                        &buf.dtheta[c * pinned..(c + 1) * pinned],
                        &tan.positions,
                        h,
                        &mut o.positions,
                        &mut o.velocities,
                    );
                }
            }
        }
        Ok(outputs)
    }

    /// The tangents of body `body`'s contact forces λ_c (N, 3 rows per contact in each
    /// contact's frame `[t₁, t₂, n]`, one column per input direction) computed by the last
    /// [`StepDerivative::jvp`]: the body's rows of its NCP's dλ, in the order of
    /// [`crate::diff::ContactRecord::body_lambda`] (obstacle contacts, self-contacts, contacts
    /// with other bodies; a contact between two bodies appears for both); empty when that
    /// step had no contact on the body. With the contacts' frames this gives the derivative
    /// of the contact forces with respect to the actuation (paper 004 Eq. 17).
    pub fn contact_force_tangents(&self, body: usize) -> &DMat {
        &self.bodies[body].contact_force_tangents
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
        // ā_b = v̄_b⁺ + h x̄_b⁺ per body (reduced).
        for (b, body) in scene.bodies.iter().enumerate() {
            let buf = &mut self.bodies[b];
            let dofs = body.pattern().dofs();
            let out = &output.bodies[b];
            reduce_nodes(dofs, &out.velocities, &mut buf.red);
            add_reduced(dofs, &out.positions, h, &mut buf.red);
        }
        // Per NCP: q̄ = Nᵀ Σ_b P_b h W_bᵀ ā_b, ā_b += H_bᵀ P_bᵀ q̄, and the geometry
        // cotangents x̄, v̄ of every body it touches (contact_chain).
        let zeros = || -> Vec<Vec<Vec3>> {
            scene
                .bodies
                .iter()
                .map(|b| vec![Vec3::zeros(); b.node_count()])
                .collect()
        };
        let mut extra: Option<(NodalFields, NodalFields)> = None;
        if !record.contacts.is_empty() {
            let (mut xbar, mut vbar, mut abar) = (zeros(), zeros(), zeros());
            for group in &record.contacts {
                let q_bar = group.velocity_cotangent(|b| &self.bodies[b].red, h);
                group.add_jacobian_transpose(&q_bar, &mut abar);
                group.geometry_cotangent(
                    &q_bar,
                    |b, n| record.bodies[b].v[n],
                    |b, n| record.bodies[b].v_plus[n],
                    &mut xbar,
                    &mut vbar,
                );
            }
            for (b, body) in scene.bodies.iter().enumerate() {
                add_reduced(
                    body.pattern().dofs(),
                    &abar[b],
                    1.0,
                    &mut self.bodies[b].red,
                );
            }
            extra = Some((xbar, vbar));
        }
        for (b, (body, rec)) in scene.bodies.iter().zip(&record.bodies).enumerate() {
            let buf = &mut self.bodies[b];
            let pattern = body.pattern();
            let dofs = pattern.dofs();
            let opts = body.options();
            let c_k = h * opts.rayleigh_stiffness + h * h;
            let act = scene.body_actuation(b);
            let out = &output.bodies[b];
            // r̄ = A⁻¹ ā
            if buf.solve_columns < 1 {
                buf.solve = MemBuffer::new(rec.factor().solve_scratch(1));
                buf.solve_columns = 1;
            }
            rec.factor()
                .solve_vec_in_place(&mut buf.red, MemStack::new(&mut buf.solve));
            let res: &mut BodyTangent = &mut result.state.bodies[b];
            // v̄ = M r̄
            pattern.symmetric_product(body.mass_values(), &buf.red, &mut buf.red2);
            if let Some((_, vbar)) = &extra {
                add_reduced(dofs, &vbar[b], 1.0, &mut buf.red2);
            }
            expand_nodes(dofs, &buf.red2, &mut res.velocities);
            // x̄ = x̄⁺ − h K r̄ − c_K T_{v⁺} r̄ + h ∂(H_aᵀλ)/∂x r̄
            expand_nodes(dofs, &buf.red, &mut buf.nodal3); // r̄ per node
            if rec.points.len() == body.elements().len() {
                body.stiffness_actions_at(
                    &rec.points,
                    &rec.v_plus,
                    &buf.nodal3,
                    &mut buf.t,
                    &mut buf.nodal,
                    &mut buf.nodal2,
                );
            } else {
                body.stiffness_actions(
                    &rec.x,
                    &rec.v_plus,
                    &buf.nodal3,
                    &mut buf.t,
                    &mut buf.nodal,
                    &mut buf.nodal2,
                )?;
            }
            reduce_nodes(dofs, &out.positions, &mut buf.red2);
            add_reduced(dofs, &buf.nodal, -h, &mut buf.red2);
            add_reduced(dofs, &buf.nodal2, -c_k, &mut buf.red2);
            let pinned = act.pinned.len();
            if pinned > 0 {
                // Pinned rows (scene::prescribed_derivative): x̄_p = −h (K r̄)_p − c_K (T r̄)_p,
                // v̄_p = (M r̄)_p, and the cotangent of v_p⁺, v̄_p⁺ − c_m (M r̄)_p − c_K (K r̄)_p.
                let c_m = 1.0 + h * opts.rayleigh_mass;
                buf.prescribed.prepare(body, act, &rec.x);
                buf.pinned_m.iter_mut().for_each(|f| *f = Vec3::zeros());
                buf.prescribed
                    .add_mass_coupling(body, &buf.nodal3, 1.0, &mut buf.pinned_m);
                for n in 0..body.node_count() {
                    if buf.prescribed.is_pinned(n) {
                        buf.pinned_x[n] = -h * buf.nodal[n] - c_k * buf.nodal2[n];
                        buf.pinned_v[n] =
                            out.velocities[n] - c_m * buf.pinned_m[n] - c_k * buf.nodal[n];
                    }
                }
            }
            if !act.actuators.is_empty() {
                buf.nodal.iter_mut().for_each(|f| *f = Vec3::zeros());
                act.add_driven_force_derivative(
                    &rec.x,
                    &rec.actuator_forces,
                    h,
                    0.0,
                    &buf.nodal3,
                    &mut buf.nodal,
                );
                add_reduced(dofs, &buf.nodal, 1.0, &mut buf.red2);
                if pinned > 0 {
                    for (n, f) in buf.nodal.iter().enumerate() {
                        if buf.prescribed.is_pinned(n) {
                            buf.pinned_x[n] += f;
                        }
                    }
                }
            }
            if let Some((xbar, _)) = &extra {
                add_reduced(dofs, &xbar[b], 1.0, &mut buf.red2);
            }
            expand_nodes(dofs, &buf.red2, &mut res.positions);
            if pinned > 0 {
                buf.dtheta.resize(pinned, 0.0);
                buf.prescribed.angle_cotangents(
                    act,
                    &buf.pinned_v,
                    &out.positions,
                    h,
                    &mut buf.pinned_x,
                    &mut buf.dtheta,
                );
                for n in 0..body.node_count() {
                    if buf.prescribed.is_pinned(n) {
                        res.positions[n] = buf.pinned_x[n];
                        res.velocities[n] = buf.pinned_m[n];
                    }
                }
            }
            // parameters
            for (p, q) in parameters.iter().enumerate() {
                if q.body() != b {
                    continue;
                }
                result.parameters[p] += match *q {
                    Parameter::Material { parameter, .. } => {
                        buf.material_rhs(body, rec, h, parameter)?;
                        reduce_nodes(dofs, &buf.nodal3, &mut buf.red);
                        let rhs = &buf.material_rhs[material_slot(parameter)];
                        rhs.iter().zip(&buf.red).map(|(a, b)| a * b).sum::<f64>()
                    }
                    Parameter::Actuator { index, .. }
                        if matches!(act.actuators[index].drive, Drive::Target(_)) =>
                    {
                        // An angle target: θ̄⁺ when the servo is not clamped.
                        act.pinned
                            .iter()
                            .zip(&buf.dtheta)
                            .filter(|(pin, _)| pin.actuator == index)
                            .map(|(_, t)| t)
                            .sum()
                    }
                    Parameter::Actuator { index, .. } => {
                        buf.nodal.iter_mut().for_each(|f| *f = Vec3::zeros());
                        act.actuators[index].add_forces(&rec.x, h, &mut buf.rows, &mut buf.nodal);
                        dot(&buf.nodal, &buf.nodal3)
                    }
                };
            }
        }
        // The transpose of h dH_c(dx)ᵀλ, which needs r̄ of every body of each NCP: added to
        // the free components of x̄ (as the geometry terms above).
        if !record.contacts.is_empty() {
            let mut xbar = zeros();
            for group in &record.contacts {
                group.force_cotangent(|b, n| self.bodies[b].nodal3[n], h, &mut xbar);
            }
            for (b, body) in scene.bodies.iter().enumerate() {
                let dofs = body.pattern().dofs();
                let buf = &mut self.bodies[b];
                reduce_nodes(dofs, &xbar[b], &mut buf.red);
                expand_nodes(dofs, &buf.red, &mut buf.nodal);
                for (r, x) in result.state.bodies[b].positions.iter_mut().zip(&buf.nodal) {
                    *r += x;
                }
            }
        }
        Ok(result)
    }
}

/// One nodal field per body of the scene.
type NodalFields = Vec<Vec<Vec3>>;

/// The contact terms' inputs of a forward pass, per direction then body (nodal fields).
struct ContactInputs {
    /// dx with fixed and pinned components zero.
    dx_free: Vec<NodalFields>,
    /// dv with fixed and pinned components zero.
    dv_free: Vec<NodalFields>,
    /// h dH_c(dx)ᵀλ (dx with the pinned horn nodes' components).
    force: Vec<NodalFields>,
}

impl StepDerivative {
    /// The contact terms' inputs of `inputs` ([`ContactInputs`]); `None` for a step
    /// without contact.
    fn contact_inputs(
        &self,
        scene: &Scene,
        record: &StepRecord,
        inputs: &[InputTangent],
    ) -> Option<ContactInputs> {
        if record.contacts.is_empty() {
            return None;
        }
        let h = record.h;
        let mut out = ContactInputs {
            dx_free: Vec::with_capacity(inputs.len()),
            dv_free: Vec::with_capacity(inputs.len()),
            force: Vec::with_capacity(inputs.len()),
        };
        for input in inputs {
            let mut dx_free = Vec::with_capacity(scene.bodies.len());
            let mut dx_pinned = Vec::with_capacity(scene.bodies.len());
            let mut dv_free = Vec::with_capacity(scene.bodies.len());
            for (b, body) in scene.bodies.iter().enumerate() {
                let dofs = body.pattern().dofs();
                let tan = &input.state.bodies[b];
                let mut red = vec![0.0; dofs.n_reduced()];
                let mut dx = vec![Vec3::zeros(); body.node_count()];
                let mut dv = vec![Vec3::zeros(); body.node_count()];
                reduce_nodes(dofs, &tan.positions, &mut red);
                expand_nodes(dofs, &red, &mut dx);
                reduce_nodes(dofs, &tan.velocities, &mut red);
                expand_nodes(dofs, &red, &mut dv);
                let mut with_pinned = dx.clone();
                let prescribed = &self.bodies[b].prescribed;
                for (n, d) in with_pinned.iter_mut().enumerate() {
                    if prescribed.is_pinned(n) {
                        *d = tan.positions[n];
                    }
                }
                dx_free.push(dx);
                dx_pinned.push(with_pinned);
                dv_free.push(dv);
            }
            let mut force: Vec<Vec<Vec3>> = scene
                .bodies
                .iter()
                .map(|b| vec![Vec3::zeros(); b.node_count()])
                .collect();
            for group in &record.contacts {
                group.add_force_variation(|b, n| dx_pinned[b][n], h, &mut force);
            }
            out.dx_free.push(dx_free);
            out.dv_free.push(dv_free);
            out.force.push(force);
        }
        Some(out)
    }

    /// The full Jacobian d v⁺/d x of body `body` over its free DOFs (n_free × n_free, column
    /// j = the derivative with respect to free DOF j; d x⁺/d x = I + h d v⁺/d x), as one
    /// multi-right-hand-side solve with the step's factorisation: the right-hand sides are
    /// the columns of −h K − c_K T_{v⁺} + h ∂(H_aᵀλ)/∂x, built from the assembled sparse
    /// matrices (no refactorisation, no dense inverse). Contact-free steps only (errors
    /// otherwise). The horn nodes of pinned servos are not free DOFs: their motion depends on
    /// their own positions and the angle target only, so this free block needs no coupling
    /// term (use [`Self::jvp`] for directions that move them).
    ///
    /// Errors: an element the law cannot evaluate.
    pub fn position_jacobian(
        &mut self,
        scene: &Scene,
        record: &StepRecord,
        body: usize,
    ) -> Result<crate::math::DMat> {
        let h = record.h;
        let (model, rec) = (&scene.bodies[body], &record.bodies[body]);
        if rec.group.is_some() {
            return Err(Error::invalid(
                format!("soft_body.{}", model.name()),
                "position_jacobian covers contact-free steps; use jvp with contact",
            ));
        }
        let buf = &mut self.bodies[body];
        let pattern = model.pattern();
        let dofs = pattern.dofs();
        let n = pattern.n();
        let c_k = h * model.options().rayleigh_stiffness + h * h;
        model.assemble_stiffness_derivative(&rec.x, &rec.v_plus, &mut buf.t)?;
        let mut jac = crate::math::DMat::zeros(n, n);
        let (col_ptr, row_idx) = (pattern.col_ptr(), pattern.row_idx());
        for j in 0..n {
            let range = col_ptr[j]..col_ptr[j + 1];
            for ((&i, &k), &t) in row_idx[range.clone()]
                .iter()
                .zip(&rec.stiffness()[range.clone()])
                .zip(&buf.t.values[range])
            {
                let v = -h * k - c_k * t;
                jac[(i, j)] += v;
                if i != j {
                    jac[(j, i)] += v;
                }
            }
        }
        let act = scene.body_actuation(body);
        if !act.actuators.is_empty() {
            buf.red.fill(0.0);
            for j in 0..n {
                buf.red[j] = 1.0;
                expand_nodes(dofs, &buf.red, &mut buf.nodal2);
                buf.red[j] = 0.0;
                buf.nodal.iter_mut().for_each(|f| *f = Vec3::zeros());
                act.add_driven_force_derivative(
                    &rec.x,
                    &rec.actuator_forces,
                    h,
                    0.0,
                    &buf.nodal2,
                    &mut buf.nodal,
                );
                let mut col = jac.column_mut(j);
                add_reduced(dofs, &buf.nodal, 1.0, col.as_mut_slice());
            }
        }
        let mut stack = MemBuffer::new(rec.factor().solve_scratch(n));
        rec.factor()
            .solve_columns_in_place(jac.as_mut_slice(), n, MemStack::new(&mut stack));
        Ok(jac)
    }
}

impl BodyBuffers {
    /// Fills `material_rhs` for `parameter`: h ∂f/∂p − c_K ∂(K v⁺)/∂p over the free DOFs.
    /// For E it follows from the record without an element pass: every law's Lamé pair is
    /// proportional to E at fixed ν (`material::Lame`), and f and K are linear in it, so
    /// ∂f/∂E = f/E and ∂(K v⁺)/∂E = K v⁺/E. For ν, one element pass from the material
    /// points the step kept (no re-evaluation of the law: no co-rotational SVD).
    fn material_rhs(
        &mut self,
        body: &crate::fem::SoftBody,
        rec: &super::record::BodyRecord,
        h: f64,
        parameter: MaterialParameter,
    ) -> Result<()> {
        let pattern = body.pattern();
        let dofs = pattern.dofs();
        let c_k = h * body.options().rayleigh_stiffness + h * h;
        let out = &mut self.material_rhs[material_slot(parameter)];
        match parameter {
            MaterialParameter::YoungModulus => {
                let e = body.material().young_modulus();
                out.fill(0.0);
                add_reduced(dofs, &rec.forces, h / e, out);
                reduce_nodes(dofs, &rec.v_plus, &mut self.red2);
                pattern.symmetric_product_add(rec.stiffness(), -c_k / e, &self.red2, out);
                if self.prescribed.is_active() {
                    // −c_K K_fp v_p⁺ / E, the pinned horns' coupling.
                    assert_points(body, rec);
                    self.nodal.iter_mut().for_each(|f| *f = Vec3::zeros());
                    self.prescribed.add_stiffness_coupling(
                        body,
                        &rec.points,
                        &rec.v_plus,
                        -c_k / e,
                        &mut self.nodal,
                    );
                    add_reduced(dofs, &self.nodal, 1.0, out);
                }
            }
            MaterialParameter::PoissonRatio => {
                if rec.points.len() == body.elements().len() {
                    body.evaluate_parameter_derivatives_at(
                        &rec.points,
                        &rec.v_plus,
                        parameter,
                        &mut self.params,
                    );
                } else {
                    body.evaluate_parameter_derivatives(
                        &rec.x,
                        &rec.v_plus,
                        parameter,
                        &mut self.params,
                    )?;
                }
                out.fill(0.0);
                add_reduced(dofs, &self.params.forces, h, out);
                add_reduced(dofs, &self.params.stiffness_action, -c_k, out);
            }
        }
        Ok(())
    }
}

fn material_slot(parameter: MaterialParameter) -> usize {
    match parameter {
        MaterialParameter::YoungModulus => 0,
        MaterialParameter::PoissonRatio => 1,
    }
}

/// The records keep every element's material point (`Recorder` asks the stepper to): the
/// pinned servos' coupling derivatives use them.
fn assert_points(body: &crate::fem::SoftBody, rec: &super::record::BodyRecord) {
    assert_eq!(
        rec.points.len(),
        body.elements().len(),
        "the step record keeps every element's material point"
    );
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
