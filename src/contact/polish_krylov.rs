//! Polishing an ADMM iterate without an assembled `G` (e.g. [`super::FactoredDelassus`]):
//! the same equations on the same faces as `super::polish`, solved by Newton's method whose
//! steps are found by a Krylov method (faer's BiCGSTAB) instead of an LU of the reduced
//! Jacobian (docs/step.md).
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
//! contact's normal force brings with it and by `c`. On a slab of 1,000 contacts (612
//! sliding, G's condition number 8e3) BiCGSTAB then takes 7 iterations to a relative 1e-12
//! where unpreconditioned GMRES takes 448 and the preconditioner without `Θ` about 300
//! (measured offline with numpy on the assembled G). `c` is ADMM's proximal weight
//! `μ_prox = 1e-6 L` (on the slab a hundredth of G's smallest eigenvalue), so that `P` stays
//! close to `E G Eᵀ`; the Woodbury form divides by it, which costs a few digits of the
//! preconditioner (not of the step: BiCGSTAB's residual is the true one).
//!
//! Newton's steps are inexact: the first is solved to a relative 0.1, the next ones as much
//! more exactly as the residual fell (Eisenstat and Walker's second forcing term) but not
//! more exactly than the target needs. On the 1,000-contact slab, polished at iteration 35,
//! that is three steps and five BiCGSTAB iterations in all, to an NCP residual of 4e-13: the
//! solve takes 162 ms instead of 326 ms unpolished (docs/speed.md).

use std::sync::Mutex;

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::matrix_free::bicgstab::{BicgParams, bicgstab, bicgstab_scratch};
use faer::matrix_free::{IdentityPrecond, InitialGuessStatus, LinOp, Precond};
use faer::{MatMut, MatRef, Par};

use super::cone::FrictionCone;
use super::delassus_operator::{DelassusOperator, ProjectedRow};
use super::polish::{Iterate, Polisher, Unknown};
use super::problem::cone_residuals;

/// Newton steps of one matrix-free polish at most.
const NEWTON_STEPS: usize = 4;

/// Relative residual to which BiCGSTAB solves the first Newton step's linear system, and the
/// largest it solves any to (the forcing terms of inexact Newton, `polish_matrix_free`).
const FIRST_FORCING: f64 = 0.1;

/// The smallest relative residual BiCGSTAB solves a Newton step's linear system to.
const KRYLOV_TOLERANCE: f64 = 1e-11;

/// BiCGSTAB iterations (two products with `G` and two preconditioner solves each) per Newton
/// step at most; a step that needs more says the faces or the preconditioner are wrong.
const KRYLOV_ITERATIONS: usize = 60;

/// What the Jacobian's product and the preconditioner share: the operator, the current point
/// and a force and a velocity buffer (3 per contact).
struct Shared<'a, O> {
    op: &'a mut O,
    polisher: &'a Polisher,
    cones: &'a [FrictionCone],
    force: Vec<f64>,
    velocity: Vec<f64>,
}

/// `J d` for the reduced Jacobian `J` (r × r) at the polisher's current point.
struct Jacobian<'s, 'a, O>(&'s Mutex<Shared<'a, O>>, usize);

/// `S⁻¹ P⁻¹ y` (the preconditioner of the module documentation; `S` scales the angle
/// unknowns by μ λ_N).
struct Preconditioner<'s, 'a, O>(&'s Mutex<Shared<'a, O>>, usize);

impl<O> std::fmt::Debug for Jacobian<'_, '_, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("polish Jacobian")
    }
}

impl<O> std::fmt::Debug for Preconditioner<'_, '_, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("polish preconditioner")
    }
}

impl<O: DelassusOperator + Send> LinOp<f64> for Jacobian<'_, '_, O> {
    fn apply_scratch(&self, _rhs_ncols: usize, _par: Par) -> faer::dyn_stack::StackReq {
        faer::dyn_stack::StackReq::EMPTY
    }

    fn nrows(&self) -> usize {
        self.1
    }

    fn ncols(&self) -> usize {
        self.1
    }

    fn apply(
        &self,
        mut out: MatMut<'_, f64>,
        rhs: MatRef<'_, f64>,
        _par: Par,
        _stack: &mut MemStack,
    ) {
        let mut guard = self.0.lock().expect("not poisoned");
        let Shared {
            op,
            polisher,
            cones,
            force,
            velocity,
        } = &mut *guard;
        for j in 0..rhs.ncols() {
            if (0..rhs.nrows()).all(|c| rhs[(c, j)] == 0.0) {
                (0..rhs.nrows()).for_each(|c| out[(c, j)] = 0.0);
                continue;
            }
            force.fill(0.0);
            for (c, &u) in polisher.unknowns.iter().enumerate() {
                let (i, w) = polisher.force_direction(u, cones);
                let d = rhs[(c, j)];
                for k in 0..3 {
                    force[3 * i + k] += w[k] * d;
                }
            }
            op.apply(force, velocity);
            for (c, &u) in polisher.unknowns.iter().enumerate() {
                out[(c, j)] =
                    polisher.equation(u, velocity) + polisher.own_derivative(u) * rhs[(c, j)];
            }
        }
    }

    fn conj_apply(
        &self,
        out: MatMut<'_, f64>,
        rhs: MatRef<'_, f64>,
        par: Par,
        stack: &mut MemStack,
    ) {
        self.apply(out, rhs, par, stack);
    }
}

impl<O: DelassusOperator + Send> LinOp<f64> for Preconditioner<'_, '_, O> {
    fn apply_scratch(&self, _rhs_ncols: usize, _par: Par) -> faer::dyn_stack::StackReq {
        faer::dyn_stack::StackReq::EMPTY
    }

    fn nrows(&self) -> usize {
        self.1
    }

    fn ncols(&self) -> usize {
        self.1
    }

    fn apply(
        &self,
        mut out: MatMut<'_, f64>,
        rhs: MatRef<'_, f64>,
        _par: Par,
        _stack: &mut MemStack,
    ) {
        let mut guard = self.0.lock().expect("not poisoned");
        let Shared {
            op,
            polisher,
            cones,
            force,
            ..
        } = &mut *guard;
        let r = self.1;
        for j in 0..rhs.ncols() {
            let column = &mut force[..r];
            for (c, o) in column.iter_mut().enumerate() {
                *o = rhs[(c, j)];
            }
            op.solve_projected(column);
            for (c, &u) in polisher.unknowns.iter().enumerate() {
                out[(c, j)] = column[c] / angle_scale(polisher, cones, u);
            }
        }
    }

    fn conj_apply(
        &self,
        out: MatMut<'_, f64>,
        rhs: MatRef<'_, f64>,
        par: Par,
        stack: &mut MemStack,
    ) {
        self.apply(out, rhs, par, stack);
    }
}

impl<O: DelassusOperator + Send> Precond<f64> for Preconditioner<'_, '_, O> {}

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
    pub(crate) fn polish_matrix_free<O: DelassusOperator + Send>(
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
        let mut best = cone_residuals(cones, &self.lambda, &self.sigma).max();
        let mut forcing = FIRST_FORCING;
        if best <= target {
            return true;
        }
        let r = self.unknowns.len();
        if r == 0 {
            return false;
        }
        // The preconditioner: E's rows, and c plus the angle equations' own (scaled,
        // non-negative) dependence on their angles.
        let mut rows = Vec::with_capacity(r);
        let mut shifts = Vec::with_capacity(r);
        for &u in &self.unknowns {
            let (contact, direction) = self.equation_direction(u);
            rows.push(ProjectedRow { contact, direction });
            let own = self.own_derivative(u) / angle_scale(self, cones, u);
            shifts.push(shift + own.max(0.0));
        }
        if !shifts.iter().all(|c| c.is_finite())
            || !matches!(delassus.factorize_projected(&rows, &shifts), Ok(true))
        {
            return false;
        }
        self.best_lambda.clone_from(&self.lambda);
        self.best_sigma.clone_from(&self.sigma);
        let mut step = vec![0.0; r];
        let mut stack = MemBuffer::new(bicgstab_scratch::<f64>(
            IdentityPrecond { dim: r },
            IdentityPrecond { dim: r },
            IdentityPrecond { dim: r },
            1,
            Par::Seq,
        ));
        for _ in 0..NEWTON_STEPS {
            self.minus_equations();
            let solved = self.newton_step(delassus, cones, &mut step, &mut stack, forcing);
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
        if !(best <= target) {
            return false;
        }
        std::mem::swap(&mut self.lambda, &mut self.best_lambda);
        std::mem::swap(&mut self.sigma, &mut self.best_sigma);
        true
    }

    /// Solves `J step = self.step` (minus the equations) by BiCGSTAB, right-preconditioned
    /// by the projected system `delassus` was factorised with; false if it did not converge.
    fn newton_step<O: DelassusOperator + Send>(
        &self,
        delassus: &mut O,
        cones: &[FrictionCone],
        step: &mut [f64],
        stack: &mut MemBuffer,
        tolerance: f64,
    ) -> bool {
        let r = self.unknowns.len();
        let m = self.lambda.len();
        let shared = Mutex::new(Shared {
            op: delassus,
            polisher: self,
            cones,
            force: vec![0.0; m],
            velocity: vec![0.0; m],
        });
        // faer 0.24's BiCGSTAB leaves its residual uninitialised when told the initial guess
        // is zero (`InitialGuessStatus::Zero`): the guess is zero, but faer is told it may
        // not be, and computes the residual b − J·0 (a product the Jacobian skips).
        step.fill(0.0);
        let params = BicgParams {
            initial_guess: InitialGuessStatus::MaybeNonZero,
            abs_tolerance: 0.0,
            rel_tolerance: tolerance,
            max_iters: KRYLOV_ITERATIONS,
            ..Default::default()
        };
        bicgstab(
            MatMut::from_column_major_slice_mut(step, r, 1),
            IdentityPrecond { dim: r },
            Preconditioner(&shared, r),
            Jacobian(&shared, r),
            MatRef::from_column_major_slice(&self.step, r, 1),
            params,
            |_| {},
            Par::Seq,
            MemStack::new(stack),
        )
        .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::delassus_operator::add_product;
    use crate::contact::polish::tests::seven_contacts;
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

    /// A Newton step by BiCGSTAB against the dense LU solve of the assembled Jacobian, on
    /// the unknowns of every kind.
    #[test]
    fn a_step_is_the_solve_with_the_assembled_jacobian() {
        let (g_mat, _, cones, _, mut p) = seven_contacts();
        let r = p.unknowns.len();
        let jacobian = DMat::from_column_slice(r, r, &p.assembled_jacobian(&g_mat, &cones));
        p.minus_equations();
        let expected = jacobian
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
        let mut stack = MemBuffer::new(bicgstab_scratch::<f64>(
            IdentityPrecond { dim: r },
            IdentityPrecond { dim: r },
            IdentityPrecond { dim: r },
            1,
            Par::Seq,
        ));
        let mut step = vec![0.0; r];
        assert!(p.newton_step(&mut op, &cones, &mut step, &mut stack, 1e-11));
        for (a, b) in step.iter().zip(expected.iter()) {
            assert!((a - b).abs() <= 1e-9 * expected.amax(), "{a} against {b}");
        }
    }

    /// The Jacobian's product against the dense polish's assembled Jacobian (itself checked
    /// against central differences in `super::super::polish`), column by column.
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
        let shared = Mutex::new(Shared {
            op: &mut op,
            polisher: &p,
            cones: &cones,
            force: vec![0.0; 3 * n],
            velocity: vec![0.0; 3 * n],
        });
        let product = Jacobian(&shared, r);
        for c in 0..r {
            let mut e = vec![0.0; r];
            e[c] = 1.0;
            let mut out = vec![0.0; r];
            product.apply(
                MatMut::from_column_major_slice_mut(&mut out, r, 1),
                MatRef::from_column_major_slice(&e, r, 1),
                Par::Seq,
                MemStack::new(&mut []),
            );
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
