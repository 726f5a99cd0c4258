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

/// Which side of a contact-mode boundary the reverse derivative takes (docs/derivatives.md).
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
        /// ∂λ/∂μ at fixed σ-equations: the shift of the cone's surface point,
        /// −λ_N (u, μ)/(1 + μ²) (N per unit μ; `friction` module).
        shift: Vec3,
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
                            shift: -l.z.max(0.0) * c * c * Vec3::new(ux, uy, mu),
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

mod friction;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod complementarity_aware_sliding;
