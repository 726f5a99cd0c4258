//! Type-II Anderson acceleration of a fixed-point iteration `u ← T(u)` (Walker and Ni,
//! "Anderson acceleration for fixed-point iterations", SIAM J. Numer. Anal. 2011), with the
//! restart safeguard of Zhang, O'Donoghue and Boyd ("Globally convergent type-I Anderson
//! acceleration for nonsmooth fixed-point iterations", SIAM J. Optim. 2020), which applied it
//! to ADMM/SCS. [`crate::contact::AdmmSolver`] uses it on its iterate.
//!
//! With `g_k = T(u_k)` and `f_k = g_k − u_k`, and the last `m` differences
//! `Δg_j = g_{j+1} − g_j`, `Δf_j = f_{j+1} − f_j` as the columns of `ΔG`, `ΔF`:
//!
//! ```text
//! γ_k     = argmin_γ ‖f_k − ΔF γ‖₂        (normal equations, Tikhonov 1e-12 · max diag)
//! u_{k+1} = g_k − ΔG γ_k
//! ```
//!
//! Safeguards: when `‖f_k‖` exceeds twice `‖f_{k−1}‖` the memory is cleared and the plain step
//! `u_{k+1} = g_k` is taken; when `‖f_k‖` has not reached a new minimum for [`PATIENCE`]
//! steps the acceleration gives up and every later step is plain (the iteration then converges
//! as the plain one does, from where it is: a singular problem on which extrapolation stalls
//! loses those steps, nothing more). The caller clears it when `T` itself changes (a new
//! penalty), which restarts that count; so the caller also gives up ([`Anderson::give_up`])
//! when its own measure stops improving across penalties. All buffers are sized by
//! [`Anderson::reset`]; a step allocates nothing.

/// Steps without a new smallest fixed-point residual after which the acceleration gives up.
pub(crate) const PATIENCE: usize = 30;

/// Anderson acceleration state: the last `memory` differences and their Gram matrix.
#[derive(Debug, Default)]
pub(crate) struct Anderson {
    memory: usize,
    len: usize,
    /// The current iterate u_k, then the extrapolated u_{k+1}.
    input: Vec<f64>,
    /// The plain image g_k = T(u_k).
    image: Vec<f64>,
    residual: Vec<f64>,
    last_image: Vec<f64>,
    last_residual: Vec<f64>,
    /// Column slots (ring buffer) of ΔG and ΔF, `memory × len`.
    dg: Vec<f64>,
    df: Vec<f64>,
    /// ΔFᵀΔF by slot, `memory × memory`.
    gram: Vec<f64>,
    /// Work space of the small solve.
    chol: Vec<f64>,
    gamma: Vec<f64>,
    count: usize,
    head: usize,
    has_last: bool,
    last_norm: f64,
    best_norm: f64,
    since_best: usize,
    gave_up: bool,
    /// Whether the last [`Self::extrapolate`] combined past differences (false: the plain
    /// step).
    extrapolated: bool,
}

impl Anderson {
    /// Clears the memory; sizes the buffers for `memory` differences of vectors of `len`.
    pub(crate) fn reset(&mut self, memory: usize, len: usize) {
        self.memory = memory;
        self.len = len;
        for (v, n) in [
            (&mut self.input, len),
            (&mut self.image, len),
            (&mut self.residual, len),
            (&mut self.last_image, len),
            (&mut self.last_residual, len),
            (&mut self.dg, memory * len),
            (&mut self.df, memory * len),
            (&mut self.gram, memory * memory),
            (&mut self.chol, memory * memory),
            (&mut self.gamma, memory),
        ] {
            v.resize(n, 0.0);
        }
        self.gave_up = false;
        self.clear_memory();
    }

    /// Forgets the past iterates (the map changed: a new penalty) but not whether the
    /// acceleration gave up in this solve.
    pub(crate) fn clear_memory(&mut self) {
        self.count = 0;
        self.head = 0;
        self.has_last = false;
        self.last_norm = f64::INFINITY;
        self.best_norm = f64::INFINITY;
        self.since_best = 0;
    }

    /// Turns the acceleration off for the rest of the solve (until [`Self::reset`]): the
    /// caller's own measure of progress stalled (`AdmmSolver`: the NCP residual,
    /// [`crate::contact::STALLED_CHECKS`]).
    pub(crate) fn give_up(&mut self) {
        self.gave_up = true;
    }

    /// Whether acceleration is on: a memory of at least one difference, and not given up.
    pub(crate) fn is_on(&self) -> bool {
        self.memory > 0 && !self.gave_up
    }

    /// Whether the last [`Self::extrapolate`] extrapolated (false: it returned the plain
    /// image, the memory being empty, restarting or given up).
    pub(crate) fn extrapolated(&self) -> bool {
        self.extrapolated
    }

    /// The slots to fill before [`Self::extrapolate`]: `(u_k, T(u_k))`.
    pub(crate) fn slots(&mut self) -> (&mut [f64], &mut [f64]) {
        (&mut self.input, &mut self.image)
    }

    /// Records the pair written into [`Self::slots`] and returns the next iterate u_{k+1}.
    pub(crate) fn extrapolate(&mut self) -> &[f64] {
        let len = self.len;
        for ((r, g), u) in self.residual.iter_mut().zip(&self.image).zip(&self.input) {
            *r = g - u;
        }
        let norm = f64::sqrt(dot(&self.residual, &self.residual));
        if norm < self.best_norm {
            self.best_norm = norm;
            self.since_best = 0;
        } else {
            self.since_best += 1;
            if self.since_best >= PATIENCE {
                self.gave_up = true;
            }
        }
        if self.has_last && !self.gave_up {
            if !(norm <= 2.0 * self.last_norm) {
                self.count = 0;
            } else {
                let h = self.head;
                let slot = h * len..(h + 1) * len;
                for (((dg, df), i), (g, r)) in self.dg[slot.clone()]
                    .iter_mut()
                    .zip(&mut self.df[slot])
                    .zip(0..len)
                    .zip(self.image.iter().zip(&self.residual))
                {
                    *dg = g - self.last_image[i];
                    *df = r - self.last_residual[i];
                }
                self.count = (self.count + 1).min(self.memory);
                // Row and column h of the Gram matrix.
                let m = self.memory;
                for q in 0..self.count {
                    let v = dot(
                        &self.df[h * len..(h + 1) * len],
                        &self.df[q * len..(q + 1) * len],
                    );
                    self.gram[h * m + q] = v;
                    self.gram[q * m + h] = v;
                }
                self.head = (h + 1) % m;
            }
        }
        self.last_image.copy_from_slice(&self.image);
        self.last_residual.copy_from_slice(&self.residual);
        self.has_last = true;
        self.last_norm = norm;
        self.extrapolated = !self.gave_up && self.count > 0 && self.solve_weights();
        self.input.copy_from_slice(&self.image);
        if !self.extrapolated {
            return &self.input;
        }
        for p in 0..self.count {
            let gamma = self.gamma[p];
            for (u, dg) in self.input.iter_mut().zip(&self.dg[p * len..(p + 1) * len]) {
                *u -= gamma * dg;
            }
        }
        &self.input
    }

    /// γ = (ΔFᵀΔF + εI)⁻¹ ΔFᵀ f over the filled slots, by Cholesky; false if that fails.
    fn solve_weights(&mut self) -> bool {
        let (k, m, len) = (self.count, self.memory, self.len);
        let scale = (0..k).map(|p| self.gram[p * m + p]).fold(0.0, f64::max);
        if !(scale > 0.0) || !scale.is_finite() {
            return false;
        }
        for p in 0..k {
            for q in 0..k {
                self.chol[p * k + q] = self.gram[p * m + q];
            }
            self.chol[p * k + p] += 1e-12 * scale;
            self.gamma[p] = dot(&self.df[p * len..(p + 1) * len], &self.residual);
        }
        // In-place Cholesky (lower) of the k × k matrix, then two triangular solves.
        for j in 0..k {
            let mut d = self.chol[j * k + j];
            for p in 0..j {
                d -= self.chol[j * k + p] * self.chol[j * k + p];
            }
            if !(d > 0.0) {
                return false;
            }
            let d = d.sqrt();
            self.chol[j * k + j] = d;
            for i in j + 1..k {
                let mut v = self.chol[i * k + j];
                for p in 0..j {
                    v -= self.chol[i * k + p] * self.chol[j * k + p];
                }
                self.chol[i * k + j] = v / d;
            }
        }
        for i in 0..k {
            let mut v = self.gamma[i];
            for p in 0..i {
                v -= self.chol[i * k + p] * self.gamma[p];
            }
            self.gamma[i] = v / self.chol[i * k + i];
        }
        for i in (0..k).rev() {
            let mut v = self.gamma[i];
            for p in i + 1..k {
                v -= self.chol[p * k + i] * self.gamma[p];
            }
            self.gamma[i] = v / self.chol[i * k + i];
        }
        self.gamma[..k].iter().all(|g| g.is_finite())
    }
}

/// `aᵀb` with eight partial sums (one running sum is a chain of dependent additions that
/// does not vectorise).
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut sums = [0.0; 8];
    let (a_chunks, b_chunks) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f64 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for k in 0..8 {
            sums[k] += x[k] * y[k];
        }
    }
    sums.iter().sum::<f64>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A linear contraction u ← M u + c in 4 dimensions: the plain iteration converges at the
    /// rate of M's spectral radius (0.95), Anderson with a memory of the dimension reaches the
    /// fixed point (M − I)⁻¹(−c), computed independently, in a handful of steps (GMRES-like).
    #[test]
    fn accelerates_a_linear_contraction_to_its_fixed_point() {
        let m = [
            [0.95, 0.01, 0.0, 0.0],
            [0.0, 0.5, 0.02, 0.0],
            [0.0, 0.0, -0.9, 0.03],
            [0.01, 0.0, 0.0, 0.2],
        ];
        let c = [1.0, -2.0, 0.5, 3.0];
        let t = |u: &[f64], out: &mut [f64]| {
            for i in 0..4 {
                out[i] = c[i] + (0..4).map(|j| m[i][j] * u[j]).sum::<f64>();
            }
        };
        // Fixed point by Gaussian elimination on (I − M) u = c.
        let mut a = [[0.0; 5]; 4];
        for i in 0..4 {
            for j in 0..4 {
                a[i][j] = if i == j { 1.0 } else { 0.0 } - m[i][j];
            }
            a[i][4] = c[i];
        }
        for col in 0..4 {
            let piv = (col..4)
                .max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))
                .unwrap();
            a.swap(col, piv);
            let pivot = a[col];
            for (r, row) in a.iter_mut().enumerate() {
                if r != col {
                    let f = row[col] / pivot[col];
                    for (x, p) in row.iter_mut().zip(&pivot).skip(col) {
                        *x -= f * p;
                    }
                }
            }
        }
        let exact: Vec<f64> = (0..4).map(|i| a[i][4] / a[i][i]).collect();

        let mut aa = Anderson::default();
        aa.reset(4, 4);
        let mut u = vec![0.0; 4];
        let mut plain = vec![0.0; 4];
        let mut next = vec![0.0; 4];
        for _ in 0..8 {
            let (input, image) = aa.slots();
            input.copy_from_slice(&u);
            t(&u, image);
            u.copy_from_slice(aa.extrapolate());
            t(&plain.clone(), &mut next);
            plain.copy_from_slice(&next);
        }
        let err = |v: &[f64]| {
            v.iter()
                .zip(&exact)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
        };
        assert!(err(&u) < 1e-9, "accelerated error {:e}", err(&u));
        assert!(err(&plain) > 1.0, "plain error {:e}", err(&plain));
    }

    /// A map whose fixed-point residual never shrinks (a rotation by 90°, norm-preserving):
    /// after [`PATIENCE`] steps without a new minimum the acceleration is off and the step is
    /// the plain image.
    #[test]
    fn gives_up_when_the_residual_stops_falling() {
        let mut aa = Anderson::default();
        aa.reset(3, 2);
        let mut u = [1.0, 0.0];
        for k in 0..=PATIENCE + 1 {
            assert_eq!(aa.is_on(), k <= PATIENCE, "step {k}");
            let image = [-u[1], u[0]];
            let (input, slot) = aa.slots();
            input.copy_from_slice(&u);
            slot.copy_from_slice(&image);
            let next = aa.extrapolate().to_vec();
            if !aa.is_on() {
                assert_eq!(next, image);
            }
            // Stay on the unit circle whatever the extrapolation did: ‖T(u) − u‖ = √2 ‖u‖.
            u = [image[0], image[1]];
        }
        assert!(!aa.is_on());
    }

    #[test]
    fn no_memory_is_the_plain_step() {
        let mut aa = Anderson::default();
        aa.reset(0, 2);
        assert!(!aa.is_on());
        aa.reset(3, 2);
        let (input, image) = aa.slots();
        input.copy_from_slice(&[1.0, 2.0]);
        image.copy_from_slice(&[3.0, 5.0]);
        assert_eq!(aa.extrapolate(), &[3.0, 5.0]);
    }
}
