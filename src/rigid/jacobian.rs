//! Joint and frame Jacobians: the linear maps from `v` to the spatial velocity of a frame
//! (Pinocchio's `computeJointJacobians` / `getFrameJacobian`).

use super::data::{Data, Mat6xN};
use super::kinematics::{joint_columns, place_joint};
use super::model::Model;
use super::spatial::{Se3, ang, lin, spatial};

/// In which frame a Jacobian expresses the velocity it maps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferenceFrame {
    /// The spatial velocity in world coordinates (the velocity of the world point at the origin).
    World,
    /// The body twist in the frame's own coordinates.
    Local,
    /// Linear velocity of the frame origin and angular velocity, both in world axes.
    LocalWorldAligned,
}

/// Computes `oMi` and the world-frame Jacobian columns `data.j` (`J = oMi · S`) for `q`.
pub fn compute_joint_jacobians(model: &Model, data: &mut Data, q: &[f64]) {
    assert_eq!(q.len(), model.nq, "q must have length nq");
    for i in 1..model.njoints() {
        place_joint(model, data, i, q);
        joint_columns(model, data, i);
    }
}

/// Pose of frame `frame` in the world (`oMf`), from the `oMi` of the last kinematics call.
pub fn frame_placement(model: &Model, data: &Data, frame: usize) -> Se3 {
    let f = &model.frames[frame];
    data.o_m_i[f.parent_joint].mul(&f.placement)
}

/// Writes into `out` (6 × nv) the Jacobian of frame `frame` in `reference` coordinates: column
/// `c` is the frame's velocity for `v = e_c` (zero for coordinates that do not move it).
/// Needs [`compute_joint_jacobians`] for the current `q` first.
pub fn frame_jacobian(
    model: &Model,
    data: &Data,
    frame: usize,
    reference: ReferenceFrame,
    out: &mut Mat6xN,
) {
    assert_eq!(out.ncols(), model.nv, "frame Jacobian must be 6 × nv");
    out.fill(0.0);
    let joint = model.frames[frame].parent_joint;
    if joint == 0 || model.joints[joint].nv() == 0 {
        return;
    }
    let o_m_f = frame_placement(model, data, frame);
    let jm = &model.joints[joint];
    let mut c = Some(jm.idx_v + jm.nv() - 1);
    while let Some(k) = c {
        let col = data.j[k];
        let value = match reference {
            ReferenceFrame::World => col,
            ReferenceFrame::Local => o_m_f.act_inv_motion(&col),
            ReferenceFrame::LocalWorldAligned => {
                let w = ang(&col);
                spatial(lin(&col) + w.cross(&o_m_f.trans), w)
            }
        };
        out.set_column(k, &value);
        c = model.parent_dof[k];
    }
}

/// Writes into `out` (3 × nv) the Jacobian of the world velocity of the point `p` (m, world)
/// carried by joint `joint`'s body: column `c` is `lin(J_c) + ang(J_c) × p` for the world-frame
/// columns `J_c` of the joint's support (`v(p) = v_O + ω × p`), zero elsewhere. Needs
/// [`compute_joint_jacobians`] (or CRBA) for the current `q` first. Units: m/s per unit of
/// each velocity coordinate.
pub fn point_jacobian(
    model: &Model,
    data: &Data,
    joint: usize,
    p: &crate::math::Vec3,
    out: &mut nalgebra::Matrix3xX<f64>,
) {
    assert_eq!(out.ncols(), model.nv, "point Jacobian must be 3 × nv");
    out.fill(0.0);
    if joint == 0 {
        return;
    }
    let mut j = joint;
    while j != 0 && model.joints[j].nv() == 0 {
        j = model.parents[j];
    }
    if j == 0 {
        return;
    }
    let jm = &model.joints[j];
    let mut c = Some(jm.idx_v + jm.nv() - 1);
    while let Some(k) = c {
        let col = data.j[k];
        out.set_column(k, &(lin(&col) + ang(&col).cross(p)));
        c = model.parent_dof[k];
    }
}
