//! ADMM's penalty ρ and its proximal weight (`super::admm`, "Adaptive penalty"): the start
//! from the spectrum of `G` and the spectral update rule, within 1e±8 of the start.

use super::admm_settings::AdmmSettings;

/// One solve's penalty: ρ, the range it moves in, the factor of an update, and the constants
/// of the shifted system `G + (μ_prox + τρ) I`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Penalty {
    /// The current penalty ρ.
    pub(super) rho: f64,
    /// The proximal weight `μ_prox = prox_ratio · L`.
    pub(super) mu_prox: f64,
    tau: f64,
    /// What an update multiplies or divides ρ by: `cond^rho_power_factor`.
    increment: f64,
    /// The bounds of ρ: 1e±8 times its start.
    range: (f64, f64),
}

impl Penalty {
    /// The penalty of the paper's spectral rule for `G`'s largest eigenvalue `l` (positive
    /// and finite): `μ_prox = prox_ratio · l`, `cond = l / μ_prox`,
    /// `ρ = √(l μ_prox) · cond^rho_power`.
    pub(super) fn from_spectrum(l: f64, settings: &AdmmSettings) -> Penalty {
        let mu_prox = settings.prox_ratio * l;
        let cond = l / mu_prox;
        let rho = (l * mu_prox).sqrt() * cond.powf(settings.rho_power);
        Penalty {
            rho,
            mu_prox,
            tau: settings.tau,
            increment: cond.powf(settings.rho_power_factor),
            // The spectral updates move ρ within 1e±8 of its start: unbounded, a long stall
            // (a rank-deficient G asked for a tolerance near round-off) grew it to infinity
            // and the iterate to NaN.
            range: (rho * 1e-8, rho * 1e8),
        }
    }

    /// `τρ`, the weight of the cone copy and the multiplier's step.
    pub(super) fn tau_rho(&self) -> f64 {
        self.tau * self.rho
    }

    /// The shift `μ_prox + τρ` of the system the x-update solves.
    pub(super) fn shift(&self) -> f64 {
        self.mu_prox + self.tau * self.rho
    }

    /// The spectral rule, where `apply`: ρ times the increment when ADMM's `primal` residual
    /// exceeds `ratio` times its `dual` one, divided by it in the opposite case, then kept in
    /// its range. True if ρ changed (the shifted system must be factorised again).
    pub(super) fn update(&mut self, apply: bool, primal: f64, dual: f64, ratio: f64) -> bool {
        let rho = self.rho;
        let new_rho = if !apply {
            rho
        } else if primal > ratio * dual {
            rho * self.increment
        } else if dual > ratio * primal {
            rho / self.increment
        } else {
            rho
        };
        let new_rho = new_rho.clamp(self.range.0, self.range.1);
        if new_rho != rho {
            self.rho = new_rho;
            return true;
        }
        false
    }
}
