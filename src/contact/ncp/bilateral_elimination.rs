//! Bilateral rows eliminated exactly from an NCP before it is solved (attachments: soft nodes
//! held to a rigid body, `scene::step::contact::group`).
//!
//! A bilateral contact b takes any force and keeps zero relative velocity (its cone is ℝ³,
//! [`crate::contact::FrictionCone::bilateral`]), so with the other contacts c
//!
//! ```text
//! σ_b = G_bb λ_b + G_bc λ_c + g_b = 0   ⇒   λ_b = −G_bb⁻¹ (g_b + G_bc λ_c)
//! σ_c = (G_cc − G_cb G_bb⁻¹ G_bc) λ_c + (g_c − G_cb G_bb⁻¹ g_b)
//! ```
//!
//! The second line is an NCP of the other contacts alone, on their own cones, with the Schur
//! complement of G as its Delassus matrix: the same problem, exactly, and no bilateral row
//! left for the solver to iterate on (`gripper_lift`: 50 of its 66 contacts are attachment
//! rows). One dense LLᵀ of `G_bb` (faer) and two triangular solves per column of `[G_bc g_b]`;
//! no inverse is formed.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{
    LltRegularization, cholesky_in_place, cholesky_in_place_scratch,
};
use faer::linalg::cholesky::llt::solve::solve_in_place_with_conj;
use faer::linalg::matmul::matmul;
use faer::{Accum, Conj, MatMut, MatRef, Par, Spec};

use super::cone::FrictionCone;
use super::problem::{ContactProblem, NcpSolution};
use crate::math::{DMat, DVec};

/// The smallest pivot of `G_bb`'s LLᵀ, squared, relative to its largest diagonal entry, that
/// the elimination accepts: below it the bilateral rows are (nearly) dependent, e.g. one node
/// held twice, and the problem is solved whole.
const PIVOT_RATIO: f64 = 1e-12;

/// The buffers of one elimination, kept between problems (module doc).
#[derive(Default)]
pub struct BilateralElimination {
    /// The bilateral contacts, and the others, by index in the whole problem.
    bilateral: Vec<usize>,
    others: Vec<usize>,
    /// Their rows (3 per contact).
    rows_b: Vec<usize>,
    rows_c: Vec<usize>,
    /// LLᵀ of G_bb, column-major (lower triangle).
    factor: Vec<f64>,
    /// G_bb⁻¹ [G_bc g_b]: 3·bilateral rows, 3·others + 1 columns.
    solved: Vec<f64>,
    /// [G_bc g_b] before the solve, then scratch.
    coupling: Vec<f64>,
    stack: Option<MemBuffer>,
    stack_dim: usize,
}

impl std::fmt::Debug for BilateralElimination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BilateralElimination")
            .field("bilateral", &self.bilateral.len())
            .field("others", &self.others.len())
            .finish()
    }
}

impl BilateralElimination {
    /// The NCP of `problem`'s contacts that are not bilateral, with its bilateral rows
    /// eliminated (module doc). `None` when it has no bilateral contact, or when `G_bb` is
    /// not positive definite by a margin (its smallest pivot² above 1e-12 of its largest
    /// diagonal entry; rows that repeat one another fail it):
    /// then solve `problem` itself. With no other contact the reduced problem is empty and
    /// [`expand`](Self::expand) needs no solution of it.
    pub fn reduce(&mut self, problem: &ContactProblem) -> Option<ContactProblem> {
        let cones = problem.cones();
        self.bilateral.clear();
        self.others.clear();
        for (i, cone) in cones.iter().enumerate() {
            if cone.is_bilateral() {
                self.bilateral.push(i);
            } else {
                self.others.push(i);
            }
        }
        if self.bilateral.is_empty() {
            return None;
        }
        let g = problem.delassus();
        let (mb, mc) = (3 * self.bilateral.len(), 3 * self.others.len());
        let rows = |set: &[usize], out: &mut Vec<usize>| {
            out.clear();
            out.extend(set.iter().flat_map(|&i| 3 * i..3 * i + 3));
        };
        rows(&self.bilateral, &mut self.rows_b);
        rows(&self.others, &mut self.rows_c);
        let (rb, rc) = (&self.rows_b, &self.rows_c);
        let (m, gs) = (g.nrows(), g.as_slice());
        // Entries `rows` of G's column j, appended to `out`.
        let gather = |j: usize, rows: &[usize], out: &mut Vec<f64>| {
            let column = &gs[j * m..(j + 1) * m];
            out.extend(rows.iter().map(|&i| column[i]));
        };
        // G_bb and its LLᵀ.
        self.factor.clear();
        for &j in rb {
            gather(j, rb, &mut self.factor);
        }
        let largest = (0..mb).map(|i| self.factor[i * mb + i]).fold(0.0, f64::max);
        if self.stack.is_none() || self.stack_dim != mb {
            self.stack = Some(MemBuffer::new(cholesky_in_place_scratch::<f64>(
                mb,
                Par::Seq,
                Spec::default(),
            )));
            self.stack_dim = mb;
        }
        let stack = MemStack::new(self.stack.as_mut().expect("sized above"));
        let factorised = cholesky_in_place(
            MatMut::from_column_major_slice_mut(&mut self.factor, mb, mb),
            LltRegularization::default(),
            Par::Seq,
            stack,
            Spec::default(),
        );
        let smallest = (0..mb)
            .map(|i| self.factor[i * mb + i].powi(2))
            .fold(f64::INFINITY, f64::min);
        if factorised.is_err() || !(smallest > PIVOT_RATIO * largest) {
            return None;
        }
        // G_bb⁻¹ [G_bc g_b].
        let free = problem.free_velocity();
        self.coupling.clear();
        for &j in rc {
            gather(j, rb, &mut self.coupling);
        }
        self.coupling.extend(rb.iter().map(|&i| free[i]));
        self.solved.clone_from(&self.coupling);
        solve_in_place_with_conj(
            MatRef::from_column_major_slice(&self.factor, mb, mb),
            Conj::No,
            MatMut::from_column_major_slice_mut(&mut self.solved, mb, mc + 1),
            Par::Seq,
            MemStack::new(&mut []),
        );
        // G_r = G_cc − G_bcᵀ G_bb⁻¹ G_bc, g_r = g_c − G_bcᵀ G_bb⁻¹ g_b.
        let mut reduced = DMat::from_fn(mc, mc, |i, j| g[(rc[i], rc[j])]);
        let mut g_r = DVec::from_fn(mc, |i, _| free[rc[i]]);
        let coupling = MatRef::from_column_major_slice(&self.coupling, mb, mc + 1);
        let solved = MatRef::from_column_major_slice(&self.solved, mb, mc + 1);
        matmul(
            MatMut::from_column_major_slice_mut(reduced.as_mut_slice(), mc, mc),
            Accum::Add,
            coupling.subcols(0, mc).transpose(),
            solved.subcols(0, mc),
            -1.0,
            Par::Seq,
        );
        matmul(
            MatMut::from_column_major_slice_mut(g_r.as_mut_slice(), mc, 1),
            Accum::Add,
            coupling.subcols(0, mc).transpose(),
            solved.subcols(mc, 1),
            -1.0,
            Par::Seq,
        );
        // Exactly symmetric: the two triangles differ by the products' round-off.
        for j in 0..mc {
            for i in j + 1..mc {
                let v = 0.5 * (reduced[(i, j)] + reduced[(j, i)]);
                reduced[(i, j)] = v;
                reduced[(j, i)] = v;
            }
        }
        let cones: Vec<FrictionCone> = self.others.iter().map(|&i| cones[i]).collect();
        ContactProblem::with_symmetric_cones(reduced, g_r, cones).ok()
    }

    /// The entries of the other (not bilateral) contacts of a whole-problem vector `full`
    /// (a warm start), into `out`, after [`reduce`](Self::reduce).
    pub fn restrict(&self, full: &[f64], out: &mut Vec<f64>) {
        out.clear();
        out.extend(
            self.others
                .iter()
                .flat_map(|&i| full[3 * i..3 * i + 3].iter()),
        );
    }

    /// The whole problem's solution from the reduced one's λ (`reduced_lambda`, 3 per other
    /// contact; empty when there are none): λ_b = −G_bb⁻¹ (g_b + G_bc λ_c), then σ = G λ + g
    /// and the residuals of `problem` itself, `iterations` those of the reduced solve.
    /// Panics unless [`reduce`](Self::reduce) of this `problem` returned a problem.
    pub fn expand(
        &self,
        problem: &ContactProblem,
        reduced_lambda: &[f64],
        iterations: usize,
        tolerance: f64,
    ) -> NcpSolution {
        let (mb, mc) = (3 * self.bilateral.len(), 3 * self.others.len());
        assert_eq!(reduced_lambda.len(), mc, "expand: λ of the other contacts");
        let solved = &self.solved;
        let mut lambda = DVec::zeros(problem.free_velocity().len());
        for (a, &b) in self.bilateral.iter().enumerate() {
            for p in 0..3 {
                let r = 3 * a + p;
                let coupled: f64 = reduced_lambda
                    .iter()
                    .enumerate()
                    .map(|(j, l)| solved[j * mb + r] * l)
                    .sum();
                lambda[3 * b + p] = -solved[mc * mb + r] - coupled;
            }
        }
        for (a, &c) in self.others.iter().enumerate() {
            for p in 0..3 {
                lambda[3 * c + p] = reduced_lambda[3 * a + p];
            }
        }
        problem.solution(lambda, iterations, tolerance)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::{AdmmSettings, AdmmSolver};
    use crate::math::SplitMix64;

    /// A well-conditioned SPD Delassus matrix `B Bᵀ/m + 0.5 I`.
    fn random_delassus(rng: &mut SplitMix64, m: usize) -> DMat {
        let b = DMat::from_fn(m, m, |_, _| rng.uniform());
        let g = &b * b.transpose() / m as f64 + 0.5 * DMat::identity(m, m);
        (&g + g.transpose()) * 0.5
    }

    /// An NCP whose solution is built first (a second method: the answer is known before
    /// any solver runs): bilateral contacts with any force and σ = 0, sticking contacts
    /// strictly inside their cone with σ = 0, separating ones with λ = 0 and σ_N > 0; then
    /// g = σ* − G λ*.
    fn constructed(rng: &mut SplitMix64, kinds: &[u8]) -> (ContactProblem, DVec) {
        let n = kinds.len();
        let g = random_delassus(rng, 3 * n);
        let mut lambda = DVec::zeros(3 * n);
        let mut sigma = DVec::zeros(3 * n);
        let mut cones = Vec::new();
        for (i, kind) in kinds.iter().enumerate() {
            match kind {
                b'b' => {
                    for p in 0..3 {
                        lambda[3 * i + p] = rng.uniform();
                    }
                    cones.push(FrictionCone::bilateral());
                }
                b's' => {
                    lambda[3 * i] = 0.1 * rng.uniform();
                    lambda[3 * i + 1] = 0.1 * rng.uniform();
                    lambda[3 * i + 2] = 1.0 + 0.5 * rng.uniform();
                    cones.push(FrictionCone::new(0.5).unwrap());
                }
                _ => {
                    sigma[3 * i] = rng.uniform();
                    sigma[3 * i + 1] = rng.uniform();
                    sigma[3 * i + 2] = 1.0 + 0.5 * rng.uniform();
                    cones.push(FrictionCone::new(0.5).unwrap());
                }
            }
        }
        let free = &sigma - &g * &lambda;
        (ContactProblem::with_cones(g, free, cones).unwrap(), lambda)
    }

    fn tight_admm() -> AdmmSolver {
        AdmmSolver::new(AdmmSettings {
            tolerance: 1e-12,
            max_iterations: 5000,
            ..Default::default()
        })
    }

    #[test]
    fn the_reduced_problem_has_the_whole_problems_solution() {
        let mut rng = SplitMix64::new(3);
        let (problem, expected) = constructed(&mut rng, b"bsbbsobsob");
        let mut elimination = BilateralElimination::default();
        let reduced = elimination
            .reduce(&problem)
            .expect("G_bb is positive definite");
        assert_eq!(reduced.contact_count(), 5);
        let solution = tight_admm().solve(&reduced, None).unwrap();
        assert!(solution.converged);
        let whole = elimination.expand(&problem, solution.lambda.as_slice(), 7, 1e-10);
        let error = (&whole.lambda - &expected).amax();
        assert!(error < 1e-9, "λ off by {error:.1e} N");
        assert!(whole.converged && whole.residuals.max() < 1e-10);
        assert_eq!(whole.iterations, 7);
        // The whole problem solved as it is agrees.
        let direct = tight_admm().solve(&problem, None).unwrap();
        assert!((&direct.lambda - &expected).amax() < 1e-9);
        // A warm start keeps the other contacts' entries, in order.
        let mut warm = Vec::new();
        elimination.restrict(expected.as_slice(), &mut warm);
        let others: Vec<f64> = [1usize, 4, 5, 7, 8]
            .iter()
            .flat_map(|&i| expected.as_slice()[3 * i..3 * i + 3].to_vec())
            .collect();
        assert_eq!(warm, others);
    }

    #[test]
    fn bilateral_rows_alone_are_one_linear_solve() {
        let mut rng = SplitMix64::new(4);
        let (problem, expected) = constructed(&mut rng, b"bbbb");
        let mut elimination = BilateralElimination::default();
        let reduced = elimination
            .reduce(&problem)
            .expect("G is positive definite");
        assert_eq!(reduced.contact_count(), 0);
        let whole = elimination.expand(&problem, &[], 0, 1e-12);
        let error = (&whole.lambda - &expected).amax();
        assert!(error < 1e-12, "λ off by {error:.1e} N");
        assert!(whole.converged);
    }

    #[test]
    fn no_elimination_without_bilateral_rows_or_with_repeated_ones() {
        let mut rng = SplitMix64::new(5);
        let (problem, _) = constructed(&mut rng, b"sos");
        let mut elimination = BilateralElimination::default();
        assert!(elimination.reduce(&problem).is_none());
        // Contact 1 repeats contact 0 (one node held twice): G_bb is singular.
        let (problem, _) = constructed(&mut rng, b"bbs");
        let mut g = problem.delassus().clone();
        for i in 0..9 {
            for p in 0..3 {
                g[(3 + p, i)] = g[(p, i)];
            }
        }
        for j in 0..9 {
            for p in 0..3 {
                g[(j, 3 + p)] = g[(j, p)];
            }
        }
        let repeated = ContactProblem::with_cones(
            g,
            problem.free_velocity().clone(),
            problem.cones().to_vec(),
        )
        .unwrap();
        assert!(elimination.reduce(&repeated).is_none());
    }
}
