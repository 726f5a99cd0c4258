//! Polishing an ADMM iterate without an assembled `G` (e.g. [`crate::contact::FactoredDelassus`]):
//! the same equations on the same faces as `super::polish`, solved by Newton's method whose
//! steps are found by a Krylov method (GMRES, [`crate::linalg::gmres`]) instead of an LU of the
//! reduced Jacobian (docs/step.md).
//!
//! The reduced Jacobian is `J = E G D + Θ`: `D` maps the unknowns to forces
//! ([`Polisher::force_direction`]), `E` reads the equations from velocities
//! ([`Polisher::equation_direction`]) and `Θ` is the angle equations' own dependence on their
//! angles ([`Polisher::own_derivative`], diagonal). A product `J d` costs one product with `G`.
//! The steps are right-preconditioned by the symmetric
//!
//! ```text
//! P = E G Eᵀ + diag(c + max(0, Θ / (μ λ_N)))      (angle unknowns scaled by μ λ_N)
//! ```
//!
//! solved through the operator's own factorisation ([`DelassusOperator::factorize_projected`],
//! one sparse factorisation per polish): `J` differs from `P` by the friction forces a sliding
//! contact's normal force brings with it and by `c`. Without a preconditioner, or with `P`
//! but without `Θ`, a Krylov method needs hundreds of iterations on a slab of 1,000 contacts
//! (most of them sliding, G's condition number 8e3); with `Θ`, a handful. `c` is ADMM's
//! proximal weight `μ_prox = 1e-6 L` (on the slab a hundredth of G's smallest eigenvalue), so
//! that `P` stays close to `E G Eᵀ`; the Woodbury form divides by it, which costs a few digits
//! of the preconditioner (not of the step: GMRES minimises the true residual).
//!
//! GMRES rather than BiCGSTAB: one product with `G` and one preconditioner solve per
//! iteration instead of two of each, it stops at any iteration, and both kinds of solve go
//! through one `&mut` operator without a lock. Where the products and the projected solves
//! alternate between two sparse factors too large to share the cache, an iteration costs more
//! than the two solves do apart, and GMRES's iterations cost about what BiCGSTAB's half as
//! many do (docs/speed.md).
//!
//! Newton's steps are inexact: the first is solved to a relative 0.1, the next ones as much
//! more exactly as the residual fell (Eisenstat and Walker's second forcing term) but not
//! more exactly than the target needs: on the right faces, a few steps of a few GMRES
//! iterations each take an iterate whose NCP residual is still far above the tolerance to
//! round-off (ADMM holds its penalty until the polish may run, `super::admm`).

use super::cone::FrictionCone;
use super::delassus_operator::{DelassusOperator, ProjectedRow};
use super::polish::{Iterate, Polisher, Unknown};
use super::problem::cone_residuals;
use crate::linalg::{GmresWorkspace, PreconditionedOperator, gmres};

/// The buffers of the matrix-free polish, kept by the [`Polisher`] between solves: the
/// preconditioner's rows and shifts, the Newton step (one per unknown), a force and a
/// velocity (3 per contact) and GMRES's workspace.
#[derive(Default)]
pub(super) struct KrylovWork {
    rows: Vec<ProjectedRow>,
    shifts: Vec<f64>,
    step: Vec<f64>,
    force: Vec<f64>,
    velocity: Vec<f64>,
    gmres: GmresWorkspace,
}

/// Newton steps of one matrix-free polish at most (each must lower the NCP residual).
const NEWTON_STEPS: usize = 4;

/// Relative residual to which GMRES solves the first Newton step's linear system, and the
/// largest it solves any to (the forcing terms of inexact Newton, `polish_matrix_free`).
const FIRST_FORCING: f64 = 0.1;

/// The smallest relative residual GMRES solves a Newton step's linear system to.
const KRYLOV_TOLERANCE: f64 = 1e-11;

/// GMRES iterations (one product with `G` and one preconditioner solve each) per Newton step
/// at most; a step that needs more says the faces or the preconditioner are wrong.
const KRYLOV_ITERATIONS: usize = 60;

/// The Newton step's system at the polisher's current point: the reduced Jacobian `J` (r × r)
/// and the preconditioner `S⁻¹ P⁻¹` of the module documentation (`S` scales the angle
/// unknowns by μ λ_N), with a force and a velocity buffer (3 per contact).
struct NewtonSystem<'a, O> {
    op: &'a mut O,
    polisher: &'a Polisher,
    cones: &'a [FrictionCone],
    force: &'a mut [f64],
    velocity: &'a mut [f64],
}

impl<O: DelassusOperator> PreconditionedOperator for NewtonSystem<'_, O> {
    fn apply(&mut self, d: &[f64], out: &mut [f64]) {
        let p = self.polisher;
        self.force.fill(0.0);
        for (&u, &dc) in p.unknowns.iter().zip(d) {
            let (i, w) = p.force_direction(u, self.cones);
            for (f, wk) in self.force[3 * i..3 * i + 3].iter_mut().zip(w.iter()) {
                *f += wk * dc;
            }
        }
        self.op.apply(self.force, self.velocity);
        for ((o, &u), &dc) in out.iter_mut().zip(&p.unknowns).zip(d) {
            *o = p.equation(u, self.velocity) + p.own_derivative(u) * dc;
        }
    }

    fn precondition(&mut self, y: &mut [f64]) {
        self.op.solve_projected(y);
        for (o, &u) in y.iter_mut().zip(&self.polisher.unknowns) {
            *o /= angle_scale(self.polisher, self.cones, u);
        }
    }
}

/// `μ λ_N` for an angle unknown (its column of `D` is `μ λ_N` times its equation's
/// direction), 1 for the others.
fn angle_scale(polisher: &Polisher, cones: &[FrictionCone], u: Unknown) -> f64 {
    match u {
        Unknown::Angle { i } => cones[i].mu() * polisher.lambda[3 * i + 2],
        _ => 1.0,
    }
}

impl Polisher {
    /// As [`Polisher::polish`] for a Delassus operator `delassus` that is not assembled but
    /// has a projected solve ([`DelassusOperator::factorize_projected`]; false, with nothing
    /// changed but the buffers, if it has none), with `shift` (> 0, (m/s)/N) the
    /// preconditioner's `c`. Stops as soon as a point's NCP residuals are ≤ `target`.
    pub(crate) fn polish_matrix_free<O: DelassusOperator>(
        &mut self,
        delassus: &mut O,
        g: &[f64],
        cones: &[FrictionCone],
        iterate: Iterate<'_>,
        target: f64,
        shift: f64,
    ) -> bool {
        let faces = iterate.faces;
        if !self.set_faces(cones, iterate) {
            return false;
        }
        self.place_boundary_forces(cones, faces);
        delassus.velocity(g, &self.lambda, &mut self.sigma);
        let residual = cone_residuals(cones, &self.lambda, &self.sigma).max();
        if residual <= target {
            return true;
        }
        if self.unknowns.is_empty() {
            return false;
        }
        // The buffers are taken out of `self` for the solve and put back after, so that the
        // Newton steps can borrow both.
        let mut work = std::mem::take(&mut self.krylov);
        let polished = self.newton_steps(
            delassus,
            g,
            cones,
            faces,
            [residual, target, shift],
            &mut work,
        );
        self.krylov = work;
        polished
    }

    /// The Newton steps of [`Self::polish_matrix_free`] from the current point, whose NCP
    /// residual `residual` is above `target`, with the preconditioner's `shift`, in the
    /// buffers `work`.
    fn newton_steps<O: DelassusOperator>(
        &mut self,
        delassus: &mut O,
        g: &[f64],
        cones: &[FrictionCone],
        faces: &[super::cone::ConeFace],
        [residual, target, shift]: [f64; 3],
        work: &mut KrylovWork,
    ) -> bool {
        let mut best = residual;
        let mut forcing = FIRST_FORCING;
        // The preconditioner: E's rows, and c plus the angle equations' own (scaled,
        // non-negative) dependence on their angles.
        work.rows.clear();
        work.shifts.clear();
        for &u in &self.unknowns {
            let (contact, direction) = self.equation_direction(u);
            work.rows.push(ProjectedRow { contact, direction });
            let own = self.own_derivative(u) / angle_scale(self, cones, u);
            work.shifts.push(shift + own.max(0.0));
        }
        if !work.shifts.iter().all(|c| c.is_finite())
            || !matches!(
                delassus.factorize_projected(&work.rows, &work.shifts),
                Ok(true)
            )
        {
            return false;
        }
        self.best_lambda.clone_from(&self.lambda);
        self.best_sigma.clone_from(&self.sigma);
        let mut step = std::mem::take(&mut work.step);
        step.clear();
        step.resize(self.unknowns.len(), 0.0);
        let m = self.lambda.len();
        work.force.resize(m, 0.0);
        work.velocity.resize(m, 0.0);
        for _ in 0..NEWTON_STEPS {
            self.minus_equations();
            let solved = self.newton_step(delassus, cones, &mut step, work, forcing);
            if !solved || !step.iter().all(|d| d.is_finite()) {
                break;
            }
            for (c, &d) in step.iter().enumerate() {
                self.move_unknown(self.unknowns[c], d);
            }
            self.place_boundary_forces(cones, faces);
            delassus.velocity(g, &self.lambda, &mut self.sigma);
            let score = cone_residuals(cones, &self.lambda, &self.sigma).max();
            if !(score < best) {
                break;
            }
            // Eisenstat and Walker's second forcing term (SIAM J. Sci. Comput. 1996): solve
            // the next step as much more exactly as the residual fell, but no more exactly
            // than reaching the target needs.
            forcing = (0.9 * (score / best).powi(2))
                .max(0.1 * target / score)
                .clamp(KRYLOV_TOLERANCE, FIRST_FORCING);
            best = score;
            self.best_lambda.clone_from(&self.lambda);
            self.best_sigma.clone_from(&self.sigma);
            if best <= target {
                break;
            }
        }
        work.step = step;
        if !(best <= target) {
            return false;
        }
        std::mem::swap(&mut self.lambda, &mut self.best_lambda);
        std::mem::swap(&mut self.sigma, &mut self.best_sigma);
        true
    }

    /// Solves `J step = self.step` (minus the equations) by GMRES to the relative residual
    /// `tolerance`, right-preconditioned by the projected system `delassus` was factorised
    /// with; false if it did not converge in [`KRYLOV_ITERATIONS`].
    fn newton_step<O: DelassusOperator>(
        &self,
        delassus: &mut O,
        cones: &[FrictionCone],
        step: &mut [f64],
        work: &mut KrylovWork,
        tolerance: f64,
    ) -> bool {
        let mut system = NewtonSystem {
            op: delassus,
            polisher: self,
            cones,
            force: &mut work.force,
            velocity: &mut work.velocity,
        };
        gmres(
            &mut system,
            &self.step,
            step,
            tolerance,
            KRYLOV_ITERATIONS,
            &mut work.gmres,
        )
        .converged
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::ncp::delassus_operator::add_product;
    use crate::contact::ncp::polish::tests::seven_contacts;
    use crate::error::Result;
    use crate::math::DMat;

    /// An assembled G seen as an operator that is not (no `assembled`), with its projected
    /// solve by a dense Cholesky factorisation of `E G Eᵀ + diag(shifts)`: the second method
    /// the matrix-free polish is checked against.
    struct Unassembled {
        g: DMat,
        projected: Option<nalgebra::linalg::Cholesky<f64, nalgebra::Dyn>>,
    }

    impl DelassusOperator for Unassembled {
        fn dim(&self) -> usize {
            self.g.nrows()
        }

        fn apply(&mut self, x: &[f64], out: &mut [f64]) {
            out.fill(0.0);
            add_product(&self.g, x, out);
        }

        fn factorize_shifted(&mut self, _shift: f64) -> Result<()> {
            unreachable!("the polish never asks for it")
        }

        fn solve_shifted(&mut self, _rhs: &mut [f64]) {
            unreachable!("the polish never asks for it")
        }

        fn factorize_projected(&mut self, rows: &[ProjectedRow], shifts: &[f64]) -> Result<bool> {
            let m = self.g.nrows();
            let e = DMat::from_fn(rows.len(), m, |k, j| {
                if j / 3 == rows[k].contact {
                    rows[k].direction[j % 3]
                } else {
                    0.0
                }
            });
            let mut p = &e * &self.g * e.transpose();
            for (k, c) in shifts.iter().enumerate() {
                p[(k, k)] += c;
            }
            self.projected = Some(p.cholesky().expect("positive definite"));
            Ok(true)
        }

        fn solve_projected(&mut self, rhs: &mut [f64]) {
            let x = self
                .projected
                .as_ref()
                .unwrap()
                .solve(&crate::math::DVec::from_column_slice(rhs));
            rhs.copy_from_slice(x.as_slice());
        }
    }

    /// A Newton step by GMRES against the dense LU solve of the assembled Jacobian, on
    /// the unknowns of every kind.
    #[test]
    fn a_step_is_the_solve_with_the_assembled_jacobian() {
        let (g_mat, _, cones, _, mut p) = seven_contacts();
        let r = p.unknowns.len();
        let jacobian = DMat::from_column_slice(r, r, &p.assembled_jacobian(&g_mat, &cones));
        p.minus_equations();
        let expected = jacobian
            .clone()
            .lu()
            .solve(&crate::math::DVec::from_column_slice(&p.step))
            .unwrap();
        let mut op = Unassembled {
            g: g_mat.clone(),
            projected: None,
        };
        let mut rows = Vec::new();
        let mut shifts = Vec::new();
        for &u in &p.unknowns {
            let (contact, direction) = p.equation_direction(u);
            rows.push(ProjectedRow { contact, direction });
            shifts.push(1e-3);
        }
        assert!(op.factorize_projected(&rows, &shifts).unwrap());
        let m = 3 * cones.len();
        let mut work = KrylovWork {
            force: vec![0.0; m],
            velocity: vec![0.0; m],
            ..KrylovWork::default()
        };
        let mut step = vec![0.0; r];
        let tolerance = 1e-11;
        assert!(p.newton_step(&mut op, &cones, &mut step, &mut work, tolerance));
        // ‖step − J⁻¹b‖ ≤ ‖J⁻¹‖ ‖b − J step‖ ≤ tolerance ‖b‖ / σ_min(J), plus round-off.
        let b = crate::math::DVec::from_column_slice(&p.step);
        let sigma_min = jacobian.singular_values().min();
        let bound = tolerance * b.norm() / sigma_min + 1e-13 * expected.norm();
        let error = (crate::math::DVec::from_vec(step) - &expected).norm();
        assert!(error <= bound, "{error:e} against {bound:e}");
    }

    /// The Jacobian's product against the dense polish's assembled Jacobian (itself checked
    /// against central differences in `crate::contact::ncp::polish`), column by column.
    #[test]
    fn the_product_is_the_assembled_jacobian() {
        let (g_mat, _, cones, _, mut p) = seven_contacts();
        let n = cones.len();
        let jacobian = p.assembled_jacobian(&g_mat, &cones);
        let r = p.unknowns.len();
        let mut op = Unassembled {
            g: g_mat.clone(),
            projected: None,
        };
        let (mut force, mut velocity) = (vec![0.0; 3 * n], vec![0.0; 3 * n]);
        let mut system = NewtonSystem {
            op: &mut op,
            polisher: &p,
            cones: &cones,
            force: &mut force,
            velocity: &mut velocity,
        };
        for c in 0..r {
            let mut e = vec![0.0; r];
            e[c] = 1.0;
            let mut out = vec![0.0; r];
            system.apply(&e, &mut out);
            for q in 0..r {
                let exact = jacobian[c * r + q];
                assert!(
                    (out[q] - exact).abs() <= 1e-14 * (1.0 + exact.abs()),
                    "J[{q}, {c}]: {} against {exact}",
                    out[q]
                );
            }
        }
    }
}
