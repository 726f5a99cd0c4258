//! The `corotational_sofa` law (SOFA's TetrahedronFEMForceField `polar`): held
//! against an independent numpy implementation (tests/data/sofa_corotational_reference.py and
//! its committed output), rigid motions, the small-strain limit, its node-order dependence and
//! net torque, the refusal of derivatives, and a static solve.

use std::path::Path;

use diffsoro::fem::{MassKind, SoftBody, SoftBodyOptions, Stiffness};
use diffsoro::material::{Law, Material};
use diffsoro::math::{Mat3, Vec3};
use diffsoro::mesh::{Groups, Mesh};
use diffsoro::scene::{Scene, SceneFile, StaticOptions, solve_static};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// One tetrahedron (nodes 0..4 in the given order) of law `law`.
fn tet_body(law: Law, rest: &[Vec3], e: f64, nu: f64) -> SoftBody {
    let mesh = Mesh::new(rest.to_vec(), vec![[0, 1, 2, 3]], vec![], Groups::default()).unwrap();
    let options = SoftBodyOptions {
        material: Material::new(law, e, nu).unwrap(),
        density: 1000.0,
        mass: MassKind::Lumped,
        rayleigh_mass: 0.0,
        rayleigh_stiffness: 0.0,
        fixed: vec![false; 4],
    };
    SoftBody::new("tet", mesh, options).unwrap()
}

/// Nodal forces (N) and the 12×12 element stiffness (N/m, row-major, index 3n + a) at `x`.
fn forces_and_stiffness(body: &SoftBody, x: &[Vec3]) -> (Vec<f64>, Vec<f64>) {
    let mut state = body.elastic_state();
    body.evaluate_elastic(x, Stiffness::Assemble, &mut state)
        .unwrap();
    let forces = state.forces.iter().flat_map(|f| [f.x, f.y, f.z]).collect();
    let mut k = vec![0.0; 144];
    body.elements()[0].stiffness(&body.material_point(0, x).unwrap().tangent(), &mut k);
    (forces, k)
}

fn relative(a: &[f64], b: &[f64]) -> f64 {
    let d: f64 = a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum();
    let n: f64 = b.iter().map(|y| y * y).sum();
    (d / n).sqrt()
}

fn rotation(axis: Vec3, angle: f64) -> Mat3 {
    *nalgebra::Rotation3::from_axis_angle(&nalgebra::Unit::new_normalize(axis), angle).matrix()
}

fn skewed() -> Vec<Vec3> {
    vec![
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(0.010, 0.001, 0.0),
        Vec3::new(0.002, 0.009, 0.0005),
        Vec3::new(0.001, 0.0015, 0.012),
    ]
}

/// x = Q A (X − c) + c + t.
fn moved(rest: &[Vec3], q: &Mat3, a: &Mat3) -> Vec<Vec3> {
    let c = rest.iter().sum::<Vec3>() / 4.0;
    rest.iter()
        .map(|p| q * a * (p - c) + c + Vec3::new(0.003, -0.002, 0.001))
        .collect()
}

struct Case {
    name: String,
    rest: Vec<Vec3>,
    deformed: Vec<Vec3>,
    forces: Vec<f64>,
    stiffness: Vec<f64>,
}

fn reference() -> (f64, f64, Vec<Case>) {
    let path = root().join("tests/data/sofa_corotational_reference.json");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let points = |v: &serde_json::Value| -> Vec<Vec3> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let c: Vec<f64> = serde_json::from_value(p.clone()).unwrap();
                Vec3::new(c[0], c[1], c[2])
            })
            .collect()
    };
    let flat = |v: &serde_json::Value| -> Vec<f64> {
        let rows: Vec<Vec<f64>> = serde_json::from_value(v.clone()).unwrap();
        rows.concat()
    };
    let cases = json["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| Case {
            name: c["name"].as_str().unwrap().to_string(),
            rest: points(&c["rest"]),
            deformed: points(&c["deformed"]),
            forces: flat(&c["forces"]),
            stiffness: flat(&c["stiffness"]),
        })
        .collect();
    (
        json["young_modulus"].as_f64().unwrap(),
        json["poisson_ratio"].as_f64().unwrap(),
        cases,
    )
}

#[test]
fn forces_and_stiffness_match_the_independent_numpy_reference() {
    let (e, nu, cases) = reference();
    assert_eq!(cases.len(), 8);
    for c in &cases {
        let body = tet_body(Law::CorotationalSofa, &c.rest, e, nu);
        let (f, k) = forces_and_stiffness(&body, &c.deformed);
        let (ef, ek) = (relative(&f, &c.forces), relative(&k, &c.stiffness));
        assert!(ef < 1e-8, "{}: forces relative error {ef:.2e}", c.name);
        assert!(ek < 1e-8, "{}: stiffness relative error {ek:.2e}", c.name);
        // R K₀ Rᵀ is symmetric.
        let largest = k.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for r in 0..12 {
            for col in 0..r {
                assert!((k[r * 12 + col] - k[col * 12 + r]).abs() <= 1e-12 * largest);
            }
        }
        eprintln!("{}: forces {ef:.1e}, stiffness {ek:.1e}", c.name);
    }
}

#[test]
fn a_rigidly_moved_rest_shape_has_no_force() {
    let rest = skewed();
    let body = tet_body(Law::CorotationalSofa, &rest, 450e3, 0.45);
    let stretch = Mat3::from_diagonal(&Vec3::new(1.01, 1.0, 1.0));
    let (scale, _) = forces_and_stiffness(&body, &moved(&rest, &Mat3::identity(), &stretch));
    let scale = scale.iter().map(|v| v * v).sum::<f64>().sqrt();
    for (axis, angle) in [
        (Vec3::new(1.0, 2.0, 3.0), 2.1),
        (Vec3::new(0.0, -1.0, 0.2), 3.1),
        (Vec3::new(1.0, 0.0, 0.0), 0.4),
    ] {
        let x = moved(&rest, &rotation(axis, angle), &Mat3::identity());
        let (f, _) = forces_and_stiffness(&body, &x);
        let norm = f.iter().map(|v| v * v).sum::<f64>().sqrt();
        assert!(
            norm <= 1e-9 * scale,
            "rotation {angle}: |f| = {norm:e} vs {scale:e}"
        );
    }
}

#[test]
fn at_small_strain_it_agrees_with_corotational_to_first_order() {
    // Strain 1e-6 (stretch and shear) under a large rotation: the laws differ by O(ε²) in the
    // forces (R_sofa − polar(F) = O(ε) times σ = O(ε)), i.e. relatively by O(ε).
    let rest = skewed();
    let a = Mat3::identity() + Mat3::new(1.0, 0.6, -0.3, 0.2, -0.8, 0.5, 0.4, 0.1, 0.7) * 1e-6;
    let x = moved(&rest, &rotation(Vec3::new(1.0, -2.0, 0.5), 1.9), &a);
    let sofa = tet_body(Law::CorotationalSofa, &rest, 450e3, 0.45);
    let corot = tet_body(Law::Corotational, &rest, 450e3, 0.45);
    let (fs, ks) = forces_and_stiffness(&sofa, &x);
    let (fc, kc) = forces_and_stiffness(&corot, &x);
    let (ef, ek) = (relative(&fs, &fc), relative(&ks, &kc));
    eprintln!("strain 1e-6: forces differ by {ef:.1e}, stiffness by {ek:.1e}");
    assert!(ef < 1e-4, "forces differ by {ef:e}");
    assert!(ek < 1e-4, "stiffness differs by {ek:e}");
    // At a finite strain they differ (the test is not vacuous).
    let big = Mat3::identity() + Mat3::new(1.0, 0.6, -0.3, 0.2, -0.8, 0.5, 0.4, 0.1, 0.7) * 0.1;
    let x = moved(&rest, &rotation(Vec3::new(1.0, -2.0, 0.5), 1.9), &big);
    let (fs, _) = forces_and_stiffness(&sofa, &x);
    let (fc, _) = forces_and_stiffness(&corot, &x);
    assert!(relative(&fs, &fc) > 1e-3, "{}", relative(&fs, &fc));
}

#[test]
fn the_first_node_matters_and_the_element_exerts_a_net_torque() {
    let (e, nu, cases) = reference();
    let by_name = |n: &str| cases.iter().find(|c| c.name == n).unwrap();
    let forces =
        |law: Law, c: &Case| forces_and_stiffness(&tet_body(law, &c.rest, e, nu), &c.deformed).0;
    for base in ["stretched_rotated_120deg", "compressed_30pc_rotated_170deg"] {
        let abcd = by_name(base);
        let f_abcd = forces(Law::CorotationalSofa, abcd);
        // Node n of the reordered element is node perm[n] of the original.
        let unpermute = |f: &[f64], perm: [usize; 4]| {
            let mut out = vec![0.0; 12];
            for (n, &orig) in perm.iter().enumerate() {
                out[3 * orig..3 * orig + 3].copy_from_slice(&f[3 * n..3 * n + 3]);
            }
            out
        };
        let bcad = unpermute(
            &forces(
                Law::CorotationalSofa,
                by_name(&format!("{base}_order_bcad")),
            ),
            [1, 2, 0, 3],
        );
        let badc = unpermute(
            &forces(
                Law::CorotationalSofa,
                by_name(&format!("{base}_order_badc")),
            ),
            [1, 0, 3, 2],
        );
        // Another first node: other forces. The same first node: the same (D_m and D_s lose
        // the same column permutation P, and polar(D P) = polar(D) P).
        assert!(
            relative(&bcad, &f_abcd) > 1e-3,
            "{base}: {}",
            relative(&bcad, &f_abcd)
        );
        assert!(
            relative(&badc, &bcad) < 1e-12,
            "{base}: {}",
            relative(&badc, &bcad)
        );
        // `corotational` does not depend on the order.
        let c_abcd = forces(Law::Corotational, abcd);
        let c_bcad = unpermute(
            &forces(Law::Corotational, by_name(&format!("{base}_order_bcad"))),
            [1, 2, 0, 3],
        );
        assert!(relative(&c_bcad, &c_abcd) < 1e-12);
        // Net force 0; net torque Σ x × f ≠ 0 (it is 0 for `corotational`).
        let torque = |f: &[f64]| -> (Vec3, Vec3, f64) {
            let x = &abcd.deformed;
            let fv: Vec<Vec3> = f.chunks(3).map(|c| Vec3::new(c[0], c[1], c[2])).collect();
            let size = fv.iter().map(|v| v.norm()).sum::<f64>() * (x[1] - x[0]).norm();
            (
                fv.iter().sum(),
                x.iter().zip(&fv).map(|(p, v)| p.cross(v)).sum(),
                size,
            )
        };
        let (net, moment, size) = torque(&f_abcd);
        assert!(net.norm() < 1e-12 * size / (abcd.deformed[1] - abcd.deformed[0]).norm());
        assert!(moment.norm() > 1e-3 * size, "{base}: torque {moment:?}");
        let (_, moment, size) = torque(&c_abcd);
        assert!(
            moment.norm() < 1e-10 * size,
            "{base}: corotational torque {moment:?}"
        );
    }
}

fn beam_scene(law: &str) -> Scene {
    let text = format!(
        r#"
        [simulation]
        dt = 0.01
        gravity = [0.0, 0.0, -9.81]
        [[soft_body]]
        name = "beam"
        mesh = "meshes/beam_2.msh"
        law = "{law}"
        young_modulus = 1.0e5
        poisson_ratio = 0.3
        density = 1000.0
        fixed_group = "clamp"
        "#
    );
    Scene::build(&SceneFile::parse("beam.toml", &text, &[]).unwrap(), root()).unwrap()
}

#[test]
fn derivatives_refuse_the_law_with_a_one_line_error_naming_the_key() {
    let scene = beam_scene("corotational_sofa");
    let err = diffsoro::diff::check_differentiable(&scene)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("soft_body.beam.law"), "{err}");
    assert!(
        err.contains(
            "law corotational_sofa has no exact tangent; derivatives need corotational, stvk or neo_hookean"
        ),
        "{err}"
    );
    assert!(!err.contains('\n'));
    assert!(diffsoro::diff::Recorder::new(&scene).is_err());
    diffsoro::diff::check_differentiable(&beam_scene("corotational")).unwrap();
}

#[test]
fn statics_converge_with_it_and_the_sag_is_close_to_corotational() {
    // The 100 mm cantilever (E = 100 kPa) sags about 73 mm under its weight, a large
    // rotation: the laws still agree to about 2e-5 relative (checked within 1 %). Statics
    // solves the law's own equilibrium with the `corotational` tangent as Newton matrix
    // (scene::statics: R K₀ Rᵀ lacks the geometric terms and diverges on the Trunk).
    let sag = |law: &str| {
        let scene = beam_scene(law);
        let mut state = scene.initial_state();
        solve_static(&scene, &mut state, StaticOptions::default()).unwrap();
        let body = &scene.bodies[0];
        (0..body.node_count())
            .map(|i| body.rest_positions()[i].z - state.bodies[0].positions[i].z)
            .fold(0.0, f64::max)
    };
    let (s, c) = (sag("corotational_sofa"), sag("corotational"));
    eprintln!("beam sag: corotational_sofa {s:.6e} m, corotational {c:.6e} m");
    assert!(c > 1e-4, "sag {c}");
    assert!((s - c).abs() < 1e-2 * c, "sofa {s} vs corotational {c}");
}

/// The real SoftRobots Trunk (outside the repository, SOFA SoftRobots, LGPL-3.0).
fn real_trunk() -> std::path::PathBuf {
    let dir = std::env::var_os("DIFFSORO_REAL_MESHES").map_or_else(
        || root().join("../shared/meshes-real"),
        std::path::PathBuf::from,
    );
    dir.join("trunk/trunk.vtk")
}

#[test]
#[ignore = "needs the published SoftRobots meshes (docs/real-meshes.md); run with --ignored"]
fn on_the_real_trunk_under_sideways_gravity_the_laws_differ_by_about_two_tenths_of_a_percent() {
    // The published Trunk: E 450 kPa, ν 0.45, density-lumped mass (ρ = 1000 kg/m³), base slab
    // z ∈ [0, 20] mm fixed, gravity −y, `--static`: a sag of about 150 mm. Measured here
    // (2026-11): sag 150.80 mm (corotational) and 150.63 mm (corotational_sofa), i.e. the sags
    // differ by 0.11 %, and the largest distance between the two equilibria is 0.22 % of the
    // sag (an earlier measurement gave 0.19 %); the test checks the latter in [0.1 %, 0.3 %].
    let mesh = real_trunk();
    assert!(
        mesh.is_file(),
        "{} is absent: put the published meshes there or set DIFFSORO_REAL_MESHES (docs/real-meshes.md)",
        mesh.display()
    );
    let solve = |law: &str| {
        let text = format!(
            r#"
            [simulation]
            dt = 0.01
            gravity = [0.0, -9.81, 0.0]
            [[soft_body]]
            name = "trunk"
            mesh = "{mesh}"
            scale = 0.001
            law = "{law}"
            young_modulus = 450.0e3
            poisson_ratio = 0.45
            density = 1000.0
            fixed_box = [[-0.02, -0.02, 0.0], [0.02, 0.02, 0.02]]
            "#,
            mesh = mesh.display()
        );
        let scene =
            Scene::build(&SceneFile::parse("trunk.toml", &text, &[]).unwrap(), root()).unwrap();
        let mut state = scene.initial_state();
        solve_static(&scene, &mut state, StaticOptions::default()).unwrap();
        let rest = scene.bodies[0].rest_positions().to_vec();
        (rest, state.bodies[0].positions.clone())
    };
    let (rest, corot) = solve("corotational");
    let (_, sofa) = solve("corotational_sofa");
    let sag = |x: &[Vec3]| {
        x.iter()
            .zip(&rest)
            .map(|(p, q)| q.y - p.y)
            .fold(0.0, f64::max)
    };
    let (s_corot, s_sofa) = (sag(&corot), sag(&sofa));
    let apart = corot
        .iter()
        .zip(&sofa)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max)
        / s_corot;
    eprintln!(
        "sag corotational {s_corot:.6} m, corotational_sofa {s_sofa:.6} m; largest distance {:.3} % of the sag, sags differ by {:.3} %",
        100.0 * apart,
        100.0 * (s_sofa - s_corot).abs() / s_corot
    );
    assert!((0.12..0.18).contains(&s_corot), "sag {s_corot}");
    assert!((s_sofa - s_corot).abs() < 0.03 * s_corot);
    assert!((1e-3..3e-3).contains(&apart), "{apart}");
}
