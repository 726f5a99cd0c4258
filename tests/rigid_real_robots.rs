//! The real robot files of the example-robot-data package (urdf/real/: UR5 on a fixed base, Go1
//! on a free-flyer, copied verbatim by `urdf/real_robots.py`) load, and their dynamics equal
//! Pinocchio 4.1.0's (`urdf/real/pinocchio_reference.json`, written offline by the same
//! script) to 1e-10 relative, norm-wise per quantity: RNEA, CRBA, ABA and the analytical
//! derivatives of RNEA and ABA at 3 random states each. The joint order of the reference is
//! Pinocchio's (a link's child joints sorted by name); `dynamics_report`, which `diffsoro
//! dynamics` prints, keeps the file order, and is compared through the joint permutation.

use diffsoro::rigid::{
    Base, ChildOrder, Data, DynamicsCase, MeshFormat, Model, Shape, aba, compute_aba_derivatives,
    compute_rnea_derivatives, crba, dynamics_report, load_urdf, load_urdf_ordered, rnea,
};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

const TOL: f64 = 1e-10;

fn real(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("urdf/real")
        .join(name)
}

fn fixture(robot: &str) -> Value {
    let text = std::fs::read_to_string(real("pinocchio_reference.json")).unwrap();
    let all: Value = serde_json::from_str(&text).unwrap();
    all["robots"][robot].clone()
}

fn vector(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn matrix(v: &Value) -> Vec<Vec<f64>> {
    v.as_array().unwrap().iter().map(vector).collect()
}

fn base_of(r: &Value) -> Base {
    match r["base"].as_str().unwrap() {
        "free_flyer" => Base::FreeFlyer,
        _ => Base::Fixed,
    }
}

/// ‖a − b‖ / ‖b‖ (Frobenius for matrices), with the reference norm floored at 1e-12.
fn rel(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let d: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let n: f64 = b.iter().map(|y| y * y).sum();
    d.sqrt() / n.sqrt().max(1e-12)
}

fn flat(m: &[Vec<f64>]) -> Vec<f64> {
    m.iter().flatten().copied().collect()
}

fn dmat_rows(m: &diffsoro::math::DMat) -> Vec<Vec<f64>> {
    (0..m.nrows())
        .map(|r| m.row(r).iter().copied().collect())
        .collect()
}

/// Index maps from the reference's (Pinocchio's) coordinates to `model`'s, by joint name.
fn permutation(model: &Model, r: &Value) -> (Vec<usize>, Vec<usize>) {
    let (mut pq, mut pv) = (vec![usize::MAX; model.nq], vec![usize::MAX; model.nv]);
    for j in r["joints"].as_array().unwrap() {
        let name = j["name"].as_str().unwrap();
        let id = model
            .joint_id(name)
            .unwrap_or_else(|| panic!("joint {name} missing"));
        let jm = &model.joints[id];
        let (iq, iv) = (
            j["idx_q"].as_u64().unwrap() as usize,
            j["idx_v"].as_u64().unwrap() as usize,
        );
        assert_eq!(j["nq"].as_u64().unwrap() as usize, jm.kind.nq(), "{name}");
        assert_eq!(j["nv"].as_u64().unwrap() as usize, jm.kind.nv(), "{name}");
        for k in 0..jm.kind.nq() {
            pq[iq + k] = jm.idx_q + k;
        }
        for k in 0..jm.kind.nv() {
            pv[iv + k] = jm.idx_v + k;
        }
    }
    assert!(pq.iter().chain(&pv).all(|&i| i != usize::MAX));
    (pq, pv)
}

fn to_model_order(x: &[f64], p: &[usize]) -> Vec<f64> {
    let mut out = vec![0.0; x.len()];
    for (i, &pi) in p.iter().enumerate() {
        out[pi] = x[i];
    }
    out
}

fn vec_from_model_order(x: &[f64], p: &[usize]) -> Vec<f64> {
    p.iter().map(|&pi| x[pi]).collect()
}

fn mat_from_model_order(m: &[Vec<f64>], p: &[usize]) -> Vec<Vec<f64>> {
    p.iter()
        .map(|&pi| p.iter().map(|&pj| m[pi][pj]).collect())
        .collect()
}

const MATRICES: [&str; 6] = ["crba", "rnea_dq", "rnea_dv", "aba_dq", "aba_dv", "aba_dtau"];

/// The model in Pinocchio's joint order equals the reference in structure and dynamics.
fn matches_pinocchio_in_its_order(robot: &str) {
    let r = fixture(robot);
    let m = load_urdf_ordered(&real(robot), base_of(&r), ChildOrder::JointName)
        .unwrap_or_else(|e| panic!("{robot}: {e}"));
    assert_eq!(
        (m.nq, m.nv),
        (
            r["nq"].as_u64().unwrap() as usize,
            r["nv"].as_u64().unwrap() as usize
        )
    );
    let names: Vec<&str> = m.joints[1..].iter().map(|j| j.name.as_str()).collect();
    let expect: Vec<&str> = r["joints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, expect, "{robot}: joint order");
    // Body masses (fixed-joint children merged, frame-only links adding nothing).
    for (k, j) in r["joints"].as_array().unwrap().iter().enumerate() {
        let mass = j["mass"].as_f64().unwrap();
        assert!(
            (m.inertias[k + 1].mass - mass).abs() <= 1e-12 * mass,
            "{robot}: mass of {}",
            names[k]
        );
    }
    // Limits, damping and friction of the 1-dof joints (Pinocchio writes ±f64::MAX for "none").
    let (lower, upper) = (vector(&r["lower"]), vector(&r["upper"]));
    let (effort, velocity) = (vector(&r["effort"]), vector(&r["velocity"]));
    for j in &m.joints[1..] {
        if j.kind.nv() != 1 {
            continue;
        }
        let (iq, iv) = (j.idx_q, j.idx_v);
        assert_eq!(m.limits.lower[iq], lower[iq], "{}", j.name);
        assert_eq!(m.limits.upper[iq], upper[iq], "{}", j.name);
        assert_eq!(m.limits.effort[iv], effort[iv], "{}", j.name);
        assert_eq!(m.limits.velocity[iv], velocity[iv], "{}", j.name);
    }
    assert_eq!(m.damping, vector(&r["damping"]), "{robot}: damping");
    assert_eq!(m.friction, vector(&r["friction"]), "{robot}: friction");

    let mut data = Data::new(&m);
    for (c, case) in r["cases"].as_array().unwrap().iter().enumerate() {
        let (q, v, a, tau) = (
            vector(&case["q"]),
            vector(&case["v"]),
            vector(&case["a"]),
            vector(&case["tau"]),
        );
        let mut worst: Vec<(&str, f64)> = Vec::new();
        worst.push((
            "rnea",
            rel(
                rnea(&m, &mut data, &q, &v, &a).as_slice(),
                &vector(&case["rnea"]),
            ),
        ));
        worst.push((
            "aba",
            rel(
                aba(&m, &mut data, &q, &v, &tau).as_slice(),
                &vector(&case["aba"]),
            ),
        ));
        let mm = dmat_rows(crba(&m, &mut data, &q));
        compute_rnea_derivatives(&m, &mut data, &q, &v, &a);
        let (rdq, rdv) = (dmat_rows(&data.dtau_dq), dmat_rows(&data.dtau_dv));
        compute_aba_derivatives(&m, &mut data, &q, &v, &tau);
        let mine = [
            mm,
            rdq,
            rdv,
            dmat_rows(&data.ddq_dq),
            dmat_rows(&data.ddq_dv),
            dmat_rows(&data.minv),
        ];
        for (key, x) in MATRICES.iter().zip(&mine) {
            worst.push((key, rel(&flat(x), &flat(&matrix(&case[*key])))));
        }
        for (key, e) in worst {
            assert!(
                e < TOL,
                "{robot} case {c}: {key} differs from Pinocchio by {e:e} (relative)"
            );
        }
    }
}

/// `dynamics_report` (file order, what `diffsoro dynamics` prints) equals the reference
/// through the joint permutation.
fn report_matches_pinocchio(robot: &str) {
    let r = fixture(robot);
    let path = real(robot);
    let m = load_urdf(&path, base_of(&r)).unwrap();
    let (pq, pv) = permutation(&m, &r);
    for (c, case) in r["cases"].as_array().unwrap().iter().enumerate() {
        let dc = DynamicsCase {
            q: to_model_order(&vector(&case["q"]), &pq),
            v: to_model_order(&vector(&case["v"]), &pv),
            tau: to_model_order(&vector(&case["tau"]), &pv),
            a: to_model_order(&vector(&case["a"]), &pv),
            base: base_of(&r),
        };
        let rep = dynamics_report(&path, &dc).unwrap();
        let vecs = [("rnea", &rep.rnea), ("aba", &rep.aba)];
        for (key, x) in vecs {
            let e = rel(&vec_from_model_order(x, &pv), &vector(&case[key]));
            assert!(e < TOL, "{robot} case {c}: report {key} differs by {e:e}");
        }
        let mats = [
            &rep.crba,
            &rep.rnea_dq,
            &rep.rnea_dv,
            &rep.aba_dq,
            &rep.aba_dv,
            &rep.aba_dtau,
        ];
        for (key, x) in MATRICES.iter().zip(mats) {
            let e = rel(
                &flat(&mat_from_model_order(x, &pv)),
                &flat(&matrix(&case[*key])),
            );
            assert!(e < TOL, "{robot} case {c}: report {key} differs by {e:e}");
        }
    }
}

#[test]
fn ur5_equals_pinocchio() {
    matches_pinocchio_in_its_order("ur5_robot.urdf");
    report_matches_pinocchio("ur5_robot.urdf");
}

#[test]
fn go1_equals_pinocchio() {
    matches_pinocchio_in_its_order("go1.urdf");
    report_matches_pinocchio("go1.urdf");
}

#[test]
fn the_collision_models_hold_every_collision_element() {
    // UR5: 7 STL meshes (kept by name: the mesh files are not in the repository) and the
    // ee_link box; base_link's mesh is on the world, ee_link's box on wrist_3_joint.
    let m = load_urdf(&real("ur5_robot.urdf"), Base::Fixed).unwrap();
    assert_eq!(m.geometries.len(), 8);
    let meshes: Vec<_> = m
        .geometries
        .iter()
        .filter_map(|g| match &g.shape {
            Shape::Mesh {
                uri,
                path,
                format,
                scale,
            } => Some((uri, path, format, scale, g)),
            _ => None,
        })
        .collect();
    assert_eq!(meshes.len(), 7);
    for (uri, path, format, scale, _) in &meshes {
        assert!(uri.starts_with(
            "package://example-robot-data/robots/ur_description/meshes/ur5/collision/"
        ));
        assert!(
            path.is_none()
                && **format == MeshFormat::Stl
                && **scale == diffsoro::math::Vec3::new(1.0, 1.0, 1.0)
        );
    }
    let base = m.geometries.iter().find(|g| g.link == "base_link").unwrap();
    assert_eq!(base.parent_joint, 0);
    let ee = m.geometries.iter().find(|g| g.link == "ee_link").unwrap();
    assert!(matches!(ee.shape, Shape::Box { .. }));
    assert_eq!(m.joints[ee.parent_joint].name, "wrist_3_joint");
    // Go1: 18 boxes, 16 cylinders, 4 spheres (the feet), all primitives.
    let m = load_urdf(&real("go1.urdf"), Base::FreeFlyer).unwrap();
    let count = |f: fn(&Shape) -> bool| m.geometries.iter().filter(|g| f(&g.shape)).count();
    assert_eq!(count(|s| matches!(s, Shape::Box { .. })), 18);
    assert_eq!(count(|s| matches!(s, Shape::Cylinder { .. })), 16);
    assert_eq!(count(|s| matches!(s, Shape::Sphere { .. })), 4);
    assert_eq!(m.geometries.len(), 38);
    let foot = m.geometries.iter().find(|g| g.link == "FR_foot").unwrap();
    assert_eq!(m.joints[foot.parent_joint].name, "FR_calf_joint");
    assert_eq!(foot.shape, Shape::Sphere { radius: 0.02 });
}

#[test]
fn diffsoro_dynamics_accepts_the_real_go1() {
    let r = fixture("go1.urdf");
    let path = real("go1.urdf");
    let m = load_urdf(&path, Base::FreeFlyer).unwrap();
    let (pq, pv) = permutation(&m, &r);
    let case = &r["cases"][0];
    let json = serde_json::json!({
        "q": to_model_order(&vector(&case["q"]), &pq),
        "v": to_model_order(&vector(&case["v"]), &pv),
        "tau": to_model_order(&vector(&case["tau"]), &pv),
        "a": to_model_order(&vector(&case["a"]), &pv),
        "base": "free_flyer",
    });
    let dir = std::env::temp_dir().join(format!("diffsoro-real-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let case_path = dir.join("go1_case.json");
    std::fs::write(&case_path, json.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_diffsoro"))
        .arg("dynamics")
        .arg(&path)
        .arg("--case")
        .arg(&case_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["nq"].as_u64(), v["nv"].as_u64()), (Some(19), Some(18)));
    let e = rel(
        &vec_from_model_order(&vector(&v["rnea"]), &pv),
        &vector(&case["rnea"]),
    );
    assert!(e < TOL, "CLI rnea differs from Pinocchio by {e:e}");
    let _ = std::fs::remove_dir_all(&dir);
}
