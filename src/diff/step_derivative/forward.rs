//! Forward mode (JVP) of one step, and the contact-force tangents it leaves.

use super::rigid_forward::{
    add_chain_force, add_rigid_response, chain_inputs, chain_velocity_variation,
    free_rigid_response, rigid_directions, rigid_outputs,
};
use super::*;

impl StepDerivative {
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
        let mut rigid = record
            .rigid
            .as_ref()
            .map(|rec| rigid_directions(scene, rec, parameters, inputs));
        let contact = self.contact_inputs(scene, record, inputs, rigid.as_ref().map(|r| &r.dq));
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
            let mut asked = [false; 2];
            for (p, q) in parameters.iter().enumerate() {
                if let Parameter::Material {
                    body: qb,
                    parameter,
                } = *q
                    && qb == b
                    && inputs.iter().any(|i| i.parameters[p] != 0.0)
                {
                    asked[material_slot(parameter)] = true;
                }
            }
            buf.material_rhs_asked(body, rec, h, asked)?;
            // α, β, ρ of this body: their right-hand sides (mass_damping).
            for (p, q) in parameters.iter().enumerate() {
                if let Parameter::MassDamping {
                    body: qb,
                    parameter,
                } = *q
                    && qb == b
                    && inputs.iter().any(|i| i.parameters[p] != 0.0)
                {
                    buf.fill_mass_damping(body, act, rec, (h, scene.gravity()), parameter);
                }
            }
            buf.columns.resize(nr * k, 0.0);
            if !act.actuators.is_empty() {
                free_velocities(dofs, rec, &mut buf.red, &mut buf.v_free);
            }
            for (c, input) in inputs.iter().enumerate() {
                let tan = &input.state.bodies[b];
                let col = &mut buf.columns[c * nr..(c + 1) * nr];
                // M dv
                col.fill(0.0);
                if tan.velocities.iter().any(|d| *d != Vec3::zeros()) {
                    dofs.gather_nodal(&tan.velocities, &mut buf.red);
                    pattern.symmetric_product(body.mass_values(), &buf.red, col);
                }
                if pinned > 0 {
                    // The pinned rows' coupling (scene::step::free::prescribed_derivative).
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
                    dofs.add_nodal(&buf.nodal, 1.0, col);
                }
                if moves_x {
                    // −h K dx − c_K T_{v⁺} dx + h ∂(H_aᵀλ)/∂x dx
                    dofs.gather_nodal(&tan.positions, &mut buf.red);
                    pattern.symmetric_product_add(rec.stiffness(), -h, &buf.red, col);
                    pattern.symmetric_product_add(&buf.t.values, -c_k, &buf.red, col);
                    if !act.actuators.is_empty() {
                        dofs.scatter_nodal(&buf.red, &mut buf.nodal2);
                        for (n, d) in buf.nodal2.iter_mut().enumerate() {
                            if buf.prescribed.is_pinned(n) {
                                *d = tan.positions[n];
                            }
                        }
                        add_actuator_force_tangent(
                            act,
                            rec,
                            (h, c_k),
                            dofs,
                            &buf.v_free,
                            &buf.nodal2,
                            &mut buf.nodal,
                            col,
                        );
                    }
                }
                if let Some(ci) = &contact
                    && rec.group.is_some()
                {
                    dofs.add_nodal(&ci.force[c][b], 1.0, col);
                }
                for (p, q) in parameters.iter().enumerate() {
                    let dp = input.parameters[p];
                    if dp == 0.0 || q.body() != Some(b) {
                        continue;
                    }
                    match *q {
                        // Through the rigid systems' update (rigid_forward), and through the
                        // NCP (below).
                        Parameter::RigidInput { .. }
                        | Parameter::RigidTarget { .. }
                        | Parameter::Friction { .. }
                        | Parameter::RigidMass { .. } => {}
                        Parameter::Material { parameter, .. } => {
                            let rhs = &buf.material_rhs[material_slot(parameter)];
                            for (c, r) in col.iter_mut().zip(rhs) {
                                *c += dp * r;
                            }
                        }
                        Parameter::MassDamping { parameter, .. } => {
                            let rhs = buf.mass_damping.column(parameter);
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
                            // − h² (∂K_a/∂λ) v⁺ of a cable whose tangent is in A.
                            crate::scene::add_tangent_force_derivative(
                                act,
                                index,
                                &rec.x,
                                &buf.v_free,
                                -c_k * dp,
                                &mut buf.nodal,
                            );
                            dofs.add_nodal(&buf.nodal, 1.0, col);
                        }
                    }
                }
            }
            // The k solves, in two halves on two threads (the factor is shared read-only;
            // each half has its own workspace). A number of columns that is interleaved goes
            // in one call on one thread (reading the factor once), and on two threads too
            // unless both halves are interleaved as well: each column then has the same bits
            // on any thread count (`NumericFactor::solve_columns_in_place`).
            let interleaved = &crate::linalg::INTERLEAVED_COLUMNS;
            let whole = interleaved.contains(&k)
                && (rayon::current_num_threads() == 1 || k < 2 * interleaved.start());
            let half = if whole { k } else { k.div_ceil(2) };
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
        // The rigid systems' dv⁺ with λ held (rigid_forward).
        if let (Some(rec), Some(dirs)) = (&record.rigid, &mut rigid) {
            let chains: Vec<(&crate::diff::row_chain::RowChain, &DMat)> = contact
                .iter()
                .flat_map(|ci| {
                    record
                        .contacts
                        .iter()
                        .zip(&ci.chain_z)
                        .filter_map(|(g, z)| Some((g.chain.as_ref()?, z.as_ref()?)))
                })
                .collect();
            free_rigid_response(rec, dirs, &chains);
        }
        // dq = Σ_b P_b (H_b a_b + geometry terms), dλ = N dq, dv_b⁺ = a_b + h W_b P_bᵀ dλ per
        // NCP (contact_chain), and a_r += h M⁻¹ Jᵀ dλ for its rigid rows (rigid_forward).
        if let Some(ci) = &contact {
            for (g, group) in record.contacts.iter().enumerate() {
                let mut dq = DMat::zeros(3 * group.block_count(), k);
                let mut a: Vec<Vec<Vec3>> = vec![Vec::new(); scene.bodies.len()];
                for c in 0..k {
                    for b in group.bodies() {
                        let nr = scene.bodies[b].pattern().n();
                        a[b].resize(scene.bodies[b].node_count(), Vec3::zeros());
                        scene.bodies[b].pattern().dofs().scatter_nodal(
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
                    if let (Some(chain), Some(z)) = (&group.chain, &ci.chain_z[g]) {
                        chain_velocity_variation(
                            chain,
                            c,
                            rigid.as_ref().map(|r| (&r.a, &r.dv)),
                            |b, n| a[b].get(n).copied().unwrap_or_else(Vec3::zeros),
                            |b, n| ci.dv_free[c][b][n],
                            z,
                            column.as_mut_slice(),
                        );
                    }
                }
                let mut dlambda = DMat::zeros(0, k);
                group.force_variation(&dq, &mut dlambda);
                // dλ += (∂λ/∂μ_o) dμ_o for each obstacle's friction (contact_chain).
                for (c, input) in inputs.iter().enumerate() {
                    for (q, dp) in parameters.iter().zip(&input.parameters) {
                        if let (Parameter::Friction { obstacle }, true) = (*q, *dp != 0.0)
                            && let Some(t) = group.friction_direction(obstacle)
                        {
                            for (l, d) in dlambda.column_mut(c).iter_mut().zip(t) {
                                *l += dp * d;
                            }
                        }
                    }
                }
                if let (Some(chain), Some(rec), Some(dirs)) =
                    (&group.chain, &record.rigid, &mut rigid)
                {
                    add_rigid_response(chain, rec, &dlambda, &mut dirs.a);
                }
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
                // dv⁺ and dx⁺ = dx + h dv⁺ on the free DOFs, in one pass (the outputs start
                // zero, so fixed components stay zero).
                for (d, (n, k)) in col.iter().zip(dofs.free_components()) {
                    o.velocities[n][k] = *d;
                    o.positions[n][k] = tan.positions[n][k] + h * d;
                }
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
        if let (Some(rec), Some(dirs)) = (&record.rigid, &rigid) {
            for (c, out) in outputs.iter_mut().enumerate() {
                out.rigid = rigid_outputs(rec, dirs, c);
            }
        }
        Ok(outputs)
    }

    /// The tangents of body `body`'s contact forces λ_c (N, 3 rows per contact in each
    /// contact's frame `[t₁, t₂, n]`, one column per input direction) computed by the last
    /// [`StepDerivative::jvp`]: the body's rows of its NCP's dλ, in the order of
    /// [`crate::diff::ContactRecord::body_lambda`] (obstacle contacts, self-contacts, contacts
    /// with other bodies; a contact between two bodies appears for both; attachments left
    /// out); empty when that step had no contact on the body. With the contacts' frames this gives the derivative
    /// of the contact forces with respect to the actuation (paper 004 Eq. 17).
    pub fn contact_force_tangents(&self, body: usize) -> &DMat {
        &self.bodies[body].contact_force_tangents
    }
}

/// The contact terms' inputs of a forward pass, per direction then body (nodal fields).
struct ContactInputs {
    /// dx with fixed and pinned components zero.
    dx_free: Vec<NodalFields>,
    /// dv with fixed and pinned components zero.
    dv_free: Vec<NodalFields>,
    /// h dH_c(dx)ᵀλ (dx with the pinned horn nodes' components), with the chains'
    /// h ∂(H_Lᵀλ)/∂z z.
    force: Vec<NodalFields>,
    /// Per NCP of the record: its chain's inputs z (nz × directions), if it has a chain.
    chain_z: Vec<Option<DMat>>,
}

impl StepDerivative {
    /// The contact terms' inputs of `inputs` ([`ContactInputs`]); `None` for a step
    /// without contact.
    fn contact_inputs(
        &self,
        scene: &Scene,
        record: &StepRecord,
        inputs: &[InputTangent],
        rigid_dq: Option<&DMat>,
    ) -> Option<ContactInputs> {
        if record.contacts.is_empty() {
            return None;
        }
        let h = record.h;
        let mut out = ContactInputs {
            dx_free: Vec::with_capacity(inputs.len()),
            dv_free: Vec::with_capacity(inputs.len()),
            force: Vec::with_capacity(inputs.len()),
            chain_z: Vec::new(),
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
                dofs.gather_nodal(&tan.positions, &mut red);
                dofs.scatter_nodal(&red, &mut dx);
                dofs.gather_nodal(&tan.velocities, &mut red);
                dofs.scatter_nodal(&red, &mut dv);
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
        for group in &record.contacts {
            let z = group.chain.as_ref().map(|chain| {
                let z = chain_inputs(chain, rigid_dq, &out.dx_free);
                add_chain_force(chain, &z, h, &mut out.force);
                z
            });
            out.chain_z.push(z);
        }
        Some(out)
    }
}
