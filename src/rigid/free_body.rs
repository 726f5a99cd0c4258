//! A free rigid body (the scene's `[[rigid_body]]`) by the Newton–Euler equations about its
//! centre of mass, with world-frame velocities:
//!
//! ```text
//! q = [c; quaternion xyzw],   v = [ċ; ω]  (m/s and rad/s, world axes)
//! M(q) = diag(m I₃, I_w),     I_w = R I Rᵀ
//! v_free = v + h [g; −I_w⁻¹ (ω × I_w ω)]                 (explicit gyroscopic term)
//! c⁺ = c + h ċ⁺,   R⁺ = exp(h ω⁺) R                       (q ⊕ h v⁺)
//! ```
//!
//! A contact at the world point p moves with v(p) = ċ + ω × (p − c), so its Jacobian is
//! `[I₃, −[p − c]×]`. With these coordinates an impulse pair (equal and opposite, at one
//! point) leaves the total linear momentum Σ m ċ and angular momentum Σ (c × m ċ + I_w ω)
//! unchanged to round-off, which a free-flyer joint's body-frame twist (integrated along a
//! screw) does not (its world velocity drifts by O(h²ω²) per step).

use nalgebra::UnitQuaternion;

use crate::error::{Error, Result};
use crate::math::{Mat3, Vec3};

/// Mass and rotational inertia of a free body.
#[derive(Debug, Clone, PartialEq)]
pub struct FreeBody {
    /// Mass (kg), positive.
    pub mass: f64,
    /// Rotational inertia about the centre of mass, body axes (kg·m²), symmetric positive
    /// definite.
    pub inertia: Mat3,
    inertia_inv: Mat3,
}

fn rotation(q: &[f64]) -> Mat3 {
    super::joint::quaternion_rotation(&q[3..7])
}

impl FreeBody {
    /// A body of mass `mass` (kg) and inertia `inertia` about its centre of mass (kg·m², body
    /// axes). Errors, naming `rigid_body.NAME.mass` / `.inertia`, on a mass that is not
    /// positive, an inertia that is not symmetric positive definite, or one whose principal
    /// moments break the triangle inequality I₁ + I₂ ≥ I₃ (no body has them:
    /// [`breaks_triangle_inequality`](super::breaks_triangle_inequality)).
    pub fn new(name: &str, mass: f64, inertia: Mat3) -> Result<FreeBody> {
        if !(mass > 0.0) || !mass.is_finite() {
            return Err(Error::invalid(
                format!("rigid_body.{name}.mass"),
                format!("{mass} must be positive (kg)"),
            ));
        }
        let symmetric = (inertia - inertia.transpose()).amax() <= 1e-12 * inertia.amax();
        let inverse = inertia.cholesky().map(|c| c.inverse());
        let key = || format!("rigid_body.{name}.inertia");
        match inverse {
            Some(inertia_inv) if symmetric && inertia.iter().all(|x| x.is_finite()) => {
                let moments = super::principal_moments(&inertia);
                if super::breaks_triangle_inequality(moments) {
                    return Err(Error::invalid(
                        key(),
                        super::principal_moments::triangle_message(moments),
                    ));
                }
                Ok(FreeBody {
                    mass,
                    inertia,
                    inertia_inv,
                })
            }
            _ => Err(Error::invalid(
                key(),
                "must be symmetric positive definite (kg·m², about the centre of mass)",
            )),
        }
    }

    /// The same body with mass `mass` (kg) and its inertia scaled with it, `I' = (mass / m) I`
    /// (the shape and its mass distribution kept: the spatial inertia is `mass · M̂`, M̂ the
    /// unit-mass one; the parameter `mass:BODY`, docs/derivatives.md). Errors as [`Self::new`].
    pub fn with_mass(&self, name: &str, mass: f64) -> Result<FreeBody> {
        if !(mass > 0.0) || !mass.is_finite() {
            return Err(Error::invalid(
                format!("rigid_body.{name}.mass"),
                format!("{mass} must be positive (kg)"),
            ));
        }
        let k = mass / self.mass;
        Ok(FreeBody {
            mass,
            inertia: self.inertia * k,
            inertia_inv: self.inertia_inv / k,
        })
    }

    /// The world inertia `I_w = R I Rᵀ` at configuration `q` (kg·m²).
    pub fn world_inertia(&self, q: &[f64]) -> Mat3 {
        let r = rotation(q);
        r * self.inertia * r.transpose()
    }

    /// `out = v + h [g; −I_w⁻¹(ω × I_w ω)]`: the velocity after a step of `h` (s) under
    /// gravity `g` (m/s²) alone.
    pub fn free_velocity(&self, q: &[f64], v: &[f64], gravity: &Vec3, h: f64, out: &mut [f64]) {
        let r = rotation(q);
        let w = Vec3::new(v[3], v[4], v[5]);
        let iw = r * self.inertia * r.transpose();
        let dw = -(r * self.inertia_inv * r.transpose()) * w.cross(&(iw * w));
        for k in 0..3 {
            out[k] = v[k] + h * gravity[k];
            out[3 + k] = w[k] + h * dw[k];
        }
    }

    /// `x ← M(q)⁻¹ x` (x: a force `[f; n]`, N and N·m, world axes).
    pub fn solve_mass(&self, q: &[f64], x: &mut [f64]) {
        let r = rotation(q);
        let n = r * self.inertia_inv * r.transpose() * Vec3::new(x[3], x[4], x[5]);
        for k in 0..3 {
            x[k] /= self.mass;
            x[3 + k] = n[k];
        }
    }

    /// The 3 × 6 Jacobian of the world velocity of the body point at `p` (m, world):
    /// `[I₃, −[p − c]×]`.
    pub fn point_jacobian(&self, q: &[f64], p: &Vec3, out: &mut nalgebra::Matrix3xX<f64>) {
        assert_eq!(out.ncols(), 6, "free-body point Jacobian is 3 × 6");
        let d = p - Vec3::new(q[0], q[1], q[2]);
        out.fill(0.0);
        for k in 0..3 {
            out[(k, k)] = 1.0;
        }
        // ω × d = −[d]× ω.
        let skew = Mat3::new(0.0, -d.z, d.y, d.z, 0.0, -d.x, -d.y, d.x, 0.0);
        out.fixed_view_mut::<3, 3>(0, 3).copy_from(&(-skew));
    }

    /// `out = q ⊕ h v`: c + h ċ, and the orientation turned by `exp(h ω)` in world axes.
    pub fn integrate(&self, q: &[f64], v: &[f64], h: f64, out: &mut [f64]) {
        let r0 = UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(q[6], q[3], q[4], q[5]));
        let r = UnitQuaternion::new(Vec3::new(v[3], v[4], v[5]) * h) * r0;
        for k in 0..3 {
            out[k] = q[k] + h * v[k];
        }
        out[3..7].copy_from_slice(&[r.i, r.j, r.k, r.w]);
    }

    /// Kinetic energy ½ m |ċ|² + ½ ωᵀ I_w ω (J).
    pub fn kinetic_energy(&self, q: &[f64], v: &[f64]) -> f64 {
        let c = Vec3::new(v[0], v[1], v[2]);
        let w = Vec3::new(v[3], v[4], v[5]);
        0.5 * self.mass * c.norm_squared() + 0.5 * w.dot(&(self.world_inertia(q) * w))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torque_free_spin_about_a_principal_axis_is_steady() {
        let body = FreeBody::new("b", 2.0, Mat3::from_diagonal(&Vec3::new(0.1, 0.2, 0.3))).unwrap();
        let q = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        let v = [0.0, 0.0, 0.0, 0.0, 0.0, 5.0];
        let mut out = [0.0; 6];
        body.free_velocity(&q, &v, &Vec3::new(0.0, 0.0, -9.81), 0.01, &mut out);
        assert_eq!(out, [0.0, 0.0, -0.0981, 0.0, 0.0, 5.0]);
        let mut q1 = [0.0; 7];
        body.integrate(&q, &out, 0.01, &mut q1);
        // A turn of 0.05 rad about z: (0, 0, sin 0.025, cos 0.025).
        assert!(
            (q1[5] - (0.025f64).sin()).abs() < 1e-15 && (q1[6] - (0.025f64).cos()).abs() < 1e-15
        );
        assert!((q1[2] + 0.000981).abs() < 1e-18);
    }

    #[test]
    fn the_mass_solve_inverts_the_world_inertia() {
        let body = FreeBody::new(
            "b",
            2.0,
            // Off the axes, principal moments ≈ 0.148, 0.198, 0.304 kg·m²: 0.148 + 0.198 ≥ 0.304.
            Mat3::new(0.15, 0.01, 0.0, 0.01, 0.2, 0.02, 0.0, 0.02, 0.3),
        )
        .unwrap();
        let s = (0.4f64).sin();
        let q = [1.0, 2.0, 3.0, s * 0.6, 0.0, s * 0.8, (0.4f64).cos()];
        let f = [1.0, -2.0, 0.5, 0.3, -0.1, 0.7];
        let mut x = f;
        body.solve_mass(&q, &mut x);
        let iw = body.world_inertia(&q);
        let back = iw * Vec3::new(x[3], x[4], x[5]);
        for k in 0..3 {
            assert!((x[k] * 2.0 - f[k]).abs() < 1e-15);
            assert!((back[k] - f[3 + k]).abs() < 1e-14);
        }
    }

    #[test]
    fn bad_mass_properties_name_the_key() {
        let e = FreeBody::new("cube", 0.0, Mat3::identity()).unwrap_err();
        assert!(e.to_string().contains("rigid_body.cube.mass"), "{e}");
        let e = FreeBody::new("cube", 1.0, -Mat3::identity()).unwrap_err();
        assert!(e.to_string().contains("rigid_body.cube.inertia"), "{e}");
        // Positive definite, yet no body has it: 1e-6 + 1e-6 < 1e-5.
        let rod = Mat3::from_diagonal(&Vec3::new(1e-5, 1e-6, 1e-6));
        let e = FreeBody::new("cube", 1.0, rod).unwrap_err().to_string();
        assert!(
            e.starts_with("rigid_body.cube.inertia: ") && e.contains("I₁ + I₂ ≥ I₃"),
            "{e}"
        );
    }
}
