//! Shared helpers of the tests that build scenes from TOML text: the repository root, a
//! checked scene from text (relative paths resolved against `scenes/`), plain steps, and how
//! far apart two runs ended; a block's top-face edges and the force soft rows put on rigid
//! bodies.
#![allow(dead_code)]

use std::path::Path;

use diffsoro::math::Vec3;
use diffsoro::scene::{RigidRow, Scene, SceneFile, State, Stepper};

/// The repository root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Writes `text` to `path` through a file of this thread's own, renamed into place (atomic):
/// tests running at once that write the same input file never read one half written.
pub fn write_atomically(path: &Path, text: &str) {
    let mut partial = path.as_os_str().to_owned();
    partial.push(format!(".{:?}.partial", std::thread::current().id()));
    std::fs::write(&partial, text).unwrap();
    std::fs::rename(&partial, path).unwrap();
}

/// The scene of the TOML `text`, parsed, validated and built as if it were a file of
/// `scenes/` (panics on any error).
pub fn scene(text: &str) -> Scene {
    let file = SceneFile::parse("test.toml", text, &[]).unwrap();
    file.validate().unwrap();
    Scene::build(&file, &root().join("scenes")).unwrap()
}

/// Advances `state` by `steps` steps of `scene` with a fresh stepper.
pub fn run_steps(scene: &Scene, state: &mut State, steps: usize) {
    let mut stepper = Stepper::new(scene).unwrap();
    for _ in 0..steps {
        stepper.step(scene, state).unwrap();
    }
}

/// The largest distance (m) between the same node of the same soft body in two states.
pub fn largest_position_difference(a: &State, b: &State) -> f64 {
    a.bodies
        .iter()
        .zip(&b.bodies)
        .flat_map(|(p, q)| p.positions.iter().zip(&q.positions))
        .map(|(p, q)| (p - q).norm())
        .fold(0.0, f64::max)
}

/// The distinct edges (node pairs, increasing) of the first soft body's boundary triangles
/// whose nodes all lie at rest above `top` (m): the edges of a block's top face.
pub fn top_edges(scene: &Scene, top: f64) -> Vec<[usize; 2]> {
    let body = &scene.bodies[0];
    let rest = body.rest_positions();
    let mut edges: Vec<[usize; 2]> = body
        .mesh()
        .boundary_triangles()
        .iter()
        .filter(|t| t.iter().all(|&n| rest[n].z > top))
        .flat_map(|t| (0..3).map(move |e| [t[e].min(t[(e + 1) % 3]), t[e].max(t[(e + 1) % 3])]))
        .collect();
    edges.sort_unstable();
    edges.dedup();
    edges
}

/// The force (N, world) the soft bodies' point rows (`RigidRow::Point`) put on the rigid
/// side in the last step: Σ sign · frame · λ.
pub fn force_on_rigid(stepper: &Stepper) -> Vec3 {
    let rigid = stepper.rigid();
    let mut f = Vec3::zeros();
    for (c, l) in rigid.contacts().iter().zip(rigid.lambda().chunks_exact(3)) {
        if let RigidRow::Point { frame, sign, .. } = c.row {
            f += sign * frame * Vec3::new(l[0], l[1], l[2]);
        }
    }
    f
}

/// Runs the committed scene `name` (`scenes/`) with the boolean `[contact]` setting `key` on
/// and off, step by step: every step's soft–rigid rows and state must be the
/// same bit for bit and every NCP must converge; and the scene must have soft–rigid rows.
/// What a new kind of row that the scene never needs must leave alone.
pub fn assert_rows_unchanged_by(name: &str, key: &str) {
    let path = root().join("scenes").join(name);
    let on = Scene::load(&path, &[format!("contact.{key}=true")]).unwrap();
    let off = Scene::load(&path, &[format!("contact.{key}=false")]).unwrap();
    let (mut a, mut b) = (on.initial_state(), off.initial_state());
    let (mut sa, mut sb) = (Stepper::new(&on).unwrap(), Stepper::new(&off).unwrap());
    let mut rows = 0;
    for step in 0..on.simulation.steps {
        let ra = sa.step(&on, &mut a).unwrap();
        let rb = sb.step(&off, &mut b).unwrap();
        assert!(
            ra.contact_converged && rb.contact_converged,
            "{name} step {step}"
        );
        for body in 0..on.bodies.len() {
            let (x, y) = (
                sa.body(body).contact().rigid_rows(),
                sb.body(body).contact().rigid_rows(),
            );
            assert_eq!(x, y, "{name} step {step} body {body}");
            rows += x.len();
            assert_eq!(a.bodies[body].positions, b.bodies[body].positions);
            assert_eq!(a.bodies[body].velocities, b.bodies[body].velocities);
        }
        for (p, q) in a.rigid.iter().zip(&b.rigid) {
            assert_eq!((&p.q, &p.v), (&q.q, &q.v), "{name} step {step}");
        }
    }
    assert!(rows > 0, "{name}: no soft–rigid row");
}

/// The `[[soft_body]]` section of the contact tests' silicone block (`meshes/soft_block.msh`,
/// 10 mm node spacing; Neo-Hookean, E = 100 kPa, ν = 0.3, 1000 kg/m³, Rayleigh 2 / 0.01),
/// for `format!` scene texts (`{SOFT_BLOCK}`); keys of the section may follow it.
pub const SOFT_BLOCK: &str = r#"[[soft_body]]
name = "block"
mesh = "../meshes/soft_block.msh"
law = "neo_hookean"
young_modulus = 1.0e5
poisson_ratio = 0.3
density = 1000.0
rayleigh_mass = 2.0
rayleigh_stiffness = 0.01
"#;

/// The `[contact]` settings of a scene on the clamped block ([`clamped_block_scene`]).
pub struct BlockContact {
    /// Coulomb coefficient μ of every contact.
    pub friction: f64,
    /// The NCP's tolerance (N, m/s, W); at most 100,000 iterations.
    pub tolerance: f64,
    /// `[contact] small_shapes`: the ball and capsule rows on or off.
    pub small_shapes: bool,
}

/// A scene of the contact tests' block ([`SOFT_BLOCK`]) clamped below z = 1 mm, steps of
/// 5 ms under `gravity` (m/s²), the `contact` settings, and the TOML `bodies` after the block
/// (rigid bodies, robots).
pub fn clamped_block_scene(gravity: [f64; 3], contact: &BlockContact, bodies: &str) -> Scene {
    let [gx, gy, gz] = gravity;
    let BlockContact {
        friction,
        tolerance,
        small_shapes,
    } = contact;
    scene(&format!(
        r#"
[simulation]
dt = 0.005
gravity = [{gx:?}, {gy:?}, {gz:?}]

[contact]
friction = {friction:?}
tolerance = {tolerance:e}
max_iterations = 100000
small_shapes = {small_shapes}

{SOFT_BLOCK}fixed_box = [[-1.0, -1.0, -1.0], [1.0, 1.0, 0.001]]

{bodies}"#
    ))
}

/// The state one step before `s`'s first body lands: the first of at most `steps` steps whose
/// NCP carries force, that step's soft–rigid rows of body 0 with every gap clear of Φ = 0
/// (more than 1e-6 m, away from the penetration correction's kink), and the stepper after it
/// (its rows and forces, for the caller's checks). Panics when nothing lands in time.
pub fn before_landing(s: &Scene, steps: usize) -> (State, Stepper) {
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(s).unwrap();
    for _ in 0..steps {
        let mut next = state.clone();
        stepper.step(s, &mut next).unwrap();
        let touching = stepper
            .contact()
            .groups()
            .iter()
            .any(|g| g.lambda().iter().any(|l| *l != 0.0));
        if touching {
            let rows = stepper.body(0).contact().rigid_rows();
            let min_gap = rows
                .iter()
                .map(|r| r.gap.abs())
                .fold(f64::INFINITY, f64::min);
            assert!(min_gap > 1e-6, "the landing step's gaps: {min_gap:e}");
            return (state, stepper);
        }
        state = next;
    }
    panic!("nothing lands within {steps} steps");
}

/// The number of the last step's contacts, over every NCP, whose normal force is positive.
pub fn carrying_force(stepper: &Stepper) -> usize {
    stepper
        .contact()
        .groups()
        .iter()
        .flat_map(|g| g.lambda().chunks(3))
        .filter(|l| l[2] > 0.0)
        .count()
}
