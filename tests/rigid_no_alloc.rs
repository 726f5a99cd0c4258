//! No algorithm allocates: `Data` holds every buffer. A counting global allocator watches the
//! calls on the humanoid with a free-flyer (spherical-free, multi-dof root) and on a chain with
//! a spherical joint.

mod counting_allocator;
mod rigid_support;

use counting_allocator::allocations_during;
use diffsoro::rigid::{
    Base, Data, Mat6xN, Model, ReferenceFrame, aba, compute_aba_derivatives,
    compute_joint_jacobians, compute_minverse, compute_rnea_derivatives, crba, forward_kinematics,
    frame_jacobian, nonlinear_effects, rnea,
};
use rigid_support::{Rng, model, random_q};

fn check(m: &Model) {
    let mut rng = Rng::new(99);
    let q = random_q(m, &mut rng, 1.0);
    let (v, a, tau) = (rng.vec(m.nv, 1.0), rng.vec(m.nv, 1.0), rng.vec(m.nv, 1.0));
    let mut data = Data::new(m);
    let mut jac = Mat6xN::zeros(m.nv);
    let frame = m.frames.len() - 1;
    let counts = [
        (
            "forward_kinematics",
            allocations_during(|| forward_kinematics(m, &mut data, &q, &v, &a)),
        ),
        (
            "rnea",
            allocations_during(|| {
                rnea(m, &mut data, &q, &v, &a);
            }),
        ),
        (
            "nonlinear_effects",
            allocations_during(|| {
                nonlinear_effects(m, &mut data, &q, &v);
            }),
        ),
        (
            "crba",
            allocations_during(|| {
                crba(m, &mut data, &q);
            }),
        ),
        (
            "aba",
            allocations_during(|| {
                aba(m, &mut data, &q, &v, &tau);
            }),
        ),
        (
            "compute_minverse",
            allocations_during(|| {
                compute_minverse(m, &mut data, &q);
            }),
        ),
        (
            "compute_rnea_derivatives",
            allocations_during(|| compute_rnea_derivatives(m, &mut data, &q, &v, &a)),
        ),
        (
            "compute_aba_derivatives",
            allocations_during(|| compute_aba_derivatives(m, &mut data, &q, &v, &tau)),
        ),
        (
            "compute_joint_jacobians",
            allocations_during(|| compute_joint_jacobians(m, &mut data, &q)),
        ),
        (
            "frame_jacobian",
            allocations_during(|| {
                frame_jacobian(m, &data, frame, ReferenceFrame::LocalWorldAligned, &mut jac)
            }),
        ),
    ];
    let n: usize = counts.iter().map(|c| c.1).sum();
    assert_eq!(n, 0, "{}: the algorithms allocated: {counts:?}", m.name);
}

#[test]
fn algorithms_do_not_allocate() {
    check(&model("humanoid.urdf", Base::FreeFlyer));
    check(&model("ur5.urdf", Base::Fixed));
    check(&model("double_pendulum.urdf", Base::Fixed));
}
