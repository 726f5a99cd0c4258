//! Pendulums against Lagrangian mechanics: the double pendulum's mass matrix, Coriolis and
//! gravity terms in closed form, conservation of its energy under RK4 (error ∝ h⁴), and the
//! small-angle period 2π√(I/(m g d)) of a compound pendulum.

use crate::rigid_support;

use diffsoro::rigid::{Base, Data, Model, aba, crba, parse_urdf, rnea};
use rigid_support::{model, plus};
use std::path::Path;

const G: f64 = 9.81;
// Parameters written in urdf/double_pendulum.urdf: bars of length l, mass m, width 0.05 m.
const L1: f64 = 1.0;
const M1: f64 = 1.0;
const C1: f64 = 0.5;
const M2: f64 = 0.8;
const C2: f64 = 0.4;

fn bar_inertia(m: f64, l: f64) -> f64 {
    m * (0.05 * 0.05 + l * l) / 12.0
}

/// The configuration `(cos θ1, sin θ1, θ2)` of the pendulum (continuous shoulder, revolute elbow).
fn config(t1: f64, t2: f64) -> Vec<f64> {
    vec![t1.cos(), t1.sin(), t2]
}

/// Closed-form M(θ), Coriolis/centrifugal c(θ, θ̇) and gravity g(θ) from the Lagrangian of two
/// bars hanging along −z and swinging about +y (θ = 0 hanging, θ2 relative to the upper bar):
/// com positions `c1 (−sin θ1, −cos θ1)` and `l1 (−sin θ1, −cos θ1) + c2 (−sin θ12, −cos θ12)`.
fn closed_form(t1: f64, t2: f64, w1: f64, w2: f64) -> ([[f64; 2]; 2], [f64; 2], [f64; 2]) {
    let (i1, i2) = (bar_inertia(M1, 1.0), bar_inertia(M2, 0.8));
    let c = t2.cos();
    let m11 = i1 + M1 * C1 * C1 + i2 + M2 * (L1 * L1 + C2 * C2 + 2.0 * L1 * C2 * c);
    let m12 = i2 + M2 * (C2 * C2 + L1 * C2 * c);
    let m22 = i2 + M2 * C2 * C2;
    let h = M2 * L1 * C2 * t2.sin();
    let cor = [-h * (2.0 * w1 * w2 + w2 * w2), h * w1 * w1];
    let grav = [
        G * (M1 * C1 * t1.sin() + M2 * (L1 * t1.sin() + C2 * (t1 + t2).sin())),
        G * M2 * C2 * (t1 + t2).sin(),
    ];
    ([[m11, m12], [m12, m22]], cor, grav)
}

#[test]
fn double_pendulum_matches_the_lagrangian_closed_form() {
    let m = model("double_pendulum.urdf", Base::Fixed);
    let mut data = Data::new(&m);
    for &(t1, t2, w1, w2) in &[
        (0.3, -1.1, 0.7, -2.0),
        (2.5, 0.4, -1.3, 0.2),
        (-0.9, 2.9, 0.0, 1.5),
    ] {
        let q = config(t1, t2);
        let (mm, cor, grav) = closed_form(t1, t2, w1, w2);
        let mass = crba(&m, &mut data, &q).clone();
        for r in 0..2 {
            for c in 0..2 {
                assert!((mass[(r, c)] - mm[r][c]).abs() < 1e-12, "M[{r},{c}]");
            }
        }
        // Gravity alone: τ(q, 0, 0); Coriolis: τ(q, v, 0) − τ(q, 0, 0); inertial: τ(q, 0, a).
        let g = rnea(&m, &mut data, &q, &[0.0, 0.0], &[0.0, 0.0]).clone();
        let b = rnea(&m, &mut data, &q, &[w1, w2], &[0.0, 0.0]).clone();
        for k in 0..2 {
            assert!((g[k] - grav[k]).abs() < 1e-12, "gravity {k}");
            assert!((b[k] - g[k] - cor[k]).abs() < 1e-12, "Coriolis {k}");
        }
        let a = [0.4, -0.9];
        let t = rnea(&m, &mut data, &q, &[0.0, 0.0], &a).clone();
        for k in 0..2 {
            let expect = mm[k][0] * a[0] + mm[k][1] * a[1] + grav[k];
            assert!((t[k] - expect).abs() < 1e-12, "inertial {k}");
        }
    }
}

/// One RK4 step of `q̈ = ABA(q, v, 0)` on the configuration manifold (stages combined in the
/// tangent space at `q`, exact for the abelian manifolds of 1-dof joints).
fn rk4_step(m: &Model, data: &mut Data, q: &[f64], v: &[f64], h: f64) -> (Vec<f64>, Vec<f64>) {
    let n = m.nv;
    let tau = vec![0.0; n];
    let acc = |data: &mut Data, dq: &[f64], vv: &[f64]| -> Vec<f64> {
        let qq = plus(m, q, dq);
        aba(m, data, &qq, vv, &tau).as_slice().to_vec()
    };
    let axpy = |x: &[f64], s: f64, y: &[f64]| -> Vec<f64> {
        x.iter().zip(y).map(|(a, b)| a + s * b).collect()
    };
    let zero = vec![0.0; n];
    let k1v = v.to_vec();
    let k1a = acc(data, &zero, v);
    let k2v = axpy(v, h / 2.0, &k1a);
    let k2a = acc(data, &axpy(&zero, h / 2.0, &k1v), &k2v);
    let k3v = axpy(v, h / 2.0, &k2a);
    let k3a = acc(data, &axpy(&zero, h / 2.0, &k2v), &k3v);
    let k4v = axpy(v, h, &k3a);
    let k4a = acc(data, &axpy(&zero, h, &k3v), &k4v);
    let dq: Vec<f64> = (0..n)
        .map(|i| h / 6.0 * (k1v[i] + 2.0 * k2v[i] + 2.0 * k3v[i] + k4v[i]))
        .collect();
    let nv: Vec<f64> = (0..n)
        .map(|i| v[i] + h / 6.0 * (k1a[i] + 2.0 * k2a[i] + 2.0 * k3a[i] + k4a[i]))
        .collect();
    (plus(m, q, &dq), nv)
}

/// Total energy from the closed-form potential and the CRBA kinetic energy ½ vᵀ M v.
fn energy(m: &Model, data: &mut Data, q: &[f64], v: &[f64]) -> f64 {
    let t1 = q[1].atan2(q[0]);
    let t2 = q[2];
    let pot = -G * (M1 * C1 * t1.cos() + M2 * (L1 * t1.cos() + C2 * (t1 + t2).cos()));
    let mass = crba(m, data, q);
    let kin = 0.5
        * (v[0] * (mass[(0, 0)] * v[0] + mass[(0, 1)] * v[1])
            + v[1] * (mass[(1, 0)] * v[0] + mass[(1, 1)] * v[1]));
    kin + pot
}

fn max_energy_drift(m: &Model, h: f64, t_end: f64) -> f64 {
    let mut data = Data::new(m);
    let (mut q, mut v) = (config(1.2, -0.7), vec![0.5, 1.0]);
    let e0 = energy(m, &mut data, &q, &v);
    let steps = (t_end / h).round() as usize;
    let mut worst: f64 = 0.0;
    for _ in 0..steps {
        (q, v) = rk4_step(m, &mut data, &q, &v, h);
        worst = worst.max((energy(m, &mut data, &q, &v) - e0).abs());
    }
    worst
}

#[test]
fn double_pendulum_energy_is_conserved_to_fourth_order() {
    let m = model("double_pendulum.urdf", Base::Fixed);
    let e: Vec<f64> = [0.02, 0.01, 0.005]
        .iter()
        .map(|&h| max_energy_drift(&m, h, 2.0))
        .collect();
    eprintln!("max energy drift for h = 0.02, 0.01, 0.005: {e:?}");
    // Halving h divides the RK4 energy error by about 2⁴ = 16.
    for w in e.windows(2) {
        let ratio = w[0] / w[1];
        assert!((10.0..26.0).contains(&ratio), "errors {e:?}, ratio {ratio}");
    }
    assert!(e[2] < 1e-6, "errors {e:?}");
}

const COMPOUND: &str = r#"<robot name="compound">
  <link name="pivot"/>
  <link name="bob"><inertial><origin xyz="0 0 -0.3"/><mass value="2.0"/>
    <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.02"/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="pivot"/><child link="bob"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="10"/></joint>
</robot>"#;

#[test]
fn compound_pendulum_small_angle_period() {
    let m = parse_urdf(COMPOUND, "compound", Path::new("."), Base::Fixed).unwrap();
    let (mass, d, i_c) = (2.0, 0.3, 0.01);
    let period = 2.0 * std::f64::consts::PI * ((i_c + mass * d * d) / (mass * G * d)).sqrt();
    let mut data = Data::new(&m);
    let h = 1e-3;
    let (mut q, mut v) = (vec![1e-3], vec![0.0]);
    let mut t = 0.0;
    let mut crossings = Vec::new();
    while crossings.len() < 3 {
        let (q1, v1) = rk4_step(&m, &mut data, &q, &v, h);
        if q[0] > 0.0 && q1[0] <= 0.0 {
            crossings.push(t + h * q[0] / (q[0] - q1[0]));
        }
        (q, v, t) = (q1, v1, t + h);
    }
    let measured = (crossings[2] - crossings[0]) / 2.0;
    let rel = (measured - period).abs() / period;
    // Finite amplitude adds θ0²/16 ≈ 6e-8; linear interpolation of the crossing is exact to O(h³).
    assert!(rel < 1e-6, "period {measured} vs {period} (rel {rel:e})");
}
