//! Every analytical derivative against central finite differences (1e-6 relative, norm-wise):
//! ∂τ/∂q, ∂τ/∂v (RNEA), ∂q̈/∂q, ∂q̈/∂v, ∂q̈/∂τ (ABA) and the frame Jacobians, with
//! configuration differences taken on the manifold (`q ⊕ h e_i`).

use crate::rigid_support;

use diffsoro::math::{DMat, DVec, central_difference_jacobian, relative_error};
use diffsoro::rigid::{
    Base, Data, Mat6xN, Model, ReferenceFrame, aba, compute_aba_derivatives,
    compute_joint_jacobians, compute_rnea_derivatives, frame_jacobian, frame_placement, parse_urdf,
    rnea,
};
use rigid_support::{Rng, model, plus, random_q};
use std::path::Path;

const H: f64 = 1e-5;
const TOL: f64 = 1e-6;

fn assert_close(name: &str, what: &str, analytic: &DMat, fd: &DMat) {
    let e = relative_error(analytic.as_slice(), fd.as_slice(), 1e-8);
    assert!(
        e < TOL,
        "{name}: {what} differs from finite differences: rel err {e:e}"
    );
}

fn check_dynamics_derivatives(model: &Model, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut data = Data::new(model);
    let nv = model.nv;
    for _ in 0..2 {
        let q = random_q(model, &mut rng, 1.0);
        let v = rng.vec(nv, 1.5);
        let a = rng.vec(nv, 3.0);
        let tau = rng.vec(nv, 5.0);
        let zero = DVec::zeros(nv);

        compute_rnea_derivatives(model, &mut data, &q, &v, &a);
        let (dq, dv) = (data.dtau_dq.clone(), data.dtau_dv.clone());
        let tau_ref = rnea(model, &mut data, &q, &v, &a).clone();
        let e = relative_error(data.tau.as_slice(), tau_ref.as_slice(), 1e-12);
        assert!(e < 1e-12);
        let mut d = Data::new(model);
        let fd_q = central_difference_jacobian(
            |x: &DVec| {
                rnea(
                    model,
                    &mut d.clone(),
                    &plus(model, &q, x.as_slice()),
                    &v,
                    &a,
                )
                .clone()
            },
            &zero,
            H,
        );
        assert_close(&model.name, "∂τ/∂q", &dq, &fd_q);
        let fd_v = central_difference_jacobian(
            |x: &DVec| rnea(model, &mut d.clone(), &q, x.as_slice(), &a).clone(),
            &DVec::from_vec(v.clone()),
            H,
        );
        assert_close(&model.name, "∂τ/∂v", &dv, &fd_v);

        compute_aba_derivatives(model, &mut data, &q, &v, &tau);
        let ddq_ref = aba(model, &mut d, &q, &v, &tau).clone();
        assert!(relative_error(data.ddq.as_slice(), ddq_ref.as_slice(), 1e-12) < 1e-12);
        let fd_q = central_difference_jacobian(
            |x: &DVec| {
                aba(
                    model,
                    &mut d.clone(),
                    &plus(model, &q, x.as_slice()),
                    &v,
                    &tau,
                )
                .clone()
            },
            &zero,
            H,
        );
        assert_close(&model.name, "∂q̈/∂q", &data.ddq_dq, &fd_q);
        let fd_v = central_difference_jacobian(
            |x: &DVec| aba(model, &mut d.clone(), &q, x.as_slice(), &tau).clone(),
            &DVec::from_vec(v.clone()),
            H,
        );
        assert_close(&model.name, "∂q̈/∂v", &data.ddq_dv, &fd_v);
        let fd_t = central_difference_jacobian(
            |x: &DVec| aba(model, &mut d.clone(), &q, &v, x.as_slice()).clone(),
            &DVec::from_vec(tau.clone()),
            H,
        );
        assert_close(&model.name, "∂q̈/∂τ", &data.minv, &fd_t);
    }
}

/// Frame Jacobians against the finite difference of the frame pose on SE(3):
/// `log6(oMf(q)⁻¹ oMf(q ⊕ h e_c)) / h` in the local frame.
fn check_frame_jacobians(model: &Model, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut data = Data::new(model);
    let q = random_q(model, &mut rng, 1.0);
    compute_joint_jacobians(model, &mut data, &q);
    let mut jl = Mat6xN::zeros(model.nv);
    let mut jw = Mat6xN::zeros(model.nv);
    let mut ja = Mat6xN::zeros(model.nv);
    for f in 0..model.frames.len() {
        frame_jacobian(model, &data, f, ReferenceFrame::Local, &mut jl);
        frame_jacobian(model, &data, f, ReferenceFrame::World, &mut jw);
        frame_jacobian(model, &data, f, ReferenceFrame::LocalWorldAligned, &mut ja);
        let o_m_f = frame_placement(model, &data, f);
        let d = std::cell::RefCell::new(Data::new(model));
        let pose = |x: &DVec| {
            let mut d = d.borrow_mut();
            compute_joint_jacobians(model, &mut d, &plus(model, &q, x.as_slice()));
            let m = frame_placement(model, &d, f);
            let rel = o_m_f.inv_mul(&m).log6();
            DVec::from_column_slice(rel.as_slice())
        };
        let fd = central_difference_jacobian(pose, &DVec::zeros(model.nv), H);
        let jl_d = DMat::from_column_slice(6, model.nv, jl.as_slice());
        assert_close(&model.frames[f].name, "local frame Jacobian", &jl_d, &fd);
        // World and world-aligned forms are the local one moved by oMf (independent formulas).
        for c in 0..model.nv {
            let local = diffsoro::rigid::Vec6::from_column_slice(jl.column(c).as_slice());
            let world = o_m_f.act_motion(&local);
            assert!((world - jw.column(c)).norm() < 1e-12);
            let aligned =
                diffsoro::rigid::Se3::new(o_m_f.rot, Default::default()).act_motion(&local);
            assert!((aligned - ja.column(c)).norm() < 1e-12);
        }
    }
}

/// Forward kinematics: body velocities equal the local Jacobians times v, and body accelerations
/// are the time derivatives of the body velocities along `q(t) = q ⊕ (v t + a t²/2)`,
/// `v(t) = v + a t` (central difference in t).
fn check_forward_kinematics(model: &Model, seed: u64) {
    use diffsoro::rigid::{FrameKind, forward_kinematics};
    let mut rng = Rng::new(seed);
    let mut data = Data::new(model);
    let q = random_q(model, &mut rng, 1.0);
    let (v, a) = (rng.vec(model.nv, 1.0), rng.vec(model.nv, 1.0));
    forward_kinematics(model, &mut data, &q, &v, &a);
    compute_joint_jacobians(model, &mut data, &q);
    let mut jl = Mat6xN::zeros(model.nv);
    let vv = DVec::from_vec(v.clone());
    let at = |t: f64, d: &mut Data| {
        let dq: Vec<f64> = (0..model.nv)
            .map(|k| v[k] * t + 0.5 * a[k] * t * t)
            .collect();
        let vt: Vec<f64> = (0..model.nv).map(|k| v[k] + a[k] * t).collect();
        forward_kinematics(model, d, &plus(model, &q, &dq), &vt, &a);
    };
    let (mut dp, mut dm) = (Data::new(model), Data::new(model));
    let h = 1e-5;
    at(h, &mut dp);
    at(-h, &mut dm);
    for (f, frame) in model.frames.iter().enumerate() {
        if frame.kind != FrameKind::Joint {
            continue;
        }
        let i = frame.parent_joint;
        frame_jacobian(model, &data, f, ReferenceFrame::Local, &mut jl);
        let jv = &jl * &vv;
        let e = relative_error(jv.as_slice(), data.v[i].as_slice(), 1e-12);
        assert!(
            e < 1e-12,
            "{}: body velocity of joint {i}: {e:e}",
            model.name
        );
        let fd = (dp.v[i] - dm.v[i]) / (2.0 * h);
        let e = relative_error(fd.as_slice(), data.a[i].as_slice(), 1e-8);
        assert!(
            e < TOL,
            "{}: body acceleration of joint {i}: {e:e}",
            model.name
        );
    }
}

#[test]
fn forward_kinematics_velocities_and_accelerations() {
    check_forward_kinematics(&model("ur5.urdf", Base::Fixed), 21);
    check_forward_kinematics(&model("quadruped.urdf", Base::FreeFlyer), 22);
    let m = parse_urdf(BALL_CHAIN, "ball_chain", Path::new("."), Base::FreeFlyer).unwrap();
    check_forward_kinematics(&m, 23);
}

#[test]
fn double_pendulum_and_cartpole() {
    check_dynamics_derivatives(&model("double_pendulum.urdf", Base::Fixed), 11);
    check_dynamics_derivatives(&model("cartpole.urdf", Base::Fixed), 12);
}

#[test]
fn ur5() {
    let m = model("ur5.urdf", Base::Fixed);
    check_dynamics_derivatives(&m, 13);
    check_frame_jacobians(&m, 14);
}

#[test]
fn quadruped_on_a_free_flyer() {
    let m = model("quadruped.urdf", Base::FreeFlyer);
    check_dynamics_derivatives(&m, 15);
    check_frame_jacobians(&m, 16);
}

#[test]
fn humanoid_on_a_free_flyer() {
    check_dynamics_derivatives(&model("humanoid.urdf", Base::FreeFlyer), 17);
}

/// A chain with a spherical joint, a prismatic joint on a tilted axis and a continuous joint.
const BALL_CHAIN: &str = r#"<robot name="ball_chain">
  <link name="base"><inertial><mass value="2"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <link name="a"><inertial><origin xyz="0.1 0 -0.3" rpy="0.2 0.1 0"/><mass value="1.5"/>
    <inertia ixx="0.05" ixy="0.001" ixz="0" iyy="0.04" iyz="0.002" izz="0.02"/></inertial></link>
  <link name="b"><inertial><origin xyz="0 0.05 -0.2"/><mass value="0.7"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.012" iyz="0" izz="0.008"/></inertial></link>
  <link name="c"><inertial><origin xyz="0.02 0 -0.1"/><mass value="0.4"/>
    <inertia ixx="0.004" ixy="0" ixz="0.0005" iyy="0.005" iyz="0" izz="0.003"/></inertial></link>
  <joint name="ball" type="spherical"><parent link="base"/><child link="a"/><origin xyz="0 0 1" rpy="0 0.3 0"/></joint>
  <joint name="slide" type="prismatic"><parent link="a"/><child link="b"/><origin xyz="0 0 -0.5"/>
    <axis xyz="0.3 0.2 -1"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <joint name="spin" type="continuous"><parent link="b"/><child link="c"/><origin xyz="0 0.1 -0.3" rpy="0.4 0 0.2"/>
    <axis xyz="1 1 0"/></joint>
</robot>"#;

#[test]
fn spherical_prismatic_continuous_chain_fixed_and_floating() {
    for base in [Base::Fixed, Base::FreeFlyer] {
        let m = parse_urdf(BALL_CHAIN, "ball_chain", Path::new("."), base).unwrap();
        assert_eq!(m.nv, if base == Base::Fixed { 5 } else { 11 });
        check_dynamics_derivatives(&m, 18);
        check_frame_jacobians(&m, 19);
    }
}
