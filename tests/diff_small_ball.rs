//! The step derivatives with ball rows active (`scene::step::contact::ball_rows`, row kinds 9 and
//! 10): a steel ball of radius 3 mm landing on the top face of the soft block of
//! `cube_on_block.toml` (nodes on a 10 mm grid) over (2.5, 5) mm, between nodes
//! (`tests/contact_small_ball.rs` has it at rest), sliding and spinning or sticking, and the
//! free block landing on a fixed ball, and a capsule landing on one of its end balls: the JVP
//! of one step against Richardson-extrapolated central differences of the forward step, and
//! the VJP its adjoint. The row's support point c − r n turns with the soft triangle
//! (dp = dc − r dn), which these checks cover.

use crate::diff_support;
use crate::scene_support;

use diffsoro::contact::ContactMode;
use diffsoro::scene::{Scene, SoftPoint, State, Stepper};
use scene_support::{BlockContact, SOFT_BLOCK, clamped_block_scene, scene};

/// The ball's radius (m).
const R: f64 = 0.003;
/// The block's top face (m).
const TOP: f64 = 0.02;

/// A free ball of 20 g (dense: the mass's finite difference moves it by 1e-3 kg), Coulomb
/// coefficient `friction` with the block, over
/// (2.5, 5) mm, 0.7 mm above the top face, falling at `fall` (m/s), sliding along x at `slide`
/// (m/s) and spinning about y at `spin` (rad/s).
fn falling_ball(friction: f64, slide: f64, fall: f64, spin: f64) -> Scene {
    falling_ball_at(0.0025, TOP + R + 0.0007, friction, slide, fall, spin)
}

/// That ball with its centre at (x, 5 mm, z) (m).
fn falling_ball_at(x: f64, z: f64, friction: f64, slide: f64, fall: f64, spin: f64) -> Scene {
    let contact = BlockContact {
        friction,
        tolerance: 1e-12,
        small_shapes: true,
    };
    clamped_block_scene(
        [0.0, 0.0, -9.81],
        &contact,
        &format!(
            r#"[[rigid_body]]
name = "ball"
shape = "sphere"
radius = {R}
mass = 0.02
position = [{x}, 0.005, {z}]
velocity = [{slide}, 0.0, {down}]
angular_velocity = [0.0, {spin}, 0.0]
"#,
            down = -fall,
        ),
    )
}

/// The state one step before the landing (`scene_support::before_landing`), with that step's
/// rows a ball row of kind `kind` (9: a free body's ball, 10: a fixed body's) and node rows.
fn before_landing(s: &Scene, kind: u8) -> State {
    let (state, stepper) = scene_support::before_landing(s, 40);
    let rows = stepper.body(0).contact().rigid_rows();
    // The ball row, and node rows of nodes within the fast ball's reach.
    assert!(rows.iter().any(|r| r.key.0 == kind), "{rows:?}");
    assert!(
        rows.iter().all(|r| r.key.0 == kind || r.key.0 < 2),
        "{rows:?}"
    );
    state
}

#[test]
fn the_step_derivatives_of_a_ball_sliding_onto_the_face_match_finite_differences() {
    // Its support point slips at v_x − ω_y r = 0.3 + 0.45 = 0.75 m/s: stopping it would take
    // the impulse (2/7) m · 0.75 m/s, far beyond μ = 0.1 times the landing's m · 0.3 m/s.
    let s = falling_ball(0.1, 0.3, 0.3, -150.0);
    let start = before_landing(&s, 9);
    let m = diff_support::step_modes(&s, &start);
    assert!(m.contains(&ContactMode::Sliding), "sliding expected: {m:?}");
    diff_support::check_soft_rigid_step(
        &s,
        &start,
        &["young_modulus:block", "mass:ball"],
        "sliding",
    );
}

#[test]
fn the_step_derivatives_of_a_ball_sticking_on_the_face_match_finite_differences() {
    // Its support point slips at 0.02 − 5 · 0.003 = 0.005 m/s, stopped by μ = 10.
    let s = falling_ball(10.0, 0.02, 0.3, 5.0);
    let start = before_landing(&s, 9);
    let m = diff_support::step_modes(&s, &start);
    assert!(
        m.contains(&ContactMode::Sticking) && !m.contains(&ContactMode::Sliding),
        "sticking expected: {m:?}"
    );
    diff_support::check_soft_rigid_step(
        &s,
        &start,
        &["young_modulus:block", "mass:ball"],
        "sticking",
    );
}

/// A free ball of 20 g falling at 0.3 m/s onto the block's rim (the edge x = 20 mm, z = 20 mm
/// between the nodes at y = 0 and 10 mm), its centre 45° out from the rim, 0.7 mm higher:
/// held by the rim's edge row (`SurfaceTree::ball_edges`, its normal from the edge's closest
/// point to the centre turning with both: `contact::BallOnSegment`).
#[test]
fn the_step_derivatives_of_a_ball_landing_on_the_rim_match_finite_differences() {
    let out = R / 2f64.sqrt();
    let s = falling_ball_at(0.02 + out, TOP + out + 0.0007, 0.3, 0.0, 0.3, 0.0);
    let start = before_landing(&s, 9);
    let mut stepper = Stepper::new(&s).unwrap();
    stepper.step(&s, &mut start.clone()).unwrap();
    let rows = stepper.body(0).contact().rigid_rows();
    assert!(
        rows.iter()
            .any(|r| r.key.0 == 9 && matches!(r.soft, SoftPoint::Edge { .. })),
        "{rows:?}"
    );
    diff_support::check_soft_rigid_step(&s, &start, &["young_modulus:block", "mass:ball"], "rim");
}

/// The block, free, falling from rest onto a fixed ball under its bottom face at (2.5, 5) mm,
/// 0.7 mm below it: a fixed body's ball row (no rigid coordinates).
#[test]
fn the_step_derivatives_of_a_block_landing_on_a_fixed_ball_match_finite_differences() {
    let s = scene(&format!(
        r#"
[simulation]
dt = 0.005
gravity = [0.0, 0.0, -9.81]

[contact]
small_shapes = true
friction = 0.5
tolerance = 1e-12
max_iterations = 100000

{SOFT_BLOCK}
[[rigid_body]]
name = "ball"
shape = "sphere"
radius = {R}
fixed = true
position = [0.0025, 0.005, {z}]
"#,
        z = -0.0007 - R,
    ));
    let start = before_landing(&s, 10);
    diff_support::check_soft_rigid_step(&s, &start, &["young_modulus:block"], "on a fixed ball");
}

/// A free capsule of 20 g (radius 2 mm, axis 8 mm), its axis tilted 0.2 rad down from x so
/// that its end at +x lands first over (3.9, 5) mm between nodes, falling at 0.3 m/s, sliding
/// along y at 0.1 m/s and turning about y at 2 rad/s: held by that end ball's row, whose
/// centre lies off the body's origin, so the body's motion moves it by v + ω × (c − x).
#[test]
fn the_step_derivatives_of_a_capsule_landing_on_its_end_match_finite_differences() {
    let tilt = 0.2f64;
    let drop = CAPSULE_HALF * tilt.sin();
    let s = falling_capsule(
        [0.0, TOP + CAPSULE_R + 0.0007 + drop],
        std::f64::consts::FRAC_PI_2 + tilt,
        2.0,
    );
    let start = before_landing(&s, 9);
    let mut stepper = Stepper::new(&s).unwrap();
    stepper.step(&s, &mut start.clone()).unwrap();
    let rows = stepper.body(0).contact().rigid_rows();
    assert!(
        rows.iter().any(|r| r.key.0 == 9 && r.point.x > 0.003),
        "the +x end's row: {rows:?}"
    );
    diff_support::check_soft_rigid_step(
        &s,
        &start,
        &["young_modulus:block", "mass:capsule"],
        "capsule end",
    );
}

/// A free capsule of 20 g (radius 2 mm, axis 8 mm) leaning 45° across the block's rim (its
/// axis along (1, 0, −1)/√2 over y = 5 mm, 0.7 mm out from the rim along (1, 0, 1)/√2, both
/// ends clear of the faces), falling at 0.3 m/s and sliding along the rim at 0.1 m/s: held by
/// its axis' ridge row (kind 11, the edge-crossing geometry of its axis, the support point
/// r below a(t)).
#[test]
fn the_step_derivatives_of_a_capsule_landing_across_the_rim_match_finite_differences() {
    let out = (CAPSULE_R + 0.0007) / 2f64.sqrt();
    let s = falling_capsule([0.02 + out, TOP + out], 0.75 * std::f64::consts::PI, 0.0);
    let start = before_landing(&s, 11);
    diff_support::check_soft_rigid_step(
        &s,
        &start,
        &["young_modulus:block", "mass:capsule"],
        "capsule across the rim",
    );
}

/// The capsules' radius and half axis length (m).
const CAPSULE_R: f64 = 0.002;
const CAPSULE_HALF: f64 = 0.004;

/// A free capsule of 20 g (radius 2 mm, axis 8 mm) with its centre at (x, 5 mm, z) (`xz`,
/// m), turned by `turn` (rad) about y from the z axis, falling at 0.3 m/s, sliding along y
/// at 0.1 m/s and turning about y at `spin` (rad/s), μ = 0.3 with the block.
fn falling_capsule(xz: [f64; 2], turn: f64, spin: f64) -> Scene {
    let [x, z] = xz;
    let contact = BlockContact {
        friction: 0.3,
        tolerance: 1e-12,
        small_shapes: true,
    };
    clamped_block_scene(
        [0.0, 0.0, -9.81],
        &contact,
        &format!(
            r#"[[rigid_body]]
name = "capsule"
shape = "capsule"
radius = {CAPSULE_R}
half_length = {CAPSULE_HALF}
mass = 0.02
position = [{x}, 0.005, {z}]
rotation = [0.0, {turn}, 0.0]
velocity = [0.0, 0.1, -0.3]
angular_velocity = [0.0, {spin}, 0.0]
"#
        ),
    )
}
