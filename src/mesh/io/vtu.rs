//! VTK XML unstructured grids (`.vtu`): a reader of `ascii` and inline base64 `binary` data
//! arrays, and the writer of the ParaView frames of a simulation.
//!
//! The writer stores the mesh's named groups as 0/1 `UInt8` arrays (`node_group:NAME` in
//! `PointData`, `tetra_group:NAME` and `triangle_group:NAME` in `CellData`), which the reader
//! turns back into groups, so a written file read back gives the same [`Mesh`] exactly.

use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use roxmltree::Node;

use crate::error::{Error, Location, Result};
use crate::math::Vec3;
use crate::mesh::{Groups, Mesh};

use super::vtk_cells::{CellKind, VTK_TETRA, VTK_TRIANGLE, in_file, sort_cells};
use super::vtk_scalar::{ScalarType, Value};
use super::{Cursor, Endian};

/// Prefix of the `PointData` arrays holding node groups.
pub const NODE_GROUP_PREFIX: &str = "node_group:";
/// Prefix of the `CellData` arrays holding tetrahedron groups.
pub const TETRA_GROUP_PREFIX: &str = "tetra_group:";
/// Prefix of the `CellData` arrays holding triangle groups.
pub const TRIANGLE_GROUP_PREFIX: &str = "triangle_group:";

/// Reads a VTK XML unstructured grid from `data`, the content of the file called `file`.
///
/// Data arrays may be `ascii` or inline base64 `binary` (uncompressed, with a `UInt32` or
/// `UInt64` size header, either byte order); points `Float32`/`Float64` (or integers),
/// connectivity and offsets of any integer type, cell types `UInt8`. Type-10 cells become
/// tetrahedra, type-5 cells triangles, other cells are skipped. The group arrays written by
/// [`write_vtu`] become the mesh's [`Groups`]; other arrays are ignored. Compressed and
/// appended data, and several pieces, are refused with a clear [`Error::Parse`].
pub fn read_vtu(file: &str, data: &[u8]) -> Result<Mesh> {
    let text = std::str::from_utf8(data).map_err(|e| {
        Error::parse(
            file,
            Location::Byte(e.valid_up_to()),
            "VTU file is not valid UTF-8 text",
        )
    })?;
    let doc = roxmltree::Document::parse(text).map_err(|e| {
        Error::parse(
            file,
            Location::Line(e.pos().row as usize),
            format!("invalid XML: {e}"),
        )
    })?;
    let xml = Xml { file, doc: &doc };
    let root = doc.root_element();
    if root.tag_name().name() != "VTKFile" {
        return Err(xml.err(root, "root element is not <VTKFile>"));
    }
    let kind = root.attribute("type").unwrap_or("");
    if kind != "UnstructuredGrid" {
        return Err(xml.err(
            root,
            format!("unsupported dataset type `{kind}` (only UnstructuredGrid is read)"),
        ));
    }
    if let Some(compressor) = root.attribute("compressor") {
        return Err(xml.err(
            root,
            format!(
                "compressed VTU is not supported (compressor {compressor}); write it uncompressed"
            ),
        ));
    }
    let endian = match root.attribute("byte_order").unwrap_or("LittleEndian") {
        "LittleEndian" => Endian::Little,
        "BigEndian" => Endian::Big,
        other => return Err(xml.err(root, format!("unknown byte_order `{other}`"))),
    };
    let header = match root.attribute("header_type").unwrap_or("UInt32") {
        "UInt32" => ScalarType::U32,
        "UInt64" => ScalarType::U64,
        other => return Err(xml.err(root, format!("unsupported header_type `{other}`"))),
    };
    let arrays = Arrays {
        xml,
        endian,
        header,
    };

    let grid = xml.child(root, "UnstructuredGrid")?;
    let pieces: Vec<Node> = grid
        .children()
        .filter(|n| n.has_tag_name("Piece"))
        .collect();
    let [piece] = pieces.as_slice() else {
        return Err(xml.err(
            grid,
            format!(
                "{} <Piece> elements; only single-piece files are read",
                pieces.len()
            ),
        ));
    };
    let piece = *piece;
    let point_count = xml.count_attribute(piece, "NumberOfPoints")?;
    let cell_count = xml.count_attribute(piece, "NumberOfCells")?;

    let points_node = xml.child(piece, "Points")?;
    let points_array = xml.child(points_node, "DataArray")?;
    if xml.components(points_array)? != 3 {
        return Err(xml.err(points_array, "points must have NumberOfComponents=\"3\""));
    }
    let mut coordinates = Vec::new();
    arrays.read(
        points_array,
        Some(point_count.saturating_mul(3)),
        "point coordinate",
        |value, at| {
            let x = value.real();
            if !x.is_finite() {
                return Err(Error::parse(
                    file,
                    at,
                    format!("point coordinate is not finite ({x})"),
                ));
            }
            coordinates.push(x);
            Ok(())
        },
    )?;
    let positions: Vec<Vec3> = coordinates
        .chunks_exact(3)
        .map(|p| Vec3::new(p[0], p[1], p[2]))
        .collect();

    let (starts, connectivity, types, cells_location) =
        match piece.children().find(|n| n.has_tag_name("Cells")) {
            Some(cells) => {
                let named = |name: &str| {
                    cells
                        .children()
                        .find(|n| n.has_tag_name("DataArray") && n.attribute("Name") == Some(name))
                        .ok_or_else(|| xml.err(cells, format!("no `{name}` DataArray in <Cells>")))
                };
                let offsets_node = named("offsets")?;
                let mut starts = vec![0];
                arrays.read_indices(offsets_node, Some(cell_count), "cell offset", &mut starts)?;
                if starts.windows(2).any(|w| w[0] > w[1]) {
                    return Err(xml.err(offsets_node, "cell offsets decrease"));
                }
                let conn_node = named("connectivity")?;
                let total = starts.last().copied().unwrap_or(0) as u64;
                let mut connectivity = Vec::new();
                arrays.read_indices(conn_node, Some(total), "cell node", &mut connectivity)?;
                let types_node = named("types")?;
                let mut types = Vec::new();
                arrays.read(types_node, Some(cell_count), "cell type", |value, at| {
                    let t = value.int().and_then(|t| u8::try_from(t).ok());
                    let t = t.ok_or_else(|| {
                        Error::parse(file, at, format!("unknown cell type {value:?}"))
                    })?;
                    types.push(t);
                    Ok(())
                })?;
                (starts, connectivity, types, xml.location(conn_node))
            }
            None if cell_count == 0 => (vec![0], Vec::new(), Vec::new(), Location::Whole),
            None => return Err(xml.err(piece, "no <Cells> element")),
        };
    let sorted = sort_cells(
        file,
        cells_location,
        positions.len(),
        &starts,
        &connectivity,
        &types,
    )?;

    let mut groups = Groups::default();
    if let Some(point_data) = piece.children().find(|n| n.has_tag_name("PointData")) {
        for (name, node) in data_arrays(point_data, NODE_GROUP_PREFIX) {
            let mut list = Vec::new();
            arrays.read_flags(node, point_count, |i| {
                list.push(i);
                Ok(())
            })?;
            groups.nodes.insert(name.to_string(), list);
        }
    }
    if let Some(cell_data) = piece.children().find(|n| n.has_tag_name("CellData")) {
        for (prefix, tetra) in [(TETRA_GROUP_PREFIX, true), (TRIANGLE_GROUP_PREFIX, false)] {
            for (name, node) in data_arrays(cell_data, prefix) {
                let mut list = Vec::new();
                arrays.read_flags(node, cell_count, |cell| match (sorted.kinds[cell], tetra) {
                    (CellKind::Tetrahedron(t), true) | (CellKind::Triangle(t), false) => {
                        list.push(t);
                        Ok(())
                    }
                    _ => Err(xml.err(
                        node,
                        format!(
                            "group `{name}` holds cell {cell}, which is not a {}",
                            if tetra { "tetrahedron" } else { "triangle" }
                        ),
                    )),
                })?;
                let map = if tetra {
                    &mut groups.tetrahedra
                } else {
                    &mut groups.triangles
                };
                map.insert(name.to_string(), list);
            }
        }
    }
    Mesh::new(positions, sorted.tetrahedra, sorted.triangles, groups).map_err(|e| in_file(file, e))
}

/// The `DataArray` children of `parent` whose name starts with `prefix`, with the rest of
/// the name.
fn data_arrays<'a, 'i>(
    parent: Node<'a, 'i>,
    prefix: &'static str,
) -> impl Iterator<Item = (&'a str, Node<'a, 'i>)> {
    parent.children().filter_map(move |n| {
        let name = n.attribute("Name")?.strip_prefix(prefix)?;
        n.has_tag_name("DataArray").then_some((name, n))
    })
}

/// The parsed document and the file's name, for element look-ups and errors.
#[derive(Clone, Copy)]
struct Xml<'d, 'i> {
    file: &'d str,
    doc: &'d roxmltree::Document<'i>,
}

impl<'d, 'i> Xml<'d, 'i> {
    /// The line where `node` starts.
    fn location(&self, node: Node) -> Location {
        Location::Line(self.doc.text_pos_at(node.range().start).row as usize)
    }

    /// A parse error at the line of `node`.
    fn err(&self, node: Node, message: impl Into<String>) -> Error {
        Error::parse(self.file, self.location(node), message)
    }

    /// The first child element of `node` called `name`.
    fn child(&self, node: Node<'d, 'i>, name: &str) -> Result<Node<'d, 'i>> {
        node.children()
            .find(|n| n.has_tag_name(name))
            .ok_or_else(|| {
                self.err(
                    node,
                    format!("<{}> has no <{name}> element", node.tag_name().name()),
                )
            })
    }

    /// A non-negative integer attribute.
    fn count_attribute(&self, node: Node, name: &str) -> Result<u64> {
        let value = node
            .attribute(name)
            .ok_or_else(|| self.err(node, format!("missing attribute {name}")))?;
        value.trim().parse().map_err(|_| {
            self.err(
                node,
                format!("{name}=\"{value}\" is not a non-negative integer"),
            )
        })
    }

    /// The `NumberOfComponents` of a data array (1 when absent).
    fn components(&self, node: Node) -> Result<u64> {
        match node.attribute("NumberOfComponents") {
            None => Ok(1),
            Some(_) => self.count_attribute(node, "NumberOfComponents"),
        }
    }
}

/// Decoder of `DataArray` contents.
struct Arrays<'d, 'i> {
    xml: Xml<'d, 'i>,
    endian: Endian,
    header: ScalarType,
}

impl Arrays<'_, '_> {
    /// Decodes the values of the data array `node`, calling `each` with every value and where
    /// it was read. With `expected` given, the array must hold exactly that many values; the
    /// count is checked against the payload before anything is sized by it.
    fn read(
        &self,
        node: Node,
        expected: Option<u64>,
        what: &str,
        mut each: impl FnMut(Value, Location) -> Result<()>,
    ) -> Result<()> {
        let xml = self.xml;
        let name = node.attribute("Name").unwrap_or("(unnamed)");
        let type_name = node.attribute("type").unwrap_or("");
        let ty = ScalarType::from_xml(type_name).ok_or_else(|| {
            xml.err(
                node,
                format!("DataArray `{name}` has unsupported type `{type_name}`"),
            )
        })?;
        let (text, text_start, text_line) = match node.first_child().filter(|n| n.is_text()) {
            Some(t) => (
                t.text().unwrap_or(""),
                t.range().start,
                xml.doc.text_pos_at(t.range().start).row as usize,
            ),
            None => ("", node.range().end, 0),
        };
        match node.attribute("format").unwrap_or("ascii") {
            "ascii" => {
                let mut c = Cursor::new(xml.file, text.as_bytes()).with_line(text_line);
                let mut count = 0u64;
                while !c.at_end() {
                    if expected.is_some_and(|n| count >= n) {
                        return Err(c.err_line(format!(
                            "DataArray `{name}` holds more than the {} {what}s expected",
                            expected.unwrap_or(0)
                        )));
                    }
                    let value = ty.parse_next(&mut c, what)?;
                    each(value, Location::Line(c.line()))?;
                    count += 1;
                }
                if let Some(n) = expected.filter(|&n| n != count) {
                    return Err(xml.err(
                        node,
                        format!("DataArray `{name}` holds {count} {what}s, expected {n}"),
                    ));
                }
                Ok(())
            }
            "binary" => {
                // Sizes are reported at the first character of the payload.
                let at = Location::Byte(text_start + text.len() - text.trim_start().len());
                let err = |message: String| Error::parse(xml.file, at, message);
                let bytes = decode_base64(text).map_err(|(offset, message)| {
                    Error::parse(
                        xml.file,
                        Location::Byte(text_start + offset),
                        format!("bad base64 in DataArray `{name}`: {message}"),
                    )
                })?;
                let hsize = self.header.size();
                if bytes.len() < hsize {
                    return Err(err(format!(
                        "DataArray `{name}` is too short for its {hsize}-byte size header"
                    )));
                }
                let declared = self.header.decode(&bytes[..hsize], self.endian).int();
                let payload = &bytes[hsize..];
                if declared != Some(payload.len() as i128) {
                    return Err(err(format!(
                        "DataArray `{name}` header declares {declared:?} bytes, but {} follow",
                        payload.len()
                    )));
                }
                if payload.len() % ty.size() != 0 {
                    return Err(err(format!(
                        "DataArray `{name}` holds {} bytes, not a whole number of {type_name} values",
                        payload.len()
                    )));
                }
                let count = (payload.len() / ty.size()) as u64;
                if let Some(n) = expected.filter(|&n| n != count) {
                    return Err(err(format!(
                        "DataArray `{name}` holds {count} {what}s, expected {n}"
                    )));
                }
                for value in payload.chunks_exact(ty.size()) {
                    each(ty.decode(value, self.endian), at)?;
                }
                Ok(())
            }
            "appended" => Err(xml.err(
                node,
                "appended data (<AppendedData>) is not supported; write inline ascii or binary",
            )),
            other => Err(xml.err(node, format!("unknown DataArray format `{other}`"))),
        }
    }

    /// Appends the non-negative integer values of `node` to `out`.
    fn read_indices(
        &self,
        node: Node,
        expected: Option<u64>,
        what: &str,
        out: &mut Vec<usize>,
    ) -> Result<()> {
        let file = self.xml.file;
        self.read(node, expected, what, |value, at| {
            let index = value.int().and_then(|i| usize::try_from(i).ok());
            out.push(index.ok_or_else(|| {
                Error::parse(
                    file,
                    at,
                    format!("{what} must be a non-negative integer, found {value:?}"),
                )
            })?);
            Ok(())
        })
    }

    /// Calls `set` with the index of every non-zero entry of the one-component array `node`
    /// of `count` entries (a group flag array).
    fn read_flags(
        &self,
        node: Node,
        count: u64,
        mut set: impl FnMut(usize) -> Result<()>,
    ) -> Result<()> {
        if self.xml.components(node)? != 1 {
            return Err(self.xml.err(node, "group arrays must have one component"));
        }
        let mut i = 0;
        self.read(node, Some(count), "group flag", |value, _| {
            if value.real() != 0.0 {
                set(i)?;
            }
            i += 1;
            Ok(())
        })
    }
}

/// Decodes base64 `text`, ignoring whitespace. Concatenated encodings (VTK encodes the size
/// header and the data separately, each with its own padding) are decoded chunk by chunk.
/// Errors give the offset in `text` and a message.
fn decode_base64(text: &str) -> std::result::Result<Vec<u8>, (usize, String)> {
    let compact: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    // Offset in `text` of the `k`-th non-whitespace byte, for error messages.
    let offset_in_text = |k: usize| {
        text.bytes()
            .enumerate()
            .filter(|(_, b)| !b.is_ascii_whitespace())
            .nth(k)
            .map_or(text.len(), |(i, _)| i)
    };
    let mut out = Vec::with_capacity(compact.len() / 4 * 3);
    let mut start = 0;
    while start < compact.len() {
        let mut end = compact[start..]
            .iter()
            .position(|&b| b == b'=')
            .map_or(compact.len(), |i| start + i);
        while compact.get(end) == Some(&b'=') {
            end += 1;
        }
        BASE64
            .decode_vec(&compact[start..end], &mut out)
            .map_err(|e| {
                let k = match e {
                    base64::DecodeError::InvalidByte(i, _)
                    | base64::DecodeError::InvalidLastSymbol { offset: i, .. } => start + i,
                    _ => start,
                };
                (offset_in_text(k), e.to_string())
            })?;
        start = end;
    }
    Ok(out)
}

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
/// which [`read_vtu`] reads back into groups: `read_vtu(write_vtu(m, None, …))` equals `m`.
///
/// Panics if `positions` or a field does not have one entry per node (a caller bug).
pub fn write_vtu(
    mesh: &Mesh,
    positions: Option<&[Vec3]>,
    point_fields: &[(&str, &[Vec3])],
    encoding: VtuEncoding,
) -> Vec<u8> {
    let n = mesh.node_count();
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

#[cfg(test)]
mod tests {
    use super::*;

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
            format!(
                "t.vtu: byte {at}: DataArray `(unnamed)` holds 14 point coordinates, expected 15"
            )
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
}
