//! RNEA, CRBA, ABA and M⁻¹ checked against one another on random states (fixed seed):
//! RNEA(q, v, ABA(q, v, τ)) = τ, CRBA · M⁻¹ = I, and ABA = M⁻¹(τ − b) by a Cholesky solve.

use crate::rigid_support;

use diffsoro::math::{DMat, DVec, relative_error};
use diffsoro::rigid::{Base, Data, Model, aba, compute_minverse, crba, nonlinear_effects, rnea};
use rigid_support::{Rng, model, random_q};

fn check(model: &Model, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut data = Data::new(model);
    for _ in 0..5 {
        let q = random_q(model, &mut rng, 1.0);
        let v = rng.vec(model.nv, 2.0);
        let tau = rng.vec(model.nv, 10.0);
        let ddq = aba(model, &mut data, &q, &v, &tau).clone();
        let back = rnea(model, &mut data, &q, &v, ddq.as_slice()).clone();
        let e = relative_error(back.as_slice(), &tau, 1e-12);
        assert!(e < 1e-10, "{}: RNEA(ABA(τ)) ≠ τ, rel err {e:e}", model.name);

        let m = crba(model, &mut data, &q).clone();
        assert!((&m - m.transpose()).norm() == 0.0, "M not symmetric");
        let minv = compute_minverse(model, &mut data, &q).clone();
        let id = &m * &minv;
        let err = (&id - DMat::identity(model.nv, model.nv)).amax();
        assert!(err < 1e-10, "{}: CRBA · M⁻¹ − I = {err:e}", model.name);

        // A second method for q̈: Cholesky solve of M q̈ = τ − b.
        let b = nonlinear_effects(model, &mut data, &q, &v).clone();
        let rhs = DVec::from_vec(tau.clone()) - b;
        let sol = m.clone().cholesky().expect("M is SPD").solve(&rhs);
        let e = relative_error(sol.as_slice(), ddq.as_slice(), 1e-12);
        assert!(e < 1e-10, "{}: ABA ≠ M⁻¹(τ − b), rel err {e:e}", model.name);
    }
}

#[test]
fn ur5_fixed_base() {
    let m = model("ur5.urdf", Base::Fixed);
    assert_eq!((m.nq, m.nv), (6, 6));
    check(&m, 1);
}

#[test]
fn quadruped_free_flyer() {
    let m = model("quadruped.urdf", Base::FreeFlyer);
    assert_eq!((m.nq, m.nv), (19, 18));
    check(&m, 2);
}

#[test]
fn humanoid_free_flyer_and_fixed() {
    let m = model("humanoid.urdf", Base::FreeFlyer);
    assert_eq!((m.nq, m.nv), (39, 38));
    check(&m, 3);
    check(&model("humanoid.urdf", Base::Fixed), 4);
}

#[test]
fn pendulum_and_cartpole_with_unbounded_joints() {
    let m = model("double_pendulum.urdf", Base::Fixed);
    assert_eq!((m.nq, m.nv), (3, 2));
    check(&m, 5);
    let m = model("cartpole.urdf", Base::Fixed);
    assert_eq!((m.nq, m.nv), (3, 2));
    check(&m, 6);
}
