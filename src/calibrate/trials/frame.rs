//! The camera frame of observed marker tracks (`--register none|translation|rigid`): one
//! rigid map from the camera's frame to the scene's, shared by every trial,
//!
//! > scene_point = R(ω)·camera_point + τ,  R(ω) = exp([ω]×)
//!
//! (ω the axis-angle rotation vector, rad; τ the translation, m), fitted jointly with the
//! physical parameters. Its Jacobian with respect to ω is that of the exponential map: with the
//! SO(3) right Jacobian J_r (exp(ω + δ) = exp(ω) exp(J_r(ω) δ) to first order),
//!
//! > ∂(R(ω) y)/∂ω = −R(ω) [y]× J_r(ω),
//! > J_r(ω) = I − (1 − cos θ)/θ² [ω]× + (θ − sin θ)/θ³ [ω]×²,  θ = |ω|
//!
//! (Barfoot, *State Estimation for Robotics*, 2017, Eq. 7.77a; Sola et al., "A micro Lie
//! theory for state estimation in robotics", 2018, Eq. 143), its small-θ series below 1e-2.

use crate::error::{Error, Result};
use crate::math::{Mat3, Vec3};

/// Which camera → scene map is fitted with the parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Registration {
    /// None: the tracks are in the scene frame.
    #[default]
    None,
    /// A translation τ (3 parameters, m): also absorbs a constant offset between a marker and
    /// the point that carries it.
    Translation,
    /// A rotation ω and a translation τ (6 parameters: τ in m, ω in rad).
    Rigid,
}

impl Registration {
    /// `none`, `translation` or `rigid`; errors name `what` (the flag).
    pub fn parse(what: &str, text: &str) -> Result<Registration> {
        match text {
            "none" => Ok(Registration::None),
            "translation" => Ok(Registration::Translation),
            "rigid" => Ok(Registration::Rigid),
            other => Err(Error::invalid(
                what,
                format!("expected `none`, `translation` or `rigid`, got `{other}`"),
            )),
        }
    }

    /// The number of frame parameters: 0, 3 (τ) or 6 (τ then ω).
    pub fn parameters(self) -> usize {
        match self {
            Registration::None => 0,
            Registration::Translation => 3,
            Registration::Rigid => 6,
        }
    }

    /// `none`, `translation` or `rigid`.
    pub fn label(self) -> &'static str {
        match self {
            Registration::None => "none",
            Registration::Translation => "translation",
            Registration::Rigid => "rigid",
        }
    }
}

/// A camera → scene frame: scene_point = R(ω)·camera_point + τ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    /// τ (m, scene frame).
    pub translation: Vec3,
    /// ω, the rotation's axis times its angle (rad).
    pub rotation: Vec3,
}

impl Default for Frame {
    /// The identity: τ = 0, ω = 0.
    fn default() -> Self {
        Frame {
            translation: Vec3::zeros(),
            rotation: Vec3::zeros(),
        }
    }
}

impl Frame {
    /// The frame of the coordinates `s` of `registration` (τ, then ω for
    /// [`Registration::Rigid`]; the others zero).
    pub fn from_coordinates(registration: Registration, s: &[f64]) -> Frame {
        assert_eq!(s.len(), registration.parameters(), "one coordinate each");
        let mut frame = Frame::default();
        if s.len() >= 3 {
            frame.translation = Vec3::new(s[0], s[1], s[2]);
        }
        if s.len() == 6 {
            frame.rotation = Vec3::new(s[3], s[4], s[5]);
        }
        frame
    }

    /// The coordinates of this frame under `registration` ([`Frame::from_coordinates`]).
    pub fn coordinates(&self, registration: Registration) -> Vec<f64> {
        let (t, w) = (self.translation, self.rotation);
        match registration {
            Registration::None => Vec::new(),
            Registration::Translation => vec![t.x, t.y, t.z],
            Registration::Rigid => vec![t.x, t.y, t.z, w.x, w.y, w.z],
        }
    }

    /// R(ω) = exp([ω]×) (Rodrigues).
    pub fn rotation_matrix(&self) -> Mat3 {
        *nalgebra::Rotation3::new(self.rotation).matrix()
    }

    /// The scene point (m) of the camera point `y` (m): R(ω) y + τ.
    pub fn apply(&self, y: Vec3) -> Vec3 {
        self.rotation_matrix() * y + self.translation
    }

    /// ∂(R(ω) y + τ)/∂ω = −R(ω) [y]× J_r(ω) (3×3, m/rad), for the camera point `y` (m) and
    /// the rotation `r` = R(ω) already computed; ∂/∂τ is the identity.
    pub fn rotation_jacobian(&self, r: &Mat3, y: Vec3) -> Mat3 {
        -r * skew(y) * right_jacobian(self.rotation)
    }
}

/// [v]×, the matrix of v × ·.
pub fn skew(v: Vec3) -> Mat3 {
    Mat3::new(0.0, -v.z, v.y, v.z, 0.0, -v.x, -v.y, v.x, 0.0)
}

/// The SO(3) right Jacobian J_r(ω) = I − (1 − cos θ)/θ² [ω]× + (θ − sin θ)/θ³ [ω]×²,
/// θ = |ω| (module doc), 1 − cos θ taken as 2 sin²(θ/2) (no cancellation); below θ = 1e-2 the
/// series 1/2 − θ²/24 + θ⁴/720 and 1/6 − θ²/120 + θ⁴/5040 of the two coefficients (their next
/// terms below 3e-17).
pub fn right_jacobian(omega: Vec3) -> Mat3 {
    let theta2 = omega.norm_squared();
    let theta = theta2.sqrt();
    let (a, b) = if theta < 1e-2 {
        let theta4 = theta2 * theta2;
        (
            0.5 - theta2 / 24.0 + theta4 / 720.0,
            1.0 / 6.0 - theta2 / 120.0 + theta4 / 5040.0,
        )
    } else {
        let half = (0.5 * theta).sin();
        (
            2.0 * half * half / theta2,
            (theta - theta.sin()) / (theta2 * theta),
        )
    };
    let w = skew(omega);
    Mat3::identity() - w * a + w * w * b
}

/// The frame a fit starts from, given pairs (camera point y, simulated scene point p) at the
/// initial parameters: none for [`Registration::None`]; for a translation the mean of p − y
/// (the least-squares τ for R = I); for a rigid map the least-squares R and τ of the pairs
/// (Kabsch: the SVD of the cross-covariance Σ (y − ȳ)(p − p̄)ᵀ = U S Vᵀ gives
/// R = V diag(1, 1, det(V Uᵀ)) Uᵀ, τ = p̄ − R ȳ), ω its rotation vector. No pairs: the
/// identity.
pub fn initial_frame(registration: Registration, pairs: &[(Vec3, Vec3)]) -> Frame {
    if registration == Registration::None || pairs.is_empty() {
        return Frame::default();
    }
    let n = pairs.len() as f64;
    let y_mean = pairs.iter().map(|(y, _)| y).sum::<Vec3>() / n;
    let p_mean = pairs.iter().map(|(_, p)| p).sum::<Vec3>() / n;
    if registration == Registration::Translation {
        return Frame {
            translation: p_mean - y_mean,
            rotation: Vec3::zeros(),
        };
    }
    let mut h = Mat3::zeros();
    for (y, p) in pairs {
        h += (y - y_mean) * (p - p_mean).transpose();
    }
    let svd = h.svd(true, true);
    let (Some(u), Some(v_t)) = (svd.u, svd.v_t) else {
        return Frame {
            translation: p_mean - y_mean,
            rotation: Vec3::zeros(),
        };
    };
    let v = v_t.transpose();
    let d = (v * u.transpose()).determinant().signum();
    let r = v * Mat3::from_diagonal(&Vec3::new(1.0, 1.0, d)) * u.transpose();
    let rotation = nalgebra::Rotation3::from_matrix_unchecked(r).scaled_axis();
    Frame {
        translation: p_mean - r * y_mean,
        rotation,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{DVec, central_difference_jacobian};

    /// ∂(R(ω) y + τ)/∂(τ, ω) against central differences of the map itself (step 1e-6, so
    /// the differences' error is ~1e-12), at rotations of several sizes, the tiny ones
    /// through the series.
    #[test]
    fn the_registration_jacobian_matches_central_differences() {
        let y = Vec3::new(0.03, -0.12, 0.07);
        for omega in [
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(3e-6, -1e-5, 2e-6),
            Vec3::new(0.2, -0.4, 0.1),
            Vec3::new(1.1, 0.7, -2.0),
            Vec3::new(0.0, 3.0, 0.0),
        ] {
            let frame = Frame {
                translation: Vec3::new(0.01, 0.2, -0.05),
                rotation: omega,
            };
            let s = DVec::from_vec(frame.coordinates(Registration::Rigid));
            let map = |s: &DVec| {
                let f = Frame::from_coordinates(Registration::Rigid, s.as_slice());
                let p = f.apply(y);
                DVec::from_vec(vec![p.x, p.y, p.z])
            };
            let fd = central_difference_jacobian(map, &s, 1e-6);
            let r = frame.rotation_matrix();
            let dw = frame.rotation_jacobian(&r, y);
            for i in 0..3 {
                for j in 0..3 {
                    let dt = if i == j { 1.0 } else { 0.0 };
                    assert!((fd[(i, j)] - dt).abs() < 1e-9, "τ {omega:?} {i}{j}");
                    let e = (fd[(i, 3 + j)] - dw[(i, j)]).abs();
                    assert!(
                        e < 1e-9,
                        "ω {omega:?} ({i}, {j}): {} vs {}",
                        fd[(i, 3 + j)],
                        dw[(i, j)]
                    );
                }
            }
        }
    }

    /// The series and the closed form of J_r agree where they meet (θ = 1e-2), and J_r is
    /// the identity at 0 and Rᵀ-symmetric: J_r(ω) = J_l(ω)ᵀ = J_r(−ω)ᵀ.
    #[test]
    fn the_right_jacobian_is_continuous_and_its_identities_hold() {
        let axis = Vec3::new(0.3, -0.5, 0.8).normalize();
        let below = right_jacobian(axis * (1e-2 * (1.0 - 1e-12)));
        let above = right_jacobian(axis * (1e-2 * (1.0 + 1e-12)));
        // The two rotations differ by 2e-14 rad, which moves J_r by ≈ ½ · 2e-14 · √2 = 1.4e-14
        // (its first-order term −½[ω]×): a jump at the seam would be far larger.
        assert!((below - above).norm() < 3e-14, "{}", (below - above).norm());
        assert_eq!(right_jacobian(Vec3::zeros()), Mat3::identity());
        let w = Vec3::new(0.4, 1.2, -0.3);
        assert!((right_jacobian(w) - right_jacobian(-w).transpose()).norm() < 1e-14);
    }

    /// Kabsch recovers a known frame from exact pairs; the translation-only start is the mean
    /// offset.
    #[test]
    fn the_initial_frame_fits_exact_pairs() {
        let truth = Frame {
            translation: Vec3::new(0.1, -0.02, 0.3),
            rotation: Vec3::new(0.2, -0.1, 0.5),
        };
        let ys = [
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(0.1, 0.0, 0.01),
            Vec3::new(0.0, 0.05, 0.02),
            Vec3::new(0.03, 0.02, 0.1),
        ];
        let pairs: Vec<(Vec3, Vec3)> = ys.iter().map(|y| (*y, truth.apply(*y))).collect();
        let f = initial_frame(Registration::Rigid, &pairs);
        assert!((f.rotation - truth.rotation).norm() < 1e-12, "{f:?}");
        assert!((f.translation - truth.translation).norm() < 1e-12, "{f:?}");
        let shifted: Vec<(Vec3, Vec3)> = ys
            .iter()
            .map(|y| (*y, y + Vec3::new(1.0, 2.0, 3.0)))
            .collect();
        let f = initial_frame(Registration::Translation, &shifted);
        assert!((f.translation - Vec3::new(1.0, 2.0, 3.0)).norm() < 1e-14);
        assert_eq!(f.rotation, Vec3::zeros());
        assert_eq!(initial_frame(Registration::None, &pairs), Frame::default());
    }
}
