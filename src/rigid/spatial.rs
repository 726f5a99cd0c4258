//! Spatial algebra (Featherstone, "Rigid Body Dynamics Algorithms", ch. 2; Pinocchio's
//! conventions): motion and force 6-vectors, rigid transforms SE(3) and their actions, spatial
//! cross products, rigid-body inertias, and the exponential / logarithm maps of SO(3) and SE(3).
//!
//! Ordering of every 6-vector is **linear first, angular second**, as in Pinocchio:
//! a motion (twist) is `[v; ω]` (m/s, rad/s), a force (wrench) is `[f; n]` (N, N·m).

use super::mat3;
use crate::math::{Mat3, Vec3};

/// A spatial 6-vector: a motion `[v; ω]` or a force `[f; n]` (linear part first).
pub type Vec6 = nalgebra::Vector6<f64>;
/// A 6×6 matrix acting on spatial vectors (inertias, articulated inertias, cross-product maps).
pub type Mat6 = nalgebra::Matrix6<f64>;

/// Linear part (entries 0..3) of a spatial vector.
#[inline(always)]
pub fn lin(m: &Vec6) -> Vec3 {
    Vec3::new(m[0], m[1], m[2])
}

/// Angular part (entries 3..6) of a spatial vector.
#[inline(always)]
pub fn ang(m: &Vec6) -> Vec3 {
    Vec3::new(m[3], m[4], m[5])
}

/// The spatial vector `[l; a]`.
#[inline(always)]
pub fn spatial(l: Vec3, a: Vec3) -> Vec6 {
    Vec6::new(l.x, l.y, l.z, a.x, a.y, a.z)
}

/// Motion cross product `a × b` of two twists (Featherstone Eq. 2.31):
/// `[ω_a × v_b + v_a × ω_b; ω_a × ω_b]`.
#[inline(always)]
pub fn cross_motion(a: &Vec6, b: &Vec6) -> Vec6 {
    let (va, wa, vb, wb) = (lin(a), ang(a), lin(b), ang(b));
    spatial(wa.cross(&vb) + va.cross(&wb), wa.cross(&wb))
}

/// Force cross product `m ×* f` of a twist with a wrench (Featherstone Eq. 2.32):
/// `[ω × f; ω × n + v × f]`.
#[inline(always)]
pub fn cross_force(m: &Vec6, f: &Vec6) -> Vec6 {
    let (v, w, fl, n) = (lin(m), ang(m), lin(f), ang(f));
    spatial(w.cross(&fl), w.cross(&n) + v.cross(&fl))
}

/// Skew-symmetric matrix `[a]×` with `[a]× b = a × b`.
#[inline(always)]
pub fn skew(a: &Vec3) -> Mat3 {
    Mat3::new(0.0, -a.z, a.y, a.z, 0.0, -a.x, -a.y, a.x, 0.0)
}

/// The 6×6 matrix of `m × ·` (motion cross product with the twist `m`).
pub fn motion_cross_matrix(m: &Vec6) -> Mat6 {
    let (sv, sw) = (skew(&lin(m)), skew(&ang(m)));
    let mut x = Mat6::zeros();
    x.fixed_view_mut::<3, 3>(0, 0).copy_from(&sw);
    x.fixed_view_mut::<3, 3>(0, 3).copy_from(&sv);
    x.fixed_view_mut::<3, 3>(3, 3).copy_from(&sw);
    x
}

/// The 6×6 matrix of `δv ↦ δv ×* h` for a fixed wrench `h` (Pinocchio's
/// `addForceCrossMatrix` with the opposite sign): `[[0, −[f]×], [−[f]×, −[n]×]]`.
pub fn force_cross_matrix_of_wrench(h: &Vec6) -> Mat6 {
    let (sf, sn) = (skew(&lin(h)), skew(&ang(h)));
    let mut x = Mat6::zeros();
    x.fixed_view_mut::<3, 3>(0, 3).copy_from(&(-sf));
    x.fixed_view_mut::<3, 3>(3, 0).copy_from(&(-sf));
    x.fixed_view_mut::<3, 3>(3, 3).copy_from(&(-sn));
    x
}

/// A rigid transform `(R, p)` of SE(3): maps coordinates in frame B to frame A,
/// `x_A = R x_B + p` (`aMb` in Pinocchio's naming). Units: m.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Se3 {
    /// Rotation (orthonormal, det +1).
    pub rot: Mat3,
    /// Translation (m): the origin of B expressed in A.
    pub trans: Vec3,
}

impl Default for Se3 {
    fn default() -> Self {
        Self::identity()
    }
}

impl Se3 {
    /// The identity transform.
    pub fn identity() -> Self {
        Se3 {
            rot: Mat3::identity(),
            trans: Vec3::zeros(),
        }
    }

    /// The transform with rotation `rot` and translation `trans`.
    pub fn new(rot: Mat3, trans: Vec3) -> Self {
        Se3 { rot, trans }
    }

    /// A pure translation.
    pub fn from_translation(trans: Vec3) -> Self {
        Se3 {
            rot: Mat3::identity(),
            trans,
        }
    }

    /// URDF `<origin xyz rpy>`: translation `xyz`, rotation `Rz(yaw) Ry(pitch) Rx(roll)`.
    pub fn from_xyz_rpy(xyz: Vec3, rpy: Vec3) -> Self {
        let r = nalgebra::Rotation3::from_euler_angles(rpy.x, rpy.y, rpy.z);
        Se3 {
            rot: *r.matrix(),
            trans: xyz,
        }
    }

    /// Composition `self * other` (`aMb * bMc = aMc`).
    #[inline(always)]
    pub fn mul(&self, other: &Se3) -> Se3 {
        Se3 {
            rot: self.rot * other.rot,
            trans: self.rot * other.trans + self.trans,
        }
    }

    /// The inverse transform (`bMa` from `aMb`).
    #[inline(always)]
    pub fn inverse(&self) -> Se3 {
        let rt = self.rot.transpose();
        Se3 {
            rot: rt,
            trans: -(rt * self.trans),
        }
    }

    /// `self⁻¹ * other` without forming the inverse.
    #[inline(always)]
    pub fn inv_mul(&self, other: &Se3) -> Se3 {
        let rt = self.rot.transpose();
        Se3 {
            rot: rt * other.rot,
            trans: rt * (other.trans - self.trans),
        }
    }

    /// A point of frame B expressed in frame A.
    #[inline(always)]
    pub fn act_point(&self, x: &Vec3) -> Vec3 {
        self.rot * x + self.trans
    }

    /// Twist of frame B coordinates → frame A (`aXb m`): `[R v + p × R ω; R ω]`.
    #[inline(always)]
    pub fn act_motion(&self, m: &Vec6) -> Vec6 {
        let w = self.rot * ang(m);
        spatial(self.rot * lin(m) + self.trans.cross(&w), w)
    }

    /// Twist of frame A coordinates → frame B (`bXa m`): `[Rᵀ(v − p × ω); Rᵀ ω]`.
    #[inline(always)]
    pub fn act_inv_motion(&self, m: &Vec6) -> Vec6 {
        let (v, w) = (lin(m), ang(m));
        let rt = self.rot.transpose();
        spatial(rt * (v - self.trans.cross(&w)), rt * w)
    }

    /// Wrench of frame B coordinates → frame A (`aX*b f`): `[R f; R n + p × R f]`.
    #[inline(always)]
    pub fn act_force(&self, f: &Vec6) -> Vec6 {
        let fl = self.rot * lin(f);
        spatial(fl, self.rot * ang(f) + self.trans.cross(&fl))
    }

    /// Wrench of frame A coordinates → frame B: `[Rᵀ f; Rᵀ(n − p × f)]`.
    #[inline(always)]
    pub fn act_inv_force(&self, f: &Vec6) -> Vec6 {
        let (fl, n) = (lin(f), ang(f));
        spatial(
            mat3::tr_mul_vec(&self.rot, &fl),
            mat3::tr_mul_vec(&self.rot, &(n - self.trans.cross(&fl))),
        )
    }

    /// The exponential of the twist `ν = [v; ω]` (a unit-time screw motion), SE(3) `exp6`.
    pub fn exp6(nu: &Vec6) -> Se3 {
        let (v, w) = (lin(nu), ang(nu));
        Se3 {
            rot: exp3(&w),
            trans: left_jacobian_so3(&w) * v,
        }
    }

    /// The logarithm of the transform: the twist `ν` with `exp6(ν) = self` (rotation angle < π).
    pub fn log6(&self) -> Vec6 {
        let w = log3(&self.rot);
        spatial(left_jacobian_so3_inverse(&w) * self.trans, w)
    }
}

/// Rodrigues' formula: the rotation `exp([ω]×)` by the angle `|ω|` about `ω/|ω|`.
pub fn exp3(w: &Vec3) -> Mat3 {
    let t2 = w.norm_squared();
    let t = t2.sqrt();
    let (a, b) = if t < 1e-4 {
        (
            1.0 - t2 / 6.0 + t2 * t2 / 120.0,
            0.5 - t2 / 24.0 + t2 * t2 / 720.0,
        )
    } else {
        (t.sin() / t, (1.0 - t.cos()) / t2)
    };
    let k = skew(w);
    Mat3::identity() + k * a + k * k * b
}

/// The logarithm of a rotation: `ω` with `exp3(ω) = r`, `|ω| ∈ [0, π]`.
pub fn log3(r: &Mat3) -> Vec3 {
    let rot = nalgebra::Rotation3::from_matrix_unchecked(*r);
    nalgebra::UnitQuaternion::from_rotation_matrix(&rot).scaled_axis()
}

/// The left Jacobian of SO(3), `V(ω) = I + (1 − cos θ)/θ² [ω]× + (θ − sin θ)/θ³ [ω]×²`:
/// the translation part of `exp6` is `V(ω) v`.
pub fn left_jacobian_so3(w: &Vec3) -> Mat3 {
    let t2 = w.norm_squared();
    let t = t2.sqrt();
    let (b, c) = if t < 1e-4 {
        (0.5 - t2 / 24.0, 1.0 / 6.0 - t2 / 120.0)
    } else {
        ((1.0 - t.cos()) / t2, (t - t.sin()) / (t2 * t))
    };
    let k = skew(w);
    Mat3::identity() + k * b + k * k * c
}

/// The inverse of [`left_jacobian_so3`]:
/// `V⁻¹(ω) = I − ½[ω]× + (1/θ²)(1 − θ sin θ / (2(1 − cos θ))) [ω]×²`.
pub fn left_jacobian_so3_inverse(w: &Vec3) -> Mat3 {
    let t2 = w.norm_squared();
    let t = t2.sqrt();
    let c = if t < 1e-4 {
        1.0 / 12.0 + t2 / 720.0
    } else {
        (1.0 - t * t.sin() / (2.0 * (1.0 - t.cos()))) / t2
    };
    let k = skew(w);
    Mat3::identity() - k * 0.5 + k * k * c
}

/// A rigid body's inertia: mass (kg), centre of mass `com` (m) and rotational inertia about
/// the centre of mass `inertia_com` (kg·m²), all expressed in the frame that holds the body.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Inertia {
    /// Mass (kg).
    pub mass: f64,
    /// Centre of mass (m) in the holding frame.
    pub com: Vec3,
    /// Rotational inertia about the centre of mass (kg·m²), in the holding frame's axes.
    pub inertia_com: Mat3,
}

impl Inertia {
    /// The inertia of nothing (zero mass).
    pub fn zero() -> Self {
        Inertia {
            mass: 0.0,
            com: Vec3::zeros(),
            inertia_com: Mat3::zeros(),
        }
    }

    /// An inertia from its mass, centre of mass and rotational inertia about the centre of mass.
    pub fn new(mass: f64, com: Vec3, inertia_com: Mat3) -> Self {
        Inertia {
            mass,
            com,
            inertia_com,
        }
    }

    /// The same body expressed in frame A, `self` being expressed in frame B and `m = aMb`.
    pub fn transformed(&self, m: &Se3) -> Inertia {
        Inertia {
            mass: self.mass,
            com: m.act_point(&self.com),
            inertia_com: m.rot * self.inertia_com * m.rot.transpose(),
        }
    }

    /// Whether the body carries nothing: mass 0 and zero rotational inertia.
    pub fn is_zero(&self) -> bool {
        self.mass == 0.0 && self.inertia_com == Mat3::zeros()
    }

    /// The inertia of the union of two bodies expressed in the same frame (parallel-axis
    /// theorem), as Pinocchio adds inertias: massless bodies keep their rotational inertia
    /// (the total mass is floored at machine epsilon where it divides).
    pub fn add(&self, other: &Inertia) -> Inertia {
        let m = self.mass + other.mass;
        let m_inv = 1.0 / m.max(f64::EPSILON);
        let c = (self.com * self.mass + other.com * other.mass) * m_inv;
        let ab = skew(&(self.com - other.com));
        let i = self.inertia_com + other.inertia_com - ab * ab * (self.mass * other.mass * m_inv);
        Inertia {
            mass: m,
            com: c,
            inertia_com: i,
        }
    }

    /// The 6×6 spatial inertia matrix (linear first):
    /// `[[m I, −m[c]×], [m[c]×, I_c − m[c]×[c]×]]` (Featherstone Eq. 2.63).
    pub fn matrix(&self) -> Mat6 {
        let m = self.mass;
        let c = skew(&self.com);
        let mut y = Mat6::zeros();
        y.fixed_view_mut::<3, 3>(0, 0)
            .copy_from(&(Mat3::identity() * m));
        y.fixed_view_mut::<3, 3>(0, 3).copy_from(&(c * (-m)));
        y.fixed_view_mut::<3, 3>(3, 0).copy_from(&(c * m));
        y.fixed_view_mut::<3, 3>(3, 3)
            .copy_from(&(self.inertia_com - c * c * m));
        y
    }

    /// The momentum `I m` of the body moving with the twist `m` (both in the holding frame).
    #[inline(always)]
    pub fn mul_motion(&self, m: &Vec6) -> Vec6 {
        let (v, w) = (lin(m), ang(m));
        let f = (v - self.com.cross(&w)) * self.mass;
        spatial(f, self.inertia_com * w + self.com.cross(&f))
    }
}

pub use super::origin_inertia::OriginInertia;

#[cfg(test)]
mod tests {
    use super::*;

    fn rnd_se3(s: f64) -> Se3 {
        Se3::new(
            exp3(&Vec3::new(0.3 * s, -0.7, 0.2 + s)),
            Vec3::new(0.1, s, -0.4),
        )
    }

    #[test]
    fn actions_are_matrix_consistent_and_invert() {
        let m = rnd_se3(0.5);
        let nu = Vec6::new(0.1, -0.2, 0.3, 0.7, 0.5, -0.9);
        let back = m.act_inv_motion(&m.act_motion(&nu));
        assert!((back - nu).norm() < 1e-14);
        let f = Vec6::new(1.0, 2.0, -3.0, 0.5, 0.1, 0.2);
        // Duality: (aX*b f)·(aXb ν) = f·ν.
        assert!((m.act_force(&f).dot(&m.act_motion(&nu)) - f.dot(&nu)).abs() < 1e-13);
        assert!((m.act_inv_force(&m.act_force(&f)) - f).norm() < 1e-14);
        let mm = m.mul(&rnd_se3(-0.3));
        let direct = rnd_se3(-0.3);
        assert!((mm.act_motion(&nu) - m.act_motion(&direct.act_motion(&nu))).norm() < 1e-14);
    }

    #[test]
    fn cross_products_are_dual_and_match_matrices() {
        let a = Vec6::new(0.1, -0.2, 0.3, 0.7, 0.5, -0.9);
        let b = Vec6::new(-1.0, 0.4, 0.2, 0.3, -0.6, 0.8);
        let f = Vec6::new(1.0, 2.0, -3.0, 0.5, 0.1, 0.2);
        assert!((motion_cross_matrix(&a) * b - cross_motion(&a, &b)).norm() < 1e-14);
        assert!((-motion_cross_matrix(&a).transpose() * f - cross_force(&a, &f)).norm() < 1e-14);
        // (a × b)·f = −b·(a ×* f)
        assert!((cross_motion(&a, &b).dot(&f) + b.dot(&cross_force(&a, &f))).abs() < 1e-14);
        assert!((force_cross_matrix_of_wrench(&f) * a - cross_force(&a, &f)).norm() < 1e-14);
    }

    #[test]
    fn exp_log_round_trip_and_exp_is_a_flow() {
        let nu = Vec6::new(0.3, -0.1, 0.8, 1.1, -0.4, 0.6);
        let m = Se3::exp6(&nu);
        assert!((m.log6() - nu).norm() < 1e-12);
        // exp6(ν) equals the product of many small steps (first-order flow of the twist).
        let n = 1 << 12;
        let step = Se3::exp6(&(nu / n as f64));
        let mut acc = Se3::identity();
        for _ in 0..n {
            acc = acc.mul(&step);
        }
        assert!((acc.rot - m.rot).norm() < 1e-10 && (acc.trans - m.trans).norm() < 1e-10);
        // The small-angle branches agree with the closed forms.
        let w = Vec3::new(1e-5, -2e-5, 3e-5);
        let v = left_jacobian_so3(&w) * left_jacobian_so3_inverse(&w);
        assert!((v - Mat3::identity()).norm() < 1e-15);
        assert!((exp3(&w) * exp3(&-w) - Mat3::identity()).norm() < 1e-15);
    }

    #[test]
    fn inertia_matrix_matches_mul_and_transform() {
        let i = Inertia::new(
            2.0,
            Vec3::new(0.1, -0.2, 0.3),
            Mat3::new(0.3, 0.01, 0.02, 0.01, 0.4, -0.03, 0.02, -0.03, 0.5),
        );
        let nu = Vec6::new(0.1, -0.2, 0.3, 0.7, 0.5, -0.9);
        assert!((i.matrix() * nu - i.mul_motion(&nu)).norm() < 1e-14);
        // Transforming the body is the congruence aX*b I bXa.
        let m = rnd_se3(0.2);
        let lhs = i.transformed(&m).mul_motion(&nu);
        let rhs = m.act_force(&i.mul_motion(&m.act_inv_motion(&nu)));
        assert!((lhs - rhs).norm() < 1e-13);
        // Adding inertias adds their matrices.
        let j = Inertia::new(1.0, Vec3::new(-0.5, 0.0, 0.2), Mat3::identity() * 0.1);
        assert!((i.add(&j).matrix() - i.matrix() - j.matrix()).norm() < 1e-13);
        // The origin form is the same operator.
        let o = i.transformed_origin(&m);
        assert!((o.mul_motion(&nu) - i.transformed(&m).mul_motion(&nu)).norm() < 1e-13);
    }
}
