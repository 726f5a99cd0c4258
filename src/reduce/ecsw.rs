//! Hyper-reduction by energy-conserving sampling and weighting (ECSW; Farhat, Chapman &
//! Avery, IJNME 2015, Eq. 20–24): a few elements with non-negative weights whose weighted
//! generalised forces reproduce the whole mesh's on training configurations,
//! ‖Σₑ wₑ Vₑᵀfₑ(q_s) − Vᵀf(q_s)‖ ≤ τ ‖Vᵀf(q_s)‖ stacked over the snapshots s. The weighted
//! forces are the derivative of the weighted energy Σₑ wₑ VₑΨₑ, so the reduced step stays
//! energy-consistent and its tangent is their exact derivative.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::fem::SoftBody;
use crate::math::{DMat, DVec};

use super::element_projection::{ElementProjection, ReducedTerms, Tangent};
use super::nnls::nnls;
use super::nodal_basis::NodalBasis;

/// The kept elements and their weights.
#[derive(Debug, Clone)]
pub struct Sampling {
    /// Indices of the kept elements, ascending.
    pub elements: Vec<usize>,
    /// Their weights (dimensionless, > 0).
    pub weights: Vec<f64>,
    /// ‖Gw − b‖ / ‖b‖ reached on the training configurations.
    pub force_error: f64,
}

/// The ECSW sampling of `body`'s elements for the basis `basis` on the reduced training
/// configurations `snapshots` (K values each), to the relative force error `tolerance`.
/// Errors: an element the law cannot evaluate at a training configuration (named).
pub fn sample_elements(
    body: &SoftBody,
    basis: &NodalBasis,
    snapshots: &[DVec],
    tolerance: f64,
) -> Result<Sampling> {
    if !(tolerance > 0.0 && tolerance < 1.0) {
        return Err(Error::invalid(
            "--force-tolerance",
            format!("must lie in (0, 1), got {tolerance}"),
        ));
    }
    let k = basis.modes();
    let rows = k * snapshots.len();
    let columns = (0..body.elements().len())
        .into_par_iter()
        .map(|e| {
            let projection = ElementProjection::new(body, basis, e);
            let mut terms = ReducedTerms::new(k);
            let mut column = vec![0.0; rows];
            for (s, q) in snapshots.iter().enumerate() {
                terms.clear();
                projection.add_to(body, q.as_slice(), 1.0, Tangent::Skip, &mut terms)?;
                column[s * k..(s + 1) * k].copy_from_slice(terms.force.as_slice());
            }
            Ok(column)
        })
        .collect::<Result<Vec<_>>>()?;
    let g = DMat::from_fn(rows, columns.len(), |r, c| columns[c][r]);
    let b = DVec::from_fn(rows, |r, _| columns.iter().map(|c| c[r]).sum());
    let solution = nnls(&g, &b, tolerance);
    let (elements, weights) = solution
        .weights
        .iter()
        .enumerate()
        .filter(|(_, w)| **w > 0.0)
        .map(|(e, w)| (e, *w))
        .unzip();
    Ok(Sampling {
        elements,
        weights,
        force_error: solution.relative_residual,
    })
}
