//! One linear (4-node) tetrahedron: rest-shape precomputation, deformation gradient, nodal
//! forces and the 12×12 stiffness block (paper 004 Sec. II-C, Eq. 3).
//!
//! Conventions, used throughout the crate: the elastic energy of an element is `V Ψ(F)` with
//! `V` its rest volume (m³) and `F = Σₙ xₙ gₙᵀ` its deformation gradient, where `gₙ` (1/m)
//! are the gradients of the linear shape functions in the rest configuration (Σₙ gₙ = 0). The
//! internal force on node n is `fₙ = −∂(VΨ)/∂xₙ = −V P gₙ` (N) and the stiffness is
//! `K = ∂²(VΨ)/∂x² = −∂f/∂x` (N/m), positive for a stable element.

use crate::material::{LowRankTangent, Mat9, MaterialPoint};
use crate::math::{Mat3, Vec3};

/// Rest-state data of one tetrahedron.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tetrahedron {
    /// Its four node indices (positively oriented in the rest configuration).
    pub nodes: [usize; 4],
    /// Rest volume V (m³).
    pub volume: f64,
    /// Shape-function gradients gₙ (1/m), in the rest frame: F = Σₙ xₙ gₙᵀ.
    pub gradients: [Vec3; 4],
}

impl Tetrahedron {
    /// Precomputes the tetrahedron `nodes` from the rest positions `rest` (m). The mesh
    /// guarantees a positive volume; `gₖ = Dm⁻ᵀ eₖ` for k = 1..3 with
    /// Dm = [X₁−X₀, X₂−X₀, X₃−X₀], and g₀ = −g₁ − g₂ − g₃.
    pub fn new(nodes: [usize; 4], rest: &[Vec3]) -> Tetrahedron {
        let x0 = rest[nodes[0]];
        let dm = Mat3::from_columns(&[
            rest[nodes[1]] - x0,
            rest[nodes[2]] - x0,
            rest[nodes[3]] - x0,
        ]);
        let volume = dm.determinant() / 6.0;
        assert!(
            volume > 0.0,
            "tetrahedron with non-positive rest volume reached the FEM layer"
        );
        let inv = dm
            .try_inverse()
            .expect("a tetrahedron of positive volume has an invertible Dm");
        let g1 = inv.row(0).transpose();
        let g2 = inv.row(1).transpose();
        let g3 = inv.row(2).transpose();
        Tetrahedron {
            nodes,
            volume,
            gradients: [-(g1 + g2 + g3), g1, g2, g3],
        }
    }

    /// The deformation gradient F = Σₙ xₙ gₙᵀ at node positions `x` (m).
    #[inline]
    pub fn deformation_gradient(&self, x: &[Vec3]) -> Mat3 {
        let mut f = Mat3::zeros();
        for (n, g) in self.nodes.iter().zip(&self.gradients) {
            f += x[*n] * g.transpose();
        }
        f
    }

    /// The variation of F for node displacements `dx` (same formula, linear in dx).
    #[inline]
    pub fn deformation_gradient_variation(&self, dx: [Vec3; 4]) -> Mat3 {
        let mut f = Mat3::zeros();
        for (d, g) in dx.iter().zip(&self.gradients) {
            f += d * g.transpose();
        }
        f
    }

    /// Nodal internal forces fₙ = −V P gₙ (N) for the first Piola-Kirchhoff stress `p` (Pa).
    #[inline(always)]
    pub fn forces(&self, p: &Mat3) -> [Vec3; 4] {
        let mut out = [Vec3::zeros(); 4];
        for (o, g) in out.iter_mut().zip(&self.gradients) {
            *o = -self.volume * (p * g);
        }
        out
    }

    /// Nodal vectors V dP gₙ (N) of a stress variation `dp` (Pa): this element's part of a
    /// stiffness action K V when dP = ∂P/∂F : dF_V (a loop, not an array `map`, which
    /// compiled to copies in the element passes; always inlined, as out of line the arrays
    /// went through memory).
    #[inline(always)]
    pub fn stress_action(&self, dp: &Mat3) -> [Vec3; 4] {
        let mut out = [Vec3::zeros(); 4];
        for (o, g) in out.iter_mut().zip(&self.gradients) {
            *o = self.volume * (dp * g);
        }
        out
    }

    /// The 12×12 stiffness block K_e = V Bᵀ (∂P/∂F) B (N/m), written row-major into `out`
    /// (144 values; local index `3n + a` is component a of node n), from the 9×9 tangent
    /// `t` of [`MaterialPoint::tangent`] (column-major vec convention:
    /// `t[(i + 3j, k + 3l)] = ∂P_ij/∂F_kl`). Symmetric by construction.
    ///
    /// Node block (n, m) is `K_nm[a, c] = V Σ_jl t[(a + 3j, c + 3l)] gₙ[j] gₘ[l]`. It is
    /// computed in two contractions, `Hₘ = V Σ_l gₘ[l] t[:, 3l..3l+3]` (9×3) then
    /// `K_nm = Σ_j gₙ[j] Hₘ[3j..3j+3, :]`, only for the 6 blocks n ≥ m ≥ 1: the others follow
    /// from symmetry (K_mn = K_nmᵀ) and from g₀ = −(g₁ + g₂ + g₃), which gives
    /// K_0m = −Σₙ K_nm and K_00 = −Σₘ K_0m. About half the flops of the direct formula.
    #[inline]
    pub fn stiffness(&self, t: &Mat9, out: &mut [f64]) {
        let out: &mut [f64; 144] = out
            .try_into()
            .expect("stiffness block buffer of 144 values");
        let g = &self.gradients;
        let ts = t.as_slice();
        // h[m − 1][c][r] = V Σ_l gₘ[l] t[(r, c + 3l)]: columns of t are contiguous.
        let mut h = [[[0.0; 9]; 3]; 3];
        for (hm, gm) in h.iter_mut().zip(&g[1..]) {
            let vg = gm * self.volume;
            for (c, hmc) in hm.iter_mut().enumerate() {
                let (t0, t1, t2) = (
                    &ts[c * 9..c * 9 + 9],
                    &ts[(c + 3) * 9..(c + 3) * 9 + 9],
                    &ts[(c + 6) * 9..(c + 6) * 9 + 9],
                );
                for r in 0..9 {
                    hmc[r] = t0[r] * vg[0] + t1[r] * vg[1] + t2[r] * vg[2];
                }
            }
        }
        let block = |n: usize, m: usize| -> Mat3 {
            let (gn, hm) = (&g[n], &h[m - 1]);
            Mat3::from_fn(|a, c| hm[c][a] * gn[0] + hm[c][a + 3] * gn[1] + hm[c][a + 6] * gn[2])
        };
        let mut write = |n: usize, m: usize, b: &Mat3| {
            for a in 0..3 {
                for c in 0..3 {
                    out[(3 * n + a) * 12 + 3 * m + c] = b[(a, c)];
                    out[(3 * m + c) * 12 + 3 * n + a] = b[(a, c)];
                }
            }
        };
        let mut k00 = Mat3::zeros();
        let mut k0 = [Mat3::zeros(); 3];
        for n in 1..4 {
            for m in 1..=n {
                let b = block(n, m);
                write(n, m, &b);
                k0[m - 1] -= b;
                if n != m {
                    k0[n - 1] -= b.transpose();
                }
            }
        }
        for (m, b) in k0.iter().enumerate() {
            write(0, m + 1, b);
            k00 -= b;
        }
        // K_00 is symmetric in exact arithmetic; keep its lower half so the block is
        // symmetric bit for bit.
        for a in 0..3 {
            for c in 0..a {
                k00[(c, a)] = k00[(a, c)];
            }
        }
        write(0, 0, &k00);
    }

    /// The 12×12 stiffness block K_e = V Bᵀ (∂P/∂F) B (N/m) for a tangent of the form
    /// `a I₉ + Σₖ αₖ vec(Qₖ) vec(Qₖ)ᵀ` ([`LowRankTangent`], the co-rotational law): its upper
    /// triangle (row `r` ≤ column `c`, row-major in 144 values), all that assembly reads
    /// (`linalg::assembly`). Below the diagonal only the entries (2p + 1, 2p) are written
    /// (their mirrors' values, to round-off); the others are left as they were.
    ///
    /// Since (∂P/∂F : Σₘ dxₘ gₘᵀ) gₙ = a Σₘ (gₙ·gₘ) dxₘ + Σₖ αₖ (Qₖ gₙ) Σₘ (Qₖ gₘ)·dxₘ, with wₖ
    /// the 12-vector stacking Qₖ gₙ over the four nodes
    /// `K_e = V (a (gₙ·gₘ) I₃ + Σₖ αₖ wₖ wₖᵀ)`: four rank-one updates, about half the flops of
    /// the contraction of the dense tangent, and no 9×9 matrix.
    #[inline]
    pub fn stiffness_low_rank(&self, t: &LowRankTangent, out: &mut [f64]) {
        let out: &mut [f64; 144] = out
            .try_into()
            .expect("stiffness block buffer of 144 values");
        let g = &self.gradients;
        // w[k][3n + a] = (Qₖ gₙ)_a, and s[k] = V αₖ.
        let mut w = [[0.0; 12]; 4];
        for (wk, q) in w.iter_mut().zip(&t.directions) {
            for (n, gn) in g.iter().enumerate() {
                let qg = q * gn;
                wk[3 * n..3 * n + 3].copy_from_slice(qg.as_slice());
            }
        }
        let s = t.weights.map(|alpha| self.volume * alpha);
        // Each upper entry is Σₖ (sₖ wₖ[r]) wₖ[c], summed over k in order. Rows go in pairs
        // (2p, 2p + 1) from column 2p, by 2 × 2 tiles of fixed shape, which the compiler turns
        // into vector operations along the columns. The tiles on the diagonal also write the
        // entry (2p + 1, 2p) below it, which is never read.
        for p in 0..6 {
            let scaled = |r: usize| std::array::from_fn::<f64, 4, _>(|k| s[k] * w[k][r]);
            let rows = [scaled(2 * p), scaled(2 * p + 1)];
            for q in p..6 {
                for (i, sr) in rows.iter().enumerate() {
                    let mut tile = [0.0; 2];
                    for (j, t) in tile.iter_mut().enumerate() {
                        *t = sr[0] * w[0][2 * q + j];
                    }
                    for k in 1..4 {
                        for (j, t) in tile.iter_mut().enumerate() {
                            *t += sr[k] * w[k][2 * q + j];
                        }
                    }
                    let r = 2 * p + i;
                    out[12 * r + 2 * q..12 * r + 2 * q + 2].copy_from_slice(&tile);
                }
            }
        }
        let a = self.volume * t.identity;
        for n in 0..4 {
            for m in n..4 {
                let d = a * g[n].dot(&g[m]);
                for c in 0..3 {
                    out[(3 * n + c) * 12 + 3 * m + c] += d;
                }
            }
        }
    }

    /// The action of the element stiffness on node displacements `dx`: K_e dx restricted to
    /// this element, as nodal vectors (N) — `V (∂P/∂F : dF) gₙ` with dF from `dx`.
    pub fn stiffness_action(&self, point: &MaterialPoint, dx: [Vec3; 4]) -> [Vec3; 4] {
        let dp = point.tangent_action(&self.deformation_gradient_variation(dx));
        self.stress_action(&dp)
    }

    /// The action of this element's stiffness derivative `T_V = ∂(K_e V)/∂x` on `dx`, for the
    /// nodal field `v` of the element: `V d²P[dF_V, dF_dx] gₙ` per node (N per unit of `v`·m⁻¹
    /// times m; N·s/m when `v` is a velocity), symmetric in `v` and `dx`
    /// (`fem::stiffness_derivative`).
    pub fn stiffness_derivative_action(
        &self,
        point: &MaterialPoint,
        v: [Vec3; 4],
        dx: [Vec3; 4],
    ) -> [Vec3; 4] {
        let ddp = point.tangent_derivative(
            &self.deformation_gradient_variation(v),
            &self.deformation_gradient_variation(dx),
        );
        self.stress_action(&ddp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::material::{Law, Material};
    use crate::math::{DVec, central_difference_jacobian, relative_error};

    fn skewed_tet() -> (Tetrahedron, Vec<Vec3>) {
        let rest = vec![
            Vec3::new(0.1, 0.0, 0.0),
            Vec3::new(1.0, 0.2, 0.0),
            Vec3::new(0.3, 0.9, 0.1),
            Vec3::new(0.2, 0.1, 1.1),
        ];
        (Tetrahedron::new([0, 1, 2, 3], &rest), rest)
    }

    fn deformed(rest: &[Vec3]) -> Vec<Vec3> {
        rest.iter()
            .enumerate()
            .map(|(i, p)| p + Vec3::new(0.05 * i as f64, -0.03 * p.x, 0.02 * (i * i) as f64))
            .collect()
    }

    #[test]
    fn rest_gradient_is_identity_and_volume_matches_the_determinant() {
        let (t, rest) = skewed_tet();
        assert!((t.deformation_gradient(&rest) - Mat3::identity()).norm() < 1e-14);
        // Independent: V = |det[X1−X0, X2−X0, X3−X0]| / 6 by the scalar triple product.
        let v = (rest[1] - rest[0])
            .cross(&(rest[2] - rest[0]))
            .dot(&(rest[3] - rest[0]))
            / 6.0;
        assert!((t.volume - v).abs() < 1e-15);
    }

    #[test]
    fn forces_are_minus_the_energy_gradient_and_stiffness_its_hessian() {
        let (t, rest) = skewed_tet();
        for law in [Law::Corotational, Law::StVK, Law::NeoHookean] {
            let mat = Material::new(law, 1e5, 0.3).unwrap();
            let to_x = |v: &DVec| {
                (0..4)
                    .map(|n| Vec3::new(v[3 * n], v[3 * n + 1], v[3 * n + 2]))
                    .collect::<Vec<_>>()
            };
            let energy = |v: &DVec| {
                DVec::from_element(
                    1,
                    t.volume
                        * mat
                            .at(&t.deformation_gradient(&to_x(v)))
                            .unwrap()
                            .energy_density(),
                )
            };
            let force = |v: &DVec| {
                let p = mat.at(&t.deformation_gradient(&to_x(v))).unwrap().stress();
                DVec::from_iterator(12, t.forces(&p).iter().flat_map(|f| [f.x, f.y, f.z]))
            };
            let x = deformed(&rest);
            let xv = DVec::from_iterator(12, x.iter().flat_map(|p| [p.x, p.y, p.z]));
            let grad = central_difference_jacobian(energy, &xv, 1e-6);
            let f = force(&xv);
            assert!(
                relative_error((-grad.transpose()).as_slice(), f.as_slice(), 1e-30) < 1e-7,
                "{law:?} force"
            );
            let dfdx = central_difference_jacobian(force, &xv, 1e-6);
            let mut k = [0.0; 144];
            t.stiffness(
                &mat.at(&t.deformation_gradient(&x)).unwrap().tangent(),
                &mut k,
            );
            // K = −∂f/∂x; the FD matrix is column-major, `k` row-major.
            let k_fd: Vec<f64> = (0..12)
                .flat_map(|r| (0..12).map(move |c| (r, c)))
                .map(|(r, c)| -dfdx[(r, c)])
                .collect();
            assert!(
                relative_error(&k, &k_fd, 1e-30) < 1e-6,
                "{law:?} stiffness {}",
                relative_error(&k, &k_fd, 1e-30)
            );
            // The co-rotational block from the four rank-one terms equals the dense one.
            if let Some(low_rank) = mat
                .at(&t.deformation_gradient(&x))
                .unwrap()
                .low_rank_tangent()
            {
                let mut k_low = [f64::NAN; 144];
                t.stiffness_low_rank(&low_rank, &mut k_low);
                // Below the diagonal only the entries (2p + 1, 2p) are written (NaN elsewhere
                // here), their mirrors to round-off; mirror the upper triangle.
                let largest = k.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                for r in 1..12 {
                    for c in 0..r {
                        let lower = k_low[r * 12 + c];
                        if r % 2 == 1 && c == r - 1 {
                            let mirror = k_low[c * 12 + r];
                            assert!((lower - mirror).abs() <= 1e-14 * largest, "({r}, {c})");
                        } else {
                            assert!(lower.is_nan(), "({r}, {c}) written");
                        }
                        k_low[r * 12 + c] = k_low[c * 12 + r];
                    }
                }
                assert!(
                    relative_error(&k_low, &k, 1e-30) < 1e-13,
                    "{law:?} low-rank stiffness {}",
                    relative_error(&k_low, &k, 1e-30)
                );
            }
            // The action agrees with the assembled block.
            let dx = [
                Vec3::new(0.1, -0.2, 0.3),
                Vec3::new(0.0, 0.5, -0.1),
                Vec3::new(-0.3, 0.2, 0.2),
                Vec3::new(0.4, 0.1, 0.0),
            ];
            let action = t.stiffness_action(&mat.at(&t.deformation_gradient(&x)).unwrap(), dx);
            let dxv: Vec<f64> = dx.iter().flat_map(|d| [d.x, d.y, d.z]).collect();
            let kdx: Vec<f64> = (0..12)
                .map(|r| (0..12).map(|c| k[r * 12 + c] * dxv[c]).sum())
                .collect();
            let act: Vec<f64> = action.iter().flat_map(|f| [f.x, f.y, f.z]).collect();
            assert!(relative_error(&act, &kdx, 1e-30) < 1e-12, "{law:?} action");
        }
    }
}
