//! A rigid capsule thinner than the node spacing lying on a soft face between nodes (a
//! capsule's end balls get the ball rows, `scene::step::contact::ball_rows`, row kinds 9 and
//! 10): a steel capsule of radius 2 mm and axis length 8 mm lying along x on the top face of the
//! 40 × 40 × 20 mm soft block of `cube_on_block.toml` (nodes on a 10 mm grid, at
//! x, y ∈ {−20, −10, 0, 10, 20} mm), its axis over y = 5 mm from x = −4 to 4 mm. The nearest
//! nodes, (0, 0) and (0, 10) mm, are 5 mm from the axis in the plane and 5.4 mm from it in
//! space, 3.4 mm clear of the capsule: no node row holds it, only its end balls' rows can.
//! Leaning across the block's rim between two nodes, both ends clear, only its axis' ridge
//! row (kind 11, `SurfaceTree::capsule_ridges`) can hold it.
//! Every expected number comes from the mesh, the capsule's mass or a balance of forces,
//! never from an earlier run. The step derivatives with these rows active:
//! `tests/diff_small_ball.rs`.

use crate::scene_support;

use std::f64::consts::PI;

use diffsoro::math::Vec3;
use diffsoro::scene::{Scene, SoftPoint, Stepper};
use scene_support::{BlockContact, clamped_block_scene, force_on_rigid};

/// The capsule's radius and half axis length (m).
const R: f64 = 0.002;
const HALF: f64 = 0.004;
/// The block's top face (m).
const TOP: f64 = 0.02;
/// The capsule's density (kg/m³, steel).
const DENSITY: f64 = 7850.0;

/// The free capsule lying along x over y = 5 mm, `clearance` (m) above the top face, the
/// ball rows on or off (`[contact] small_shapes`), the NCP solved to 1e-10.
pub fn capsule_on_block(clearance: f64, small_shapes: bool) -> Scene {
    let contact = BlockContact {
        friction: 0.5,
        tolerance: 1e-10,
        small_shapes,
    };
    clamped_block_scene(
        [0.0, 0.0, -9.81],
        &contact,
        &format!(
            r#"[[rigid_body]]
name = "capsule"
shape = "capsule"
radius = {R}
half_length = {HALF}
density = {DENSITY}
position = [0.0, 0.005, {z}]
rotation = [0.0, {quarter}, 0.0]
"#,
            z = TOP + R + clearance,
            quarter = PI / 2.0,
        ),
    )
}

/// The capsule's mass (kg): a cylinder of length 2·HALF and two half balls.
fn mass() -> f64 {
    (PI * R * R * 2.0 * HALF + 4.0 / 3.0 * PI * R.powi(3)) * DENSITY
}

/// The capsule's end centres (m) from its configuration q = [c; quaternion (x, y, z, w)]: its
/// axis is the body's z axis.
fn ends(q: &[f64]) -> [Vec3; 2] {
    let c = Vec3::new(q[0], q[1], q[2]);
    let rotation = nalgebra::UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(
        q[6], q[3], q[4], q[5],
    ));
    let axis = rotation * Vec3::z() * HALF;
    [c - axis, c + axis]
}

/// The capsule of `urdf/capsule_slider.urdf` (the same size, 0.01 kg, axis along x) on its
/// vertical slider, its centre over (0, 5) mm and `clearance` (m) above the top face.
fn capsule_on_slider(clearance: f64) -> Scene {
    on_slider("capsule_slider", [0.0, 0.005, TOP + R + clearance], true)
}

/// The robot of `urdf/{urdf}.urdf` (a capsule on a vertical slider) with its centre at
/// `centre` (m) over the soft block, μ = 0.5, the NCP solved to 1e-10, the ball rows on or
/// off (`[contact] small_shapes`).
fn on_slider(urdf: &str, centre: [f64; 3], small_shapes: bool) -> Scene {
    let [x, y, z] = centre;
    let contact = BlockContact {
        friction: 0.5,
        tolerance: 1e-10,
        small_shapes,
    };
    clamped_block_scene(
        [0.0, 0.0, -9.81],
        &contact,
        &format!(
            r#"[[robot]]
name = "capsule"
urdf = "../urdf/{urdf}.urdf"
base = "fixed"
position = [{x}, {y}, {z}]
"#
        ),
    )
}

/// The normal forces (N, world z) of this step's rows on each end of a capsule centred at
/// x = 0 (rows of kind `kind` on its side x < 0, then x > 0); every other row must carry
/// nothing (a node within reach while the face dips under the ends).
fn end_forces(stepper: &Stepper, kind: u8, weight: f64, step: usize) -> [f64; 2] {
    let rows = stepper.body(0).contact().rigid_rows();
    let lambda = stepper.body(0).contact().lambda();
    let own = lambda.len() / 3 - rows.len();
    let mut ends = [0.0; 2];
    for (i, r) in rows.iter().enumerate() {
        let l = &lambda[3 * (own + i)..3 * (own + i) + 3];
        let f = (r.frame * Vec3::new(l[0], l[1], l[2])).z;
        if r.key.0 == kind {
            assert!(matches!(r.soft, SoftPoint::Face { .. }), "{r:?}");
            ends[usize::from(r.point.x > 0.0)] += f;
        } else {
            assert!(f.abs() < 1e-9 * weight, "step {step}: {r:?} carries {f} N");
        }
    }
    ends
}

/// The capsule let down 0.2 mm onto the face between nodes on its slider comes to rest on its
/// two end balls' rows (kind 9: it is a robot's link): every NCP converges, the ends stay
/// above the undeformed face (the rows hold them in the small dents they press), the nodes
/// within reach carry nothing, both ends carry, and at rest the block carries the capsule's
/// weight, 0.01 kg · g (the slider takes no vertical force).
#[test]
fn a_thin_capsule_on_a_slider_rests_on_its_end_balls_between_nodes() {
    let s = capsule_on_slider(0.0002);
    let weight = 0.01 * 9.81;
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    let mut ends = [0.0; 2];
    for step in 0..600 {
        let report = stepper.step(&s, &mut state).unwrap();
        assert!(report.contact_converged, "step {step}");
        let z = TOP + R + 0.0002 + state.rigid[0].q[0];
        assert!(z > TOP + R - 1e-4, "step {step}: the axis sank to {z} m");
        ends = end_forces(&stepper, 9, weight, step);
    }
    let v = state.rigid[0].v[0];
    assert!(v.abs() < 1e-6, "still moving at {v} m/s");
    let carried = force_on_rigid(&stepper).z;
    assert!(
        (carried - weight).abs() < 1e-6 * weight,
        "the block carries {carried} N of {weight} N"
    );
    assert!(
        ends.iter().all(|&f| f > 0.1 * weight),
        "the ends carry {ends:?} N"
    );
}

/// The free capsule dropped 0.2 mm onto the face between nodes stays on it on its end balls'
/// rows: every NCP converges, its ends never go below the undeformed face, and its kinetic
/// energy of translation never exceeds the potential energy it has lost (no row does work on
/// it). It does not stay put: a point of a linear triangle is stiffer the farther it is from
/// the nodes, so the face under the ends sinks towards the node lines and the capsule rolls
/// downhill, slowly, towards y = 10 mm.
#[test]
fn a_free_thin_capsule_dropped_between_nodes_stays_on_the_face() {
    let s = capsule_on_block(0.0002, true);
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    let (weight, z0) = (mass() * 9.81, TOP + R + 0.0002);
    let mut rows = 0;
    for step in 0..1000 {
        let report = stepper.step(&s, &mut state).unwrap();
        assert!(report.contact_converged, "step {step}");
        for end in ends(&state.rigid[0].q) {
            assert!(end.z > TOP, "step {step}: an end sank to {} m", end.z);
        }
        let v = &state.rigid[0].v;
        let kinetic = 0.5 * mass() * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        let lost = weight * (z0 - state.rigid[0].q[2]);
        assert!(
            kinetic <= lost,
            "step {step}: kinetic {kinetic:e} J, potential lost {lost:e} J"
        );
        let [a, b] = end_forces(&stepper, 9, weight, step);
        rows += usize::from(a > 0.0 && b > 0.0);
    }
    assert!(rows > 900, "both ends carried in {rows} of 1000 steps");
}

/// Without the rows the same capsule falls through the face between the nodes (what the
/// rows are for): within 0.2 s its axis is below the top face.
#[test]
fn without_the_end_balls_rows_the_capsule_sinks_through_the_block() {
    let s = capsule_on_block(0.0002, false);
    let mut state = s.initial_state();
    scene_support::run_steps(&s, &mut state, 40);
    let [a, b] = ends(&state.rigid[0].q);
    assert!(a.z < TOP && b.z < TOP, "ends at {a:?}, {b:?}");
}

/// The capsule of `urdf/leaning_capsule_slider.urdf` (the same size, 0.01 kg, its axis along
/// (1, 0, −1)/√2) on its vertical slider, its axis `clearance` (m) out from the block's rim
/// (the edge x = z = 20 mm) along (1, 0, 1)/√2 over y = 5 mm, between the rim's nodes at
/// y = 0 and 10 mm (5.4 mm from the axis): its upper end 2.2 mm above the top face, its lower
/// end 2.2 mm out from the side face, so only its axis can touch, across the rim.
fn capsule_leaning_on_the_rim(clearance: f64, small_shapes: bool) -> Scene {
    let out = (R + clearance) / 2f64.sqrt();
    on_slider(
        "leaning_capsule_slider",
        [0.02 + out, 0.005, TOP + out],
        small_shapes,
    )
}

/// The leaning capsule let down 0.2 mm onto the rim comes to rest on its axis' ridge row alone
/// (kind 11, `SurfaceTree::capsule_ridges`), every NCP converged: the block carries its
/// weight, 0.01 kg · g, to 1e-6, and the force stays within the friction cone (μ = 0.5) about
/// the rim's 45° normal (the slider takes its horizontal part). Without the rows it falls
/// past the rim between the nodes.
#[test]
fn a_thin_capsule_leaning_across_the_rim_rests_on_its_axis_ridge_row() {
    let s = capsule_leaning_on_the_rim(0.0002, true);
    let weight = 0.01 * 9.81;
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    for step in 0..600 {
        let report = stepper.step(&s, &mut state).unwrap();
        assert!(report.contact_converged, "step {step}");
    }
    let rows = stepper.body(0).contact().rigid_rows();
    let lambda = stepper.body(0).contact().lambda();
    let own = lambda.len() / 3 - rows.len();
    let mut axis_rows = 0;
    for (i, r) in rows.iter().enumerate() {
        let l = &lambda[3 * (own + i)..3 * (own + i) + 3];
        if r.key.0 == 11 {
            axis_rows += 1;
            assert!(matches!(r.soft, SoftPoint::Edge { .. }), "{r:?}");
            let n = r.frame.column(2);
            let rim = Vec3::new(1.0, 0.0, 1.0) / 2f64.sqrt();
            assert!(n.dot(&rim) > 0.999, "normal {n}");
            assert!(
                l[0].hypot(l[1]) <= 0.5 * l[2] + 1e-12,
                "{l:?} outside the cone"
            );
        } else {
            assert!(l[2].abs() < 1e-9 * weight, "{r:?} carries {l:?}");
        }
    }
    assert_eq!(axis_rows, 1, "{rows:?}");
    let carried = force_on_rigid(&stepper).z;
    assert!(
        (carried - weight).abs() < 1e-6 * weight,
        "the block carries {carried} N of {weight} N"
    );
    let off = capsule_leaning_on_the_rim(0.0002, false);
    let mut state = off.initial_state();
    scene_support::run_steps(&off, &mut state, 100);
    assert!(
        state.rigid[0].q[0] < -0.004,
        "without the rows it stays at {} m",
        state.rigid[0].q[0]
    );
}
