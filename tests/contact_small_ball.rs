//! A rigid ball smaller than the node spacing on a soft face between nodes (the ball
//! rows, `scene::step::contact::ball_rows`, row kinds 9 and 10): a steel ball of radius 3 mm on the top face
//! of the 40 × 40 × 20 mm soft block of `cube_on_block.toml` (nodes on a 10 mm grid, at
//! x, y ∈ {−20, −10, 0, 10, 20} mm). Over (2.5, 5) mm the nearest nodes are 5.59 mm away in
//! the plane, 3.3 mm from the ball's surface: no node row holds it, only the ball row can.
//! Every expected number comes from the mesh, the ball's mass, a balance of forces or
//! rolling kinematics, never from an earlier run. The step derivatives with these rows
//! active: `tests/diff_small_ball.rs`.

use crate::scene_support;

use std::f64::consts::PI;

use diffsoro::math::Vec3;
use diffsoro::scene::{RigidRow, Scene, SoftPoint, State, Stepper};
use scene_support::{BlockContact, clamped_block_scene, force_on_rigid};

/// The ball's radius (m).
const R: f64 = 0.003;
/// The block's top face (m).
const TOP: f64 = 0.02;
/// The ball's density (kg/m³, steel).
const DENSITY: f64 = 7850.0;

/// The ball (centre over (`x`, `y`), m) `clearance` (m) above the block's top face, under
/// gravity of 9.81 m/s² tilted by `tilt` (rad) about y (towards +x), Coulomb coefficient
/// `friction`, the NCP solved to `tolerance`, the ball rows on or off (`[contact]
/// small_shapes`).
fn ball_on_block(
    x: f64,
    y: f64,
    clearance: f64,
    tilt: f64,
    friction: f64,
    tolerance: f64,
    small_shapes: bool,
) -> Scene {
    let contact = BlockContact {
        friction,
        tolerance,
        small_shapes,
    };
    clamped_block_scene(
        [9.81 * tilt.sin(), 0.0, -9.81 * tilt.cos()],
        &contact,
        &format!(
            r#"[[rigid_body]]
name = "ball"
shape = "sphere"
radius = {R}
density = {DENSITY}
position = [{x}, {y}, {z}]
"#,
            z = TOP + R + clearance,
        ),
    )
}

/// The ball's mass (kg).
fn mass() -> f64 {
    4.0 / 3.0 * PI * R.powi(3) * DENSITY
}

/// How deep (m) the ball is in the block's top face at the nodes' positions `x`: the largest
/// r − n · (c − x₀) over the top-face triangles (their rest vertices at z = TOP) onto which
/// the centre `c` projects (seen along their normal), and the largest r − ‖x_v − c‖ over the
/// top-face nodes (a node inside the ball). Negative: clear of the face.
fn penetration(s: &Scene, x: &[Vec3], c: &Vec3) -> f64 {
    let body = &s.bodies[0];
    let rest = body.rest_positions();
    let mut deepest = f64::NEG_INFINITY;
    for t in body.mesh().boundary_triangles() {
        if !t.iter().all(|&v| rest[v].z > TOP - 1e-9) {
            continue;
        }
        let [a, b, d] = t.map(|v| x[v]);
        let cross = (b - a).cross(&(d - a));
        let n = cross / cross.norm();
        let inside = [(a, b), (b, d), (d, a)]
            .iter()
            .all(|(p, q)| (q - p).cross(&(c - p)).dot(&n) >= 0.0);
        if inside {
            deepest = deepest.max(R - n.dot(&(c - a)));
        }
        for v in t {
            deepest = deepest.max(R - (x[v] - c).norm());
        }
    }
    deepest
}

/// The ball's centre (m) from its configuration q = [c; quaternion].
fn centre(q: &[f64]) -> Vec3 {
    Vec3::new(q[0], q[1], q[2])
}

/// The ball of `urdf/ball_slider.urdf` (radius 3 mm, 0.01 kg) on its vertical slider over
/// (2.5, 5) mm, `clearance` (m) above the top face, the NCP solved to `tolerance`.
fn ball_on_slider(clearance: f64, tolerance: f64) -> Scene {
    ball_on_slider_at([0.0025, 0.005, TOP + R + clearance], tolerance, true)
}

/// That ball's slider with the ball's centre at `[x, y, z]` (m), the ball rows on or off.
fn ball_on_slider_at(centre: [f64; 3], tolerance: f64, small_shapes: bool) -> Scene {
    let [x, y, z] = centre;
    let contact = BlockContact {
        friction: 0.5,
        tolerance,
        small_shapes,
    };
    clamped_block_scene(
        [0.0, 0.0, -9.81],
        &contact,
        &format!(
            r#"[[robot]]
name = "ball"
urdf = "../urdf/ball_slider.urdf"
base = "fixed"
position = [{x}, {y}, {z}]
"#
        ),
    )
}

/// The rows against the ball in this step are all ball rows of kind `kind` on top-face
/// triangles, their weights those of an interior point, or of a point less than r beyond one
/// edge (a concave crease of the dent: `SurfaceTree::ball_triangles`), their rigid point the
/// support point c − r n of the ball centred at `c`. Returns how many.
fn check_ball_rows(s: &Scene, stepper: &Stepper, kind: u8, c: &Vec3, step: usize) -> usize {
    let rest = s.bodies[0].rest_positions();
    let rows = stepper.body(0).contact().rigid_rows();
    for r in rows {
        assert_eq!(r.key.0, kind, "step {step}: a row of kind {}", r.key.0);
        let SoftPoint::Face { vertices, weights } = r.soft else {
            panic!("a ball row's soft point is a face");
        };
        assert!(vertices.iter().all(|&v| rest[v].z > TOP - 1e-9));
        assert!((weights.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(
            weights.iter().filter(|&&w| w < -1e-9).count() <= 1,
            "{weights:?}"
        );
        let n = r.frame.column(2).into_owned();
        assert!((r.point - (c - R * n)).norm() < 1e-15, "step {step}");
    }
    rows.len()
}

/// The slider's ball at rest in `state` (its velocity below 1e-8 m/s) with the block carrying
/// its weight m g = 0.01 kg · 9.81 m/s² to 1e-6 (the slider takes any horizontal push);
/// returns the weight (N).
fn assert_slider_ball_at_rest(state: &State, stepper: &Stepper) -> f64 {
    let v = state.rigid[0].v[0];
    assert!(v.abs() < 1e-8, "the ball still moves at {v} m/s");
    let weight = 0.01 * 9.81;
    let f = force_on_rigid(stepper);
    assert!(
        (f.z - weight).abs() < 1e-6 * weight,
        "the block carries {} N of the ball's {weight} N",
        f.z
    );
    weight
}

/// A ball of radius 3 mm on a slider, let go 0.2 mm over the top face between nodes, comes
/// to rest on its ball row: the face no deeper in it than the NCP's tolerance allows, the
/// block carrying its weight.
#[test]
fn a_ball_on_a_slider_rests_on_the_face_between_nodes() {
    let tolerance = 1e-10;
    let s = ball_on_slider(0.0002, tolerance);
    let h = s.simulation.dt;
    // No node of the block is within 3 mm of the ball's surface over the top face.
    let c0 = Vec3::new(0.0025, 0.005, TOP + R);
    let rest = s.bodies[0].rest_positions();
    assert!(rest.iter().all(|p| (p - c0).norm() - R > 0.003));
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    let base_z = TOP + R + 0.0002;
    let centre = |q: &[f64]| Vec3::new(0.0025, 0.005, base_z + q[0]);
    let (mut deepest, mut rows_seen) = (f64::NEG_INFINITY, 0);
    for step in 0..400 {
        // The rows are detected at the start of the step.
        let start = centre(&state.rigid[0].q);
        let report = stepper.step(&s, &mut state).unwrap();
        assert!(report.contact_converged, "step {step}");
        rows_seen += check_ball_rows(&s, &stepper, 9, &start, step);
        let c = centre(&state.rigid[0].q);
        deepest = deepest.max(penetration(&s, &state.bodies[0].positions, &c));
        assert!(c.z > TOP, "step {step}: the ball sank to {} m", c.z);
    }
    assert!(rows_seen > 0, "the ball never touched the face");
    // At rest on the triangle under it (one interior row; the dent's concave creases may add
    // rows of its neighbours' planes, which carry nothing).
    let rows = stepper.body(0).contact().rigid_rows();
    let interior = |r: &diffsoro::scene::SoftRigidRow| matches!(r.soft, SoftPoint::Face { weights, .. } if weights.iter().all(|&w| w >= -1e-9));
    assert_eq!(
        rows.iter().filter(|r| interior(r)).count(),
        1,
        "at rest on one triangle"
    );
    // (a) Penetration. Over the landing (from 0.2 mm, √(2 g · 0.2 mm) = 63 mm/s) each step's
    // gap is linearised at its start: the triangle turns as the face dents, moving the
    // support point by second order in a step's motion, (h·v)²/r. At rest a converged NCP lets
    // the row sink by h·tol per step and the correction removes a fifth of it per step:
    // h·tol/(1 − K_p) = 2.5e-12 m.
    let bound = (h * (2.0 * 9.81 * 0.0002f64).sqrt()).powi(2) / R;
    assert!(
        deepest < bound,
        "{deepest:e} m into the face (bound {bound:e} m)"
    );
    let c = centre(&state.rigid[0].q);
    let now = penetration(&s, &state.bodies[0].positions, &c);
    let at_rest = h * tolerance / 0.2;
    assert!(
        now.abs() < 10.0 * at_rest,
        "at rest {now:e} m into the face (h·tol/(1 − K_p) = {at_rest:e} m)"
    );
    // The face is dented: the ball rests below its rest height.
    assert!(c.z < TOP + R, "the centre at {} m", c.z);
    // (b) At rest (v⁺ = v = 0) the block's push on the slider's axis balances the weight.
    let weight = assert_slider_ball_at_rest(&state, &stepper);
    // The same from the soft side: λ_N n_z of the ball rows (the body's last blocks), all of
    // it on the interior row.
    let lambda = stepper.body(0).contact().lambda();
    let first = lambda.len() / 3 - rows.len();
    let pushes: Vec<f64> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let l = &lambda[3 * (first + i)..3 * (first + i) + 3];
            (r.frame * Vec3::new(l[0], l[1], l[2])).z
        })
        .collect();
    let carried: f64 = pushes.iter().sum();
    for (r, push) in rows.iter().zip(&pushes) {
        assert!(
            interior(r) || push.abs() < 1e-9 * weight,
            "{push} N on {r:?}"
        );
    }
    assert!(
        (carried - weight).abs() < 1e-6 * weight,
        "the ball row carries {carried} N of {weight} N"
    );
    eprintln!(
        "slider: deepest {deepest:e} m (bound {bound:e}), at rest {now:e} m, v {:e} m/s, \
         carried {} N and {carried} N of {weight} N",
        state.rigid[0].v[0],
        force_on_rigid(&stepper).z
    );
}

/// The ball's kinetic energy (J) from its twist v = [ċ; ω] (solid sphere: I = 2/5 m r²).
fn kinetic(v: &[f64]) -> f64 {
    let m = mass();
    let speed2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    let spin2 = v[3] * v[3] + v[4] * v[4] + v[5] * v[5];
    0.5 * m * speed2 + 0.5 * 0.4 * m * R * R * spin2
}

/// A free steel ball (radius 3 mm, 0.888 g) dropped 0.2 mm onto the face between nodes stays
/// on it for 10 s (2000 steps, every NCP converged, never deeper than the landing's bound):
/// the face's linear triangles dent unevenly under it, so it rolls towards the node
/// (0, 0) and about it in the bowl its dent makes, its kinetic energy never above the
/// potential energy it has lost (docs/rigid.md says why it does not come to rest).
#[test]
fn a_free_ball_dropped_between_nodes_stays_on_the_face() {
    let s = ball_on_block(0.0025, 0.005, 0.0002, 0.0, 0.5, 1e-10, true);
    let h = s.simulation.dt;
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    let z0 = TOP + R + 0.0002;
    let bound = (h * (2.0 * 9.81 * 0.0002f64).sqrt()).powi(2) / R;
    let (mut deepest, mut ball_rows, mut spin) = (f64::NEG_INFINITY, 0, 0.0f64);
    for step in 0..2000 {
        let report = stepper.step(&s, &mut state).unwrap();
        assert!(report.contact_converged, "step {step}");
        let c = centre(&state.rigid[0].q);
        let now = penetration(&s, &state.bodies[0].positions, &c);
        deepest = deepest.max(now);
        assert!(now < bound, "step {step}: {now:e} m into the face");
        let k = kinetic(&state.rigid[0].v);
        let lost = mass() * 9.81 * (z0 - c.z);
        assert!(
            k <= lost,
            "step {step}: kinetic {k:e} J, potential lost {lost:e} J"
        );
        let rows = stepper.body(0).contact().rigid_rows();
        ball_rows += rows.iter().filter(|r| r.key.0 == 9).count();
        spin = spin.max(state.rigid[0].v[3].hypot(state.rigid[0].v[4]));
    }
    assert!(ball_rows > 0);
    eprintln!(
        "free ball between nodes: deepest {deepest:e} m (bound {bound:e}), largest spin {spin} rad/s"
    );
}

/// A free steel ball dropped 0.2 mm onto the face right over the node (0, 0) presses a
/// cone-shaped dent around it and comes to rest on its faces (ball rows; the node under it
/// clear of the ball): at rest the face no deeper in it than 1e-9 m and the block carrying
/// its weight (its force averaged over the last second, so that the ball's remaining
/// micro-motion, m Δv_z / (m g · 1 s), is negligible).
#[test]
fn a_free_ball_over_a_node_comes_to_rest_in_its_dent() {
    let s = ball_on_block(0.0, 0.0, 0.0002, 0.0, 0.5, 1e-10, true);
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    let (steps, last) = (1000, 200);
    let mut carried = 0.0;
    for step in 0..steps {
        let report = stepper.step(&s, &mut state).unwrap();
        assert!(report.contact_converged, "step {step}");
        let c = centre(&state.rigid[0].q);
        assert!(c.z > TOP, "step {step}: the ball sank to {} m", c.z);
        if step >= steps - last {
            carried += force_on_rigid(&stepper).z / last as f64;
        }
    }
    let c = centre(&state.rigid[0].q);
    let now = penetration(&s, &state.bodies[0].positions, &c);
    assert!(now.abs() < 1e-9, "at rest {now:e} m into the face");
    let v = &state.rigid[0].v;
    let speed = v[0].hypot(v[1]).hypot(v[2]);
    assert!(speed < 1e-4, "still moving at {speed} m/s");
    assert!(c.x.hypot(c.y) < 1e-5, "the centre drifted to {c:?}");
    let rows = stepper.body(0).contact().rigid_rows();
    assert!(
        rows.iter().filter(|r| r.key.0 == 9).count() >= 3,
        "{rows:?}"
    );
    // The node under the ball is clear of it: its row (kind 0), if any, carries no force.
    let lambda = stepper.body(0).contact().lambda();
    let own = lambda.len() / 3 - rows.len();
    let node_force = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.key.0 == 0)
        .map(|(i, _)| lambda[3 * (own + i) + 2])
        .fold(0.0, f64::max);
    eprintln!("node rows' normal force: {node_force:e} N");
    assert!(node_force < 1e-9 * mass() * 9.81, "{node_force:e} N");
    let weight = mass() * 9.81;
    assert!(
        (carried - weight).abs() < 1e-6 * weight,
        "the block carries {carried} N of {weight} N on average"
    );
    eprintln!(
        "free ball over a node: {now:e} m into the face, speed {speed:e} m/s, \
         carried {carried} N of {weight} N, rows of kinds {:?}",
        rows.iter().map(|r| r.key.0).collect::<Vec<_>>()
    );
}

/// The ball on its slider let go over the block's rim (the edge x = 20 mm, z = 20 mm between
/// the nodes at y = 0 and 10 mm, where the top face meets the side x = 20 mm at a right
/// angle), its centre 45° out from the rim and 0.2 mm higher: no triangle is under its centre
/// and no node within reach, so only the rim's edge row (`SurfaceTree::ball_edges`: a ball on
/// a convex ridge) holds it. It comes to rest on it, the block carrying its weight (the slider
/// takes the edge's horizontal push); without the ball rows it falls past the rim.
#[test]
fn a_ball_on_a_slider_rests_on_the_blocks_rim() {
    let rim = 0.02;
    let out = R / 2f64.sqrt();
    let (x, z) = (rim + out, TOP + out + 0.0002);
    let s = ball_on_slider_at([x, 0.005, z], 1e-10, true);
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    let mut edge_rows = 0;
    for step in 0..400 {
        let report = stepper.step(&s, &mut state).unwrap();
        assert!(report.contact_converged, "step {step}");
        for r in stepper.body(0).contact().rigid_rows() {
            assert_eq!(r.key.0, 9, "step {step}: {r:?}");
            let SoftPoint::Edge { nodes, .. } = r.soft else {
                panic!("step {step}: a ball row off the rim: {r:?}");
            };
            let rest = s.bodies[0].rest_positions();
            assert!(
                nodes
                    .iter()
                    .all(|&n| rest[n].x > rim - 1e-9 && rest[n].z > TOP - 1e-9)
            );
            edge_rows += 1;
        }
    }
    assert!(edge_rows > 0, "the ball never touched the rim");
    assert_slider_ball_at_rest(&state, &stepper);
    // The row's normal points 45° out from the rim (to its dent), and the push stays within
    // the friction cone (μ = 0.5) about it: the slider takes what is horizontal.
    let rigid = stepper.rigid();
    for (c, l) in rigid.contacts().iter().zip(rigid.lambda().chunks_exact(3)) {
        let RigidRow::Point { frame, .. } = c.row else {
            continue;
        };
        let n = frame.column(2).into_owned();
        assert!(n.x > 0.65 && n.z > 0.65 && n.y.abs() < 1e-3, "normal {n}");
        assert!(
            l[0].hypot(l[1]) <= 0.5 * l[2] * (1.0 + 1e-9),
            "λ {l:?} outside the cone"
        );
    }
    let c = z + state.rigid[0].q[0];
    assert!(c > TOP, "the centre sank to {c} m");

    let s = ball_on_slider_at([x, 0.005, z], 1e-10, false);
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    for _ in 0..40 {
        stepper.step(&s, &mut state).unwrap();
    }
    assert!(
        z + state.rigid[0].q[0] < TOP - R,
        "without the rows it falls past the rim"
    );
}

/// The same, 10 µm from the rim's node at y = 0: the rim's edge row, whose closest point is
/// 1e-3 of the edge from the node, nearly repeats the node's own row, and the NCP still
/// converges at every step; the ball comes to rest, the block carrying its weight.
#[test]
fn a_ball_on_the_rim_beside_a_node_comes_to_rest() {
    let out = R / 2f64.sqrt();
    let s = ball_on_slider_at([0.02 + out, 1e-5, TOP + out + 0.0002], 1e-10, true);
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    let mut both = 0;
    for step in 0..400 {
        let report = stepper.step(&s, &mut state).unwrap();
        assert!(report.contact_converged, "step {step}");
        let rows = stepper.body(0).contact().rigid_rows();
        let edge = rows
            .iter()
            .any(|r| matches!(r.soft, SoftPoint::Edge { .. }));
        let node = rows.iter().any(|r| matches!(r.soft, SoftPoint::Node(_)));
        both += usize::from(edge && node);
    }
    assert!(both > 0, "the edge row and the node's never met");
    assert_slider_ball_at_rest(&state, &stepper);
}

#[test]
fn without_the_ball_rows_the_ball_sinks_through_the_block() {
    let s = ball_on_block(0.0025, 0.005, 0.0002, 0.0, 0.5, 1e-10, false);
    assert!(!s.contact.settings.small_shapes);
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    // Falling freely from 0.2 mm, the ball's bottom reaches the block's bottom (20.2 mm down)
    // after √(2 · 0.0202/9.81) = 64 ms, 13 steps.
    for step in 0..40 {
        stepper.step(&s, &mut state).unwrap();
        let rows = stepper.body(0).contact().rigid_rows();
        assert!(rows.iter().all(|r| r.key.0 < 9), "step {step}");
    }
    let c = centre(&state.rigid[0].q);
    assert!(c.z < TOP - 2.0 * R, "the ball is still at {} m", c.z);
}

/// On a block tilted 0.1 rad (gravity turned about y), friction 1 (rolling needs
/// μ ≥ (2/7) tan θ = 0.029), the ball let go at x = −17.5 mm rolls towards +x along y = 5 mm
/// (5 mm from the node rows, never within reach of a node): once rolling without slipping its
/// support point is at rest, v − ω × r n = 0, so ω_y = v_x / r, and it accelerates at
/// (5/7) g sin θ. Friction at the centre would give no torque: the ball would slide down
/// without turning.
#[test]
fn a_ball_on_a_tilted_block_rolls_without_slipping() {
    let tilt = 0.1;
    let s = ball_on_block(-0.0175, 0.005, 0.0001, tilt, 1.0, 1e-10, true);
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    let (mut checked, mut worst, mut fastest) = (0, 0.0f64, 0.0f64);
    let mut first: Option<(usize, f64)> = None;
    let mut accel = 0.0;
    for step in 0..200 {
        let report = stepper.step(&s, &mut state).unwrap();
        assert!(report.contact_converged, "step {step}");
        let c = centre(&state.rigid[0].q);
        assert!(c.z > TOP - R, "step {step}: the ball sank to {} m", c.z);
        if c.x > 0.012 {
            break;
        }
        let v = &state.rigid[0].v;
        // Past its landing (x > −12.5 mm, 5 mm down the slope), rolling.
        if c.x > -0.0125 {
            assert!(v[0] > 0.01, "step {step}: v_x = {} m/s", v[0]);
            let rolling = v[4] * R;
            assert!(
                (rolling - v[0]).abs() < 0.01 * v[0],
                "step {step}: ω_y r = {rolling} m/s, v_x = {} m/s",
                v[0]
            );
            assert!(v[3].abs() < 0.01 * v[4].abs() && v[5].abs() < 0.01 * v[4].abs());
            worst = worst.max((rolling - v[0]).abs() / v[0]);
            fastest = fastest.max(v[0]);
            let (k0, v0) = *first.get_or_insert((step, v[0]));
            if step > k0 {
                accel = (v[0] - v0) / ((step - k0) as f64 * s.simulation.dt);
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} rolling steps checked");
    // A solid ball rolling down a slope accelerates at (5/7) g sin θ (sliding without friction:
    // g sin θ, 40 % more).
    let rolling = 5.0 / 7.0 * 9.81 * tilt.sin();
    assert!(
        (accel - rolling).abs() < 0.01 * rolling,
        "accelerates at {accel} m/s² (rolling: {rolling} m/s²)"
    );
    eprintln!(
        "rolling: {checked} steps, |ω_y r − v_x|/v_x ≤ {worst:e}, v_x up to {fastest} m/s, \
         mean acceleration {accel} m/s²"
    );
}

/// `scenes/cube_on_block.toml` (a box on the block) and `scenes/gripper_lift.toml` (two soft
/// pads squeezing a box) have no ball: run with the ball rows on (the default) and off
/// (`[contact] small_shapes = false`), every step's soft–rigid rows and state are the same
/// bit for bit, and every NCP converges.
#[test]
fn scenes_without_balls_keep_their_rows_bit_for_bit() {
    for name in ["cube_on_block.toml", "gripper_lift.toml"] {
        scene_support::assert_rows_unchanged_by(name, "small_shapes");
    }
}
