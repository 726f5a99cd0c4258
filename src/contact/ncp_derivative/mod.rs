//! The implicit derivative of the frictional contact NCP's solution λ (paper 002 §III-B,
//! Eq. 8–11, Appendices A–B), built once per solved NCP and applied to any number of
//! forward (tangent) or reverse (cotangent) directions.
//!
//! At a solution (λ, σ = Gλ + g) with each contact's mode fixed, a perturbation that changes
//! σ by `dq` when λ is held (dq = dG λ + dg, 3 per contact, contact frames `[t₁, t₂, n]`)
//! changes λ by the `dλ` solving the linearised mode equations, with `dσ = G dλ + dq`:
//!
//! ```text
//! breaking i:  dλ_i = 0                                                   (Eq. 8)
//! sticking i:  dσ_i = 0                                     3 rows        (Eq. 9)
//! sliding  i:  dσ_N = 0,   dλ_T = −μ dλ_N u − (μ λ_N/‖σ_T‖)(I − u uᵀ) dσ_T,  u = σ_T/‖σ_T‖
//! ```
//!
//! **Sliding contacts** (Appendix A). The u-component of the friction equation says
//! `uᵀdλ_T + μ dλ_N = 0`: dλ stays in the plane tangent to the cone at λ, spanned by the
//! orthonormal basis `R = [r₁, r₂]`, `r₁ = (−μu, 1)/√(1+μ²)` (= λ/‖λ‖) and `r₂ = (e_z × u, 0)`,
//! so `dλ_i = R x_i` with two unknowns. The two remaining equations are the normal row and the
//! `u⊥ = e_z × u` row of the friction law. The paper writes the latter as
//! `x₂ + (1/α) u⊥ᵀdσ_T = 0`, `α = ‖σ_T‖/(μλ_N)`; here it is scaled to
//!
//! ```text
//! (1 − w) κ x₂ + w u⊥ᵀ dσ_T = 0,     w = μλ_N / (μλ_N + ‖σ_T‖/κ) ∈ [0, 1]
//! ```
//!
//! (the same equation times `w`, κ the mean diagonal of the contact's block of G, (m/s)/N),
//! so every row of the reduced system is a velocity (m/s) and neither `‖σ_T‖ → 0`
//! (`w → 1`: the slip direction's velocity is held) nor `μ λ_N → 0` (`w → 0`: `x₂ = 0`, the
//! force stays on the cone's axis or apex) divides by zero.
//!
//! **Reduced system** (Appendix B, Eq. 23–28): unknowns `X` = 3 per sticking contact and 2 per
//! sliding one (breaking contacts removed), `dλ = C X`, and `A X = −B dq` with
//! `A = B G C + D` (`D` holds the `(1 − w)κ` terms, the paper's `Q`). `A` is factorised once
//! with faer's dense column-pivoted QR (sequential). When its numerical rank is below its size
//! (relative pivot below [`RANK_TOLERANCE`], e.g. duplicated contacts making G singular), the
//! minimum-norm least-squares solution `X = A⁺(−B dq)` is used instead (SVD pseudo-inverse,
//! nalgebra) and [`NcpDerivative::status`] says so. Either way the map `dq ↦ dλ` is one fixed
//! linear operator `L = −C A⁺ B` and the cotangent is exactly `Lᵀ`: `q̄ = −Bᵀ A⁺ᵀ Cᵀ λ̄`.
//! The output is never NaN for finite input.
//!
//! **Mode boundaries** ([`BoundaryGradient`]): the derivative is one-sided. By default it
//! differentiates the modes as given; [`classify`](super::classify) resolves a boundary by
//! picking breaking before sticking before sliding, so a contact with λ ≈ 0 and σ_N ≈ 0 is
//! differentiated as open (dλ = 0), and one with ‖σ_T‖ ≈ 0 on the cone's rim as sticking.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::qr::col_pivoting::{factor as qr_factor, solve as qr_solve};
use faer::perm::Perm;
use faer::{MatMut, MatRef, Par, Spec};

use super::modes::ContactMode;
use crate::error::{Error, Result};
use crate::math::{DMat, Vec3};

/// Relative pivot of the column-pivoted QR below which the reduced system counts as rank
/// deficient (`|R_kk| ≤ RANK_TOLERANCE · |R_00|`): condition numbers above ~1e11 are treated
/// as singular and solved in the minimum-norm least-squares sense.
pub const RANK_TOLERANCE: f64 = 1e-11;

/// Which side of a contact-mode boundary the reverse derivative takes (DESIGN.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum BoundaryGradient {
    /// Differentiate the modes as given (the default). With modes from
    /// [`classify`](super::classify), a boundary contact is taken as breaking before sticking
    /// before sliding.
    #[default]
    OneSided,
    /// The complementarity-aware gradient of paper 003 §IV-D, adapted to the Coulomb NCP; it
    /// changes [`NcpDerivative::cotangent`] only (forward mode has no loss to be aware of).
    ///
    /// A *tied* contact is one given as breaking with `σ_N ≤ tied_velocity` (m/s): it touches
    /// and could close. For a cotangent λ̄ = ∂ℓ/∂λ, each tied contact with `λ̄_N < 0` (the loss
    /// decreases if the contact pushes harder, i.e. the optimiser wants it closed — the
    /// paper's "∂ℓ/∂v_i > 0 → clamping") is relabelled as closed: sticking when
    /// `‖σ_T‖ ≤ tied_velocity`, otherwise sliding at the cone's apex (λ_T = −μ λ_N u from
    /// λ_N = 0). As in the paper, two strategies are evaluated — the given modes and the
    /// relabelled ones — and the one giving the larger gradient is kept. Adaptations: the
    /// paper's score `‖∂ℓ/∂q̇‖² + ‖∂ℓ/∂τ‖²/Δt` is not visible at this layer, so the score is
    /// `‖q̄‖²`, the gradient on the contact-velocity perturbation; and the opposite relabelling
    /// (clamping → separating when the optimiser wants separation) needs ∂ℓ/∂σ, which a
    /// λ-cotangent does not carry, so active contacts keep their mode. The relabelled system
    /// is factorised on demand (only when a tied contact asks to close).
    ComplementarityAware {
        /// Largest normal velocity σ_N (m/s) of a breaking contact that counts as tied.
        tied_velocity: f64,
    },
}

/// How the reduced system was solved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReducedStatus {
    /// Full rank: solved with the column-pivoted QR.
    Regular,
    /// Numerically rank deficient: minimum-norm least-squares solution (SVD pseudo-inverse);
    /// the derivative is then one element of the generalised Jacobian, not unique.
    RankDeficient {
        /// Numerical rank (singular values above `RANK_TOLERANCE · σ_max`).
        rank: usize,
    },
}

/// Which strategy a complementarity-aware cotangent used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CotangentSide {
    /// The modes as given (always the case for [`BoundaryGradient::OneSided`]).
    Classified,
    /// Tied contacts relabelled as closed (paper 003 §IV-D); carries how many.
    Relabelled(usize),
}

/// One contact's place in the reduced system.
#[derive(Debug, Clone, Copy)]
enum Block {
    Breaking,
    Sticking {
        /// First unknown (and first row) of the contact in X.
        col: usize,
    },
    Sliding {
        col: usize,
        /// Tangent-plane basis r₁, r₂ (contact frame).
        basis: [Vec3; 2],
        /// The friction row's weight on dσ_i: w (u⊥, 0).
        row: Vec3,
        /// The friction row's weight on x₂: (1 − w) κ.
        diag: f64,
    },
}

/// The factorised reduced matrix A (m×m, column major).
#[derive(Debug)]
enum ReducedSolver {
    /// m = 0: every contact breaking.
    Empty,
    Qr {
        qr: Vec<f64>,
        coeff: Vec<f64>,
        block_size: usize,
        perm: Perm<usize>,
    },
    /// A⁺ (m×m).
    PseudoInverse(DMat),
}

impl ReducedSolver {
    fn factorize(mut a: DMat) -> (ReducedSolver, ReducedStatus) {
        let m = a.nrows();
        if m == 0 {
            return (ReducedSolver::Empty, ReducedStatus::Regular);
        }
        let pseudo = DMat::clone(&a);
        let block_size = faer::linalg::qr::no_pivoting::factor::recommended_block_size::<f64>(m, m);
        let mut coeff = vec![0.0; block_size * m];
        let mut fwd = vec![0usize; m];
        let mut bwd = vec![0usize; m];
        let mut buffer = MemBuffer::new(qr_factor::qr_in_place_scratch::<usize, f64>(
            m,
            m,
            block_size,
            Par::Seq,
            Spec::default(),
        ));
        qr_factor::qr_in_place(
            MatMut::from_column_major_slice_mut(a.as_mut_slice(), m, m),
            MatMut::from_column_major_slice_mut(&mut coeff, block_size, m),
            &mut fwd,
            &mut bwd,
            Par::Seq,
            MemStack::new(&mut buffer),
            Spec::default(),
        );
        // Column pivoting orders |R_kk| decreasingly; take the extremes anyway.
        let r00 = (0..m).fold(0.0f64, |x, k| x.max(a[(k, k)].abs()));
        let rmin = (0..m).fold(f64::INFINITY, |x, k| x.min(a[(k, k)].abs()));
        if r00 > 0.0 && r00.is_finite() && rmin > RANK_TOLERANCE * r00 {
            let perm = Perm::new_checked(fwd.into_boxed_slice(), bwd.into_boxed_slice(), m);
            return (
                ReducedSolver::Qr {
                    qr: a.as_slice().to_vec(),
                    coeff,
                    block_size,
                    perm,
                },
                ReducedStatus::Regular,
            );
        }
        // Rank deficient: A⁺ = V Σ⁺ Uᵀ.
        let svd = pseudo.svd(true, true);
        let (u, vt) = (
            svd.u.as_ref().expect("requested"),
            svd.v_t.as_ref().expect("requested"),
        );
        let smax = svd.singular_values.iter().fold(0.0f64, |a, &s| a.max(s));
        let mut rank = 0;
        let mut pinv = DMat::zeros(m, m);
        for (k, &s) in svd.singular_values.iter().enumerate() {
            if smax > 0.0 && s > RANK_TOLERANCE * smax {
                rank += 1;
                // pinv += v_k u_kᵀ / s
                for c in 0..m {
                    let uc = u[(c, k)] / s;
                    if uc != 0.0 {
                        for r in 0..m {
                            pinv[(r, c)] += vt[(k, r)] * uc;
                        }
                    }
                }
            }
        }
        (
            ReducedSolver::PseudoInverse(pinv),
            ReducedStatus::RankDeficient { rank },
        )
    }

    /// `rhs ← A⁺ rhs` (`transpose`: `A⁺ᵀ rhs`), rhs m×k column major.
    fn solve(&self, rhs: &mut [f64], k: usize, transpose: bool) {
        match self {
            ReducedSolver::Empty => {}
            ReducedSolver::Qr {
                qr,
                coeff,
                block_size,
                perm,
            } => {
                let m = perm.len();
                let q = MatRef::from_column_major_slice(qr, m, m);
                let h = MatRef::from_column_major_slice(coeff, *block_size, m);
                let x = MatMut::from_column_major_slice_mut(rhs, m, k);
                if transpose {
                    let mut buffer = MemBuffer::new(qr_solve::solve_transpose_in_place_scratch::<
                        usize,
                        f64,
                    >(
                        m, *block_size, k, Par::Seq
                    ));
                    qr_solve::solve_transpose_in_place(
                        q,
                        h,
                        q,
                        perm.as_ref(),
                        x,
                        Par::Seq,
                        MemStack::new(&mut buffer),
                    );
                } else {
                    let mut buffer = MemBuffer::new(
                        qr_solve::solve_in_place_scratch::<usize, f64>(m, *block_size, k, Par::Seq),
                    );
                    qr_solve::solve_in_place(
                        q,
                        h,
                        q,
                        perm.as_ref(),
                        x,
                        Par::Seq,
                        MemStack::new(&mut buffer),
                    );
                }
            }
            ReducedSolver::PseudoInverse(p) => {
                let m = p.nrows();
                let mut out = vec![0.0; m];
                for c in 0..k {
                    let col = &mut rhs[c * m..(c + 1) * m];
                    for (r, o) in out.iter_mut().enumerate() {
                        *o = if transpose {
                            p.column(r).iter().zip(col.iter()).map(|(a, b)| a * b).sum()
                        } else {
                            (0..m).map(|j| p[(r, j)] * col[j]).sum()
                        };
                    }
                    col.copy_from_slice(&out);
                }
            }
        }
    }
}

/// The inputs of the NCP derivative, kept for the complementarity-aware relabelling.
#[derive(Debug, Clone)]
struct Inputs {
    delassus: DMat,
    friction: Vec<f64>,
    lambda: Vec<f64>,
    sigma: Vec<f64>,
    modes: Vec<ContactMode>,
}

/// The reduced system for one set of modes: layout, size and factorisation.
#[derive(Debug)]
struct Reduced {
    blocks: Vec<Block>,
    size: usize,
    solver: ReducedSolver,
    status: ReducedStatus,
}

/// The implicit derivative of one solved NCP (module doc; paper 002 Eq. 11, App. A–B):
/// `dλ = L dq` with `L = −C A⁺ B`, factorised once by [`NcpDerivative::new`].
///
/// Units: `dq` and `q̄`'s dual are contact velocities (m/s), `dλ` forces (N), in the contact
/// frames `[t₁, t₂, n]`, 3 entries per contact.
#[derive(Debug)]
pub struct NcpDerivative {
    reduced: Reduced,
    boundary: BoundaryGradient,
    /// Tied contacts (complementarity-aware only), with the inputs to relabel them.
    tied: Vec<usize>,
    inputs: Option<Inputs>,
}

fn block3(v: &[f64], i: usize) -> Vec3 {
    Vec3::new(v[3 * i], v[3 * i + 1], v[3 * i + 2])
}

/// Lays out and factorises the reduced system of the given modes (inputs already checked).
fn build_reduced(
    g: &DMat,
    friction: &[f64],
    lambda: &[f64],
    sigma: &[f64],
    modes: &[ContactMode],
) -> Reduced {
    let n = modes.len();
    let global_scale = (0..3 * n).fold(0.0f64, |a, k| a.max(g[(k, k)].abs()));
    let global_scale = if global_scale > 0.0 {
        global_scale
    } else {
        1.0
    };
    let mut blocks = Vec::with_capacity(n);
    let mut size = 0;
    for (i, &mode) in modes.iter().enumerate() {
        let block = match mode {
            ContactMode::Breaking => Block::Breaking,
            ContactMode::Sticking => Block::Sticking { col: size },
            ContactMode::Sliding => {
                let mu = friction[i];
                let s = block3(sigma, i);
                let l = block3(lambda, i);
                let s_norm = s.x.hypot(s.y);
                let l_t = l.x.hypot(l.y);
                let u = if s_norm > 0.0 {
                    Some((s.x / s_norm, s.y / s_norm))
                } else if l_t > 0.0 {
                    Some((-l.x / l_t, -l.y / l_t))
                } else {
                    None
                };
                match u {
                    // No slip direction at all: the sticking equations.
                    None => Block::Sticking { col: size },
                    Some((ux, uy)) => {
                        let kappa = (g[(3 * i, 3 * i)]
                            + g[(3 * i + 1, 3 * i + 1)]
                            + g[(3 * i + 2, 3 * i + 2)])
                            / 3.0;
                        let kappa = if kappa > 0.0 { kappa } else { global_scale };
                        let force = mu * l.z.max(0.0);
                        let denom = force + s_norm / kappa;
                        let w = if denom > 0.0 { force / denom } else { 0.0 };
                        let c = 1.0 / (1.0 + mu * mu).sqrt();
                        let perp = Vec3::new(-uy, ux, 0.0);
                        Block::Sliding {
                            col: size,
                            basis: [Vec3::new(-mu * ux * c, -mu * uy * c, c), perp],
                            row: w * perp,
                            diag: (1.0 - w) * kappa,
                        }
                    }
                }
            }
        };
        size += match block {
            Block::Breaking => 0,
            Block::Sticking { .. } => 3,
            Block::Sliding { .. } => 2,
        };
        blocks.push(block);
    }
    // G C: 3n × size.
    let mut gc = DMat::zeros(3 * n, size);
    for (j, b) in blocks.iter().enumerate() {
        match *b {
            Block::Breaking => {}
            Block::Sticking { col } => {
                for a in 0..3 {
                    gc.column_mut(col + a).copy_from(&g.column(3 * j + a));
                }
            }
            Block::Sliding { col, basis, .. } => {
                for (k, r) in basis.iter().enumerate() {
                    let mut c = gc.column_mut(col + k);
                    for a in 0..3 {
                        if r[a] != 0.0 {
                            c.axpy(r[a], &g.column(3 * j + a), 1.0);
                        }
                    }
                }
            }
        }
    }
    // A = B G C + D.
    let mut a = DMat::zeros(size, size);
    for (i, b) in blocks.iter().enumerate() {
        match *b {
            Block::Breaking => {}
            Block::Sticking { col } => {
                for r in 0..3 {
                    a.row_mut(col + r).copy_from(&gc.row(3 * i + r));
                }
            }
            Block::Sliding { col, row, diag, .. } => {
                a.row_mut(col).copy_from(&gc.row(3 * i + 2));
                for c in 0..size {
                    a[(col + 1, c)] = row.x * gc[(3 * i, c)] + row.y * gc[(3 * i + 1, c)];
                }
                a[(col + 1, col + 1)] += diag;
            }
        }
    }
    let (solver, status) = ReducedSolver::factorize(a);
    Reduced {
        blocks,
        size,
        solver,
        status,
    }
}

impl Reduced {
    /// `out (m×k) = −B dq` for `dq` 3n×k (both column major).
    fn rhs(&self, dq: &[f64], k: usize, out: &mut [f64]) {
        let n3 = 3 * self.blocks.len();
        let m = self.size;
        for c in 0..k {
            let d = &dq[c * n3..(c + 1) * n3];
            let o = &mut out[c * m..(c + 1) * m];
            for (i, b) in self.blocks.iter().enumerate() {
                match *b {
                    Block::Breaking => {}
                    Block::Sticking { col } => {
                        for a in 0..3 {
                            o[col + a] = -d[3 * i + a];
                        }
                    }
                    Block::Sliding { col, row, .. } => {
                        o[col] = -d[3 * i + 2];
                        o[col + 1] = -(row.x * d[3 * i] + row.y * d[3 * i + 1]);
                    }
                }
            }
        }
    }

    /// `dλ (3n×k) = C X` for X m×k.
    fn expand(&self, x: &[f64], k: usize, out: &mut [f64]) {
        let n3 = 3 * self.blocks.len();
        let m = self.size;
        for c in 0..k {
            let xc = &x[c * m..(c + 1) * m];
            let o = &mut out[c * n3..(c + 1) * n3];
            for (i, b) in self.blocks.iter().enumerate() {
                let v = match *b {
                    Block::Breaking => Vec3::zeros(),
                    Block::Sticking { col } => Vec3::new(xc[col], xc[col + 1], xc[col + 2]),
                    Block::Sliding { col, basis, .. } => {
                        basis[0] * xc[col] + basis[1] * xc[col + 1]
                    }
                };
                o[3 * i..3 * i + 3].copy_from_slice(v.as_slice());
            }
        }
    }

    /// The forward map on k directions (column major).
    fn tangent(&self, dq: &[f64], k: usize, dlambda: &mut [f64]) {
        let mut x = vec![0.0; self.size * k];
        self.rhs(dq, k, &mut x);
        self.solver.solve(&mut x, k, false);
        self.expand(&x, k, dlambda);
    }

    /// The reverse map: `q̄ = −Bᵀ A⁺ᵀ Cᵀ λ̄`.
    fn cotangent(&self, lambda_bar: &[f64], q_bar: &mut [f64]) {
        let mut y = vec![0.0; self.size];
        for (i, b) in self.blocks.iter().enumerate() {
            let l = block3(lambda_bar, i);
            match *b {
                Block::Breaking => {}
                Block::Sticking { col } => y[col..col + 3].copy_from_slice(l.as_slice()),
                Block::Sliding { col, basis, .. } => {
                    y[col] = basis[0].dot(&l);
                    y[col + 1] = basis[1].dot(&l);
                }
            }
        }
        self.solver.solve(&mut y, 1, true);
        for (i, b) in self.blocks.iter().enumerate() {
            let v = match *b {
                Block::Breaking => Vec3::zeros(),
                Block::Sticking { col } => -Vec3::new(y[col], y[col + 1], y[col + 2]),
                Block::Sliding { col, row, .. } => -(row * y[col + 1] + Vec3::z() * y[col]),
            };
            q_bar[3 * i..3 * i + 3].copy_from_slice(v.as_slice());
        }
    }
}

impl NcpDerivative {
    /// Builds and factorises the reduced implicit system (paper 002 Eq. 11 / Eq. 27) of the
    /// NCP with Delassus matrix `delassus` (3n×3n, (m/s)/N), friction coefficients `friction`
    /// (n), solution `lambda` (3n, N), `sigma = Gλ + g` (3n, m/s) and `modes` (n, e.g. from
    /// [`classify`](super::classify)).
    ///
    /// A contact given as sliding whose σ_T and λ_T both vanish has no slip direction and is
    /// differentiated as sticking; with σ_T = 0 but λ_T ≠ 0 the slip direction is −λ_T/‖λ_T‖.
    ///
    /// Errors on sizes that do not match, non-finite entries, a negative friction
    /// coefficient, or a negative `tied_velocity`.
    pub fn new(
        delassus: &DMat,
        friction: &[f64],
        lambda: &[f64],
        sigma: &[f64],
        modes: &[ContactMode],
        boundary: BoundaryGradient,
    ) -> Result<NcpDerivative> {
        let n = modes.len();
        let what = "NCP derivative";
        if friction.len() != n || lambda.len() != 3 * n || sigma.len() != 3 * n {
            return Err(Error::invalid(
                what,
                format!(
                    "{} modes, {} friction coefficients, {} forces and {} velocities do not match \
                     (expected n, n, 3n, 3n)",
                    n,
                    friction.len(),
                    lambda.len(),
                    sigma.len()
                ),
            ));
        }
        if delassus.nrows() != 3 * n || delassus.ncols() != 3 * n {
            return Err(Error::invalid(
                what,
                format!(
                    "Delassus matrix is {}×{}, expected {}×{}",
                    delassus.nrows(),
                    delassus.ncols(),
                    3 * n,
                    3 * n
                ),
            ));
        }
        if let Some(i) = friction.iter().position(|m| !(*m >= 0.0) || !m.is_finite()) {
            return Err(Error::invalid(
                format!("friction of contact {i}"),
                format!("{} is not a finite non-negative number", friction[i]),
            ));
        }
        for (name, v) in [("contact force", lambda), ("contact velocity", sigma)] {
            if let Some(k) = v.iter().position(|x| !x.is_finite()) {
                return Err(Error::invalid(format!("{name} entry {k}"), "not finite"));
            }
        }
        if let Some(k) = delassus.iter().position(|x| !x.is_finite()) {
            return Err(Error::invalid(
                format!("Delassus entry ({}, {})", k % (3 * n), k / (3 * n)),
                "not finite",
            ));
        }
        let mut tied = Vec::new();
        let mut inputs = None;
        if let BoundaryGradient::ComplementarityAware { tied_velocity } = boundary {
            if !(tied_velocity >= 0.0) || !tied_velocity.is_finite() {
                return Err(Error::invalid(
                    "complementarity-aware tied velocity",
                    format!("{tied_velocity} must be finite and non-negative"),
                ));
            }
            tied = (0..n)
                .filter(|&i| modes[i] == ContactMode::Breaking && sigma[3 * i + 2] <= tied_velocity)
                .collect();
            if !tied.is_empty() {
                inputs = Some(Inputs {
                    delassus: delassus.clone(),
                    friction: friction.to_vec(),
                    lambda: lambda.to_vec(),
                    sigma: sigma.to_vec(),
                    modes: modes.to_vec(),
                });
            }
        }
        Ok(NcpDerivative {
            reduced: build_reduced(delassus, friction, lambda, sigma, modes),
            boundary,
            tied,
            inputs,
        })
    }

    /// Number of contacts n.
    pub fn contact_count(&self) -> usize {
        self.reduced.blocks.len()
    }

    /// Size of the reduced system, `3 n_stick + 2 n_slide`.
    pub fn reduced_size(&self) -> usize {
        self.reduced.size
    }

    /// How the reduced system (of the given modes) was solved.
    pub fn status(&self) -> ReducedStatus {
        self.reduced.status
    }

    /// The boundary rule this derivative was built with.
    pub fn boundary(&self) -> BoundaryGradient {
        self.boundary
    }

    /// Forward mode: `dlambda = L dq` for one direction `dq` (3n, m/s) → `dlambda` (3n, N).
    /// One small dense solve with the stored factorisation. Panics on wrong lengths.
    pub fn tangent(&self, dq: &[f64], dlambda: &mut [f64]) {
        let n3 = 3 * self.contact_count();
        assert!(
            dq.len() == n3 && dlambda.len() == n3,
            "NcpDerivative::tangent: lengths"
        );
        self.reduced.tangent(dq, 1, dlambda);
    }

    /// Forward mode on k directions at once: column j of `dlambda` (3n×k) is `L` times column
    /// j of `dq` (3n×k); `dlambda` is resized if needed. One multi-right-hand-side solve.
    /// Panics if `dq` does not have 3n rows.
    pub fn tangent_many(&self, dq: &DMat, dlambda: &mut DMat) {
        let n3 = 3 * self.contact_count();
        assert!(dq.nrows() == n3, "NcpDerivative::tangent_many: rows");
        let k = dq.ncols();
        if dlambda.nrows() != n3 || dlambda.ncols() != k {
            *dlambda = DMat::zeros(n3, k);
        }
        self.reduced
            .tangent(dq.as_slice(), k, dlambda.as_mut_slice());
    }

    /// Reverse mode on k cotangents at once: column j of `q_bar` (3n×k, resized if needed) is
    /// [`NcpDerivative::cotangent`] of column j of `lambda_bar` (3n×k). Panics if
    /// `lambda_bar` does not have 3n rows.
    pub fn cotangent_many(&self, lambda_bar: &DMat, q_bar: &mut DMat) {
        let n3 = 3 * self.contact_count();
        assert!(
            lambda_bar.nrows() == n3,
            "NcpDerivative::cotangent_many: rows"
        );
        let k = lambda_bar.ncols();
        if q_bar.nrows() != n3 || q_bar.ncols() != k {
            *q_bar = DMat::zeros(n3, k);
        }
        for j in 0..k {
            let mut column = q_bar.column_mut(j);
            self.cotangent(lambda_bar.column(j).as_slice(), column.as_mut_slice());
        }
    }

    /// Reverse mode: `q_bar = Lᵀ lambda_bar`, so that `⟨λ̄, dλ⟩ = ⟨q̄, dq⟩` for every `dq`
    /// (`lambda_bar` = ∂ℓ/∂λ in N⁻¹ units of the loss, `q_bar` = ∂ℓ/∂q per m/s).
    ///
    /// With [`BoundaryGradient::ComplementarityAware`] the tied contacts with `λ̄_N < 0` may be
    /// relabelled as closed (see there); the returned [`CotangentSide`] says which strategy
    /// was kept. Panics on wrong lengths.
    pub fn cotangent(&self, lambda_bar: &[f64], q_bar: &mut [f64]) -> CotangentSide {
        let n3 = 3 * self.contact_count();
        assert!(
            lambda_bar.len() == n3 && q_bar.len() == n3,
            "NcpDerivative::cotangent: lengths"
        );
        self.reduced.cotangent(lambda_bar, q_bar);
        let (BoundaryGradient::ComplementarityAware { tied_velocity }, Some(inputs)) =
            (self.boundary, &self.inputs)
        else {
            return CotangentSide::Classified;
        };
        let closing: Vec<usize> = self
            .tied
            .iter()
            .copied()
            .filter(|&i| lambda_bar[3 * i + 2] < 0.0)
            .collect();
        if closing.is_empty() {
            return CotangentSide::Classified;
        }
        let mut modes = inputs.modes.clone();
        for &i in &closing {
            let s = block3(&inputs.sigma, i);
            modes[i] = if s.x.hypot(s.y) > tied_velocity {
                ContactMode::Sliding
            } else {
                ContactMode::Sticking
            };
        }
        let relabelled = build_reduced(
            &inputs.delassus,
            &inputs.friction,
            &inputs.lambda,
            &inputs.sigma,
            &modes,
        );
        let mut other = vec![0.0; n3];
        relabelled.cotangent(lambda_bar, &mut other);
        let norm2 = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>();
        if norm2(&other) > norm2(q_bar) {
            q_bar.copy_from_slice(&other);
            CotangentSide::Relabelled(closing.len())
        } else {
            CotangentSide::Classified
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::{AdmmSettings, AdmmSolver, ContactProblem, ModeTolerance, classify};
    use crate::math::{DVec, SplitMix64, central_difference_jacobian, relative_error};

    use ContactMode::{Breaking, Sliding, Sticking};

    struct Rng(SplitMix64);
    impl Rng {
        /// Uniform in [a, b).
        fn range(&mut self, a: f64, b: f64) -> f64 {
            a + (b - a) * 0.5 * (self.0.uniform() + 1.0)
        }
        fn vec(&mut self, n: usize) -> DVec {
            DVec::from_fn(n, |_, _| self.0.uniform())
        }
    }

    /// A well-conditioned SPD Delassus matrix `H Hᵀ/m + 0.5 I`.
    fn random_delassus(rng: &mut Rng, m: usize) -> DMat {
        let h = DMat::from_fn(m, m, |_, _| rng.0.uniform());
        let g = &h * h.transpose() / m as f64 + 0.5 * DMat::identity(m, m);
        (&g + g.transpose()) * 0.5
    }

    /// A solution (λ*, σ*) with the requested modes, each clearly inside its mode (strict
    /// complementarity), and the free velocity g = σ* − Gλ* that makes it the NCP's solution.
    fn constructed(
        rng: &mut Rng,
        g: &DMat,
        mu: &[f64],
        modes: &[ContactMode],
    ) -> (DVec, DVec, DVec) {
        let n = modes.len();
        let mut lambda = DVec::zeros(3 * n);
        let mut sigma = DVec::zeros(3 * n);
        for (i, m) in modes.iter().enumerate() {
            let angle = rng.range(0.0, std::f64::consts::TAU);
            let (c, s) = (angle.cos(), angle.sin());
            match m {
                Breaking => {
                    sigma[3 * i] = rng.range(-1.0, 1.0);
                    sigma[3 * i + 1] = rng.range(-1.0, 1.0);
                    sigma[3 * i + 2] = rng.range(0.5, 1.5);
                }
                Sticking => {
                    let ln = rng.range(0.5, 1.5);
                    let lt = rng.range(0.0, 0.5) * mu[i] * ln;
                    lambda[3 * i] = lt * c;
                    lambda[3 * i + 1] = lt * s;
                    lambda[3 * i + 2] = ln;
                }
                Sliding => {
                    let ln = rng.range(0.5, 1.5);
                    let st = rng.range(0.5, 1.5);
                    sigma[3 * i] = st * c;
                    sigma[3 * i + 1] = st * s;
                    lambda[3 * i] = -mu[i] * ln * c;
                    lambda[3 * i + 1] = -mu[i] * ln * s;
                    lambda[3 * i + 2] = ln;
                }
            }
        }
        let free = &sigma - g * &lambda;
        (lambda, sigma, free)
    }

    /// The natural map of the NCP, `F(λ) = λ − Π_K(λ − ρ(σ + Γ(σ)))`, σ = Gλ + g: zero
    /// exactly at a solution, and smooth near a strictly complementary one.
    fn natural_map(p: &ContactProblem, rho: f64, lambda: &DVec) -> DVec {
        let sigma = p.delassus() * lambda + p.free_velocity();
        let mut out = DVec::zeros(lambda.len());
        for (i, cone) in p.cones().iter().enumerate() {
            let l = block3(lambda.as_slice(), i);
            let s = cone.corrected(&block3(sigma.as_slice(), i));
            let r = l - cone.project(&(l - rho * s));
            out.as_mut_slice()[3 * i..3 * i + 3].copy_from_slice(r.as_slice());
        }
        out
    }

    /// λ(g): ADMM at a tight tolerance warm-started at `warm`, then polished by Newton's
    /// method on the natural map (Jacobian by central differences of the map — no mode
    /// information), an independent method, to round-off.
    fn solve(g: &DMat, mu: &[f64], free: &DVec, warm: &DVec) -> DVec {
        let p = ContactProblem::new(g.clone(), free.clone(), mu).unwrap();
        let mut admm = AdmmSolver::new(AdmmSettings {
            tolerance: 1e-13,
            max_iterations: 20_000,
            ..AdmmSettings::default()
        });
        let s = admm.solve(&p, Some(warm.as_slice())).unwrap();
        assert!(s.residuals.max() < 1e-8, "ADMM residual {:?}", s.residuals);
        let rho = 3.0 * g.nrows() as f64 / g.trace();
        let mut l = s.lambda;
        for _ in 0..20 {
            let f = natural_map(&p, rho, &l);
            if f.norm() < 1e-15 {
                break;
            }
            let j = central_difference_jacobian(|x| natural_map(&p, rho, x), &l, 1e-7);
            let Some(step) = j.lu().solve(&(-f)) else {
                break;
            };
            l += step;
        }
        assert!(natural_map(&p, rho, &l).norm() < 1e-13);
        l
    }

    /// dλ of `NcpDerivative::tangent` against central differences of the solution map
    /// g ↦ λ(g) along random directions, and checks the perturbed solutions keep their modes.
    fn check_against_finite_differences(seed: u64, modes: &[ContactMode]) -> f64 {
        let mut rng = Rng(SplitMix64::new(seed));
        let n = modes.len();
        let mu: Vec<f64> = (0..n).map(|_| rng.range(0.2, 1.0)).collect();
        let g = random_delassus(&mut rng, 3 * n);
        let (l_star, _, free) = constructed(&mut rng, &g, &mu, modes);
        let lambda = solve(&g, &mu, &free, &l_star);
        assert!(
            (&lambda - &l_star).norm() < 1e-10,
            "another solution was found"
        );
        let sigma = &g * &lambda + &free;
        let classified = classify(
            lambda.as_slice(),
            sigma.as_slice(),
            ModeTolerance::default(),
        );
        assert_eq!(classified, modes);
        let d = NcpDerivative::new(
            &g,
            &mu,
            lambda.as_slice(),
            sigma.as_slice(),
            &classified,
            BoundaryGradient::OneSided,
        )
        .unwrap();
        assert_eq!(d.status(), ReducedStatus::Regular);
        let dirs = DMat::from_fn(3 * n, 3, |_, _| rng.0.uniform());
        let mut many = DMat::zeros(0, 0);
        d.tangent_many(&dirs, &mut many);
        let h = 1e-6 * free.norm();
        let mut worst = 0.0f64;
        for k in 0..3 {
            let dq = dirs.column(k).into_owned();
            let lp = solve(&g, &mu, &(&free + h * &dq), &lambda);
            let lm = solve(&g, &mu, &(&free - h * &dq), &lambda);
            for (l, sign) in [(&lp, 1.0), (&lm, -1.0)] {
                let s = &g * l + &free + sign * h * &dq;
                assert_eq!(
                    classify(l.as_slice(), s.as_slice(), ModeTolerance::default()),
                    modes
                );
            }
            let fd = (lp - lm) / (2.0 * h);
            let mut dl = vec![0.0; 3 * n];
            d.tangent(dq.as_slice(), &mut dl);
            let e = relative_error(&dl, fd.as_slice(), 1e-12);
            worst = worst.max(e);
            assert!(e < 1e-6, "seed {seed}, direction {k}: relative error {e}");
            assert!(relative_error(&dl, many.column(k).as_slice(), 1e-300) < 1e-14);
        }
        eprintln!("modes {modes:?}: worst FD relative error {worst:.2e}");
        worst
    }

    #[test]
    fn all_sticking_matches_finite_differences() {
        check_against_finite_differences(1, &[Sticking; 4]);
    }

    #[test]
    fn all_sliding_matches_finite_differences() {
        check_against_finite_differences(2, &[Sliding; 4]);
        check_against_finite_differences(3, &[Sliding; 3]);
    }

    #[test]
    fn mixed_modes_with_breaking_match_finite_differences() {
        check_against_finite_differences(
            4,
            &[Breaking, Sticking, Sliding, Sliding, Breaking, Sticking],
        );
        check_against_finite_differences(5, &[Sliding, Breaking, Sticking]);
    }

    #[test]
    fn single_contacts_match_finite_differences() {
        check_against_finite_differences(6, &[Sticking]);
        check_against_finite_differences(7, &[Sliding]);
        // Breaking: dλ = 0, and the solution indeed does not move.
        check_against_finite_differences(8, &[Breaking]);
    }

    /// ⟨w, L u⟩ = ⟨Lᵀ w, u⟩ for random u, w: the cotangent is the exact transpose, also on a
    /// rank-deficient system (duplicated contact).
    #[test]
    fn cotangent_is_the_transpose_of_the_tangent() {
        let mut rng = Rng(SplitMix64::new(21));
        let modes = [Sliding, Sticking, Breaking, Sliding, Sticking];
        let n = modes.len();
        let mu: Vec<f64> = (0..n).map(|_| rng.range(0.2, 1.0)).collect();
        let mut g = random_delassus(&mut rng, 3 * n);
        let (lambda, sigma, _) = constructed(&mut rng, &g, &mu, &modes);
        let adjoint_error = |d: &NcpDerivative, rng: &mut Rng| {
            let (u, w) = (rng.vec(3 * n), rng.vec(3 * n));
            let (mut lu, mut ltw) = (vec![0.0; 3 * n], vec![0.0; 3 * n]);
            d.tangent(u.as_slice(), &mut lu);
            d.cotangent(w.as_slice(), &mut ltw);
            let a = w.dot(&DVec::from_vec(lu));
            let b = u.dot(&DVec::from_vec(ltw));
            (a - b).abs() / a.abs().max(b.abs())
        };
        let d = NcpDerivative::new(
            &g,
            &mu,
            lambda.as_slice(),
            sigma.as_slice(),
            &modes,
            BoundaryGradient::OneSided,
        )
        .unwrap();
        for _ in 0..10 {
            assert!(adjoint_error(&d, &mut rng) < 1e-10);
        }
        // The batched reverse map is the single one, column by column.
        let w = DMat::from_fn(3 * n, 2, |_, _| rng.0.uniform());
        let mut many = DMat::zeros(0, 0);
        d.cotangent_many(&w, &mut many);
        for j in 0..2 {
            let mut one = vec![0.0; 3 * n];
            d.cotangent(w.column(j).as_slice(), &mut one);
            assert_eq!(one.as_slice(), many.column(j).as_slice());
        }
        // Contact 4 duplicates contact 1 (same rows of H_c): G is singular.
        for r in 0..3 * n {
            for a in 0..3 {
                g[(r, 12 + a)] = g[(r, 3 + a)];
            }
        }
        for a in 0..3 {
            for c in 0..3 * n {
                g[(12 + a, c)] = g[(3 + a, c)];
            }
        }
        let d = NcpDerivative::new(
            &g,
            &mu,
            lambda.as_slice(),
            sigma.as_slice(),
            &modes,
            BoundaryGradient::OneSided,
        )
        .unwrap();
        assert!(matches!(d.status(), ReducedStatus::RankDeficient { .. }));
        for _ in 0..10 {
            assert!(adjoint_error(&d, &mut rng) < 1e-10);
        }
    }

    /// The linearised mode equations hold for dλ, written in the paper's form (Appendix A,
    /// Eq. 18 with 1/α), independently of the scaled rows the code assembles.
    #[test]
    fn tangent_solves_the_linearised_mode_equations() {
        let mut rng = Rng(SplitMix64::new(31));
        let modes = [Sliding, Sticking, Breaking, Sliding];
        let n = modes.len();
        let mu: Vec<f64> = (0..n).map(|_| rng.range(0.2, 1.0)).collect();
        let g = random_delassus(&mut rng, 3 * n);
        let (lambda, sigma, _) = constructed(&mut rng, &g, &mu, &modes);
        let d = NcpDerivative::new(
            &g,
            &mu,
            lambda.as_slice(),
            sigma.as_slice(),
            &modes,
            BoundaryGradient::OneSided,
        )
        .unwrap();
        let dq = rng.vec(3 * n);
        let mut dl = vec![0.0; 3 * n];
        d.tangent(dq.as_slice(), &mut dl);
        let dl = DVec::from_vec(dl);
        let ds = &g * &dl + &dq;
        for (i, m) in modes.iter().enumerate() {
            let (l, s) = (block3(lambda.as_slice(), i), block3(sigma.as_slice(), i));
            let (dli, dsi) = (block3(dl.as_slice(), i), block3(ds.as_slice(), i));
            match m {
                Breaking => assert_eq!(dli, Vec3::zeros()),
                Sticking => assert!(dsi.norm() < 1e-12),
                Sliding => {
                    assert!(dsi.z.abs() < 1e-12);
                    let st = s.x.hypot(s.y);
                    let u = nalgebra::Vector2::new(s.x, s.y) / st;
                    let dst = nalgebra::Vector2::new(dsi.x, dsi.y);
                    // dλ_T = −μ dλ_N u − (μλ_N/‖σ_T‖)(I − uuᵀ) dσ_T
                    let expect = -mu[i] * dli.z * u - (mu[i] * l.z / st) * (dst - u * u.dot(&dst));
                    let got = nalgebra::Vector2::new(dli.x, dli.y);
                    assert!((got - expect).norm() < 1e-12, "{got:?} vs {expect:?}");
                }
            }
        }
    }

    #[test]
    fn degenerate_inputs_give_finite_derivatives() {
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        let mut rng = Rng(SplitMix64::new(41));
        let g = random_delassus(&mut rng, 3);
        let dq = rng.vec(3);
        let mut dl = vec![0.0; 3];
        let mut qb = vec![0.0; 3];
        // λ = 0 and σ = 0: classify says breaking; as sticking or sliding (no direction):
        // finite, and sliding without a direction is differentiated as sticking.
        let modes = classify(&[0.0; 3], &[0.0; 3], ModeTolerance::default());
        assert_eq!(modes, vec![Breaking]);
        for m in [Breaking, Sticking, Sliding] {
            let d = NcpDerivative::new(&g, &[0.5], &[0.0; 3], &[0.0; 3], &[m], Default::default())
                .unwrap();
            d.tangent(dq.as_slice(), &mut dl);
            d.cotangent(dq.as_slice(), &mut qb);
            assert!(finite(&dl) && finite(&qb), "{m:?}");
            if m != Breaking {
                // Sticking: dλ = −G⁻¹ dq.
                let expect = -g.clone().lu().solve(&dq).unwrap();
                assert!(relative_error(&dl, expect.as_slice(), 1e-300) < 1e-12);
            }
        }
        // Sliding with a tiny slip speed: finite; the slip direction's velocity is held and
        // dλ stays in the cone's tangent plane.
        let mu = 0.6;
        let lambda = [-mu * 0.8, 0.0, 0.8];
        for st in [1e-14, 1e-300, 0.0] {
            let sigma = [st, 0.0, 0.0];
            let d = NcpDerivative::new(&g, &[mu], &lambda, &sigma, &[Sliding], Default::default())
                .unwrap();
            d.tangent(dq.as_slice(), &mut dl);
            d.cotangent(dq.as_slice(), &mut qb);
            assert!(finite(&dl) && finite(&qb));
            let ds = &g * DVec::from_column_slice(&dl) + &dq;
            assert!(ds[2].abs() < 1e-12 && ds[1].abs() < 1e-12, "{ds:?}");
            // Tangent plane at λ = (−μλ_N, 0, λ_N): −dλ_x... uᵀdλ_T + μ dλ_N = 0, u = +x.
            assert!((dl[0] + mu * dl[2]).abs() < 1e-12);
        }
        // μ = 0 sliding: the tangential force stays zero.
        let d = NcpDerivative::new(
            &g,
            &[0.0],
            &[0.0, 0.0, 1.0],
            &[0.3, -0.4, 0.0],
            &[Sliding],
            Default::default(),
        )
        .unwrap();
        d.tangent(dq.as_slice(), &mut dl);
        assert!(dl[0].abs() < 1e-15 && dl[1].abs() < 1e-15 && dl[2].is_finite());
        // G = 0: rank 0, dλ = 0 (the minimum-norm solution), no NaN.
        let d = NcpDerivative::new(
            &DMat::zeros(3, 3),
            &[0.5],
            &[0.0, 0.0, 1.0],
            &[0.0; 3],
            &[Sticking],
            Default::default(),
        )
        .unwrap();
        assert_eq!(d.status(), ReducedStatus::RankDeficient { rank: 0 });
        d.tangent(dq.as_slice(), &mut dl);
        assert_eq!(dl, vec![0.0; 3]);
        // Bad input is an error naming what.
        let e = NcpDerivative::new(
            &g,
            &[0.5],
            &[0.0; 3],
            &[0.0; 2],
            &[Sticking],
            Default::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("NCP derivative"), "{e}");
        let e = NcpDerivative::new(
            &g,
            &[-0.5],
            &[0.0; 3],
            &[0.0; 3],
            &[Sticking],
            Default::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("friction of contact 0"), "{e}");
    }

    /// Duplicated contacts (G singular, all sticking): the minimum-norm least-squares
    /// solution, checked against −G⁺ dq computed directly from G (A = G when all stick).
    #[test]
    fn duplicated_contacts_give_the_minimum_norm_derivative() {
        let mut rng = Rng(SplitMix64::new(51));
        let hc = DMat::from_fn(6, 9, |_, _| rng.0.uniform());
        // Rows 6..9 repeat rows 0..3: contact 2 duplicates contact 0.
        let h = DMat::from_fn(9, 9, |r, c| if r < 6 { hc[(r, c)] } else { hc[(r - 6, c)] });
        let g = &h * h.transpose();
        let modes = [Sticking; 3];
        let lambda = [0.1, 0.0, 1.0, 0.0, 0.1, 1.0, 0.1, 0.0, 1.0];
        let d = NcpDerivative::new(
            &g,
            &[0.5; 3],
            &lambda,
            &[0.0; 9],
            &modes,
            Default::default(),
        )
        .unwrap();
        assert_eq!(d.status(), ReducedStatus::RankDeficient { rank: 6 });
        // A consistent perturbation (in the range of G) and an arbitrary one.
        for dq in [&g * rng.vec(9), rng.vec(9)] {
            let mut dl = vec![0.0; 9];
            d.tangent(dq.as_slice(), &mut dl);
            let expect = -g.clone().pseudo_inverse(1e-10).unwrap() * &dq;
            let e = relative_error(&dl, expect.as_slice(), 1e-300);
            assert!(e < 1e-8, "relative error {e}");
            // The duplicated contacts share the force equally.
            for a in 0..3 {
                assert!((dl[a] - dl[6 + a]).abs() < 1e-8 * expect.norm());
            }
        }
    }

    /// Paper 003 §IV-D: a contact exactly at the boundary (λ = 0, σ = 0, classified breaking)
    /// under a loss that wants more normal force gets a zero one-sided gradient; the
    /// complementarity-aware one is the derivative from the closing side, checked against a
    /// one-sided finite difference of the solver pushed closed.
    #[test]
    fn complementarity_aware_gradient_opens_a_closed_door() {
        let mut rng = Rng(SplitMix64::new(61));
        let g = DMat::identity(3, 3) + 0.1 * random_delassus(&mut rng, 3);
        let mu = [0.8];
        let zero = [0.0; 3];
        let modes = classify(&zero, &zero, ModeTolerance::default());
        assert_eq!(modes, vec![Breaking]);
        let lambda_bar = [0.0, 0.0, -1.0]; // ℓ = −λ_N: more normal force is better.
        let mut one_sided = vec![0.0; 3];
        let d =
            NcpDerivative::new(&g, &mu, &zero, &zero, &modes, BoundaryGradient::OneSided).unwrap();
        assert_eq!(
            d.cotangent(&lambda_bar, &mut one_sided),
            CotangentSide::Classified
        );
        assert_eq!(one_sided, vec![0.0; 3]);

        let aware = BoundaryGradient::ComplementarityAware {
            tied_velocity: 1e-8,
        };
        let d = NcpDerivative::new(&g, &mu, &zero, &zero, &modes, aware).unwrap();
        let mut q_bar = vec![0.0; 3];
        assert_eq!(
            d.cotangent(&lambda_bar, &mut q_bar),
            CotangentSide::Relabelled(1)
        );
        assert!(DVec::from_column_slice(&q_bar).norm() > 0.1);
        // Closing directions (g_N decreases, small tangential part): the solution sticks and
        // λ(εu) is linear in ε, so a forward difference gives the closing-side derivative.
        for u in [[0.0, 0.0, -1.0], [0.1, -0.05, -1.0], [-0.2, 0.1, -0.7]] {
            let eps = 1e-3;
            let free = DVec::from_column_slice(&u) * eps;
            let l = solve(&g, &mu, &free, &DVec::zeros(3));
            let directional = -l[2] / eps; // ⟨λ̄, dλ⟩
            let predicted: f64 = q_bar.iter().zip(&u).map(|(a, b)| a * b).sum();
            assert!(
                (directional - predicted).abs() < 1e-6 * directional.abs(),
                "{directional} vs {predicted}"
            );
        }
        // A loss that wants less force keeps the one-sided (zero) gradient.
        assert_eq!(
            d.cotangent(&[0.0, 0.0, 1.0], &mut q_bar),
            CotangentSide::Classified
        );
        assert_eq!(q_bar, vec![0.0; 3]);
        // A breaking contact that is clearly open is not tied.
        let d = NcpDerivative::new(&g, &mu, &zero, &[0.0, 0.0, 0.5], &modes, aware).unwrap();
        assert_eq!(
            d.cotangent(&lambda_bar, &mut q_bar),
            CotangentSide::Classified
        );
        // Tangent mode is the classified one.
        let mut dl = vec![1.0; 3];
        d.tangent(&[0.0, 0.0, -1.0], &mut dl);
        assert_eq!(dl, vec![0.0; 3]);
    }
}

#[cfg(test)]
mod complementarity_aware_sliding {
    use super::*;
    use crate::contact::{AdmmSettings, AdmmSolver, ContactProblem};
    use crate::math::DVec;

    /// A tied contact that slips tangentially (λ = 0, σ_N = 0, σ_T ≠ 0) closes into sliding
    /// at the cone's apex: the complementarity-aware cotangent equals the closing-side
    /// derivative, measured by Richardson-extrapolated forward differences of ADMM solves.
    #[test]
    fn tied_slipping_contact_closes_into_sliding() {
        let g = DMat::from_row_slice(3, 3, &[1.0, 0.1, -0.05, 0.1, 0.8, 0.02, -0.05, 0.02, 1.2]);
        let mu = [0.6];
        let sigma = [0.3, -0.1, 0.0];
        let aware = BoundaryGradient::ComplementarityAware {
            tied_velocity: 1e-8,
        };
        let d = NcpDerivative::new(&g, &mu, &[0.0; 3], &sigma, &[ContactMode::Breaking], aware)
            .unwrap();
        let lambda_bar = [0.2, 0.1, -1.0];
        let mut q_bar = [0.0; 3];
        assert_eq!(
            d.cotangent(&lambda_bar, &mut q_bar),
            CotangentSide::Relabelled(1)
        );
        let solve = |free: &DVec| {
            let p = ContactProblem::new(g.clone(), free.clone(), &mu).unwrap();
            let mut admm = AdmmSolver::new(AdmmSettings {
                tolerance: 1e-14,
                max_iterations: 100_000,
                ..AdmmSettings::default()
            });
            admm.solve(&p, None).unwrap()
        };
        let u = DVec::from_vec(vec![0.05, 0.02, -1.0]);
        let free0 = DVec::from_column_slice(&sigma);
        let l0 = solve(&free0).lambda;
        assert!(l0.norm() < 1e-12);
        let diff = |eps: f64| {
            let s = solve(&(&free0 + eps * &u));
            assert!(s.residuals.max() < 1e-12, "{:?}", s.residuals);
            (s.lambda - &l0) / eps
        };
        let eps = 1e-3;
        let dl = 2.0 * diff(eps / 2.0) - diff(eps);
        let directional = DVec::from_column_slice(&lambda_bar).dot(&dl);
        let predicted = DVec::from_column_slice(&q_bar).dot(&u);
        assert!(
            (directional - predicted).abs() < 1e-6 * directional.abs(),
            "{directional} vs {predicted}"
        );
    }
}
