//! The quasi-static compliance of one soft body, `(K + K_a)⁻¹` applied to columns: the
//! factorisation of the static tangent (K the elastic tangent, K_a the force-driven cables'
//! tangent, `scene::step::free::actuator_tangent`) that inverse control aims through (module doc of
//! `control::controller`; paper 004 §IV-D), shifted to K + K_a + μM when indefinite.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};

use crate::diff::Parameter;
use crate::error::Result;
use crate::fem::SoftBody;
use crate::linalg::{FactorKind, NumericFactor, SymbolicFactor};
use crate::math::Vec3;
use crate::scene::{ActuatorTangent, Scene};

/// The shifts μ (s⁻²) of K + μM tried in turn, K itself first: K(xₙ) is not always positive
/// definite (the co-rotational tangent is exact, not the positive definite R K₀ Rᵀ), and
/// K + μM is the stiffness of a damped Newton step toward equilibrium. The Trunk's first
/// mode has ω² ≈ 100 s⁻².
pub(super) const SHIFTS: [f64; 4] = [0.0, 10.0, 100.0, 1000.0];

/// A body's static-tangent factor and its buffers, reused across linearisations.
pub(super) struct StaticCompliance {
    body: usize,
    factor: Option<NumericFactor>,
    /// Where the force-driven cables' tangent K_a goes in the static tangent K + K_a.
    tangent: ActuatorTangent,
    /// K + K_a(x) of the last factorisation (the body's pattern).
    static_tangent: Vec<f64>,
    shifted: Vec<f64>,
    /// The rung of [`SHIFTS`] that worked last.
    rung: usize,
    solve: MemBuffer,
    /// Columns `solve` holds scratch for.
    solve_columns: usize,
    nodal: Vec<Vec3>,
    rows: Vec<(usize, Vec3)>,
}

impl StaticCompliance {
    /// `out = M ((v⁺ − v)/h + α v⁺)` (N, one entry per free DOF of `model`): what a recorded
    /// step's equilibrium holds beyond the static one (`v`, `v_plus` the step's velocities in
    /// m/s, `h` its time step in s, `alpha` the Rayleigh mass coefficient in 1/s), the first
    /// column both controllers solve with the compliance. `scratch` is resized to the free
    /// DOFs.
    pub(super) fn momentum_column(
        model: &SoftBody,
        (v, v_plus): (&[Vec3], &[Vec3]),
        h: f64,
        alpha: f64,
        scratch: &mut Vec<f64>,
        out: &mut [f64],
    ) {
        let pattern = model.pattern();
        scratch.resize(pattern.n(), 0.0);
        for (r, (node, c)) in scratch.iter_mut().zip(pattern.dofs().free_components()) {
            let (v, vp) = (v[node][c], v_plus[node][c]);
            *r = (vp - v) / h + alpha * vp;
        }
        pattern.symmetric_product(model.mass_values(), scratch, out);
    }

    /// The compliance of soft body `body` of `scene`. Errors as [`ActuatorTangent::new`].
    pub(super) fn new(scene: &Scene, body: usize) -> Result<Self> {
        let model = &scene.bodies[body];
        let tangent = ActuatorTangent::new(
            scene.body_actuation(body),
            model.pattern(),
            model.rest_positions(),
            &format!("soft_body.{}", model.name()),
        )?;
        Ok(StaticCompliance {
            body,
            factor: None,
            tangent,
            static_tangent: Vec::new(),
            shifted: Vec::new(),
            rung: 0,
            solve: MemBuffer::new(StackReq::EMPTY),
            solve_columns: 0,
            nodal: Vec::new(),
            rows: Vec::new(),
        })
    }

    /// Factorises K + K_a at `x` (`stiffness` = K there, λ = `forces`) on `symbolic` (the
    /// step factor's analysis when there is one, else the last one or a new analysis of the
    /// body's pattern), shifted by μM from [`SHIFTS`] when indefinite, starting one rung
    /// below the last μ that worked (so a state that keeps K indefinite costs about two
    /// factorisations, not four). Returns the shift used, `None` when every rung failed.
    pub(super) fn factorize(
        &mut self,
        scene: &Scene,
        symbolic: Option<&NumericFactor>,
        x: &[Vec3],
        stiffness: &[f64],
        forces: &[f64],
    ) -> Result<Option<f64>> {
        let b = self.body;
        let model = &scene.bodies[b];
        let pattern = model.pattern();
        let symbolic = match symbolic {
            Some(f) => f.symbolic().clone(),
            None => match &self.factor {
                Some(f) => f.symbolic().clone(),
                None => std::sync::Arc::new(SymbolicFactor::new(pattern)?),
            },
        };
        if self
            .factor
            .as_ref()
            .is_none_or(|f| !std::sync::Arc::ptr_eq(f.symbolic(), &symbolic))
        {
            self.factor = Some(NumericFactor::new(symbolic, FactorKind::Llt));
            self.solve_columns = 0;
        }
        let factor = self.factor.as_mut().expect("set above");
        // The static tangent K + K_a: the cables' tangent is part of the step's A.
        self.static_tangent.clear();
        self.static_tangent.extend_from_slice(stiffness);
        self.tangent.add(
            scene.body_actuation(b),
            x,
            forces,
            1.0,
            &mut self.static_tangent,
        );
        let start = self.rung.saturating_sub(1);
        for (rung, &mu) in SHIFTS.iter().enumerate().skip(start) {
            let values: &[f64] = if mu == 0.0 {
                &self.static_tangent
            } else {
                self.shifted.clear();
                self.shifted.extend(
                    self.static_tangent
                        .iter()
                        .zip(model.mass_values())
                        .map(|(k, m)| k + mu * m),
                );
                &self.shifted
            };
            if factor.factorize(pattern, values).is_ok() {
                self.rung = rung;
                return Ok(Some(mu));
            }
        }
        self.rung = SHIFTS.len();
        Ok(None)
    }

    /// The columns H̃_j = ∂(H_aᵀλ)/∂λ_j of `parameters` at positions `x` (zero for an
    /// actuator of another body), over the body's free DOFs, one after another in `out`
    /// (`parameters.len()` columns).
    pub(super) fn actuation_columns(
        &mut self,
        scene: &Scene,
        parameters: &[Parameter],
        x: &[Vec3],
        out: &mut [f64],
    ) {
        let b = self.body;
        let dofs = scene.bodies[b].pattern().dofs();
        let n = scene.bodies[b].pattern().n();
        let act = scene.body_actuation(b);
        self.nodal.resize(x.len(), Vec3::zeros());
        for (j, p) in parameters.iter().enumerate() {
            let col = &mut out[j * n..(j + 1) * n];
            col.iter_mut().for_each(|c| *c = 0.0);
            let Parameter::Actuator { body, index } = *p else {
                continue;
            };
            if body != b {
                continue;
            }
            self.nodal.iter_mut().for_each(|f| *f = Vec3::zeros());
            act.actuators[index].add_forces(x, 1.0, &mut self.rows, &mut self.nodal);
            dofs.gather_nodal(&self.nodal, col);
        }
    }

    /// Solves `ncols` columns (over the body's free DOFs, column major) in place with the
    /// last factor that succeeded, or with `fallback` (another factor of the same pattern)
    /// when given.
    pub(super) fn solve(
        &mut self,
        columns: &mut [f64],
        ncols: usize,
        fallback: Option<&NumericFactor>,
    ) {
        let factor = fallback.or(self.factor.as_ref()).expect("factorised first");
        if ncols > self.solve_columns {
            self.solve = MemBuffer::new(factor.solve_scratch(ncols));
            self.solve_columns = ncols;
        }
        let stack = MemStack::new(&mut self.solve);
        factor.solve_columns_in_place(columns, ncols, stack);
    }
}
