//! The rule every rigid body's rotational inertia obeys: its principal moments (the
//! eigenvalues of the inertia about the centre of mass) satisfy the triangle inequality
//! I₁ + I₂ ≥ I₃ for every ordering. With Σ = ∫ρ r rᵀ dV the second moment of the mass about the
//! centre of mass (positive semi-definite), I = tr(Σ) 1 − Σ, so a principal moment is
//! Iₖ = σᵢ + σⱼ (the other two eigenvalues of Σ) and I₁ + I₂ − I₃ = 2σ₃ ≥ 0. A thin rod
//! (0, I, I) or a thin plate (I₁ + I₂ = I₃, the perpendicular-axis theorem) lies on the
//! boundary; a rod heavier about its own axis than across it, as
//! `[[1e-5, 0, 0], [0, 1e-6, 0], [0, 0, 1e-6]]`, has no distribution of mass. MuJoCo refuses such
//! inertias too ("inertia must satisfy A + B >= C").

use crate::math::Mat3;

/// The round-off allowed in the triangle inequality, relative to the trace: a thin rod or
/// plate built from a shape lands on the boundary up to a few ulps of its largest moment.
pub const TRIANGLE_TOLERANCE: f64 = 1e-12;

/// The principal moments of the symmetric rotational inertia `inertia` (kg·m²), ascending.
pub fn principal_moments(inertia: &Mat3) -> [f64; 3] {
    let e = inertia.symmetric_eigenvalues();
    let mut m = [e[0], e[1], e[2]];
    m.sort_by(f64::total_cmp);
    m
}

/// Whether the principal moments `m` (ascending, kg·m²) break the triangle inequality: the two
/// smaller sum to less than the largest by more than [`TRIANGLE_TOLERANCE`] of the trace.
pub fn breaks_triangle_inequality(m: [f64; 3]) -> bool {
    m[0] + m[1] < m[2] - TRIANGLE_TOLERANCE * (m[0] + m[1] + m[2]).abs()
}

/// The rule broken, for an error message: `its principal moments … kg·m² (the eigenvalues of
/// the inertia about the centre of mass) break the triangle inequality I₁ + I₂ ≥ I₃ (… + … <
/// …): no distribution of mass has them`.
pub fn triangle_message(m: [f64; 3]) -> String {
    format!(
        "its principal moments [{:.4e}, {:.4e}, {:.4e}] kg·m² (the eigenvalues of the inertia about the centre of mass) break the triangle inequality I₁ + I₂ ≥ I₃ ({:.4e} + {:.4e} < {:.4e}): no distribution of mass has them",
        m[0], m[1], m[2], m[0], m[1], m[2]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Vec3;

    #[test]
    fn rods_and_plates_lie_on_the_boundary_and_pass() {
        // A thin rod of mass m and length l along z: (m l²/12, m l²/12, 0).
        assert!(!breaks_triangle_inequality(principal_moments(
            &Mat3::from_diagonal(&Vec3::new(1.0 / 12.0, 1.0 / 12.0, 0.0))
        )));
        // A thin square plate in the xy plane: (a²/12, a²/12, a²/6) per unit mass, the
        // perpendicular-axis theorem, rotated off its axes (the sum is then rounded).
        let r = nalgebra::Rotation3::from_scaled_axis(Vec3::new(0.3, -0.7, 0.2)).into_inner();
        let plate = Mat3::from_diagonal(&Vec3::new(0.1 / 12.0, 0.1 / 12.0, 0.1 / 6.0));
        assert!(!breaks_triangle_inequality(principal_moments(
            &(r * plate * r.transpose())
        )));
    }

    #[test]
    fn a_rod_heavier_about_its_axis_than_across_it_breaks_the_rule() {
        let m = principal_moments(&Mat3::from_diagonal(&Vec3::new(1e-5, 1e-6, 1e-6)));
        assert_eq!(m, [1e-6, 1e-6, 1e-5]);
        assert!(breaks_triangle_inequality(m));
        // Just inside the rule by more than round-off: 1 + 1 ≥ 2 − 1e-9.
        assert!(!breaks_triangle_inequality([1.0, 1.0, 2.0 - 1e-9]));
        assert!(breaks_triangle_inequality([1.0, 1.0, 2.0 + 1e-9]));
    }
}
