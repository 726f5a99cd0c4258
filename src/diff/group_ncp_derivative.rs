//! The implicit derivative of one of the last step's NCPs (`scene::GroupNcp`), as the step
//! derivatives build it: its modes classified from its λ and σ with the scene's tolerance
//! (attachments always sticking), the `contact::NcpDerivative` of its G, and the force
//! directions of its obstacles' friction coefficients.

use crate::contact::{BoundaryGradient, ContactMode, ModeTolerance, NcpDerivative, classify_into};
use crate::error::Result;
use crate::math::Vec3;
use crate::scene::{GroupNcp, Scene};

/// Per obstacle whose friction some contact of `group` slides on, ∂λ/∂μ_o = L G p + p
/// (`NcpDerivative::friction_tangent`, `d` the NCP's derivative).
pub(crate) fn friction_directions(group: &GroupNcp, d: &NcpDerivative) -> Vec<(usize, Vec<f64>)> {
    let sources = group.friction_obstacle();
    let mut obstacles: Vec<usize> = sources
        .iter()
        .enumerate()
        .filter(|(i, o)| o.is_some() && d.friction_shift(*i) != Vec3::zeros())
        .filter_map(|(_, o)| *o)
        .collect();
    obstacles.sort_unstable();
    obstacles.dedup();
    obstacles
        .into_iter()
        .map(|o| {
            let dmu: Vec<f64> = sources
                .iter()
                .map(|s| if *s == Some(o) { 1.0 } else { 0.0 })
                .collect();
            let mut t = vec![0.0; 3 * sources.len()];
            d.friction_tangent(group.delassus(), &dmu, &mut t);
            (o, t)
        })
        .collect()
}

/// The NCP derivative of `ncp`, one of the last step's: its modes classified from its λ and
/// σ with the scene's tolerance, bilateral blocks (attachments) always sticking.
pub(crate) fn ncp_derivative(
    scene: &Scene,
    ncp: &GroupNcp,
    boundary: BoundaryGradient,
) -> Result<NcpDerivative> {
    let mut d = NcpDerivative::default();
    ncp_derivative_into(scene, ncp, boundary, &mut Vec::new(), &mut d)?;
    Ok(d)
}

/// [`ncp_derivative`] refilled into `out` ([`NcpDerivative::refill`]), the modes classified
/// into `modes`: both buffers reused.
pub(crate) fn ncp_derivative_into(
    scene: &Scene,
    ncp: &GroupNcp,
    boundary: BoundaryGradient,
    modes: &mut Vec<ContactMode>,
    out: &mut NcpDerivative,
) -> Result<()> {
    classify_into(
        ncp.lambda(),
        ncp.sigma(),
        ModeTolerance::for_ncp_tolerance(scene.contact.settings.tolerance),
        modes,
    );
    for (m, &b) in modes.iter_mut().zip(ncp.bilateral()) {
        if b {
            *m = ContactMode::Sticking;
        }
    }
    out.refill(
        ncp.assembled_delassus()?,
        ncp.friction(),
        ncp.lambda(),
        ncp.sigma(),
        modes,
        boundary,
    )
}
