//! The full position Jacobian d v⁺/d x of one body's contact-free step.

use super::*;

impl StepDerivative {
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
            free_velocities(dofs, rec, &mut buf.red, &mut buf.v_free);
            buf.red.fill(0.0);
            for j in 0..n {
                buf.red[j] = 1.0;
                dofs.scatter_nodal(&buf.red, &mut buf.nodal2);
                buf.red[j] = 0.0;
                let mut col = jac.column_mut(j);
                add_actuator_force_tangent(
                    act,
                    rec,
                    (h, c_k),
                    dofs,
                    &buf.v_free,
                    &buf.nodal2,
                    &mut buf.nodal,
                    col.as_mut_slice(),
                );
            }
        }
        let mut stack = MemBuffer::new(rec.factor().solve_scratch(n));
        rec.factor()
            .solve_columns_in_place(jac.as_mut_slice(), n, MemStack::new(&mut stack));
        Ok(jac)
    }
}
