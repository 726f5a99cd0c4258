//! `mass = "uniform"` with `total_mass` (SOFA's UniformMass): the total mass is
//! spread evenly over all the mesh's nodes, a freely falling body's centre of mass accelerates
//! at g, and scenes without the new keys are unchanged.

use std::path::Path;

use diffsoro::fem::{MassKind, lumped_masses};
use diffsoro::math::Vec3;
use diffsoro::scene::{Scene, SceneFile, Stepper};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The 100 × 10 × 10 mm beam of `scenes/beam.toml` (clamped or free) with the given mass keys.
fn beam(mass_keys: &str, clamped: bool) -> Scene {
    let text = format!(
        r#"
        [simulation]
        dt = 0.01
        gravity = [0.0, 0.0, -9.81]
        [[soft_body]]
        name = "beam"
        mesh = "meshes/beam_2.msh"
        law = "neo_hookean"
        young_modulus = 1.0e5
        poisson_ratio = 0.3
        {mass_keys}
        {clamp}
        "#,
        clamp = if clamped {
            "fixed_group = \"clamp\""
        } else {
            ""
        },
    );
    let file = SceneFile::parse("beam.toml", &text, &[]).unwrap();
    Scene::build(&file, root()).unwrap()
}

#[test]
fn uniform_mass_puts_total_mass_over_n_on_every_node_fixed_ones_included() {
    let total = 0.0123;
    let scene = beam(&format!("mass = \"uniform\"\ntotal_mass = {total}"), true);
    let body = &scene.bodies[0];
    assert_eq!(body.options().mass, MassKind::Uniform);
    let n = body.node_count();
    assert!((0..n).any(|i| body.is_fixed(i)), "the clamp fixes nodes");
    let sum: f64 = body.node_masses().iter().sum();
    assert!((sum - total).abs() <= 1e-12 * total, "{sum} vs {total}");
    assert!((body.total_mass() - total).abs() <= 1e-12 * total);
    let each = total / n as f64;
    for (i, &m) in body.node_masses().iter().enumerate() {
        assert!((m - each).abs() <= 1e-12 * each, "node {i}: {m} vs {each}");
    }
    // The mean density ρ = total_mass / V stands for the density elsewhere.
    let v: f64 = body.elements().iter().map(|e| e.volume).sum();
    assert!((body.options().density * v - total).abs() <= 1e-12 * total);
}

#[test]
fn a_freely_falling_body_with_uniform_mass_has_its_centre_of_mass_accelerate_at_g() {
    // Spinning and stretching initially, so the elastic forces are far from zero. They sum to
    // zero (Σₙ gₙ = 0) and 1ᵀK = 0, so with a diagonal M the momentum of the linearised step
    // grows by exactly h m g: v_c(k) = v_c(0) + k h g and, with x⁺ = x + h v⁺,
    // x_c(k) = x_c(0) + k h v_c(0) + h² g k(k + 1)/2 (analytic, independent of the solver).
    let total = 0.0123;
    let scene = beam(&format!("mass = \"uniform\"\ntotal_mass = {total}"), false);
    let body = &scene.bodies[0];
    let m = body.node_masses();
    let mut state = scene.initial_state();
    let centre = |p: &[Vec3]| p.iter().zip(m).map(|(p, &mi)| p * mi).sum::<Vec3>() / total;
    let x_mid = centre(body.rest_positions());
    for (v, x) in state.bodies[0]
        .velocities
        .iter_mut()
        .zip(body.rest_positions())
    {
        let r = x - x_mid;
        *v = Vec3::new(0.0, 0.0, 3.0).cross(&r) + Vec3::new(2.0 * r.x, 0.1, -0.2);
    }
    let (x0, v0) = (
        centre(&state.bodies[0].positions),
        centre(&state.bodies[0].velocities),
    );
    let (h, g) = (scene.simulation.dt, scene.gravity());
    let mut stepper = Stepper::new(&scene).unwrap();
    for k in 1..=20 {
        stepper.step(&scene, &mut state).unwrap();
        let kf = k as f64;
        let v_expected = v0 + kf * h * g;
        let x_expected = x0 + kf * h * v0 + h * h * g * kf * (kf + 1.0) / 2.0;
        let v = centre(&state.bodies[0].velocities);
        let x = centre(&state.bodies[0].positions);
        assert!(
            (v - v_expected).norm() <= 1e-9 * v_expected.norm(),
            "step {k}: v_c {v:?} vs {v_expected:?}"
        );
        assert!(
            (x - x_expected).norm() <= 1e-10 * x_expected.norm(),
            "step {k}: x_c {x:?} vs {x_expected:?}"
        );
    }
}

#[test]
fn a_scene_without_mass_keys_is_unchanged() {
    // The committed scene file still loads, with the density-lumped mass.
    let scene = Scene::load(&root().join("scenes/beam.toml"), &[]).unwrap();
    let body = &scene.bodies[0];
    assert_eq!(body.options().mass, MassKind::Lumped);
    assert_eq!(body.options().density, 1000.0);
    let elements: Vec<([usize; 4], f64)> = body
        .elements()
        .iter()
        .map(|e| (e.nodes, e.volume))
        .collect();
    assert_eq!(
        body.node_masses(),
        &lumped_masses(body.node_count(), &elements, 1000.0)[..]
    );
    // Without `mass` (the default) the same body, bit for bit, and the same step.
    let explicit = beam("density = 1000.0\nmass = \"lumped\"", true);
    let default = beam("density = 1000.0", true);
    assert_eq!(
        explicit.bodies[0].node_masses(),
        default.bodies[0].node_masses()
    );
    assert_eq!(
        explicit.bodies[0].mass_values(),
        default.bodies[0].mass_values()
    );
    let step = |scene: &Scene| {
        let mut state = scene.initial_state();
        Stepper::new(scene)
            .unwrap()
            .step(scene, &mut state)
            .unwrap();
        state.bodies[0].positions.clone()
    };
    assert_eq!(step(&explicit), step(&default));
}
