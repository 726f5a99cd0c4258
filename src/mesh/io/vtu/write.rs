//! The `.vtu` writer of meshes and simulation frames.

use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use crate::math::Vec3;
use crate::mesh::Mesh;

use super::super::vtk_cells::{VTK_TETRA, VTK_TRIANGLE};
use super::{NODE_GROUP_PREFIX, TETRA_GROUP_PREFIX, TRIANGLE_GROUP_PREFIX};

/// Encoding of the data arrays [`write_vtu`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VtuEncoding {
    /// Human-readable text; reals printed with Rust's shortest round-trip formatting, so
    /// reading them back gives the same `f64` bits.
    Ascii,
    /// Inline base64 of little-endian values with a `UInt64` size header (exact, smaller).
    Binary,
}

/// A VTK XML 1.0 unstructured grid (`.vtu`) of `mesh`, as the bytes of the file.
///
/// Cells are the tetrahedra (VTK type 10) then the triangles (type 5), as `Int64`
/// connectivity. Points are `positions` (the deformed configuration, one per node of the
/// mesh; the mesh's own positions when `None`) as `Float64`; `point_fields` are written as
/// 3-component `Float64` point arrays with the given names (e.g. `velocity` in m/s,
/// `displacement` in m). The mesh's groups are written as 0/1 `UInt8` arrays named
/// `node_group:NAME` (point data), `tetra_group:NAME` and `triangle_group:NAME` (cell data),
/// which `read_vtu` reads back into groups: `read_vtu(write_vtu(m, None, …))` equals `m`.
///
/// Panics if `positions` or a field does not have one entry per node (a caller bug).
pub fn write_vtu(
    mesh: &Mesh,
    positions: Option<&[Vec3]>,
    point_fields: &[(&str, &[Vec3])],
    encoding: VtuEncoding,
) -> Vec<u8> {
    write_vtu_with_scalars(mesh, positions, point_fields, &[], encoding)
}

/// [`write_vtu`] with `point_scalars` too: 1-component `Float64` point arrays with the given
/// names (e.g. `von_mises` in Pa), after the vector fields. Panics if one does not have one
/// value per node.
pub fn write_vtu_with_scalars(
    mesh: &Mesh,
    positions: Option<&[Vec3]>,
    point_fields: &[(&str, &[Vec3])],
    point_scalars: &[(&str, &[f64])],
    encoding: VtuEncoding,
) -> Vec<u8> {
    let n = mesh.node_count();
    for (name, field) in point_scalars {
        assert_eq!(
            field.len(),
            n,
            "write_vtu: field `{name}` needs one value per node"
        );
    }
    let positions = positions.unwrap_or(mesh.positions());
    assert_eq!(positions.len(), n, "write_vtu: one position per node");
    for (name, field) in point_fields {
        assert_eq!(
            field.len(),
            n,
            "write_vtu: field `{name}` needs one value per node"
        );
    }
    let tets = mesh.tetrahedra();
    let tris = mesh.triangles();
    let cell_count = tets.len() + tris.len();
    let groups = mesh.groups();
    let mut w = Writer {
        out: String::new(),
        encoding,
    };
    w.out.push_str("<?xml version=\"1.0\"?>\n");
    w.out.push_str(
        "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n",
    );
    w.out.push_str("  <UnstructuredGrid>\n");
    let _ = writeln!(
        w.out,
        "    <Piece NumberOfPoints=\"{n}\" NumberOfCells=\"{cell_count}\">"
    );

    w.out.push_str("      <PointData>\n");
    for (name, field) in point_fields {
        w.reals(name, 3, field.iter().flat_map(|v| [v.x, v.y, v.z]));
    }
    for (name, field) in point_scalars {
        w.reals(name, 1, field.iter().copied());
    }
    for (name, list) in &groups.nodes {
        w.flags(&format!("{NODE_GROUP_PREFIX}{name}"), n, 0, list);
    }
    w.out.push_str("      </PointData>\n");

    w.out.push_str("      <CellData>\n");
    for (name, list) in &groups.tetrahedra {
        w.flags(&format!("{TETRA_GROUP_PREFIX}{name}"), cell_count, 0, list);
    }
    for (name, list) in &groups.triangles {
        let name = format!("{TRIANGLE_GROUP_PREFIX}{name}");
        w.flags(&name, cell_count, tets.len(), list);
    }
    w.out.push_str("      </CellData>\n");

    w.out.push_str("      <Points>\n");
    w.reals("Points", 3, positions.iter().flat_map(|v| [v.x, v.y, v.z]));
    w.out.push_str("      </Points>\n");

    w.out.push_str("      <Cells>\n");
    let connectivity = tets
        .iter()
        .flat_map(|t| t.iter())
        .chain(tris.iter().flat_map(|t| t.iter()))
        .map(|&v| v as i64);
    w.ints("connectivity", connectivity);
    let offsets = (1..=tets.len())
        .map(|i| 4 * i as i64)
        .chain((1..=tris.len()).map(|i| (4 * tets.len() + 3 * i) as i64));
    w.ints("offsets", offsets);
    let types = std::iter::repeat_n(VTK_TETRA, tets.len())
        .chain(std::iter::repeat_n(VTK_TRIANGLE, tris.len()));
    w.bytes("types", types);
    w.out.push_str("      </Cells>\n");

    w.out
        .push_str("    </Piece>\n  </UnstructuredGrid>\n</VTKFile>\n");
    w.out.into_bytes()
}

/// Accumulates the XML text of a VTU file.
struct Writer {
    out: String,
    encoding: VtuEncoding,
}

impl Writer {
    fn open(&mut self, type_name: &str, name: &str, components: usize) {
        let format = match self.encoding {
            VtuEncoding::Ascii => "ascii",
            VtuEncoding::Binary => "binary",
        };
        let _ = write!(
            self.out,
            "        <DataArray type=\"{type_name}\" Name=\"{}\"",
            escape_xml(name)
        );
        if components != 1 {
            let _ = write!(self.out, " NumberOfComponents=\"{components}\"");
        }
        let _ = writeln!(self.out, " format=\"{format}\">");
    }

    fn close(&mut self) {
        self.out.push_str("\n        </DataArray>\n");
    }

    /// Writes the base64 of a `UInt64` byte count followed by `data`.
    fn base64(&mut self, data: &[u8]) {
        let mut block = Vec::with_capacity(8 + data.len());
        block.extend((data.len() as u64).to_le_bytes());
        block.extend_from_slice(data);
        self.out.push_str("          ");
        BASE64.encode_string(&block, &mut self.out);
    }

    /// Writes the text of `values`, `per_line` to a line.
    fn text<T: std::fmt::Debug>(&mut self, values: impl Iterator<Item = T>, per_line: usize) {
        for (i, v) in values.enumerate() {
            self.out.push_str(if i % per_line == 0 {
                "\n          "
            } else {
                " "
            });
            let _ = write!(self.out, "{v:?}");
        }
    }

    fn reals(&mut self, name: &str, components: usize, values: impl Iterator<Item = f64>) {
        self.open("Float64", name, components);
        match self.encoding {
            VtuEncoding::Ascii => self.text(values, components.max(1)),
            VtuEncoding::Binary => {
                let data: Vec<u8> = values.flat_map(f64::to_le_bytes).collect();
                self.base64(&data);
            }
        }
        self.close();
    }

    fn ints(&mut self, name: &str, values: impl Iterator<Item = i64>) {
        self.open("Int64", name, 1);
        match self.encoding {
            VtuEncoding::Ascii => self.text(values, 12),
            VtuEncoding::Binary => {
                let data: Vec<u8> = values.flat_map(i64::to_le_bytes).collect();
                self.base64(&data);
            }
        }
        self.close();
    }

    fn bytes(&mut self, name: &str, values: impl Iterator<Item = u8>) {
        self.open("UInt8", name, 1);
        match self.encoding {
            VtuEncoding::Ascii => self.text(values, 40),
            VtuEncoding::Binary => {
                let data: Vec<u8> = values.collect();
                self.base64(&data);
            }
        }
        self.close();
    }

    /// A 0/1 array of `len` entries with ones at `first + i` for the `i` in `members`.
    fn flags(&mut self, name: &str, len: usize, first: usize, members: &[usize]) {
        let mut flags = vec![0u8; len];
        for &i in members {
            flags[first + i] = 1;
        }
        self.bytes(name, flags.into_iter());
    }
}

/// `text` with the XML special characters (and line breaks and tabs, which attribute
/// normalisation would turn into spaces) escaped, for an attribute value.
pub(crate) fn escape_xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
    out
}
