//! The `diffsoro dynamics` job (docs/outputs.md): RNEA, CRBA, ABA and their derivatives for one
//! `(q, v, τ, a)` case of a URDF robot, as plain vectors and row-list matrices.

use super::aba::aba;
use super::aba_derivatives::compute_aba_derivatives;
use super::crba::crba;
use super::data::Data;
use super::joint::unit_norm_violation;
use super::model::Model;
use super::rnea::rnea;
use super::rnea_derivatives::compute_rnea_derivatives;
use super::urdf::{Base, load_urdf};
use crate::error::{Error, Result};
use crate::math::DMat;

/// One evaluation point: configuration `q` (nq; free-flyer `x y z qx qy qz qw` first), velocity
/// `v` (nv; free-flyer twist in the root frame), joint forces `tau` and accelerations `a` (nv).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DynamicsCase {
    /// Configuration (length nq).
    pub q: Vec<f64>,
    /// Velocity (length nv).
    pub v: Vec<f64>,
    /// Joint forces for ABA (length nv).
    pub tau: Vec<f64>,
    /// Accelerations for RNEA (length nv).
    pub a: Vec<f64>,
    /// Fixed (default) or free-flyer base.
    #[serde(default)]
    pub base: Base,
}

/// The results: `rnea = τ(q, v, a)`, `crba = M(q)` (full symmetric), `aba = q̈(q, v, tau)`, the
/// RNEA derivatives at `(q, v, a)` and the ABA derivatives at `(q, v, tau)` (`aba_dtau = M⁻¹`,
/// full symmetric). Matrices are lists of rows; derivatives with respect to q are in the tangent
/// space (nv columns).
#[derive(Debug, Clone, serde::Serialize)]
pub struct DynamicsReport {
    /// Configuration dimension.
    pub nq: usize,
    /// Velocity dimension.
    pub nv: usize,
    /// τ(q, v, a).
    pub rnea: Vec<f64>,
    /// M(q).
    pub crba: Vec<Vec<f64>>,
    /// q̈(q, v, tau).
    pub aba: Vec<f64>,
    /// ∂τ/∂q at (q, v, a).
    pub rnea_dq: Vec<Vec<f64>>,
    /// ∂τ/∂v at (q, v, a).
    pub rnea_dv: Vec<Vec<f64>>,
    /// ∂q̈/∂q at (q, v, tau).
    pub aba_dq: Vec<Vec<f64>>,
    /// ∂q̈/∂v at (q, v, tau).
    pub aba_dv: Vec<Vec<f64>>,
    /// ∂q̈/∂τ = M⁻¹.
    pub aba_dtau: Vec<Vec<f64>>,
}

fn rows(m: &DMat) -> Vec<Vec<f64>> {
    (0..m.nrows())
        .map(|r| m.row(r).iter().copied().collect())
        .collect()
}

/// Checks the lengths and values of a case against `model`. Unit quaternions and `(cos, sin)`
/// pairs must have norm 1 within 1e-3 (rounded input is accepted and normalised by the joints;
/// a norm far from 1 is reported).
pub fn check_case(model: &Model, case: &DynamicsCase) -> Result<()> {
    for (field, x, n) in [
        ("q", &case.q, model.nq),
        ("v", &case.v, model.nv),
        ("tau", &case.tau, model.nv),
        ("a", &case.a, model.nv),
    ] {
        if x.len() != n {
            let dim = if field == "q" { "nq" } else { "nv" };
            return Err(Error::invalid(
                format!("case.{field}"),
                format!("has length {}, expected {dim} = {n}", x.len()),
            ));
        }
        if let Some(k) = x.iter().position(|v| !v.is_finite()) {
            return Err(Error::invalid(
                format!("case.{field}[{k}]"),
                "is not a finite number",
            ));
        }
    }
    for j in &model.joints[1..] {
        if let Some(norm) = unit_norm_violation(j, &case.q, 1e-3) {
            return Err(Error::invalid(
                format!("case.q (joint '{}')", j.name),
                format!("the unit quaternion / (cos, sin) pair has norm {norm}, expected 1"),
            ));
        }
    }
    Ok(())
}

/// Loads the URDF with the case's base and evaluates the dynamics report.
pub fn dynamics_report(urdf: &std::path::Path, case: &DynamicsCase) -> Result<DynamicsReport> {
    let model = load_urdf(urdf, case.base)?;
    check_case(&model, case)?;
    let mut data = Data::new(&model);
    let (q, v, a, tau) = (&case.q[..], &case.v[..], &case.a[..], &case.tau[..]);
    let rnea_v = rnea(&model, &mut data, q, v, a).as_slice().to_vec();
    let crba_m = rows(crba(&model, &mut data, q));
    let aba_v = aba(&model, &mut data, q, v, tau).as_slice().to_vec();
    compute_rnea_derivatives(&model, &mut data, q, v, a);
    let (rnea_dq, rnea_dv) = (rows(&data.dtau_dq), rows(&data.dtau_dv));
    compute_aba_derivatives(&model, &mut data, q, v, tau);
    Ok(DynamicsReport {
        nq: model.nq,
        nv: model.nv,
        rnea: rnea_v,
        crba: crba_m,
        aba: aba_v,
        rnea_dq,
        rnea_dv,
        aba_dq: rows(&data.ddq_dq),
        aba_dv: rows(&data.ddq_dv),
        aba_dtau: rows(&data.minv),
    })
}
