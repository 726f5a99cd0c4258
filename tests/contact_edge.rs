//! A rigid edge across a soft face between its nodes (the edge–edge rows of mixed rigid/soft
//! scenes, `contact::geometry::edge_edge`): a 60 × 6 × 6 mm bar turned 45° about its long axis, so
//! that one edge points down, lying across the top face of the 40 × 40 × 20 mm soft block of
//! `cube_on_block.toml` (nodes on a 10 mm grid), along x at y = 5 mm, midway between two rows of
//! nodes. The bar's cross-section reaches 3√2 mm to either side of its edge, so no node of the face
//! lies under it, and its corners lie beyond the block's sides: only the edge rows (the bar's lower
//! edge crossing the face's surface edges) can hold it. Every expected number comes from the mesh,
//! the bar's mass or a balance of forces, never from an earlier run. Then the step derivatives with
//! edge rows active (a free bar landing on the block's rim, a free block landing on a fixed bar's
//! edge) against central differences of the forward step.

use crate::diff_support;
use crate::scene_support;

use diffsoro::contact::ContactMode;
use diffsoro::math::Vec3;
use diffsoro::scene::{Scene, SoftPoint, State, Stepper};
use scene_support::{SOFT_BLOCK, scene};

/// The bar's edge is at y = 5 mm, between the node rows y = 0 and y = 10 mm.
const Y_BAR: f64 = 0.005;
/// Half the diagonal of the bar's 6 mm square section (m): its edge's depth below its centre.
const HALF_DIAGONAL: f64 = 0.003 * std::f64::consts::SQRT_2;
/// The block's top face (m).
const TOP: f64 = 0.02;

/// The bar of `urdf/edge_bar.urdf` on its vertical slider over the block (clamped at its bottom
/// face), its edge `clearance` (m) above the top face, the NCP solved to `tolerance`.
fn bar_on_slider(clearance: f64, tolerance: f64) -> Scene {
    scene(&format!(
        r#"
[simulation]
dt = 0.005
gravity = [0.0, 0.0, -9.81]

[contact]
friction = 0.5
tolerance = {tolerance:e}
max_iterations = 100000

{SOFT_BLOCK}fixed_box = [[-1.0, -1.0, -1.0], [1.0, 1.0, 0.001]]

[[robot]]
name = "bar"
urdf = "../urdf/edge_bar.urdf"
base = "fixed"
position = [0.0, {Y_BAR}, {z}]
"#,
        z = TOP + HALF_DIAGONAL + clearance,
    ))
}

/// How far (m) the face rises above the bar's edge, a horizontal line along x at y = `y` and
/// height `z_edge`, where the face's edges cross it (positive: the edge has sunk into the face),
/// from the nodes' positions; the largest over the edges that cross y.
fn penetration(x: &[Vec3], edges: &[[usize; 2]], y: f64, z_edge: f64) -> f64 {
    edges
        .iter()
        .filter_map(|&[a, b]| {
            let (p, q) = (x[a], x[b]);
            let u = (y - p.y) / (q.y - p.y);
            (u > 0.0 && u < 1.0).then(|| p.z + u * (q.z - p.z) - z_edge)
        })
        .fold(f64::NEG_INFINITY, f64::max)
}

#[test]
fn the_bar_rests_on_its_edge_across_the_face_between_the_nodes() {
    let tolerance = 1e-10;
    let s = bar_on_slider(0.0002, tolerance);
    let h = s.simulation.dt;
    let edges = scene_support::top_edges(&s, TOP - 1e-9);
    // The face's edges that the bar's line crosses (y = 5 mm strictly between their ends):
    // the five across the cells' row (x = −20, −10, 0, 10, 20 mm; the outer two are the rims
    // between the top and the sides) and the four diagonals of its cells.
    let crossed: Vec<[usize; 2]> = {
        let rest = s.bodies[0].rest_positions();
        edges
            .iter()
            .copied()
            .filter(|&[a, b]| (rest[a].y - Y_BAR) * (rest[b].y - Y_BAR) < 0.0)
            .collect()
    };
    assert_eq!(crossed.len(), 9);
    // No node of the face lies within 3√2 mm of the bar's plane x–z (y = 5 mm).
    let rest = s.bodies[0].rest_positions();
    assert!(
        rest.iter()
            .all(|p| p.z < TOP - 1e-9 || (p.y - Y_BAR).abs() > HALF_DIAGONAL + 5e-4)
    );
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    let base_z = TOP + HALF_DIAGONAL + 0.0002;
    let mut deepest = f64::NEG_INFINITY;
    let mut rows_seen = 0;
    for step in 0..400 {
        let report = stepper.step(&s, &mut state).unwrap();
        assert!(report.contact_converged, "step {step}");
        let z_edge = base_z + state.rigid[0].q[0] - HALF_DIAGONAL;
        deepest = deepest.max(penetration(
            &state.bodies[0].positions,
            &edges,
            Y_BAR,
            z_edge,
        ));
        // Every row against the bar is an edge row, between the two nodes of a crossed edge.
        for r in stepper.body(0).contact().rigid_rows() {
            assert_eq!(r.key.0, 5, "step {step}: a row of kind {}", r.key.0);
            let SoftPoint::Edge { nodes, weights } = r.soft else {
                panic!("an edge row's soft point is an edge");
            };
            assert!(crossed.contains(&nodes), "step {step}: edge {nodes:?}");
            assert!((weights[0] + weights[1] - 1.0).abs() < 1e-15);
            rows_seen += 1;
        }
        // Held: the edge never passes the face by more than the bound below (and never sinks
        // through the block).
        assert!(
            z_edge > 0.0,
            "step {step}: the bar sank through, edge at {z_edge} m"
        );
    }
    assert!(rows_seen > 0, "the bar never touched the face");
    let rows = stepper.body(0).contact().rigid_rows();
    assert_eq!(
        rows.len(),
        crossed.len(),
        "at rest the bar crosses every crossed edge"
    );
    // (a) Penetration. At rest the correction's target removes a fraction 1 − K_p = 0.2 of a
    // penetration per step and a converged NCP lets a row sink by at most h·tol per step: a
    // penetration of h·tol/(1 − K_p) = 2.5e-12 m. Over the landing the bar falls from 0.2 mm
    // (√(2 g · 0.2 mm) = 63 mm/s) and each step's gap is linearised at its start: the soft
    // edges turn as the face dents, changing the distance of the lines by second order in a
    // step's motion, (h·v)²/ℓ = (0.005 · 0.063)²/0.01 m = 1e-5 m for ℓ = 10 mm, the length of
    // the face's edges. The edge never passes the face by more than that.
    let bound = (h * (2.0 * 9.81 * 0.0002f64).sqrt()).powi(2) / 0.01;
    assert!(
        deepest < bound,
        "the edge passed the face by {deepest:e} m (bound {bound:e} m)"
    );
    let z_edge = base_z + state.rigid[0].q[0] - HALF_DIAGONAL;
    let now = penetration(&state.bodies[0].positions, &edges, Y_BAR, z_edge);
    let at_rest = h * tolerance / 0.2;
    assert!(
        now < 10.0 * at_rest,
        "at rest the edge is {now:e} m into the face (h·tol/(1 − K_p) = {at_rest:e} m)"
    );
    // The face is dented: the bar rests below the face's rest height.
    assert!(z_edge < TOP, "the edge at {z_edge} m");
    // (b) At rest (v⁺ = v = 0 in M v⁺ = M v_free + h Jᵀλ) the block's push on the slider's
    // axis balances the bar's weight.
    let v = state.rigid[0].v[0];
    assert!(v.abs() < 1e-8, "the bar still moves at {v} m/s");
    let m_bar = 0.05;
    let g = 9.81;
    let f = scene_support::force_on_rigid(&stepper);
    assert!(
        (f.z - m_bar * g).abs() < 1e-6 * m_bar * g,
        "the block carries {} N of the bar's {} N",
        f.z,
        m_bar * g
    );
    // The same from the soft side: Σ λ_N n_z over the edge rows.
    let lambda = stepper.body(0).contact().lambda();
    let own = lambda.len() / 3 - rows.len();
    let carried: f64 = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let l = &lambda[3 * (own + i)..3 * (own + i) + 3];
            (r.frame * Vec3::new(l[0], l[1], l[2])).z
        })
        .sum();
    assert!(
        (carried - m_bar * g).abs() < 1e-6 * m_bar * g,
        "the edge rows carry {carried} N of {} N",
        m_bar * g
    );
}

/// A free steel bar (7850 kg/m³, Coulomb coefficient `friction` with the block) turned 45° about its long axis, 0.1 rad about z and then
/// 0.1 rad about y (its edge descending towards +x), falling at 0.1 m/s onto the block, the
/// point of its edge over the block's rim x = 20 mm (the rim edge between the top and the side
/// x = 20 mm) 0.7 mm above the face: it lands on the rim's crossing, its edge crossing the
/// rim between the rim's nodes.
fn falling_bar(friction: f64) -> Scene {
    let turn = nalgebra::UnitQuaternion::from_axis_angle(&Vec3::y_axis(), 0.1)
        * nalgebra::UnitQuaternion::from_axis_angle(&Vec3::z_axis(), 0.1)
        * nalgebra::UnitQuaternion::from_axis_angle(&Vec3::x_axis(), std::f64::consts::FRAC_PI_4);
    let r = turn.scaled_axis();
    // The lower edge: its middle and its direction, relative to the centre.
    let middle = turn * Vec3::new(0.0, -0.003, -0.003);
    let along = turn * Vec3::x();
    let (cx, cy) = (0.0013, 0.0047);
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
position = [{cx}, {cy}, {z}]
rotation = [{rx}, {ry}, {rz}]
velocity = [0.0, 0.0, -0.1]
"#,
        rx = r.x,
        ry = r.y,
        rz = r.z,
    ))
}

/// The state one step before the landing (`scene_support::before_landing`), with that step's
/// rows all edge rows of kind `kind` (5: a free body's edge, 6: a fixed body's).
fn before_landing(s: &Scene, kind: u8) -> State {
    let (state, stepper) = scene_support::before_landing(s, 40);
    let rows = stepper.body(0).contact().rigid_rows();
    assert!(!rows.is_empty() && rows.iter().all(|r| r.key.0 == kind));
    state
}

#[test]
fn the_step_derivatives_of_a_bar_sliding_onto_the_rim_match_finite_differences() {
    let s = falling_bar(0.5);
    let start = before_landing(&s, 5);
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
fn the_step_derivatives_of_a_bar_sticking_on_the_rim_match_finite_differences() {
    let s = falling_bar(10.0);
    let start = before_landing(&s, 5);
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

/// The block, free, falling from rest onto a fixed bar turned edge-up (45° about x, 0.1 rad
/// about z, then −0.1 rad about y: its upper edge rising towards +x), the point of the bar's
/// edge under the block's bottom rim x = 20 mm 0.7 mm below the block: the block lands with
/// its rim on the bar's edge (a fixed body's edge row, no rigid coordinates).
fn block_on_fixed_bar() -> Scene {
    let turn = nalgebra::UnitQuaternion::from_axis_angle(&Vec3::y_axis(), -0.1)
        * nalgebra::UnitQuaternion::from_axis_angle(&Vec3::z_axis(), 0.1)
        * nalgebra::UnitQuaternion::from_axis_angle(&Vec3::x_axis(), std::f64::consts::FRAC_PI_4);
    let r = turn.scaled_axis();
    // The upper edge: its middle and its direction, relative to the centre.
    let middle = turn * Vec3::new(0.0, 0.003, 0.003);
    let along = turn * Vec3::x();
    let (cx, cy) = (0.0013, 0.0047);
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
position = [{cx}, {cy}, {z}]
rotation = [{rx}, {ry}, {rz}]
"#,
        rx = r.x,
        ry = r.y,
        rz = r.z,
    ))
}

#[test]
fn the_step_derivatives_of_a_block_landing_on_a_fixed_edge_match_finite_differences() {
    let s = block_on_fixed_bar();
    let start = before_landing(&s, 6);
    diff_support::check_soft_rigid_step(&s, &start, &["young_modulus:block"], "on a fixed edge");
}
