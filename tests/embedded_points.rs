//! Embedded points just outside the mesh: mapped into their nearest tetrahedron
//! with extrapolated barycentric weights within the body's `embed_tolerance`, silently when the
//! scene states `embed_tolerance` (the user said such points are meant), with a warning naming
//! the farthest when it is left to its default; an error naming the key beyond it. Expected
//! numbers are the points' own coordinates and their distances to the mesh, known from the
//! geometry, and the default tolerance from its rule (1e-3 of the bounding-box diagonal).

use std::path::Path;

use diffsoro::scene::{Scene, SceneFile};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The 100 × 10 × 10 mm beam (meshes/beam_1.msh, x ∈ [0, 0.1], y, z ∈ [−5, 5] mm) with a
/// cable along its top through `middle` and an effector `tip` at `tip`, plus `extra` body keys.
fn beam_through(middle: [f64; 3], tip: [f64; 3], extra: &str) -> diffsoro::Result<Scene> {
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
        points = [[0.0, 0.0, 0.004], [{}, {}, {}], [0.1, 0.0, 0.004]]
        force = 0.1
        [[soft_body.effector]]
        name = "tip"
        point = [{}, {}, {}]
        "#,
        middle[0], middle[1], middle[2], tip[0], tip[1], tip[2]
    );
    let file = SceneFile::parse("bar.toml", &text, &[])?;
    Scene::build(&file, &Path::new(ROOT).join("meshes"))
}

/// [`beam_through`] with the cable's middle point 0.3 mm above the top face (z = 5 mm).
fn beam(tip: [f64; 3], extra: &str) -> diffsoro::Result<Scene> {
    beam_through([0.05, 0.0, 0.0053], tip, extra)
}

#[test]
fn points_outside_within_a_stated_tolerance_are_mapped_silently() {
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
    // Stated, 1 mm covers both points: the scene says they are meant, nothing to warn about.
    let scene = beam(tip, "embed_tolerance = 1e-3").unwrap();
    let warnings = scene.warnings();
    assert!(warnings.is_empty(), "{warnings:?}");
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
fn points_outside_within_the_default_tolerance_are_warned_about() {
    // The default tolerance: 1e-3 of the bounding-box diagonal, √(0.1² + 0.01² + 0.01²) m.
    let default = 1e-3 * (0.1f64.powi(2) + 2.0 * 0.01f64.powi(2)).sqrt();
    assert!((default - 1.00995e-4).abs() < 1e-9);
    // The tip 0.08 mm beyond the end face (x = 0.1 m), the cable's middle point 0.05 mm above
    // the top face (z = 5 mm): both within the default tolerance, the tip the farther.
    let middle = [0.05, 0.0, 0.00505];
    let tip = [0.10008, 0.001, -0.002];
    let warnings = beam_through(middle, tip, "").unwrap().warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let w = &warnings[0];
    assert!(
        w.starts_with("soft_body.bar.effector.tip.point: 2 embedded point(s) of soft_body.bar"),
        "{w}"
    );
    assert!(w.contains("by 8.000e-5 m"), "{w}");
    assert!(w.contains(&format!("{default:.3e} m")), "{w}");
    assert!(w.contains("stating embed_tolerance"), "{w}");
    assert!(!w.contains('\n'), "{w}");
    // The same scene stating a tolerance that covers them (here even a little below the
    // default): silent.
    let scene = beam_through(middle, tip, "embed_tolerance = 1e-4").unwrap();
    assert!(scene.warnings().is_empty(), "{:?}", scene.warnings());
}

#[test]
fn the_published_trunk_cables_load_with_a_tolerance() {
    // The published Trunk's cable points (trunk_cables.derived.json, mm) lie up to
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
    // Stated, the tolerance covers them: they load without a warning.
    let scene = build("embed_tolerance = 0.001").unwrap();
    let w = scene.warnings();
    assert!(w.is_empty(), "{w:?}");
}

/// `Scene::effector` finds an effector by name with its body; its position is linear in the
/// body's node positions and spreading a cotangent is the transpose: g · p(x) = Σₙ spread(g)ₙ
/// · xₙ for node positions x other than the rest ones (an identity that fails for a wrong
/// node, weight or sign).
#[test]
fn an_effector_found_by_name_spreads_its_cotangent_by_the_transpose_of_its_position() {
    use diffsoro::math::Vec3;
    let tip = [0.095, 0.001, -0.002];
    let scene = beam_through([0.05, 0.0, 0.004], tip, "").unwrap();
    assert!(scene.effector("nope").is_none());
    let (body, e) = scene.effector("tip").unwrap();
    assert_eq!(body, 0);
    let rest = scene.bodies[0].rest_positions();
    assert!((e.point.position(rest) - Vec3::from(tip)).norm() < 1e-15);
    let x: Vec<Vec3> = rest
        .iter()
        .enumerate()
        .map(|(i, r)| r + 1e-3 * Vec3::new((i as f64).sin(), (2.0 * i as f64).cos(), 0.5))
        .collect();
    let g = Vec3::new(0.4, -1.1, 2.0);
    let mut x_bar = vec![Vec3::zeros(); x.len()];
    e.point.spread(g, &mut x_bar);
    let rhs: f64 = x_bar.iter().zip(&x).map(|(a, b)| a.dot(b)).sum();
    assert!((g.dot(&e.point.position(&x)) - rhs).abs() < 1e-15);
}
