//! The Coulomb friction cone of one contact, its dual, the Euclidean projections onto both,
//! and the De Saxcé correction (paper 004 §II-B, Eq. 2).
//!
//! Frame: the contact frame, components `[t₁, t₂, n]` (z = normal, pointing from the obstacle
//! into the body, so a positive normal impulse pushes the body out). A force λ (N) and a
//! contact velocity σ (m/s) are both expressed in this frame.
//!
//! ```text
//! K_μ  = { λ : ‖λ_T‖ ≤ μ λ_N }                  (admissible contact forces)
//! K_μ* = { σ : μ ‖σ_T‖ ≤ σ_N }  = K_{1/μ}        (its dual cone; a half-space when μ = 0)
//! Γ_μ(σ) = [0, 0, μ ‖σ_T‖]                        (De Saxcé correction)
//! ```
//!
//! A bilateral constraint (an attachment, `scene::model::soft_rigid`) is the "cone" K = ℝ³: any
//! force, no relative velocity (K* = {0}), no correction.
//!
//! With the correction, `σ + Γ_μ(σ) ∈ K_μ*` is exactly Signorini's `σ_N ≥ 0`, and
//! `⟨λ, σ + Γ_μ(σ)⟩ = 0` with `λ ∈ K_μ` is Signorini complementarity plus maximal dissipation.

use crate::error::{Error, Result};
use crate::math::Vec3;

/// The Coulomb cone `K_μ = {λ : ‖λ_T‖ ≤ μ λ_N}` of friction coefficient `μ ≥ 0`
/// (dimensionless), z = normal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrictionCone {
    mu: f64,
    bilateral: bool,
}

/// Where a projection onto a cone lands: which equations hold at a solution there (paper 002
/// §III-B's modes, seen from the force).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConeFace {
    /// The apex, λ = 0: the contact opens (breaking).
    Apex,
    /// Inside the cone (or the whole of a bilateral "cone"): σ = 0 (sticking).
    Interior,
    /// On the boundary, λ_T = μ λ_N τ with ‖τ‖ = 1 (sliding; for μ = 0 the ray λ_T = 0).
    Boundary,
}

/// `‖v_T‖ = √(v_x² + v_y²)`. Forces (N) and velocities (m/s) are never large enough for the
/// squares to overflow, so this skips `hypot`'s guard, which cost several times as much in the
/// ADMM loop.
#[inline]
pub(crate) fn tangential_norm(v: &Vec3) -> f64 {
    (v.x * v.x + v.y * v.y).sqrt()
}

/// Projection of `v = [t, n]` onto the closed convex cone `{a ‖t‖ ≤ b n}` (`a, b ≥ 0`, not both
/// zero), and where it lands: inside → itself; inside the polar cone `{b ‖t‖ ≤ −a n}` → 0;
/// otherwise onto the boundary ray of direction `(b t/‖t‖, a)`.
#[inline]
fn project_onto(v: &Vec3, a: f64, b: f64) -> (Vec3, ConeFace) {
    let t_norm = tangential_norm(v);
    let n = v.z;
    // (n ≥ 0 matters when b = 0: the frictionless cone is the ray {t = 0, n ≥ 0}, not the
    // line t = 0.)
    if a * t_norm <= b * n && n >= 0.0 {
        // The frictionless ray has no interior: a point on it is on its boundary.
        let face = if b > 0.0 {
            ConeFace::Interior
        } else {
            ConeFace::Boundary
        };
        return (*v, face);
    }
    if b * t_norm <= -a * n {
        return (Vec3::zeros(), ConeFace::Apex);
    }
    // Here t_norm > 0 (otherwise one of the two cases above holds).
    let s = (b * t_norm + a * n) / (a * a + b * b);
    let k = s * b / t_norm;
    (Vec3::new(k * v.x, k * v.y, s * a), ConeFace::Boundary)
}

impl FrictionCone {
    /// The cone of friction coefficient `mu`. Errors if `mu` is negative or not finite.
    pub fn new(mu: f64) -> Result<FrictionCone> {
        if !(mu >= 0.0) || !mu.is_finite() {
            return Err(Error::invalid(
                "friction coefficient",
                format!("{mu} is not a finite non-negative number"),
            ));
        }
        Ok(FrictionCone {
            mu,
            bilateral: false,
        })
    }

    /// The bilateral "cone" K = ℝ³ of an attachment: every force is admissible and the
    /// relative velocity must vanish (K* = {0}); [`Self::mu`] is 0.
    pub fn bilateral() -> FrictionCone {
        FrictionCone {
            mu: 0.0,
            bilateral: true,
        }
    }

    /// Whether this is the bilateral K = ℝ³ ([`Self::bilateral`]).
    #[inline]
    pub fn is_bilateral(&self) -> bool {
        self.bilateral
    }

    /// The friction coefficient μ.
    #[inline]
    pub fn mu(&self) -> f64 {
        self.mu
    }

    /// Whether `lambda` lies in `K_μ` up to `tol` (N): `‖λ_T‖ ≤ μ λ_N + tol`.
    #[inline]
    pub fn contains(&self, lambda: &Vec3, tol: f64) -> bool {
        self.bilateral || tangential_norm(lambda) <= self.mu * lambda.z + tol
    }

    /// Euclidean projection onto `K_μ`.
    #[inline]
    pub fn project(&self, lambda: &Vec3) -> Vec3 {
        self.project_with_face(lambda).0
    }

    /// Euclidean projection onto `K_μ` and the face of the cone it lands on (a bilateral
    /// cone's is its interior).
    #[inline]
    pub(crate) fn project_with_face(&self, lambda: &Vec3) -> (Vec3, ConeFace) {
        if self.bilateral {
            return (*lambda, ConeFace::Interior);
        }
        project_onto(lambda, 1.0, self.mu)
    }

    /// Euclidean projection onto the dual cone `K_μ* = {σ : μ ‖σ_T‖ ≤ σ_N}` (the half-space
    /// `σ_N ≥ 0` when μ = 0).
    #[inline]
    pub fn project_dual(&self, sigma: &Vec3) -> Vec3 {
        if self.bilateral {
            return Vec3::zeros();
        }
        project_onto(sigma, self.mu, 1.0).0
    }

    /// The De Saxcé correction `Γ_μ(σ) = [0, 0, μ ‖σ_T‖]` (paper 004 Eq. 2).
    #[inline]
    pub fn de_saxce(&self, sigma: &Vec3) -> Vec3 {
        Vec3::new(0.0, 0.0, self.mu * tangential_norm(sigma))
    }

    /// `σ + Γ_μ(σ)`, the velocity the NCP asks to lie in `K_μ*`.
    #[inline]
    pub fn corrected(&self, sigma: &Vec3) -> Vec3 {
        sigma + self.de_saxce(sigma)
    }

    /// Distance (N) from `lambda` to `K_μ`: the primal feasibility of one contact.
    #[inline]
    pub fn distance(&self, lambda: &Vec3) -> f64 {
        (lambda - self.project(lambda)).norm()
    }

    /// Distance (m/s) from `sigma` to `K_μ*`.
    #[inline]
    pub fn distance_dual(&self, sigma: &Vec3) -> f64 {
        (sigma - self.project_dual(sigma)).norm()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shared test generator, numbers in [-1, 1).
    struct Rng(crate::math::SplitMix64);
    impl Rng {
        fn next(&mut self) -> f64 {
            self.0.uniform()
        }
        fn vec(&mut self) -> Vec3 {
            Vec3::new(self.next(), self.next(), self.next())
        }
    }

    #[test]
    fn bad_friction_is_an_error() {
        assert!(FrictionCone::new(-0.1).is_err());
        assert!(FrictionCone::new(f64::NAN).is_err());
        assert!(FrictionCone::new(f64::INFINITY).is_err());
        assert!(FrictionCone::new(0.0).is_ok());
    }

    /// Moreau's decomposition: v = Π_K(v) − Π_{K*}(−v), with the two parts orthogonal; this
    /// characterises both projections independently of their formulas.
    #[test]
    fn projections_satisfy_moreau_decomposition() {
        let mut rng = Rng(crate::math::SplitMix64::new(7));
        for mu in [0.0, 0.3, 1.0, 2.5] {
            let cone = FrictionCone::new(mu).unwrap();
            for _ in 0..1000 {
                let v = 3.0 * rng.vec();
                let p = cone.project(&v);
                let q = cone.project_dual(&(-v));
                assert!((p - q - v).norm() < 1e-12, "mu {mu}: {v:?}");
                assert!(p.dot(&q).abs() < 1e-12);
                assert!(cone.contains(&p, 1e-12));
                assert!(mu * q.x.hypot(q.y) <= q.z + 1e-12);
                // A projection is idempotent.
                assert!((cone.project(&p) - p).norm() < 1e-12);
            }
        }
    }

    /// The face a projection reports is where the projected point lies, by the cone's own
    /// definition: the apex (0), the interior (the point itself, strictly inside) or the
    /// boundary (‖λ_T‖ = μ λ_N); the frictionless ray has no interior, a bilateral cone is all
    /// interior.
    #[test]
    fn the_face_of_a_projection_is_where_the_point_lands() {
        let mut rng = Rng(crate::math::SplitMix64::new(5));
        let mut seen = [0; 3];
        for mu in [0.0, 0.3, 1.0, 2.5] {
            let cone = FrictionCone::new(mu).unwrap();
            for _ in 0..1000 {
                let v = 3.0 * rng.vec();
                let (p, face) = cone.project_with_face(&v);
                assert_eq!(p, cone.project(&v));
                let t = p.x.hypot(p.y);
                match face {
                    ConeFace::Apex => {
                        seen[0] += 1;
                        assert_eq!(p, Vec3::zeros());
                    }
                    ConeFace::Interior => {
                        seen[1] += 1;
                        assert!(mu > 0.0 && p == v && t <= mu * p.z, "{mu}: {v:?}");
                    }
                    ConeFace::Boundary => {
                        seen[2] += 1;
                        assert!(p.z > 0.0 && (t - mu * p.z).abs() <= 1e-12, "{mu}: {v:?}");
                    }
                }
            }
        }
        assert!(seen.iter().all(|&k| k > 100), "{seen:?}");
        let v = Vec3::new(0.3, -0.4, -2.0);
        assert_eq!(
            FrictionCone::bilateral().project_with_face(&v),
            (v, ConeFace::Interior)
        );
    }

    #[test]
    fn projection_is_the_closest_point_among_random_cone_points() {
        let mut rng = Rng(crate::math::SplitMix64::new(11));
        let cone = FrictionCone::new(0.7).unwrap();
        for _ in 0..200 {
            let v = rng.vec();
            let d = (v - cone.project(&v)).norm();
            for _ in 0..50 {
                let c = cone.project(&(2.0 * rng.vec()));
                assert!((v - c).norm() >= d - 1e-12);
            }
        }
    }

    #[test]
    fn the_frictionless_cone_is_a_ray_and_its_dual_a_half_space() {
        let cone = FrictionCone::new(0.0).unwrap();
        // A pull (negative normal force) is not admissible without friction either.
        assert_eq!(cone.project(&Vec3::new(0.0, 0.0, -2.0)), Vec3::zeros());
        assert_eq!(cone.project(&Vec3::new(0.3, -0.4, -2.0)), Vec3::zeros());
        assert_eq!(
            cone.project(&Vec3::new(0.3, -0.4, 2.0)),
            Vec3::new(0.0, 0.0, 2.0)
        );
        assert_eq!(
            cone.project(&Vec3::new(0.0, 0.0, 2.0)),
            Vec3::new(0.0, 0.0, 2.0)
        );
        assert_eq!(cone.distance(&Vec3::new(0.0, 0.0, -2.0)), 2.0);
        assert_eq!(
            cone.project_dual(&Vec3::new(0.3, -0.4, -2.0)),
            Vec3::new(0.3, -0.4, 0.0)
        );
        assert_eq!(
            cone.project_dual(&Vec3::new(0.3, -0.4, 2.0)),
            Vec3::new(0.3, -0.4, 2.0)
        );
    }

    #[test]
    fn the_bilateral_cone_is_everything_and_its_dual_zero() {
        let cone = FrictionCone::bilateral();
        let v = Vec3::new(0.3, -0.4, -2.0);
        assert_eq!(cone.project(&v), v);
        assert_eq!(cone.project_dual(&v), Vec3::zeros());
        assert_eq!(cone.de_saxce(&v), Vec3::zeros());
        assert_eq!(cone.distance_dual(&v), v.norm());
    }

    #[test]
    fn de_saxce_turns_dual_feasibility_into_signorini() {
        let mut rng = Rng(crate::math::SplitMix64::new(3));
        let cone = FrictionCone::new(0.5).unwrap();
        for _ in 0..1000 {
            let s = rng.vec();
            let inside = cone.distance_dual(&cone.corrected(&s)) < 1e-14;
            assert_eq!(inside, s.z >= 0.0, "{s:?}");
        }
        assert_eq!(
            cone.de_saxce(&Vec3::new(3.0, 4.0, -1.0)),
            Vec3::new(0.0, 0.0, 2.5)
        );
    }
}
