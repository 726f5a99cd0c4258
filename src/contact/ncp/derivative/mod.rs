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
//! differentiates the modes as given; [`classify`](crate::contact::classify) resolves a boundary by
//! picking breaking before sticking before sliding, so a contact with λ ≈ 0 and σ_N ≈ 0 is
//! differentiated as open (dλ = 0), and one with ‖σ_T‖ ≈ 0 on the cone's rim as sticking.

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
    /// [`classify`](crate::contact::classify), a boundary contact is taken as breaking before sticking
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

/// The inputs of the NCP derivative, kept for the complementarity-aware relabelling.
#[derive(Debug, Clone)]
struct Inputs {
    delassus: DMat,
    friction: Vec<f64>,
    lambda: Vec<f64>,
    sigma: Vec<f64>,
    modes: Vec<ContactMode>,
}

impl Inputs {
    /// Copies the inputs into these buffers (reallocated only when they grow).
    fn refill(
        &mut self,
        delassus: &DMat,
        friction: &[f64],
        lambda: &[f64],
        sigma: &[f64],
        modes: &[ContactMode],
    ) {
        if self.delassus.shape() == delassus.shape() {
            self.delassus.copy_from(delassus);
        } else {
            self.delassus = delassus.clone();
        }
        for (to, from) in [
            (&mut self.friction, friction),
            (&mut self.lambda, lambda),
            (&mut self.sigma, sigma),
        ] {
            to.clear();
            to.extend_from_slice(from);
        }
        self.modes.clear();
        self.modes.extend_from_slice(modes);
    }
}

/// The implicit derivative of one solved NCP (module doc; paper 002 Eq. 11, App. A–B):
/// `dλ = L dq` with `L = −C A⁺ B`, factorised once by [`NcpDerivative::new`], or refilled in
/// place by [`NcpDerivative::refill`] (its buffers reused: faer-style, sized on first use).
///
/// Units: `dq` and `q̄`'s dual are contact velocities (m/s), `dλ` forces (N), in the contact
/// frames `[t₁, t₂, n]`, 3 entries per contact.
#[derive(Debug)]
pub struct NcpDerivative {
    reduced: Reduced,
    boundary: BoundaryGradient,
    /// Tied contacts (complementarity-aware only), with the inputs to relabel them (kept
    /// from an earlier refill when no contact is tied, then unused).
    tied: Vec<usize>,
    inputs: Option<Inputs>,
}

fn block3(v: &[f64], i: usize) -> Vec3 {
    Vec3::new(v[3 * i], v[3 * i + 1], v[3 * i + 2])
}

impl NcpDerivative {
    /// Builds and factorises the reduced implicit system (paper 002 Eq. 11 / Eq. 27) of the
    /// NCP with Delassus matrix `delassus` (3n×3n, (m/s)/N), friction coefficients `friction`
    /// (n), solution `lambda` (3n, N), `sigma = Gλ + g` (3n, m/s) and `modes` (n, e.g. from
    /// [`classify`](crate::contact::classify)).
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
        let mut d = NcpDerivative::default();
        d.refill(delassus, friction, lambda, sigma, modes, boundary)?;
        Ok(d)
    }

    /// [`NcpDerivative::new`] into `self`: the same derivative, built in the buffers of the
    /// previous one (faer-style workspace), so that refilling with as many contacts as before
    /// or fewer allocates nothing — unless the reduced system is rank deficient (its SVD
    /// allocates) or, with [`BoundaryGradient::ComplementarityAware`], inputs are kept that
    /// outgrow the earlier ones. On an error `self` is left as it was.
    pub fn refill(
        &mut self,
        delassus: &DMat,
        friction: &[f64],
        lambda: &[f64],
        sigma: &[f64],
        modes: &[ContactMode],
        boundary: BoundaryGradient,
    ) -> Result<()> {
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
        if let BoundaryGradient::ComplementarityAware { tied_velocity } = boundary
            && (!(tied_velocity >= 0.0) || !tied_velocity.is_finite())
        {
            return Err(Error::invalid(
                "complementarity-aware tied velocity",
                format!("{tied_velocity} must be finite and non-negative"),
            ));
        }
        self.tied.clear();
        if let BoundaryGradient::ComplementarityAware { tied_velocity } = boundary {
            self.tied.extend((0..n).filter(|&i| {
                modes[i] == ContactMode::Breaking && sigma[3 * i + 2] <= tied_velocity
            }));
            if !self.tied.is_empty() {
                self.inputs
                    .get_or_insert_with(|| Inputs {
                        delassus: DMat::zeros(0, 0),
                        friction: Vec::new(),
                        lambda: Vec::new(),
                        sigma: Vec::new(),
                        modes: Vec::new(),
                    })
                    .refill(delassus, friction, lambda, sigma, modes);
            }
        }
        self.boundary = boundary;
        self.reduced
            .refill(delassus, friction, lambda, sigma, modes);
        Ok(())
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
        self.reduced
            .tangent(dq, 1, dlambda, &mut NcpSolveScratch::default());
    }

    /// Forward mode on k directions at once: column j of `dlambda` (3n×k) is `L` times column
    /// j of `dq` (3n×k); `dlambda` is resized if needed. One multi-right-hand-side solve.
    /// Panics if `dq` does not have 3n rows.
    pub fn tangent_many(&self, dq: &DMat, dlambda: &mut DMat) {
        self.tangent_many_with(dq, dlambda, &mut NcpSolveScratch::default());
    }

    /// [`NcpDerivative::tangent_many`] with the solve's buffers in `scratch`: once `scratch`
    /// and `dlambda` have served a solve of the same size, it allocates nothing.
    pub fn tangent_many_with(&self, dq: &DMat, dlambda: &mut DMat, scratch: &mut NcpSolveScratch) {
        let n3 = 3 * self.contact_count();
        assert!(dq.nrows() == n3, "NcpDerivative::tangent_many: rows");
        let k = dq.ncols();
        if dlambda.nrows() != n3 || dlambda.ncols() != k {
            *dlambda = DMat::zeros(n3, k);
        }
        self.reduced
            .tangent(dq.as_slice(), k, dlambda.as_mut_slice(), scratch);
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
        let mut scratch = NcpSolveScratch::default();
        for j in 0..k {
            let mut column = q_bar.column_mut(j);
            self.cotangent_with(
                lambda_bar.column(j).as_slice(),
                column.as_mut_slice(),
                &mut scratch,
            );
        }
    }

    /// Reverse mode: `q_bar = Lᵀ lambda_bar`, so that `⟨λ̄, dλ⟩ = ⟨q̄, dq⟩` for every `dq`
    /// (`lambda_bar` = ∂ℓ/∂λ in N⁻¹ units of the loss, `q_bar` = ∂ℓ/∂q per m/s).
    ///
    /// With [`BoundaryGradient::ComplementarityAware`] the tied contacts with `λ̄_N < 0` may be
    /// relabelled as closed (see there); the returned [`CotangentSide`] says which strategy
    /// was kept. Panics on wrong lengths.
    pub fn cotangent(&self, lambda_bar: &[f64], q_bar: &mut [f64]) -> CotangentSide {
        self.cotangent_with(lambda_bar, q_bar, &mut NcpSolveScratch::default())
    }

    /// [`NcpDerivative::cotangent`] with the solve's buffers in `scratch` (reused: no
    /// allocation once warm, except when a complementarity-aware relabelling is evaluated).
    pub fn cotangent_with(
        &self,
        lambda_bar: &[f64],
        q_bar: &mut [f64],
        scratch: &mut NcpSolveScratch,
    ) -> CotangentSide {
        let n3 = 3 * self.contact_count();
        assert!(
            lambda_bar.len() == n3 && q_bar.len() == n3,
            "NcpDerivative::cotangent: lengths"
        );
        self.reduced.cotangent(lambda_bar, q_bar, scratch);
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
        let mut relabelled = Reduced::default();
        relabelled.refill(
            &inputs.delassus,
            &inputs.friction,
            &inputs.lambda,
            &inputs.sigma,
            &modes,
        );
        let mut other = vec![0.0; n3];
        relabelled.cotangent(lambda_bar, &mut other, scratch);
        let norm2 = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>();
        if norm2(&other) > norm2(q_bar) {
            q_bar.copy_from_slice(&other);
            CotangentSide::Relabelled(closing.len())
        } else {
            CotangentSide::Classified
        }
    }
}

impl Default for NcpDerivative {
    /// The derivative of an NCP with no contacts, to be [refilled](NcpDerivative::refill).
    fn default() -> Self {
        NcpDerivative {
            reduced: Reduced::default(),
            boundary: BoundaryGradient::OneSided,
            tied: Vec::new(),
            inputs: None,
        }
    }
}

mod friction;
mod reduced_system;

pub use reduced_system::NcpSolveScratch;
use reduced_system::Reduced;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod complementarity_aware_sliding;

#[cfg(test)]
mod refill_tests;
