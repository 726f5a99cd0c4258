//! The pose of a revolute joint in its parent's frame, `liMi = placement · R(axis, θ)`, formed
//! cheaply: cos and sin once, and about a coordinate axis only two columns of the placement's
//! rotation mix. Shared by both CRBAs.

use super::joint::{JointKind, axis_rotation};
use crate::math::{Mat3, Vec3};

/// Cosine and sine of a revolute joint's angle from its coordinates `q` (the angle, or the
/// `(cos, sin)` pair of an unbounded joint, normalised as in [`JointModel::transform`](super::JointModel::transform)).
#[inline(always)]
pub(super) fn revolute_cos_sin(kind: &JointKind, q: &[f64]) -> (f64, f64) {
    if let JointKind::RevoluteUnbounded { .. } = kind {
        let (c, s) = (q[0], q[1]);
        let n = (c * c + s * s).sqrt();
        (c / n, s / n)
    } else {
        let (s, c) = q[0].sin_cos();
        (c, s)
    }
}

/// Which coordinate axis `e_k` the unit `axis` is, if any.
#[inline(always)]
pub(super) fn coordinate_axis(axis: &Vec3) -> Option<usize> {
    match (axis.x, axis.y, axis.z) {
        (1.0, 0.0, 0.0) => Some(0),
        (0.0, 1.0, 0.0) => Some(1),
        (0.0, 0.0, 1.0) => Some(2),
        _ => None,
    }
}

/// `P · R(axis, θ)` for the rotation by the angle with cosine `c` and sine `s` about the unit
/// `axis`. About a coordinate axis `e_k` only two columns mix (`P e_k` is kept):
/// `P R e_b = c P e_b + s P e_d`, `P R e_d = c P e_d − s P e_b` with `(k, b, d)` cyclic —
/// the same floating-point values as the full product, whose other terms are exact zeros.
#[inline(always)]
pub(super) fn rotated_about(p: &Mat3, axis: &Vec3, k: Option<usize>, c: f64, s: f64) -> Mat3 {
    let Some(k) = k else {
        return p * axis_rotation(axis, c, s);
    };
    let (b, d) = ((k + 1) % 3, (k + 2) % 3);
    let (pb, pd) = (p.column(b), p.column(d));
    let (nb, nd) = (pb * c + pd * s, pd * c - pb * s);
    let pk = p.column(k).into_owned();
    // Built from the three columns at once: no stores into a copy of `p` that a wider load
    // would then have to read back.
    match k {
        0 => Mat3::from_columns(&[pk, nb, nd]),
        1 => Mat3::from_columns(&[nd, pk, nb]),
        _ => Mat3::from_columns(&[nb, nd, pk]),
    }
}

/// `(cos θ, sin θ)` of `rot = R_k(θ)`, a rotation about the coordinate axis `e_k`:
/// `R e_b = c e_b + s e_d` with `(k, b, d)` cyclic.
#[inline(always)]
pub(super) fn axis_cos_sin(rot: &Mat3, k: usize) -> (f64, f64) {
    match k {
        0 => (rot[(1, 1)], rot[(2, 1)]),
        1 => (rot[(2, 2)], rot[(0, 2)]),
        _ => (rot[(0, 0)], rot[(1, 0)]),
    }
}

/// `R_k(θ) v` for the rotation about the coordinate axis `e_k` with cosine `c` and sine `s`.
#[inline(always)]
pub(super) fn rotate_about_axis(k: usize, c: f64, s: f64, v: &Vec3) -> Vec3 {
    match k {
        0 => Vec3::new(v.x, c * v.y - s * v.z, s * v.y + c * v.z),
        1 => Vec3::new(s * v.z + c * v.x, v.y, c * v.z - s * v.x),
        _ => Vec3::new(c * v.x - s * v.y, s * v.x + c * v.y, v.z),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinate_axis_rotation_equals_the_full_product_bit_for_bit() {
        let p = crate::rigid::spatial::exp3(&Vec3::new(0.3, -0.7, 1.1));
        let (s, c) = 0.83f64.sin_cos();
        for axis in [Vec3::x(), Vec3::y(), Vec3::z(), Vec3::new(0.6, 0.0, 0.8)] {
            assert_eq!(
                rotated_about(&p, &axis, coordinate_axis(&axis), c, s),
                p * axis_rotation(&axis, c, s)
            );
        }
    }

    #[test]
    fn an_axis_rotation_is_read_back_and_applied_as_the_matrix() {
        let (s, c) = 0.83f64.sin_cos();
        let v = Vec3::new(0.3, -0.7, 1.1);
        for (k, axis) in [Vec3::x(), Vec3::y(), Vec3::z()].iter().enumerate() {
            let r = axis_rotation(axis, c, s);
            assert_eq!(axis_cos_sin(&r, k), (c, s));
            assert!((rotate_about_axis(k, c, s, &v) - r * v).amax() < 1e-15);
        }
    }
}
