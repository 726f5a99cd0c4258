//! An embedded contact surface (`[soft_body.contact] surface`) in self-contact and
//! in contact between soft bodies: its vertices meet triangles, its triangles meet vertices.
//!
//! Second methods and finite differences, no numbers read off runs:
//! - the stacked cubes of `tests/diff_self_contact.rs` and `tests/body_contact.rs` with each
//!   body's own boundary given as its embedded surface (each vertex on its node with weight 1)
//!   run as the node-based scenes do, and their step derivatives match central differences;
//! - a block landing on a second, clamped block through a pad whose vertices lie between
//!   nodes, under the falling block (its vertices meet triangles) or on top of the clamped
//!   one (its triangles meet nodes): the step derivatives match central differences (1e-6)
//!   and the adjoint is the transpose, and at rest the clamped block carries the cube's weight;
//! - contact screening (`scene::step::contact::screen`) on the embedded points' velocities gives the
//!   run with every candidate in the NCP (`screen = false`), contacts between the bodies and
//!   self-contacts alike.
//!
//! Both configurations are chosen so that contacts go one way only: where two surfaces both
//! detect each other over a flat interface (each one's points against the other's triangles)
//! the contact forces are far from unique (many more rows than the interface's motions), and
//! so is their derivative with respect to the geometry, as on the flat box sliding on four
//! corners of docs/derivatives.md.

use crate::diff_support;
use crate::scene_support;

use std::path::PathBuf;

use diff_support::stacked_cubes::{UPPER_NODES, one_body, start, two_bodies};
use diffsoro::contact::{ContactPoints, EmbeddedSurface};
use diffsoro::diff::Recorder;
use diffsoro::material::Law;
use diffsoro::math::Vec3;
use diffsoro::scene::{Scene, State, Stepper};

/// Each body's boundary as an embedded surface whose vertex i is node n_i with weight 1.
fn own_boundaries(scene: &mut Scene) {
    scene.contact.points = scene
        .bodies
        .iter()
        .map(|b| {
            let triangles = b.mesh().boundary_triangles();
            let mut index = vec![usize::MAX; b.node_count()];
            let mut points = Vec::new();
            for t in &triangles {
                for &n in t {
                    index[n] = n;
                }
            }
            for (n, i) in index.iter_mut().enumerate() {
                if *i != usize::MAX {
                    *i = points.len();
                    points.push(diffsoro::actuator::EmbeddedPoint {
                        nodes: [n; 4],
                        weights: [1.0, 0.0, 0.0, 0.0],
                    });
                }
            }
            let triangles = triangles.iter().map(|t| t.map(|n| index[n])).collect();
            ContactPoints::Embedded(EmbeddedSurface { points, triangles }.into())
        })
        .collect();
}

fn run(scene: &Scene, state: &State, steps: usize) -> State {
    let mut s = state.clone();
    let mut stepper = Stepper::new(scene).unwrap();
    for _ in 0..steps {
        let report = stepper.step(scene, &mut s).unwrap();
        assert!(report.contact_converged, "{report:?}");
        assert!(report.active_contacts > 0);
    }
    s
}

#[test]
fn own_boundaries_as_embedded_surfaces_run_as_the_nodes_do() {
    for (scene, moving) in [
        (one_body(Law::Corotational, 0.9, 0.2), UPPER_NODES),
        (two_bodies(Law::Corotational, 0.9, 0.2), 27),
    ] {
        let mut embedded = scene.clone();
        own_boundaries(&mut embedded);
        let state = start(&scene, moving, Vec3::new(0.1, 0.0, 0.0));
        let (a, b) = (run(&scene, &state, 5), run(&embedded, &state, 5));
        let d = scene_support::largest_position_difference(&a, &b);
        assert!(d < 1e-12, "{d:e} m");
        // Their derivatives (sliding, self-contact or between bodies) against differences.
        let name = format!("young_modulus:{}", embedded.bodies[0].name());
        diff_support::check_jvp_against_fd_from(&embedded, &[name.as_str()], &state, 1, 1e-3);
    }
}

/// An OBJ of the square [lo, hi]² (mesh file frame, m) at height `z`, two triangles, normals
/// down (`down`) or up.
fn pad(name: &str, lo: f64, hi: f64, z: f64, down: bool) -> PathBuf {
    let dir = scene_support::root().join("target/test-files/contact_surface_pairs");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.obj"));
    let mut text = format!(
        "v {lo:e} {lo:e} {z:e}\nv {hi:e} {lo:e} {z:e}\nv {hi:e} {hi:e} {z:e}\nv {lo:e} {hi:e} {z:e}\n"
    );
    text += if down {
        "f 1 3 2\nf 1 4 3\n"
    } else {
        "f 1 2 3\nf 1 3 4\n"
    };
    scene_support::write_atomically(&path, &text);
    path
}

/// A block `lower` (`meshes/soft_block.msh`, 40 × 40 × 20 mm, nodes every 10 mm) clamped at
/// its bottom and a block `upper` 0.02 mm above it, offset by (1.7, 2.1) mm so that no point
/// lands on a triangle's edge, both of E = 100 kPa:
/// - `Side::Points`: `upper` is the same block with a 6 mm pad under it ((2, 2)–(8, 8) mm,
///   four vertices between nodes), so it meets `lower` at four embedded points and no node
///   of `lower` lies under the pad;
/// - `Side::Faces`: `lower` has a pad of two triangles over its top, corners at ±19 mm
///   between nodes, and `upper` is the 30 mm cube (`meshes/cube30.msh`), whose 16 bottom
///   nodes land on the pad's triangles (12 nodes each, through their embedded corners); the
///   pad's corners lie outside the cube.
#[derive(Debug, Clone, Copy)]
enum Side {
    Points,
    Faces,
}

fn stack(side: Side) -> Scene {
    let body = |name: &str, mesh: &str, z: f64, x: f64, y: f64, extra: String| {
        format!(
            r#"
        [[soft_body]]
        name = "{name}"
        mesh = "../meshes/{mesh}"
        law = "corotational"
        young_modulus = 1.0e5
        poisson_ratio = 0.3
        density = 1000.0
        rayleigh_stiffness = 0.05
        translation = [{x}, {y}, {z}]
        {extra}
        "#
        )
    };
    let contact = |path: PathBuf| {
        format!(
            "[soft_body.contact]\n        surface = \"{}\"",
            path.display()
        )
    };
    let clamp = "fixed_box = [[-1.0, -1.0, -1.0], [1.0, 1.0, 0.001]]".to_string();
    let (lower, upper) = match side {
        Side::Points => (
            body("lower", "soft_block.msh", 0.0, 0.0, 0.0, clamp),
            body(
                "upper",
                "soft_block.msh",
                0.02002,
                0.0017,
                0.0021,
                contact(pad("under", 0.002, 0.008, 0.0, true)),
            ),
        ),
        Side::Faces => (
            body(
                "lower",
                "soft_block.msh",
                0.0,
                0.0,
                0.0,
                clamp + "\n" + &contact(pad("over", -0.019, 0.019, 0.02, false)),
            ),
            body(
                "upper",
                "cube30.msh",
                0.03502,
                0.0017,
                0.0021,
                String::new(),
            ),
        ),
    };
    scene_support::scene(&format!(
        r#"
        [simulation]
        dt = 0.01
        gravity = [0.0, 0.0, -9.81]
        [contact]
        friction = 0.5
        between_bodies = true
        tolerance = 1e-14         # the differences' floor is the NCP's tolerance over ε
        max_iterations = 50000
        {lower}
        {upper}
        "#
    ))
}

#[test]
fn landing_on_a_block_through_a_pad_has_the_step_derivatives_of_its_differences() {
    // 0.02 mm above, moving at 0.05 m/s down: the landing step, sticking or (0.05 m/s
    // sideways) sliding. Contacts detected: the pad's 4 vertices, or the cube's 16 bottom
    // nodes (how many carry force is the dynamics' business).
    for side in [Side::Points, Side::Faces] {
        for vx in [0.0, 0.05] {
            let scene = stack(side);
            let mut start = scene.initial_state();
            for v in &mut start.bodies[1].velocities {
                *v = Vec3::new(vx, 0.0, -0.05);
            }
            let mut recorder = Recorder::new(&scene).unwrap();
            let mut s = start.clone();
            let (report, record) = recorder.step(&scene, &mut s).unwrap();
            let expected = match side {
                Side::Points => 4,
                Side::Faces => 16,
            };
            assert_eq!(report.contact[1].detected, expected, "{side:?}: {report:?}");
            assert!(report.active_contacts > 0, "{side:?}: landed");
            let names = ["young_modulus:upper", "young_modulus:lower"];

            diff_support::check_jvp_against_fd_from(&scene, &names, &start, 1, 1e-4);
            let params = diff_support::parameters(&scene, &names);
            diff_support::check_adjointness(&scene, &record, &params, 3);
        }
    }
}

#[test]
fn the_clamped_block_carries_the_cube_on_its_pad_at_rest() {
    let scene = stack(Side::Faces);
    let m = scene.bodies[1].total_mass();
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    let mut report = None;
    for _ in 0..300 {
        report = Some(stepper.step(&scene, &mut state).unwrap());
    }
    let report = report.unwrap();
    assert!(report.contact_converged, "{report:?}");
    let v_max = state.bodies[1]
        .velocities
        .iter()
        .map(|v| v.norm())
        .fold(0.0, f64::max);
    assert!(v_max < 1e-6, "still moving: {v_max:e} m/s");
    // The lower block's push on the cube is the cube's weight.
    let f = report.contact[1].body_forces[0];
    assert!(
        (f - Vec3::new(0.0, 0.0, m * 9.81)).norm() < 1e-5 * m * 9.81,
        "{f:?} vs m g = {}",
        m * 9.81
    );
}

#[test]
fn screening_contacts_between_embedded_surfaces_gives_the_unscreened_trajectory() {
    // Both stacks landing and settling, screened (scene::step::contact::screen on the embedded
    // points' velocities) and with every candidate in the NCP. The upper body lands turning
    // about x at 10 rad/s (its bottom edges, 15 or 20 mm either side of its centre, move at
    // 0.05 ∓ 0.15 or 0.2 m/s down), so one side's contacts open while the other's close.
    for side in [Side::Points, Side::Faces] {
        let run = |screen: bool| {
            let mut scene = stack(side);
            scene.contact.settings.screen = screen;
            let mut state = scene.initial_state();
            let upper = &mut state.bodies[1];
            let n = upper.positions.len() as f64;
            let centre: Vec3 = upper.positions.iter().sum::<Vec3>() / n;
            let spin = Vec3::new(10.0, 0.0, 0.0);
            for (v, x) in upper.velocities.iter_mut().zip(&upper.positions) {
                *v = Vec3::new(0.0, 0.0, -0.05) + spin.cross(&(x - centre));
            }
            let mut stepper = Stepper::new(&scene).unwrap();
            let (mut deferred, mut between) = (0, 0);
            for step in 0..60 {
                let report = stepper.step(&scene, &mut state).unwrap();
                assert!(report.contact_converged, "{side:?} step {step}: {report:?}");
                deferred += stepper.contact().deferred_contacts();
                between += stepper.contact().deferred_between_bodies();
            }
            (state, deferred, between)
        };
        let (a, deferred, between) = run(true);
        let (b, none, _) = run(false);
        eprintln!("{side:?}: {deferred} candidate-steps left out, {between} between bodies");
        assert!(
            between > 0 && deferred >= between,
            "{side:?}: the screen left no contact between the bodies out"
        );
        assert_eq!(none, 0);
        let d = scene_support::largest_position_difference(&a, &b);
        assert!(
            d < 1e-8,
            "{side:?}: screened and full runs differ by {d:e} m"
        );
    }
}

#[test]
fn screening_self_contacts_of_an_embedded_surface_gives_the_unscreened_trajectory() {
    // The stacked cubes as one body, its own boundary as its embedded surface, the upper
    // cube's nodes leaving the lower one's top (0.1 m/s sideways, 0.02 m/s up): its
    // self-contacts open.
    let run = |screen: bool| {
        let mut scene = one_body(Law::Corotational, 0.9, 0.2);
        own_boundaries(&mut scene);
        scene.contact.settings.screen = screen;
        let mut state = start(&scene, UPPER_NODES, Vec3::new(0.1, 0.0, 0.02));
        let mut stepper = Stepper::new(&scene).unwrap();
        let mut deferred = 0;
        for step in 0..20 {
            let report = stepper.step(&scene, &mut state).unwrap();
            assert!(report.contact_converged, "step {step}: {report:?}");
            deferred += stepper.contact().deferred_self_contacts();
        }
        (state, deferred)
    };
    let (a, deferred) = run(true);
    let (b, none) = run(false);
    eprintln!("{deferred} self-contact-steps left out");
    assert!(deferred > 0, "the screen left no self-contact out");
    assert_eq!(none, 0);
    let d = scene_support::largest_position_difference(&a, &b);
    assert!(d < 1e-8, "screened and full runs differ by {d:e} m");
}
