//! Closed-form derivatives of node-versus-obstacle detection with respect to the node
//! position p (m): the gap gradient ∂Φ/∂p, the normal Jacobian ∂n/∂p, the closest-point
//! Jacobian, and the derivative of the contact frame (paper 004 §III-A, paper 002 §III-D,
//! paper 003 §V: curved primitives have ∂n/∂p ≠ 0, flat faces ∂n/∂p = 0).
//!
//! Each formula differentiates the branch [`Obstacle::closest`] evaluates at p, so on a
//! region boundary the derivative is one-sided, taken on the side `closest` picks:
//!
//! - **Sphere** at its centre: `closest` uses the fixed normal +z, so ∂Φ/∂p = +z and
//!   ∂n/∂p = 0 (the gap is not differentiable there).
//! - **Cuboid outside**: an axis whose local coordinate is exactly on a face plane
//!   (`|q_k| = e_k`) counts as inside that slab (the clamp is inactive), i.e. a node exactly
//!   over an edge is differentiated as over the face, one exactly over a corner as over the
//!   edge.
//! - **Cuboid inside**: the face of least penetration with `closest`'s tie rule (lowest axis,
//!   then the positive side when `q_k = 0`); the normal is that face's, constant.
//! - [`contact_frame`]'s discrete choice of the helper axis is held fixed.
//!
//! Frames are world frames; a frame matrix has columns `[t₁, t₂, n]`.

use super::cuboid::{BoxRegion, box_region};
use super::detection::{Obstacle, contact_frame, frame_helper_axis};
use crate::math::{Mat3, Vec3};

fn mask_matrix(mask: [bool; 3]) -> Mat3 {
    Mat3::from_diagonal(&Vec3::new(
        f64::from(u8::from(mask[0])),
        f64::from(u8::from(mask[1])),
        f64::from(u8::from(mask[2])),
    ))
}

impl Obstacle {
    /// ∂Φ/∂p: the gradient of the signed gap (dimensionless, world frame) at the node
    /// position `p` (m). It is the outward normal of [`Obstacle::closest`] in every region
    /// (one-sided choices in the module doc).
    pub fn gap_gradient(&self, p: &Vec3) -> Vec3 {
        match self {
            Obstacle::Capsule(c) => c.gap_gradient(p),
            Obstacle::Mesh(m) => m.gap_gradient(p),
            _ => self.closest(p).normal,
        }
    }

    /// ∂n/∂p (1/m, world frame): how the outward unit normal of [`Obstacle::closest`] turns
    /// when the node moves; column j is ∂n/∂p_j.
    ///
    /// Plane and box faces (and a point inside a box): 0. Sphere: `(I − n nᵀ)/‖p − c‖`
    /// (0 at the centre). Box edge or corner region: `R (I − n̂ n̂ᵀ) M Rᵀ / d` with `n̂` the
    /// local normal, `M` the mask of the clamped axes and `d` the distance.
    pub fn normal_jacobian(&self, p: &Vec3) -> Mat3 {
        match *self {
            Obstacle::Capsule(ref c) => c.normal_jacobian(p),
            Obstacle::Mesh(ref m) => m.normal_jacobian(p),
            Obstacle::Plane { .. } => Mat3::zeros(),
            Obstacle::Sphere { center, .. } => {
                let r = p - center;
                let d = r.norm();
                if d > 0.0 {
                    let n = r / d;
                    (Mat3::identity() - n * n.transpose()) / d
                } else {
                    Mat3::zeros()
                }
            }
            Obstacle::Cuboid {
                center,
                half_extents,
                rotation,
            } => {
                let q = rotation.transpose() * (p - center);
                match box_region(&q, &half_extents) {
                    BoxRegion::Outside { mask, n, d, .. } => {
                        rotation
                            * ((Mat3::identity() - n * n.transpose()) * mask_matrix(mask) / d)
                            * rotation.transpose()
                    }
                    BoxRegion::Inside { .. } => Mat3::zeros(),
                }
            }
        }
    }

    /// ∂(closest point)/∂p (dimensionless, world frame): the Jacobian of
    /// [`Proximity::point`](crate::contact::Proximity) with respect to the node position.
    ///
    /// Plane: `I − n nᵀ`. Sphere: `ρ (I − n nᵀ)/‖p − c‖` (0 at the centre). Box outside:
    /// `R (I − M) Rᵀ` (the unclamped axes follow the node); box inside:
    /// `R (I − e_k e_kᵀ) Rᵀ` (the point slides on face k). Capsule and mesh:
    /// `I − n nᵀ − Φ ∂n/∂p` (the closest point is p − Φ n).
    pub fn point_jacobian(&self, p: &Vec3) -> Mat3 {
        match *self {
            // point = p − Φ n with ∇Φ = n: ∂point/∂p = I − n nᵀ − Φ ∂n/∂p.
            Obstacle::Capsule(_) | Obstacle::Mesh(_) => {
                let prox = self.closest(p);
                Mat3::identity()
                    - prox.normal * prox.normal.transpose()
                    - prox.gap * self.normal_jacobian(p)
            }
            Obstacle::Plane { normal, .. } => Mat3::identity() - normal * normal.transpose(),
            Obstacle::Sphere { radius, .. } => radius * self.normal_jacobian(p),
            Obstacle::Cuboid {
                center,
                half_extents,
                rotation,
            } => {
                let q = rotation.transpose() * (p - center);
                let local = match box_region(&q, &half_extents) {
                    BoxRegion::Outside { mask, .. } => Mat3::identity() - mask_matrix(mask),
                    BoxRegion::Inside { k, .. } => {
                        let mut m = [true; 3];
                        m[k] = false;
                        mask_matrix(m)
                    }
                };
                rotation * local * rotation.transpose()
            }
        }
    }

    /// ∂frame/∂p_j for j = 0, 1, 2 (1/m): the derivative of the contact frame
    /// `contact_frame(closest(p).normal)` (columns `[t₁, t₂, n]`) with respect to each world
    /// coordinate of the node, with the frame's discrete axis choice held fixed. This is
    /// the derivative of the node contact's rows of `H_c` (the rows are the frame's columns).
    pub fn frame_jacobian(&self, p: &Vec3) -> [Mat3; 3] {
        let n = self.closest(p).normal;
        let dn = self.normal_jacobian(p);
        std::array::from_fn(|j| contact_frame_derivative(&n, &dn.column(j).into_owned()))
    }
}

/// The derivative of [`contact_frame`] at the unit normal `n` in the direction `dn`
/// (columns `[dt₁, dt₂, dn]`), with the helper world axis `a` that `contact_frame(n)` picks
/// held fixed:
///
/// ```text
/// v = a − (a·n) n,   t₁ = v/‖v‖,   t₂ = n × t₁
/// dv = −(a·dn) n − (a·n) dn,   dt₁ = (I − t₁t₁ᵀ) dv/‖v‖,   dt₂ = dn × t₁ + n × dt₁
/// ```
///
/// A derivative along the unit sphere has `dn ⊥ n` (as [`Obstacle::normal_jacobian`]'s
/// columns are); other `dn` give the derivative of the same formula. Panics if `n` is not a
/// unit vector (as `contact_frame`).
pub fn contact_frame_derivative(n: &Vec3, dn: &Vec3) -> Mat3 {
    let frame = contact_frame(n);
    let t1: Vec3 = frame.column(0).into_owned();
    let a = frame_helper_axis(n);
    let v = a - a.dot(n) * n;
    let dv = -a.dot(dn) * n - a.dot(n) * dn;
    let dt1 = (dv - t1 * t1.dot(&dv)) / v.norm();
    let dt2 = dn.cross(&t1) + n.cross(&dt1);
    Mat3::from_columns(&[dt1, dt2, *dn])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::relative_error;

    const H: f64 = 1e-6;

    /// Central differences of `f` along each world axis at `p`: column j = ∂f/∂p_j.
    fn fd_columns(f: impl Fn(&Vec3) -> Vec<f64>, p: &Vec3) -> Vec<Vec<f64>> {
        (0..3)
            .map(|j| {
                let mut e = Vec3::zeros();
                e[j] = H;
                let (a, b) = (f(&(p + e)), f(&(p - e)));
                a.iter().zip(&b).map(|(x, y)| (x - y) / (2.0 * H)).collect()
            })
            .collect()
    }

    fn flat(m: &Mat3) -> Vec<f64> {
        m.as_slice().to_vec()
    }

    /// Checks every derivative of `o` at `p` against central differences of `closest` and
    /// `contact_frame`, to 1e-6 relative (norm-wise, with a floor for zero derivatives).
    fn check(o: &Obstacle, p: &Vec3, label: &str) {
        let gap = fd_columns(|x| vec![o.closest(x).gap], p);
        let grad = o.gap_gradient(p);
        let fd: Vec<f64> = gap.iter().map(|c| c[0]).collect();
        let e = relative_error(grad.as_slice(), &fd, 1e-3);
        assert!(e < 1e-6, "{label}: gap gradient {e}");

        let normal = fd_columns(|x| o.closest(x).normal.as_slice().to_vec(), p);
        let point = fd_columns(|x| o.closest(x).point.as_slice().to_vec(), p);
        let frame = fd_columns(|x| flat(&contact_frame(&o.closest(x).normal)), p);
        let nj = o.normal_jacobian(p);
        let pj = o.point_jacobian(p);
        let fj = o.frame_jacobian(p);
        for j in 0..3 {
            let e = relative_error(nj.column(j).as_slice(), &normal[j], 1e-3);
            assert!(e < 1e-6, "{label}: normal column {j}: {e}");
            let e = relative_error(pj.column(j).as_slice(), &point[j], 1e-3);
            assert!(e < 1e-6, "{label}: point column {j}: {e}");
            let e = relative_error(fj[j].as_slice(), &frame[j], 1e-3);
            assert!(e < 1e-6, "{label}: frame derivative {j}: {e}");
        }
    }

    fn rotation() -> Mat3 {
        let axis = Vec3::new(0.3, -0.5, 0.8).normalize();
        *nalgebra::Rotation3::from_axis_angle(&nalgebra::Unit::new_normalize(axis), 0.7).matrix()
    }

    #[test]
    fn plane_derivatives_match_finite_differences() {
        let o = Obstacle::plane(Vec3::new(0.1, 0.2, -0.3), Vec3::new(0.2, -0.4, 1.0)).unwrap();
        check(&o, &Vec3::new(0.4, -0.7, 0.05), "plane above");
        check(&o, &Vec3::new(-0.4, 0.3, -0.9), "plane below");
        assert_eq!(o.normal_jacobian(&Vec3::zeros()), Mat3::zeros());
    }

    #[test]
    fn sphere_derivatives_match_finite_differences() {
        let o = Obstacle::sphere(Vec3::new(0.2, -0.1, 0.3), 0.5).unwrap();
        check(&o, &Vec3::new(0.5, 0.4, 0.9), "sphere outside");
        check(&o, &Vec3::new(0.32, 0.0, 0.12), "sphere inside");
        // The curvature term is really there: ∂n/∂p ≠ 0 on a sphere (paper 003 §V).
        assert!(o.normal_jacobian(&Vec3::new(0.5, 0.4, 0.9)).norm() > 0.1);
        // At the centre: the documented one-sided choice, finite.
        let c = Vec3::new(0.2, -0.1, 0.3);
        assert_eq!(o.gap_gradient(&c), Vec3::z());
        assert_eq!(o.normal_jacobian(&c), Mat3::zeros());
        assert!(
            o.frame_jacobian(&c)
                .iter()
                .all(|m| m.iter().all(|x| x.is_finite()))
        );
    }

    #[test]
    fn box_derivatives_match_finite_differences_in_every_region() {
        let rot = rotation();
        let c = Vec3::new(0.1, 0.2, -0.1);
        let e = Vec3::new(0.4, 0.3, 0.2);
        let o = Obstacle::cuboid(c, e, rot).unwrap();
        let world = |q: Vec3| c + rot * q;
        // Outside: over each face (both sides), over edges, over corners.
        let cases = [
            (Vec3::new(0.55, 0.1, -0.05), "face +x"),
            (Vec3::new(-0.1, -0.45, 0.07), "face −y"),
            (Vec3::new(0.12, 0.05, 0.33), "face +z"),
            (Vec3::new(0.5, 0.41, 0.05), "edge +x+y"),
            (Vec3::new(-0.1, -0.38, -0.29), "edge −y−z"),
            (Vec3::new(0.47, -0.36, 0.27), "corner +x−y+z"),
            (Vec3::new(-0.52, -0.41, -0.3), "corner −x−y−z"),
            // Inside: least penetration through +x, −z, +y.
            (Vec3::new(0.35, 0.05, 0.0), "inside +x"),
            (Vec3::new(0.0, 0.1, -0.17), "inside −z"),
            (Vec3::new(-0.05, 0.27, 0.02), "inside +y"),
        ];
        for (q, label) in cases {
            check(&o, &world(q), label);
        }
        // Edges and corners turn the normal; faces do not.
        assert!(o.normal_jacobian(&world(Vec3::new(0.5, 0.41, 0.05))).norm() > 1.0);
        assert_eq!(
            o.normal_jacobian(&world(Vec3::new(0.55, 0.1, -0.05))),
            Mat3::zeros()
        );
    }

    #[test]
    fn frame_derivative_matches_finite_differences() {
        let mut rng = crate::math::SplitMix64::new(17);
        for _ in 0..50 {
            let n = Vec3::new(rng.uniform(), rng.uniform(), rng.uniform()).normalize();
            let raw = Vec3::new(rng.uniform(), rng.uniform(), rng.uniform());
            // Along the sphere of unit normals, through normalisation.
            let dn = raw - n * n.dot(&raw);
            let fd = (contact_frame(&(n + H * raw).normalize())
                - contact_frame(&(n - H * raw).normalize()))
                / (2.0 * H);
            let d = contact_frame_derivative(&n, &dn);
            let e = relative_error(d.as_slice(), fd.as_slice(), 1e-3);
            assert!(e < 1e-6, "{n:?}: {e}");
            // The derivative keeps the frame orthonormal: Fᵀ dF is antisymmetric.
            let f = contact_frame(&n);
            let s = f.transpose() * d;
            assert!((s + s.transpose()).amax() < 1e-12);
        }
    }
}
