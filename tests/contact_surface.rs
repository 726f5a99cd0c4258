//! A soft body's contact surface given as a file of its own and embedded in the volume mesh
//! (`[soft_body.contact] surface`, SOFA's collision model on a barycentric mapping).
//!
//! The body is `meshes/soft_block.msh` (40 × 40 × 20 mm, nodes every 10 mm), its contact
//! surface a finer pad on its bottom face (a grid every 2.5 mm, written here as an OBJ). Four
//! small spheres stand under points of the bottom face between nodes, where no node can reach
//! them. Expected numbers come from physics and second methods, not from runs:
//! - without the pad the block falls past the spheres (no node meets them);
//! - with it, every step balances momentum: Σ mᵢ (v⁺ᵢ − vᵢ)/h = m g + Σ contact forces, to
//!   round-off (no fixed node, stiffness damping only, internal forces sum to zero); at rest
//!   the spheres carry m g, and the pad's vertices above the sphere tops sit on them;
//! - the same spheres as fixed rigid bodies (the soft–rigid rows) give the same trajectory;
//! - a pad that is the body's own boundary (the mesh file itself) gives the node-based
//!   trajectory;
//! - step derivatives with the pad equal central differences of the forward step (1e-6);
//! - contact screening on the pad's vertices gives the run with every candidate in the NCP.

use crate::diff_support;
use crate::scene_support;

use std::path::PathBuf;

use diffsoro::diff::Recorder;
use diffsoro::math::Vec3;
use diffsoro::scene::{Scene, SceneFile, State, Stepper};

/// Sphere centres' (x, y) (m) under the block, their radius (m); tops at z = 0.
const SPHERES: [[f64; 2]; 4] = [
    [0.005, 0.005],
    [-0.005, 0.005],
    [0.005, -0.005],
    [-0.005, -0.005],
];
const RADIUS: f64 = 0.003;
/// How high the block starts above the sphere tops (m).
const LIFT: f64 = 0.001;

fn folder() -> PathBuf {
    let dir = scene_support::root().join("target/test-files/contact_surface");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An OBJ grid on the block's bottom face z = 0 (mesh file frame, m): `n` × `n` vertices over
/// [−20, 20] mm, two triangles per cell, normals down.
fn pad(n: usize) -> PathBuf {
    pad_part(&format!("pad{n}"), n, [-0.02, 0.02], n)
}

/// The grid of [`pad`] over x ∈ [−20, 20] mm (`nx` vertices) and y ∈ `y` (`ny` vertices).
fn pad_part(name: &str, nx: usize, y: [f64; 2], ny: usize) -> PathBuf {
    let path = folder().join(format!("{name}.obj"));
    let mut text = String::new();
    let cx = |i: usize| -0.02 + 0.04 * i as f64 / (nx - 1) as f64;
    let cy = |j: usize| y[0] + (y[1] - y[0]) * j as f64 / (ny - 1) as f64;
    for j in 0..ny {
        for i in 0..nx {
            text += &format!("v {:e} {:e} 0\n", cx(i), cy(j));
        }
    }
    for j in 0..ny - 1 {
        for i in 0..nx - 1 {
            let v = |a: usize, b: usize| 1 + a + nx * b;
            text += &format!("f {} {} {}\n", v(i, j), v(i + 1, j + 1), v(i + 1, j));
            text += &format!("f {} {} {}\n", v(i, j), v(i, j + 1), v(i + 1, j + 1));
        }
    }
    scene_support::write_atomically(&path, &text);
    path
}

/// The block `LIFT` above the spheres, as obstacles or (`rigid`) as fixed rigid bodies, with
/// `contact` the block's `[soft_body.contact]` lines.
fn scene_text(contact: &str, rigid: bool) -> String {
    let mut text = format!(
        r#"
        [simulation]
        dt = 0.01
        gravity = [0.0, 0.0, -9.81]
        [contact]
        friction = 0.5
        tolerance = 1e-12
        max_iterations = 5000
        [[soft_body]]
        name = "block"
        mesh = "../meshes/soft_block.msh"
        law = "corotational"
        young_modulus = 1.0e5
        poisson_ratio = 0.3
        density = 1000.0
        rayleigh_stiffness = 0.05
        translation = [0.0, 0.0, {LIFT}]
        {contact}
        "#
    );
    for (k, [x, y]) in SPHERES.iter().enumerate() {
        text += &if rigid {
            format!(
                "[[rigid_body]]\nname = \"s{k}\"\nshape = \"sphere\"\nradius = {RADIUS}\nfixed = true\nposition = [{x}, {y}, {}]\n",
                -RADIUS
            )
        } else {
            format!(
                "[[obstacle]]\ntype = \"sphere\"\ncenter = [{x}, {y}, {}]\nradius = {RADIUS}\n",
                -RADIUS
            )
        };
    }
    text
}

fn with_pad(n: usize) -> String {
    format!(
        "[soft_body.contact]\n        surface = \"{}\"",
        pad(n).display()
    )
}

fn lowest(state: &State) -> f64 {
    state.bodies[0]
        .positions
        .iter()
        .map(|p| p.z)
        .fold(f64::INFINITY, f64::min)
}

#[test]
fn without_the_pad_the_block_falls_past_the_spheres() {
    let scene = scene_support::scene(&scene_text("", false));
    let mut state = scene.initial_state();
    scene_support::run_steps(&scene, &mut state, 30);
    // Free fall over 0.3 s: 0.44 m; every node missed the spheres.
    assert!(lowest(&state) < -0.3, "{}", lowest(&state));
}

/// Runs `steps` steps, checking the momentum balance of each; returns the final state and
/// the last step's total contact force (N).
fn run_balanced(scene: &Scene, steps: usize) -> (State, Vec3) {
    let body = &scene.bodies[0];
    let masses = body.node_masses();
    let m: f64 = masses.iter().sum();
    let g = Vec3::new(0.0, 0.0, -9.81);
    let h = scene.simulation.dt;
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(scene).unwrap();
    let mut force = Vec3::zeros();
    for step in 0..steps {
        let v0 = state.bodies[0].velocities.clone();
        let report = stepper.step(scene, &mut state).unwrap();
        assert!(report.contact_converged, "step {step}: {report:?}");
        // The contact forces on the nodes (H_cᵀλ): obstacles or fixed rigid spheres.
        let c = &report.contact[0];
        force = c.node_forces.iter().map(|(_, f)| *f).sum();
        if scene.rigid.statics.is_empty() {
            let on_obstacles: Vec3 = c.obstacle_forces.iter().sum();
            assert!((on_obstacles - force).norm() <= 1e-10 * m * 9.81);
        }
        let momentum: Vec3 = masses
            .iter()
            .zip(&state.bodies[0].velocities)
            .zip(&v0)
            .map(|((mi, v1), v0)| *mi * (v1 - v0) / h)
            .sum();
        let expected = m * g + force;
        assert!(
            (momentum - expected).norm() <= 1e-8 * m * 9.81,
            "step {step}: Σ m Δv/h = {momentum:?}, m g + F = {expected:?}"
        );
    }
    (state, force)
}

#[test]
fn the_pad_rests_on_spheres_between_nodes_and_they_carry_its_weight() {
    let scene = scene_support::scene(&scene_text(&with_pad(17), false));
    let m = scene.bodies[0].total_mass();
    let (state, force) = run_balanced(&scene, 300);
    // At rest the spheres carry the weight.
    let v_max = state.bodies[0]
        .velocities
        .iter()
        .map(|v| v.norm())
        .fold(0.0, f64::max);
    assert!(v_max < 1e-6, "still moving: {v_max:e} m/s");
    assert!(
        (force - Vec3::new(0.0, 0.0, m * 9.81)).norm() < 1e-5 * m * 9.81,
        "{force:?} vs m g = {}",
        m * 9.81
    );
    // The pad's vertices above the sphere tops sit on them (z = 0), within the penetration
    // the correction allows; the nodes nowhere near.
    let embedded = match scene.contact.points(0) {
        diffsoro::contact::ContactPoints::Embedded(s) => s.points.clone(),
        other => panic!("{other:?}"),
    };
    let x = &state.bodies[0].positions;
    for [sx, sy] in SPHERES {
        let (k, e) = embedded
            .iter()
            .enumerate()
            .map(|(k, e)| (k, e.position(scene.bodies[0].rest_positions())))
            .min_by(|a, b| {
                let d = |p: &Vec3| (p.x - sx).hypot(p.y - sy);
                d(&a.1).total_cmp(&d(&b.1))
            })
            .unwrap();
        assert!(
            (e.x - sx).hypot(e.y - sy) < 1e-12,
            "vertex {k} is above the sphere"
        );
        let z = embedded[k].position(x).z;
        assert!(
            z.abs() < 1e-7,
            "vertex {k} above the sphere at ({sx}, {sy}): z = {z:e}"
        );
    }
}

#[test]
fn a_pad_in_two_files_rests_on_the_spheres_as_one() {
    // Two halves, y ∈ [2.5, 20] and [−20, −2.5] mm, each over two spheres: the body's contact
    // surface is both files' triangles together.
    let a = pad_part("half_a", 17, [0.0025, 0.02], 8);
    let b = pad_part("half_b", 17, [-0.02, -0.0025], 8);
    let contact = format!(
        "[soft_body.contact]\n        surface = [\"{}\", \"{}\"]",
        a.display(),
        b.display()
    );
    let scene = scene_support::scene(&scene_text(&contact, false));
    let m = scene.bodies[0].total_mass();
    let (state, force) = run_balanced(&scene, 300);
    let v_max = state.bodies[0]
        .velocities
        .iter()
        .map(|v| v.norm())
        .fold(0.0, f64::max);
    assert!(v_max < 1e-6, "still moving: {v_max:e} m/s");
    assert!((force - Vec3::new(0.0, 0.0, m * 9.81)).norm() < 1e-5 * m * 9.81);
    // 2 × 17 × 8 vertices, the second file's after the first's.
    match scene.contact.points(0) {
        diffsoro::contact::ContactPoints::Embedded(s) => {
            assert_eq!(s.points.len(), 272);
            assert_eq!(s.triangles.len(), 2 * 2 * 16 * 7);
            assert!(s.triangles[224..].iter().flatten().all(|&v| v >= 136));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn spheres_as_fixed_rigid_bodies_give_the_same_trajectory() {
    let obstacles = scene_support::scene(&scene_text(&with_pad(17), false));
    let rigid = scene_support::scene(&scene_text(&with_pad(17), true));
    let (a, fa) = run_balanced(&obstacles, 60);
    let (b, fb) = run_balanced(&rigid, 60);
    let err = scene_support::largest_position_difference(&a, &b);
    assert!(err < 1e-9, "positions differ by {err:e} m");
    assert!((fa - fb).norm() < 1e-6 * fa.norm(), "{fa:?} vs {fb:?}");
}

#[test]
fn the_body_s_own_boundary_as_pad_gives_the_node_based_run() {
    // A floor under the block; the pad is the mesh file itself (its boundary triangles).
    let floor = r#"
        [[obstacle]]
        type = "plane"
        point = [0.0, 0.0, -0.003]
        normal = [0.0, 0.1, 1.0]
    "#;
    let base = scene_text("", false);
    let base = base[..base.find("[[obstacle]]").unwrap()].to_string() + floor;
    let own = base.replace(
        "translation",
        "contact = { surface = \"../meshes/soft_block.msh\" }\n        translation",
    );
    let nodes = scene_support::scene(&base);
    let embedded = scene_support::scene(&own);
    assert!(embedded.contact.points(0).is_embedded());
    let mut a = nodes.initial_state();
    let mut b = embedded.initial_state();
    scene_support::run_steps(&nodes, &mut a, 40);
    scene_support::run_steps(&embedded, &mut b, 40);
    assert!(lowest(&a) < LIFT, "the block reached the floor");
    let err = scene_support::largest_position_difference(&a, &b);
    assert!(err < 1e-10, "positions differ by {err:e} m");
}

/// Runs `steps` steps; returns the final state and how many candidates the contact screen
/// left out of the NCPs over the run (candidate-steps).
fn run_counting_deferred(scene: &Scene, steps: usize) -> (State, usize) {
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(scene).unwrap();
    let mut deferred = 0;
    for step in 0..steps {
        let report = stepper.step(scene, &mut state).unwrap();
        assert!(report.contact_converged, "step {step}: {report:?}");
        deferred += stepper.contact().deferred_contacts();
    }
    (state, deferred)
}

#[test]
fn screening_the_pad_s_contacts_gives_the_unscreened_trajectory() {
    // The pad's vertices near the spheres are candidates; those the free motion keeps open, or
    // that carried nothing in the last step, wait outside the NCP (scene::step::contact::screen, on
    // the vertices' own velocities). The reference puts every candidate in the NCP.
    let screened = scene_support::scene(&scene_text(&with_pad(17), false));
    let full = scene_support::scene(
        &scene_text(&with_pad(17), false)
            .replace("friction = 0.5", "friction = 0.5\n        screen = false"),
    );
    assert!(screened.contact.settings.screen && !full.contact.settings.screen);
    let (a, deferred) = run_counting_deferred(&screened, 60);
    let (b, none) = run_counting_deferred(&full, 60);
    assert!(deferred > 0, "the screen left no candidate out");
    assert_eq!(none, 0);
    eprintln!("{deferred} candidate-steps left out");
    let worst = scene_support::largest_position_difference(&a, &b);
    // Both NCPs are solved to their tolerance: the runs agree far below the mesh's size (the
    // bound of tests/contact_screen.rs).
    assert!(worst < 1e-8, "screened and full runs differ by {worst:e} m");
}

#[test]
fn step_derivatives_with_the_pad_match_finite_differences() {
    // The landing step: one step from 0.02 mm above the sphere tops at 0.098 m/s down, the
    // pad's vertices over the spheres meet them with an open gap (a resting contact at Φ = 0
    // sits on the penetration correction's kink: no derivative there, docs/derivatives.md).
    // Straight down the landing sticks; with 0.2 m/s sideways it slides (μ m g h = 1.6e-3
    // N·s < m · 0.2 m/s = 6.4e-3 N·s).
    for rigid in [false, true] {
        for push in [0.0, 0.2] {
            let scene = scene_support::scene(&scene_text(&with_pad(9), rigid));
            let mut start = diff_support::warm_state(&scene, 1);
            assert!(lowest(&start) > 0.0, "not landed yet");
            for v in &mut start.bodies[0].velocities {
                v.x += push;
            }
            let names = ["young_modulus:block"];
            diff_support::check_jvp_against_fd_from(&scene, &names, &start, 1, 1e-4);
            // The reverse mode is the forward mode's transpose on the same step.
            let mut recorder = Recorder::new(&scene).unwrap();
            let (_, record) = recorder.step(&scene, &mut start).unwrap();
            let params = diff_support::parameters(&scene, &names);
            diff_support::check_adjointness(&scene, &record, &params, 5);
        }
    }
}

#[test]
fn bad_contact_surfaces_are_one_line_errors() {
    let build = |text: &str| {
        let file = SceneFile::parse("test.toml", text, &[])?;
        file.validate()?;
        Scene::build(&file, &scene_support::root().join("scenes"))
    };
    let missing = scene_text(
        "[soft_body.contact]\n        surface = \"no_such_pad.obj\"",
        false,
    );
    let e = build(&missing).unwrap_err().to_string();
    assert!(
        e.contains("soft_body.block.contact.surface") && e.contains("not found"),
        "{e}"
    );
    // A pad 5 mm below the block: beyond the default embed tolerance.
    let far = folder().join("far.obj");
    std::fs::write(
        &far,
        "v 0 0 -0.005\nv 0.01 0 -0.005\nv 0 0.01 -0.005\nf 1 2 3\n",
    )
    .unwrap();
    let text = scene_text(
        &format!(
            "[soft_body.contact]\n        surface = \"{}\"",
            far.display()
        ),
        false,
    );
    let e = build(&text).unwrap_err().to_string();
    assert!(
        e.contains("soft_body.block.contact.surface vertex 0"),
        "{e}"
    );
    assert!(!e.contains('\n'), "{e}");
    // In a list, the file is named by its index; an empty list is an error.
    let text = scene_text(
        &format!(
            "[soft_body.contact]\n        surface = [\"{}\", \"no_such_pad.obj\"]",
            pad(5).display()
        ),
        false,
    );
    let e = build(&text).unwrap_err().to_string();
    assert!(
        e.contains("soft_body.block.contact.surface[1]") && e.contains("not found"),
        "{e}"
    );
    let text = scene_text("[soft_body.contact]\n        surface = []", false);
    let e = build(&text).unwrap_err().to_string();
    assert!(
        e.contains("soft_body.block.contact.surface") && e.contains("no file"),
        "{e}"
    );
    let text = scene_text(
        &format!(
            "[soft_body.contact]\n        surface = [\"{}\", \"{}\"]",
            pad(5).display(),
            far.display()
        ),
        false,
    );
    let e = build(&text).unwrap_err().to_string();
    assert!(
        e.contains("soft_body.block.contact.surface[1] vertex 0"),
        "{e}"
    );
    // An unknown key of the section.
    let text = scene_text(
        &format!(
            "[soft_body.contact]\n        surface = \"{}\"\n        size = 2",
            pad(5).display()
        ),
        false,
    );
    let e = build(&text).unwrap_err().to_string();
    assert!(e.contains("size"), "{e}");
}
