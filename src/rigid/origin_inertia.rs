//! A spatial inertia about the origin of its frame, the cheap form for composite inertias
//! (CRBA): sums of bodies are plain sums of its ten numbers.

use super::mat3;
use super::spatial::{Inertia, Se3, Vec6, ang, lin, spatial};
use crate::math::{Mat3, Vec3};

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

    /// The same bodies expressed about the origin of frame A, `self` being about the origin of
    /// frame B and `m = aMb = (R, p)`: rotated, `R I_o Rᵀ` and `g = R h`, then shifted by p
    /// ([`translated`](Self::translated)); Featherstone Eq. 2.66 in origin form.
    #[inline(always)]
    pub fn act(&self, m: &Se3) -> OriginInertia {
        let r = &m.rot;
        let [xx, xy, xz, yy, yz, zz] = self.i_o;
        let t = mat3::mul(r, &Mat3::new(xx, xy, xz, xy, yy, yz, xz, yz, zz));
        let e = |a: usize, b: usize| {
            t[(a, 0)] * r[(b, 0)] + t[(a, 1)] * r[(b, 1)] + t[(a, 2)] * r[(b, 2)]
        };
        OriginInertia {
            mass: self.mass,
            h: mat3::mul_vec(r, &self.h),
            i_o: [e(0, 0), e(0, 1), e(0, 2), e(1, 1), e(1, 2), e(2, 2)],
        }
        .translated(&m.trans)
    }

    /// [`act`](Self::act) for `m = (R_k(θ), p)`, `R_k` the rotation about the coordinate axis
    /// `e_k` with `cos θ = c`, `sin θ = s`: only the `(b, d)` block of `I_o` mixes, `(k, b, d)`
    /// cyclic (`I'_bb = c² I_bb − 2cs I_bd + s² I_dd`, `I'_bd = cs (I_bb − I_dd) + (c² − s²) I_bd`,
    /// `I'_bk = c I_bk − s I_dk`, …).
    #[inline(always)]
    pub fn act_about_axis(&self, k: usize, c: f64, s: f64, p: &Vec3) -> OriginInertia {
        // One copy per axis: the indices below are then constants.
        match k {
            0 => self.act_about::<0>(c, s, p),
            1 => self.act_about::<1>(c, s, p),
            _ => self.act_about::<2>(c, s, p),
        }
    }

    #[inline(always)]
    fn act_about<const K: usize>(&self, c: f64, s: f64, p: &Vec3) -> OriginInertia {
        let (k, b, d) = (K, (K + 1) % 3, (K + 2) % 3);
        let i = &self.i_o;
        let (ibb, idd, ibd) = (i[sym(b, b)], i[sym(d, d)], i[sym(b, d)]);
        let (ibk, idk) = (i[sym(b, k)], i[sym(d, k)]);
        let (cc, ss, cs) = (c * c, s * s, c * s);
        let mut i_o = [0.0; 6];
        i_o[sym(b, b)] = cc * ibb - 2.0 * cs * ibd + ss * idd;
        i_o[sym(d, d)] = ss * ibb + 2.0 * cs * ibd + cc * idd;
        i_o[sym(b, d)] = cs * (ibb - idd) + (cc - ss) * ibd;
        i_o[sym(b, k)] = c * ibk - s * idk;
        i_o[sym(d, k)] = s * ibk + c * idk;
        i_o[sym(k, k)] = i[sym(k, k)];
        let mut h = self.h;
        let (hb, hd) = (h[b], h[d]);
        h[b] = c * hb - s * hd;
        h[d] = s * hb + c * hd;
        OriginInertia {
            mass: self.mass,
            h,
            i_o,
        }
        .translated(p)
    }

    /// The same bodies about the point `−p` of their frame, i.e. expressed in a frame A whose
    /// axes are this frame's and in which this origin sits at p: with `g = h`,
    /// `h_A = g + m p`, `I_A = I_o + (p·(g + h_A)) I − h_A pᵀ − p gᵀ` (parallel-axis theorem).
    #[inline(always)]
    pub fn translated(&self, p: &Vec3) -> OriginInertia {
        let g = self.h;
        let h = g + p * self.mass;
        let d = p.dot(&(g + h));
        let e = |a: usize, b: usize| self.i_o[sym(a, b)] - (h[a] * p[b] + p[a] * g[b]);
        OriginInertia {
            mass: self.mass,
            h,
            i_o: [
                e(0, 0) + d,
                e(0, 1),
                e(0, 2),
                e(1, 1) + d,
                e(1, 2),
                e(2, 2) + d,
            ],
        }
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

/// Where entry (a, b) of a symmetric 3 × 3 matrix sits in `[xx, xy, xz, yy, yz, zz]`.
#[inline(always)]
const fn sym(a: usize, b: usize) -> usize {
    const AT: [[usize; 3]; 3] = [[0, 1, 2], [1, 3, 4], [2, 4, 5]];
    AT[a][b]
}

impl OriginInertia {
    /// `m`, `h` and the six entries of `I_o = E + (c·h) I`, from the entries `e(a, b)` of the
    /// rotated centroidal inertia minus `h cᵀ` (symmetric) and `cc = c·h`.
    #[inline(always)]
    fn shifted(mass: f64, h: Vec3, cc: f64, e: impl Fn(usize, usize) -> f64) -> OriginInertia {
        OriginInertia {
            mass,
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

impl Inertia {
    /// This body about the origin of its own frame: `h = m c`,
    /// `I_o = I_c + m (|c|² I − c cᵀ)`.
    #[inline(always)]
    pub fn origin_form(&self) -> OriginInertia {
        let c = self.com;
        let h = c * self.mass;
        let i = &self.inertia_com;
        let cc = c.dot(&h);
        let e = |a: usize, b: usize| i[(a, b)] - h[a] * c[b];
        OriginInertia::shifted(self.mass, h, cc, e)
    }

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
        OriginInertia::shifted(self.mass, h, cc, e)
    }
}
