//! The derivative of one rigid step (paper 002 Eq. 3 and Appendix D): the dense Jacobian of
//! `(q⁺, v⁺)` with respect to `(q, v, τ)` for every free body and robot of a scene, stacked in
//! scene order (`RigidStepJacobian::offsets`), q in the tangent space of each system
//! (`RigidSystem::difference` / `displace`), τ the input applied in the step (N·m, N; a free
//! body's "input" is a generalised force `[f; n]` about its centre of mass, world axes).
//!
//! The step is `v⁺ = v + h (a(q, v, τ) + M⁻¹ J(q)ᵀ λ)`, `σ = J v⁺ + e(Φ, J v)`, λ the NCP's
//! solution, `q⁺ = q ⊕ h v⁺`. With λ held, v⁺ moves by
//!
//! ```text
//! dv⁺|_λ = ∂v⁺/∂q dq + ∂v⁺/∂v dv + h M⁻¹ (dτ + d(J(q)ᵀλ))         (scene::VelocityUpdateJacobian)
//! ```
//!
//! (for a robot the ABA derivatives at τ − d∘v + Jᵀλ, which include dM; for a free body its
//! Newton–Euler derivatives), and the contact velocity by `dσ|_λ = dJ v⁺ + J dv⁺|_λ + de`; the
//! NCP derivative on the active set (`contact::NcpDerivative`: breaking, sticking, sliding)
//! gives `dλ = N dσ|_λ`; then `dv⁺ = dv⁺|_λ + h M⁻¹ Jᵀ dλ` and
//! `dq⁺ = J_q dq + J_v dv⁺` (`rigid::integrate_jacobians`, `FreeBody::integrate_jacobians`).
//!
//! `J(q)` depends on q through the twists of the coordinates (a joint moves the axes after it:
//! `∂T_k/∂q_j = T_j × T_k`) and through the contact point, frame and gap, which move with both
//! bodies (`contact::contact_geometry_jacobian`, by the bodies' twists). A PD input adds
//! `∂τ/∂q = −kp`, `∂τ/∂v = −kd` (zero where the effort limit clamps it). A joint limit's row
//! has a constant J and `dΦ = ±dq_k`.

use crate::contact::{
    BoundaryGradient, ContactGeometryJacobian, NcpDerivative, PenetrationCorrection, classify,
    contact_frame_derivative,
};
use crate::error::{Error, Result};
use crate::math::{DMat, Mat3, Vec3};
use crate::rigid::spatial::{Vec6, ang};
use crate::scene::{
    RigidRow, RigidState, Scene, StepReport, Stepper, SystemBuffers, mode_tolerance, point_velocity,
};

use super::record::check_differentiable;

/// `∂(q⁺, v⁺)/∂(q, v, τ)` of one step of a scene's rigid systems (module doc), each block
/// N × N with N the total number of velocity coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct RigidStepJacobian {
    /// Where each system's coordinates start in the stacked vectors (systems + 1 entries).
    pub offsets: Vec<usize>,
    /// ∂q⁺/∂q (tangent spaces).
    pub dq_dq: DMat,
    /// ∂q⁺/∂v (s).
    pub dq_dv: DMat,
    /// ∂q⁺/∂τ.
    pub dq_dtau: DMat,
    /// ∂v⁺/∂q (1/s).
    pub dv_dq: DMat,
    /// ∂v⁺/∂v.
    pub dv_dv: DMat,
    /// ∂v⁺/∂τ.
    pub dv_dtau: DMat,
}

/// Advances `state` by one step of `scene` with `stepper` and returns the step's report and
/// the Jacobian of its rigid part. Errors as [`check_differentiable`] and [`Stepper::step`],
/// and when a contact changes features within the geometry's differentiation step.
pub fn rigid_step_jacobian(
    scene: &Scene,
    stepper: &mut Stepper,
    state: &mut crate::scene::State,
    boundary: BoundaryGradient,
) -> Result<(StepReport, RigidStepJacobian)> {
    check_differentiable(scene)?;
    let start = state.rigid.clone();
    let report = stepper.step(scene, state)?;
    let jac = RigidStepJacobian::of_step(scene, stepper, &start, &state.rigid, boundary)?;
    Ok((report, jac))
}

/// One side of a contact row as the chain sees it.
struct Side {
    system: usize,
    sign: f64,
    /// The twists of the system's coordinates at the side's body.
    twists: Vec<Vec6>,
}

/// The geometry of one row block and its variation with each coordinate moving it.
struct Row {
    sides: Vec<Side>,
    point: Vec3,
    frame: Mat3,
    gap: f64,
    /// (global coordinate, dp, dF, dΦ).
    variation: Vec<(usize, Vec3, Mat3, f64)>,
}

impl RigidStepJacobian {
    /// The Jacobian of the step `stepper` just took from the rigid states `start` to `end`
    /// (what [`rigid_step_jacobian`] does after stepping; public for timing it alone).
    /// Errors as [`rigid_step_jacobian`].
    pub fn of_step(
        scene: &Scene,
        stepper: &Stepper,
        start: &[RigidState],
        end: &[RigidState],
        boundary: BoundaryGradient,
    ) -> Result<RigidStepJacobian> {
        let rigid = &scene.rigid;
        let systems = &rigid.systems;
        let h = scene.simulation.dt;
        let mut offsets = vec![0];
        for s in systems {
            offsets.push(offsets.last().expect("non-empty") + s.nv());
        }
        let n = *offsets.last().expect("non-empty");
        let mut bufs: Vec<SystemBuffers> = systems
            .iter()
            .zip(start)
            .map(|(sys, st)| {
                let mut b = SystemBuffers::new(sys);
                sys.kinematics(&mut b, &st.q);
                b
            })
            .collect();
        let ws = stepper.rigid();
        let lambda = ws.lambda();
        let geometry = ws.row_geometry(rigid, &scene.contact)?;
        let blocks = ws.contacts();
        let m = blocks.len();
        // Rows: sides, twists and the geometry's variation per coordinate.
        let mut rows = Vec::with_capacity(m);
        for (c, geo) in blocks.iter().zip(&geometry) {
            let row = match (c.row, geo) {
                (
                    RigidRow::Contact {
                        a, b, point, frame, ..
                    },
                    Some(geo),
                ) => {
                    let mut sides = Vec::new();
                    for (side, sign) in [(Some(a), 1.0), (b, -1.0)] {
                        if let Some(side) = side {
                            let mut twists = Vec::new();
                            systems[side.system].body_twists(
                                &bufs[side.system],
                                &start[side.system].q,
                                side.joint,
                                &mut twists,
                            );
                            sides.push(Side {
                                system: side.system,
                                sign,
                                twists,
                            });
                        }
                    }
                    let variation = geometry_variation(&sides, &offsets, &frame, geo);
                    Row {
                        sides,
                        point,
                        frame,
                        gap: c.gap,
                        variation,
                    }
                }
                (RigidRow::Limit { system, dof, sign }, _) => Row {
                    sides: Vec::new(),
                    point: Vec3::zeros(),
                    frame: Mat3::identity(),
                    gap: c.gap,
                    variation: vec![(offsets[system] + dof, Vec3::zeros(), Mat3::zeros(), sign)],
                },
                _ => {
                    return Err(Error::invalid(
                        "rigid step derivative",
                        "a row between a soft and a rigid body: not covered",
                    ));
                }
            };
            rows.push(row);
        }
        let is_limit = |c: &crate::scene::RigidContact| matches!(c.row, RigidRow::Limit { .. });
        // J (3m × n) and the generalised contact force Q = Jᵀλ.
        let mut jac = DMat::zeros(3 * m, n);
        for (i, (row, c)) in rows.iter().zip(blocks).enumerate() {
            if let RigidRow::Limit { system, dof, sign } = c.row {
                jac[(3 * i + 2, offsets[system] + dof)] = sign;
                continue;
            }
            for side in &row.sides {
                for (k, t) in side.twists.iter().enumerate() {
                    let v = side.sign * (point_velocity(t, &row.point));
                    for r in 0..3 {
                        jac[(3 * i + r, offsets[side.system] + k)] += row.frame.column(r).dot(&v);
                    }
                }
            }
        }
        let lam = DMat::from_column_slice(3 * m, 1, lambda);
        let force = jac.transpose() * &lam;
        // dQ/dq (n × n) and d(J w)/dq for w = v⁺ and w = v (3m × n).
        let vp: Vec<f64> = end.iter().flat_map(|s| s.v.iter().copied()).collect();
        let v0: Vec<f64> = start.iter().flat_map(|s| s.v.iter().copied()).collect();
        let mut dforce = DMat::zeros(n, n);
        let mut djv_plus = DMat::zeros(3 * m, n);
        let mut djv_start = DMat::zeros(3 * m, n);
        for (i, (row, c)) in rows.iter().zip(blocks).enumerate() {
            if is_limit(c) {
                continue;
            }
            let li = Vec3::new(lambda[3 * i], lambda[3 * i + 1], lambda[3 * i + 2]);
            let f = row.frame * li;
            // Per side: the body's point velocity and ω for w = v⁺ and w = v (independent
            // of the coordinate varied), and each twist's velocity at the point.
            let moving: Vec<_> = row
                .sides
                .iter()
                .map(|side| {
                    let o = offsets[side.system];
                    let at: Vec<Vec3> = side
                        .twists
                        .iter()
                        .map(|t| point_velocity(t, &row.point))
                        .collect();
                    let motion = |w: &[f64]| {
                        let (mut vel, mut omega) = (Vec3::zeros(), Vec3::zeros());
                        for (k, t) in side.twists.iter().enumerate() {
                            vel += at[k] * w[o + k];
                            omega += ang(t) * w[o + k];
                        }
                        (vel, omega)
                    };
                    (motion(&vp), motion(&v0), at)
                })
                .collect();
            let mut dt_at = Vec::new();
            for &(j, dp, df, _) in &row.variation {
                let dfl = df * li;
                for (side, (plus, start, at)) in row.sides.iter().zip(&moving) {
                    let sys = &systems[side.system];
                    let o = offsets[side.system];
                    // ∂T_k/∂q_j at the point, for a coordinate of this side's system.
                    dt_at.clear();
                    if j >= o && j < o + sys.nv() {
                        dt_at.extend((0..sys.nv()).map(|k| {
                            point_velocity(
                                &sys.twist_derivative(&side.twists, j - o, k),
                                &row.point,
                            )
                        }));
                    }
                    for (w, (vel, omega), out) in
                        [(&vp, plus, &mut djv_plus), (&v0, start, &mut djv_start)]
                    {
                        let mut dvel = omega.cross(&dp);
                        for (k, d) in dt_at.iter().enumerate() {
                            dvel += d * w[o + k];
                        }
                        for r in 0..3 {
                            out[(3 * i + r, j)] += side.sign
                                * (df.column(r).dot(vel) + row.frame.column(r).dot(&dvel));
                        }
                    }
                    // dQ_k/dq_j.
                    for (k, t) in side.twists.iter().enumerate() {
                        let mut d = at[k].dot(&dfl) + ang(t).cross(&dp).dot(&f);
                        if let Some(dk) = dt_at.get(k) {
                            d += dk.dot(&f);
                        }
                        dforce[(o + k, j)] += side.sign * d;
                    }
                }
            }
        }
        // Per system: the velocity update's derivatives, the integration's, the input's.
        let mut dvl = DMat::zeros(n, 3 * n);
        let mut minv_h = DMat::zeros(n, n);
        let mut jq = DMat::zeros(n, n);
        let mut jv = DMat::zeros(n, n);
        let mut dtau_dq = vec![0.0; n];
        let mut dtau_dv = vec![0.0; n];
        for (t, sys) in systems.iter().enumerate() {
            let (o, nv) = (offsets[t], sys.nv());
            let st = RigidState {
                q: start[t].q.clone(),
                v: start[t].v.clone(),
                tau: end[t].tau.clone(),
            };
            // The buffers hold the kinematics at q (the twists above are read already).
            let q_force: Vec<f64> = (0..nv).map(|k| force[o + k]).collect();
            let vu = sys.velocity_update_jacobian(&mut bufs[t], &st, &q_force, h);
            let (a, b) = sys.input_jacobian(&st)?;
            dtau_dq[o..o + nv].copy_from_slice(&a);
            dtau_dv[o..o + nv].copy_from_slice(&b);
            let (mut iq, mut iv) = (DMat::zeros(nv, nv), DMat::zeros(nv, nv));
            sys.integrate_jacobians(&end[t].v, h, &mut iq, &mut iv);
            for r in 0..nv {
                for c in 0..nv {
                    dvl[(o + r, o + c)] = vu.dq[(r, c)];
                    dvl[(o + r, n + o + c)] = vu.dv[(r, c)];
                    dvl[(o + r, 2 * n + o + c)] = vu.dforce[(r, c)];
                    minv_h[(o + r, o + c)] = vu.dforce[(r, c)];
                    jq[(o + r, o + c)] = iq[(r, c)];
                    jv[(o + r, o + c)] = iv[(r, c)];
                }
            }
        }
        // dv⁺|_λ: add h M⁻¹ dQ/dq to the q columns.
        let coupled = &minv_h * &dforce;
        for r in 0..n {
            for c in 0..n {
                dvl[(r, c)] += coupled[(r, c)];
            }
        }
        let mut dv = dvl.clone();
        if m > 0 {
            // dσ|_λ = dJ v⁺ + J dv⁺|_λ + de.
            let mut dsigma = &jac * &dvl;
            let correction = PenetrationCorrection::default();
            for (i, row) in rows.iter().enumerate() {
                let (s_phi, s_v) = correction.normal_slopes(h, row.gap)?;
                for r in 0..3 {
                    for c in 0..n {
                        dsigma[(3 * i + r, c)] += djv_plus[(3 * i + r, c)];
                    }
                }
                let nr = 3 * i + 2;
                for &(j, _, _, dphi) in &row.variation {
                    dsigma[(nr, j)] += s_phi * dphi;
                }
                for c in 0..n {
                    dsigma[(nr, c)] += s_v * djv_start[(nr, c)];
                    dsigma[(nr, n + c)] += s_v * jac[(nr, c)];
                }
            }
            let group = stepper
                .contact()
                .groups()
                .iter()
                .find(|g| g.members().is_empty())
                .expect("a step with rigid rows solved a rigid NCP");
            assert_eq!(
                group.lambda().len(),
                3 * m,
                "the rigid NCP holds the rigid rows"
            );
            let modes = classify(
                group.lambda(),
                group.sigma(),
                mode_tolerance(scene.contact.settings.tolerance),
            );
            let ncp = NcpDerivative::new(
                group.delassus(),
                group.friction(),
                group.lambda(),
                group.sigma(),
                &modes,
                boundary,
            )?;
            let mut dlambda = DMat::zeros(3 * m, 3 * n);
            ncp.tangent_many(&dsigma, &mut dlambda);
            dv += &minv_h * jac.transpose() * dlambda;
        }
        // dq⁺ = J_q [I 0 0] + J_v dv⁺.
        let mut dq = &jv * &dv;
        for r in 0..n {
            for c in 0..n {
                dq[(r, c)] += jq[(r, c)];
            }
        }
        // The input's dependence on the state.
        for mat in [&mut dq, &mut dv] {
            for c in 0..n {
                for r in 0..n {
                    let t = mat[(r, 2 * n + c)];
                    mat[(r, c)] += t * dtau_dq[c];
                    mat[(r, n + c)] += t * dtau_dv[c];
                }
            }
        }
        let block = |m: &DMat, k: usize| m.columns(k * n, n).into_owned();
        Ok(RigidStepJacobian {
            dq_dq: block(&dq, 0),
            dq_dv: block(&dq, 1),
            dq_dtau: block(&dq, 2),
            dv_dq: block(&dv, 0),
            dv_dv: block(&dv, 1),
            dv_dtau: block(&dv, 2),
            offsets,
        })
    }
}

/// Each coordinate moving a contact row's bodies, with the variation of its point, frame and
/// gap: `dx/dq_j = Σ_sides ∂x/∂ξ_side T_j(side)`.
fn geometry_variation(
    sides: &[Side],
    offsets: &[usize],
    frame: &Mat3,
    geo: &ContactGeometryJacobian,
) -> Vec<(usize, Vec3, Mat3, f64)> {
    let normal: Vec3 = frame.column(2).into_owned();
    let mut out: Vec<(usize, Vec3, Vec3, f64)> = Vec::new();
    for (s, side) in sides.iter().enumerate() {
        for (k, t) in side.twists.iter().enumerate() {
            if t.iter().all(|x| *x == 0.0) {
                continue;
            }
            let j = offsets[side.system] + k;
            let (mut dp, mut dn, mut dphi) = (Vec3::zeros(), Vec3::zeros(), 0.0);
            for c in 0..6 {
                dp += geo.point[s][c] * t[c];
                dn += geo.normal[s][c] * t[c];
                dphi += geo.gap[s][c] * t[c];
            }
            match out.iter_mut().find(|e| e.0 == j) {
                Some(e) => {
                    e.1 += dp;
                    e.2 += dn;
                    e.3 += dphi;
                }
                None => out.push((j, dp, dn, dphi)),
            }
        }
    }
    out.into_iter()
        .map(|(j, dp, dn, dphi)| (j, dp, contact_frame_derivative(&normal, &dn), dphi))
        .collect()
}
