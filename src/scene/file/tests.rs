//! Tests of the scene file's parsing: a valid scene with its defaults, uniform mass, and the
//! errors naming an unknown key or a bad value.

use super::*;

const BEAM: &str = r#"
        [simulation]
        dt = 0.01
        steps = 30
        [[soft_body]]
        name = "beam"
        mesh = "beam.msh"
        law = "neo_hookean"
        young_modulus = 1.0e6
        poisson_ratio = 0.3
        density = 1000.0
        fixed_box = [[-0.001, -1.0, -1.0], [0.001, 1.0, 1.0]]
    "#;

#[test]
fn a_valid_scene_parses_with_defaults() {
    let s = SceneFile::parse("beam.toml", BEAM, &[]).unwrap();
    assert_eq!(s.simulation.gravity, [0.0, 0.0, -9.81]);
    assert_eq!(s.soft_body[0].mass, MassKind::Lumped);
    assert_eq!(s.soft_body[0].scale, 1.0);
    assert_eq!(s.soft_body[0].density, Some(1000.0));
    assert_eq!(s.soft_body[0].total_mass, None);
}

#[test]
fn uniform_mass_takes_total_mass_instead_of_density() {
    let uniform = BEAM.replace(
        "density = 1000.0",
        "mass = \"uniform\"\n        total_mass = 0.25",
    );
    let s = SceneFile::parse("s.toml", &uniform, &[]).unwrap();
    assert_eq!(s.soft_body[0].mass, MassKind::Uniform);
    assert_eq!(s.soft_body[0].total_mass, Some(0.25));
    assert_eq!(s.soft_body[0].density, None);
    for (text, set, key) in [
        (
            &uniform,
            "soft_body.beam.total_mass=0",
            "soft_body.beam.total_mass",
        ),
        (
            &uniform,
            "soft_body.beam.total_mass=inf",
            "soft_body.beam.total_mass",
        ),
        (
            &uniform,
            "soft_body.beam.density=1000",
            "soft_body.beam.density",
        ),
        (
            &uniform,
            "soft_body.beam.mass=\"lumped\"",
            "soft_body.beam.total_mass",
        ),
    ] {
        let e = SceneFile::parse("s.toml", text, &[set.to_string()])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(key), "{set}: {e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
    let neither = BEAM.replace("density = 1000.0", "");
    let e = SceneFile::parse("s.toml", &neither, &[])
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("soft_body.beam.density"), "{e}");
    let e = SceneFile::parse(
        "s.toml",
        &neither,
        &["soft_body.beam.mass=\"uniform\"".into()],
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("soft_body.beam.total_mass"), "{e}");
}

#[test]
fn unknown_keys_and_bad_values_are_named() {
    let e = SceneFile::parse("s.toml", &BEAM.replace("steps = 30", "stepz = 30"), &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("stepz"), "{e}");
    for (set, key) in [
        (
            "soft_body.beam.young_modulus=0",
            "soft_body.beam.young_modulus",
        ),
        (
            "soft_body.beam.young_modulus=-3",
            "soft_body.beam.young_modulus",
        ),
        (
            "soft_body.beam.poisson_ratio=0.5",
            "soft_body.beam.poisson_ratio",
        ),
        (
            "soft_body.beam.poisson_ratio=-1",
            "soft_body.beam.poisson_ratio",
        ),
        ("simulation.dt=0", "simulation.dt"),
        ("soft_body.beam.density=nan", "soft_body.beam.density"),
        ("soft_body.beam.mass=\"uniform\"", "soft_body.beam.density"),
        ("soft_body.beam.total_mass=0.5", "soft_body.beam.total_mass"),
    ] {
        let e = SceneFile::parse("s.toml", BEAM, &[set.to_string()])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(key), "{set}: {e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
}

#[test]
fn command_maps_default_to_the_identity_and_bad_ones_are_named() {
    let actuated = format!(
        "{BEAM}
        [[soft_body.cable]]
        name = \"c\"
        points = [[0.0, 0.0, 0.0], [0.1, 0.0, 0.0]]
        force = 0.1
        [[soft_body.pneumatic]]
        name = \"p\"
        group = \"cavity\"
        pressure = 100.0
        [[soft_body.servo]]
        name = \"s\"
        group = \"horn\"
        axis_point = [0.0, 0.0, 0.0]
        axis_direction = [0.0, 0.0, 1.0]
        torque = 0.01
    "
    );
    let s = SceneFile::parse("s.toml", &actuated, &[]).unwrap();
    let b = &s.soft_body[0];
    assert_eq!(
        (b.cable[0].gain, b.cable[0].offset, b.cable[0].time_constant),
        (1.0, 0.0, 0.0)
    );
    assert_eq!((b.pneumatic[0].gain, b.servo[0].gain), (1.0, 1.0));
    let s = SceneFile::parse(
        "s.toml",
        &actuated,
        &[
            "soft_body.beam.cable.c.gain=-2.5".into(),
            "soft_body.beam.pneumatic.p.offset=1e3".into(),
            "soft_body.beam.servo.s.time_constant=0.2".into(),
        ],
    )
    .unwrap();
    let b = &s.soft_body[0];
    assert_eq!(b.cable[0].gain, -2.5);
    assert_eq!(b.pneumatic[0].offset, 1e3);
    assert_eq!(b.servo[0].time_constant, 0.2);
    for (set, key) in [
        (
            "soft_body.beam.cable.c.gain=0",
            "soft_body.beam.cable.c.gain",
        ),
        (
            "soft_body.beam.cable.c.gain=inf",
            "soft_body.beam.cable.c.gain",
        ),
        (
            "soft_body.beam.cable.c.offset=nan",
            "soft_body.beam.cable.c.offset",
        ),
        (
            "soft_body.beam.cable.c.time_constant=-0.1",
            "soft_body.beam.cable.c.time_constant",
        ),
        (
            "soft_body.beam.pneumatic.p.gain=0.0",
            "soft_body.beam.pneumatic.p.gain",
        ),
        (
            "soft_body.beam.pneumatic.p.time_constant=inf",
            "soft_body.beam.pneumatic.p.time_constant",
        ),
        (
            "soft_body.beam.servo.s.offset=-inf",
            "soft_body.beam.servo.s.offset",
        ),
        (
            "soft_body.beam.servo.s.gain=nan",
            "soft_body.beam.servo.s.gain",
        ),
    ] {
        let e = SceneFile::parse("s.toml", &actuated, &[set.to_string()])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(key), "{set}: {e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
}
