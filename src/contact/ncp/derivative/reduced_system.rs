//! The reduced implicit system of one set of contact modes (module doc of `ncp_derivative`,
//! paper 002 Appendix B): its layout (a [`Block`] per contact), the matrix `A = B G C + D`,
//! its factorisation, and the maps `dq ↦ dλ` and `λ̄ ↦ q̄` it gives. Every buffer is kept
//! from one [`Reduced::refill`] to the next, so a refill of the same or a smaller size
//! allocates nothing (the rank-deficient fallback excepted: its SVD allocates).

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::qr::col_pivoting::{factor as qr_factor, solve as qr_solve};
use faer::perm::PermRef;
use faer::{MatMut, MatRef, Par, Spec};

use super::{RANK_TOLERANCE, ReducedStatus, block3};
use crate::contact::ncp::modes::ContactMode;
use crate::math::{DMat, Vec3};

/// One contact's place in the reduced system.
#[derive(Debug, Clone, Copy)]
pub(super) enum Block {
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

/// A faer scratch buffer ([`MemBuffer`]) grown to the largest requirement asked of it and
/// then reused.
#[derive(Default)]
pub(super) struct Stack {
    buffer: Option<MemBuffer>,
    /// What `buffer` was allocated for.
    req: Option<StackReq>,
}

impl std::fmt::Debug for Stack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stack").field("req", &self.req).finish()
    }
}

impl Stack {
    /// A stack of at least `req`, reallocated only when `req` does not fit the current one.
    pub(super) fn get(&mut self, req: StackReq) -> &mut MemStack {
        let fits = match (&self.req, &self.buffer) {
            (Some(have), Some(_)) => {
                req.size_bytes() <= have.size_bytes() && req.align_bytes() <= have.align_bytes()
            }
            _ => false,
        };
        if !fits {
            let req = self.req.map_or(req, |have| have.or(req));
            self.req = Some(req);
            self.buffer = Some(MemBuffer::new(req));
        }
        MemStack::new(self.buffer.as_mut().expect("allocated above"))
    }
}

/// The reusable buffers of the solves of a [`NcpDerivative`](crate::contact::NcpDerivative)
/// (faer-style explicit workspace): the reduced right-hand sides and the QR solve's scratch.
/// Sized on first use, then reused while the sizes do not grow.
#[derive(Debug, Default)]
pub struct NcpSolveScratch {
    pub(super) x: Vec<f64>,
    pub(super) stack: Stack,
}

/// Which factorisation of A the buffers of [`Reduced`] hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Factor {
    /// m = 0: every contact breaking.
    Empty,
    /// Column-pivoted QR in `a`, `coeff`, `fwd`, `bwd`.
    Qr,
    /// A⁺ (m×m) in `pinv`.
    PseudoInverse,
}

/// The reduced system for one set of modes: layout, size and factorisation, with the buffers
/// that build it.
#[derive(Debug)]
pub(super) struct Reduced {
    pub(super) blocks: Vec<Block>,
    pub(super) size: usize,
    pub(super) status: ReducedStatus,
    factor: Factor,
    /// G C (3n × m).
    gc: DMat,
    /// A (m × m), then its QR factors (column major).
    a: DMat,
    /// A copy of A for the SVD of the rank-deficient fallback.
    a_copy: DMat,
    /// A⁺ when rank deficient.
    pinv: DMat,
    coeff: Vec<f64>,
    block_size: usize,
    fwd: Vec<usize>,
    bwd: Vec<usize>,
    stack: Stack,
}

impl Default for Reduced {
    /// The system of no contacts.
    fn default() -> Self {
        let e = || DMat::zeros(0, 0);
        Reduced {
            blocks: Vec::new(),
            size: 0,
            status: ReducedStatus::Regular,
            factor: Factor::Empty,
            gc: e(),
            a: e(),
            a_copy: e(),
            pinv: e(),
            coeff: Vec::new(),
            block_size: 0,
            fwd: Vec::new(),
            bwd: Vec::new(),
            stack: Stack::default(),
        }
    }
}

/// Makes `m` an `r × c` matrix of zeros, reallocating only when its shape changes.
fn zeroed(m: &mut DMat, r: usize, c: usize) {
    if m.shape() == (r, c) {
        m.fill(0.0);
    } else {
        *m = DMat::zeros(r, c);
    }
}

/// Contact i's block for its mode (module doc of `ncp_derivative`), its first unknown `col`.
fn block_of(
    g: &DMat,
    friction: &[f64],
    lambda: &[f64],
    sigma: &[f64],
    (i, mode, col): (usize, ContactMode, usize),
    global_scale: f64,
) -> Block {
    match mode {
        ContactMode::Breaking => Block::Breaking,
        ContactMode::Sticking => Block::Sticking { col },
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
                None => Block::Sticking { col },
                Some((ux, uy)) => {
                    let kappa =
                        (g[(3 * i, 3 * i)] + g[(3 * i + 1, 3 * i + 1)] + g[(3 * i + 2, 3 * i + 2)])
                            / 3.0;
                    let kappa = if kappa > 0.0 { kappa } else { global_scale };
                    let force = mu * l.z.max(0.0);
                    let denom = force + s_norm / kappa;
                    let w = if denom > 0.0 { force / denom } else { 0.0 };
                    let c = 1.0 / (1.0 + mu * mu).sqrt();
                    let perp = Vec3::new(-uy, ux, 0.0);
                    Block::Sliding {
                        col,
                        basis: [Vec3::new(-mu * ux * c, -mu * uy * c, c), perp],
                        row: w * perp,
                        diag: (1.0 - w) * kappa,
                        shift: -l.z.max(0.0) * c * c * Vec3::new(ux, uy, mu),
                    }
                }
            }
        }
    }
}

impl Reduced {
    /// Lays out and factorises the reduced system of the given modes (inputs already
    /// checked), in these buffers.
    pub(super) fn refill(
        &mut self,
        g: &DMat,
        friction: &[f64],
        lambda: &[f64],
        sigma: &[f64],
        modes: &[ContactMode],
    ) {
        let n = modes.len();
        let global_scale = (0..3 * n).fold(0.0f64, |a, k| a.max(g[(k, k)].abs()));
        let global_scale = if global_scale > 0.0 {
            global_scale
        } else {
            1.0
        };
        self.blocks.clear();
        let mut size = 0;
        for (i, &mode) in modes.iter().enumerate() {
            let block = block_of(g, friction, lambda, sigma, (i, mode, size), global_scale);
            size += match block {
                Block::Breaking => 0,
                Block::Sticking { .. } => 3,
                Block::Sliding { .. } => 2,
            };
            self.blocks.push(block);
        }
        self.size = size;
        // G C: 3n × size.
        let gc = &mut self.gc;
        zeroed(gc, 3 * n, size);
        for (j, b) in self.blocks.iter().enumerate() {
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
        let a = &mut self.a;
        zeroed(a, size, size);
        for (i, b) in self.blocks.iter().enumerate() {
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
        self.factorize();
    }

    /// Factorises `self.a` in place (column-pivoted QR), or forms A⁺ from its copy when it is
    /// numerically rank deficient.
    fn factorize(&mut self) {
        let m = self.size;
        if m == 0 {
            self.factor = Factor::Empty;
            self.status = ReducedStatus::Regular;
            return;
        }
        if self.a_copy.shape() == (m, m) {
            self.a_copy.copy_from(&self.a);
        } else {
            self.a_copy = self.a.clone();
        }
        let block_size = faer::linalg::qr::no_pivoting::factor::recommended_block_size::<f64>(m, m);
        self.block_size = block_size;
        self.coeff.clear();
        self.coeff.resize(block_size * m, 0.0);
        self.fwd.clear();
        self.fwd.resize(m, 0);
        self.bwd.clear();
        self.bwd.resize(m, 0);
        let req = qr_factor::qr_in_place_scratch::<usize, f64>(
            m,
            m,
            block_size,
            Par::Seq,
            Spec::default(),
        );
        let a = &mut self.a;
        qr_factor::qr_in_place(
            MatMut::from_column_major_slice_mut(a.as_mut_slice(), m, m),
            MatMut::from_column_major_slice_mut(&mut self.coeff, block_size, m),
            &mut self.fwd,
            &mut self.bwd,
            Par::Seq,
            self.stack.get(req),
            Spec::default(),
        );
        // Column pivoting orders |R_kk| decreasingly; take the extremes anyway.
        let r00 = (0..m).fold(0.0f64, |x, k| x.max(a[(k, k)].abs()));
        let rmin = (0..m).fold(f64::INFINITY, |x, k| x.min(a[(k, k)].abs()));
        if r00 > 0.0 && r00.is_finite() && rmin > RANK_TOLERANCE * r00 {
            // Checks that the pivots form a permutation (as `Perm::new_checked` did).
            let _ = PermRef::new_checked(&self.fwd, &self.bwd, m);
            self.factor = Factor::Qr;
            self.status = ReducedStatus::Regular;
            return;
        }
        // Rank deficient: A⁺ = V Σ⁺ Uᵀ.
        let svd = self.a_copy.clone().svd(true, true);
        let (u, vt) = (
            svd.u.as_ref().expect("requested"),
            svd.v_t.as_ref().expect("requested"),
        );
        let smax = svd.singular_values.iter().fold(0.0f64, |a, &s| a.max(s));
        let mut rank = 0;
        let pinv = &mut self.pinv;
        zeroed(pinv, m, m);
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
        self.factor = Factor::PseudoInverse;
        self.status = ReducedStatus::RankDeficient { rank };
    }

    /// `rhs ← A⁺ rhs` (`transpose`: `A⁺ᵀ rhs`), rhs m×k column major, with the scratch
    /// `stack`.
    fn solve(&self, rhs: &mut [f64], k: usize, transpose: bool, stack: &mut Stack) {
        let m = self.size;
        match self.factor {
            Factor::Empty => {}
            Factor::Qr => {
                let q = MatRef::from_column_major_slice(self.a.as_slice(), m, m);
                let h = MatRef::from_column_major_slice(&self.coeff, self.block_size, m);
                let perm = PermRef::new_checked(&self.fwd, &self.bwd, m);
                let x = MatMut::from_column_major_slice_mut(rhs, m, k);
                if transpose {
                    let req = qr_solve::solve_transpose_in_place_scratch::<usize, f64>(
                        m,
                        self.block_size,
                        k,
                        Par::Seq,
                    );
                    qr_solve::solve_transpose_in_place(q, h, q, perm, x, Par::Seq, stack.get(req));
                } else {
                    let req = qr_solve::solve_in_place_scratch::<usize, f64>(
                        m,
                        self.block_size,
                        k,
                        Par::Seq,
                    );
                    qr_solve::solve_in_place(q, h, q, perm, x, Par::Seq, stack.get(req));
                }
            }
            Factor::PseudoInverse => {
                let p = &self.pinv;
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

    /// The forward map on k directions (column major), with the buffers of `scratch`.
    pub(super) fn tangent(
        &self,
        dq: &[f64],
        k: usize,
        dlambda: &mut [f64],
        scratch: &mut NcpSolveScratch,
    ) {
        let x = &mut scratch.x;
        x.clear();
        x.resize(self.size * k, 0.0);
        self.rhs(dq, k, x);
        self.solve(x, k, false, &mut scratch.stack);
        self.expand(x, k, dlambda);
    }

    /// The reverse map: `q̄ = −Bᵀ A⁺ᵀ Cᵀ λ̄`, with the buffers of `scratch`.
    pub(super) fn cotangent(
        &self,
        lambda_bar: &[f64],
        q_bar: &mut [f64],
        scratch: &mut NcpSolveScratch,
    ) {
        let y = &mut scratch.x;
        y.clear();
        y.resize(self.size, 0.0);
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
        self.solve(y, 1, true, &mut scratch.stack);
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
