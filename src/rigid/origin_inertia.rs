//! A spatial inertia about the origin of its frame, the cheap form for composite inertias
//! (CRBA): sums of bodies are plain sums of its ten numbers.

use super::mat3;
use super::spatial::{Inertia, Se3, Vec6, ang, lin, spatial};
use crate::math::Vec3;

/// A spatial inertia stored about the origin of its frame, `Y = [[m I, −[h]×], [[h]×, I_o]]`
/// with the first moment `h = m c` (kg·m) and the rotational inertia about the origin
/// `I_o = I_c − m [c]×²` (kg·m²), symmetric, stored by its upper triangle. Sums of bodies are
/// plain sums of the ten numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OriginInertia {
    /// Mass (kg).
    pub mass: f64,
    /// First moment of mass `m c` (kg·m).
    pub h: Vec3,
    /// Rotational inertia about the frame origin (kg·m²): `[xx, xy, xz, yy, yz, zz]`.
    pub i_o: [f64; 6],
}

impl OriginInertia {
    /// The inertia of nothing.
    pub fn zero() -> OriginInertia {
        OriginInertia {
            mass: 0.0,
            h: Vec3::zeros(),
            i_o: [0.0; 6],
        }
    }

    /// Adds another body expressed in the same frame.
    #[inline(always)]
    pub fn add_assign(&mut self, other: &OriginInertia) {
        self.mass += other.mass;
        self.h += other.h;
        for (a, b) in self.i_o.iter_mut().zip(&other.i_o) {
            *a += b;
        }
    }

    /// `I_o ω` (N·m·s for ω in rad/s).
    #[inline(always)]
    pub fn rot_mul(&self, w: &Vec3) -> Vec3 {
        let [xx, xy, xz, yy, yz, zz] = self.i_o;
        Vec3::new(
            xx * w.x + xy * w.y + xz * w.z,
            xy * w.x + yy * w.y + yz * w.z,
            xz * w.x + yz * w.y + zz * w.z,
        )
    }

    /// The momentum `Y m` for the twist `m`: `[m v − h × ω; h × v + I_o ω]`.
    #[inline(always)]
    pub fn mul_motion(&self, m: &Vec6) -> Vec6 {
        let (v, w) = (lin(m), ang(m));
        spatial(
            v * self.mass - self.h.cross(&w),
            self.h.cross(&v) + self.rot_mul(&w),
        )
    }
}

impl Inertia {
    /// This body, held in frame B, expressed about the origin of frame A (`m = aMb`).
    #[inline(always)]
    pub fn transformed_origin(&self, m: &Se3) -> OriginInertia {
        let c = mat3::mul_vec(&m.rot, &self.com) + m.trans;
        let h = c * self.mass;
        // I_o = R I_c Rᵀ + m (|c|² I − c cᵀ), symmetric: six entries.
        let t = mat3::mul(&m.rot, &self.inertia_com);
        let r = &m.rot;
        let e = |a: usize, b: usize| {
            t[(a, 0)] * r[(b, 0)] + t[(a, 1)] * r[(b, 1)] + t[(a, 2)] * r[(b, 2)] - h[a] * c[b]
        };
        let cc = c.dot(&h);
        OriginInertia {
            mass: self.mass,
            h,
            i_o: [
                e(0, 0) + cc,
                e(0, 1),
                e(0, 2),
                e(1, 1) + cc,
                e(1, 2),
                e(2, 2) + cc,
            ],
        }
    }
}
