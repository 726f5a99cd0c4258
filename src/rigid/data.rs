//! The buffers the algorithms write (Pinocchio's `Data`): allocated once for a [`Model`], then
//! reused by every call, so no algorithm allocates.

use super::model::Model;
use super::spatial::{Mat6, OriginInertia, Se3, Vec6};
use crate::math::{DMat, DVec};

/// A 6 × n matrix (n spatial columns).
pub type Mat6xN = nalgebra::Matrix6xX<f64>;

/// Work and result buffers for one [`Model`]. Fields are public so results can be read after an
/// algorithm ran; which algorithm fills which field is said on each field.
#[derive(Debug, Clone)]
pub struct Data {
    /// Pose of each joint frame in its parent joint's frame (`liMi`).
    pub li_m_i: Vec<Se3>,
    /// Pose of each joint frame in the world (`oMi`).
    pub o_m_i: Vec<Se3>,
    /// Spatial velocity of each body in its own frame (m/s, rad/s).
    pub v: Vec<Vec6>,
    /// Spatial (classical-minus-ω×v) acceleration of each body in its own frame; in RNEA it
    /// includes the fictitious gravity acceleration (`a − g`).
    pub a: Vec<Vec6>,
    /// Spatial force transmitted by each joint, in its own frame (RNEA), N and N·m.
    pub f: Vec<Vec6>,
    /// Velocities, accelerations (or bias accelerations), momenta and forces in the world frame.
    pub ov: Vec<Vec6>,
    /// World-frame accelerations (ABA: bias then total; derivatives: with gravity).
    pub oa: Vec<Vec6>,
    /// World-frame momenta `oY ov`.
    pub oh: Vec<Vec6>,
    /// World-frame forces (RNEA derivatives: subtree forces; ABA: bias forces).
    pub of: Vec<Vec6>,
    /// World-frame inertia of each body alone (ABA, M⁻¹, derivatives).
    pub oinertia: Vec<Mat6>,
    /// World-frame composite rigid-body inertias about the world origin (CRBA).
    pub o_icrb: Vec<OriginInertia>,
    /// Composite rigid-body inertias in each joint's own frame, about its origin (CRBA).
    pub ycrb: Vec<OriginInertia>,
    /// Per joint, `Some(k)` when its `liMi` rotates about the coordinate axis `e_k` alone (a
    /// revolute joint about `e_k` whose placement does not rotate), for CRBA's cheaper
    /// transforms; `None` otherwise.
    pub li_axis: Vec<Option<usize>>,
    /// World-frame composite rigid-body inertias (derivatives).
    pub o_ycrb: Vec<Mat6>,
    /// Their time variations plus the momentum cross map (Carpentier & Mansard 2018, Sec. III).
    pub do_ycrb: Vec<Mat6>,
    /// World-frame articulated-body inertias (ABA, M⁻¹).
    pub o_yaba: Vec<Mat6>,
    /// Inverse of each joint's `D = Sᵀ I^A S` (top-left nv × nv block; identity padding).
    pub dinv: Vec<Mat6>,
    /// World-frame joint Jacobian columns `J = oMi · S`, one per velocity coordinate.
    pub j: Vec<Vec6>,
    /// `ov × J` per column (time derivative of the Jacobian).
    pub dj: Vec<Vec6>,
    /// ∂(world velocity)/∂q per column (RNEA derivatives).
    pub dv_dq: Vec<Vec6>,
    /// ∂(world acceleration)/∂q per column (RNEA derivatives).
    pub da_dq: Vec<Vec6>,
    /// ∂(world acceleration)/∂v per column (RNEA derivatives).
    pub da_dv: Vec<Vec6>,
    /// ∂(subtree force)/∂q per column (RNEA derivatives).
    pub df_dq: Vec<Vec6>,
    /// ∂(subtree force)/∂v per column (RNEA derivatives).
    pub df_dv: Vec<Vec6>,
    /// `U = I^A J` per column (ABA, M⁻¹).
    pub u_cols: Vec<Vec6>,
    /// `U D⁻¹` per column (ABA, M⁻¹).
    pub ud_cols: Vec<Vec6>,
    /// Backward-pass forces as linear maps of τ (M⁻¹), 6 × nv.
    pub fcrb: Mat6xN,
    /// Forward-pass accelerations as linear maps of τ per joint (M⁻¹), 6 × nv each.
    pub acc_map: Vec<Mat6xN>,
    /// Joint torques (RNEA), N·m or N.
    pub tau: DVec,
    /// `τ − Sᵀ p^A` per coordinate (ABA).
    pub u: DVec,
    /// Joint accelerations (ABA), rad/s² or m/s².
    pub ddq: DVec,
    /// Joint-space inertia matrix (CRBA), full symmetric.
    pub m: DMat,
    /// Its inverse (M⁻¹ by the ABA-style recursion), full symmetric.
    pub minv: DMat,
    /// ∂τ/∂q (RNEA derivatives), tangent space.
    pub dtau_dq: DMat,
    /// ∂τ/∂v (RNEA derivatives).
    pub dtau_dv: DMat,
    /// ∂q̈/∂q (ABA derivatives), tangent space.
    pub ddq_dq: DMat,
    /// ∂q̈/∂v (ABA derivatives).
    pub ddq_dv: DMat,
}

impl Data {
    /// Buffers sized for `model`.
    pub fn new(model: &Model) -> Self {
        let n = model.njoints();
        let nv = model.nv;
        let z6 = vec![Vec6::zeros(); n];
        let zm = vec![Mat6::zeros(); n];
        let zc = vec![Vec6::zeros(); nv];
        Data {
            li_m_i: vec![Se3::identity(); n],
            o_m_i: vec![Se3::identity(); n],
            v: z6.clone(),
            a: z6.clone(),
            f: z6.clone(),
            ov: z6.clone(),
            oa: z6.clone(),
            oh: z6.clone(),
            of: z6,
            oinertia: zm.clone(),
            o_icrb: vec![OriginInertia::zero(); n],
            ycrb: vec![OriginInertia::zero(); n],
            li_axis: vec![None; n],
            o_ycrb: zm.clone(),
            do_ycrb: zm.clone(),
            o_yaba: zm.clone(),
            dinv: zm,
            j: zc.clone(),
            dj: zc.clone(),
            dv_dq: zc.clone(),
            da_dq: zc.clone(),
            da_dv: zc.clone(),
            df_dq: zc.clone(),
            df_dv: zc.clone(),
            u_cols: zc.clone(),
            ud_cols: zc,
            fcrb: Mat6xN::zeros(nv),
            acc_map: vec![Mat6xN::zeros(nv); n],
            tau: DVec::zeros(nv),
            u: DVec::zeros(nv),
            ddq: DVec::zeros(nv),
            m: DMat::zeros(nv, nv),
            minv: DMat::zeros(nv, nv),
            dtau_dq: DMat::zeros(nv, nv),
            dtau_dv: DMat::zeros(nv, nv),
            ddq_dq: DMat::zeros(nv, nv),
            ddq_dv: DMat::zeros(nv, nv),
        }
    }
}
