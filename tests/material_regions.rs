//! `[[soft_body.region]]` (elements of another material, SOFA's stiff layer): a two-material
//! bar stretched along its axis carries the series-springs force, with the exact piecewise
//! linear displacement as its equilibrium; a region of the body's own material changes
//! nothing and one covering the whole body is the body at the region's E (second methods);
//! derivatives with respect to the body's E and ν, which do not reach the region, match
//! central differences of the simulator; bad regions are one-line errors naming the key.

use std::path::Path;

use crate::diff_support;

use diff_support::{check_adjointness, check_jvp_against_fd, parameters, warm_state};
use diffsoro::diff::Recorder;
use diffsoro::fem::{MassKind, MaterialRegion, SoftBody, SoftBodyOptions};
use diffsoro::material::{Law, Material};
use diffsoro::math::Vec3;
use diffsoro::mesh::box_mesh;
use diffsoro::scene::{Scene, SceneFile, Stepper};

use crate::diff_support::clamped_beam;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The 100 × 10 × 10 mm beam of meshes/beam_1.msh (x ∈ [0, 0.1]) clamped at x = 0 under
/// gravity, law `law`, E = 2e5 Pa, ν = 0.35, with the TOML `regions` appended and the
/// overrides `sets`.
fn beam_with(law: &str, regions: &str, sets: &[String]) -> Result<Scene, String> {
    let text = clamped_beam::text(law, clamped_beam::DAMPED, regions);
    let file = SceneFile::parse("beam.toml", &text, sets).map_err(|e| e.to_string())?;
    file.validate().map_err(|e| e.to_string())?;
    Scene::build(&file, &Path::new(ROOT).join("meshes")).map_err(|e| e.to_string())
}

/// [`beam_with`] without overrides.
fn beam(law: &str, regions: &str) -> Result<Scene, String> {
    beam_with(law, regions, &[])
}

/// `scene` with its (only) body's Young's modulus set to `e` (Pa).
fn with_e(scene: &Scene, e: f64) -> Scene {
    let mut s = scene.clone();
    let m = *s.bodies[0].material();
    s.bodies[0]
        .set_material(diffsoro::material::Material::new(m.law(), e, m.poisson_ratio()).unwrap());
    s
}

const TIP_HALF: &str = r#"
        [[soft_body.region]]
        name = "tip_half"
        box = [[0.05, -1.0, -1.0], [1.0, 1.0, 1.0]]
        young_modulus = 1.2e6
"#;

/// Node positions after `steps` steps from rest.
fn run(scene: &Scene, steps: usize) -> Vec<Vec3> {
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(scene).unwrap();
    for _ in 0..steps {
        stepper.step(scene, &mut state).unwrap();
    }
    state.bodies[0].positions.clone()
}

/// A bar of two materials (ν = 0) stretched by δ: the exact solution is the piecewise linear
/// displacement with one stress σ in both halves, σ = δ / (L₁/E₁ + L₂/E₂) (springs in
/// series). With ν = 0 it is uniaxial strain, which linear tetrahedra represent exactly, and
/// the co-rotational rotation of a pure stretch is the identity, so the discrete body is in
/// equilibrium at that field to round-off and its end face carries σA.
#[test]
fn a_two_material_bar_carries_the_series_springs_force() {
    // A structured mesh: every tetrahedron lies on one side of the interface x = 0.05.
    let mesh = box_mesh([8, 2, 2], [0.0, -0.005, -0.005], [0.1, 0.005, 0.005]).unwrap();
    let n = mesh.node_count();
    let law = Law::Corotational;
    let mut body = SoftBody::new(
        "bar",
        mesh,
        SoftBodyOptions {
            material: Material::new(law, 2.0e5, 0.0).unwrap(),
            density: 1000.0,
            mass: MassKind::Lumped,
            rayleigh_mass: 0.0,
            rayleigh_stiffness: 0.0,
            fixed: vec![false; n],
        },
    )
    .unwrap();
    let x0 = body.rest_positions().to_vec();
    let elements: Vec<usize> = (0..body.elements().len())
        .filter(|&e| {
            body.elements()[e]
                .nodes
                .iter()
                .all(|&k| x0[k].x >= 0.05 - 1e-12)
        })
        .collect();
    body.set_material_regions(&[MaterialRegion {
        material: Material::new(law, 6.0e5, 0.0).unwrap(),
        elements,
    }])
    .unwrap();
    let x0 = &x0;
    assert!(
        x0.iter().any(|p| (p.x - 0.05).abs() < 1e-12),
        "the mesh has nodes on the interface x = 0.05"
    );
    let in_stiff = (0..body.elements().len())
        .filter(|&e| body.in_region(e))
        .count();
    assert_eq!(in_stiff, body.region_element_count());
    assert_eq!(2 * in_stiff, body.elements().len(), "half the bar");
    let (l1, l2, e1, e2, a) = (0.05, 0.05, 2.0e5, 6.0e5, 0.01 * 0.01);
    let delta = 2e-3;
    let sigma = delta / (l1 / e1 + l2 / e2);
    let (eps1, eps2) = (sigma / e1, sigma / e2);
    let u = |x: f64| {
        if x <= l1 {
            eps1 * x
        } else {
            eps1 * l1 + eps2 * (x - l1)
        }
    };
    let x: Vec<Vec3> = x0.iter().map(|p| p + Vec3::new(u(p.x), 0.0, 0.0)).collect();
    let mut es = body.elastic_state();
    body.evaluate_elastic(&x, diffsoro::fem::Stiffness::Skip, &mut es)
        .unwrap();
    let scale = sigma * a;
    let mut tip = Vec3::zeros();
    for (p, f) in x0.iter().zip(&es.forces) {
        if (p.x - 0.1).abs() < 1e-12 {
            tip += f;
        } else if p.x > 1e-12 {
            assert!(f.norm() < 1e-10 * scale, "interior node {p:?}: force {f:?}");
        }
    }
    // The elastic force on the stretched end pulls it back with σA.
    assert!(
        (tip - Vec3::new(-scale, 0.0, 0.0)).norm() < 1e-10 * scale,
        "end-face force {tip:?}, expected {:e} N along −x",
        -scale
    );
}

/// A region of the body's own material is the body itself (bit for bit); a region over the
/// whole body is the body at the region's E (to round-off: the Lamé pair of the region is
/// computed once, the body's from its own E).
#[test]
fn regions_are_the_bodies_they_stand_for() {
    for law in ["corotational", "stvk", "neo_hookean"] {
        let plain = run(&beam(law, "").unwrap(), 5);
        let same = run(
            &beam(
                law,
                r#"[[soft_body.region]]
                name = "same"
                box = [[0.05, -1.0, -1.0], [1.0, 1.0, 1.0]]
                young_modulus = 2.0e5"#,
            )
            .unwrap(),
            5,
        );
        assert_eq!(plain, same, "{law}");
        let stiff = run(&with_e(&beam(law, "").unwrap(), 1.2e6), 5);
        let whole = run(
            &beam(
                law,
                r#"[[soft_body.region]]
                name = "all"
                box = [[-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]]
                young_modulus = 1.2e6"#,
            )
            .unwrap(),
            5,
        );
        let gap = stiff
            .iter()
            .zip(&whole)
            .map(|(a, b)| (a - b).norm())
            .fold(0.0, f64::max);
        assert!(gap < 1e-12, "{law}: {gap:e} m apart");
        // And a stiff tip half sags less than the plain beam and more than the stiff one.
        let half = run(&beam(law, TIP_HALF).unwrap(), 5);
        let sag = |x: &[Vec3]| x.iter().map(|p| p.z).fold(f64::INFINITY, f64::min);
        assert!(
            sag(&plain) < sag(&half) && sag(&half) < sag(&stiff),
            "{law}"
        );
    }
}

/// The derivatives with respect to the body's E and ν (whose elements exclude the region's)
/// match central differences of one and of ten steps, for every law, and are adjoint.
#[test]
fn derivatives_with_a_region_match_finite_differences() {
    for law in ["corotational", "stvk", "neo_hookean"] {
        let scene = beam(law, TIP_HALF).unwrap();
        let names = ["young_modulus:beam", "poisson_ratio:beam"];
        check_jvp_against_fd(&scene, &names, 1, 5);
        check_jvp_against_fd(&scene, &names, 10, 0);
        let mut state = warm_state(&scene, 3);
        let mut recorder = Recorder::new(&scene).unwrap();
        let (_, record) = recorder.step(&scene, &mut state).unwrap();
        check_adjointness(&scene, &record, &parameters(&scene, &names), 7);
    }
}

#[test]
fn bad_regions_are_one_line_errors_naming_the_key() {
    for (region, needles) in [
        (
            r#"name = "r"
            box = [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
            young_modulus = 1e6"#,
            &["soft_body.beam.region.r.box", "holds no element"][..],
        ),
        (
            r#"name = "r"
            box = [[0.0, 0.0, 0.0], [-1.0, 1.0, 1.0]]
            young_modulus = 1e6"#,
            &["soft_body.beam.region.r.box", "min ≤ max"][..],
        ),
        (
            r#"name = "r"
            box = [[0.0, -1.0, -1.0], [1.0, 1.0, 1.0]]
            young_modulus = -1.0"#,
            &["soft_body.beam.region.r.young_modulus", "positive"][..],
        ),
        (
            r#"name = "r"
            box = [[0.0, -1.0, -1.0], [1.0, 1.0, 1.0]]
            young_modulus = 1e6
            poisson_ratio = 0.5"#,
            &["soft_body.beam.region.r.poisson_ratio"][..],
        ),
        (
            r#"name = "r"
            box = [[0.0, -1.0, -1.0], [1.0, 1.0, 1.0]]
            young_modulus = 1e6
            density = 2000.0"#,
            &["density"][..],
        ),
    ] {
        let e = beam("corotational", &format!("[[soft_body.region]]\n{region}")).unwrap_err();
        assert_eq!(e.lines().count(), 1, "{e}");
        for n in needles {
            assert!(e.contains(n), "`{n}` not in: {e}");
        }
    }
    // Two regions of one name.
    let e = beam(
        "corotational",
        &format!("{TIP_HALF}\n{}", TIP_HALF.replace("1.2e6", "2e6")),
    )
    .unwrap_err();
    assert!(
        e.contains("region.tip_half") && e.contains("this name"),
        "{e}"
    );
}

/// `--set` reaches a region by name, as any named entry: setting the region back to the
/// body's E gives the plain beam, bit for bit.
#[test]
fn set_reaches_a_region_by_name() {
    let set = ["soft_body.beam.region.tip_half.young_modulus=2.0e5".to_string()];
    let reset = beam_with("corotational", TIP_HALF, &set).unwrap();
    assert!(reset.bodies[0].region_element_count() > 0);
    assert_eq!(run(&reset, 5), run(&beam("corotational", "").unwrap(), 5));
    assert_ne!(
        run(&beam("corotational", TIP_HALF).unwrap(), 5),
        run(&reset, 5)
    );
}
