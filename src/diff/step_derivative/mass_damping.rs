//! The right-hand sides of the mass and damping parameters ([`Parameter::MassDamping`]: α, β,
//! ρ of a soft body) in the differentiated step (docs/derivatives.md).
//!
//! Over the body's free DOFs the step is (module doc of `diff`)
//!
//! ```text
//! A v⁺ = M v + h (m g + f(x) + H_aᵀλ_a) + h H_cᵀλ_c − [c_k K_fp v_p⁺ + M_fp (c_m v_p⁺ − v_p)],
//! A = c_m M + c_k K̂,   c_m = 1 + hα,   c_k = hβ + h²,   K̂ = K + K_a
//! ```
//!
//! (the bracket is the pinned horn nodes' coupling, `scene::step::free::prescribed`; v_p⁺ is
//! prescribed by the servo and does not depend on α, β, ρ). α and β enter A and the coupling
//! only; ρ enters A, M v, the weights m g and the coupling, with M, m and M_fp linear in ρ
//! (lumped or consistent mass). Differentiating with λ_c held, v⁺ the step's velocity after
//! contact (as for the material parameters: the contact chain then carries the column like any
//! other right-hand side, the NCP answering the change of A in its Delassus matrix):
//!
//! ```text
//! α:  A dv⁺ = −h [M v⁺]_f dα                              (kg·m per 1/s of α)
//! β:  A dv⁺ = −h [K v⁺ + K_a v⁺]_f dβ                     (N per s of β)
//! ρ:  A dv⁺ = (1/ρ) [M (v − c_m v⁺) + h m g]_f dρ          (m⁴/s per kg/m³ of ρ)
//! ```
//!
//! where `[·]_f` are the free rows of a product over the whole body: v⁺ and v hold the pinned
//! rows (v_p⁺, v_p), so M_fp and K_fp enter through them (M_fp is zero for the lumped mass),
//! and K_a, which the step holds over the free DOFs only, acts on v⁺ over the free DOFs. The
//! weights use the lumped nodal masses for both lumped and consistent M (∫ρ Nₙ dV = ρVₑ/4).
//! The pinned horn nodes' rows and every other input's terms are unchanged, and x⁺ = x + h v⁺
//! gives dx⁺ = h dv⁺.

use crate::fem::{MassDampingParameter, SoftBody};
use crate::linalg::DofMap;
use crate::math::Vec3;
use crate::scene::{BodyActuation, PrescribedDerivative};

use super::super::record::BodyRecord;
use super::{assert_points, free_velocities};

impl super::BodyBuffers {
    /// [`MassDampingRhs::fill`] with this body's pinned servos' derivatives.
    pub(super) fn fill_mass_damping(
        &mut self,
        body: &SoftBody,
        act: &BodyActuation,
        rec: &BodyRecord,
        h_g: (f64, Vec3),
        parameter: MassDampingParameter,
    ) {
        self.mass_damping
            .fill(&mut self.prescribed, body, act, rec, h_g, parameter);
    }
}

/// A body's right-hand sides of α, β, ρ (module doc) and their scratch.
pub(super) struct MassDampingRhs {
    /// Per parameter (`MassDampingParameter::index`): its column over the free DOFs, when
    /// computed for the current record.
    columns: [Vec<f64>; 3],
    /// Reduced scratch.
    red: Vec<f64>,
    red2: Vec<f64>,
    /// Nodal scratch.
    field: Vec<Vec3>,
    pinned: Vec<Vec3>,
    nodal: Vec<Vec3>,
    v_free: Vec<Vec3>,
}

impl MassDampingRhs {
    /// Buffers for `body`.
    pub(super) fn new(body: &SoftBody) -> MassDampingRhs {
        let (n, nr) = (body.node_count(), body.pattern().n());
        MassDampingRhs {
            columns: [vec![0.0; nr], vec![0.0; nr], vec![0.0; nr]],
            red: vec![0.0; nr],
            red2: vec![0.0; nr],
            field: vec![Vec3::zeros(); n],
            pinned: vec![Vec3::zeros(); n],
            nodal: vec![Vec3::zeros(); n],
            v_free: vec![Vec3::zeros(); n],
        }
    }

    /// The column of `parameter` last computed by [`Self::fill`].
    pub(super) fn column(&self, parameter: MassDampingParameter) -> &[f64] {
        &self.columns[parameter.index()]
    }

    /// Computes the right-hand side of `parameter` (module doc) for the step of `rec` on
    /// `body` (its actuation `act`, its pinned servos' `prescribed`), time step `h` (s) and
    /// gravity `g` (m/s²).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fill(
        &mut self,
        prescribed: &mut PrescribedDerivative,
        body: &SoftBody,
        act: &BodyActuation,
        rec: &BodyRecord,
        (h, g): (f64, Vec3),
        parameter: MassDampingParameter,
    ) {
        let pattern = body.pattern();
        let dofs = pattern.dofs();
        let mut out = std::mem::take(&mut self.columns[parameter.index()]);
        out.fill(0.0);
        match parameter {
            // −h [M v⁺]_f
            MassDampingParameter::RayleighMass => {
                self.add_mass_product(prescribed, body, &rec.v_plus, -h, &mut out);
            }
            // −h [K v⁺ + K_a v⁺]_f
            MassDampingParameter::RayleighStiffness => {
                dofs.gather_nodal(&rec.v_plus, &mut self.red);
                pattern.symmetric_product_add(rec.stiffness(), -h, &self.red, &mut out);
                if prescribed.is_active() {
                    assert_points(body, rec);
                    self.nodal.fill(Vec3::zeros());
                    prescribed.add_stiffness_coupling(
                        body,
                        &rec.points,
                        &rec.v_plus,
                        -h,
                        &mut self.nodal,
                    );
                    dofs.add_nodal(&self.nodal, 1.0, &mut out);
                }
                if !act.actuators.is_empty() {
                    free_velocities(dofs, rec, &mut self.red, &mut self.v_free);
                    self.nodal.fill(Vec3::zeros());
                    crate::scene::add_tangent_action(
                        act,
                        &rec.x,
                        &rec.actuator_forces,
                        &self.v_free,
                        -h,
                        &mut self.nodal,
                    );
                    dofs.add_nodal(&self.nodal, 1.0, &mut out);
                }
            }
            // (1/ρ) [M (v − c_m v⁺) + h m g]_f
            MassDampingParameter::Density => {
                let opts = body.options();
                let (rho, c_m) = (opts.density, 1.0 + h * opts.rayleigh_mass);
                let mut field = std::mem::take(&mut self.field);
                for (u, (v, vp)) in field.iter_mut().zip(rec.v.iter().zip(&rec.v_plus)) {
                    *u = v - c_m * vp;
                }
                self.add_mass_product(prescribed, body, &field, 1.0 / rho, &mut out);
                self.field = field;
                let masses = body.node_masses();
                for (o, (n, k)) in out.iter_mut().zip(dofs.free_components()) {
                    *o += h * masses[n] * g[k] / rho;
                }
            }
        }
        self.columns[parameter.index()] = out;
    }

    /// `out += scale [M u]_f` (reduced), `u` a nodal field whose pinned rows enter through
    /// M_fp (`PrescribedDerivative::add_mass_coupling`; zero for a diagonal mass).
    fn add_mass_product(
        &mut self,
        prescribed: &PrescribedDerivative,
        body: &SoftBody,
        u: &[Vec3],
        scale: f64,
        out: &mut [f64],
    ) {
        let pattern = body.pattern();
        let dofs: &DofMap = pattern.dofs();
        dofs.gather_nodal(u, &mut self.red2);
        pattern.symmetric_product_add(body.mass_values(), scale, &self.red2, out);
        if prescribed.is_active() {
            for (n, (p, x)) in self.pinned.iter_mut().zip(u).enumerate() {
                *p = if prescribed.is_pinned(n) {
                    *x
                } else {
                    Vec3::zeros()
                };
            }
            self.nodal.fill(Vec3::zeros());
            prescribed.add_mass_coupling(body, &self.pinned, scale, &mut self.nodal);
            dofs.add_nodal(&self.nodal, 1.0, out);
        }
    }

    /// ⟨column of `parameter`, r̄⟩ with r̄ the nodal cotangent `r_bar` (reverse mode: the
    /// parameter's cotangent from r̄ = A⁻¹ ā), after [`Self::fill`].
    pub(super) fn pair(
        &mut self,
        dofs: &DofMap,
        parameter: MassDampingParameter,
        r_bar: &[Vec3],
    ) -> f64 {
        dofs.gather_nodal(r_bar, &mut self.red);
        self.columns[parameter.index()]
            .iter()
            .zip(&self.red)
            .map(|(a, b)| a * b)
            .sum()
    }
}
