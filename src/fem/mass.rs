//! Mass of a soft body: lumped (diagonal) or consistent, for linear tetrahedra of density ρ,
//! or uniform (SOFA's `UniformMass`: the body's mass spread evenly over its nodes).

use serde::Deserialize;

/// Lumped, consistent or uniform mass matrix (scene key `mass`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum MassKind {
    /// Each tetrahedron's mass ρV spread equally over its 4 nodes (diagonal M).
    #[default]
    Lumped,
    /// The consistent mass of linear tetrahedra, ∫ρ NᵢNⱼ dV = ρV(1 + δᵢⱼ)/20 per component.
    Consistent,
    /// SOFA's `UniformMass` (as the SoftRobots scenes use): the body's mass ρV (V the rest
    /// volume; in a scene file, the key `total_mass`) spread evenly over ALL the mesh's nodes,
    /// mₙ = ρV/N for N nodes, fixed nodes and nodes of no tetrahedron included (diagonal M).
    Uniform,
}

impl MassKind {
    /// Whether the mass matrix is diagonal (lumped or uniform), M = diag(mₙ).
    pub fn is_diagonal(self) -> bool {
        !matches!(self, MassKind::Consistent)
    }
}

/// Nodal lumped masses (kg): node n gets ρVₑ/4 from every tetrahedron e it belongs to. Nodes
/// of no tetrahedron get 0. Also the weights of the gravity load fₙ = mₙ g, which is exact for
/// the consistent mass too (∫ρ Nₙ dV = ρVₑ/4).
pub fn lumped_masses(n_nodes: usize, elements: &[([usize; 4], f64)], density: f64) -> Vec<f64> {
    let mut m = vec![0.0; n_nodes];
    for (nodes, volume) in elements {
        for &n in nodes {
            m[n] += density * volume / 4.0;
        }
    }
    m
}

/// Nodal uniform masses (kg), SOFA's `UniformMass`: every one of the `n_nodes` nodes gets
/// mₙ = ρ Σₑ Vₑ / N (N = `n_nodes`, every node counted, whether fixed or in no tetrahedron),
/// so that Σₙ mₙ = ρ Σₑ Vₑ, the same total as [`lumped_masses`].
pub fn uniform_masses(n_nodes: usize, elements: &[([usize; 4], f64)], density: f64) -> Vec<f64> {
    let total: f64 = elements.iter().map(|(_, v)| density * v).sum();
    vec![total / n_nodes as f64; n_nodes]
}

/// The 12×12 consistent mass block of one tetrahedron (kg), row-major, local index `3n + a`:
/// ρV(1 + δₙₘ)/20 on the diagonal of each 3×3 node block.
pub fn consistent_mass_block(density: f64, volume: f64, out: &mut [f64]) {
    debug_assert_eq!(out.len(), 144);
    out.fill(0.0);
    for n in 0..4 {
        for m in 0..4 {
            let w = density * volume * if n == m { 2.0 } else { 1.0 } / 20.0;
            for a in 0..3 {
                out[(3 * n + a) * 12 + 3 * m + a] = w;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_masses_carry_the_element_mass_and_the_consistent_one_integrates_exactly() {
        // Total mass: Σ over a component's block = ρV (partition of unity).
        let (rho, v) = (1200.0, 2.5e-6);
        let mut block = [0.0; 144];
        consistent_mass_block(rho, v, &mut block);
        let x_component: f64 = (0..4)
            .flat_map(|n| (0..4).map(move |m| (n, m)))
            .map(|(n, m)| block[(3 * n) * 12 + 3 * m])
            .sum();
        assert!((x_component - rho * v).abs() < 1e-18);
        let lumped = lumped_masses(5, &[([0, 1, 2, 3], v)], rho);
        assert_eq!(lumped[4], 0.0);
        assert!((lumped.iter().sum::<f64>() - rho * v).abs() < 1e-18);
        // ∫ρ N₀² dV = ρV/10 for a linear tetrahedron (Zienkiewicz), = 2ρV/20.
        assert!((block[0] - rho * v / 10.0).abs() < 1e-18);
    }

    #[test]
    fn uniform_masses_spread_the_element_mass_over_every_node() {
        // Two tetrahedra on 6 nodes (node 5 in none): each node gets ρ(V₁ + V₂)/6.
        let (rho, v1, v2) = (1200.0, 2.5e-6, 1.5e-6);
        let m = uniform_masses(6, &[([0, 1, 2, 3], v1), ([1, 2, 3, 4], v2)], rho);
        let each = rho * (v1 + v2) / 6.0;
        assert!(
            m.iter().all(|&mn| (mn - each).abs() <= 1e-15 * each),
            "{m:?}"
        );
        assert!(MassKind::Uniform.is_diagonal() && MassKind::Lumped.is_diagonal());
        assert!(!MassKind::Consistent.is_diagonal());
    }
}
