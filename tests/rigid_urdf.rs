//! URDF loading: the repository's models, the clear errors on bad input, and the
//! `dynamics_report` contract (docs/outputs.md).

use crate::rigid_support;

use diffsoro::Error;
use diffsoro::math::{Mat3, Vec3};
use diffsoro::rigid::{
    Base, ChildOrder, Data, DynamicsCase, FrameKind, JointKind, MeshFormat, Shape,
    compute_minverse, crba, dynamics_report, load_urdf, load_urdf_ordered, parse_urdf,
    parse_urdf_ordered,
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
fn collision_elements_form_the_collision_model() {
    // Every shape, with its link and origin; a missing mesh file is kept by name (robot-data
    // packages ship meshes apart), an existing one resolved; <visual> is ignored.
    let text = two_links(
        &format!(
            r#"{INERTIAL}
            <visual><geometry><mesh filename="package://pkg/meshes/b.dae"/></geometry></visual>
            <collision><origin xyz="0 0 0.5"/><geometry><box size="0.1 0.2 0.3"/></geometry></collision>
            <collision><geometry><sphere radius="0.1"/></geometry></collision>
            <collision><geometry><cylinder radius="0.1" length="0.4"/></geometry></collision>
            <collision><geometry><capsule radius="0.05" length="0.3"/></geometry></collision>
            <collision><geometry><mesh filename="package://pkg/meshes/nowhere.STL"/></geometry></collision>
            <collision><geometry><mesh filename="Cargo.toml.obj" scale="2 2 2"/></geometry></collision>
            <collision><geometry><mesh filename="Cargo.toml"/></geometry></collision>"#
        ),
        "",
    );
    // The last mesh has no STL/OBJ extension: the element is named.
    let e = err_text(&text);
    assert!(
        e.contains("link 'b' <mesh>: mesh 'Cargo.toml': only STL (.stl) and OBJ (.obj)"),
        "{e}"
    );
    let text = text.replace(
        r#"<collision><geometry><mesh filename="Cargo.toml"/></geometry></collision>"#,
        "",
    );
    let m = parse(&text).unwrap();
    assert_eq!(m.geometries.len(), 6);
    assert!(
        m.geometries
            .iter()
            .all(|g| g.link == "b" && g.parent_joint == 1)
    );
    assert_eq!(m.geometries[0].origin.trans, Vec3::new(0.0, 0.0, 0.5));
    assert_eq!(m.geometries[0].name, "b");
    assert_eq!(m.geometries[1].name, "b_1");
    assert_eq!(
        m.geometries[3].shape,
        Shape::Capsule {
            radius: 0.05,
            length: 0.3
        }
    );
    match &m.geometries[4].shape {
        Shape::Mesh {
            uri, path, format, ..
        } => {
            assert_eq!(uri, "package://pkg/meshes/nowhere.STL");
            assert!(path.is_none());
            assert_eq!(*format, MeshFormat::Stl);
        }
        s => panic!("{s:?}"),
    }
    // A negative scale factor mirrors the mesh, as robot files do for left and right parts.
    let mirrored = text.replace(r#"scale="2 2 2""#, r#"scale="1 -1 1""#);
    assert!(matches!(
        &parse(&mirrored).unwrap().geometries[5].shape,
        Shape::Mesh { scale, .. } if *scale == Vec3::new(1.0, -1.0, 1.0)
    ));
    assert!(matches!(
        &m.geometries[5].shape,
        Shape::Mesh { path: None, format: MeshFormat::Obj, scale, .. } if *scale == Vec3::new(2.0, 2.0, 2.0)
    ));
    // An existing file is resolved, as a path or a package:// URI (the loader does not read it).
    let dir = std::env::temp_dir().join(format!("diffsoro-urdf-mesh-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("pkg/meshes")).unwrap();
    std::fs::write(dir.join("pkg/meshes/m.stl"), "solid m\nendsolid m\n").unwrap();
    for uri in ["pkg/meshes/m.stl", "package://pkg/meshes/m.stl"] {
        let ok = two_links(
            &format!(
                r#"{INERTIAL}<collision><geometry><mesh filename="{uri}"/></geometry></collision>"#
            ),
            "",
        );
        let m = parse_urdf(&ok, "test.urdf", &dir, Base::Fixed).unwrap();
        match &m.geometries[0].shape {
            Shape::Mesh { path: Some(p), .. } => assert_eq!(p, &dir.join("pkg/meshes/m.stl")),
            s => panic!("{uri}: {s:?}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    for (bad, msg) in [
        (
            r#"<collision><geometry><sphere radius="-1"/></geometry></collision>"#,
            "link 'b' <sphere>: 'radius' must be positive, got -1",
        ),
        (
            r#"<collision><geometry><capsule radius="0.1"/></geometry></collision>"#,
            "link 'b' <capsule>: lacks the attribute 'length'",
        ),
        (
            r#"<collision><geometry><cone radius="0.1"/></geometry></collision>"#,
            "link 'b' <cone>: unknown geometry <cone>",
        ),
        (
            r#"<collision><origin xyz="0 0"/><geometry><sphere radius="1"/></geometry></collision>"#,
            "link 'b' <origin>: attribute 'xyz' needs 3 numbers",
        ),
        (
            r#"<collision></collision>"#,
            "link 'b' <collision>: lacks <geometry>",
        ),
        (
            r#"<collision><geometry><mesh filename="m.obj" scale="1 0 1"/></geometry></collision>"#,
            "link 'b' <mesh>: mesh 'm.obj': a scale factor is zero",
        ),
    ] {
        let e = err_text(&two_links(&format!("{INERTIAL}{bad}"), ""));
        assert!(e.contains(msg) && e.contains("line"), "{e}");
    }
}

#[test]
fn limits_and_dynamics_are_stored_per_joint() {
    let m = parse(&two_links(
        INERTIAL,
        r#"<limit lower="-1" upper="2" effort="30" velocity="4"/><dynamics damping="0.5" friction="0.2"/>"#,
    ))
    .unwrap();
    assert_eq!(
        (
            m.limits.lower[0],
            m.limits.upper[0],
            m.limits.effort[0],
            m.limits.velocity[0]
        ),
        (-1.0, 2.0, 30.0, 4.0)
    );
    assert_eq!((m.damping[0], m.friction[0]), (0.5, 0.2));
    // Defaults: no limit (±∞), no damping or friction.
    let m = parse(&two_links(INERTIAL, "")).unwrap();
    assert_eq!(m.limits.lower[0], f64::NEG_INFINITY);
    assert_eq!(m.limits.effort[0], f64::INFINITY);
    assert_eq!((m.damping[0], m.friction[0]), (0.0, 0.0));
    for (bad, msg) in [
        (
            r#"<dynamics damping="-0.1"/>"#,
            "joint 'j' <dynamics>: 'damping' must be non-negative, got -0.1",
        ),
        (
            r#"<limit lower="1" upper="0"/>"#,
            "joint 'j' <limit>: lower limit 1 > upper limit 0",
        ),
        (
            r#"<limit effort="-3"/>"#,
            "joint 'j' <limit>: 'effort' must be non-negative, got -3",
        ),
        (
            r#"<limit velocity="nan"/>"#,
            "joint 'j' <limit>: attribute 'velocity': 'nan' is not a finite number",
        ),
    ] {
        let e = err_text(&two_links(INERTIAL, bad));
        assert!(e.contains(msg), "{e}");
    }
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

/// A free-flyer robot: a root `base` link (`base_inertial`), a trunk welded to it and a leg on
/// a revolute joint whose link `leg` has `leg_inertial`, plus a frame-only tip `tip_extra`.
fn dummy_root(base_inertial: &str, leg_inertial: &str, tip_extra: &str) -> String {
    format!(
        r#"<robot name="r">
        <link name="base">{base_inertial}</link>
        <link name="trunk"><inertial><origin xyz="0.1 0 0"/><mass value="5"/><inertia ixx="0.1" ixy="0.01" ixz="0" iyy="0.2" iyz="0" izz="0.3"/></inertial></link>
        <link name="leg">{leg_inertial}</link>
        <link name="tip">{tip_extra}</link>
        <joint name="floating_base" type="fixed"><parent link="base"/><child link="trunk"/></joint>
        <joint name="hip" type="revolute"><parent link="trunk"/><child link="leg"/><origin xyz="0.2 0 0"/><axis xyz="0 1 0"/></joint>
        <joint name="tip_fixed" type="fixed"><parent link="leg"/><child link="tip"/><origin xyz="0 0 -0.2"/></joint>
        </robot>"#
    )
}

fn parse_ff(text: &str) -> Result<diffsoro::rigid::Model, Error> {
    parse_urdf(text, "test.urdf", Path::new("."), Base::FreeFlyer)
}

const LEG: &str = r#"<inertial><origin xyz="0 0 -0.1"/><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.001"/></inertial>"#;
const ZERO: &str = r#"<inertial><mass value="0"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial>"#;
const GO1_BASE: &str = r#"<inertial><mass value="1e-6"/><inertia ixx="1e-6" ixy="1e-6" ixz="1e-6" iyy="1e-6" iyz="1e-6" izz="1e-6"/></inertial>"#;

fn mass_matrix_is_spd(m: &diffsoro::rigid::Model) -> bool {
    let mut data = Data::new(m);
    let mut rng = Rng::new(7);
    let q = random_q(m, &mut rng, 1.0);
    crba(m, &mut data, &q).clone().cholesky().is_some()
}

#[test]
fn frame_only_links_add_nothing() {
    // Reference: no base inertial, no tip inertial.
    let reference = parse_ff(&dummy_root("", LEG, "")).unwrap();
    // A link of mass 0 and zero inertia (UR5's ee_link, tool0, base_footprint) and a link
    // without <inertial> are frames only: the model is the same, bit for bit, up to the frames.
    for (base, tip) in [(ZERO, ""), ("", ZERO), (ZERO, ZERO)] {
        let m = parse_ff(&dummy_root(base, LEG, tip)).unwrap();
        assert_eq!(m.inertias, reference.inertias);
        assert_eq!(m.frames, reference.frames);
        assert!(m.frame_id("tip").is_some());
    }
    assert!(mass_matrix_is_spd(&reference));
}

#[test]
fn a_massless_link_between_two_moving_joints_is_accepted() {
    // Two revolute joints meeting at a virtual link without inertia (a two-axis hip): the
    // first joint moves the second joint's body, so M stays regular.
    let text = format!(
        r#"<robot name="r"><link name="a">{INERTIAL}</link><link name="mid"/><link name="leg">{LEG}</link>
        <joint name="yaw" type="revolute"><parent link="a"/><child link="mid"/><axis xyz="0 0 1"/></joint>
        <joint name="pitch" type="revolute"><parent link="mid"/><child link="leg"/><axis xyz="0 1 0"/></joint></robot>"#
    );
    let m = parse(&text).unwrap();
    assert_eq!(m.nv, 2);
    assert!(m.inertias[1].is_zero());
    assert!(mass_matrix_is_spd(&m));
}

#[test]
fn a_moving_body_whose_principal_moments_break_the_triangle_inequality_is_refused() {
    // A 5 g link 100 times heavier about z than a disc of its size, and no heavier about x
    // and y: principal moments 5.0375e-7, 5.0375e-7, 1e-4 kg·m² (a diagonal inertia), and
    // 5.0375e-7 + 5.0375e-7 < 1e-4.
    let horn = r#"<inertial><mass value="0.005"/><inertia ixx="5.0375e-7" ixy="0" ixz="0" iyy="5.0375e-7" iyz="0" izz="1e-4"/></inertial>"#;
    let e = err_text(&two_links(horn, ""));
    assert!(
        e.starts_with("test.urdf: link 'b': the body of joint 'j': "),
        "{e}"
    );
    assert!(e.contains("triangle inequality I₁ + I₂ ≥ I₃"), "{e}");
    assert!(e.contains("[5.0375e-7, 5.0375e-7, 1.0000e-4] kg·m²"), "{e}");
    assert!(!e.contains('\n'), "{e}");
    // Links welded to it are named with it; a massless frame adds nothing.
    let welded = format!(
        r#"<robot name="r"><link name="a">{INERTIAL}</link><link name="b">{horn}</link><link name="tip"/>
        <joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint>
        <joint name="weld" type="fixed"><parent link="b"/><child link="tip"/></joint></robot>"#
    );
    let e = err_text(&welded);
    assert!(
        e.starts_with(
            "test.urdf: link 'b': the body of joint 'j' (with the links welded to it: tip): "
        ),
        "{e}"
    );
    // A thin disc, ixx = iyy = izz/2, lies on the boundary and is accepted.
    let disc = r#"<inertial><mass value="0.005"/><inertia ixx="5e-5" ixy="0" ixz="0" iyy="5e-5" iyz="0" izz="1e-4"/></inertial>"#;
    parse(&two_links(disc, "")).unwrap();
    // The root body of a fixed base does not move and is not checked.
    let root_only = format!(
        r#"<robot name="r"><link name="a">{horn}</link><link name="b">{INERTIAL}</link>
        <joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint></robot>"#
    );
    parse(&root_only).unwrap();
}

#[test]
fn every_committed_urdf_loads() {
    // The triangle-inequality check must leave every robot shipped in urdf/ loadable: on a
    // fixed base, and the Go1 (whose dummy `base` link alone breaks the rule) on a free-flyer,
    // its `base` welded to its trunk.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("urdf");
    let mut files = Vec::new();
    for d in [dir.clone(), dir.join("real")] {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "urdf") {
                files.push(path);
            }
        }
    }
    assert!(files.len() >= 17, "{files:?}");
    for path in &files {
        load_urdf(path, Base::Fixed).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    load_urdf(&dir.join("real/go1.urdf"), Base::FreeFlyer).unwrap();
}

#[test]
fn a_tiny_dummy_root_link_with_a_semi_definite_inertia_is_accepted() {
    // Go1's `base`: mass 1e-6 and all six inertia entries 1e-6 (eigenvalues 3e-6, 0, 0).
    let m = parse_ff(&dummy_root(GO1_BASE, LEG, "")).unwrap();
    let reference = parse_ff(&dummy_root("", LEG, "")).unwrap();
    assert_eq!(m.nv, 7);
    assert!((m.inertias[1].mass - 5.000001).abs() < 1e-15);
    // It adds its tiny mass and nothing else: M moves by about 1e-6 relative.
    let (mut d1, mut d2) = (Data::new(&m), Data::new(&reference));
    let q = m.neutral();
    let (a, b) = (
        crba(&m, &mut d1, &q).clone(),
        crba(&reference, &mut d2, &q).clone(),
    );
    assert!((&a - &b).norm() < 1e-5 * b.norm() && (&a - &b).norm() > 0.0);
    assert!(mass_matrix_is_spd(&m));
}

#[test]
fn a_massless_link_keeps_its_rotational_inertia_as_in_pinocchio() {
    // Pinocchio adds a mass-0 body's rotational inertia (mass floored at ε where it divides).
    let spin = r#"<inertial><origin xyz="0 0 -0.2"/><mass value="0"/><inertia ixx="0.002" ixy="0" ixz="0" iyy="0.003" iyz="0" izz="0.004"/></inertial>"#;
    let m = parse_ff(&dummy_root("", LEG, spin)).unwrap();
    let reference = parse_ff(&dummy_root("", LEG, "")).unwrap();
    let (i, r) = (m.inertias[2], reference.inertias[2]);
    assert_eq!((i.mass, i.com), (r.mass, r.com));
    let d = i.inertia_com - r.inertia_com;
    assert!((d - Mat3::from_diagonal(&Vec3::new(0.002, 0.003, 0.004))).norm() < 1e-15);
    // Alone behind its joint, a massless body with rotational inertia still makes M regular
    // about the joint axis.
    let m = parse_ff(&dummy_root("", spin, "")).unwrap();
    assert!(mass_matrix_is_spd(&m));
}

#[test]
fn negative_mass_nan_and_indefinite_inertia_are_refused_naming_the_link() {
    let with = |inertial: &str| err_text(&two_links(inertial, ""));
    let e = with(
        r#"<inertial><mass value="-2"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>"#,
    );
    assert!(
        e.contains("link 'b' <mass>: mass must be non-negative, got -2") && e.contains("line"),
        "{e}"
    );
    let e = with(
        r#"<inertial><mass value="NaN"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>"#,
    );
    assert!(
        e.contains("link 'b' <mass>: attribute 'value': 'NaN' is not a finite number"),
        "{e}"
    );
    let e = with(
        r#"<inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="nan" iyy="1" iyz="0" izz="1"/></inertial>"#,
    );
    assert!(e.contains("link 'b' <inertia>: attribute 'ixz'"), "{e}");
    let e = with(
        r#"<inertial><mass value="1"/><inertia ixx="1" ixy="2" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>"#,
    );
    assert!(
        e.contains("link 'b' <inertia>: the inertia matrix is not positive semi-definite"),
        "{e}"
    );
    let e = err_text(&two_links(INERTIAL, r#"<origin xyz="0 0 inf"/>"#));
    assert!(
        e.contains("joint 'j' <origin>: attribute 'xyz': 'inf'"),
        "{e}"
    );
    // Exactly one line.
    assert!(!e.contains('\n'));
}

#[test]
fn a_moving_joint_without_inertia_behind_it_is_refused_naming_it() {
    // No <inertial>, mass 0 with zero inertia, or only massless frame links behind the joint.
    for leg in ["", ZERO] {
        for tip in ["", ZERO] {
            let e = parse_ff(&dummy_root(GO1_BASE, leg, tip))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("joint 'hip'") && e.contains("massless") && !e.contains('\n'),
                "{e}"
            );
        }
    }
    let e = err_text(&two_links("", ""));
    assert!(e.contains("joint 'j'") && e.contains("massless"), "{e}");
    // A point mass on the axis of a ball joint: mass, yet no inertia about the joint.
    let ball = format!(
        r#"<robot name="r"><link name="a">{INERTIAL}</link>
        <link name="b"><inertial><mass value="1"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>
        <joint name="ball" type="spherical"><parent link="a"/><child link="b"/></joint></robot>"#
    );
    let e = err_text(&ball);
    assert!(e.contains("joint 'ball'") && e.contains("singular"), "{e}");
    // The dummy root alone on a free-flyer (its inertia has rank 1) is singular too.
    let e = parse_ff(&format!(
        r#"<robot name="r"><link name="base">{GO1_BASE}</link></robot>"#
    ))
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("joint 'root_joint'") && e.contains("singular"),
        "{e}"
    );
}

#[test]
fn a_zero_axis_is_refused_naming_the_joint() {
    let text = two_links(INERTIAL, "").replace(r#"<axis xyz="0 0 1"/>"#, r#"<axis xyz="0 0 0"/>"#);
    let e = err_text(&text);
    assert!(e.contains("joint 'j' <axis>: zero axis"), "{e}");
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
