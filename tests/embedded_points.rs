//! Embedded points just outside the mesh (issue 17): mapped into their nearest tetrahedron
//! with extrapolated barycentric weights within the body's `embed_tolerance`, with a warning
//! naming the farthest; an error naming the key beyond it. Expected numbers are the points'
//! own coordinates and their distances to the mesh, known from the geometry.

use std::path::Path;

use diffsoro::scene::{Scene, SceneFile};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The 100 × 10 × 10 mm beam (meshes/beam_1.msh, x ∈ [0, 0.1], y, z ∈ [−5, 5] mm) with a
/// cable along its top and an effector `tip` at `tip`, plus `extra` body keys.
fn beam(tip: [f64; 3], extra: &str) -> diffsoro::Result<Scene> {
    let text = format!(
        r#"
        [simulation]
        dt = 0.01
        gravity = [0.0, 0.0, 0.0]
        [[soft_body]]
        name = "bar"
        mesh = "beam_1.msh"
        law = "corotational"
        young_modulus = 1.0e6
        poisson_ratio = 0.3
        density = 1000.0
        fixed_group = "clamp"
        {extra}
        [[soft_body.cable]]
        name = "c"
        points = [[0.0, 0.0, 0.004], [0.05, 0.0, 0.0053], [0.1, 0.0, 0.004]]
        force = 0.1
        [[soft_body.effector]]
        name = "tip"
        point = [{}, {}, {}]
        "#,
        tip[0], tip[1], tip[2]
    );
    let file = SceneFile::parse("bar.toml", &text, &[])?;
    Scene::build(&file, &Path::new(ROOT).join("meshes"))
}

#[test]
fn points_outside_within_the_tolerance_are_mapped_and_warned_about() {
    // The tip 0.6 mm beyond the end face, the cable's middle point 0.3 mm above the top face:
    // the default tolerance (1e-3 of the ≈ 101 mm diagonal, ≈ 0.1 mm) refuses the scene.
    let tip = [0.1006, 0.001, -0.002];
    let e = beam(tip, "").unwrap_err().to_string();
    assert!(e.starts_with("soft_body.bar.cable.c.points[1]"), "{e}");
    assert!(e.contains("3.000e-4 m outside"), "{e}");
    assert!(!e.contains('\n'), "{e}");
    let e = beam(tip, "embed_tolerance = 4e-4").unwrap_err().to_string();
    assert!(e.starts_with("soft_body.bar.effector.tip.point"), "{e}");
    assert!(e.contains("6.000e-4 m outside"), "{e}");
    let scene = beam(tip, "embed_tolerance = 1e-3").unwrap();
    let warnings = scene.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let w = &warnings[0];
    assert!(
        w.starts_with("soft_body.bar.effector.tip.point: 2 embedded point"),
        "{w}"
    );
    assert!(w.contains("6.000e-4 m"), "{w}");
    // At rest the mapped points are exactly where the file puts them.
    let act = &scene.actuation[0];
    let rest = scene.bodies[0].rest_positions();
    let p = act.effectors[0].point.position(rest);
    assert!((p - diffsoro::math::Vec3::from(tip)).norm() < 1e-15, "{p}");
    let diffsoro::actuator::ActuatorKind::Cable(c) = &act.actuators[0].kind else {
        panic!("a cable")
    };
    let mid = c.points[1].position(rest);
    assert!((mid - diffsoro::math::Vec3::new(0.05, 0.0, 0.0053)).norm() < 1e-15);
    // The cable's rest length is that of the polyline through the given points.
    let l = 2.0 * (0.05f64.powi(2) + 0.0013f64.powi(2)).sqrt();
    assert!((c.value(rest) - l).abs() < 1e-15);
    let e = beam(tip, "embed_tolerance = 0.0").unwrap_err().to_string();
    assert!(e.starts_with("soft_body.bar.embed_tolerance"), "{e}");
}

#[test]
fn the_published_trunk_cables_load_with_a_tolerance() {
    // Issue 17: the published Trunk's cable points (trunk_cables.derived.json, mm) lie up to
    // ~0.6 mm outside the published trunk.vtk, beyond the default 0.2 mm.
    let dir = Path::new(ROOT).join("../shared/meshes-real/trunk");
    if !dir.join("trunk.vtk").is_file() {
        eprintln!("skipped: {} is absent (docs/real-meshes.md)", dir.display());
        return;
    }
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("trunk_cables.derived.json")).unwrap(),
    )
    .unwrap();
    let mut cables = String::new();
    for c in json["cables"].as_array().unwrap() {
        let points: Vec<String> = c["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let p: Vec<f64> = p
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap() * 1e-3)
                    .collect();
                format!("[{}, {}, {}]", p[0], p[1], p[2])
            })
            .collect();
        cables += &format!(
            "[[soft_body.cable]]\nname = \"{}\"\npoints = [{}]\nforce = 0.0\n",
            c["name"].as_str().unwrap(),
            points.join(", ")
        );
    }
    let text = |extra: &str| {
        format!(
            r#"
            [simulation]
            dt = 0.01
            [[soft_body]]
            name = "trunk"
            mesh = "{}"
            scale = 0.001
            law = "corotational"
            young_modulus = 450.0e3
            poisson_ratio = 0.45
            mass = "uniform"
            total_mass = 0.042
            fixed_box = [[-0.02, -0.02, 0.0], [0.02, 0.02, 0.02]]
            {extra}
            {cables}
            "#,
            dir.join("trunk.vtk").display()
        )
    };
    let build = |extra: &str| {
        let file = SceneFile::parse("trunk.toml", &text(extra), &[])?;
        Scene::build(&file, &dir)
    };
    let e = build("").unwrap_err().to_string();
    assert!(e.contains("outside the mesh"), "{e}");
    let scene = build("embed_tolerance = 0.001").unwrap();
    let w = scene.warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    eprintln!("{}", w[0]);
    assert!(w[0].contains("outside the mesh"), "{w:?}");
}
