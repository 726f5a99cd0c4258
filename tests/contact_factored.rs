//! `[contact] delassus = "factored"` in a scene: the PneuNet lying on the floor on its 169
//! bottom nodes steps as with the assembled Delassus matrix (the same NCP solved through the
//! body's factor of A, a second method), the derivatives refuse it by name, and PGS is refused
//! with it.

use crate::scene_support;

use diffsoro::diff::check_differentiable;
use diffsoro::scene::{SceneFile, Stepper};
use scene_support::{largest_position_difference, scene};

/// The PneuNet (unclamped) dropped from 0.2 mm onto the floor, with `extra` in `[contact]`.
fn pneunet_on_the_floor(extra: &str) -> String {
    format!(
        r#"
[simulation]
dt = 0.01
steps = 15
gravity = [0.0, 0.0, -9.81]

[[soft_body]]
name = "pneunet"
mesh = "../meshes/pneumatic.msh"
law = "corotational"
young_modulus = 500.0e3
poisson_ratio = 0.3
density = 781.8
mass = "lumped"
rayleigh_mass = 0.1
rayleigh_stiffness = 0.1

[contact]
friction = 0.5
{extra}

[[obstacle]]
name = "floor"
type = "plane"
point = [0.0, 0.0, -0.0102]
normal = [0.0, 0.0, 1.0]
"#
    )
}

#[test]
fn factored_and_assembled_delassus_step_the_same() {
    let assembled = scene(&pneunet_on_the_floor(""));
    let factored = scene(&pneunet_on_the_floor("delassus = \"factored\""));
    let mut a = assembled.initial_state();
    let mut b = factored.initial_state();
    let mut sa = Stepper::new(&assembled).unwrap();
    let mut sb = Stepper::new(&factored).unwrap();
    let mut most = 0;
    for step in 0..15 {
        let ra = sa.step(&assembled, &mut a).unwrap();
        let rb = sb.step(&factored, &mut b).unwrap();
        assert!(ra.contact_converged && rb.contact_converged, "step {step}");
        assert_eq!(ra.active_contacts, rb.active_contacts, "step {step}");
        most = most.max(rb.active_contacts);
        // The factored run formed no G; the assembled one did.
        for g in sb.contact().groups() {
            assert!(
                !g.is_assembled() && g.delassus().nrows() == 0,
                "step {step}"
            );
        }
        for g in sa.contact().groups() {
            assert!(g.is_assembled(), "step {step}");
        }
    }
    assert!(
        most > 100,
        "{most} contacts carry force: the bottom face rests"
    );
    // Both solve the same NCP to 1e-10 (N, m/s); its solution moves the nodes by h·σ, and the
    // rest of the step is shared, so the runs agree to far below a micrometre.
    let d = largest_position_difference(&a, &b);
    assert!(d <= 1e-9, "the runs differ by {d:e} m");
}

#[test]
fn derivatives_and_pgs_refuse_the_factored_delassus_by_name() {
    let factored = scene(&pneunet_on_the_floor("delassus = \"factored\""));
    let e = check_differentiable(&factored).unwrap_err().to_string();
    assert!(e.contains("contact.delassus"), "{e}");
    let text = pneunet_on_the_floor("delassus = \"factored\"\nsolver = \"pgs\"");
    let e = SceneFile::parse("s.toml", &text, &[])
        .and_then(|f| f.validate())
        .unwrap_err()
        .to_string();
    assert!(e.contains("contact.delassus"), "{e}");
}
