//! The rigid part of the forward pass (JVP) of a step whose NCPs may hold rigid rows and
//! soft–rigid rows (`diff::row_chain`), paper 002 Eq. 3 with paper 004 Eq. 10-11: for the
//! rigid coordinates stacked in n (q in each system's tangent space) and an input direction
//! (dq, dv) of them,
//!
//! ```text
//! a_r = ∂v⁺/∂q dq + ∂v⁺/∂v dv + h M⁻¹ (∂τ/∂q dq + ∂τ/∂v dv) + h M⁻¹ ∂(Jᵀλ)/∂z z
//!       + ∂v⁺/∂m dm                       (a free body's mass, `mass:BODY`: −h M⁻¹ Q / m)
//! dσ_chain = J a_r + H_L a_L + ∂σ/∂z z + s_v (J dv + H_L du_L)|_normal rows
//! dv⁺ = a_r + h M⁻¹ Jᵀ dλ,   dq⁺ = J_q dq + J_v dv⁺
//! ```
//!
//! with z = [dq; dx_L] the chain's inputs, a_L the soft nodes' contact-free velocity tangents
//! and dλ the NCP's (the soft bodies' part of the pass is in `forward`).

use super::*;
use crate::diff::contact_chain::ContactRecord;
use crate::diff::rigid_record::RigidRecord;
use crate::diff::row_chain::RowChain;
use crate::diff::tangent::RigidTangent;

/// The rigid part of k input directions, stacked (n × k each).
pub(super) struct RigidDirections {
    pub(super) dq: DMat,
    pub(super) dv: DMat,
    /// dτ of the `tau:ROBOT[k]` parameters and kp_k dτ of the `target:ROBOT[k]` ones, zero
    /// where the effort limit clamped the input.
    pub(super) dtau: DMat,
    /// ∂v⁺/∂m dm of the `mass:BODY` parameters, with Q held.
    pub(super) dmass: DMat,
    /// dv⁺ (after [`free_rigid_response`] and the NCPs' responses).
    pub(super) a: DMat,
}

/// The stacked rigid components of `inputs` (absent ones zero), and their components along
/// the rigid inputs among `parameters`.
pub(super) fn rigid_directions(
    scene: &Scene,
    rec: &RigidRecord,
    parameters: &[Parameter],
    inputs: &[InputTangent],
) -> RigidDirections {
    let (n, k) = (rec.n(), inputs.len());
    let mut dq = DMat::zeros(n, k);
    let mut dv = DMat::zeros(n, k);
    let mut dtau = DMat::zeros(n, k);
    let mut dmass = DMat::zeros(n, k);
    for (c, input) in inputs.iter().enumerate() {
        for (p, d) in parameters.iter().zip(&input.parameters) {
            match *p {
                Parameter::RigidInput { system, dof } | Parameter::RigidTarget { system, dof }
                    if scene.rigid.systems[system].input_unclamped(&rec.end[system], dof) =>
                {
                    dtau[(rec.offsets[system] + dof, c)] += d * p.input_gain(scene);
                }
                Parameter::RigidMass { system } if *d != 0.0 => {
                    let mut col = dmass.column_mut(c);
                    col += rec.mass_column(system) * *d;
                }
                _ => {}
            }
        }
        rec.stack(
            &input.state.rigid,
            |r, x| dq[(r, c)] = x,
            |r, x| dv[(r, c)] = x,
        );
    }
    RigidDirections {
        dq,
        dv,
        dtau,
        dmass,
        a: DMat::zeros(n, k),
    }
}

/// The chain's inputs z = [dq; dx_L] per direction (nz × k); `dx_free` per direction and
/// body, `dq` the stacked rigid directions (`None` without rigid systems).
pub(super) fn chain_inputs(chain: &RowChain, dq: Option<&DMat>, dx_free: &[NodalFields]) -> DMat {
    let k = dx_free.len();
    let mut z = DMat::zeros(chain.nz(), k);
    for c in 0..k {
        if let Some(dq) = dq {
            for j in 0..chain.n {
                z[(j, c)] = dq[(j, c)];
            }
        }
        for (l, &(b, node)) in chain.local.iter().enumerate() {
            for d in 0..3 {
                z[(chain.n + 3 * l + d, c)] = dx_free[c][b][node][d];
            }
        }
    }
    z
}

/// Adds h ∂(H_Lᵀλ)/∂z z to the nodal soft forces `force` (per direction, then body).
pub(super) fn add_chain_force(chain: &RowChain, z: &DMat, h: f64, force: &mut [NodalFields]) {
    let df = &chain.dsoft_force * z;
    for (c, per_body) in force.iter_mut().enumerate() {
        for (l, &(b, node)) in chain.local.iter().enumerate() {
            for d in 0..3 {
                per_body[b][node][d] += h * df[(3 * l + d, c)];
            }
        }
    }
}

/// a_r before the NCPs' responses (module doc), into `dirs.a`; `chains` the record's chains
/// with their inputs z.
pub(super) fn free_rigid_response(
    rec: &RigidRecord,
    dirs: &mut RigidDirections,
    chains: &[(&RowChain, &DMat)],
) {
    let n = rec.n();
    let k = dirs.dq.ncols();
    let minv_h = rec.minv_h();
    let mut tau = DMat::zeros(n, k);
    for c in 0..k {
        for r in 0..n {
            tau[(r, c)] = rec.dtau_dq[r] * dirs.dq[(r, c)]
                + rec.dtau_dv[r] * dirs.dv[(r, c)]
                + dirs.dtau[(r, c)];
        }
    }
    let mut force = DMat::zeros(n, k);
    for (chain, z) in chains {
        force += &chain.dforce * *z;
    }
    dirs.a = rec.update.columns(0, n) * &dirs.dq
        + rec.update.columns(n, n) * &dirs.dv
        + minv_h * (tau + force)
        + &dirs.dmass;
}

impl ContactRecord {
    /// Number of row blocks of the NCP (the soft ones, then the chain's).
    pub(crate) fn block_count(&self) -> usize {
        self.len() + self.chain.as_ref().map_or(0, |c| c.rows.len())
    }
}

/// The chain rows' dσ for direction column `c` (module doc) into `dq` (the NCP's, indexed by
/// block): `a_r`, `dv_r` the rigid dv⁺|_λ and dv (n × k; `None` without rigid systems), `a`
/// and `dv_soft` the soft nodal fields per (body, node), `z` the chain's inputs.
#[allow(clippy::too_many_arguments)]
pub(super) fn chain_velocity_variation(
    chain: &RowChain,
    c: usize,
    rigid: Option<(&DMat, &DMat)>,
    a: impl Fn(usize, usize) -> Vec3,
    dv_soft: impl Fn(usize, usize) -> Vec3,
    z: &DMat,
    dq: &mut [f64],
) {
    let n = chain.n;
    let local = |f: &dyn Fn(usize, usize) -> Vec3| -> Vec<f64> {
        chain
            .local
            .iter()
            .flat_map(|&(b, node)| {
                let v = f(b, node);
                [v.x, v.y, v.z]
            })
            .collect()
    };
    let (a_l, dv_l) = (local(&a), local(&dv_soft));
    for (i, row) in chain.rows.iter().enumerate() {
        for r in 0..3 {
            let ri = 3 * i + r;
            let mut s: f64 = (0..chain.nz())
                .map(|j| chain.dsigma[(ri, j)] * z[(j, c)])
                .sum();
            s += (0..a_l.len())
                .map(|j| chain.soft_jac[(ri, j)] * a_l[j])
                .sum::<f64>();
            if let Some((a_r, dv_r)) = rigid {
                s += (0..n)
                    .map(|j| chain.jac[(ri, j)] * a_r[(j, c)])
                    .sum::<f64>();
                if r == 2 {
                    s += chain.s_v[i]
                        * (0..n)
                            .map(|j| chain.jac[(ri, j)] * dv_r[(j, c)])
                            .sum::<f64>();
                }
            }
            if r == 2 {
                s += chain.s_v[i]
                    * (0..dv_l.len())
                        .map(|j| chain.soft_jac[(ri, j)] * dv_l[j])
                        .sum::<f64>();
            }
            dq[3 * row.block + r] = s;
        }
    }
}

/// a_r += h M⁻¹ Jᵀ dλ_chain for every direction (`dlambda`: the NCP's dλ, by block).
pub(super) fn add_rigid_response(
    chain: &RowChain,
    rec: &RigidRecord,
    dlambda: &DMat,
    a_r: &mut DMat,
) {
    let m = chain.rows.len();
    let mut dl = DMat::zeros(3 * m, dlambda.ncols());
    for (i, row) in chain.rows.iter().enumerate() {
        for r in 0..3 {
            dl.row_mut(3 * i + r)
                .copy_from(&dlambda.row(3 * row.block + r));
        }
    }
    *a_r += rec.minv_h() * (chain.jac.transpose() * dl);
}

/// The rigid outputs of direction `c`: dv⁺ = a_r, dq⁺ = J_q dq + J_v dv⁺, per system.
pub(super) fn rigid_outputs(
    rec: &RigidRecord,
    dirs: &RigidDirections,
    c: usize,
) -> Vec<RigidTangent> {
    let dq_plus = &rec.jq * dirs.dq.column(c) + &rec.jv * dirs.a.column(c);
    rec.split(dq_plus.as_slice(), dirs.a.column(c).as_slice())
}
