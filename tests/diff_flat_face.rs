//! The step derivatives with flat-face rows active (`scene::step::contact::flat_face_rows`, row
//! kinds 7 and 8): a 60 × 6 × 6 mm bar lying flat across the top face of the soft block of
//! `cube_on_block.toml` (nodes on a 10 mm grid) at y = 5 mm, between two rows of nodes, its
//! ends beyond the block (`tests/contact_flat_face.rs` has it at rest). A free bar landing flat
//! on the block, sliding and sticking, and the block landing flat on a fixed bar: the JVP of
//! one step against Richardson-extrapolated central differences of the forward step, and the
//! VJP its adjoint.

use crate::diff_support;
use crate::scene_support;

use diffsoro::contact::ContactMode;
use diffsoro::math::Vec3;
use diffsoro::scene::{Scene, State};
use scene_support::{SOFT_BLOCK, scene};

/// The bar's middle line is at y = 5 mm, between the node rows y = 0 and y = 10 mm.
const Y_BAR: f64 = 0.005;
/// Half the bar's width and height (m).
const HALF: f64 = 0.003;
/// The block's top face (m).
const TOP: f64 = 0.02;

/// A free steel bar (7850 kg/m³, Coulomb coefficient `friction` with the block) across the
/// block at y = 5 mm, rolled 0.02 rad about its long axis (x) and then pitched 0.005 rad about
/// y (its lower long edge descending towards +x), both within `RIGID_ARC_SLACK` = 0.05 rad of
/// flat: its bottom face lies face-on on the top face. It falls at `fall` (m/s), sliding along
/// x at `slide` (m/s), the point of its lower long edge over the block's rim x = 20 mm 0.7 mm
/// above the face: it lands on that edge's crossings (at 0.3 m/s, all nine and the nearest of
/// the other edge's in one step; the other long edge's, 0.12 mm higher, stay open).
fn falling_bar(friction: f64, slide: f64, fall: f64) -> Scene {
    let turn = nalgebra::UnitQuaternion::from_axis_angle(&Vec3::y_axis(), 0.005)
        * nalgebra::UnitQuaternion::from_axis_angle(&Vec3::x_axis(), 0.02);
    let r = turn.scaled_axis();
    // The lower long edge (y = z = −3 mm in the bar's frame for a positive roll about x): its
    // middle and its direction, relative to the centre.
    let middle = turn * Vec3::new(0.0, -HALF, -HALF);
    let along = turn * Vec3::x();
    let cx = 0.0013;
    let u = (0.02 - cx - middle.x) / along.x;
    let z = TOP + 0.0007 - middle.z - u * along.z;
    scene(&format!(
        r#"
[simulation]
dt = 0.005
gravity = [0.0, 0.0, -9.81]

[contact]
friction = {friction}
tolerance = 1e-12
max_iterations = 100000

{SOFT_BLOCK}fixed_box = [[-1.0, -1.0, -1.0], [1.0, 1.0, 0.001]]

[[rigid_body]]
name = "bar"
shape = "box"
half_extents = [0.03, 0.003, 0.003]
density = 7850.0
position = [{cx}, {Y_BAR}, {z}]
rotation = [{rx}, {ry}, {rz}]
velocity = [{slide}, 0.0, {down}]
"#,
        rx = r.x,
        ry = r.y,
        rz = r.z,
        down = -fall,
    ))
}

/// The state one step before the landing (`scene_support::before_landing`), with that step's
/// rows all flat-face rows of kind `kind` (7: a free body's face, 8: a fixed body's), at least
/// `min_active` of them carrying force.
fn before_landing(s: &Scene, kind: u8, min_active: usize) -> State {
    let (state, stepper) = scene_support::before_landing(s, 40);
    let rows = stepper.body(0).contact().rigid_rows();
    assert!(!rows.is_empty() && rows.iter().all(|r| r.key.0 == kind));
    let active = scene_support::carrying_force(&stepper);
    assert!(
        active >= min_active,
        "{active} of the landing step's {} rows carry force",
        rows.len()
    );
    state
}

#[test]
fn the_step_derivatives_of_a_bar_sliding_flat_onto_the_face_match_finite_differences() {
    let s = falling_bar(0.5, 0.2, 0.3);
    let start = before_landing(&s, 7, 10);
    let m = diff_support::step_modes(&s, &start);
    assert!(m.contains(&ContactMode::Sliding), "sliding expected: {m:?}");
    diff_support::check_soft_rigid_step(
        &s,
        &start,
        &["young_modulus:block", "mass:bar"],
        "sliding",
    );
}

#[test]
fn the_step_derivatives_of_a_bar_sticking_flat_on_the_face_match_finite_differences() {
    let s = falling_bar(10.0, 0.0, 0.3);
    let start = before_landing(&s, 7, 10);
    let m = diff_support::step_modes(&s, &start);
    assert!(
        m.contains(&ContactMode::Sticking) && !m.contains(&ContactMode::Sliding),
        "sticking expected: {m:?}"
    );
    diff_support::check_soft_rigid_step(
        &s,
        &start,
        &["young_modulus:block", "mass:bar"],
        "sticking",
    );
}

/// The block, free, falling from rest onto a fixed bar lying flat under it across its bottom
/// face at y = 5 mm (rolled 0.02 rad about x, then −0.005 rad about y: its upper long edge
/// rising towards +x), the point of that edge under the block's bottom rim x = 20 mm 0.7 mm
/// below the block: the block lands with its bottom face on the bar's top face (a fixed
/// body's flat-face rows, no rigid coordinates).
fn block_on_fixed_bar() -> Scene {
    let turn = nalgebra::UnitQuaternion::from_axis_angle(&Vec3::y_axis(), -0.005)
        * nalgebra::UnitQuaternion::from_axis_angle(&Vec3::x_axis(), 0.02);
    let r = turn.scaled_axis();
    // The upper long edge (y = z = +3 mm in the bar's frame): its middle and its direction.
    let middle = turn * Vec3::new(0.0, HALF, HALF);
    let along = turn * Vec3::x();
    let cx = 0.0013;
    let u = (0.02 - cx - middle.x) / along.x;
    let z = -0.0007 - middle.z - u * along.z;
    scene(&format!(
        r#"
[simulation]
dt = 0.005
gravity = [0.0, 0.0, -9.81]

[contact]
friction = 0.5
tolerance = 1e-12
max_iterations = 100000

{SOFT_BLOCK}
[[rigid_body]]
name = "bar"
shape = "box"
half_extents = [0.03, 0.003, 0.003]
fixed = true
position = [{cx}, {Y_BAR}, {z}]
rotation = [{rx}, {ry}, {rz}]
"#,
        rx = r.x,
        ry = r.y,
        rz = r.z,
    ))
}

#[test]
fn the_step_derivatives_of_a_block_landing_flat_on_a_fixed_bar_match_finite_differences() {
    let s = block_on_fixed_bar();
    let start = before_landing(&s, 8, 1);
    diff_support::check_soft_rigid_step(&s, &start, &["young_modulus:block"], "on a fixed bar");
}
