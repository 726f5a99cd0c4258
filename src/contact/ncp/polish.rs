//! Polishing an ADMM iterate: once the iterations have found which face of its cone each
//! contact's force lies on, the NCP on those faces is a small square system of equations,
//! solved by Newton's method to round-off (the "solution polishing" of Stellato et al.'s OSQP,
//! Math. Prog. Comp. 2020, carried over to the frictional cone; docs/step.md).
//!
//! With `σ = G λ + g` and the faces of [`ConeFace`], a solution satisfies, per contact,
//!
//! ```text
//! apex      λ = 0                                       (no unknown, no equation)
//! interior  σ = 0                                       (unknowns λ: 3 equations)
//! boundary  λ = λ_N (μ cos θ, μ sin θ, 1),  σ_N = 0,  n(θ)ᵀ σ_T = 0
//!                                                       (unknowns λ_N, θ: 2 equations)
//! ```
//!
//! with `n(θ) = (−sin θ, cos θ)`: the sliding velocity is parallel to the friction force (and
//! opposite to it at a solution, which the residual check below confirms); for μ = 0 the
//! boundary is the ray λ = λ_N e_N, one unknown and the equation σ_N = 0. These equations are
//! linear in the forces and smooth in the angles; Newton's method on them (a dense LU with
//! partial pivoting of their Jacobian, `G` read through the unknowns' directions) starts from
//! the ADMM iterate and converges quadratically. A polished point is kept only if the NCP's own
//! residuals ([`super::problem::cone_residuals`]) are within the target: a wrong face, a
//! singular system (non-unique forces) or an iteration that does not settle leaves ADMM to go
//! on, so polishing changes how fast a solution is found, never what counts as one. Without an
//! assembled G (a factored Delassus operator) `super::polish_krylov` solves the same
//! equations, read through this polisher's unknowns and directions, by Newton–Krylov steps.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::lu::partial_pivoting::{factor, solve};
use faer::perm::PermRef;
use faer::{MatMut, MatRef, Par, Spec};

use super::cone::{ConeFace, FrictionCone};
use super::delassus_operator::dense_velocity;
use super::problem::cone_residuals;
use crate::math::DMat;

/// Steps of one polish: Newton steps, and chord steps that reuse the last LU while the
/// residual falls tenfold per step.
const STEPS: usize = 8;

/// ADMM iterations one LU of the reduced Jacobian may cost ([`polish_pays`]).
const WORTH_ITERATIONS: f64 = 100.0;

/// Newton steps (LU factorisations of the reduced Jacobian) of one polish at most.
const NEWTON_STEPS: usize = 3;

/// A pivot of the reduced Jacobian's LU below this fraction of the largest one makes it
/// singular: the forces on these faces are not unique (rows between rigid bodies alone), and
/// which of them ADMM's proximal iterates settle on is left to ADMM.
const PIVOT_RATIO: f64 = 1e-12;

/// One unknown of the reduced system and its equation.
#[derive(Debug, Clone, Copy)]
pub(super) enum Unknown {
    /// Component `k` of contact `i`'s force (interior); equation: `σ_{3i+k} = 0`.
    Component { i: usize, k: usize },
    /// The normal force of contact `i`, on its cone's boundary; equation: `σ_N = 0`.
    Normal { i: usize },
    /// The angle of contact `i`'s friction force on its cone's boundary (μ > 0); equation:
    /// `n(θ)ᵀ σ_T = 0`.
    Angle { i: usize },
}

/// An NCP solver's iterate to polish: the face of its cone each contact's force lies on, and
/// the forces (3 per contact, in their cones).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Iterate<'a> {
    pub(crate) faces: &'a [ConeFace],
    pub(crate) forces: &'a [f64],
}

/// The polisher's buffers (reused between solves) and what it last produced.
#[derive(Default)]
pub(crate) struct Polisher {
    pub(super) unknowns: Vec<Unknown>,
    /// Per contact on its cone's boundary: the unit direction `(cos θ, sin θ)` of its friction
    /// force (zero otherwise).
    pub(super) direction: Vec<[f64; 2]>,
    /// The current point: forces and velocities (3 per contact); after a successful
    /// [`Self::polish`], the polished point.
    pub(crate) lambda: Vec<f64>,
    pub(crate) sigma: Vec<f64>,
    /// The point of smallest residual so far.
    pub(super) best_lambda: Vec<f64>,
    pub(super) best_sigma: Vec<f64>,
    /// One column of the Jacobian in velocity space (3 per contact).
    column: Vec<f64>,
    /// The Jacobian, then its LU factors (column-major, r × r), and the row permutation.
    lu: Vec<f64>,
    perm: Vec<usize>,
    perm_inv: Vec<usize>,
    /// Minus the equations' values, then the step.
    pub(super) step: Vec<f64>,
    stack: Option<MemBuffer>,
    stack_dim: usize,
    /// The matrix-free polish's buffers (`polish_krylov`).
    pub(super) krylov: super::polish_krylov::KrylovWork,
}

impl std::fmt::Debug for Polisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Polisher")
            .field("unknowns", &self.unknowns.len())
            .finish()
    }
}

impl Polisher {
    /// Solves the NCP of the assembled `delassus` G, free velocity `g` and `cones` on the
    /// faces of `iterate` by Newton's method from its forces; true, with [`Self::lambda`] and
    /// [`Self::sigma`] filled, if a point's NCP residuals are all ≤ `target`.
    pub(crate) fn polish(
        &mut self,
        delassus: &DMat,
        g: &[f64],
        cones: &[FrictionCone],
        iterate: Iterate<'_>,
        target: f64,
    ) -> bool {
        let m = 3 * cones.len();
        debug_assert!(delassus.nrows() == m && g.len() == m);
        let faces = iterate.faces;
        if !self.set_faces(cones, iterate) {
            return false;
        }
        if !polish_pays(self.unknowns.len(), m) {
            return false;
        }
        self.place_boundary_forces(cones, faces);
        // Near a solution on the right faces Newton converges quadratically and the chord
        // steps (the last LU again) fast: a chord step while the residual falls tenfold per
        // step, a Newton step otherwise, up to NEWTON_STEPS of them. A Newton step that does
        // not lower the residual says the faces are wrong. Past the target the steps go on,
        // on the same LU, while the residual falls tenfold, so that a polished point is the
        // faces' exact solution to round-off wherever the iterate started (what finite
        // differences of whole steps see), and the best point is kept.
        let mut best = f64::INFINITY;
        let (mut last_score, mut last_fresh, mut factorizations) = (f64::INFINITY, false, 0);
        let mut stepped = false;
        for k in 0..=STEPS {
            dense_velocity(delassus, g, &self.lambda, &mut self.sigma);
            let score = cone_residuals(cones, &self.lambda, &self.sigma).max();
            if score < best {
                best = score;
                self.best_lambda.clone_from(&self.lambda);
                self.best_sigma.clone_from(&self.sigma);
            }
            let improved = score < last_score;
            let fast = score < 0.1 * last_score;
            let converged = best <= target;
            if k == STEPS || (!improved && (last_fresh || converged)) {
                break;
            }
            let fresh = k == 0 || !fast;
            if fresh && (factorizations == NEWTON_STEPS || (converged && k > 0)) {
                break;
            }
            (last_score, last_fresh) = (score, fresh);
            factorizations += usize::from(fresh);
            if !self.step(delassus, cones, fresh) {
                break;
            }
            stepped = true;
            self.place_boundary_forces(cones, faces);
        }
        // Not a single step (a singular system): the start is not a polished point, even
        // where it meets the target.
        if !stepped || !(best <= target) {
            return false;
        }
        std::mem::swap(&mut self.lambda, &mut self.best_lambda);
        std::mem::swap(&mut self.sigma, &mut self.best_sigma);
        true
    }

    /// Sets up the unknowns of `iterate`'s faces: the current point is its forces with the
    /// open contacts' forces zero, the boundary directions are its forces'. False if a
    /// contact sliding with friction has no tangential force to take its direction from.
    pub(super) fn set_faces(&mut self, cones: &[FrictionCone], iterate: Iterate<'_>) -> bool {
        let Iterate {
            faces,
            forces: start,
        } = iterate;
        let m = 3 * cones.len();
        debug_assert!(start.len() == m && faces.len() == cones.len());
        self.unknowns.clear();
        self.direction.clear();
        self.lambda.clear();
        self.lambda.extend_from_slice(start);
        self.sigma.resize(m, 0.0);
        self.column.resize(m, 0.0);
        for (i, face) in faces.iter().enumerate() {
            let (tx, ty) = (start[3 * i], start[3 * i + 1]);
            let t_norm = tx.hypot(ty);
            let mut direction = [0.0; 2];
            match face {
                ConeFace::Apex => self.lambda[3 * i..3 * i + 3].fill(0.0),
                ConeFace::Interior => {
                    self.unknowns
                        .extend((0..3).map(|k| Unknown::Component { i, k }));
                }
                ConeFace::Boundary => {
                    self.unknowns.push(Unknown::Normal { i });
                    if cones[i].mu() > 0.0 {
                        if !(t_norm > 0.0) {
                            return false;
                        }
                        direction = [tx / t_norm, ty / t_norm];
                        self.unknowns.push(Unknown::Angle { i });
                    }
                }
            }
            self.direction.push(direction);
        }
        true
    }

    /// λ_i = λ_N (μ τ, 1) for the contacts on their cones' boundaries.
    pub(super) fn place_boundary_forces(&mut self, cones: &[FrictionCone], faces: &[ConeFace]) {
        for (i, face) in faces.iter().enumerate() {
            if *face == ConeFace::Boundary {
                let mu = cones[i].mu();
                let normal = self.lambda[3 * i + 2];
                let [tx, ty] = self.direction[i];
                self.lambda[3 * i] = mu * normal * tx;
                self.lambda[3 * i + 1] = mu * normal * ty;
            }
        }
    }

    /// One step on the unknowns at the current point (λ, σ): with the Jacobian linearised
    /// and factorised here when `fresh` (Newton), with the last LU otherwise (chord). False
    /// if the Jacobian is singular or the step not finite.
    fn step(&mut self, delassus: &DMat, cones: &[FrictionCone], fresh: bool) -> bool {
        let r = self.unknowns.len();
        if r == 0 {
            return true;
        }
        if fresh {
            self.linearise(delassus, cones, true);
            if !self.factorize() {
                return false;
            }
        } else {
            self.linearise(delassus, cones, false);
        }
        let stack = MemStack::new(self.stack.as_mut().expect("sized by factorize"));
        let lu = MatRef::from_column_major_slice(&self.lu, r, r);
        solve::solve_in_place(
            lu,
            lu,
            PermRef::new_checked(&self.perm, &self.perm_inv, r),
            MatMut::from_column_major_slice_mut(&mut self.step, r, 1),
            Par::Seq,
            stack,
        );
        if !self.step.iter().all(|d| d.is_finite()) {
            return false;
        }
        for c in 0..r {
            self.move_unknown(self.unknowns[c], self.step[c]);
        }
        true
    }

    /// LU with partial pivoting of the Jacobian in `self.lu`, in place; false if a pivot is
    /// below [`PIVOT_RATIO`] of the largest.
    fn factorize(&mut self) -> bool {
        let r = self.unknowns.len();
        self.perm.resize(r, 0);
        self.perm_inv.resize(r, 0);
        if self.stack.is_none() || self.stack_dim < r {
            let req = factor::lu_in_place_scratch::<usize, f64>(r, r, Par::Seq, Spec::default())
                .or(solve::solve_in_place_scratch::<usize, f64>(r, 1, Par::Seq));
            self.stack = Some(MemBuffer::new(req));
            self.stack_dim = r;
        }
        let stack = MemStack::new(self.stack.as_mut().expect("sized above"));
        factor::lu_in_place(
            MatMut::from_column_major_slice_mut(&mut self.lu, r, r),
            &mut self.perm,
            &mut self.perm_inv,
            Par::Seq,
            stack,
            Spec::default(),
        );
        let (mut smallest, mut largest) = (f64::INFINITY, 0.0f64);
        for k in 0..r {
            let p = self.lu[k * r + k].abs();
            smallest = smallest.min(p);
            largest = largest.max(p);
        }
        smallest > PIVOT_RATIO * largest
    }

    /// Moves unknown `u` by `d` (N, or rad for an angle).
    pub(super) fn move_unknown(&mut self, u: Unknown, d: f64) {
        match u {
            Unknown::Component { i, k } => self.lambda[3 * i + k] += d,
            Unknown::Normal { i } => self.lambda[3 * i + 2] += d,
            Unknown::Angle { i } => {
                let [tx, ty] = self.direction[i];
                let (s, c) = d.sin_cos();
                self.direction[i] = [c * tx - s * ty, s * tx + c * ty];
            }
        }
    }

    /// The contact of unknown `u` and the change of that contact's force (3 components, in
    /// its frame) per unit change of `u` (N per N, or N per rad for an angle): a column of
    /// the map from the unknowns to the forces.
    pub(super) fn force_direction(&self, u: Unknown, cones: &[FrictionCone]) -> (usize, [f64; 3]) {
        match u {
            Unknown::Component { i, k } => {
                let mut w = [0.0; 3];
                w[k] = 1.0;
                (i, w)
            }
            Unknown::Normal { i } => {
                let mu = cones[i].mu();
                let [tx, ty] = self.direction[i];
                (i, [mu * tx, mu * ty, 1.0])
            }
            Unknown::Angle { i } => {
                // ∂λ_i/∂θ = μ λ_N (−sin θ, cos θ, 0).
                let scale = cones[i].mu() * self.lambda[3 * i + 2];
                let [tx, ty] = self.direction[i];
                (i, [-scale * ty, scale * tx, 0.0])
            }
        }
    }

    /// The contact of unknown `u`'s equation and the direction of that contact's velocity
    /// the equation reads (its value at velocities `v` is their dot product,
    /// [`Self::equation`]).
    pub(super) fn equation_direction(&self, u: Unknown) -> (usize, [f64; 3]) {
        match u {
            Unknown::Component { i, k } => {
                let mut w = [0.0; 3];
                w[k] = 1.0;
                (i, w)
            }
            Unknown::Normal { i } => (i, [0.0, 0.0, 1.0]),
            Unknown::Angle { i } => {
                let [tx, ty] = self.direction[i];
                (i, [-ty, tx, 0.0])
            }
        }
    }

    /// Unknown `u`'s equation at velocities `v` (3 per contact): its row of the Jacobian
    /// when `v` is a column G·(a force direction), its value when `v = σ`; the dot product
    /// of [`Self::equation_direction`] with `v`, written out (it runs r² times per Jacobian).
    pub(super) fn equation(&self, u: Unknown, v: &[f64]) -> f64 {
        match u {
            Unknown::Component { i, k } => v[3 * i + k],
            Unknown::Normal { i } => v[3 * i + 2],
            Unknown::Angle { i } => {
                let [tx, ty] = self.direction[i];
                -ty * v[3 * i] + tx * v[3 * i + 1]
            }
        }
    }

    /// The angle equation's own dependence on its angle at the current σ (zero for the other
    /// unknowns): with `n(θ) = (−sin θ, cos θ)`, `∂n/∂θ = −(cos θ, sin θ)`.
    pub(super) fn own_derivative(&self, u: Unknown) -> f64 {
        match u {
            Unknown::Angle { i } => {
                let [tx, ty] = self.direction[i];
                -(tx * self.sigma[3 * i] + ty * self.sigma[3 * i + 1])
            }
            _ => 0.0,
        }
    }

    /// Minus the equations' values at the current point (λ, σ) into `self.step`.
    pub(super) fn minus_equations(&mut self) {
        let mut step = std::mem::take(&mut self.step);
        step.clear();
        step.extend(
            self.unknowns
                .iter()
                .map(|&u| -self.equation(u, &self.sigma)),
        );
        self.step = step;
    }

    /// The reduced Jacobian at the current point (column-major, r × r), for tests.
    #[cfg(test)]
    pub(super) fn assembled_jacobian(
        &mut self,
        delassus: &DMat,
        cones: &[FrictionCone],
    ) -> Vec<f64> {
        self.linearise(delassus, cones, true);
        self.lu.clone()
    }

    /// Minus the equations' values at the current point (λ, σ) into `self.step`, and, when
    /// `with_jacobian`, their Jacobian with respect to the unknowns into `self.lu`
    /// (column-major).
    fn linearise(&mut self, delassus: &DMat, cones: &[FrictionCone], with_jacobian: bool) {
        self.minus_equations();
        if !with_jacobian {
            return;
        }
        let r = self.unknowns.len();
        let m = delassus.nrows();
        let gm = delassus.as_slice();
        let mut column = std::mem::take(&mut self.column);
        let mut lu = std::mem::take(&mut self.lu);
        lu.resize(r * r, 0.0);
        for (c, &u) in self.unknowns.iter().enumerate() {
            let col = |j: usize| &gm[j * m..(j + 1) * m];
            // G·(the unknown's force direction): a column of G for a force component, a
            // combination of the contact's columns otherwise (the tangential ones alone for
            // an angle, whose direction has no normal part).
            let velocities: &[f64] = match (u, self.force_direction(u, cones)) {
                // Read in place: G's own column.
                (Unknown::Component { i, k }, _) => col(3 * i + k),
                (Unknown::Angle { .. }, (i, [a, b, _])) => {
                    for (o, (x, y)) in column.iter_mut().zip(col(3 * i).iter().zip(col(3 * i + 1)))
                    {
                        *o = a * x + b * y;
                    }
                    &column
                }
                (_, (i, [a, b, d])) => {
                    for (o, ((x, y), z)) in column
                        .iter_mut()
                        .zip(col(3 * i).iter().zip(col(3 * i + 1)).zip(col(3 * i + 2)))
                    {
                        *o = a * x + b * y + d * z;
                    }
                    &column
                }
            };
            let out = &mut lu[c * r..(c + 1) * r];
            for (o, &v) in out.iter_mut().zip(&self.unknowns) {
                *o = self.equation(v, velocities);
            }
            out[c] += self.own_derivative(u);
        }
        self.column = column;
        self.lu = lu;
    }
}

/// Whether one LU of an r × r Jacobian (⅔ r³ flops) costs at most [`WORTH_ITERATIONS`] ADMM
/// iterations on m rows (two triangular solves with the dense factor of `G + c I`, 2 m²
/// flops): polishing a hundred contacts pays, a thousand do not (their LU alone costs more
/// than ADMM's whole solve).
fn polish_pays(r: usize, m: usize) -> bool {
    let (r, m) = (r as f64, m as f64);
    2.0 / 3.0 * r.powi(3) <= WORTH_ITERATIONS * 2.0 * m * m
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::math::{DVec, SplitMix64};

    /// A random SPD G (3n × 3n), free velocity and cones.
    fn problem(n: usize, seed: u64) -> (DMat, Vec<f64>, Vec<FrictionCone>) {
        let mut rng = SplitMix64::new(seed);
        let m = 3 * n;
        let b = DMat::from_fn(m, m, |_, _| rng.uniform());
        let g_mat = &b * b.transpose() / m as f64 + DMat::identity(m, m) * 0.1;
        let g = (0..m).map(|_| rng.uniform()).collect();
        let cones = (0..n)
            .map(|i| FrictionCone::new([0.0, 0.3, 0.8][i % 3]).unwrap())
            .collect();
        (g_mat, g, cones)
    }

    /// A singular G (rank 6 over four sticking contacts, as a box on four corners has): the
    /// sticking forces are not unique, the reduced system is singular, and the polish declines
    /// (which of the solutions to take is left to ADMM), even from an exact solution.
    #[test]
    fn a_singular_system_is_not_polished() {
        let mut b = DMat::zeros(12, 6);
        for i in 0..12 {
            for j in 0..6 {
                b[(i, j)] = ((i * 7 + j * 3) % 11) as f64 / 11.0 - 0.4;
            }
        }
        let g_mat = &b * b.transpose();
        // g = −G λ* with λ* inside every cone (μ = 2): λ* solves the NCP, all sticking.
        let star: Vec<f64> = (0..12)
            .map(|i| if i % 3 == 2 { 1.0 } else { 0.01 * i as f64 })
            .collect();
        let minus_g_star = |g_mat: &DMat| (-(g_mat * DVec::from_column_slice(&star))).data.into();
        let g: Vec<f64> = minus_g_star(&g_mat);
        let cones = vec![FrictionCone::new(2.0).unwrap(); 4];
        let mut p = Polisher::default();
        // From a point off the solution (an exact one would already meet the target).
        let start: Vec<f64> = star.iter().map(|x| 1.1 * x).collect();
        let interior = |forces| Iterate {
            faces: &[ConeFace::Interior; 4],
            forces,
        };
        assert!(!p.polish(&g_mat, &g, &cones, interior(&start), 1e-6));
        // The same four contacts over a positive definite G are polished from there.
        let g_mat = g_mat + DMat::identity(12, 12);
        let g: Vec<f64> = minus_g_star(&g_mat);
        assert!(p.polish(&g_mat, &g, &cones, interior(&start), 1e-12));
        for (a, b) in p.lambda.iter().zip(&star) {
            assert!((a - b).abs() < 1e-12, "{a} against {b}");
        }
    }

    /// Seven contacts with μ = 0, 0.3, 0.8 in turn over a random SPD G, their faces (every
    /// kind: boundary with and without friction, interior, apex), and a polisher set up on
    /// them at a point away from any solution, with σ = G λ + g there. Shared with
    /// `crate::contact::ncp::polish_krylov`'s tests.
    pub(crate) fn seven_contacts() -> (DMat, Vec<f64>, Vec<FrictionCone>, [ConeFace; 7], Polisher) {
        let n = 7;
        let (g_mat, g, cones) = problem(n, 3);
        let faces = [
            ConeFace::Boundary,
            ConeFace::Interior,
            ConeFace::Boundary,
            ConeFace::Apex,
            ConeFace::Boundary,
            ConeFace::Interior,
            ConeFace::Boundary,
        ];
        let mut rng = SplitMix64::new(9);
        let start: Vec<f64> = (0..3 * n)
            .map(|k| {
                if k % 3 == 2 {
                    1.0 + rng.uniform()
                } else {
                    0.3 * rng.uniform()
                }
            })
            .collect();
        let mut p = Polisher::default();
        let iterate = Iterate {
            faces: &faces,
            forces: &start,
        };
        assert!(p.set_faces(&cones, iterate));
        p.place_boundary_forces(&cones, &faces);
        dense_velocity(&g_mat, &g, &p.lambda, &mut p.sigma);
        (g_mat, g, cones, faces, p)
    }

    /// An equation's value is the dot product of its direction with the velocities, for every
    /// kind of unknown (the matrix-free polish's preconditioner reads the directions).
    #[test]
    fn an_equation_reads_along_its_direction() {
        let (_, _, _, _, p) = seven_contacts();
        let v: Vec<f64> = (0..21).map(|j| (0.37 * j as f64).sin()).collect();
        for &u in &p.unknowns {
            let (i, w) = p.equation_direction(u);
            let dot = w[0] * v[3 * i] + w[1] * v[3 * i + 1] + w[2] * v[3 * i + 2];
            assert!((p.equation(u, &v) - dot).abs() <= 1e-15, "{u:?}");
        }
    }

    /// The Jacobian of the reduced equations against central differences of the equations
    /// themselves (each unknown moved by ±1e-6), at a point away from any solution.
    #[test]
    fn the_jacobian_is_the_derivative_of_the_equations() {
        let (g_mat, g, cones, faces, mut p) = seven_contacts();
        p.linearise(&g_mat, &cones, true);
        let r = p.unknowns.len();
        let jacobian = p.lu.clone();
        assert_eq!(r, 1 + 3 + 2 + 2 + 3 + 1, "unknowns: {:?}", p.unknowns);
        let h = 1e-6;
        let unknowns = p.unknowns.clone();
        for (c, &u) in unknowns.iter().enumerate() {
            // Minus the equations' values with unknown c moved by d.
            let mut values = |d: f64| {
                let (lambda, direction) = (p.lambda.clone(), p.direction.clone());
                p.move_unknown(u, d);
                p.place_boundary_forces(&cones, &faces);
                dense_velocity(&g_mat, &g, &p.lambda, &mut p.sigma);
                p.linearise(&g_mat, &cones, false);
                (p.lambda, p.direction) = (lambda, direction);
                p.step.clone()
            };
            let (plus, minus) = (values(h), values(-h));
            for q in 0..r {
                let fd = -(plus[q] - minus[q]) / (2.0 * h);
                let exact = jacobian[c * r + q];
                assert!(
                    (fd - exact).abs() <= 1e-7 * (1.0 + exact.abs()),
                    "∂F{q}/∂u{c} ({u:?}): {exact:e} against {fd:e}"
                );
            }
        }
    }
}
