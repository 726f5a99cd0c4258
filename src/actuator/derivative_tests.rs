//! H_a and ∂(H_aᵀλ)/∂x of every actuator kind against central finite differences (1e-6).

use super::*;
use crate::math::{DVec, Vec3, central_difference_jacobian, relative_error};
use crate::mesh::{Mesh, box_mesh};

fn mesh() -> Mesh {
    box_mesh([3, 2, 2], [0.0; 3], [0.06, 0.02, 0.02]).unwrap()
}

/// Rest positions moved by a deterministic pseudo-random displacement (~10% of a cell).
fn deformed(mesh: &Mesh) -> Vec<Vec3> {
    mesh.positions()
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let s = |k: f64| (1.3 * i as f64 + 0.7 * k).sin() * 1e-3;
            p + Vec3::new(s(1.0), s(2.0), s(3.0))
        })
        .collect()
}

fn to_vec3(v: &DVec) -> Vec<Vec3> {
    v.as_slice()
        .chunks_exact(3)
        .map(|c| Vec3::new(c[0], c[1], c[2]))
        .collect()
}

fn flat(x: &[Vec3]) -> DVec {
    DVec::from_iterator(3 * x.len(), x.iter().flat_map(|p| [p.x, p.y, p.z]))
}

/// Checks H against FD of δ and the force derivative against FD of f_a, at `x`.
fn check(a: &Actuator, x: &[Vec3], lambda: f64) {
    let n = x.len();
    let x0 = flat(x);
    let h = 1e-7;
    // H_a vs ∂δ/∂x.
    let fd =
        central_difference_jacobian(|y| DVec::from_element(1, a.kind.value(&to_vec3(y))), &x0, h);
    let mut rows = Vec::new();
    a.kind.jacobian(x, &mut rows);
    let mut dense = vec![0.0; 3 * n];
    for (node, g) in &rows {
        for k in 0..3 {
            dense[3 * node + k] += g[k];
        }
    }
    let e = relative_error(&dense, fd.as_slice(), 1e-300);
    assert!(e < 1e-6, "{}: H vs FD {e:e}", a.name);
    // ∂f_a/∂x vs FD of f_a.
    let force = |y: &DVec| {
        let mut out = vec![Vec3::zeros(); n];
        let mut rows = Vec::new();
        a.add_forces(&to_vec3(y), lambda, &mut rows, &mut out);
        flat(&out)
    };
    let fd = central_difference_jacobian(force, &x0, h);
    let mut analytic = crate::math::DMat::zeros(3 * n, 3 * n);
    for j in 0..3 * n {
        let mut dx = vec![Vec3::zeros(); n];
        dx[j / 3][j % 3] = 1.0;
        let mut out = vec![Vec3::zeros(); n];
        a.add_force_derivative_action(x, lambda, &dx, &mut out);
        analytic.set_column(j, &flat(&out));
    }
    let e = relative_error(analytic.as_slice(), fd.as_slice(), 1e-300);
    assert!(e < 1e-6, "{}: ∂f/∂x vs FD {e:e}", a.name);
}

fn actuator(name: &str, kind: ActuatorKind) -> Actuator {
    Actuator {
        name: name.into(),
        kind,
        drive: Drive::Force(0.0),
        bounds: [f64::NEG_INFINITY, f64::INFINITY],
        max_value_step: f64::INFINITY,
        max_force_step: f64::INFINITY,
        value_bounds: [f64::NEG_INFINITY, f64::INFINITY],
    }
}

/// Three points of a cable through the test mesh (m), embedded.
fn cable_points(m: &Mesh) -> Vec<EmbeddedPoint> {
    [
        [0.055, 0.015, 0.005],
        [0.03, 0.012, 0.006],
        [0.004, 0.005, 0.007],
    ]
    .iter()
    .map(|p| EmbeddedPoint::locate(m, Vec3::from(*p), 1e-9, "p").unwrap())
    .collect()
}

#[test]
fn cable_derivatives_match_finite_differences() {
    let m = mesh();
    let points = cable_points(&m);
    let x = deformed(&m);
    for pull_point in [None, Some(Vec3::new(-0.01, 0.01, 0.005))] {
        let c = Cable {
            points: points.clone(),
            pull_point,
        };
        check(&actuator("cable", ActuatorKind::Cable(c)), &x, 0.7);
    }
}

#[test]
fn cable_derivatives_with_points_outside_the_mesh_match_finite_differences() {
    // Points up to 1.5 mm outside the 60 × 20 × 20 mm box, embedded with extrapolated
    // barycentric weights (some negative) in their nearest tetrahedra.
    let m = mesh();
    let points: Vec<EmbeddedPoint> = [
        [0.0615, 0.015, 0.005],
        [0.03, 0.021, 0.006],
        [0.004, -0.001, 0.0205],
    ]
    .iter()
    .map(|p| {
        let (e, d) = EmbeddedPoint::locate_outside(&m, Vec3::from(*p), 2e-3, "p").unwrap();
        assert!(d > 4e-4 && e.weights.iter().any(|w| *w < 0.0), "{p:?}: {d}");
        e
    })
    .collect();
    let x = deformed(&m);
    for pull_point in [None, Some(Vec3::new(-0.01, 0.01, 0.005))] {
        let c = Cable {
            points: points.clone(),
            pull_point,
        };
        check(&actuator("cable", ActuatorKind::Cable(c)), &x, 0.7);
    }
}

#[test]
fn cavity_derivatives_match_finite_differences() {
    let m = mesh();
    let cavity = Cavity::on_nodes(m.boundary_triangles());
    // The box's boundary, outward: V = the box's volume at rest.
    let v = cavity.value(m.positions());
    assert!((v - 0.06 * 0.02 * 0.02).abs() < 1e-18, "{v}");
    check(
        &actuator("cavity", ActuatorKind::Pneumatic(cavity)),
        &deformed(&m),
        2.0e4,
    );
}

/// The 12 outward triangles of the box with corners `min`, `max` (corner k at bit 0: x,
/// bit 1: y, bit 2: z).
fn box_surface(min: [f64; 3], max: [f64; 3]) -> (Vec<Vec3>, Vec<[usize; 3]>) {
    let corners = (0..8)
        .map(|k| {
            Vec3::new(
                if k & 1 == 0 { min[0] } else { max[0] },
                if k & 2 == 0 { min[1] } else { max[1] },
                if k & 4 == 0 { min[2] } else { max[2] },
            )
        })
        .collect();
    let triangles = vec![
        [0, 4, 6],
        [0, 6, 2],
        [1, 3, 7],
        [1, 7, 5],
        [0, 1, 5],
        [0, 5, 4],
        [2, 6, 7],
        [2, 7, 3],
        [0, 2, 3],
        [0, 3, 1],
        [4, 5, 7],
        [4, 7, 6],
    ];
    (corners, triangles)
}

#[test]
fn embedded_cavity_derivatives_match_finite_differences() {
    // A closed box surface inside the 60 × 20 × 20 mm mesh (one corner 0.5 mm outside it),
    // its vertices embedded in the tetrahedra.
    let m = mesh();
    let (min, max) = ([0.011, 0.004, 0.0035], [0.047, 0.0205, 0.017]);
    let (corners, triangles) = box_surface(min, max);
    let vertices = corners
        .iter()
        .map(|p| EmbeddedPoint::locate(&m, *p, 1e-3, "p").unwrap())
        .collect();
    let cavity = Cavity::embedded(vertices, triangles);
    let v = cavity.value(m.positions());
    let exact = (0..3).map(|a| max[a] - min[a]).product::<f64>();
    assert!(
        (v - exact).abs() < 1e-15 * exact.max(1e-6),
        "{v} vs {exact}"
    );
    check(
        &actuator("cavity", ActuatorKind::Pneumatic(cavity)),
        &deformed(&m),
        2.0e4,
    );
}

#[test]
fn servo_derivatives_match_finite_differences() {
    let m = mesh();
    let nodes: Vec<usize> = (0..m.node_count())
        .filter(|&i| m.positions()[i].x > 0.03)
        .collect();
    let s = Servo::new(
        Vec3::new(0.05, 0.0, -0.01),
        Vec3::new(0.2, 1.0, 0.1),
        &nodes,
        m.positions(),
    )
    .unwrap();
    assert!(s.value(m.positions()).abs() < 1e-15);
    check(
        &actuator("servo", ActuatorKind::Servo(s.clone())),
        &deformed(&m),
        0.3,
    );
    // A rigid rotation by θ about the axis gives δ = θ.
    let theta = 0.4;
    let rot = nalgebra::Rotation3::from_axis_angle(&nalgebra::Unit::new_normalize(s.axis), theta);
    let x: Vec<Vec3> = m
        .positions()
        .iter()
        .map(|p| s.origin + rot * (p - s.origin))
        .collect();
    assert!((s.value(&x) - theta).abs() < 1e-12);
}

#[test]
fn servo_forces_give_the_torque() {
    let m = mesh();
    let nodes: Vec<usize> = (0..m.node_count()).collect();
    let axis = Vec3::new(0.0, 0.3, 1.0).normalize();
    let origin = Vec3::new(0.01, 0.01, 0.0);
    let a = actuator(
        "servo",
        ActuatorKind::Servo(Servo::new(origin, axis, &nodes, m.positions()).unwrap()),
    );
    let x = deformed(&m);
    let mut f = vec![Vec3::zeros(); x.len()];
    a.add_forces(&x, 0.25, &mut Vec::new(), &mut f);
    let torque: f64 = x
        .iter()
        .zip(&f)
        .map(|(p, f)| (p - origin).cross(f).dot(&axis))
        .sum();
    assert!((torque - 0.25).abs() < 1e-12, "{torque}");
}

/// The cable's tangent blocks (what the step puts into A) against its Hessian action, and
/// the third derivative d/dx[(∂²L/∂x²) w]·dx against central differences of that action.
#[test]
fn cable_tangent_blocks_and_third_derivative_match() {
    let m = mesh();
    let points = cable_points(&m);
    let x = deformed(&m);
    let n = x.len();
    let w: Vec<Vec3> = (0..n)
        .map(|i| Vec3::new((0.3 * i as f64).cos(), (0.7 * i as f64).sin(), 0.2))
        .collect();
    for pull_point in [None, Some(Vec3::new(-0.01, 0.01, 0.005))] {
        let c = Cable {
            points: points.clone(),
            pull_point,
        };
        // Blocks, densely summed, vs the Hessian action on unit vectors.
        let mut dense = crate::math::DMat::zeros(3 * n, 3 * n);
        c.hessian_blocks(&x, 1.0, |i, j, b| {
            for p in 0..3 {
                for q in 0..3 {
                    dense[(3 * i + p, 3 * j + q)] += b[(p, q)];
                }
            }
        });
        let mut action = crate::math::DMat::zeros(3 * n, 3 * n);
        for j in 0..3 * n {
            let mut dx = vec![Vec3::zeros(); n];
            dx[j / 3][j % 3] = 1.0;
            let mut out = vec![Vec3::zeros(); n];
            c.hessian_action(&x, &dx, 1.0, &mut out);
            action.set_column(j, &flat(&out));
        }
        let e = relative_error(dense.as_slice(), action.as_slice(), 1e-300);
        assert!(e < 1e-13, "blocks vs action {e:e}");
        // Every block's nodes are in one of the coupling cliques.
        let cliques = c.segment_nodes();
        c.hessian_blocks(&x, 1.0, |i, j, _| {
            assert!(cliques.iter().any(|k| k.contains(&i) && k.contains(&j)));
        });
        // Third derivative vs central differences of the action on w.
        let fd = central_difference_jacobian(
            |y| {
                let mut out = vec![Vec3::zeros(); n];
                c.hessian_action(&to_vec3(y), &w, 1.0, &mut out);
                flat(&out)
            },
            &flat(&x),
            1e-7,
        );
        let mut analytic = crate::math::DMat::zeros(3 * n, 3 * n);
        for j in 0..3 * n {
            let mut dx = vec![Vec3::zeros(); n];
            dx[j / 3][j % 3] = 1.0;
            let mut out = vec![Vec3::zeros(); n];
            c.hessian_derivative_action(&x, &w, &dx, 1.0, &mut out);
            analytic.set_column(j, &flat(&out));
        }
        let e = relative_error(analytic.as_slice(), fd.as_slice(), 1e-300);
        assert!(e < 1e-6, "third derivative vs FD {e:e}");
    }
}
