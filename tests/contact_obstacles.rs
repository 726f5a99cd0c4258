//! Capsule and triangle-mesh obstacles in the step, and the contact scenes that use them:
//! a beam resting on two capsule supports carries its weight, half on each (mirror-symmetric
//! mesh and supports); the Finger pulled by its cable presses on an STL block with a force
//! along the block's normal (exactly, without friction; inside the Coulomb cone with it); a
//! block resting on a closed STL slab carries its weight; bad mesh files are clear errors.

use std::path::Path;

use diffsoro::contact::Obstacle;
use diffsoro::fem::{MassKind, SoftBody, SoftBodyOptions};
use diffsoro::material::{Law, Material};
use diffsoro::math::Vec3;
use diffsoro::mesh::{Mesh, TriangleSurface, box_mesh};
use diffsoro::scene::{
    ContactSection, Scene, SceneContact, SimulationSection, StepReport, Stepper,
};

const G: f64 = 9.81;

fn run(scene: &Scene, steps: usize) -> (StepReport, diffsoro::scene::State) {
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(scene).unwrap();
    let mut report = None;
    for s in 0..steps {
        let r = stepper.step(scene, &mut state).unwrap();
        assert!(r.contact_converged, "step {s}: {:?}", r.contact);
        report = Some(r);
    }
    (report.unwrap(), state)
}

/// scenes/beam_supports.toml: at rest the supports' resultant force is m g upward (1e-6),
/// half on each support (the setup is mirror-symmetric about x = 0.1 m).
#[test]
fn beam_on_two_supports_carries_its_weight_symmetrically() {
    let scene = Scene::load(Path::new("scenes/beam_supports.toml"), &[]).unwrap();
    let mass: f64 = scene.bodies[0].node_masses().iter().sum();
    // 0.2 × 0.02 × 0.02 m³ of density 1000.
    assert!((mass - 0.08).abs() < 1e-12);
    let weight = mass * G;
    let (report, _) = run(&scene, scene.simulation.steps);
    let c = &report.contact[0];
    let [left, right] = [c.obstacle_forces[0], c.obstacle_forces[1]];
    let total = left + right;
    assert!(
        (total - Vec3::new(0.0, 0.0, weight)).norm() < 1e-6 * weight,
        "resultant {total:?}, weight {weight}"
    );
    // Each support's force is its contacts' normal and friction forces; on a round support
    // the normals tilt as the beam bends, so the conservation law is on the resultant (the
    // flat-slab test below checks Σλ_N = m g where the normals are vertical).
    assert!(c.normal_force > 0.9 * weight);
    assert!(
        (left.z - right.z).abs() < 1e-6 * weight,
        "reactions {left:?} and {right:?}"
    );
    assert!((left.z - weight / 2.0).abs() < 1e-6 * weight);
}

fn finger_force(overrides: &[String]) -> (Vec3, f64) {
    let scene = Scene::load(Path::new("scenes/finger_obstacle.toml"), overrides).unwrap();
    let mu = scene.contact.friction[0];
    let (report, state) = run(&scene, scene.simulation.steps);
    assert!(state.contacts > 0);
    (report.contact[0].obstacle_forces[0], mu)
}

/// scenes/finger_obstacle.toml: the block pushes the finger down (its bottom face's outward
/// normal −y), within the Coulomb cone; without friction exactly along the normal.
#[test]
fn finger_presses_on_the_block_along_its_normal() {
    let n = -Vec3::y();
    let (f, mu) = finger_force(&[]);
    let fn_ = f.dot(&n);
    assert!(fn_ > 1e-3, "normal force {fn_} N, force {f:?}");
    let ft = (f - fn_ * n).norm();
    assert!(ft <= mu * fn_ * (1.0 + 1e-9), "{f:?}: |F_t| = {ft} > μ F_n");
    let (f, _) = finger_force(&["contact.friction=0.0".to_string()]);
    let fn_ = f.dot(&n);
    assert!(fn_ > 1e-3, "{f:?}");
    assert!(
        (f - fn_ * n).norm() < 1e-9 * fn_,
        "frictionless force {f:?}"
    );
}

/// The closed surface of the box [lo, hi] as 12 outward triangles.
fn box_surface(lo: Vec3, hi: Vec3) -> TriangleSurface {
    let v = (0..8)
        .map(|i| {
            Vec3::new(
                if i & 1 == 1 { hi.x } else { lo.x },
                if i & 2 == 2 { hi.y } else { lo.y },
                if i & 4 == 4 { hi.z } else { lo.z },
            )
        })
        .collect();
    let mut t = Vec::new();
    for [a, b, c, d] in [
        [0, 2, 3, 1],
        [4, 5, 7, 6],
        [0, 1, 5, 4],
        [2, 6, 7, 3],
        [0, 4, 6, 2],
        [1, 3, 7, 5],
    ] {
        t.push([a, b, c]);
        t.push([a, c, d]);
    }
    TriangleSurface::new("slab", v, t).unwrap()
}

/// A 20 mm block resting on a closed triangle-mesh slab (top face z = 0) carries its weight.
#[test]
fn block_resting_on_a_mesh_slab_carries_its_weight() {
    let side = 0.02;
    let mesh = box_mesh([2, 2, 2], [0.0, 0.0, 0.0], [side, side, side]).unwrap();
    let options = SoftBodyOptions {
        material: Material::new(Law::NeoHookean, 1e5, 0.3).unwrap(),
        density: 1000.0,
        mass: MassKind::Lumped,
        rayleigh_mass: 20.0,
        rayleigh_stiffness: 0.0,
        fixed: vec![false; 27],
    };
    let body = SoftBody::new("block", mesh, options).unwrap();
    let slab = box_surface(Vec3::new(-0.1, -0.1, -0.05), Vec3::new(0.1, 0.1, 0.0));
    let scene = Scene {
        rigid: Default::default(),
        contact: SceneContact {
            names: Vec::new(),
            obstacles: vec![Obstacle::mesh("slab", slab).unwrap()],
            friction: vec![0.5],
            settings: ContactSection {
                max_iterations: 5000,
                ..ContactSection::default()
            },
            ..SceneContact::default()
        },
        ..Scene::new(
            SimulationSection {
                dt: 0.01,
                steps: 0,
                gravity: [0.0, 0.0, -G],
                newton_iterations: 1,
            },
            vec![body],
        )
    };
    let weight = 1000.0 * side.powi(3) * G;
    let (report, state) = run(&scene, 300);
    let c = &report.contact[0];
    assert_eq!(c.detected, 9);
    assert!((c.normal_force - weight).abs() < 1e-6 * weight, "{c:?}");
    let min_z = state.bodies[0]
        .positions
        .iter()
        .map(|p| p.z)
        .fold(f64::INFINITY, f64::min);
    // The plane bound of tests/contact_scene.rs (5·h·tolerance, 20× margin).
    assert!(min_z > -1e-10, "penetration {min_z}");
}

/// Mesh obstacle files that are empty, malformed or missing are errors naming the file and
/// the place.
#[test]
fn bad_mesh_obstacle_files_are_clear_errors() {
    let dir =
        std::env::temp_dir().join(format!("diffsoro_contact_obstacles_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("empty.stl"), "solid e\nendsolid e\n").unwrap();
    std::fs::write(dir.join("bad.obj"), "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n").unwrap();
    std::fs::write(
        dir.join("open_twice.obj"),
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 2 3\n",
    )
    .unwrap();
    let scene_text = |path: &str| {
        format!(
            "[simulation]\ndt = 0.01\n[[obstacle]]\ntype = \"mesh\"\npath = \"{path}\"\nscale = 0.001\n"
        )
    };
    for (path, words) in [
        ("empty.stl", vec!["empty.stl", "empty mesh"]),
        ("bad.obj", vec!["bad.obj", "line 4", "vertex index 7"]),
        (
            "open_twice.obj",
            vec!["open_twice.obj", "not consistently oriented"],
        ),
        ("missing.stl", vec!["obstacle[0].path", "not found"]),
    ] {
        let file = dir.join(format!("{path}.toml"));
        std::fs::write(&file, scene_text(path)).unwrap();
        let e = Scene::load(&file, &[]).expect_err("an error").to_string();
        for w in words {
            assert!(e.contains(w), "{path}: {e}");
        }
        assert!(!e.contains('\n'), "one line: {e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Self-contact: one soft body made of two 20 mm cubes, the upper one 1 mm above the lower
/// one (shifted by (5, 3) mm), over the floor. With `self_contact` the upper cube comes to
/// rest on the lower one: the floor carries both weights (1e-6), the self-contacts the upper
/// weight (Σλ_N over all contacts ≈ 1.5 m g), and the cubes do not interpenetrate.
#[test]
fn two_cubes_of_one_body_stack_through_self_contact() {
    let side = 0.02;
    let a = box_mesh([2, 2, 2], [0.0, 0.0, 0.0], [side, side, side]).unwrap();
    let lo = Vec3::new(0.005, 0.003, side + 0.001);
    let b = box_mesh([2, 2, 2], lo.into(), (lo + Vec3::repeat(side)).into()).unwrap();
    let n = a.node_count();
    let mut x = a.positions().to_vec();
    x.extend_from_slice(b.positions());
    let mut tets = a.tetrahedra().to_vec();
    tets.extend(b.tetrahedra().iter().map(|t| t.map(|i| i + n)));
    let mesh = Mesh::new(x, tets, Vec::new(), Default::default()).unwrap();
    let nodes = mesh.node_count();
    let options = SoftBodyOptions {
        material: Material::new(Law::NeoHookean, 1e5, 0.3).unwrap(),
        density: 1000.0,
        mass: MassKind::Lumped,
        rayleigh_mass: 20.0,
        rayleigh_stiffness: 0.0,
        fixed: vec![false; nodes],
    };
    let body = SoftBody::new("two", mesh, options).unwrap();
    let scene = Scene {
        rigid: Default::default(),
        contact: SceneContact {
            names: Vec::new(),
            obstacles: vec![Obstacle::plane(Vec3::zeros(), Vec3::z()).unwrap()],
            friction: vec![0.5],
            settings: ContactSection {
                max_iterations: 5000,
                self_contact: true,
                ..ContactSection::default()
            },
            ..SceneContact::default()
        },
        ..Scene::new(
            SimulationSection {
                dt: 0.01,
                steps: 0,
                gravity: [0.0, 0.0, -G],
                newton_iterations: 1,
            },
            vec![body],
        )
    };
    let weight = 2.0 * 1000.0 * side.powi(3) * G;
    let (report, state) = run(&scene, 300);
    let c = &report.contact[0];
    // 9 floor contacts; 4 upper nodes over the lower top face and 4 lower nodes under the
    // upper bottom face.
    assert_eq!(c.detected, 9 + 8, "{c:?}");
    assert!(
        (c.obstacle_forces[0].z - weight).abs() < 1e-6 * weight,
        "{c:?}"
    );
    // The self-contact normals are the lower cube's deformed top-face normals, tilted by
    // about the strain ρ g L / E ≈ 2e-3 rad, so their λ_N differ from the vertical load by
    // up to ≈ θ (|λ_T| ≤ μ λ_N, 1 − cos θ ≈ 0): 1e-3 relative.
    assert!(
        (c.normal_force - 1.5 * weight).abs() < 1e-3 * weight,
        "{c:?}"
    );
    // No node of the upper cube is inside the deformed lower cube (its closed boundary as a
    // mesh obstacle: signed distances by a second method).
    let x = &state.bodies[0].positions;
    let lower = TriangleSurface::new("lower", x[..n].to_vec(), a.boundary_triangles()).unwrap();
    let lower = Obstacle::mesh("lower", lower).unwrap();
    let deepest = x[n..]
        .iter()
        .map(|p| lower.closest(p).gap)
        .fold(f64::INFINITY, f64::min);
    assert!(
        deepest > -1e-9,
        "an upper node is {deepest} m inside the lower cube"
    );
}
