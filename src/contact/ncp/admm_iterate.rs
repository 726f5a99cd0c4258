//! ADMM's iterates and what is done to them (`super::admm`): the start from a warm start,
//! the three updates of an iteration with ADMM's own residuals, the NCP residuals the
//! stopping test scores, and Anderson's extrapolation of the next iterate.

use super::admm_faces::FaceTracker;
use super::admm_penalty::Penalty;
use super::anderson::Anderson;
use super::cone::FrictionCone;
use super::delassus_operator::DelassusOperator;
use super::problem::{Residuals, block, cone_residuals};

/// The unconstrained copy `x`, the cone copy `y` and the multiplier `z` (3 per contact),
/// their values before the iteration, the x-update's right-hand side and the velocity
/// `σ = G y + g` of the last score; kept by the solver between solves (sized on first use).
#[derive(Debug, Default)]
pub(super) struct AdmmIterate {
    pub(super) x: Vec<f64>,
    pub(super) y: Vec<f64>,
    pub(super) z: Vec<f64>,
    x_prev: Vec<f64>,
    y_prev: Vec<f64>,
    z_prev: Vec<f64>,
    /// The x-update's right-hand side; also the Lanczos steps' start and estimate.
    pub(super) rhs: Vec<f64>,
    pub(super) sigma: Vec<f64>,
}

impl AdmmIterate {
    /// Sizes the vectors for `m` rows (3 per contact).
    pub(super) fn resize(&mut self, m: usize) {
        for v in [
            &mut self.x,
            &mut self.y,
            &mut self.z,
            &mut self.x_prev,
            &mut self.y_prev,
            &mut self.z_prev,
            &mut self.rhs,
            &mut self.sigma,
        ] {
            v.resize(m, 0.0);
        }
    }

    /// The initial iterate: `y = Π_K(warm start)` (or 0), `z = Π_K*(σ + Γ(σ))` at
    /// `σ = G y + g`. True for a cold start (`y = 0`, so `σ = g` with no product: one sparse
    /// solve fewer through a factor).
    pub(super) fn start(
        &mut self,
        delassus: &mut impl DelassusOperator,
        g: &[f64],
        cones: &[FrictionCone],
        warm_start: Option<&[f64]>,
    ) -> bool {
        match warm_start {
            Some(w) => self.x.copy_from_slice(w),
            None => self.x.fill(0.0),
        }
        for (i, cone) in cones.iter().enumerate() {
            let y = cone.project(&block(&self.x, i));
            self.y[3 * i..3 * i + 3].copy_from_slice(y.as_slice());
        }
        let cold = self.y.iter().all(|&y| y == 0.0);
        if cold {
            self.sigma.copy_from_slice(g);
        } else {
            delassus.velocity(g, &self.y, &mut self.sigma);
        }
        for (i, cone) in cones.iter().enumerate() {
            let z = cone.project_dual(&cone.corrected(&block(&self.sigma, i)));
            self.z[3 * i..3 * i + 3].copy_from_slice(z.as_slice());
        }
        cold
    }

    /// The three updates of an iteration at `penalty` (module documentation of
    /// `super::admm`), telling `faces` the face each contact's `y` was projected on at
    /// iteration `iteration`. Returns ADMM's own primal and dual residuals,
    /// `‖x − y‖∞` and `‖τρ(y − y_prev) + μ_prox (x − x_prev)‖∞`.
    pub(super) fn update(
        &mut self,
        delassus: &mut impl DelassusOperator,
        g: &[f64],
        cones: &[FrictionCone],
        penalty: &Penalty,
        faces: &mut FaceTracker,
        iteration: usize,
    ) -> (f64, f64) {
        let (tr, mu_prox) = (penalty.tau_rho(), penalty.mu_prox);
        self.x_prev.copy_from_slice(&self.x);
        self.y_prev.copy_from_slice(&self.y);
        self.z_prev.copy_from_slice(&self.z);
        // x-update: rhs = −g − Γ(z) + τρ y + μ_prox x + z.
        for (i, cone) in cones.iter().enumerate() {
            let z = block(&self.z, i);
            let s = cone.de_saxce(&z);
            for k in 0..3 {
                let j = 3 * i + k;
                self.rhs[j] = -g[j] - s[k] + tr * self.y[j] + mu_prox * self.x[j] + z[k];
            }
        }
        delassus.solve_shifted(&mut self.rhs);
        self.x.copy_from_slice(&self.rhs);
        // y-update (cone projection) and z-update (multiplier).
        for (i, cone) in cones.iter().enumerate() {
            let x = block(&self.x, i);
            let z = block(&self.z, i);
            let (y, face) = cone.project_with_face(&(x - z / tr));
            faces.track(i, face, iteration);
            let z = z - tr * (x - y);
            self.y[3 * i..3 * i + 3].copy_from_slice(y.as_slice());
            self.z[3 * i..3 * i + 3].copy_from_slice(z.as_slice());
        }
        let mut primal = 0.0f64;
        let mut dual = 0.0f64;
        for j in 0..self.x.len() {
            primal = primal.max((self.x[j] - self.y[j]).abs());
            dual = dual.max(
                (tr * (self.y[j] - self.y_prev[j]) + mu_prox * (self.x[j] - self.x_prev[j])).abs(),
            );
        }
        (primal, dual)
    }

    /// The NCP residuals of `(y, σ)`, `σ = G y + g` (one product with `G`, kept in `sigma`).
    pub(super) fn score(
        &mut self,
        delassus: &mut impl DelassusOperator,
        g: &[f64],
        cones: &[FrictionCone],
    ) -> Residuals {
        delassus.velocity(g, &self.y, &mut self.sigma);
        cone_residuals(cones, &self.y, &self.sigma)
    }

    /// Replaces the plain step's `(y, z)` by Anderson's extrapolation of `u = (y, z/τρ)`
    /// (both in N) from the iterates before and after it, `tr` being τρ.
    pub(super) fn extrapolate(&mut self, anderson: &mut Anderson, tr: f64) {
        let m = self.y.len();
        let (input, image) = anderson.slots();
        for (k, (prev, now)) in [(&self.y_prev, &self.y), (&self.z_prev, &self.z)]
            .into_iter()
            .enumerate()
        {
            let scale = if k == 1 { 1.0 / tr } else { 1.0 };
            for (j, (p, q)) in prev.iter().zip(now.iter()).enumerate() {
                input[k * m + j] = p * scale;
                image[k * m + j] = q * scale;
            }
        }
        let next = anderson.extrapolate();
        self.y.copy_from_slice(&next[..m]);
        for (z, v) in self.z.iter_mut().zip(&next[m..]) {
            *z = v * tr;
        }
    }
}
