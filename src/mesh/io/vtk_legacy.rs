//! Reader of legacy VTK files (`# vtk DataFile Version …`) holding an unstructured grid, in
//! ASCII or BINARY (big-endian) form.
//!
//! Understood: `POINTS n type`; `CELLS n size` followed by `n` lists `count id…` (the classic
//! layout), or the VTK 5.1 layout `CELLS nOffsets nConnectivity` with `OFFSETS type` and
//! `CONNECTIVITY type` arrays; `CELL_TYPES n`. Type-10 cells (`VTK_TETRA`) become
//! tetrahedra, type-5 cells (`VTK_TRIANGLE`) triangles, other cells are skipped. `FIELD`,
//! `METADATA`, `POINT_DATA` and `CELL_DATA` sections are skipped.

use crate::error::{Error, Location, Result};
use crate::math::Vec3;
use crate::mesh::{Groups, Mesh};

use super::vtk_cells::{in_file, sort_cells};
use super::vtk_scalar::{ScalarType, Value};
use super::{Cursor, Endian};

/// Reads a legacy VTK unstructured grid from `data`, the content of the file called `file`.
///
/// Positions are returned as stored (the file's unit). Malformed input is an
/// [`Error::Parse`] naming the line (or, inside a binary block, the byte offset).
pub fn read_vtk_legacy(file: &str, data: &[u8]) -> Result<Mesh> {
    let mut c = Cursor::new(file, data);
    let header = c.line_text()?;
    if !header
        .trim_start_matches(['\u{feff}', ' ', '\t'])
        .starts_with("# vtk DataFile")
    {
        return Err(Error::parse(
            file,
            Location::Line(1),
            "not a legacy VTK file (expected `# vtk DataFile Version …`)",
        ));
    }
    // The title: free text, not necessarily UTF-8.
    let title_len = c
        .rest()
        .iter()
        .position(|&b| b == b'\n')
        .map_or(c.remaining(), |i| i + 1);
    c.bytes(title_len)?;
    let mode = c.line_text()?.trim().to_ascii_uppercase();
    let binary = match mode.as_str() {
        "ASCII" => false,
        "BINARY" => true,
        _ => {
            return Err(Error::parse(
                file,
                Location::Line(3),
                format!("expected ASCII or BINARY, found `{mode}`"),
            ));
        }
    };
    let mut r = Reader { c, binary };
    r.keyword("DATASET")?;
    let dataset = r.c.token()?.to_ascii_uppercase();
    if dataset != "UNSTRUCTURED_GRID" {
        return Err(r.c.err_line(format!(
            "unsupported dataset type {dataset} (only UNSTRUCTURED_GRID is read)"
        )));
    }

    let mut points: Option<Vec<f64>> = None;
    let mut cells: Option<(Location, Vec<usize>, Vec<usize>)> = None;
    let mut types: Option<(usize, Vec<usize>)> = None;
    while !r.c.at_end() {
        let line = r.c.line();
        let word = r.c.token()?.to_ascii_uppercase();
        match word.as_str() {
            "POINTS" => {
                let n = r.count("number of points")?;
                let ty = r.scalar_type()?;
                let count = n.saturating_mul(3);
                points = Some(r.reals(ty, count, "point coordinate")?);
            }
            "CELLS" => {
                let location = Location::Line(line);
                let a = r.count("number of cells")?;
                let b = r.count("cell list size")?;
                let (starts, conn) = r.cells(a, b)?;
                cells = Some((location, starts, conn));
            }
            "CELL_TYPES" => {
                let n = r.count("number of cell types")?;
                types = Some((line, r.indices(ScalarType::I32, n, "cell type")?));
            }
            "FIELD" => r.skip_field()?,
            "METADATA" => r.skip_metadata()?,
            "POINT_DATA" | "CELL_DATA" => {
                let n = r.count("number of values")?;
                r.skip_attributes(n)?;
            }
            _ => {
                return Err(Error::parse(
                    file,
                    Location::Line(line),
                    format!("unknown section `{word}`"),
                ));
            }
        }
    }

    let points = points.ok_or_else(|| Error::parse(file, Location::Whole, "no POINTS section"))?;
    let positions: Vec<Vec3> = points
        .chunks_exact(3)
        .map(|p| Vec3::new(p[0], p[1], p[2]))
        .collect();
    let (location, starts, conn) = cells.unwrap_or((Location::Whole, vec![0], Vec::new()));
    let (types_line, types) = types.unwrap_or((0, Vec::new()));
    let cell_count = starts.len() - 1;
    if types.len() != cell_count {
        return Err(Error::parse(
            file,
            if types_line > 0 {
                Location::Line(types_line)
            } else {
                Location::Whole
            },
            format!("CELL_TYPES lists {} cells, CELLS {cell_count}", types.len()),
        ));
    }
    let types: Vec<u8> = types
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            u8::try_from(t).map_err(|_| {
                Error::parse(
                    file,
                    Location::Line(types_line),
                    format!("cell {i} has unknown cell type {t}"),
                )
            })
        })
        .collect::<Result<_>>()?;
    let sorted = sort_cells(file, location, positions.len(), &starts, &conn, &types)?;
    Mesh::new(
        positions,
        sorted.tetrahedra,
        sorted.triangles,
        Groups::default(),
    )
    .map_err(|e| in_file(file, e))
}

/// The cursor and the file's mode.
struct Reader<'a> {
    c: Cursor<'a>,
    binary: bool,
}

impl Reader<'_> {
    /// Consumes a keyword (compared case-insensitively, as VTK does).
    fn keyword(&mut self, expected: &str) -> Result<()> {
        let token = self.c.token().map_err(|_| {
            self.c
                .err_line(format!("unexpected end of file, expected {expected}"))
        })?;
        if token.eq_ignore_ascii_case(expected) {
            Ok(())
        } else {
            Err(self
                .c
                .err_line(format!("expected {expected}, found `{token}`")))
        }
    }

    /// The next keyword, upper-cased, without consuming it (`None` at the end).
    fn peek_keyword(&self) -> Option<String> {
        let mut probe = self.c.clone();
        probe.token().ok().map(|t| t.to_ascii_uppercase())
    }

    fn count(&mut self, what: &str) -> Result<u64> {
        self.c.parse::<u64>(what)
    }

    fn scalar_type(&mut self) -> Result<ScalarType> {
        let name = self.c.token()?;
        ScalarType::from_legacy(name)
            .ok_or_else(|| self.c.err_line(format!("unsupported data type `{name}`")))
    }

    /// Checks that `count` values of `ty` fit in the rest of the file and, in binary mode,
    /// moves to the start of the block (the byte after the header line's newline).
    fn begin_block(&mut self, ty: ScalarType, count: u64, what: &str) -> Result<usize> {
        if self.binary {
            self.c.skip_line_end();
        }
        let each = if self.binary { ty.size() } else { 1 };
        // In a binary block, name the byte where the block starts.
        self.c
            .check_count(count, each, &format!("{what}s"))
            .map_err(|e| match e {
                Error::Parse { message, .. } if self.binary => self.c.err_byte(message),
                e => e,
            })
    }

    /// The next value of type `ty`, and the location it was read at.
    fn value(&mut self, ty: ScalarType, what: &str) -> Result<(Value, Location)> {
        if self.binary {
            let at = Location::Byte(self.c.pos());
            let bytes = self.c.bytes(ty.size())?;
            Ok((ty.decode(bytes, Endian::Big), at))
        } else {
            let value = ty.parse_next(&mut self.c, what)?;
            Ok((value, Location::Line(self.c.line())))
        }
    }

    /// `count` finite real values.
    fn reals(&mut self, ty: ScalarType, count: u64, what: &str) -> Result<Vec<f64>> {
        let n = self.begin_block(ty, count, what)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let (value, at) = self.value(ty, what)?;
            let x = value.real();
            if !x.is_finite() {
                return Err(Error::parse(
                    self.c.file(),
                    at,
                    format!("{what} is not finite ({x})"),
                ));
            }
            out.push(x);
        }
        Ok(out)
    }

    /// `count` non-negative integers.
    fn indices(&mut self, ty: ScalarType, count: u64, what: &str) -> Result<Vec<usize>> {
        let n = self.begin_block(ty, count, what)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let (value, at) = self.value(ty, what)?;
            let index = value
                .int()
                .and_then(|i| usize::try_from(i).ok())
                .ok_or_else(|| {
                    Error::parse(
                        self.c.file(),
                        at,
                        format!("{what} must be a non-negative integer, found {value:?}"),
                    )
                })?;
            out.push(index);
        }
        Ok(out)
    }

    /// `count` values of type `ty`, skipped.
    fn skip_values(&mut self, ty: ScalarType, count: u64, what: &str) -> Result<()> {
        let n = self.begin_block(ty, count, what)?;
        if self.binary {
            self.c.bytes(n * ty.size())?;
        } else {
            for _ in 0..n {
                self.c.token()?;
            }
        }
        Ok(())
    }

    /// The cells after `CELLS a b`, as start offsets (one per cell plus the end) and the
    /// connectivity, in the classic or the VTK 5.1 layout.
    fn cells(&mut self, a: u64, b: u64) -> Result<(Vec<usize>, Vec<usize>)> {
        if self.peek_keyword().as_deref() == Some("OFFSETS") {
            self.c.token()?;
            let line = self.c.line();
            let ty = self.scalar_type()?;
            let mut offsets = self.indices(ty, a, "cell offset")?;
            self.keyword("CONNECTIVITY")?;
            let ty = self.scalar_type()?;
            let conn = self.indices(ty, b, "cell node")?;
            if offsets.is_empty() {
                offsets.push(0); // no cells
            }
            let consistent = offsets.first().is_none_or(|&o| o == 0)
                && offsets.windows(2).all(|w| w[0] <= w[1])
                && offsets.last().is_some_and(|&o| o == conn.len());
            if !consistent {
                return Err(Error::parse(
                    self.c.file(),
                    Location::Line(line),
                    "OFFSETS must start at 0, never decrease, and end at the CONNECTIVITY size",
                ));
            }
            return Ok((offsets, conn));
        }
        let line = self.c.line();
        let list = self.indices(ScalarType::I32, b, "cell list entry")?;
        let cell_count = usize::try_from(a).unwrap_or(usize::MAX).min(list.len());
        let mut starts = Vec::with_capacity(cell_count + 1);
        let mut conn = Vec::with_capacity(list.len());
        let mut pos = 0;
        for cell in 0..a {
            let Some(&npts) = list.get(pos) else {
                return Err(Error::parse(
                    self.c.file(),
                    Location::Line(line),
                    format!("CELLS claims {a} cells, but its list of size {b} ends at cell {cell}"),
                ));
            };
            let ids = list.get(pos + 1..pos + 1 + npts).ok_or_else(|| {
                Error::parse(
                    self.c.file(),
                    Location::Line(line),
                    format!("cell {cell} has {npts} nodes, past the end of the list of size {b}"),
                )
            })?;
            starts.push(conn.len());
            conn.extend_from_slice(ids);
            pos += 1 + npts;
        }
        starts.push(conn.len());
        if pos != list.len() {
            return Err(Error::parse(
                self.c.file(),
                Location::Line(line),
                format!("CELLS claims a list of size {b}, but its {a} cells use {pos}"),
            ));
        }
        Ok((starts, conn))
    }

    /// Skips `FIELD name k` and its `k` arrays.
    fn skip_field(&mut self) -> Result<()> {
        self.c.token()?; // name
        let arrays = self.count("number of field arrays")?;
        for _ in 0..arrays {
            self.c.token()?; // array name
            let components = self.count("number of components")?;
            let tuples = self.count("number of tuples")?;
            let ty = self.scalar_type()?;
            let count = components.saturating_mul(tuples);
            self.skip_values(ty, count, "field value")?;
            if self.peek_keyword().as_deref() == Some("METADATA") {
                self.c.token()?;
                self.skip_metadata()?;
            }
        }
        Ok(())
    }

    /// Skips a `METADATA` block: lines up to the next empty line.
    fn skip_metadata(&mut self) -> Result<()> {
        self.c.line_text()?; // rest of the METADATA line
        while !self.c.line_text()?.trim().is_empty() {}
        Ok(())
    }

    /// Skips the attribute arrays of a `POINT_DATA n` or `CELL_DATA n` section (up to the
    /// next keyword that is not an attribute).
    fn skip_attributes(&mut self, n: u64) -> Result<()> {
        let times = |k: u64| n.saturating_mul(k);
        while let Some(word) = self.peek_keyword() {
            match word.as_str() {
                "SCALARS" => {
                    self.c.token()?;
                    self.c.token()?; // name
                    let ty = self.scalar_type()?;
                    let mut components = 1;
                    if let Some(k) = self.peek_keyword().and_then(|w| w.parse::<u64>().ok()) {
                        self.c.token()?;
                        components = k;
                    }
                    if self.peek_keyword().as_deref() == Some("LOOKUP_TABLE") {
                        self.c.token()?;
                        self.c.token()?; // table name
                    }
                    self.skip_values(ty, times(components), "scalar")?;
                }
                "COLOR_SCALARS" => {
                    self.c.token()?;
                    self.c.token()?;
                    let k = self.count("number of color components")?;
                    let ty = if self.binary {
                        ScalarType::U8
                    } else {
                        ScalarType::F32
                    };
                    self.skip_values(ty, times(k), "color component")?;
                }
                "LOOKUP_TABLE" => {
                    self.c.token()?;
                    self.c.token()?;
                    let size = self.count("lookup table size")?;
                    let ty = if self.binary {
                        ScalarType::U8
                    } else {
                        ScalarType::F32
                    };
                    self.skip_values(ty, size.saturating_mul(4), "color")?;
                }
                "VECTORS" | "NORMALS" | "TENSORS" | "TENSORS6" | "GLOBAL_IDS" | "PEDIGREE_IDS" => {
                    self.c.token()?;
                    self.c.token()?;
                    let ty = self.scalar_type()?;
                    let per = match word.as_str() {
                        "VECTORS" | "NORMALS" => 3,
                        "TENSORS" => 9,
                        "TENSORS6" => 6,
                        _ => 1,
                    };
                    self.skip_values(ty, times(per), "attribute value")?;
                }
                "TEXTURE_COORDINATES" => {
                    self.c.token()?;
                    self.c.token()?;
                    let dim = self.count("texture dimension")?;
                    let ty = self.scalar_type()?;
                    self.skip_values(ty, times(dim), "texture coordinate")?;
                }
                "FIELD" => {
                    self.c.token()?;
                    self.skip_field()?;
                }
                "METADATA" => {
                    self.c.token()?;
                    self.skip_metadata()?;
                }
                _ => break,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
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
        let header = "# vtk DataFile Version 2.0\ntest\nBINARY\nDATASET UNSTRUCTURED_GRID\nPOINTS 5 double\n";
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
}
