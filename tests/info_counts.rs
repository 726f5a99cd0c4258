//! `diffsoro info` on every committed mesh and every real soft-robot mesh: its counts equal
//! counts obtained independently, by `meshes/reference_counts.py` (meshio 5.3.5 + numpy, no
//! project code: nodes = all points, surface triangles = tetrahedron faces that appear once,
//! volume = Σ|det|/6, group counts = elements per physical group), and for the real meshes
//! also by the node and tetrahedron counts of the published scenes (docs/robots.md) and the GiD files' own headers.

use std::path::Path;
use std::process::Command;

use crate::real_meshes;
use real_meshes::real_meshes;

use serde_json::Value;

struct Expected {
    path: &'static str,
    nodes: u64,
    tetrahedra: u64,
    surface_triangles: Option<u64>,
    /// (volume, relative tolerance: the digits the reference was given with)
    volume: Option<(f64, f64)>,
    groups: &'static [(&'static str, u64)],
}

const COMMITTED: &[Expected] = &[
    // Beams: volume 0.1 × 0.01 × 0.01 m³ by hand.
    Expected {
        path: "meshes/beam_1.msh",
        nodes: 190,
        tetrahedra: 433,
        surface_triangles: Some(372),
        volume: Some((1e-5, 1e-9)),
        groups: &[("body", 433), ("clamp", 14), ("tip", 14)],
    },
    Expected {
        path: "meshes/beam_2.msh",
        nodes: 1078,
        tetrahedra: 3565,
        surface_triangles: Some(1762),
        volume: Some((1e-5, 1e-9)),
        groups: &[("body", 3565), ("clamp", 44), ("tip", 44)],
    },
    Expected {
        path: "meshes/beam_3.msh",
        nodes: 4234,
        tetrahedra: 17754,
        surface_triangles: Some(5146),
        volume: Some((1e-5, 1e-9)),
        groups: &[("body", 17754), ("clamp", 144), ("tip", 144)],
    },
    Expected {
        path: "meshes/trunk.msh",
        nodes: 704,
        tetrahedra: 2002,
        surface_triangles: Some(1210),
        volume: Some((3.863932564e-05, 1e-9)),
        groups: &[("base", 49), ("body", 2002)],
    },
    Expected {
        path: "meshes/finger.msh",
        nodes: 165,
        tetrahedra: 384,
        surface_triangles: Some(326),
        // By hand too: profile area 1,229.4 mm² (its polygon less the two notches) × 15 mm.
        volume: Some((1.8441e-05, 1e-9)),
        groups: &[("body", 384), ("clamp", 8)],
    },
    Expected {
        path: "meshes/servo_finger.msh",
        nodes: 1195,
        tetrahedra: 3434,
        surface_triangles: Some(2318),
        volume: Some((2.584e-05, 1e-4)),
        groups: &[("body", 3434), ("fixed", 26), ("horn", 26)],
    },
    Expected {
        path: "meshes/pneumatic.msh",
        nodes: 1100,
        tetrahedra: 3404,
        surface_triangles: Some(2168),
        // By hand too: 65,000 mm³ (profile 3,250 mm² × 20 mm) − 6 slits × 825 − cavity 8,887.5.
        volume: Some((5.11625e-05, 1e-9)),
        groups: &[("body", 3404), ("cavity", 730), ("clamp", 48)],
    },
    // The cube fixture (unit cube) in the MSH variants and VTK/VTU encodings.
    Expected {
        path: "tests/data/cube_v22_ascii.msh",
        nodes: 81,
        tetrahedra: 184,
        surface_triangles: Some(156),
        volume: Some((1.0, 1e-12)),
        groups: &[("body", 184), ("bottom", 26), ("corner", 1)],
    },
    Expected {
        path: "tests/data/cube_v41_binary.msh",
        nodes: 81,
        tetrahedra: 184,
        surface_triangles: Some(156),
        volume: Some((1.0, 1e-12)),
        groups: &[("body", 184), ("bottom", 26), ("corner", 1)],
    },
    Expected {
        path: "tests/data/cube_binary.vtk",
        nodes: 81,
        tetrahedra: 184,
        surface_triangles: Some(156),
        volume: Some((1.0, 1e-12)),
        groups: &[],
    },
    Expected {
        path: "tests/data/cube_base64.vtu",
        nodes: 81,
        tetrahedra: 184,
        surface_triangles: Some(156),
        volume: Some((1.0, 1e-12)),
        groups: &[],
    },
];

const REAL: &[Expected] = &[
    Expected {
        path: "servo-finger/finger.msh",
        nodes: 243,
        tetrahedra: 560,
        surface_triangles: Some(484),
        volume: Some((1.857478441e-05, 1e-9)),
        groups: &[],
    },
    Expected {
        path: "diamond/diamond.vtk",
        nodes: 1628,
        tetrahedra: 4147,
        surface_triangles: Some(3268),
        volume: Some((392356.6672, 1e-9)),
        groups: &[],
    },
    Expected {
        path: "finger/finger.vtk",
        nodes: 158,
        tetrahedra: 389,
        surface_triangles: Some(306),
        volume: Some((18508.66115, 1e-9)),
        groups: &[],
    },
    Expected {
        path: "pneunet/pneunetCut.vtk",
        nodes: 2316,
        tetrahedra: 9560,
        surface_triangles: Some(2968),
        volume: Some((51162.5, 1e-9)),
        groups: &[],
    },
    Expected {
        path: "pneunet/pneunetCutCoarse.vtk",
        nodes: 376,
        tetrahedra: 1195,
        surface_triangles: Some(742),
        volume: Some((51162.5, 1e-9)),
        groups: &[],
    },
    Expected {
        path: "trunk/trunk.vtk",
        nodes: 709,
        tetrahedra: 1972,
        surface_triangles: Some(1322),
        volume: Some((38899.99212, 1e-9)),
        groups: &[],
    },
    Expected {
        path: "bunny/Hollow_Stanford_Bunny.vtu",
        nodes: 1911,
        tetrahedra: 5897,
        surface_triangles: Some(3806),
        volume: Some((152.4533915, 1e-9)),
        groups: &[],
    },
    // GiD: counts from the meshes' own headers (the published meshes' README).
    Expected {
        path: "tripod/tripod_low.gidmsh",
        nodes: 235,
        tetrahedra: 579,
        surface_triangles: None,
        volume: None,
        groups: &[],
    },
    Expected {
        path: "tripod/tripod_mid.gidmsh",
        nodes: 781,
        tetrahedra: 2684,
        surface_triangles: None,
        volume: None,
        groups: &[],
    },
];

fn info(path: &Path) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_diffsoro"))
        .arg("info")
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "info {} failed: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn check(path: &Path, e: &Expected) {
    let v = info(path);
    let what = path.display();
    assert_eq!(v["nodes"].as_u64(), Some(e.nodes), "{what}: nodes");
    assert_eq!(
        v["tetrahedra"].as_u64(),
        Some(e.tetrahedra),
        "{what}: tetrahedra"
    );
    if let Some(s) = e.surface_triangles {
        assert_eq!(
            v["surface_triangles"].as_u64(),
            Some(s),
            "{what}: surface_triangles"
        );
    }
    if let Some((vol, tol)) = e.volume {
        let got = v["volume"].as_f64().unwrap();
        assert!(
            (got - vol).abs() <= tol * vol,
            "{what}: volume {got} vs {vol}"
        );
    }
    let groups = v["physical_groups"].as_object().unwrap();
    assert_eq!(groups.len(), e.groups.len(), "{what}: groups {groups:?}");
    for (name, count) in e.groups {
        assert_eq!(
            groups.get(*name).and_then(Value::as_u64),
            Some(*count),
            "{what}: group {name}"
        );
    }
    let bbox = v["bbox"].as_array().unwrap();
    assert_eq!(bbox.len(), 2);
}

#[test]
fn committed_meshes_have_their_reference_counts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for e in COMMITTED {
        check(&root.join(e.path), e);
    }
}

#[test]
#[ignore = "needs the published SoftRobots meshes (docs/real-meshes.md); run with --ignored"]
fn real_soft_robot_meshes_have_their_reference_counts() {
    let dir = real_meshes();
    for e in REAL {
        check(&dir.join(e.path), e);
    }
}

#[test]
fn info_contract_bbox_and_errors() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Beam bbox by construction of its .geo: x ∈ [0, 0.1], y, z ∈ [−0.005, 0.005].
    let v = info(&root.join("meshes/beam_1.msh"));
    let bbox: Vec<Vec<f64>> = serde_json::from_value(v["bbox"].clone()).unwrap();
    let expected = [[0.0, -0.005, -0.005], [0.1, 0.005, 0.005]];
    for (got, want) in bbox.iter().zip(expected) {
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-12);
        }
    }
    // A missing file and a non-mesh file: non-zero exit, one-line error naming the file.
    for bad in ["does/not/exist.msh", "README.md"] {
        let out = Command::new(env!("CARGO_BIN_EXE_diffsoro"))
            .arg("info")
            .arg(root.join(bad))
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(bad), "{err}");
    }
    // No arguments prints the help (and runs the demo, in a scratch folder: a test never
    // writes into the clone's `out/`).
    let scratch = std::env::temp_dir().join(format!("diffsoro-info-noargs-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_diffsoro"))
        .current_dir(&scratch)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("Usage: diffsoro"));
    assert!(scratch.join("out/demo/final.json").is_file());
    std::fs::remove_dir_all(&scratch).unwrap();
}
