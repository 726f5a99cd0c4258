//! Tests of the `.vtu` reader and writer.

use super::*;
use crate::error::Result;
use crate::math::Vec3;
use crate::mesh::{Groups, Mesh};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

/// Five points, a vertex, a triangle and a tetrahedron, with groups and one unknown,
/// malformed array (ignored).
const ASCII: &str = r#"<?xml version="1.0"?>
<VTKFile type="UnstructuredGrid" version="0.1" byte_order="LittleEndian">
<UnstructuredGrid>
<Piece NumberOfPoints="5" NumberOfCells="3">
<PointData>
<DataArray type="UInt8" Name="node_group:tip" format="ascii">0 0 0 1 1</DataArray>
</PointData>
<CellData>
<DataArray type="UInt8" Name="tetra_group:body" format="ascii">0 0 1</DataArray>
<DataArray type="Int32" Name="triangle_group:face" format="ascii">0 1 0</DataArray>
<DataArray type="Float64" Name="pressure" format="ascii">1.5 x</DataArray>
</CellData>
<Points>
<DataArray type="Float32" NumberOfComponents="3" format="ascii">
0 0 0 1 0 0
0 1 0 0 0 1
1 1 1
</DataArray>
</Points>
<Cells>
<DataArray type="Int64" Name="connectivity" format="ascii">4 0 1 2 0 1 2 3</DataArray>
<DataArray type="Int64" Name="offsets" format="ascii">1 4 8</DataArray>
<DataArray type="UInt8" Name="types" format="ascii">1 5 10</DataArray>
</Cells>
</Piece>
</UnstructuredGrid>
</VTKFile>
"#;

fn read(text: &str) -> Result<Mesh> {
    read_vtu("t.vtu", text.as_bytes())
}

fn err(text: &str) -> String {
    read(text).unwrap_err().to_string()
}

fn expected() -> Mesh {
    let positions = vec![
        Vec3::zeros(),
        Vec3::x(),
        Vec3::y(),
        Vec3::z(),
        Vec3::repeat(1.0),
    ];
    let mut groups = Groups::default();
    groups.nodes.insert("tip".into(), vec![3, 4]);
    groups.tetrahedra.insert("body".into(), vec![0]);
    groups.triangles.insert("face".into(), vec![0]);
    Mesh::new(positions, vec![[0, 1, 2, 3]], vec![[0, 1, 2]], groups).unwrap()
}

/// Base64 of a size header (4 or 8 bytes) and `data`, encoded together or separately.
fn b64(data: &[u8], header64: bool, big: bool, separate: bool) -> String {
    let n = data.len() as u64;
    let header = match (header64, big) {
        (true, true) => n.to_be_bytes().to_vec(),
        (true, false) => n.to_le_bytes().to_vec(),
        (false, true) => (n as u32).to_be_bytes().to_vec(),
        (false, false) => (n as u32).to_le_bytes().to_vec(),
    };
    if separate {
        BASE64.encode(&header) + &BASE64.encode(data)
    } else {
        BASE64.encode([header, data.to_vec()].concat())
    }
}

/// The grid of [`ASCII`] with base64 points, connectivity and types.
fn binary(header64: bool, big: bool) -> String {
    let points: Vec<u8> = [0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 1., 1., 1., 1.]
        .iter()
        .flat_map(|&x: &f32| {
            if big {
                x.to_be_bytes()
            } else {
                x.to_le_bytes()
            }
        })
        .collect();
    let conn: Vec<u8> = [4i32, 0, 1, 2, 0, 1, 2, 3]
        .iter()
        .flat_map(|x| {
            if big {
                x.to_be_bytes()
            } else {
                x.to_le_bytes()
            }
        })
        .collect();
    let header_type = if header64 { "UInt64" } else { "UInt32" };
    let order = if big { "BigEndian" } else { "LittleEndian" };
    ASCII
        .replace(
            "byte_order=\"LittleEndian\"",
            &format!("byte_order=\"{order}\" header_type=\"{header_type}\""),
        )
        .replace(
            "format=\"ascii\">\n0 0 0 1 0 0\n0 1 0 0 0 1\n1 1 1\n",
            &format!(
                "format=\"binary\">\n  {}\n",
                b64(&points, header64, big, false)
            ),
        )
        .replace(
            "\"Int64\" Name=\"connectivity\" format=\"ascii\">4 0 1 2 0 1 2 3",
            &format!(
                "\"Int32\" Name=\"connectivity\" format=\"binary\">{}",
                b64(&conn, header64, big, true)
            ),
        )
        .replace(
            "format=\"ascii\">1 5 10",
            &format!(
                "format=\"binary\">{}",
                b64(&[1, 5, 10], header64, big, true)
            ),
        )
}

#[test]
fn ascii_and_every_binary_variant_give_the_expected_mesh() {
    assert_eq!(read(ASCII).unwrap(), expected());
    for header64 in [false, true] {
        for big in [false, true] {
            let text = binary(header64, big);
            assert!(text.matches("format=\"binary\"").count() == 3);
            let mesh = read(&text).unwrap_or_else(|e| panic!("{header64} {big}: {e}"));
            assert_eq!(mesh, expected(), "{header64} {big}");
        }
    }
}

#[test]
fn unsupported_variants_are_clear_errors() {
    let e = err(&ASCII.replace(
        "byte_order=",
        "compressor=\"vtkZLibDataCompressor\" byte_order=",
    ));
    assert!(
        e.starts_with("t.vtu: line 2: compressed VTU is not supported"),
        "{e}"
    );
    let e = err(&ASCII.replace(
        "NumberOfComponents=\"3\" format=\"ascii\"",
        "NumberOfComponents=\"3\" format=\"appended\" offset=\"0\"",
    ));
    assert!(e.starts_with("t.vtu: line 14: appended data"), "{e}");
    let e = err(&ASCII.replace("\"UnstructuredGrid\" version", "\"PolyData\" version"));
    assert_eq!(
        e,
        "t.vtu: line 2: unsupported dataset type `PolyData` (only UnstructuredGrid is read)"
    );
    let e = err(&ASCII.replace("version=\"0.1\"", "header_type=\"UInt16\""));
    assert_eq!(e, "t.vtu: line 2: unsupported header_type `UInt16`");
    let e = err(&ASCII.replace("</Piece>", "</Piece><Piece/>"));
    assert_eq!(
        e,
        "t.vtu: line 3: 2 <Piece> elements; only single-piece files are read"
    );
    let e = err(&ASCII.replace("type=\"Float32\"", "type=\"String\""));
    assert_eq!(
        e,
        "t.vtu: line 14: DataArray `(unnamed)` has unsupported type `String`"
    );
}

#[test]
fn malformed_documents_are_errors_naming_the_line() {
    let e = err(&ASCII.replace("</Points>", ""));
    assert!(e.starts_with("t.vtu: line 25: invalid XML"), "{e}");
    let e = read_vtu("t.vtu", b"<VTKFile>\xff</VTKFile>")
        .unwrap_err()
        .to_string();
    assert_eq!(e, "t.vtu: byte 9: VTU file is not valid UTF-8 text");
    let e = err(&ASCII
        .replace("<Points>", "<Pts>")
        .replace("</Points>", "</Pts>"));
    assert_eq!(e, "t.vtu: line 4: <Piece> has no <Points> element");
    let e = err(&ASCII.replace("Name=\"types\"", "Name=\"kinds\""));
    assert_eq!(e, "t.vtu: line 20: no `types` DataArray in <Cells>");
    let e = err(&ASCII.replace("NumberOfCells=\"3\"", "NumberOfCells=\"-3\""));
    assert_eq!(
        e,
        "t.vtu: line 4: NumberOfCells=\"-3\" is not a non-negative integer"
    );
}

#[test]
fn wrong_array_sizes_are_errors() {
    let e = err(&ASCII.replace("1 1 1\n", "1 1\n"));
    assert_eq!(
        e,
        "t.vtu: line 14: DataArray `(unnamed)` holds 14 point coordinates, expected 15"
    );
    let e = err(&ASCII.replace("1 1 1\n", "1 1 1 2\n"));
    assert_eq!(
        e,
        "t.vtu: line 17: DataArray `(unnamed)` holds more than the 15 point coordinates expected"
    );
    let e = err(&ASCII.replace(">1 4 8<", ">1 4<"));
    assert_eq!(
        e,
        "t.vtu: line 22: DataArray `offsets` holds 2 cell offsets, expected 3"
    );
    let e = err(&ASCII.replace(">0 0 1<", ">0 0<"));
    assert_eq!(
        e,
        "t.vtu: line 9: DataArray `tetra_group:body` holds 2 group flags, expected 3"
    );
    let e = err(&ASCII.replace(">1 4 8<", ">1 4 7<"));
    assert_eq!(
        e,
        "t.vtu: line 21: DataArray `connectivity` holds more than the 7 cell nodes expected"
    );
    let e = err(&ASCII.replace(">1 4 8<", ">4 1 8<"));
    assert_eq!(e, "t.vtu: line 22: cell offsets decrease");
    // Binary: the size header disagrees with the payload, or the payload with the count.
    let text = binary(true, false);
    let points = b64(&[0u8; 15 * 4], true, false, false);
    let start = text.find("format=\"binary\">\n").unwrap() + 17;
    let at = start + 2; // after the indentation
    let header_lies = {
        let mut bytes = BASE64.decode(&points).unwrap();
        bytes[0] = 61;
        BASE64.encode(bytes)
    };
    let line = text[start..].lines().next().unwrap().trim();
    let e = err(&text.replace(line, &header_lies));
    assert_eq!(
        e,
        format!(
            "t.vtu: byte {at}: DataArray `(unnamed)` header declares Some(61) bytes, but 60 follow"
        )
    );
    let short = b64(&[0u8; 14 * 4], true, false, false);
    let e = err(&text.replace(line, &short));
    assert_eq!(
        e,
        format!("t.vtu: byte {at}: DataArray `(unnamed)` holds 14 point coordinates, expected 15")
    );
    let odd = b64(&[0u8; 15 * 4 + 2], true, false, false);
    let e = err(&text.replace(line, &odd));
    assert!(e.contains("not a whole number of Float32 values"), "{e}");
    let e = err(&text.replace(line, "AAAA"));
    assert!(e.contains("too short for its 8-byte size header"), "{e}");
}

#[test]
fn bad_base64_names_the_byte() {
    let text = binary(false, false);
    let start = text.find("format=\"binary\">\n").unwrap() + 17;
    let line = text[start..].lines().next().unwrap().trim();
    let broken = format!("{}!{}", &line[..10], &line[11..]);
    let e = err(&text.replace(line, &broken));
    let at = start + 2 + 10;
    assert!(
        e.starts_with(&format!(
            "t.vtu: byte {at}: bad base64 in DataArray `(unnamed)`"
        )),
        "{e}"
    );
}

#[test]
fn undefined_nodes_bad_values_and_misplaced_groups_are_errors() {
    let e = err(&ASCII.replace("0 1 2 3<", "0 1 2 7<"));
    assert_eq!(
        e,
        "t.vtu: line 21: cell 2 refers to node 7, but the file has 5 points"
    );
    let e = err(&ASCII.replace("0 1 2 3<", "0 1 2 -3<"));
    assert_eq!(
        e,
        "t.vtu: line 21: cell node must be a non-negative integer, found Int(-3)"
    );
    let e = err(&ASCII.replace("0 0 1\n1 1 1", "0 0 nan\n1 1 1"));
    assert_eq!(e, "t.vtu: line 16: point coordinate is not finite (NaN)");
    let e = err(&ASCII.replace("0 0 1\n1 1 1", "0 0 1\n1 inf 1"));
    assert_eq!(e, "t.vtu: line 17: point coordinate is not finite (inf)");
    let e = err(&ASCII.replace(">1 5 10<", ">1 5 300<"));
    assert_eq!(e, "t.vtu: line 23: unknown cell type Int(300)");
    let e = err(&ASCII.replace(">0 0 1<", ">0 1 1<"));
    assert_eq!(
        e,
        "t.vtu: line 9: group `body` holds cell 1, which is not a tetrahedron"
    );
    let e = err(&ASCII.replace(">0 1 0<", ">0 1 1<"));
    assert_eq!(
        e,
        "t.vtu: line 10: group `face` holds cell 2, which is not a triangle"
    );
}

#[test]
fn huge_counts_are_refused_without_allocating() {
    let e = err(&ASCII.replace("NumberOfPoints=\"5\"", "NumberOfPoints=\"1000000000000\""));
    assert_eq!(
        e,
        "t.vtu: line 14: DataArray `(unnamed)` holds 15 point coordinates, expected 3000000000000"
    );
    let e = err(&ASCII.replace(">1 4 8<", ">1 4 800000000000000<"));
    assert!(e.contains("expected 800000000000000"), "{e}");
}

#[test]
fn truncated_documents_never_panic() {
    for text in [ASCII.to_string(), binary(true, true)] {
        for end in 0..text.len() - 1 {
            if let Some(prefix) = text.get(..end) {
                assert!(read(prefix).is_err(), "{end}");
            }
        }
    }
}

/// Every single-byte corruption of a valid input gives an error or a mesh, never a panic.
#[test]
fn corrupted_bytes_never_panic() {
    for input in [
        ASCII.as_bytes().to_vec(),
        binary(true, true).into_bytes(),
        binary(false, false).into_bytes(),
    ] {
        for i in 0..input.len() {
            for b in [0u8, b'9', b' ', b'\n', b'-', b'=', b'"', b'<', 0xff] {
                let mut x = input.clone();
                x[i] = b;
                let _ = read_vtu("t.vtu", &x);
            }
        }
    }
}

#[test]
fn point_vectors_are_read_back_by_name() {
    let mesh = expected();
    let u: Vec<Vec3> = (0..5)
        .map(|i| Vec3::new(i as f64 * 0.1, -1e-3 / 3.0, 7.0))
        .collect();
    let v = vec![Vec3::new(1.0, 2.0, 3.0); 5];
    for encoding in [VtuEncoding::Ascii, VtuEncoding::Binary] {
        let bytes = write_vtu(
            &mesh,
            None,
            &[("displacement", &u), ("velocity", &v)],
            encoding,
        );
        let read = |name| read_vtu_point_vectors("f.vtu", &bytes, name).unwrap();
        assert_eq!(read("displacement"), Some(u.clone()), "{encoding:?}");
        assert_eq!(read("velocity"), Some(v.clone()), "{encoding:?}");
        assert_eq!(read("stress"), None);
    }
    // The ASCII sample's `node_group:tip` has one component: not a vector field.
    let e = read_vtu_point_vectors("f.vtu", ASCII.as_bytes(), "node_group:tip").unwrap_err();
    assert!(e.to_string().contains("must have 3 components"), "{e}");
}
