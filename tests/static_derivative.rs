//! The derivative of a static equilibrium (`scene::StaticTangent`, what a run started at rest
//! at its static equilibrium carries into its trajectory derivatives) against central finite
//! differences of the static solve itself (1e-6 relative, norm-wise), and the reverse form
//! against the forward one.

use std::path::Path;

use crate::diff_support::clamped_beam;
use diffsoro::fem::MaterialParameter;
use diffsoro::math::{Vec3, relative_error};

use diffsoro::scene::{Scene, StaticInput, StaticOptions, StaticTangent, solve_static};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The 100 × 10 × 10 mm beam clamped at x = 0, sagging under gravity, pulled by an off-axis
/// cable (0.3 N) and by a second one on the other side (0.1 N): a stable equilibrium.
fn beam() -> Scene {
    let cables = r#"
        [[soft_body.cable]]
        name = "top"
        points = [[0.1, 0.0, 0.004], [0.05, 0.0, 0.004], [0.0, 0.0, 0.004]]
        force = 0.3
        [[soft_body.cable]]
        name = "side"
        points = [[0.1, 0.003, 0.0], [0.0, 0.003, 0.0]]
        force = 0.1
    "#;
    clamped_beam::build(&clamped_beam::text("neo_hookean", "", cables), &[])
}

/// The PneuNet finger of scenes/pneumatic.toml with its cavity at 3 kPa: a cavity's tangent
/// −p ∂²V/∂x² lies outside the sparse matrix and joins the solve by conjugate gradients.
fn pneunet() -> Scene {
    Scene::load(
        &Path::new(ROOT).join("scenes/pneumatic.toml"),
        &["soft_body.pneunet.pneumatic.cavity.pressure=3000".to_string()],
    )
    .unwrap()
}

/// Static options converged to round-off: Newton's last iterate, not the tolerance, decides
/// how accurate the finite differences are.
fn tight() -> StaticOptions {
    StaticOptions {
        tolerance: 1e-13,
        increment_tolerance: 1e-15,
        max_iterations: 80,
        ..StaticOptions::default()
    }
}

/// x* of `scene` with input `input` moved by `delta` (m, every node of body 0).
fn equilibrium(scene: &Scene, input: StaticInput, delta: f64) -> Vec<Vec3> {
    let mut s = scene.clone();
    match input {
        StaticInput::Material { body, parameter } => {
            let m = *s.bodies[body].material();
            let (e, nu) = match parameter {
                MaterialParameter::YoungModulus => (m.young_modulus() + delta, m.poisson_ratio()),
                MaterialParameter::PoissonRatio => (m.young_modulus(), m.poisson_ratio() + delta),
            };
            s.bodies[body].set_material(diffsoro::material::Material::new(m.law(), e, nu).unwrap());
        }
        StaticInput::Density { body } => {
            let rho = s.bodies[body].options().density;
            s.bodies[body].set_density(rho + delta).unwrap();
        }
        StaticInput::Actuator { body, index } => {
            let a = &mut s.actuation[body].actuators[index];
            let diffsoro::actuator::Drive::Force(f) = a.drive else {
                panic!("force-driven")
            };
            a.drive = diffsoro::actuator::Drive::Force(f + delta);
        }
    }
    let mut state = s.initial_state();
    solve_static(&s, &mut state, tight()).unwrap();
    state.bodies[0].positions.clone()
}

fn flat(v: &[Vec3]) -> Vec<f64> {
    v.iter().flat_map(|p| [p.x, p.y, p.z]).collect()
}

/// dx*/dθ by [`StaticTangent`] against (x*(θ + δ) − x*(θ − δ)) / 2δ for each input.
fn check_against_fd(scene: &Scene, inputs: &[(StaticInput, f64)]) {
    let mut state = scene.initial_state();
    solve_static(scene, &mut state, tight()).unwrap();
    let mut tangent = StaticTangent::new(scene, &state).unwrap();
    for &(input, step) in inputs {
        let dx = tangent.tangent(scene, &state, &[(input, 1.0)]).unwrap();
        let plus = equilibrium(scene, input, step);
        let minus = equilibrium(scene, input, -step);
        let fd: Vec<f64> = flat(&plus)
            .iter()
            .zip(flat(&minus))
            .map(|(p, m)| (p - m) / (2.0 * step))
            .collect();
        let err = relative_error(&flat(&dx[0]), &fd, 1e-300);
        assert!(err < 1e-6, "{input:?}: relative error {err:.2e}");
        assert!(
            fd.iter().any(|d| d.abs() > 0.0),
            "{input:?} moves the equilibrium"
        );
    }
}

#[test]
fn the_equilibrium_of_a_beam_pulled_by_cables_moves_with_e_nu_rho_and_the_tensions_as_its_tangent_says()
 {
    let scene = beam();
    check_against_fd(
        &scene,
        &[
            (
                StaticInput::Material {
                    body: 0,
                    parameter: MaterialParameter::YoungModulus,
                },
                2.0e5 * 1e-4,
            ),
            (
                StaticInput::Material {
                    body: 0,
                    parameter: MaterialParameter::PoissonRatio,
                },
                1e-4,
            ),
            (StaticInput::Actuator { body: 0, index: 0 }, 1e-4),
            (StaticInput::Actuator { body: 0, index: 1 }, 1e-4),
            (StaticInput::Density { body: 0 }, 1e-1),
        ],
    );
}

#[test]
fn the_equilibrium_of_an_inflated_cavity_moves_with_its_pressure_and_e_as_its_tangent_says() {
    let scene = pneunet();
    let e = scene.bodies[0].material().young_modulus();
    check_against_fd(
        &scene,
        &[
            (StaticInput::Actuator { body: 0, index: 0 }, 3000.0 * 1e-4),
            (
                StaticInput::Material {
                    body: 0,
                    parameter: MaterialParameter::YoungModulus,
                },
                e * 1e-4,
            ),
        ],
    );
}

/// The reverse form: ⟨x̄, dx*/dθᵢ⟩ from one adjoint solve equals the forward tangent's inner
/// product, for every input at once (symmetric T − J_a).
#[test]
fn the_cotangent_of_a_static_start_is_the_transpose_of_its_tangent() {
    for scene in [beam(), pneunet()] {
        let mut state = scene.initial_state();
        solve_static(&scene, &mut state, StaticOptions::default()).unwrap();
        let mut tangent = StaticTangent::new(&scene, &state).unwrap();
        let n = scene.bodies[0].node_count();
        let xbar: Vec<Vec3> = (0..n)
            .map(|i| {
                let t = i as f64;
                Vec3::new((0.7 * t).sin(), (1.3 * t).cos(), (0.4 * t + 1.0).sin())
            })
            .collect();
        let inputs: Vec<StaticInput> = [
            StaticInput::Material {
                body: 0,
                parameter: MaterialParameter::YoungModulus,
            },
            StaticInput::Actuator { body: 0, index: 0 },
        ]
        .into();
        let reverse = tangent
            .cotangent(&scene, &state, std::slice::from_ref(&xbar), &inputs)
            .unwrap();
        for (input, r) in inputs.iter().zip(&reverse) {
            let dx = tangent.tangent(&scene, &state, &[(*input, 1.0)]).unwrap();
            let forward: f64 = dx[0]
                .iter()
                .enumerate()
                .filter(|(i, _)| !scene.bodies[0].is_fixed(*i))
                .map(|(i, d)| d.dot(&xbar[i]))
                .sum();
            let err = (forward - r).abs() / forward.abs().max(1e-300);
            assert!(err < 1e-8, "{input:?}: forward {forward:e} reverse {r:e}");
        }
    }
}

#[test]
fn a_static_start_with_a_displacement_driven_cable_has_no_derivative_and_says_why() {
    let mut scene = beam();
    let rest = {
        let a = &scene.actuation[0].actuators[0];
        a.kind.value(scene.bodies[0].rest_positions())
    };
    scene.actuation[0].actuators[0].drive = diffsoro::actuator::Drive::Target(rest - 1e-4);
    let state = scene.initial_state();
    let err = StaticTangent::new(&scene, &state)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("soft_body.beam") && err.contains("force-driven"),
        "{err}"
    );
}
