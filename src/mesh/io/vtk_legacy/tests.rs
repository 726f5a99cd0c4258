//! Tests of the legacy VTK reader: both modes, both CELLS layouts, skipped sections, and
//! malformed, truncated or corrupted files.

use super::*;

/// Five points, a vertex, a triangle and a tetrahedron (lines 11–18 hold the cells).
const ASCII: &str = "# vtk DataFile Version 2.0
test
ASCII
DATASET UNSTRUCTURED_GRID
POINTS 5 double
0 0 0
1 0 0
0 1 0
0 0 1
1 1 1
CELLS 3 11
1 4
3 0 1 2
4 0 1 2 3
CELL_TYPES 3
1
5
10
";

fn read(text: &str) -> Result<Mesh> {
    read_vtk_legacy("t.vtk", text.as_bytes())
}

fn err(text: &str) -> String {
    read(text).unwrap_err().to_string()
}

/// The same grid in BINARY form, with `points` and raw cell list and types.
fn binary(points: &[f64], cells: &[i32], cell_count: usize, types: &[i32]) -> Vec<u8> {
    let mut out = format!(
        "# vtk DataFile Version 2.0\ntest\nBINARY\nDATASET UNSTRUCTURED_GRID\nPOINTS {} double\n",
        points.len() / 3
    )
    .into_bytes();
    out.extend(points.iter().flat_map(|x| x.to_be_bytes()));
    out.extend(format!("\nCELLS {cell_count} {}\n", cells.len()).bytes());
    out.extend(cells.iter().flat_map(|x| x.to_be_bytes()));
    out.extend(format!("\nCELL_TYPES {}\n", types.len()).bytes());
    out.extend(types.iter().flat_map(|x| x.to_be_bytes()));
    out.push(b'\n');
    out
}

const POINTS: [f64; 15] = [0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 1., 1., 1., 1.];
const CELLS: [i32; 11] = [1, 4, 3, 0, 1, 2, 4, 0, 1, 2, 3];
const TYPES: [i32; 3] = [1, 5, 10];

#[test]
fn ascii_and_binary_give_the_expected_cells() {
    let a = read(ASCII).unwrap();
    assert_eq!(a.node_count(), 5);
    assert_eq!(a.tetrahedra(), &[[0, 1, 2, 3]]);
    assert_eq!(a.triangles(), &[[0, 1, 2]]);
    assert_eq!(a.positions()[4], Vec3::new(1.0, 1.0, 1.0));
    let b = read_vtk_legacy("t.vtk", &binary(&POINTS, &CELLS, 3, &TYPES)).unwrap();
    assert_eq!(a, b);
}

#[test]
fn vtk_5_1_offsets_and_connectivity_layout() {
    let text = ASCII.replace(
        "CELLS 3 11\n1 4\n3 0 1 2\n4 0 1 2 3\n",
        "CELLS 4 8\nOFFSETS vtktypeint64\n0 1 4 8\nCONNECTIVITY vtktypeint64\n4 0 1 2 0 1 2 3\n",
    );
    assert_eq!(read(&text).unwrap(), read(ASCII).unwrap());
    let bad = text.replace("0 1 4 8\n", "0 4 1 8\n");
    assert!(
        err(&bad).contains("OFFSETS must start at 0"),
        "{}",
        err(&bad)
    );
}

#[test]
fn data_sections_are_skipped_in_both_modes() {
    let extra = "POINT_DATA 5\nSCALARS temperature float 1\nLOOKUP_TABLE default\n1 2 3 4 5\n\
                     VECTORS v double\n0 0 0 1 1 1 2 2 2 3 3 3 4 4 4\n\
                     CELL_DATA 3\nFIELD FieldData 2\nid 1 3 int\n7 8 9\nw 2 3 float\n1 2 3 4 5 6\n";
    let text = ASCII.replace(
        "POINTS 5",
        "FIELD FieldData 1\nTIME 1 1 double\n0.5\nPOINTS 5",
    ) + extra;
    assert_eq!(read(&text).unwrap(), read(ASCII).unwrap());
    let mut b = binary(&POINTS, &CELLS, 3, &TYPES);
    b.extend(b"CELL_DATA 3\nSCALARS gmsh:physical int 1\nLOOKUP_TABLE default\n");
    b.extend([4i32, 5, 6].iter().flat_map(|x| x.to_be_bytes()));
    b.extend(b"\nPOINT_DATA 5\nNORMALS n float\n");
    b.extend((0..15).flat_map(|i| (i as f32).to_be_bytes()));
    b.push(b'\n');
    assert_eq!(read_vtk_legacy("t.vtk", &b).unwrap(), read(ASCII).unwrap());
}

#[test]
fn truncated_files_are_errors_naming_the_place() {
    let text = &ASCII[..ASCII.find("1 1 1").unwrap()];
    assert_eq!(
        err(text),
        "t.vtk: line 10: unexpected end of file, expected point coordinate"
    );
    let b = binary(&POINTS, &CELLS, 3, &TYPES);
    // Cut inside the cell types: 3 × 4 bytes are claimed, 6 are left.
    let cut = &b[..b.len() - 7];
    let e = read_vtk_legacy("t.vtk", cut).unwrap_err().to_string();
    let start = b.len() - 13; // the types block: 12 bytes and a newline at the end
    assert_eq!(
        e,
        format!(
            "t.vtk: byte {start}: header claims 3 cell types, more than the 6 bytes left in the file can hold"
        )
    );
    // Cut anywhere: never a panic; an error, or (cut right after the points, a valid
    // points-only grid) a mesh without cells.
    let results = (0..b.len() - 1)
        .map(|end| read_vtk_legacy("t.vtk", &b[..end]))
        .chain((0..ASCII.len() - 3).map(|end| read(&ASCII[..end])));
    for (end, result) in results.enumerate() {
        if let Ok(mesh) = result {
            assert!(mesh.tetrahedra().is_empty(), "{end}");
        }
    }
}

#[test]
fn inconsistent_counts_are_errors() {
    let e = err(&ASCII.replace("CELLS 3 11", "CELLS 3 12"));
    assert_eq!(
        e,
        "t.vtk: line 15: expected cell list entry, found `CELL_TYPES`"
    );
    let e = err(&ASCII.replace("CELLS 3 11", "CELLS 3 10"));
    assert_eq!(
        e,
        "t.vtk: line 11: cell 2 has 4 nodes, past the end of the list of size 10"
    );
    let e = err(&ASCII.replace("CELLS 3 11", "CELLS 2 11"));
    assert_eq!(
        e,
        "t.vtk: line 11: CELLS claims a list of size 11, but its 2 cells use 6"
    );
    let e = err(&ASCII.replace("CELLS 3 11", "CELLS 4 11"));
    assert!(e.contains("CELLS claims 4 cells"), "{e}");
    let e = err(&ASCII.replace("CELL_TYPES 3\n1\n", "CELL_TYPES 2\n"));
    assert_eq!(e, "t.vtk: line 15: CELL_TYPES lists 2 cells, CELLS 3");
    let e = err(&ASCII.replace("3 0 1 2\n", "4 0 1 2\n"));
    assert_eq!(
        e,
        "t.vtk: line 11: CELLS claims a list of size 11, but its 3 cells use 8"
    );
    let e = err(&ASCII.replace("\n5\n10", "\n10\n10"));
    assert_eq!(
        e,
        "t.vtk: line 11: cell 1 of type 10 has 3 nodes, expected 4"
    );
}

#[test]
fn undefined_nodes_and_bad_indices_are_errors() {
    let e = err(&ASCII.replace("4 0 1 2 3", "4 0 1 2 5"));
    assert_eq!(
        e,
        "t.vtk: line 11: cell 2 refers to node 5, but the file has 5 points"
    );
    let e = err(&ASCII.replace("4 0 1 2 3", "4 0 1 -2 3"));
    assert!(
        e.starts_with("t.vtk: line 14: cell list entry must be a non-negative"),
        "{e}"
    );
    let e = err(&ASCII.replace("\n10\n", "\n300\n"));
    assert_eq!(e, "t.vtk: line 15: cell 2 has unknown cell type 300");
}

#[test]
fn non_finite_coordinates_are_errors() {
    let e = err(&ASCII.replace("0 1 0\n", "0 nan 0\n"));
    assert_eq!(e, "t.vtk: line 8: point coordinate is not finite (NaN)");
    let mut points = POINTS;
    points[7] = f64::INFINITY;
    let b = binary(&points, &CELLS, 3, &TYPES);
    let e = read_vtk_legacy("t.vtk", &b).unwrap_err().to_string();
    let header =
        "# vtk DataFile Version 2.0\ntest\nBINARY\nDATASET UNSTRUCTURED_GRID\nPOINTS 5 double\n";
    let at = header.len() + 7 * 8;
    assert_eq!(
        e,
        format!("t.vtk: byte {at}: point coordinate is not finite (inf)")
    );
}

#[test]
fn huge_counts_are_refused_before_allocating() {
    let e = err(&ASCII.replace("POINTS 5", "POINTS 1000000000000"));
    assert!(
        e.starts_with("t.vtk: line 5: header claims 3000000000000 point coordinates"),
        "{e}"
    );
    let e = err(&ASCII.replace("CELLS 3 11", "CELLS 3 99999999999999"));
    assert!(e.contains("header claims 99999999999999"), "{e}");
    let e = err(&ASCII.replace("POINTS 5", "POINTS 18446744073709551615"));
    assert!(e.contains("header claims"), "{e}");
    let e = err(&format!(
        "{ASCII}POINT_DATA 5\nFIELD f 1\na 1000000 1000000000 double\n"
    ));
    assert!(e.contains("header claims"), "{e}");
}

#[test]
fn unsupported_or_malformed_headers_are_errors() {
    let e = err(&ASCII.replace("UNSTRUCTURED_GRID", "STRUCTURED_POINTS"));
    assert_eq!(
        e,
        "t.vtk: line 4: unsupported dataset type STRUCTURED_POINTS (only UNSTRUCTURED_GRID is read)"
    );
    let e = err(&ASCII.replace("ASCII", "TEXT"));
    assert_eq!(e, "t.vtk: line 3: expected ASCII or BINARY, found `TEXT`");
    let e = err(&ASCII.replace("# vtk", "# vt"));
    assert!(e.starts_with("t.vtk: line 1: not a legacy VTK file"), "{e}");
    let e = err(&ASCII.replace("CELL_TYPES", "CELL_KINDS"));
    assert_eq!(e, "t.vtk: line 15: unknown section `CELL_KINDS`");
    let e = err(&ASCII.replace("double", "bit"));
    assert_eq!(e, "t.vtk: line 5: unsupported data type `bit`");
    let e = err(&ASCII.replace("1 1 1\n", "1 1 x\n"));
    assert_eq!(e, "t.vtk: line 10: expected point coordinate, found `x`");
    let e = err("# vtk DataFile Version 2.0\nt\nASCII\nDATASET UNSTRUCTURED_GRID\n");
    assert_eq!(e, "t.vtk: whole file: no POINTS section");
}

#[test]
fn byte_order_mark_and_non_utf8_title_are_accepted() {
    let mut data = b"\xEF\xBB\xBF".to_vec();
    data.extend(ASCII.replace("test\n", "caf\u{e9}\n").bytes());
    let title = data.iter().position(|&b| b == 0xC3).unwrap();
    data[title] = 0xE9; // Latin-1 é, not UTF-8
    data.remove(title + 1);
    assert_eq!(
        read_vtk_legacy("t.vtk", &data).unwrap(),
        read(ASCII).unwrap()
    );
}

#[test]
fn degenerate_tetrahedra_are_parse_errors_naming_the_file() {
    let e = err(&ASCII.replace("0 0 1\n", "0.5 0.5 0\n"));
    assert!(
        e.starts_with("t.vtk: whole file: tetrahedron 0: is degenerate"),
        "{e}"
    );
}

/// Every single-byte corruption of a valid input gives an error or a mesh, never a panic.
#[test]
fn corrupted_bytes_never_panic() {
    for input in [
        ASCII.as_bytes().to_vec(),
        binary(&POINTS, &CELLS, 3, &TYPES),
    ] {
        for i in 0..input.len() {
            for b in [0u8, b'9', b' ', b'\n', b'-', b'=', b'"', b'<', 0xff] {
                let mut x = input.clone();
                x[i] = b;
                let _ = read_vtk_legacy("t.vtk", &x);
            }
        }
    }
}
