//! The VTK readers (legacy and XML) on fixtures and real soft-robot meshes, and the VTU
//! writer's exact round trip.
//!
//! Expected counts come from elsewhere: the cube fixtures were counted with meshio 5.3.5
//! (81 points; 1 vertex, 3 lines, 26 triangles, 184 tetrahedra) and mesh the unit cube
//! (volume 1); the real meshes' counts are those of `meshes-real/README.md`. Files written
//! by VTK itself (the library ParaView uses) check the readers against the reference writer.

use std::path::{Path, PathBuf};

use crate::real_meshes;
use real_meshes::real_meshes;

use diffsoro::math::Vec3;
use diffsoro::mesh::io::vtk_legacy::read_vtk_legacy;
use diffsoro::mesh::io::vtu::{VtuEncoding, read_vtu, write_vtu};
use diffsoro::mesh::{Groups, Mesh, box_mesh, read_mesh};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn read_bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn assert_unit_cube(mesh: &Mesh, what: &str) {
    assert_eq!(mesh.node_count(), 81, "{what}");
    assert_eq!(mesh.tetrahedra().len(), 184, "{what}");
    assert_eq!(mesh.triangles().len(), 26, "{what}");
    assert!(
        (mesh.volume() - 1.0).abs() < 1e-12,
        "{what}: {}",
        mesh.volume()
    );
    let [lo, hi] = mesh.bounding_box();
    assert_eq!((lo, hi), (Vec3::zeros(), Vec3::repeat(1.0)), "{what}");
    // The 26 triangles tile the face z = 0 (the `bottom` physical surface): area 1.
    let area: f64 = mesh
        .triangles()
        .iter()
        .map(|t| {
            let p = t.map(|v| mesh.positions()[v]);
            assert!(p.iter().all(|q| q.z == 0.0), "{what}");
            0.5 * (p[1] - p[0]).cross(&(p[2] - p[0])).norm()
        })
        .sum();
    assert!((area - 1.0).abs() < 1e-12, "{what}: {area}");
}

#[test]
fn cube_fixtures_agree_across_formats_and_encodings() {
    let ascii_vtk = read_vtk_legacy("cube_ascii.vtk", &read_bytes(&fixture("cube_ascii.vtk")));
    let ascii_vtk = ascii_vtk.unwrap();
    let binary_vtk = read_mesh(fixture("cube_binary.vtk")).unwrap();
    let ascii_vtu = read_vtu("cube_ascii.vtu", &read_bytes(&fixture("cube_ascii.vtu"))).unwrap();
    let base64_vtu = read_mesh(fixture("cube_base64.vtu")).unwrap();
    for (mesh, what) in [
        (&ascii_vtk, "ascii vtk"),
        (&binary_vtk, "binary vtk"),
        (&ascii_vtu, "ascii vtu"),
        (&base64_vtu, "base64 vtu"),
    ] {
        assert_unit_cube(mesh, what);
    }
    assert_eq!(ascii_vtk, binary_vtk);
    assert_eq!(ascii_vtu, base64_vtu);
    assert_eq!(ascii_vtk, base64_vtu);
}

#[test]
fn files_written_by_vtk_itself_are_read() {
    // Re-written by VTK 9.7 (tests/data/make_vtk_fixtures.py), with point, cell and field
    // data arrays to skip: binary files hold the same bits as the source cube.
    let reference = read_mesh(fixture("cube_ascii.vtu")).unwrap();
    let xml = read_mesh(fixture("cube_vtk_binary_be.vtu")).unwrap();
    assert_eq!(xml, reference);
    let legacy = read_mesh(fixture("cube_vtk51_binary.vtk")).unwrap();
    assert_eq!(legacy, reference);
    // VTK prints legacy ASCII reals with 11 significant digits.
    let ascii = read_mesh(fixture("cube_vtk51_ascii.vtk")).unwrap();
    assert_unit_cube(&ascii, "vtk 5.1 ascii");
    assert_eq!(ascii.tetrahedra(), reference.tetrahedra());
    assert_eq!(ascii.triangles(), reference.triangles());
    for (a, b) in ascii.positions().iter().zip(reference.positions()) {
        assert!((a - b).amax() < 1e-10, "{a} {b}");
    }
}

fn real(path: &str) -> Option<PathBuf> {
    Some(real_meshes().join(path))
}

#[test]
#[ignore = "needs the published SoftRobots meshes (docs/real-meshes.md); run with --ignored"]
fn real_soft_robot_meshes_load_with_their_counts() {
    // (file, nodes, tetrahedra, boundary triangles, volume in mm³): meshes-real/README.md and
    // tests/data/README.md of the fixtures branch (meshio 5.3.5, 10 significant digits).
    for (path, nodes, tets, surface, volume) in [
        ("trunk/trunk.vtk", 709, 1972, 1322, 38899.99212),
        ("finger/finger.vtk", 158, 389, 306, 18508.66115),
        ("pneunet/pneunetCutCoarse.vtk", 376, 1195, 742, 51162.5),
        ("pneunet/pneunetCut.vtk", 2316, 9560, 2968, 51162.5),
        ("diamond/diamond.vtk", 1628, 4147, 3268, 392356.6672),
        (
            "bunny/Hollow_Stanford_Bunny.vtu",
            1911,
            5897,
            3806,
            152.4533915,
        ),
    ] {
        let Some(p) = real(path) else { continue };
        let mesh = read_mesh(&p).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(mesh.node_count(), nodes, "{path}");
        assert_eq!(mesh.tetrahedra().len(), tets, "{path}");
        assert_eq!(mesh.boundary_triangles().len(), surface, "{path}");
        let rel = (mesh.volume() - volume).abs() / volume;
        assert!(rel < 1e-9, "{path}: volume {} vs {volume}", mesh.volume());
    }
    // The GiD tripod meshes (meshio cannot read them): node and tetrahedron counts from
    // meshes-real/README.md; boundary triangles and volume from a 20-line numpy script
    // (|det|/6 summed, faces used once counted), independent of the Rust code.
    for (path, nodes, tets, surface, volume) in [
        ("tripod/tripod_low.gidmsh", 235, 579, 436, 22447.88947),
        ("tripod/tripod_mid.gidmsh", 781, 2684, 1162, 22429.08672),
    ] {
        let Some(p) = real(path) else { continue };
        let mesh = read_mesh(&p).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(mesh.node_count(), nodes, "{path}");
        assert_eq!(mesh.tetrahedra().len(), tets, "{path}");
        assert_eq!(mesh.boundary_triangles().len(), surface, "{path}");
        let rel = (mesh.volume() - volume).abs() / volume;
        assert!(rel < 1e-9, "{path}: volume {} vs {volume}", mesh.volume());
    }
    // Extents from the published meshes' README: trunk z ∈ [0, 195], finger x ∈ [-103.4, 0].
    if let Some(p) = real("trunk/trunk.vtk") {
        let [lo, hi] = read_mesh(p).unwrap().bounding_box();
        assert!(
            lo.z.abs() < 1e-9 && (hi.z - 195.0).abs() < 1e-9,
            "{lo} {hi}"
        );
    }
    if let Some(p) = real("finger/finger.vtk") {
        let [lo, hi] = read_mesh(p).unwrap().bounding_box();
        assert!(
            (lo.x + 103.4).abs() < 0.05 && hi.x.abs() < 1e-9,
            "{lo} {hi}"
        );
    }
}

/// A box mesh with irrational coordinates, hand-made triangles, and groups of all kinds.
fn rich_mesh() -> Mesh {
    let base = box_mesh(
        [3, 2, 2],
        [-std::f64::consts::PI, 0.1, 2f64.sqrt()],
        [1.0 / 3.0, std::f64::consts::E, 7f64.sqrt()],
    )
    .unwrap();
    let positions: Vec<Vec3> = base
        .positions()
        .iter()
        .enumerate()
        .map(|(i, p)| p + Vec3::new((i as f64).sin(), (i as f64).cos(), (i as f64).ln_1p()) * 1e-3)
        .collect();
    let surface = base.boundary_triangles();
    let triangles = surface[..7].to_vec();
    let mut groups: Groups = base.groups().clone();
    groups.triangles.insert("cavity".into(), vec![1, 4, 6]);
    groups
        .triangles
        .insert("all faces".into(), (0..7).collect());
    groups
        .tetrahedra
        .insert("tip & <end>".into(), vec![0, 17, 70]);
    groups.nodes.insert("marker \"one\"".into(), vec![5]);
    groups.nodes.insert("empty".into(), vec![]);
    Mesh::new(positions, base.tetrahedra().to_vec(), triangles, groups).unwrap()
}

#[test]
fn written_vtu_reads_back_bit_for_bit() {
    let mesh = rich_mesh();
    for encoding in [VtuEncoding::Ascii, VtuEncoding::Binary] {
        let bytes = write_vtu(&mesh, None, &[], encoding);
        let back = read_vtu("rich.vtu", &bytes).unwrap_or_else(|e| panic!("{encoding:?}: {e}"));
        assert_eq!(back, mesh, "{encoding:?}");
        // Exact bits, not merely equal values (PartialEq says 0.0 == -0.0).
        for (a, b) in back.positions().iter().zip(mesh.positions()) {
            for k in 0..3 {
                assert_eq!(a[k].to_bits(), b[k].to_bits());
            }
        }
    }
}

#[test]
fn deformed_positions_and_fields_are_written_and_extra_arrays_ignored() {
    let mesh = rich_mesh();
    let moved: Vec<Vec3> = mesh
        .positions()
        .iter()
        .map(|p| p * 1.5 + Vec3::new(0.25, -1.0, 1e-7))
        .collect();
    let velocity: Vec<Vec3> = (0..mesh.node_count())
        .map(|i| Vec3::new(i as f64, -(i as f64).sqrt(), 1e-300))
        .collect();
    let displacement: Vec<Vec3> = moved
        .iter()
        .zip(mesh.positions())
        .map(|(a, b)| a - b)
        .collect();
    for encoding in [VtuEncoding::Ascii, VtuEncoding::Binary] {
        let bytes = write_vtu(
            &mesh,
            Some(&moved),
            &[("velocity", &velocity), ("displacement", &displacement)],
            encoding,
        );
        let back = read_vtu("moved.vtu", &bytes).unwrap();
        assert_eq!(back.positions(), moved.as_slice(), "{encoding:?}");
        assert_eq!(back.tetrahedra(), mesh.tetrahedra());
        assert_eq!(back.triangles(), mesh.triangles());
        assert_eq!(back.groups(), mesh.groups());
        // The velocity array is in the file, with one 3-vector per node.
        let text = String::from_utf8(bytes).unwrap();
        let doc = roxmltree::Document::parse(&text).unwrap();
        let arrays: Vec<_> = doc
            .descendants()
            .filter(|n| n.has_tag_name("DataArray"))
            .collect();
        let v = arrays
            .iter()
            .find(|n| n.attribute("Name") == Some("velocity"))
            .unwrap();
        assert_eq!(v.attribute("NumberOfComponents"), Some("3"));
        assert_eq!(v.parent().unwrap().tag_name().name(), "PointData");
        if encoding == VtuEncoding::Ascii {
            let count = v.text().unwrap().split_whitespace().count();
            assert_eq!(count, 3 * mesh.node_count());
        }
    }
}

#[test]
fn truncated_or_corrupted_fixtures_never_panic() {
    use diffsoro::mesh::io::read_mesh_bytes;
    for name in [
        "cube_binary.vtk",
        "cube_ascii.vtk",
        "cube_base64.vtu",
        "cube_vtk51_binary.vtk",
    ] {
        let data = read_bytes(&fixture(name));
        // A stride keeps the test fast; the modules' unit tests cover every byte of smaller
        // inputs.
        for end in (0..data.len()).step_by(13) {
            if let Ok(mesh) = read_mesh_bytes(name, &data[..end]) {
                // Only a cut after complete sections can still be a (smaller) valid grid.
                assert!(mesh.node_count() <= 81, "{name} cut at {end}");
            }
        }
        for i in (0..data.len()).step_by(17) {
            for b in [0u8, b'7', b'\n', 0xff] {
                let mut x = data.clone();
                x[i] = b;
                let _ = read_mesh_bytes(name, &x);
            }
        }
    }
}
