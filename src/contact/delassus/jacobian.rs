//! The contact Jacobian `H_c` of one soft body, the free contact velocity `g = H_c v_free`,
//! and the Baumgarte-like penetration correction of paper 002 Eq. 41 (the Delassus matrix
//! `G = h H_c A⁻¹ H_cᵀ` in [`crate::contact::assemble_delassus`]).
//!
//! Where `G` comes from: the step solves `A Δv = b + h H_cᵀ λ` (λ in N, `b` the free
//! right-hand side), so `v⁺ = v_free + h A⁻¹ H_cᵀ λ` and the contact velocity is
//! `σ = H_c v⁺ = G λ + g` with `G = h H_c A⁻¹ H_cᵀ` ((m/s)/N) and `g = H_c v_free` (m/s).
//! Fixed nodes have no reduced DOF: their Jacobian entries drop out (they cannot move).

use crate::error::{Error, Result};
use crate::math::{Mat3, Vec3};

/// Sparse rows of `H_c` for one body: 3 rows per contact (`t₁, t₂, n` of its frame), each a
/// list of `(node, c)` meaning the row reads `c · v_node` (`c` a 3-vector, m/s per m/s).
/// For a contact point `p = Σ w_k x_k` (barycentric weights on a triangle, or one node with
/// weight 1) and frame columns `[t₁, t₂, n]`, row `r` holds `(k, w_k · frame.column(r))`.
#[derive(Debug, Clone, Default)]
pub struct ContactJacobian {
    node_count: usize,
    row_ptr: Vec<usize>,
    entries: Vec<(usize, Vec3)>,
}

impl ContactJacobian {
    /// An empty Jacobian for a body of `node_count` nodes.
    pub fn new(node_count: usize) -> ContactJacobian {
        ContactJacobian {
            node_count,
            row_ptr: vec![0],
            entries: Vec::new(),
        }
    }

    /// Removes every row (keeps the capacity).
    pub fn clear(&mut self) {
        self.row_ptr.truncate(1);
        self.entries.clear();
    }

    /// Number of nodes of the body.
    pub fn node_count(&self) -> usize {
        self.node_count
    }

    /// Number of rows (3 per contact).
    pub fn row_count(&self) -> usize {
        self.row_ptr.len() - 1
    }

    /// Number of contacts (`row_count / 3`).
    pub fn contact_count(&self) -> usize {
        self.row_count() / 3
    }

    /// The entries of row `i`.
    pub fn row(&self, i: usize) -> &[(usize, Vec3)] {
        &self.entries[self.row_ptr[i]..self.row_ptr[i + 1]]
    }

    /// Appends the 3 rows of a point contact: `frame` has columns `[t₁, t₂, n]` (orthonormal,
    /// n pointing into the body), `points` the nodes and barycentric weights of the contact
    /// point.
    ///
    /// Errors on a node out of range, a non-finite weight or frame, or a frame that is not
    /// orthonormal (to 1e-9).
    pub fn push_point_contact(&mut self, frame: &Mat3, points: &[(usize, f64)]) -> Result<()> {
        let c = self.contact_count();
        if frame.iter().any(|x| !x.is_finite())
            || (frame.transpose() * frame - Mat3::identity()).amax() > 1e-9
        {
            return Err(Error::invalid(
                format!("contact {c} frame"),
                "must be a finite orthonormal matrix [t1, t2, n]",
            ));
        }
        for &(node, w) in points {
            if node >= self.node_count {
                return Err(Error::invalid(
                    format!("contact {c}"),
                    format!("node {node} out of range ({} nodes)", self.node_count),
                ));
            }
            if !w.is_finite() {
                return Err(Error::invalid(
                    format!("contact {c} weight of node {node}"),
                    "not finite",
                ));
            }
        }
        for r in 0..3 {
            let axis: Vec3 = frame.column(r).into_owned();
            self.entries
                .extend(points.iter().map(|&(node, w)| (node, w * axis)));
            self.row_ptr.push(self.entries.len());
        }
        Ok(())
    }

    /// `out = H_c v` for node velocities `v` (m/s). Panics on wrong lengths.
    pub fn apply(&self, v: &[Vec3], out: &mut [f64]) {
        assert!(
            v.len() == self.node_count && out.len() == self.row_count(),
            "ContactJacobian::apply: lengths"
        );
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.row(i).iter().map(|(n, c)| c.dot(&v[*n])).sum();
        }
    }
}

/// `g = H_c v_free` (m/s) into `out` (3 per contact): the contact velocity the step would
/// give without contact forces. Panics on wrong lengths.
pub fn free_contact_velocity(jacobian: &ContactJacobian, v_free: &[Vec3], out: &mut [f64]) {
    jacobian.apply(v_free, out);
}

/// The Baumgarte-like penetration correction of paper 002 Eq. 41, on the normal rows:
///
/// ```text
/// g_N ← g_N + Φ/h − K_p [Φ/h]₋ − K_d (H_c v)_N          [x]₋ = min(x, 0)
/// ```
///
/// with Φ (m) the signed gap at the start of the step (negative when penetrating), `h` (s)
/// the time step and `H_c v` the contact velocity at the start of the step. For a resting or
/// sliding contact (σ_N = 0) this gives `(H_c v⁺)_N = K_d (H_c v)_N − (1 − K_p) Φ/h`
/// (Eq. 42): a fraction `1 − K_p` of a penetration is removed per step, so resting contacts
/// do not sink, and an open gap Φ > 0 lets the body approach by Φ in one step before the
/// contact acts. The tangential rows are not modified (Φ is a normal distance).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PenetrationCorrection {
    /// Proportional gain `K_p` ∈ [0, 1]: 0 removes a penetration in one step, 1 never.
    pub kp: f64,
    /// Derivative gain `K_d` ∈ [0, 1] on the normal contact velocity at the step start.
    pub kd: f64,
}

impl Default for PenetrationCorrection {
    /// `K_p = 0.8` (a fifth of a penetration removed per step, without popping), `K_d = 0`.
    fn default() -> Self {
        PenetrationCorrection { kp: 0.8, kd: 0.0 }
    }
}

impl PenetrationCorrection {
    /// Errors on gains outside [0, 1] or a non-positive or non-finite time step `h` (s).
    fn validate(&self, h: f64) -> Result<()> {
        if !(0.0..=1.0).contains(&self.kp) || !(0.0..=1.0).contains(&self.kd) {
            return Err(Error::invalid(
                "penetration correction",
                format!(
                    "gains K_p = {}, K_d = {} must lie in [0, 1]",
                    self.kp, self.kd
                ),
            ));
        }
        if !(h > 0.0) || !h.is_finite() {
            return Err(Error::invalid("time step", format!("{h} must be positive")));
        }
        Ok(())
    }

    /// Applies the correction to `g` (3 per contact) given the gaps Φ (one per contact, m)
    /// and `contact_velocity = H_c v` at the step start (3 per contact, m/s).
    ///
    /// Errors on gains outside [0, 1], a non-positive `h`, non-finite gaps, or lengths that
    /// do not match.
    pub fn apply(
        &self,
        h: f64,
        gaps: &[f64],
        contact_velocity: &[f64],
        g: &mut [f64],
    ) -> Result<()> {
        self.apply_shared(h, gaps, None, contact_velocity, g)
    }

    /// [`Self::apply`] with the correction's branch shared over each contact's manifold:
    ///
    /// ```text
    /// g_N,i ← g_N,i + (1 − K_p s_m) Φ_i/h − K_d (H_c v)_N,i,
    /// s_m = Σ_{j ∈ m} [Φ_j]₋ / −Σ_{j ∈ m} |Φ_j|   (0 when every Φ_j = 0)
    /// ```
    ///
    /// `manifolds` (one per contact; `None`: m(i) = {i}, which is [`Self::apply`]) gives the
    /// `(first, count)` of the consecutive contacts of contact i's manifold m (`scene`'s
    /// rigid pairs). Between rigid bodies the points of one manifold have gaps affine in the
    /// pose (a box's four corners on a plane), and so do the velocities `G λ` can produce: the
    /// per-point kink of [`Self::apply`] on a manifold whose points straddle Φ = 0 (a box
    /// tipping onto a face, two corners in and two out) leaves a twist of g outside the range
    /// of G, where the NCP has no exact solution. One factor `s_m` per manifold keeps g
    /// affine over it: `s_m` = 1 when every point penetrates (Eq. 42: a fraction `1 − K_p`
    /// of each penetration removed per step, a tilt included), 0 when none does (an open gap
    /// closes in one step), and the share of the manifold's gaps that is penetration while it
    /// straddles. The map is continuous, with the kinks of [`Self::apply`] (each Φ_j = 0)
    /// and no other.
    ///
    /// Errors as [`Self::apply`], and on a manifold that is empty, does not hold its contact
    /// or runs past the last.
    pub fn apply_shared(
        &self,
        h: f64,
        gaps: &[f64],
        manifolds: Option<&[(usize, usize)]>,
        contact_velocity: &[f64],
        g: &mut [f64],
    ) -> Result<()> {
        self.validate(h)?;
        if let Some(m) = manifolds
            && (m.len() != gaps.len()
                || m.iter().enumerate().any(|(i, &(first, count))| {
                    count == 0 || i < first || i >= first + count || first + count > gaps.len()
                }))
        {
            return Err(Error::invalid(
                "penetration correction",
                format!(
                    "{} manifolds for {} gaps, or one that does not hold its contact",
                    m.len(),
                    gaps.len()
                ),
            ));
        }
        if g.len() != 3 * gaps.len() || contact_velocity.len() != g.len() {
            return Err(Error::invalid(
                "penetration correction",
                format!(
                    "{} gaps, {} contact velocities and {} free velocities do not match",
                    gaps.len(),
                    contact_velocity.len(),
                    g.len()
                ),
            ));
        }
        // The share s_m of the manifold last met (one contact alone: 1 when Φ < 0, else 0,
        // so that s_m r = [r]₋ bit for bit).
        let mut share = (usize::MAX, 0.0);
        for (i, &phi) in gaps.iter().enumerate() {
            if !phi.is_finite() {
                return Err(Error::invalid(format!("gap of contact {i}"), "not finite"));
            }
            let (first, count) = manifolds.map_or((i, 1), |m| m[i]);
            if share.0 != first {
                share = (first, penetration_share(&gaps[first..first + count]).0);
            }
            let r = phi / h;
            g[3 * i + 2] += r - self.kp * share.1 * r - self.kd * contact_velocity[3 * i + 2];
        }
        Ok(())
    }

    /// The derivative of [`PenetrationCorrection::apply`] for one contact: the slopes
    /// `(∂g_N/∂Φ, ∂g_N/∂(H_c v)_N)` (1/s, dimensionless) of the corrected normal free velocity
    /// with respect to its gap Φ (m) and its start-of-step normal contact velocity (m/s);
    /// the tangential rows do not depend on either. The map is piecewise linear:
    ///
    /// ```text
    /// ∂g_N/∂Φ = (1 − K_p)/h  when Φ < 0 (penetrating),   1/h  when Φ ≥ 0;   ∂g_N/∂(H_c v)_N = −K_d
    /// ```
    ///
    /// At Φ = 0 the one-sided value of the open side (`1/h`) is returned, the branch the
    /// formula evaluates there (`[Φ/h]₋ = 0`). Forward: `dg_N = s_Φ dΦ + s_v d(H_c v)_N`;
    /// transpose: `Φ̄ += s_Φ ḡ_N`, `(H_c v)̄_N += s_v ḡ_N`.
    ///
    /// Errors on gains outside [0, 1], a non-positive `h` or a non-finite gap (as `apply`).
    pub fn normal_slopes(&self, h: f64, gap: f64) -> Result<(f64, f64)> {
        self.validate(h)?;
        if !gap.is_finite() {
            return Err(Error::invalid("gap", "not finite"));
        }
        let slope = if gap < 0.0 {
            (1.0 - self.kp) / h
        } else {
            1.0 / h
        };
        Ok((slope, -self.kd))
    }

    /// The gap slopes `∂g_N,i/∂Φ_j` (1/s) of [`Self::apply_shared`] for contact i of one
    /// manifold whose gaps are `gaps` (m), i its place in it, into `out` (one per contact j
    /// of the manifold):
    ///
    /// ```text
    /// ∂g_N,i/∂Φ_j = (δ_ij (1 − K_p s) − K_p Φ_i ∂s/∂Φ_j)/h,
    /// ∂s/∂Φ_j = (∂N/∂Φ_j − s ∂D/∂Φ_j)/D,   N = −Σ [Φ]₋, D = Σ |Φ|
    /// ```
    ///
    /// with a gap at 0 taken on its open side (as [`Self::normal_slopes`]), and the open
    /// side's `δ_ij/h` when every gap is 0. A one-contact manifold gives
    /// [`Self::normal_slopes`]' `s_Φ`.
    ///
    /// Errors on gains outside [0, 1], a non-positive `h`, a non-finite gap, i out of range or
    /// `out` not as long as `gaps`.
    pub fn manifold_slopes(&self, h: f64, gaps: &[f64], i: usize, out: &mut [f64]) -> Result<()> {
        self.validate(h)?;
        if gaps.iter().any(|p| !p.is_finite()) {
            return Err(Error::invalid("gap", "not finite"));
        }
        if i >= gaps.len() || out.len() != gaps.len() {
            return Err(Error::invalid(
                "penetration correction",
                format!(
                    "contact {i} of a manifold of {}, {} slopes",
                    gaps.len(),
                    out.len()
                ),
            ));
        }
        let (s, d) = penetration_share(gaps);
        for (j, (slope, &gap)) in out.iter_mut().zip(gaps).enumerate() {
            let own = if i == j { 1.0 / h } else { 0.0 };
            *slope = if d == 0.0 {
                own
            } else {
                let (dn, dd) = if gap < 0.0 { (-1.0, -1.0) } else { (0.0, 1.0) };
                let ds = (dn - s * dd) / d;
                let shared = if i == j { s } else { 0.0 };
                own - self.kp * (shared + gaps[i] * ds) / h
            };
        }
        Ok(())
    }
}

/// `(s, D)` of a manifold's gaps Φ (m) for [`PenetrationCorrection::apply_shared`]: the share
/// `s = −Σ [Φ]₋ / D` of their sum of magnitudes `D = Σ |Φ|` that is penetration (0 when D =
/// 0).
fn penetration_share(gaps: &[f64]) -> (f64, f64) {
    let (inside, total) = gaps
        .iter()
        .fold((0.0, 0.0), |(n, d), &p| (n - p.min(0.0), d + p.abs()));
    if total > 0.0 {
        (inside / total, total)
    } else {
        (0.0, 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::DVec;

    #[test]
    fn jacobian_rows_are_frame_axes_times_weights() {
        let mut jac = ContactJacobian::new(3);
        let frame = Mat3::identity();
        jac.push_point_contact(&frame, &[(0, 0.25), (2, 0.75)])
            .unwrap();
        let v = [
            Vec3::new(1.0, 2.0, 3.0),
            Vec3::new(9.0, 9.0, 9.0),
            Vec3::new(-1.0, 0.0, 1.0),
        ];
        let mut g = [0.0; 3];
        free_contact_velocity(&jac, &v, &mut g);
        // The contact point velocity is 0.25 v₀ + 0.75 v₂.
        assert_eq!(g, [0.25 - 0.75, 0.5, 0.75 + 0.75]);
        assert!(jac.push_point_contact(&frame, &[(3, 1.0)]).is_err());
        assert!(jac.push_point_contact(&(2.0 * frame), &[(0, 1.0)]).is_err());
    }

    /// The slopes against central differences of `apply` on both sides of Φ = 0, and the
    /// documented one-sided value at Φ = 0 against a forward difference.
    #[test]
    fn penetration_slopes_match_finite_differences() {
        let c = PenetrationCorrection { kp: 0.8, kd: 0.3 };
        let h = 0.01;
        let g_n = |phi: f64, hv: f64| {
            let mut g = [0.0; 3];
            c.apply(h, &[phi], &[0.0, 0.0, hv], &mut g).unwrap();
            g[2]
        };
        let d = 1e-7;
        for (phi, hv) in [(-2e-3, 0.4), (3e-3, -0.2)] {
            let (sp, sv) = c.normal_slopes(h, phi).unwrap();
            let fp = (g_n(phi + d, hv) - g_n(phi - d, hv)) / (2.0 * d);
            let fv = (g_n(phi, hv + d) - g_n(phi, hv - d)) / (2.0 * d);
            assert!((sp - fp).abs() < 1e-6 * fp.abs(), "{sp} vs {fp}");
            assert!((sv - fv).abs() < 1e-6, "{sv} vs {fv}");
        }
        let (sp, _) = c.normal_slopes(h, 0.0).unwrap();
        let forward = (g_n(d, 0.0) - g_n(0.0, 0.0)) / d;
        assert!((sp - forward).abs() < 1e-6 * forward, "{sp} vs {forward}");
        assert!(c.normal_slopes(0.0, 0.0).is_err());
        assert!(c.normal_slopes(h, f64::NAN).is_err());
        assert!(
            PenetrationCorrection { kp: -0.1, kd: 0.0 }
                .normal_slopes(h, 0.0)
                .is_err()
        );
    }

    #[test]
    fn penetration_correction_follows_eq_42() {
        // A sticking/sliding contact ends with σ_N = 0 = g_N + (G λ)_N; the correction
        // shifts the reachable σ so that (H v⁺)_N = K_d (H v)_N − (1 − K_p) Φ/h.
        let c = PenetrationCorrection { kp: 0.8, kd: 0.5 };
        let h = 0.01;
        let mut g = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let hv = [0.0, 0.0, -0.2, 0.0, 0.0, 0.0];
        c.apply(h, &[-1e-3, 2e-3], &hv, &mut g).unwrap();
        // Penetrating: g_N = Φ/h (1 − K_p) − K_d (Hv)_N = −0.1·0.2 + 0.1 = 0.08.
        assert!((g[2] - (-0.1 * 0.2 + 0.1)).abs() < 1e-15);
        // Open gap: g_N = Φ/h = 0.2.
        assert!((g[5] - 0.2).abs() < 1e-15);
        assert_eq!(g[0], 0.0);
        assert!(
            PenetrationCorrection { kp: 1.5, kd: 0.0 }
                .apply(h, &[0.0], &[0.0; 3], &mut [0.0; 3])
                .is_err()
        );
        assert!(c.apply(h, &[f64::NAN], &[0.0; 3], &mut [0.0; 3]).is_err());
        let _ = DVec::zeros(0);
    }

    /// A tilted square's four corners on a plane: their gaps Φ = a + b x + c y are affine, so
    /// their twist combination Φ₁ − Φ₂ + Φ₃ − Φ₄ is zero, as is that of any rigid motion's
    /// normal velocities. Straddling Φ = 0, the per-corner kink breaks it; the manifold's
    /// shared branch keeps it, and equals the per-corner correction when every corner is in
    /// (a sunk, tilted square) or none is. Its slopes match central differences.
    #[test]
    fn shared_correction_keeps_a_manifold_affine() {
        let c = PenetrationCorrection { kp: 0.8, kd: 0.0 };
        let h = 0.005;
        let corners = [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)];
        let tilted = |level: f64, bx: f64, by: f64| -> Vec<f64> {
            corners
                .iter()
                .map(|(x, y)| level + bx * x + by * y)
                .collect()
        };
        let twist = |g: &[f64]| g[2] - g[5] + g[8] - g[11];
        let hv = [0.0; 12];
        let manifold = [(0, 4); 4];
        let corrected = |gaps: &[f64], manifolds: Option<&[(usize, usize)]>| {
            let mut g = [0.0; 12];
            c.apply_shared(h, gaps, manifolds, &hv, &mut g).unwrap();
            g
        };
        let straddling = tilted(1e-4, 3e-4, -1e-4);
        let own = corrected(&straddling, None);
        let shared = corrected(&straddling, Some(&manifold));
        let scale = 3e-4 / h;
        assert!(twist(&own).abs() > 0.1 * scale, "{}", twist(&own));
        assert!(twist(&shared).abs() < 1e-12 * scale, "{}", twist(&shared));
        // All in, or all out: each corner's own correction (Eq. 42).
        for gaps in [tilted(-5e-4, 1e-4, 2e-4), tilted(5e-4, 1e-4, 2e-4)] {
            let (a, b) = (corrected(&gaps, None), corrected(&gaps, Some(&manifold)));
            assert!(
                a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-14),
                "{a:?} {b:?}"
            );
        }
        // Slopes of each corner's row against each corner's gap, by central differences,
        // straddling and all in.
        let d = 1e-9;
        for gaps in [straddling, tilted(-5e-4, 1e-4, 2e-4)] {
            for (i, j) in (0..4).flat_map(|i| (0..4).map(move |j| (i, j))) {
                let mut slopes = [0.0; 4];
                c.manifold_slopes(h, &gaps, i, &mut slopes).unwrap();
                let slope = slopes[j];
                let (mut up, mut down) = (gaps.clone(), gaps.clone());
                up[j] += d;
                down[j] -= d;
                let g_i = |p: &[f64]| corrected(p, Some(&manifold))[3 * i + 2];
                let fd = (g_i(&up) - g_i(&down)) / (2.0 * d);
                assert!((slope - fd).abs() < 1e-6 / h, "{i} {j}: {slope} vs {fd}");
            }
        }
        // A one-contact manifold is Eq. 42's slope.
        for phi in [-1e-4, 0.0, 1e-4] {
            let mut one = [0.0];
            c.manifold_slopes(h, &[phi], 0, &mut one).unwrap();
            let one = one[0];
            let eq42 = c.normal_slopes(h, phi).unwrap().0;
            assert!((one - eq42).abs() < 1e-14 * eq42, "{one} vs {eq42}");
        }
        let mut g = [0.0; 12];
        for bad in [
            [(0, 4), (0, 4), (0, 4), (0, 5)],
            [(0, 4), (2, 1), (0, 4), (0, 4)],
        ] {
            assert!(
                c.apply_shared(h, &tilted(0.0, 1e-4, 0.0), Some(&bad), &hv, &mut g)
                    .is_err()
            );
        }
        assert!(
            c.apply_shared(h, &[0.0; 4], Some(&[(0, 1)]), &hv, &mut g)
                .is_err()
        );
        assert!(c.manifold_slopes(h, &[0.0; 4], 4, &mut [0.0; 4]).is_err());
    }
}
