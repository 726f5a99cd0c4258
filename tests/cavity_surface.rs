//! A pneumatic cavity given as its own closed surface file (SOFA's
//! `SurfacePressureConstraint` on a cavity `.stl`): its vertices are embedded in the volume
//! mesh, placed with the body's scale, rotation and translation. Expected numbers: the
//! analytic volume of a box, det(F) times it under an affine map, central finite differences
//! of the volume, and the published cavity's volume (docs/robots.md).

use std::path::{Path, PathBuf};

use diffsoro::actuator::ActuatorKind;
use diffsoro::math::{Mat3, Vec3};
use diffsoro::scene::{Scene, SceneFile, Stepper};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// An ASCII STL of the box [min, max] (12 triangles), outward normals unless `inward`.
fn box_stl(min: [f64; 3], max: [f64; 3], inward: bool) -> String {
    let corner = |k: usize| {
        [
            if k & 1 == 0 { min[0] } else { max[0] },
            if k & 2 == 0 { min[1] } else { max[1] },
            if k & 4 == 0 { min[2] } else { max[2] },
        ]
    };
    let triangles = [
        [0, 4, 6],
        [0, 6, 2],
        [1, 3, 7],
        [1, 7, 5],
        [0, 1, 5],
        [0, 5, 4],
        [2, 6, 7],
        [2, 7, 3],
        [0, 2, 3],
        [0, 3, 1],
        [4, 5, 7],
        [4, 7, 6],
    ];
    let mut out = String::from("solid cavity\n");
    for t in triangles {
        let t = if inward { [t[0], t[2], t[1]] } else { t };
        out += "facet normal 0 0 0\nouter loop\n";
        for k in t {
            let p = corner(k);
            out += &format!("vertex {:e} {:e} {:e}\n", p[0], p[1], p[2]);
        }
        out += "endloop\nendfacet\n";
    }
    out + "endsolid cavity\n"
}

/// A fresh folder under the target directory for this test's files.
fn folder(name: &str) -> PathBuf {
    let dir = Path::new(ROOT)
        .join("target/test-files/cavity_surface")
        .join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The beam (meshes/beam_1.msh, x ∈ [0, 0.1], y, z ∈ [−5, 5] mm) scaled by 2, turned by 0.3
/// rad about z and moved by (0.01, 0, 0.05), with a cavity `surface` (in the mesh file's units).
fn scene_text(surface: &str, extra: &str) -> String {
    format!(
        r#"
        [simulation]
        dt = 0.01
        gravity = [0.0, 0.0, 0.0]
        [[soft_body]]
        name = "bar"
        mesh = "{}"
        law = "corotational"
        young_modulus = 1.0e6
        poisson_ratio = 0.3
        density = 1000.0
        rayleigh_mass = 5.0
        scale = 2.0
        rotation = [0.0, 0.0, 0.3]
        translation = [0.01, 0.0, 0.05]
        fixed_box = [[-1.0, -1.0, -1.0], [0.0105, 1.0, 1.0]]
        [[soft_body.pneumatic]]
        name = "p"
        surface = "{surface}"
        {extra}
        "#,
        Path::new(ROOT).join("meshes/beam_1.msh").display()
    )
}

fn build(dir: &Path, text: &str) -> diffsoro::Result<Scene> {
    let file = SceneFile::parse("bar.toml", text, &[])?;
    Scene::build(&file, dir)
}

#[test]
fn the_cavity_volume_is_the_boxes_and_follows_an_affine_map_by_det_f() {
    let dir = folder("affine");
    let (min, max) = ([0.02, -0.003, -0.003], [0.08, 0.003, 0.003]);
    for (name, inward) in [("out.stl", false), ("in.stl", true)] {
        std::fs::write(dir.join(name), box_stl(min, max, inward)).unwrap();
        let scene = build(&dir, &scene_text(name, "pressure = 0.0")).unwrap();
        let a = &scene.actuation[0].actuators[0];
        assert!(matches!(a.kind, ActuatorKind::Pneumatic(_)));
        let rest = scene.bodies[0].rest_positions();
        // Scale 2 multiplies the volume by 8; a rotation and a translation keep it.
        let exact = 8.0 * 0.06 * 0.006 * 0.006;
        let v = a.kind.value(rest);
        assert!((v - exact).abs() < 1e-12 * exact, "{name}: {v} vs {exact}");
        let f = Mat3::new(1.1, 0.2, -0.05, 0.0, 0.95, 0.1, 0.03, -0.2, 1.2);
        let moved: Vec<Vec3> = rest
            .iter()
            .map(|p| f * p + Vec3::new(0.3, -0.1, 0.2))
            .collect();
        let v = a.kind.value(&moved);
        let expected = f.determinant() * exact;
        assert!((v - expected).abs() < 1e-12 * expected, "{v} vs {expected}");
        // H_a against central differences of the volume along a deformation direction.
        let dir_x: Vec<Vec3> = (0..rest.len())
            .map(|i| {
                let s = |k: f64| (0.7 * i as f64 + 1.3 * k).sin();
                Vec3::new(s(1.0), s(2.0), s(3.0))
            })
            .collect();
        let x: Vec<Vec3> = rest.iter().zip(&dir_x).map(|(p, d)| p + 1e-3 * d).collect();
        let mut rows = Vec::new();
        a.kind.jacobian(&x, &mut rows);
        let analytic: f64 = rows.iter().map(|(n, g)| g.dot(&dir_x[*n])).sum();
        let h = 1e-6;
        let at = |s: f64| {
            let y: Vec<Vec3> = x.iter().zip(&dir_x).map(|(p, d)| p + s * d).collect();
            a.kind.value(&y)
        };
        let fd = (at(h) - at(-h)) / (2.0 * h);
        assert!(
            (analytic - fd).abs() < 1e-7 * analytic.abs(),
            "H·d {analytic} vs FD {fd}"
        );
    }
}

#[test]
fn a_pressure_inflates_the_embedded_cavity() {
    let dir = folder("inflate");
    std::fs::write(
        dir.join("c.stl"),
        box_stl([0.02, -0.003, -0.003], [0.08, 0.003, 0.003], false),
    )
    .unwrap();
    let scene = build(&dir, &scene_text("c.stl", "pressure = 2.0e4")).unwrap();
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    let v0 = scene.actuation[0].actuators[0]
        .kind
        .value(scene.bodies[0].rest_positions());
    for _ in 0..20 {
        stepper.step(&scene, &mut state).unwrap();
    }
    let v = scene.actuation[0].actuators[0]
        .kind
        .value(&state.bodies[0].positions);
    assert!(v > v0 * (1.0 + 1e-3), "{v} vs rest {v0}");
}

#[test]
fn bad_cavity_surfaces_are_named() {
    let dir = folder("bad");
    // An open surface: the box without its last triangle.
    let open: String = {
        let full = box_stl([0.02, -0.003, -0.003], [0.08, 0.003, 0.003], false);
        let cut = full.rfind("facet normal").unwrap();
        format!("{}endsolid cavity\n", &full[..cut])
    };
    std::fs::write(dir.join("open.stl"), open).unwrap();
    for (text, key) in [
        (
            scene_text("missing.stl", "pressure = 0.0"),
            "soft_body.bar.pneumatic.p.surface",
        ),
        (
            scene_text("open.stl", "pressure = 0.0"),
            "soft_body.bar.pneumatic.p.surface",
        ),
        (
            scene_text("open.stl", "group = \"g\"\npressure = 0.0"),
            "soft_body.bar.pneumatic.p",
        ),
    ] {
        let e = build(&dir, &text).unwrap_err().to_string();
        assert!(e.starts_with(key), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
    // An unset variable in the path names the key that holds it, the one `--set` takes.
    let e = build(
        &dir,
        &scene_text("$DIFFSORO_NO_SUCH_VAR/c.stl", "pressure = 0.0"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("soft_body.bar.pneumatic.p.surface: ")
            && e.contains("--set soft_body.bar.pneumatic.p.surface=PATH"),
        "{e}"
    );
    // A cavity reaching out of the mesh beyond the tolerance.
    std::fs::write(
        dir.join("out.stl"),
        box_stl([0.02, -0.003, -0.003], [0.12, 0.003, 0.003], false),
    )
    .unwrap();
    let e = build(&dir, &scene_text("out.stl", "pressure = 0.0"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("soft_body.bar.pneumatic.p.surface vertex"),
        "{e}"
    );
}

#[test]
fn the_published_pneunet_cavity_holds_its_published_volume() {
    // docs/robots.md: pneunetCavityCut.stl, closed, 8,887 mm³, in pneunetCutCoarse.vtk (mm).
    let dir = Path::new(ROOT).join("../shared/meshes-real/pneunet");
    if !dir.join("pneunetCavityCut.stl").is_file() {
        eprintln!("skipped: {} is absent (docs/real-meshes.md)", dir.display());
        return;
    }
    let text = r#"
        [simulation]
        dt = 0.01
        [[soft_body]]
        name = "pneunet"
        mesh = "pneunetCutCoarse.vtk"
        scale = 0.001
        law = "corotational"
        young_modulus = 500.0e3
        poisson_ratio = 0.3
        mass = "uniform"
        total_mass = 0.04
        embed_tolerance = 0.002
        [[soft_body.pneumatic]]
        name = "cavity"
        surface = "pneunetCavityCut.stl"
        pressure = 0.0
        "#;
    let scene = build(&dir, text).unwrap();
    for w in scene.warnings() {
        eprintln!("warning: {w}");
    }
    let v = scene.actuation[0].actuators[0]
        .kind
        .value(scene.bodies[0].rest_positions());
    assert!((v - 8.887e-6).abs() < 1e-3 * 8.887e-6, "{v} m³");
}
