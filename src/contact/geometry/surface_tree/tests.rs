//! Tests of the surface tree's queries on a unit square: a ball's resting triangle, the
//! surface's edge list, and the edges a rigid edge or a flat face crosses.

use super::*;

/// The unit square in z = 0 as two triangles facing +z (edges 0–1, 1–2, 0–2, 2–3, 0–3 in
/// that order), refitted with `margin`.
fn square(margin: f64) -> (SurfaceTree, Vec<Vec3>) {
    let x = vec![
        Vec3::zeros(),
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(1.0, 1.0, 0.0),
        Vec3::new(0.0, 1.0, 0.0),
    ];
    let mut tree = SurfaceTree::new(vec![[0, 1, 2], [0, 2, 3]], &x);
    tree.refit(&x, margin).unwrap();
    (tree, x)
}

#[test]
fn a_ball_rests_on_the_triangle_its_centre_projects_onto() {
    let (tree, x) = square(0.01);
    let mut hits = Vec::new();
    // Over (0.7, 0.2): triangle 0 (below the diagonal 0–2), 0.005 m clear of it.
    tree.ball_triangles(&x, Vec3::new(0.7, 0.2, 0.105), 0.1, 0.01, &mut hits);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].vertices, [0, 1, 2]);
    assert!((hits[0].gap - 0.005).abs() < 1e-15);
    let [a, b, c] = hits[0].weights;
    assert!((a - 0.3).abs() < 1e-15 && (b - 0.5).abs() < 1e-15 && (c - 0.2).abs() < 1e-15);
    assert_eq!(hits[0].frame.column(2).into_owned(), Vec3::z());
    // Beyond the margin, or beyond the square's side: none.
    hits.clear();
    tree.ball_triangles(&x, Vec3::new(0.7, 0.2, 0.115), 0.1, 0.01, &mut hits);
    tree.ball_triangles(&x, Vec3::new(1.05, 0.2, 0.1), 0.1, 0.01, &mut hits);
    assert!(hits.is_empty());
}

#[test]
fn the_surface_edges_are_listed_once_with_their_triangles() {
    let (tree, _) = square(0.0);
    assert_eq!(tree.edge_count(), 5);
    let edges: Vec<SurfaceEdge> = (0..5).map(|k| tree.edge(k)).collect();
    assert_eq!(edges[0].nodes, [0, 1]);
    assert_eq!(edges[2].nodes, [0, 2]);
    assert_eq!(edges[2].triangles, [0, 1]);
    assert_eq!(edges[4].nodes, [0, 3]);
    assert_eq!(edges[4].triangles, [1, 1]);
}

#[test]
fn a_rigid_edge_above_the_square_crosses_three_of_its_edges() {
    let (tree, x) = square(0.02);
    // A box's lower edge (its faces facing down-and-sideways) along x at y = 0.3, 10 mm
    // above the square: it crosses x = 0 (edge 0–3), the diagonal 0–2 at (0.3, 0.3) and
    // x = 1 (edge 1–2), each at 0.3 of the way along it, with Φ = 0.01 and n = +z.
    let r = std::f64::consts::FRAC_1_SQRT_2;
    let down = [Vec3::new(0.0, r, -r), Vec3::new(0.0, -r, -r)];
    let rigid = [Vec3::new(-0.5, 0.3, 0.01), Vec3::new(1.5, 0.3, 0.01)];
    let (mut scratch, mut out) = (Vec::new(), Vec::new());
    tree.crossing_edges(&x, &rigid, &down, 0.02, &mut scratch, &mut out);
    let found: Vec<usize> = out.iter().map(|h| h.edge).collect();
    assert_eq!(found, vec![1, 2, 4]);
    for hit in &out {
        let c = hit.crossing;
        assert!((c.gap - 0.01).abs() < 1e-15 && (c.normal - Vec3::z()).norm() < 1e-15);
        let p = x[hit.nodes[0]] * (1.0 - c.s) + x[hit.nodes[1]] * c.s;
        assert!((p.y - 0.3).abs() < 1e-15, "{p:?}");
        assert!((c.rigid_point - p - 0.01 * Vec3::z()).norm() < 1e-15);
    }
    // Beyond the margin; or the shape's upper edge (its faces facing up): none.
    out.clear();
    tree.crossing_edges(&x, &rigid, &down, 0.005, &mut scratch, &mut out);
    assert!(out.is_empty());
    let up = down.map(|n| Vec3::new(n.x, n.y, -n.z));
    tree.crossing_edges(&x, &rigid, &up, 0.02, &mut scratch, &mut out);
    assert!(out.is_empty());
    // A steep edge through the square (its crossings' normals far from +z): none.
    let steep = [Vec3::new(0.3, 0.25, -0.5), Vec3::new(0.3, 0.35, 0.5)];
    let sideways = [Vec3::new(-r, 0.0, -r), Vec3::new(r, 0.0, -r)];
    tree.crossing_edges(&x, &steep, &sideways, 0.02, &mut scratch, &mut out);
    assert!(out.is_empty());
}

#[test]
fn a_face_lying_flat_on_the_square_crosses_its_edges_face_on() {
    let (tree, x) = square(0.02);
    // A box's lower edge along x at y = 0.3, 10 mm above the square, its faces the
    // bottom (−z, lying flat) and a side (−y): its crossings (normal +z, −n the bottom's
    // normal) are no edge rows but face-on crossings, the same three as above.
    let flat = [-Vec3::z(), -Vec3::y()];
    let rigid = [Vec3::new(-0.5, 0.3, 0.01), Vec3::new(1.5, 0.3, 0.01)];
    let (mut scratch, mut out) = (Vec::new(), Vec::new());
    tree.crossing_edges(&x, &rigid, &flat, 0.02, &mut scratch, &mut out);
    assert!(out.is_empty());
    tree.face_on_crossings(&x, &rigid, &flat, 0.02, &mut scratch, &mut out);
    let found: Vec<usize> = out.iter().map(|h| h.edge).collect();
    assert_eq!(found, vec![1, 2, 4]);
    assert!(out.iter().all(|h| (h.crossing.gap - 0.01).abs() < 1e-15));
    // Tilted by 0.1 rad (beyond RIGID_ARC_SLACK = 0.05 rad): an edge row, not face-on.
    let (c, s) = (0.1f64.cos(), 0.1f64.sin());
    let tilted = [Vec3::new(0.0, s, -c), Vec3::new(0.0, -c, -s)];
    out.clear();
    tree.face_on_crossings(&x, &rigid, &tilted, 0.02, &mut scratch, &mut out);
    assert!(out.is_empty());
    tree.crossing_edges(&x, &rigid, &tilted, 0.02, &mut scratch, &mut out);
    assert_eq!(out.len(), 3);
}
