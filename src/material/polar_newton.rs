//! The rotation of the polar decomposition F = R S by Newton's method on the rotation itself,
//! started from a nearby rotation: an element's R of the last step or Newton iteration, which
//! a step moves by little. What the co-rotational force and stiffness need, without the SVD.
//!
//! R maximises tr(RᵀF) over rotations (Wahba's problem, whose only local maximum is the
//! global one): at the maximum S = RᵀF is symmetric and A = tr(S) I − S is positive definite
//! (its eigenvalues are the sums σᵢ + σⱼ of the signed singular values, which also makes R
//! the rotation-variant SVD's U Vᵀ for an inverted element). Rotating R by R exp(\[δ\]×)
//! changes the skew part of RᵀF by −\[A δ\]×/2 to first order, so Newton's step is
//!
//! δ = A⁻¹ a,  a = (S′₃₂ − S′₂₃, S′₁₃ − S′₃₁, S′₂₁ − S′₁₂),  S′ = RᵀF,
//!
//! and R ← R · rot(δ), with rot(δ) the rotation of the unit quaternion along (1, δ/2) (the
//! Cayley transform: rational, exactly a rotation, and equal to exp(\[δ\]×) to second order, so
//! the convergence stays quadratic). R is kept as a unit quaternion, normalised at every
//! update, so that it cannot drift off the rotations over many steps.
//!
//! The same A gives the derivative of R: dR = R \[A⁻¹ a(dF)\]×, with a(dF) the vector a of
//! RᵀdF (`corotational_polar`).

use crate::math::{Mat3, Vec3};

/// Newton steps before giving up (the caller then uses the SVD). From the last step's R a
/// step needs two or three; from far away, more.
const MAX_ITERATIONS: usize = 8;
/// A Newton step of at most this many radians ends the iteration once applied: the next one
/// would be of order its square, below round-off.
const STEP_TOLERANCE: f64 = 1e-9;
/// A is accepted as positive definite when its smallest pivot is at least this fraction of
/// its trace: below, the polar factor is ill-conditioned (an element nearly flattened or
/// turned inside out, σ₂ + σ₃ → 0) and the caller uses the SVD instead.
const PIVOT_FLOOR: f64 = 1e-6;

/// A rotation kept between evaluations: a unit quaternion (w, x, y, z), or "none yet".
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WarmRotation(Option<[f64; 4]>);

impl WarmRotation {
    /// No rotation yet: the next evaluation starts cold (by SVD).
    pub const COLD: WarmRotation = WarmRotation(None);

    /// The rotation `r` (a proper rotation matrix), as a unit quaternion (Shepperd's method,
    /// through nalgebra).
    pub fn from_matrix(r: &Mat3) -> WarmRotation {
        let q = nalgebra::UnitQuaternion::from_matrix(r);
        WarmRotation(Some([q.w, q.i, q.j, q.k]))
    }

    /// Whether a rotation is kept.
    pub fn is_warm(&self) -> bool {
        self.0.is_some()
    }
}

/// The polar decomposition at F, with what the co-rotational law needs of it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Polar {
    /// The rotation R (det R = +1).
    pub r: Mat3,
    /// S = RᵀF, symmetrised (its skew part is round-off at convergence).
    pub s: Mat3,
    /// A⁻¹ = (tr(S) I − S)⁻¹ as Σₖ dₖ lₖ lₖᵀ (its LDLᵀ factorisation: `l` are the columns
    /// of the unit lower-triangular factor, `d` the positive pivots).
    pub l: [Vec3; 3],
    /// The pivots dₖ of A⁻¹ (see `l`).
    pub d: [f64; 3],
}

/// The rotation matrix of the unit quaternion `q` = (w, x, y, z).
#[inline]
fn matrix(q: &[f64; 4]) -> Mat3 {
    let [w, x, y, z] = *q;
    let (xx, yy, zz) = (x * x, y * y, z * z);
    let (xy, xz, yz) = (x * y, x * z, y * z);
    let (wx, wy, wz) = (w * x, w * y, w * z);
    Mat3::new(
        1.0 - 2.0 * (yy + zz),
        2.0 * (xy - wz),
        2.0 * (xz + wy),
        2.0 * (xy + wz),
        1.0 - 2.0 * (xx + zz),
        2.0 * (yz - wx),
        2.0 * (xz - wy),
        2.0 * (yz + wx),
        1.0 - 2.0 * (xx + yy),
    )
}

/// q ⊗ (1, δ/2), normalised: R(q) rot(δ).
#[inline]
fn rotated(q: &[f64; 4], delta: &Vec3) -> [f64; 4] {
    let [w, x, y, z] = *q;
    let (a, b, c) = (0.5 * delta.x, 0.5 * delta.y, 0.5 * delta.z);
    let p = [
        w - x * a - y * b - z * c,
        w * a + x + y * c - z * b,
        w * b - x * c + y + z * a,
        w * c + x * b - y * a + z,
    ];
    let inv = 1.0 / (p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]).sqrt();
    p.map(|v| v * inv)
}

/// The entries (a₀₀, a₁₁, a₂₂, a₀₁, a₀₂, a₁₂) of the symmetric A = tr(S) I − sym(S).
#[inline(always)]
fn generator_matrix(s: &Mat3) -> [f64; 6] {
    let t = s.trace();
    [
        t - s[(0, 0)],
        t - s[(1, 1)],
        t - s[(2, 2)],
        -0.5 * (s[(0, 1)] + s[(1, 0)]),
        -0.5 * (s[(0, 2)] + s[(2, 0)]),
        -0.5 * (s[(1, 2)] + s[(2, 1)]),
    ]
}

/// The adjugate of the symmetric A (entries as [`generator_matrix`]) as a symmetric matrix,
/// and det A; `None` unless A is positive definite by the margin [`PIVOT_FLOOR`] (its three
/// leading minors, compared without divisions).
#[inline(always)]
fn adjugate(a: &[f64; 6]) -> Option<(Mat3, f64)> {
    let [a00, a11, a22, a01, a02, a12] = *a;
    let floor = PIVOT_FLOOR * (a00 + a11 + a22).abs();
    let c00 = a11 * a22 - a12 * a12;
    let c01 = a02 * a12 - a01 * a22;
    let c02 = a01 * a12 - a02 * a11;
    let c11 = a00 * a22 - a02 * a02;
    let c12 = a01 * a02 - a00 * a12;
    let c22 = a00 * a11 - a01 * a01;
    let det = a00 * c00 + a01 * c01 + a02 * c02;
    // Pivots a₀₀, c₂₂/a₀₀ and det/c₂₂ of the LDLᵀ factorisation, each above the floor.
    let definite = a00 > floor && c22 > floor * a00 && det > floor * c22;
    definite.then(|| (Mat3::new(c00, c01, c02, c01, c11, c12, c02, c12, c22), det))
}

/// The LDLᵀ factors of A⁻¹ (see [`Polar::l`]) from the adjugate and determinant of A.
#[inline(always)]
fn inverse_factors(adjugate: &Mat3, det: f64) -> ([Vec3; 3], [f64; 3]) {
    let b = adjugate / det;
    let d0 = b[(0, 0)];
    let (l10, l20) = (b[(1, 0)] / d0, b[(2, 0)] / d0);
    let d1 = b[(1, 1)] - l10 * l10 * d0;
    let l21 = (b[(2, 1)] - l20 * l10 * d0) / d1;
    let d2 = b[(2, 2)] - l20 * l20 * d0 - l21 * l21 * d1;
    (
        [
            Vec3::new(1.0, l10, l20),
            Vec3::new(0.0, 1.0, l21),
            Vec3::new(0.0, 0.0, 1.0),
        ],
        [d0, d1, d2],
    )
}

/// (S′₃₂ − S′₂₃, S′₁₃ − S′₃₁, S′₂₁ − S′₁₂): twice the axial vector of the skew part of `m`.
#[inline(always)]
fn skew_axial(m: &Mat3) -> Vec3 {
    Vec3::new(
        m[(2, 1)] - m[(1, 2)],
        m[(0, 2)] - m[(2, 0)],
        m[(1, 0)] - m[(0, 1)],
    )
}

/// One Newton step from `q`: the next rotation and whether the step was within
/// [`STEP_TOLERANCE`], or `None` when A is not positive definite.
#[inline(always)]
fn newton_step(f: &Mat3, q: &[f64; 4]) -> Option<([f64; 4], bool)> {
    let s = matrix(q).tr_mul(f);
    let (adj, det) = adjugate(&generator_matrix(&s))?;
    let delta = adj * skew_axial(&s) * (1.0 / det);
    Some((
        rotated(q, &delta),
        delta.norm_squared() <= STEP_TOLERANCE * STEP_TOLERANCE,
    ))
}

/// The polar decomposition of `f` by Newton's method from the rotation `guess` (which must be
/// warm), and the rotation to start from next time; `None` when A leaves the positive definite
/// matrices by the margin of [`PIVOT_FLOOR`] or the iteration does not converge in
/// [`MAX_ITERATIONS`] steps: the caller then factors F by SVD.
///
/// (Stepping several elements side by side, as the SVD's lanes do, was measured no faster:
/// from the last step's R most elements need one or two steps.)
#[inline(always)]
pub(super) fn polar_from(f: &Mat3, guess: &WarmRotation) -> Option<(Polar, WarmRotation)> {
    let mut q = guess.0?;
    for _ in 0..MAX_ITERATIONS {
        let (next, small) = newton_step(f, &q)?;
        q = next;
        if small {
            let r = matrix(&q);
            let s = r.tr_mul(f);
            let s = (s + s.transpose()) * 0.5;
            let (adj, det) = adjugate(&generator_matrix(&s))?;
            let (l, d) = inverse_factors(&adj, det);
            return Some((Polar { r, s, l, d }, WarmRotation(Some(q))));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::svd3::Svd3;
    use super::super::testing::{Rng, rotation, sample_deformations};
    use super::*;

    /// The rotation-variant SVD's R = U Vᵀ and S = V Σ Vᵀ: a second method.
    fn by_svd(f: &Mat3) -> (Mat3, Mat3) {
        let svd = Svd3::new(f).unwrap();
        let r = svd.u * svd.v.transpose();
        let s = svd.v * Mat3::from_diagonal(&svd.sigma) * svd.v.transpose();
        (r, s)
    }

    #[test]
    fn converges_to_the_svds_rotation_from_nearby_rotations() {
        let mut rng = Rng::new(3);
        let mut fs = sample_deformations();
        // Inverted elements with σ₂ + σ₃ > 0: the rotation-variant SVD's R.
        fs.push(
            rotation(Vec3::new(0.3, -0.2, 0.9)) * Mat3::from_diagonal(&Vec3::new(1.2, 0.9, -0.5)),
        );
        for f in &fs {
            let (r, s) = by_svd(f);
            for angle in [0.0, 1e-3, 0.1, 0.6] {
                let axis = Vec3::new(rng.next(), rng.next(), rng.next()).normalize();
                let guess = WarmRotation::from_matrix(&(r * rotation(axis * angle)));
                let (polar, next) = polar_from(f, &guess).expect("converges");
                assert!((polar.r - r).norm() < 1e-13, "{f}, {angle}: R");
                assert!((polar.s - s).norm() < 1e-13 * f.norm(), "{f}, {angle}: S");
                assert!((matrix(&next.0.unwrap()) - r).norm() < 1e-13);
                // A⁻¹ = Σ dₖ lₖlₖᵀ inverts tr(S) I − S.
                let inverse = (0..3).fold(Mat3::zeros(), |acc, k| {
                    acc + polar.l[k] * polar.l[k].transpose() * polar.d[k]
                });
                let a = Mat3::identity() * s.trace() - s;
                assert!((inverse * a - Mat3::identity()).norm() < 1e-12, "{f}: A⁻¹");
            }
        }
    }

    #[test]
    fn refuses_ill_conditioned_and_far_starts_instead_of_a_wrong_rotation() {
        // Inverted with |σ₃| = σ₂: A is singular there, so the SVD must take it.
        let f = Mat3::from_diagonal(&Vec3::new(1.2, 0.7, -0.7));
        assert!(polar_from(&f, &WarmRotation::from_matrix(&Mat3::identity())).is_none());
        // No rotation kept: nothing to start from.
        assert!(polar_from(&Mat3::identity(), &WarmRotation::COLD).is_none());
        // Started half a turn away, Newton either finds the SVD's rotation or gives up.
        let mut rng = Rng::new(11);
        for _ in 0..200 {
            let f = rotation(Vec3::new(rng.next(), rng.next(), rng.next()) * 3.0)
                * Mat3::from_diagonal(&Vec3::new(1.3, 0.9, 0.6));
            let guess = WarmRotation::from_matrix(&rotation(
                Vec3::new(rng.next(), rng.next(), rng.next()) * 3.0,
            ));
            if let Some((polar, _)) = polar_from(&f, &guess) {
                assert!((polar.r - by_svd(&f).0).norm() < 1e-13, "{f}");
            }
        }
    }
}
