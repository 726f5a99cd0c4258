//! Forward (JVP) and reverse (VJP) derivatives of one step from its [`StepRecord`]
//! (equations in the module doc of `diff`): the shared buffers and input checks here, one
//! file per mode (`forward`: JVP and the contact-force tangents; `reverse`: VJP;
//! `position_jacobian`: the full d v⁺/d x of a contact-free step), and `mass_damping`: the
//! right-hand sides of the Rayleigh coefficients and the density.

use faer::dyn_stack::{MemBuffer, MemStack};

use crate::actuator::Drive;
use crate::error::{Error, Result};
use crate::fem::{MaterialParameter, ParameterDerivatives, StiffnessDerivativeState};
use crate::math::{DMat, Vec3};
use crate::scene::{PrescribedDerivative, Scene};

mod forward;
mod mass_damping;
mod position_jacobian;
mod reverse;
mod rigid_forward;
mod rigid_reverse;

use super::parameter::Parameter;
use super::record::StepRecord;
use super::tangent::{BodyTangent, StateTangent};

/// One input direction of a step: a tangent of the start state and one component per
/// parameter of the list the derivative is taken for.
#[derive(Debug, Clone, PartialEq)]
pub struct InputTangent {
    /// Direction in the start state (x, v).
    pub state: StateTangent,
    /// Direction in the parameters (same order as the parameter list).
    pub parameters: Vec<f64>,
}

/// The cotangents of a step's inputs for one output cotangent (reverse mode).
#[derive(Debug, Clone, PartialEq)]
pub struct StepVjp {
    /// Cotangent of the start state (x, v).
    pub state: StateTangent,
    /// Cotangent of each parameter of the list.
    pub parameters: Vec<f64>,
}

/// One nodal field per body of the scene.
type NodalFields = Vec<Vec<Vec3>>;

/// Per-body buffers of the step derivatives, allocated once per scene.
struct BodyBuffers {
    t: StiffnessDerivativeState,
    params: ParameterDerivatives,
    /// Per material parameter (E, ν): its column of the right-hand side,
    /// h ∂f/∂p − c_K ∂(K v⁺)/∂p over the free DOFs, when computed for the current record.
    material_rhs: [Vec<f64>; 2],
    nodal: Vec<Vec3>,
    nodal2: Vec<Vec3>,
    nodal3: Vec<Vec3>,
    rows: Vec<(usize, Vec3)>,
    red: Vec<f64>,
    red2: Vec<f64>,
    columns: Vec<f64>,
    solve: MemBuffer,
    solve2: MemBuffer,
    /// dλ_c of the last forward pass (3 rows per contact, one column per direction).
    contact_force_tangents: DMat,
    /// Columns `solve` and `solve2` each hold scratch for.
    solve_columns: usize,
    /// The pinned servos' derivatives (`scene::step::free::prescribed_derivative`).
    prescribed: PrescribedDerivative,
    /// dθ⁺ per direction and pinned servo (direction-major).
    dtheta: Vec<f64>,
    /// Pinned rows: dx_p⁺ / x̄_p and dv_p⁺ / v̄_p⁺ scratch, and M r̄ (per node).
    pinned_x: Vec<Vec3>,
    pinned_v: Vec<Vec3>,
    pinned_m: Vec<Vec3>,
    /// v⁺ over the free DOFs (`free_velocities`).
    v_free: Vec<Vec3>,
    /// The right-hand sides of the mass and damping parameters α, β, ρ (`mass_damping`).
    mass_damping: mass_damping::MassDampingRhs,
}

/// The derivatives of one step (forward and reverse mode), with reusable buffers.
pub struct StepDerivative {
    bodies: Vec<BodyBuffers>,
}

impl StepDerivative {
    /// Buffers for the bodies of `scene`.
    pub fn new(scene: &Scene) -> StepDerivative {
        StepDerivative {
            bodies: scene
                .bodies
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let n = b.node_count();
                    let nr = b.pattern().n();
                    BodyBuffers {
                        t: b.stiffness_derivative_state(),
                        params: b.parameter_derivatives_state(),
                        material_rhs: [vec![0.0; nr], vec![0.0; nr]],
                        nodal: vec![Vec3::zeros(); n],
                        nodal2: vec![Vec3::zeros(); n],
                        nodal3: vec![Vec3::zeros(); n],
                        rows: Vec::new(),
                        red: vec![0.0; nr],
                        red2: vec![0.0; nr],
                        columns: Vec::new(),
                        solve: MemBuffer::new(faer::dyn_stack::StackReq::EMPTY),
                        solve2: MemBuffer::new(faer::dyn_stack::StackReq::EMPTY),
                        contact_force_tangents: DMat::zeros(0, 0),
                        solve_columns: 0,
                        prescribed: PrescribedDerivative::new(b, scene.body_actuation(i)),
                        dtheta: Vec::new(),
                        pinned_x: vec![Vec3::zeros(); n],
                        pinned_v: vec![Vec3::zeros(); n],
                        pinned_m: vec![Vec3::zeros(); n],
                        v_free: vec![Vec3::zeros(); n],
                        mass_damping: mass_damping::MassDampingRhs::new(b),
                    }
                })
                .collect(),
        }
    }
}

impl BodyBuffers {
    /// Fills `material_rhs` for the material parameters `asked` (E, ν), as
    /// [`Self::material_rhs`] does for each. With both, and neither material regions nor
    /// pinned servos, ν's element pass also forms K v⁺ (one dF and one dR per element serve
    /// both), in place of E's product with the assembled K.
    fn material_rhs_asked(
        &mut self,
        body: &crate::fem::SoftBody,
        rec: &super::record::BodyRecord,
        h: f64,
        asked: [bool; 2],
    ) -> Result<()> {
        let fused = asked == [true, true]
            && !body.has_material_regions()
            && !self.prescribed.is_active()
            && rec.points.len() == body.elements().len();
        if !fused {
            for (parameter, _) in MaterialParameter::ALL
                .into_iter()
                .zip(asked)
                .filter(|a| a.1)
            {
                self.material_rhs(body, rec, h, parameter)?;
            }
            return Ok(());
        }
        let dofs = body.pattern().dofs();
        let c_k = h * body.options().rayleigh_stiffness + h * h;
        body.evaluate_parameter_derivatives_and_action_at(
            &rec.points,
            &rec.v_plus,
            MaterialParameter::PoissonRatio,
            &mut self.params,
        );
        let [e_rhs, nu_rhs] = &mut self.material_rhs;
        let e = body.material().young_modulus();
        force_and_action(
            dofs,
            (&rec.forces, h / e),
            (&self.params.action, -c_k / e),
            e_rhs,
        );
        force_and_action(
            dofs,
            (&self.params.forces, h),
            (&self.params.stiffness_action, -c_k),
            nu_rhs,
        );
        Ok(())
    }

    /// Fills `material_rhs` for `parameter`: h ∂f/∂p − c_K ∂(K v⁺)/∂p over the free DOFs.
    /// For E it follows from the record without an element pass: every law's Lamé pair is
    /// proportional to E at fixed ν (`material::Lame`), and f and K are linear in it, so
    /// ∂f/∂E = f/E and ∂(K v⁺)/∂E = K v⁺/E. For ν, one element pass from the material
    /// points the step kept (no re-evaluation of the law: no co-rotational SVD).
    fn material_rhs(
        &mut self,
        body: &crate::fem::SoftBody,
        rec: &super::record::BodyRecord,
        h: f64,
        parameter: MaterialParameter,
    ) -> Result<()> {
        let pattern = body.pattern();
        let dofs = pattern.dofs();
        let c_k = h * body.options().rayleigh_stiffness + h * h;
        let out = &mut self.material_rhs[material_slot(parameter)];
        match parameter {
            // Every law is linear in E at fixed ν: ∂f/∂E = f/E and ∂K/∂E = K/E, unless some
            // elements have their own material (regions), which E does not reach.
            MaterialParameter::YoungModulus if !body.has_material_regions() => {
                let e = body.material().young_modulus();
                out.fill(0.0);
                dofs.add_nodal(&rec.forces, h / e, out);
                dofs.gather_nodal(&rec.v_plus, &mut self.red2);
                pattern.symmetric_product_add(rec.stiffness(), -c_k / e, &self.red2, out);
                if self.prescribed.is_active() {
                    // −c_K K_fp v_p⁺ / E, the pinned horns' coupling.
                    assert_points(body, rec);
                    self.nodal.iter_mut().for_each(|f| *f = Vec3::zeros());
                    self.prescribed.add_stiffness_coupling(
                        body,
                        &rec.points,
                        &rec.v_plus,
                        -c_k / e,
                        &mut self.nodal,
                    );
                    dofs.add_nodal(&self.nodal, 1.0, out);
                }
            }
            _ => {
                if rec.points.len() == body.elements().len() {
                    body.evaluate_parameter_derivatives_at(
                        &rec.points,
                        &rec.v_plus,
                        parameter,
                        &mut self.params,
                    );
                } else {
                    body.evaluate_parameter_derivatives(
                        &rec.x,
                        &rec.v_plus,
                        parameter,
                        &mut self.params,
                    )?;
                }
                force_and_action(
                    dofs,
                    (&self.params.forces, h),
                    (&self.params.stiffness_action, -c_k),
                    out,
                );
            }
        }
        Ok(())
    }
}

/// A material parameter's right-hand side over the free DOFs, `out = a·f + b·k` from its
/// force term `(f, a)` and its stiffness-action term `(k, b)` (nodal fields).
fn force_and_action(
    dofs: &crate::linalg::DofMap,
    (forces, a): (&[Vec3], f64),
    (action, b): (&[Vec3], f64),
    out: &mut [f64],
) {
    out.fill(0.0);
    dofs.add_nodal(forces, a, out);
    dofs.add_nodal(action, b, out);
}

fn material_slot(parameter: MaterialParameter) -> usize {
    match parameter {
        MaterialParameter::YoungModulus => 0,
        MaterialParameter::PoissonRatio => 1,
    }
}

/// The records keep every element's material point (`Recorder` asks the stepper to): the
/// pinned servos' coupling derivatives use them.
fn assert_points(body: &crate::fem::SoftBody, rec: &super::record::BodyRecord) {
    assert_eq!(
        rec.points.len(),
        body.elements().len(),
        "the step record keeps every element's material point"
    );
}

/// Adds h ∂(H_aᵀλ)/∂x dx − c_K d(K_a v⁺)/dx dx, the change of the driven actuators' forces
/// (`actuator`'s) for the nodal displacement `dx` (m per unit direction) at the record's x
/// and λ_a, with that of the force-driven cables' tangent held in A
/// (`scene::step::free::actuator_tangent`, applied to `v_free`, v⁺ over the free DOFs), to the reduced
/// `col`; `forces` (one entry per node) holds those nodal terms on return. Symmetric in
/// `dx`, so it serves the reverse mode with the cotangent in place of `dx`.
#[allow(clippy::too_many_arguments)]
fn add_actuator_force_tangent(
    actuation: &crate::scene::BodyActuation,
    rec: &super::record::BodyRecord,
    (h, c_k): (f64, f64),
    dofs: &crate::linalg::DofMap,
    v_free: &[Vec3],
    dx: &[Vec3],
    forces: &mut [Vec3],
    col: &mut [f64],
) {
    forces.iter_mut().for_each(|f| *f = Vec3::zeros());
    actuation.add_driven_force_derivative(
        |_| true,
        &rec.x,
        &rec.actuator_forces,
        h,
        0.0,
        dx,
        forces,
    );
    crate::scene::add_tangent_derivative_action(
        actuation,
        &rec.x,
        &rec.actuator_forces,
        v_free,
        dx,
        -c_k,
        forces,
    );
    dofs.add_nodal(forces, 1.0, col);
}

/// v⁺ of the record over the free DOFs (zero on fixed and pinned nodes) into `out`, with
/// `red` as scratch: what the cables' tangent in A acts on.
fn free_velocities(
    dofs: &crate::linalg::DofMap,
    rec: &super::record::BodyRecord,
    red: &mut [f64],
    out: &mut [Vec3],
) {
    dofs.gather_nodal(&rec.v_plus, red);
    dofs.scatter_nodal(red, out);
}

fn dot(a: &[Vec3], b: &[Vec3]) -> f64 {
    a.iter().zip(b).map(|(u, v)| u.dot(v)).sum()
}

/// Errors unless `t` has one entry per body and one row per node of each.
fn check_shape(scene: &Scene, t: &StateTangent, what: &str) -> Result<()> {
    let ok = t.bodies.len() == scene.bodies.len()
        && t.bodies.iter().zip(&scene.bodies).all(|(tb, b)| {
            tb.positions.len() == b.node_count() && tb.velocities.len() == b.node_count()
        });
    if !ok {
        return Err(Error::invalid(
            what,
            "does not have one row per node of every soft body of the scene",
        ));
    }
    let systems = &scene.rigid.systems;
    let rigid_ok = t.rigid.is_empty()
        || t.rigid.len() == systems.len()
            && t.rigid
                .iter()
                .zip(systems)
                .all(|(r, s)| r.q.len() == s.nv() && r.v.len() == s.nv());
    if rigid_ok {
        Ok(())
    } else {
        Err(Error::invalid(
            what,
            "does not have one rigid tangent per free body and robot of the scene (nv components of q and of v each), nor an empty rigid part",
        ))
    }
}
