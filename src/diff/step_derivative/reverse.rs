//! Reverse mode (VJP) of one step.

use super::rigid_reverse::{
    add_rigid_parameter_cotangents, add_soft_force_cotangent, chain_lambda_bar,
    chain_sigma_cotangent, distribute, rigid_input_cotangents, rigid_output_cotangent,
    rigid_update_cotangent,
};
use super::*;
use crate::math::DVec;

impl StepDerivative {
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
            dofs.gather_nodal(&out.velocities, &mut buf.red);
            dofs.add_nodal(&out.positions, h, &mut buf.red);
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
        // The rigid systems' output cotangents (rigid_reverse) and each chain's z̄.
        let mut rigid = record
            .rigid
            .as_ref()
            .map(|rec| rigid_output_cotangent(rec, output));
        let mut zbars: Vec<Option<DVec>> = Vec::with_capacity(record.contacts.len());
        let mut extra: Option<(NodalFields, NodalFields)> = None;
        if !record.contacts.is_empty() {
            let (mut xbar, mut vbar, mut abar) = (zeros(), zeros(), zeros());
            // λ̄'s rigid part, from ṽ alone (before any σ̄ reaches ā_r).
            let lambda_extra: Vec<Vec<f64>> = record
                .contacts
                .iter()
                .map(|group| match (&group.chain, &record.rigid, &rigid) {
                    (Some(chain), Some(rec), Some(cot)) => {
                        chain_lambda_bar(chain, rec, cot, group.block_count())
                    }
                    _ => Vec::new(),
                })
                .collect();
            for (group, lambda_extra) in record.contacts.iter().zip(&lambda_extra) {
                let (q_bar, lambda_bar) =
                    group.velocity_cotangent(|b| &self.bodies[b].red, h, lambda_extra);
                // μ̄_o = ⟨λ̄, ∂λ/∂μ_o⟩ for each obstacle's friction (contact_chain).
                for (p, q) in parameters.iter().enumerate() {
                    if let Parameter::Friction { obstacle } = *q
                        && let Some(t) = group.friction_direction(obstacle)
                    {
                        result.parameters[p] +=
                            t.iter().zip(&lambda_bar).map(|(a, b)| a * b).sum::<f64>();
                    }
                }
                group.add_jacobian_transpose(&q_bar, &mut abar);
                group.geometry_cotangent(
                    &q_bar,
                    |b, n| record.bodies[b].v[n],
                    |b, n| record.bodies[b].v_plus[n],
                    &mut xbar,
                    &mut vbar,
                );
                zbars.push(group.chain.as_ref().map(|chain| {
                    chain_sigma_cotangent(chain, &q_bar, rigid.as_mut(), &mut abar, &mut vbar)
                }));
            }
            if let (Some(rec), Some(cot)) = (&record.rigid, &mut rigid) {
                let mut chains: Vec<(&crate::diff::row_chain::RowChain, &mut DVec)> = record
                    .contacts
                    .iter()
                    .zip(&mut zbars)
                    .filter_map(|(g, z)| Some((g.chain.as_ref()?, z.as_mut()?)))
                    .collect();
                rigid_update_cotangent(rec, cot, &mut chains);
            }
            for (b, body) in scene.bodies.iter().enumerate() {
                body.pattern()
                    .dofs()
                    .add_nodal(&abar[b], 1.0, &mut self.bodies[b].red);
            }
            extra = Some((xbar, vbar));
        } else if let (Some(rec), Some(cot)) = (&record.rigid, &mut rigid) {
            rigid_update_cotangent(rec, cot, &mut []);
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
                dofs.add_nodal(&vbar[b], 1.0, &mut buf.red2);
            }
            dofs.scatter_nodal(&buf.red2, &mut res.velocities);
            // x̄ = x̄⁺ − h K r̄ − c_K T_{v⁺} r̄ + h ∂(H_aᵀλ)/∂x r̄
            dofs.scatter_nodal(&buf.red, &mut buf.nodal3); // r̄ per node
            // The body's material parameters, paired with r̄ in the same element pass when the
            // record kept the material points.
            let mut materials = [MaterialParameter::YoungModulus; 2];
            let mut material_count = 0;
            for q in parameters {
                if let Parameter::Material {
                    body: qb,
                    parameter,
                } = *q
                    && qb == b
                    && !materials[..material_count].contains(&parameter)
                {
                    materials[material_count] = parameter;
                    material_count += 1;
                }
            }
            let materials = &materials[..material_count];
            let mut pairings = None;
            if rec.points.len() == body.elements().len() {
                pairings = Some(body.stiffness_actions_at(
                    &rec.points,
                    &rec.v_plus,
                    &buf.nodal3,
                    materials,
                    &mut buf.t,
                    &mut buf.nodal,
                    &mut buf.nodal2,
                ));
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
            dofs.gather_nodal(&out.positions, &mut buf.red2);
            dofs.add_nodal(&buf.nodal, -h, &mut buf.red2);
            dofs.add_nodal(&buf.nodal2, -c_k, &mut buf.red2);
            let pinned = act.pinned.len();
            if pinned > 0 {
                // Pinned rows (scene::step::free::prescribed_derivative): x̄_p = −h (K r̄)_p − c_K (T r̄)_p,
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
                free_velocities(dofs, rec, &mut buf.red, &mut buf.v_free);
                add_actuator_force_tangent(
                    act,
                    rec,
                    (h, c_k),
                    dofs,
                    &buf.v_free,
                    &buf.nodal3,
                    &mut buf.nodal,
                    &mut buf.red2,
                );
                if pinned > 0 {
                    for (n, f) in buf.nodal.iter().enumerate() {
                        if buf.prescribed.is_pinned(n) {
                            buf.pinned_x[n] += f;
                        }
                    }
                }
            }
            if let Some((xbar, _)) = &extra {
                dofs.add_nodal(&xbar[b], 1.0, &mut buf.red2);
            }
            dofs.scatter_nodal(&buf.red2, &mut res.positions);
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
                if q.body() != Some(b) {
                    continue;
                }
                result.parameters[p] += match *q {
                    // Through the rigid systems' update (rigid_reverse), and through the NCP
                    // (above).
                    Parameter::RigidInput { .. }
                    | Parameter::RigidTarget { .. }
                    | Parameter::Friction { .. }
                    | Parameter::RigidMass { .. } => 0.0,
                    // ⟨h ∂f/∂p − c_K ∂(K v⁺)/∂p, r̄⟩ from the element pass's pairings.
                    Parameter::Material { parameter, .. } if let Some(pairings) = &pairings => {
                        let k = materials.iter().position(|m| *m == parameter).unwrap();
                        h * pairings[k].forces - c_k * pairings[k].stiffness_action
                    }
                    Parameter::Material { parameter, .. } => {
                        buf.material_rhs(body, rec, h, parameter)?;
                        dofs.gather_nodal(&buf.nodal3, &mut buf.red);
                        let rhs = &buf.material_rhs[material_slot(parameter)];
                        rhs.iter().zip(&buf.red).map(|(a, b)| a * b).sum::<f64>()
                    }
                    // ⟨r_p, r̄⟩ with r_p the right-hand side of α, β or ρ (mass_damping).
                    Parameter::MassDamping { parameter, .. } => {
                        buf.fill_mass_damping(body, act, rec, (h, scene.gravity()), parameter);
                        buf.mass_damping.pair(dofs, parameter, &buf.nodal3)
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
                        crate::scene::add_tangent_force_derivative(
                            act,
                            index,
                            &rec.x,
                            &buf.v_free,
                            -c_k,
                            &mut buf.nodal,
                        );
                        dot(&buf.nodal, &buf.nodal3)
                    }
                };
            }
        }
        // The transpose of h dH_c(dx)ᵀλ, which needs r̄ of every body of each NCP: added to
        // the free components of x̄ (as the geometry terms above).
        if !record.contacts.is_empty() {
            let mut xbar = zeros();
            for (group, zbar) in record.contacts.iter().zip(&mut zbars) {
                group.force_cotangent(|b, n| self.bodies[b].nodal3[n], h, &mut xbar);
                if let (Some(chain), Some(zbar)) = (&group.chain, zbar) {
                    add_soft_force_cotangent(chain, |b, n| self.bodies[b].nodal3[n], h, zbar);
                    distribute(chain, zbar, rigid.as_mut(), &mut xbar);
                }
            }
            for (b, body) in scene.bodies.iter().enumerate() {
                let dofs = body.pattern().dofs();
                let buf = &mut self.bodies[b];
                dofs.gather_nodal(&xbar[b], &mut buf.red);
                dofs.scatter_nodal(&buf.red, &mut buf.nodal);
                for (r, x) in result.state.bodies[b].positions.iter_mut().zip(&buf.nodal) {
                    *r += x;
                }
            }
        }
        if let (Some(rec), Some(cot)) = (&record.rigid, &rigid) {
            result.state.rigid = rigid_input_cotangents(rec, cot);
            add_rigid_parameter_cotangents(scene, rec, cot, parameters, &mut result.parameters);
        }
        Ok(result)
    }
}
