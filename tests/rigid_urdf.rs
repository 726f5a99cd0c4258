//! URDF loading: the repository's models, the clear errors on bad input, and the
//! `dynamics_report` contract (DESIGN.md §4).

mod rigid_support;

use diffsoro::Error;
use diffsoro::rigid::{
    Base, ChildOrder, Data, DynamicsCase, FrameKind, JointKind, Shape, compute_minverse, crba,
    dynamics_report, load_urdf, load_urdf_ordered, parse_urdf, parse_urdf_ordered,
};
use rigid_support::{Rng, model, random_q, urdf_path};
use std::path::Path;

fn parse(text: &str) -> Result<diffsoro::rigid::Model, Error> {
    parse_urdf(
        text,
        "test.urdf",
        Path::new(env!("CARGO_MANIFEST_DIR")),
        Base::Fixed,
    )
}

fn err_text(text: &str) -> String {
    match parse(text) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

const INERTIAL: &str = r#"<inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>"#;

fn two_links(link_b_extra: &str, joint_extra: &str) -> String {
    format!(
        r#"<robot name="r"><link name="a">{INERTIAL}</link><link name="b">{link_b_extra}</link>
        <joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>{joint_extra}</joint></robot>"#
    )
}

#[test]
fn all_repository_models_load_with_their_dimensions() {
    for (name, base, nq, nv, nj) in [
        ("double_pendulum.urdf", Base::Fixed, 3, 2, 3),
        ("cartpole.urdf", Base::Fixed, 3, 2, 3),
        ("ur5.urdf", Base::Fixed, 6, 6, 7),
        ("quadruped.urdf", Base::FreeFlyer, 19, 18, 14),
        ("humanoid.urdf", Base::FreeFlyer, 39, 38, 34),
        ("humanoid.urdf", Base::Fixed, 32, 32, 33),
    ] {
        let m = model(name, base);
        assert_eq!((m.nq, m.nv, m.njoints()), (nq, nv, nj), "{name}");
        assert!(!m.geometries.is_empty(), "{name} has collision shapes");
        assert!(
            m.geometries
                .iter()
                .all(|g| !matches!(g.shape, Shape::Mesh { .. }))
        );
        // Parents precede children and the velocity coordinates of each subtree are contiguous.
        for i in 1..m.njoints() {
            assert!(m.parents[i] < i);
            let end = m.joints[i].idx_v + m.nv_subtree[i];
            for k in i + 1..m.njoints() {
                let inside = m.is_ancestor(i, k);
                let iv = m.joints[k].idx_v;
                assert_eq!(
                    inside,
                    iv >= m.joints[i].idx_v && iv < end,
                    "{name}: joint {k}"
                );
            }
        }
    }
}

#[test]
fn ur5_has_the_published_kinematics_and_masses() {
    let m = model("ur5.urdf", Base::Fixed);
    let names: Vec<&str> = m.joints[1..].iter().map(|j| j.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "shoulder_pan_joint",
            "shoulder_lift_joint",
            "elbow_joint",
            "wrist_1_joint",
            "wrist_2_joint",
            "wrist_3_joint"
        ]
    );
    // Masses of ur_description (kg); the base link is welded to the world.
    let masses = [3.7, 8.393, 2.275, 1.219, 1.219, 0.1879];
    for (i, mass) in masses.iter().enumerate() {
        assert!((m.inertias[i + 1].mass - mass).abs() < 1e-12);
    }
    // At q = 0 the end effector sits at the home position of the published product-of-exponentials
    // model (Lynch & Park, Modern Robotics, Example 4.5): (a2 + a3, d4 + d6, d1 − d5).
    let mut data = Data::new(&m);
    diffsoro::rigid::forward_kinematics_placements(&m, &mut data, &m.neutral());
    let ee = m.frame_id("ee_link").unwrap();
    let p = diffsoro::rigid::frame_placement(&m, &data, ee).trans;
    let expect = [0.425 + 0.39225, 0.10915 + 0.0823, 0.089159 - 0.09465];
    for k in 0..3 {
        assert!((p[k] - expect[k]).abs() < 1e-9, "ee {p:?}");
    }
}

#[test]
fn joint_order_is_depth_first_with_children_in_file_order() {
    let text = format!(
        r#"<robot name="t">
        <link name="root">{INERTIAL}</link><link name="a">{INERTIAL}</link><link name="a1">{INERTIAL}</link>
        <link name="b">{INERTIAL}</link><link name="b1">{INERTIAL}</link>
        <joint name="to_b" type="revolute"><parent link="root"/><child link="b"/></joint>
        <joint name="to_a1" type="prismatic"><parent link="a"/><child link="a1"/></joint>
        <joint name="to_a" type="continuous"><parent link="root"/><child link="a"/></joint>
        <joint name="to_b1" type="revolute"><parent link="b"/><child link="b1"/></joint>
        </robot>"#
    );
    let m = parse(&text).unwrap();
    let names: Vec<&str> = m.joints[1..].iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["to_b", "to_b1", "to_a", "to_a1"]);
    assert_eq!(m.parents, vec![0, 0, 1, 0, 3]);
    assert!(matches!(
        m.joints[3].kind,
        JointKind::RevoluteUnbounded { .. }
    ));
    assert_eq!(
        m.frames
            .iter()
            .filter(|f| f.kind == FrameKind::Body)
            .count(),
        5
    );
    // Pinocchio's order: a link's child joints sorted by name.
    let m = parse_urdf_ordered(
        &text,
        "t",
        Path::new("."),
        Base::Fixed,
        ChildOrder::JointName,
    )
    .unwrap();
    let names: Vec<&str> = m.joints[1..].iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["to_a", "to_a1", "to_b", "to_b1"]);
    assert_eq!(m.parents, vec![0, 0, 1, 0, 3]);
}

#[test]
fn repository_models_have_the_same_order_in_both_conventions() {
    for (name, base) in [
        ("ur5.urdf", Base::Fixed),
        ("quadruped.urdf", Base::FreeFlyer),
        ("humanoid.urdf", Base::FreeFlyer),
    ] {
        let a = model(name, base);
        let b = load_urdf_ordered(&urdf_path(name), base, ChildOrder::JointName).unwrap();
        assert_eq!(a, b, "{name}");
    }
}

#[test]
fn malformed_xml_is_a_parse_error_with_a_line() {
    let e = err_text("<robot name=\"x\">\n<link name=\"a\">\n</robot>");
    assert!(e.contains("malformed XML") && e.contains("line"), "{e}");
    let e = err_text(
        r#"<robot name="x"><link name="a"/><joint name="j" type="revolute"><parent link="a"/></joint></robot>"#,
    );
    assert!(e.contains("lacks <child>"), "{e}");
    let e = err_text(&two_links("", r#"<origin xyz="0 zero 0"/>"#));
    assert!(e.contains("'zero' is not a finite number"), "{e}");
}

#[test]
fn a_missing_mesh_file_is_named() {
    let e = err_text(&two_links(
        &format!(
            r#"{INERTIAL}<collision><geometry><mesh filename="meshes/nowhere.stl"/></geometry></collision>"#
        ),
        "",
    ));
    assert!(
        e.contains("mesh file 'meshes/nowhere.stl' not found"),
        "{e}"
    );
    // An existing file is accepted (any file; the loader does not read meshes).
    let ok = two_links(
        &format!(
            r#"{INERTIAL}<collision><geometry><mesh filename="Cargo.toml" scale="2 2 2"/></geometry></collision>"#
        ),
        "",
    );
    let m = parse(&ok).unwrap();
    assert!(matches!(m.geometries[0].shape, Shape::Mesh { .. }));
}

#[test]
fn joint_loops_and_links_with_two_parents_are_rejected() {
    let two_parents = format!(
        r#"<robot name="r"><link name="a">{INERTIAL}</link><link name="b">{INERTIAL}</link><link name="c">{INERTIAL}</link>
        <joint name="j1" type="revolute"><parent link="a"/><child link="b"/></joint>
        <joint name="j2" type="revolute"><parent link="c"/><child link="b"/></joint></robot>"#
    );
    let e = err_text(&two_parents);
    assert!(e.contains("link 'b' has two parents"), "{e}");
    let cycle = format!(
        r#"<robot name="r"><link name="a">{INERTIAL}</link><link name="b">{INERTIAL}</link>
        <joint name="j1" type="revolute"><parent link="a"/><child link="b"/></joint>
        <joint name="j2" type="revolute"><parent link="b"/><child link="a"/></joint></robot>"#
    );
    let e = err_text(&cycle);
    assert!(e.contains("loop"), "{e}");
    let detached_cycle = format!(
        r#"<robot name="r"><link name="r0">{INERTIAL}</link><link name="a">{INERTIAL}</link><link name="b">{INERTIAL}</link>
        <joint name="j1" type="revolute"><parent link="a"/><child link="b"/></joint>
        <joint name="j2" type="revolute"><parent link="b"/><child link="a"/></joint></robot>"#
    );
    let e = err_text(&detached_cycle);
    assert!(e.contains("loop"), "{e}");
}

#[test]
fn non_positive_mass_and_non_pd_inertia_are_rejected() {
    let zero_mass = two_links(
        r#"<inertial><mass value="0"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>"#,
        "",
    );
    let e = err_text(&zero_mass);
    assert!(e.contains("link 'b': mass must be positive, got 0"), "{e}");
    let negative = zero_mass.replace(r#"value="0""#, r#"value="-2""#);
    assert!(err_text(&negative).contains("mass must be positive, got -2"));
    let not_pd = two_links(
        r#"<inertial><mass value="1"/><inertia ixx="1" ixy="2" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>"#,
        "",
    );
    let e = err_text(&not_pd);
    assert!(
        e.contains("link 'b': the inertia matrix is not positive definite"),
        "{e}"
    );
    // A joint that moves nothing with mass makes M singular.
    let e = err_text(&two_links("", ""));
    assert!(e.contains("joint 'j'") && e.contains("massless"), "{e}");
}

#[test]
fn a_missing_file_is_an_io_error() {
    let e = load_urdf(Path::new("/nonexistent/robot.urdf"), Base::Fixed).unwrap_err();
    assert!(matches!(e, Error::Io { .. }));
}

fn case_json(q: &[f64], v: &[f64], tau: &[f64], a: &[f64], base: &str) -> DynamicsCase {
    let text = format!(r#"{{"q": {q:?}, "v": {v:?}, "tau": {tau:?}, "a": {a:?}{base}}}"#);
    serde_json::from_str(&text).unwrap()
}

#[test]
fn dynamics_report_follows_the_contract() {
    let path = urdf_path("quadruped.urdf");
    let m = model("quadruped.urdf", Base::FreeFlyer);
    let mut rng = Rng::new(42);
    let q = random_q(&m, &mut rng, 1.0);
    let (v, tau, a) = (rng.vec(18, 1.0), rng.vec(18, 5.0), rng.vec(18, 2.0));
    let case = case_json(&q, &v, &tau, &a, r#", "base": "free_flyer""#);
    assert_eq!(case.base, Base::FreeFlyer);
    let r = dynamics_report(&path, &case).unwrap();
    assert_eq!((r.nq, r.nv), (19, 18));
    assert_eq!(r.rnea.len(), 18);
    let mut data = Data::new(&m);
    let mm = crba(&m, &mut data, &q).clone();
    let minv = compute_minverse(&m, &mut data, &q).clone();
    for (rows, reference) in [(&r.crba, &mm), (&r.aba_dtau, &minv)] {
        assert_eq!(rows.len(), 18);
        for i in 0..18 {
            assert_eq!(rows[i].len(), 18);
            for j in 0..18 {
                assert_eq!(rows[i][j], rows[j][i], "symmetric");
                // serde_json's float parsing may move q by an ulp: compare to round-off.
                assert!((rows[i][j] - reference[(i, j)]).abs() < 1e-12 * reference.amax());
            }
        }
    }
    for mat in [&r.rnea_dq, &r.rnea_dv, &r.aba_dq, &r.aba_dv] {
        assert!(mat.len() == 18 && mat.iter().all(|row| row.len() == 18));
    }
    let json = serde_json::to_value(&r).unwrap();
    for key in [
        "nq", "nv", "rnea", "crba", "aba", "rnea_dq", "rnea_dv", "aba_dq", "aba_dv", "aba_dtau",
    ] {
        assert!(json.get(key).is_some(), "{key}");
    }
    // The default base is fixed: the same lengths are now wrong, and the error says so.
    let fixed = case_json(&q, &v, &tau, &a, "");
    assert_eq!(fixed.base, Base::Fixed);
    let e = dynamics_report(&path, &fixed).unwrap_err().to_string();
    assert!(
        e.contains("case.q") && e.contains("expected nq = 12"),
        "{e}"
    );
}

#[test]
fn dynamics_report_names_the_wrong_field() {
    let path = urdf_path("ur5.urdf");
    let six = [0.1; 6];
    for (field, case) in [
        ("case.v", case_json(&six, &[0.0; 5], &six, &six, "")),
        ("case.tau", case_json(&six, &six, &[0.0; 7], &six, "")),
        ("case.a", case_json(&six, &six, &six, &[], "")),
    ] {
        let e = dynamics_report(&path, &case).unwrap_err().to_string();
        assert!(e.contains(field) && e.contains("expected nv = 6"), "{e}");
    }
    let bad_quat = {
        let mut q = vec![0.0; 19];
        q[6] = 2.0;
        case_json(
            &q,
            &[0.0; 18],
            &[0.0; 18],
            &[0.0; 18],
            r#", "base": "free_flyer""#,
        )
    };
    let e = dynamics_report(&urdf_path("quadruped.urdf"), &bad_quat)
        .unwrap_err()
        .to_string();
    assert!(e.contains("root_joint") && e.contains("norm 2"), "{e}");
    let unknown: Result<DynamicsCase, _> =
        serde_json::from_str(r#"{"q": [], "v": [], "tau": [], "a": [], "base": "floating"}"#);
    assert!(unknown.is_err());
}
