//! A rigid face narrower than the node spacing lying flat on a soft face (the flat-face
//! rows, `scene::step::contact::flat_face_rows`): a 60 × 6 × 6 mm bar, its bottom face flat, lying across the
//! top face of the 40 × 40 × 20 mm soft block of `cube_on_block.toml` (nodes on a 10 mm
//! grid), along x at y = 5 mm, midway between two rows of nodes. The bottom face spans
//! y ∈ [2, 8] mm, so no node of the block lies under it, and its corners (x = ±30 mm) lie
//! beyond the block's sides: no node or corner row holds it, and its edges, face-on, are no
//! edge rows. Only the crossings of its two long edges with the face's edges can. Every
//! expected number comes from the mesh, the bar's mass or a balance of forces, never from an
//! earlier run. The step derivatives with these rows active: `tests/diff_flat_face.rs`.

use crate::scene_support;

use diffsoro::math::Vec3;
use diffsoro::scene::{Scene, SoftPoint, Stepper};
use scene_support::{SOFT_BLOCK, scene};

/// The bar's middle line is at y = 5 mm, between the node rows y = 0 and y = 10 mm.
const Y_BAR: f64 = 0.005;
/// Half the bar's width and height (m).
const HALF: f64 = 0.003;
/// The block's top face (m).
const TOP: f64 = 0.02;

/// The bar of `urdf/flat_bar.urdf` on its vertical slider over the block (clamped at its bottom
/// face), its bottom face `clearance` (m) above the top face, the NCP solved to `tolerance`,
/// the flat-face rows on or off (`[contact] flat_faces`).
fn bar_on_slider(clearance: f64, tolerance: f64, flat_faces: bool) -> Scene {
    scene(&format!(
        r#"
[simulation]
dt = 0.005
gravity = [0.0, 0.0, -9.81]

[contact]
friction = 0.5
tolerance = {tolerance:e}
max_iterations = 100000
flat_faces = {flat_faces}

{SOFT_BLOCK}fixed_box = [[-1.0, -1.0, -1.0], [1.0, 1.0, 0.001]]

[[robot]]
name = "bar"
urdf = "../urdf/flat_bar.urdf"
base = "fixed"
position = [0.0, {Y_BAR}, {z}]
"#,
        z = TOP + HALF + clearance,
    ))
}

/// How far (m) the face rises above the bar's bottom face over the strip it covers (positive:
/// the bar has sunk into the face), the bottom face's two long edges being `long_edges` (m,
/// world). The face is piecewise linear and no node lies under the bar, so over each triangle
/// the height above the flat bottom is largest at a vertex of the strip clipped by the
/// triangle: where the long edges pass over the face's edges (seen from above, along z). The
/// largest over those crossings, from the nodes' positions.
fn penetration(x: &[Vec3], edges: &[[usize; 2]], long_edges: &[[Vec3; 2]; 2]) -> f64 {
    let mut deepest = f64::NEG_INFINITY;
    for [a0, a1] in long_edges {
        let f = a1 - a0;
        for &[i, j] in edges {
            let (p0, e) = (x[i], x[j] - x[i]);
            // p0 + u e = a0 + t f in x and y.
            let det = e.x * (-f.y) - e.y * (-f.x);
            if det == 0.0 {
                continue;
            }
            let d = a0 - p0;
            let u = (d.x * (-f.y) - d.y * (-f.x)) / det;
            let t = (e.x * d.y - e.y * d.x) / det;
            if u > 0.0 && u < 1.0 && t > 0.0 && t < 1.0 {
                deepest = deepest.max(p0.z + u * e.z - (a0.z + t * f.z));
            }
        }
    }
    deepest
}

/// The long edges of a flat bar's bottom face at height `z_face` (m), along x at y = 2 and
/// 8 mm.
fn flat_long_edges(z_face: f64) -> [[Vec3; 2]; 2] {
    [Y_BAR - HALF, Y_BAR + HALF].map(|y| [Vec3::new(-0.03, y, z_face), Vec3::new(0.03, y, z_face)])
}

#[test]
fn a_bar_narrower_than_the_node_spacing_rests_flat_on_the_face() {
    let tolerance = 1e-10;
    let s = bar_on_slider(0.0002, tolerance, true);
    let h = s.simulation.dt;
    let edges = scene_support::top_edges(&s, TOP - 1e-9);
    // The face's edges that the strip's sides cross: the five across the cells' row (x = −20,
    // −10, 0, 10, 20 mm; the outer two are the rims between the top and the sides) and the
    // four diagonals of its cells, each crossed by both sides (y = 2 and 8 mm).
    let rest = s.bodies[0].rest_positions();
    let crossed: Vec<[usize; 2]> = edges
        .iter()
        .copied()
        .filter(|&[a, b]| (rest[a].y - Y_BAR) * (rest[b].y - Y_BAR) < 0.0)
        .collect();
    assert_eq!(crossed.len(), 9);
    // No node of the face lies under the bottom face (|y − 5 mm| ≤ 3 mm).
    assert!(
        rest.iter()
            .all(|p| p.z < TOP - 1e-9 || (p.y - Y_BAR).abs() > HALF + 1e-3)
    );
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    let base_z = TOP + HALF + 0.0002;
    let mut deepest = f64::NEG_INFINITY;
    let mut rows_seen = 0;
    for step in 0..400 {
        let report = stepper.step(&s, &mut state).unwrap();
        assert!(report.contact_converged, "step {step}");
        let z_face = base_z + state.rigid[0].q[0] - HALF;
        deepest = deepest.max(penetration(
            &state.bodies[0].positions,
            &edges,
            &flat_long_edges(z_face),
        ));
        // Every row against the bar is a flat-face row, between the two nodes of a crossed edge.
        for r in stepper.body(0).contact().rigid_rows() {
            assert_eq!(r.key.0, 7, "step {step}: a row of kind {}", r.key.0);
            let SoftPoint::Edge { nodes, weights } = r.soft else {
                panic!("a flat-face row's soft point is an edge");
            };
            assert!(crossed.contains(&nodes), "step {step}: edge {nodes:?}");
            assert!((weights[0] + weights[1] - 1.0).abs() < 1e-15);
            rows_seen += 1;
        }
        assert!(
            z_face > 0.0,
            "step {step}: the bar sank through, its face at {z_face} m"
        );
    }
    assert!(rows_seen > 0, "the bar never touched the face");
    let rows = stepper.body(0).contact().rigid_rows();
    assert_eq!(
        rows.len(),
        2 * crossed.len(),
        "at rest both long edges cross every crossed edge"
    );
    // (a) Penetration. At rest the correction's target removes a fraction 1 − K_p = 0.2 of a
    // penetration per step and a converged NCP lets a row sink by at most h·tol per step: a
    // penetration of h·tol/(1 − K_p) = 2.5e-12 m. Over the landing the bar falls from 0.2 mm
    // (√(2 g · 0.2 mm) = 63 mm/s) and each step's gap is linearised at its start: the soft
    // edges turn as the face dents, changing the distance of the lines by second order in a
    // step's motion, (h·v)²/ℓ for ℓ = 10 mm, the length of the face's edges.
    let bound = (h * (2.0 * 9.81 * 0.0002f64).sqrt()).powi(2) / 0.01;
    assert!(
        deepest < bound,
        "the face passed the surface by {deepest:e} m (bound {bound:e} m)"
    );
    let z_face = base_z + state.rigid[0].q[0] - HALF;
    let now = penetration(&state.bodies[0].positions, &edges, &flat_long_edges(z_face));
    let at_rest = h * tolerance / 0.2;
    assert!(
        now < 10.0 * at_rest,
        "at rest the face is {now:e} m into the surface (h·tol/(1 − K_p) = {at_rest:e} m)"
    );
    // The face is dented: the bar rests below the face's rest height.
    assert!(z_face < TOP, "the face at {z_face} m");
    // (b) At rest (v⁺ = v = 0 in M v⁺ = M v_free + h Jᵀλ) the block's push on the slider's
    // axis balances the bar's weight.
    let v = state.rigid[0].v[0];
    assert!(v.abs() < 1e-8, "the bar still moves at {v} m/s");
    let weight = 0.05 * 9.81;
    let f = scene_support::force_on_rigid(&stepper);
    assert!(
        (f.z - weight).abs() < 1e-6 * weight,
        "the block carries {} N of the bar's {weight} N",
        f.z
    );
    // The same from the soft side: Σ λ_N n_z over the flat-face rows.
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
        (carried - weight).abs() < 1e-6 * weight,
        "the flat-face rows carry {carried} N of {weight} N"
    );
}

#[test]
fn without_the_flat_face_rows_the_bar_sinks_through_the_block() {
    let s = bar_on_slider(0.0002, 1e-10, false);
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    let base_z = TOP + HALF + 0.0002;
    // Falling freely from 0.2 mm, the face reaches the block's bottom (z = 0, 20.2 mm down)
    // after √(2 · 0.0202/9.81) = 64 ms, 13 steps: 40 steps leave room for a brief touch.
    for step in 0..40 {
        stepper.step(&s, &mut state).unwrap();
        // Its sides pass the nodes of the block's middle layer (kind 0, beside the bar, no
        // force), but no row is a flat face's.
        let rows = stepper.body(0).contact().rigid_rows();
        assert!(rows.iter().all(|r| r.key.0 < 7), "step {step}");
    }
    let z_face = base_z + state.rigid[0].q[0] - HALF;
    assert!(z_face < 0.0, "the face is still at {z_face} m");
}

/// `scenes/cube_on_block.toml` (a 25 mm cube's face on the block's 10 mm grid of nodes) and
/// `scenes/gripper_lift.toml` (two soft pads squeezing a box): their box faces lying flat on
/// soft faces are wider than the node spacing, so nodes under them (or their corners over the
/// soft triangles) hold every region the faces touch, and the flat-face rows add nothing.
/// Run with the rows on (the default) and off (`[contact] flat_faces = false`, the rows
/// before they existed), every step's soft–rigid rows and state are the same bit for bit, and
/// every NCP converges.
#[test]
fn wide_faces_resting_on_nodes_keep_their_rows_bit_for_bit() {
    for name in ["cube_on_block.toml", "gripper_lift.toml"] {
        scene_support::assert_rows_unchanged_by(name, "flat_faces");
    }
}

/// A free steel bar (7850 kg/m³, 60 × 6 × 6 mm: 16.956 g) let go flat across the block, its
/// bottom face 0.2 mm above the top face: it comes to rest on the flat-face rows of its two
/// long edges (all 400 NCPs converged), its face no deeper in the surface than the slider's
/// bound, and the block carries its weight.
#[test]
fn a_free_bar_let_go_flat_on_the_face_comes_to_rest_on_it() {
    let tolerance = 1e-10;
    let s = scene(&format!(
        r#"
[simulation]
dt = 0.005
gravity = [0.0, 0.0, -9.81]

[contact]
friction = 0.5
tolerance = {tolerance:e}
max_iterations = 100000

{SOFT_BLOCK}fixed_box = [[-1.0, -1.0, -1.0], [1.0, 1.0, 0.001]]

[[rigid_body]]
name = "bar"
shape = "box"
half_extents = [0.03, 0.003, 0.003]
density = 7850.0
position = [0.0, {Y_BAR}, {z}]
"#,
        z = TOP + HALF + 0.0002
    ));
    let h = s.simulation.dt;
    let edges = scene_support::top_edges(&s, TOP - 1e-9);
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    // The bottom face's long edges at the bar's pose (q = [x; quaternion (i, j, k, w)]).
    let long_edges = |q: &[f64]| {
        let p = Vec3::new(q[0], q[1], q[2]);
        let r = nalgebra::UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(
            q[6], q[3], q[4], q[5],
        ));
        [-HALF, HALF].map(|y| [-0.03, 0.03].map(|x| p + r * Vec3::new(x, y, -HALF)))
    };
    let mut deepest = f64::NEG_INFINITY;
    for step in 0..400 {
        let report = stepper.step(&s, &mut state).unwrap();
        assert!(report.contact_converged, "step {step}");
        assert!(
            stepper
                .body(0)
                .contact()
                .rigid_rows()
                .iter()
                .all(|r| r.key.0 == 7),
            "step {step}"
        );
        let now = penetration(
            &state.bodies[0].positions,
            &edges,
            &long_edges(&state.rigid[0].q),
        );
        deepest = deepest.max(now);
    }
    // The landing's bound of the slider test (the same 0.2 mm fall) and, at rest, h·tol/(1 − K_p).
    let bound = (h * (2.0 * 9.81 * 0.0002f64).sqrt()).powi(2) / 0.01;
    assert!(
        deepest < bound,
        "{deepest:e} m into the face (bound {bound:e} m)"
    );
    let now = penetration(
        &state.bodies[0].positions,
        &edges,
        &long_edges(&state.rigid[0].q),
    );
    let at_rest = h * tolerance / 0.2;
    assert!(now < 10.0 * at_rest, "at rest {now:e} m into the face");
    assert_eq!(stepper.body(0).contact().rigid_rows().len(), 18);
    let v = &state.rigid[0].v;
    assert!(v.iter().all(|x| x.abs() < 1e-6), "still moving: {v:?}");
    let weight = 7850.0 * 0.06 * 0.006 * 0.006 * 9.81;
    let f = scene_support::force_on_rigid(&stepper);
    assert!(
        (f.z - weight).abs() < 1e-6 * weight,
        "the block carries {} N of {weight} N",
        f.z
    );
    assert!(f.x.hypot(f.y) < 1e-6 * weight, "sideways {f:?}");
}
