//! Physics tests of the FEM core with independent expectations: the patch test, rigid-body
//! invariance, energy dissipation of implicit Euler, and a damped beam settling on its static
//! equilibrium.

use diffsoro::fem::{MassKind, SoftBody, SoftBodyOptions, Stiffness, fixed_nodes};
use diffsoro::material::{Law, Material};
use diffsoro::math::{Mat3, SplitMix64, Vec3};
use diffsoro::mesh::{Mesh, box_mesh};
use diffsoro::scene::{Scene, SimulationSection, StaticOptions, Stepper, solve_static};

const LAWS: [Law; 3] = [Law::Corotational, Law::StVK, Law::NeoHookean];

fn options(law: Law, e: f64, nu: f64, fixed: Vec<bool>) -> SoftBodyOptions {
    SoftBodyOptions {
        material: Material::new(law, e, nu).unwrap(),
        density: 1000.0,
        mass: MassKind::Lumped,
        rayleigh_mass: 0.0,
        rayleigh_stiffness: 0.0,
        fixed,
    }
}

/// A 3×3×3-cell unit box whose interior nodes are moved randomly (an irregular mesh).
fn irregular_box() -> Mesh {
    let mesh = box_mesh([3, 3, 3], [0.0; 3], [1.0; 3]).unwrap();
    let mut rng = SplitMix64::new(7);
    let positions: Vec<Vec3> = mesh
        .positions()
        .iter()
        .map(|p| {
            let interior = p.iter().all(|c| *c > 1e-9 && *c < 1.0 - 1e-9);
            if interior {
                p + Vec3::new(rng.uniform(), rng.uniform(), rng.uniform()) * 0.08
            } else {
                *p
            }
        })
        .collect();
    Mesh::new(
        positions,
        mesh.tetrahedra().to_vec(),
        vec![],
        Default::default(),
    )
    .unwrap()
}

#[test]
fn patch_test_affine_field_gives_the_affine_stress_and_no_interior_force() {
    let mesh = irregular_box();
    let n = mesh.node_count();
    let a = Mat3::new(1.02, 0.01, -0.015, 0.005, 0.97, 0.02, -0.01, 0.012, 1.03);
    let b = Vec3::new(0.3, -0.1, 0.2);
    let x: Vec<Vec3> = mesh.positions().iter().map(|p| a * p + b).collect();
    let interior: Vec<bool> = mesh
        .positions()
        .iter()
        .map(|p| p.iter().all(|c| *c > 1e-9 && *c < 1.0 - 1e-9))
        .collect();
    for law in LAWS {
        let body =
            SoftBody::new("box", mesh.clone(), options(law, 1e6, 0.3, vec![false; n])).unwrap();
        let material = Material::new(law, 1e6, 0.3).unwrap();
        let p_exact = material.at(&a).unwrap().stress();
        for t in body.elements() {
            let f = t.deformation_gradient(&x);
            assert!(
                (f - a).norm() < 1e-12,
                "{law:?}: F is not the affine gradient"
            );
            assert!((material.at(&f).unwrap().stress() - p_exact).norm() <= 1e-9 * p_exact.norm());
        }
        let mut state = body.elastic_state();
        body.evaluate_elastic(&x, Stiffness::Skip, &mut state)
            .unwrap();
        // Forces scale: the traction on a face, |P|·area (area 1/9 per boundary cell).
        let scale = p_exact.norm() / 9.0;
        let total: Vec3 = state.forces.iter().sum();
        assert!(
            total.norm() < 1e-10 * scale,
            "{law:?}: internal forces must sum to zero"
        );
        for (i, f) in state.forces.iter().enumerate() {
            if interior[i] {
                assert!(
                    f.norm() < 1e-10 * scale,
                    "{law:?}: interior node {i} carries {f:?}"
                );
            }
        }
        // The resultant on the face x = 1 is minus the traction P·e_x times its area (1).
        let face: Vec3 = (0..n)
            .filter(|&i| mesh.positions()[i].x > 1.0 - 1e-9)
            .map(|i| state.forces[i])
            .sum();
        let edge_nodes_share = (face + p_exact * Vec3::x()).norm();
        assert!(
            edge_nodes_share < 0.6 * p_exact.norm(),
            "{law:?}: face resultant far from −P·n"
        );
    }
}

#[test]
fn rigid_motions_give_zero_energy_and_zero_forces() {
    let mesh = irregular_box();
    let n = mesh.node_count();
    let axis = Vec3::new(0.3, -0.5, 0.8).normalize();
    let r = nalgebra::Rotation3::from_axis_angle(&nalgebra::Unit::new_normalize(axis), 1.1)
        .into_inner();
    let x: Vec<Vec3> = mesh
        .positions()
        .iter()
        .map(|p| r * p + Vec3::new(1.0, 2.0, -3.0))
        .collect();
    for law in LAWS {
        let body =
            SoftBody::new("box", mesh.clone(), options(law, 1e6, 0.3, vec![false; n])).unwrap();
        let mut state = body.elastic_state();
        body.evaluate_elastic(&x, Stiffness::Assemble, &mut state)
            .unwrap();
        assert!(
            state.energy.abs() < 1e-9,
            "{law:?}: energy {}",
            state.energy
        );
        let max = state.forces.iter().map(|f| f.norm()).fold(0.0, f64::max);
        assert!(max < 1e-9, "{law:?}: force {max}");
    }
}

fn bar_scene(
    law: Law,
    newton: usize,
    rayleigh_mass: f64,
    gravity: [f64; 3],
    clamp: bool,
    e: f64,
) -> Scene {
    let mesh = box_mesh([10, 2, 2], [0.0, -0.005, -0.005], [0.1, 0.005, 0.005]).unwrap();
    let fixed = if clamp {
        fixed_nodes(&mesh, None, Some("xmin"), "bar").unwrap()
    } else {
        vec![false; mesh.node_count()]
    };
    let mut opts = options(law, e, 0.3, fixed);
    opts.rayleigh_mass = rayleigh_mass;
    let body = SoftBody::new("bar", mesh, opts).unwrap();
    Scene::new(
        SimulationSection {
            dt: 1e-3,
            steps: 0,
            gravity,
            newton_iterations: newton,
        },
        vec![body],
    )
}

fn total_energy(scene: &Scene, state: &diffsoro::scene::State) -> f64 {
    let body = &scene.bodies[0];
    let mut es = body.elastic_state();
    body.evaluate_elastic(&state.bodies[0].positions, Stiffness::Skip, &mut es)
        .unwrap();
    let kinetic: f64 = state.bodies[0]
        .velocities
        .iter()
        .zip(body.node_masses())
        .map(|(v, m)| 0.5 * m * v.norm_squared())
        .sum();
    kinetic + es.energy
}

#[test]
fn released_prestretched_bar_never_gains_energy() {
    // Backward Euler dissipates: E(n+1) ≤ E(n) with no damping and no gravity. Checked for the
    // converged full-Newton step and for the linearised step (a small first-order error).
    for law in LAWS {
        for newton in [1, 20] {
            let scene = bar_scene(law, newton, 0.0, [0.0; 3], false, 1e6);
            let mut state = scene.initial_state();
            for p in &mut state.bodies[0].positions {
                p.x *= 1.1;
            }
            let mut stepper = Stepper::new(&scene).unwrap();
            let mut previous = total_energy(&scene, &state);
            let initial = previous;
            assert!(initial > 0.0);
            for step in 0..200 {
                stepper.step(&scene, &mut state).unwrap();
                let e = total_energy(&scene, &state);
                assert!(
                    e <= previous + 1e-10 * initial,
                    "{law:?} newton {newton}: energy rose at step {step}: {previous} → {e}"
                );
                previous = e;
            }
            // Momentum is conserved too (no external force, no fixed node): the centre of mass stays.
            let p: Vec3 = state.bodies[0]
                .velocities
                .iter()
                .zip(scene.bodies[0].node_masses())
                .map(|(v, m)| *m * v)
                .sum();
            assert!(p.norm() < 1e-12, "{law:?}: momentum {p:?}");
            assert!(previous < initial);
        }
    }
}

#[test]
fn damped_beam_under_gravity_settles_on_the_static_equilibrium() {
    for law in LAWS {
        let scene = bar_scene(law, 1, 60.0, [0.0, 0.0, -9.81], true, 5e6);
        let mut statics = scene.initial_state();
        solve_static(&scene, &mut statics, StaticOptions::default()).unwrap();
        let mut state = scene.initial_state();
        let mut stepper = Stepper::new(&scene).unwrap();
        let scene = Scene {
            simulation: SimulationSection {
                dt: 0.01,
                ..scene.simulation.clone()
            },
            ..scene
        };
        for _ in 0..600 {
            stepper.step(&scene, &mut state).unwrap();
        }
        let tip = |s: &diffsoro::scene::State| {
            s.bodies[0]
                .positions
                .iter()
                .zip(scene.bodies[0].rest_positions())
                .map(|(x, x0)| (x - x0).norm())
                .fold(0.0, f64::max)
        };
        let sag = tip(&statics);
        assert!(
            sag > 1e-3,
            "{law:?}: the beam should sag visibly, got {sag}"
        );
        let gap = state.bodies[0]
            .positions
            .iter()
            .zip(&statics.bodies[0].positions)
            .map(|(a, b)| (a - b).norm())
            .fold(0.0, f64::max);
        assert!(
            gap < 1e-6 * sag.max(1.0) + 1e-4 * sag,
            "{law:?}: dynamic rest differs from static by {gap} (sag {sag})"
        );
    }
}

#[test]
fn free_fall_matches_implicit_euler_in_closed_form_for_both_masses() {
    // With no fixed node, a uniform gravity field gives every node the same acceleration
    // (elastic forces vanish for a rigid translation, and the row sums of the consistent mass
    // are the lumped masses, which weight the gravity load): v_n = n g h and
    // x_n = x_0 + g h² n(n+1)/2 exactly (implicit Euler: x_{k+1} = x_k + h v_{k+1}).
    for mass in [MassKind::Lumped, MassKind::Consistent] {
        let mesh = box_mesh([3, 2, 2], [0.0; 3], [0.03, 0.02, 0.02]).unwrap();
        let n = mesh.node_count();
        let mut opts = options(Law::NeoHookean, 1e5, 0.3, vec![false; n]);
        opts.mass = mass;
        let body = SoftBody::new("cube", mesh, opts).unwrap();
        let g = [0.3, -1.0, -9.81];
        let scene = Scene::new(
            SimulationSection {
                dt: 0.01,
                steps: 0,
                gravity: g,
                newton_iterations: 1,
            },
            vec![body],
        );
        let mut state = scene.initial_state();
        let mut stepper = Stepper::new(&scene).unwrap();
        let steps = 25;
        for _ in 0..steps {
            stepper.step(&scene, &mut state).unwrap();
        }
        let g = Vec3::from(g);
        let h = 0.01;
        let expected_v = g * (steps as f64 * h);
        let shift = g * (h * h * (steps * (steps + 1)) as f64 / 2.0);
        for (i, (x, v)) in state.bodies[0]
            .positions
            .iter()
            .zip(&state.bodies[0].velocities)
            .enumerate()
        {
            assert!(
                (v - expected_v).norm() < 1e-12 * expected_v.norm(),
                "{mass:?} node {i}: v {v:?}"
            );
            let x0 = scene.bodies[0].rest_positions()[i];
            assert!(
                (x - x0 - shift).norm() < 1e-12 * shift.norm() + 1e-15,
                "{mass:?} node {i}"
            );
        }
    }
}

#[test]
fn full_newton_step_solves_the_backward_euler_equation() {
    // With newton_iterations > 1 the step must satisfy, on every free node,
    // M (v⁺ − v)/h = f_ext + f(x + h v⁺) − D v⁺, D = αM + βK(xₙ) — checked here with forces
    // evaluated independently of the stepper, for a lumped mass and α-damping only (β = 0,
    // so D v⁺ = α M v⁺ needs no stiffness).
    for law in LAWS {
        let scene = bar_scene(law, 30, 5.0, [0.0, 0.0, -9.81], true, 2e5);
        let mut state = scene.initial_state();
        let mut stepper = Stepper::new(&scene).unwrap();
        let body = &scene.bodies[0];
        let h = scene.simulation.dt;
        for _ in 0..3 {
            let before = state.clone();
            stepper.step(&scene, &mut state).unwrap();
            let mut es = body.elastic_state();
            body.evaluate_elastic(&state.bodies[0].positions, Stiffness::Skip, &mut es)
                .unwrap();
            let g = Vec3::new(0.0, 0.0, -9.81);
            let mut worst: f64 = 0.0;
            let mut scale: f64 = 0.0;
            for i in 0..body.node_count() {
                if body.is_fixed(i) {
                    continue;
                }
                let m = body.node_masses()[i];
                let (v, vp) = (
                    before.bodies[0].velocities[i],
                    state.bodies[0].velocities[i],
                );
                let residual = m * (vp - v) / h - (m * g + es.forces[i] - 5.0 * m * vp);
                worst = worst.max(residual.norm());
                scale = scale.max((m * g).norm() + es.forces[i].norm());
            }
            assert!(
                worst < 1e-8 * scale,
                "{law:?}: backward-Euler residual {worst} (scale {scale})"
            );
        }
    }
}
