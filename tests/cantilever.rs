//! Cantilever under its own weight: the static tip deflection converges to the Timoshenko
//! beam solution as the mesh is refined.
//!
//! Beam: L = 0.1 m along x, square section b = h = 0.01 m, clamped at x = 0, gravity −z,
//! ρ = 1000 kg/m³, E = 1e8 Pa, ν = 0 (no Poisson coupling, so the clamped 3-D beam is the
//! Timoshenko beam up to the end effects). Uniform load q = ρ g b h. Timoshenko:
//! w = q L⁴ / (8 E I) + q L² / (2 κ G A), I = b h³ / 12, G = E / 2, κ = 5/6 (Cowper's
//! rectangle factor at ν = 0). Linear tetrahedra (6 per hexahedral cell) are stiff on coarse
//! meshes; measured tip deflection / Timoshenko, mean over the free-end face nodes, for the
//! structured meshes n×(10, 1, 1) cells (recorded when this test was written, for reference
//! only — the assertions below are on the trend and on the finest mesh):
//!
//! | cells   | tets   | w / w_T |
//! |---------|--------|---------|
//! | 10×1×1  | 60     | 0.245   |
//! | 20×2×2  | 480    | 0.550   |
//! | 40×4×4  | 3,840  | 0.825   |
//! | 80×8×8  | 30,720 | 0.949   |
//!
//! Richardson extrapolation of the last two (error ∝ h²): (4·0.949 − 0.825)/3 = 0.990.
//!
//! The test asserts: the error decreases monotonically with refinement, by at least 2.5× per
//! halving of h once past the coarsest mesh (linear elements converge as h² in
//! displacement), the finest mesh is within 6 % of Timoshenko, and the h²-extrapolated
//! deflection of the two finest meshes within 2 %.

use diffsoro::fem::{MassKind, SoftBody, SoftBodyOptions, fixed_nodes};
use diffsoro::material::{Law, Material};
use diffsoro::mesh::box_mesh;
use diffsoro::scene::{Scene, SimulationSection, StaticOptions, solve_static};

const L: f64 = 0.1;
const B: f64 = 0.01;
const RHO: f64 = 1000.0;
const G: f64 = 9.81;
const E: f64 = 1e8;

fn timoshenko_tip_deflection() -> f64 {
    let q = RHO * G * B * B;
    let i = B * B.powi(3) / 12.0;
    let shear_modulus = E / 2.0;
    let kappa = 5.0 / 6.0;
    q * L.powi(4) / (8.0 * E * i) + q * L * L / (2.0 * kappa * shear_modulus * B * B)
}

fn tip_deflection(n: usize, law: Law) -> f64 {
    let mesh = box_mesh(
        [10 * n, n, n],
        [0.0, -B / 2.0, -B / 2.0],
        [L, B / 2.0, B / 2.0],
    )
    .unwrap();
    let fixed = fixed_nodes(&mesh, None, Some("xmin"), "beam").unwrap();
    let tip = mesh.groups().nodes["xmax"].clone();
    let options = SoftBodyOptions {
        material: Material::new(law, E, 0.0).unwrap(),
        density: RHO,
        mass: MassKind::Lumped,
        rayleigh_mass: 0.0,
        rayleigh_stiffness: 0.0,
        fixed,
    };
    let body = SoftBody::new("beam", mesh, options).unwrap();
    let scene = Scene::new(
        SimulationSection {
            dt: 0.01,
            steps: 0,
            gravity: [0.0, 0.0, -G],
            newton_iterations: 1,
        },
        vec![body],
    );
    let mut state = scene.initial_state();
    solve_static(&scene, &mut state, StaticOptions::default()).unwrap();
    let rest = scene.bodies[0].rest_positions();
    -tip.iter()
        .map(|&i| state.bodies[0].positions[i].z - rest[i].z)
        .sum::<f64>()
        / tip.len() as f64
}

#[test]
fn cantilever_tip_deflection_converges_to_timoshenko() {
    let reference = timoshenko_tip_deflection();
    let mut errors = Vec::new();
    let mut deflections = Vec::new();
    for n in [1, 2, 4, 8] {
        let w = tip_deflection(n, Law::Corotational);
        let error = (w - reference).abs() / reference;
        eprintln!(
            "cells {}x{n}x{n}: tets {}, w = {w:.6e} m, w/w_T = {:.5}",
            10 * n,
            60 * n * n * n,
            w / reference
        );
        errors.push(error);
        deflections.push(w);
    }
    for k in 1..errors.len() {
        assert!(
            errors[k] < errors[k - 1],
            "error must decrease with refinement: {errors:?}"
        );
    }
    for k in 2..errors.len() {
        assert!(
            errors[k - 1] / errors[k] > 2.5,
            "expected ~h² convergence: {errors:?}"
        );
    }
    assert!(
        *errors.last().unwrap() < 0.06,
        "finest mesh error {errors:?}"
    );
    let [.., coarse, fine] = deflections[..] else {
        unreachable!()
    };
    let extrapolated = (4.0 * fine - coarse) / 3.0;
    assert!(
        (extrapolated - reference).abs() < 0.02 * reference,
        "extrapolated {extrapolated} vs {reference}"
    );
}

#[test]
fn the_three_laws_agree_at_small_deflection() {
    // At w/L ≈ 1e-3 the three laws are linear elasticity to O(strain): same deflection.
    let w: Vec<f64> = [Law::Corotational, Law::StVK, Law::NeoHookean]
        .iter()
        .map(|&law| tip_deflection(2, law))
        .collect();
    for k in 1..3 {
        assert!((w[k] - w[0]).abs() < 1e-3 * w[0], "{w:?}");
    }
}
