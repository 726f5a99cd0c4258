//! The `.vtu` reader: `ascii` and inline base64 `binary` data arrays.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use roxmltree::Node;

use crate::error::{Error, Location, Result};
use crate::math::Vec3;
use crate::mesh::{Groups, Mesh};

use super::super::vtk_cells::{CellKind, in_file, sort_cells};
use super::super::vtk_scalar::{ScalarType, Value};
use super::super::{Cursor, Endian};
use super::{NODE_GROUP_PREFIX, TETRA_GROUP_PREFIX, TRIANGLE_GROUP_PREFIX};

/// Reads a VTK XML unstructured grid from `data`, the content of the file called `file`.
///
/// Data arrays may be `ascii` or inline base64 `binary` (uncompressed, with a `UInt32` or
/// `UInt64` size header, either byte order); points `Float32`/`Float64` (or integers),
/// connectivity and offsets of any integer type, cell types `UInt8`. Type-10 cells become
/// tetrahedra, type-5 cells triangles, other cells are skipped. The group arrays written by
/// `write_vtu` become the mesh's [`Groups`]; other arrays are ignored. Compressed and
/// appended data, and several pieces, are refused with a clear [`Error::Parse`].
pub fn read_vtu(file: &str, data: &[u8]) -> Result<Mesh> {
    with_piece(file, data, |xml, arrays, piece| {
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

        let (starts, connectivity, types, cells_location) = match piece
            .children()
            .find(|n| n.has_tag_name("Cells"))
        {
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
                    arrays.read_flags(node, cell_count, |cell| {
                        match (sorted.kinds[cell], tetra) {
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
                        }
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
        Mesh::new(positions, sorted.tetrahedra, sorted.triangles, groups)
            .map_err(|e| in_file(file, e))
    })
}

/// Reads the 3-component point array `name` of the VTU `data` (the content of the file called
/// `file`), one vector per point in the file's unit (e.g. `displacement` in m as
/// `write_vtu` writes it); `None` when the file has no such array.
pub fn read_vtu_point_vectors(file: &str, data: &[u8], name: &str) -> Result<Option<Vec<Vec3>>> {
    Ok(read_point_array(file, data, name, 3)?.map(|values| {
        values
            .chunks_exact(3)
            .map(|v| Vec3::new(v[0], v[1], v[2]))
            .collect()
    }))
}

/// The 1-component point array `name` of the VTU `data` (the content of `file`), one value
/// per point, or `None` when the file has no such array (e.g. `von_mises`, Pa). Errors as
/// [`read_vtu_point_vectors`].
pub fn read_vtu_point_scalars(file: &str, data: &[u8], name: &str) -> Result<Option<Vec<f64>>> {
    read_point_array(file, data, name, 1)
}

/// The point array `name` of `components` components, flattened.
fn read_point_array(
    file: &str,
    data: &[u8],
    name: &str,
    components: u64,
) -> Result<Option<Vec<f64>>> {
    with_piece(file, data, |xml, arrays, piece| {
        let point_count = xml.count_attribute(piece, "NumberOfPoints")?;
        let Some(node) = piece
            .children()
            .find(|n| n.has_tag_name("PointData"))
            .and_then(|d| {
                d.children()
                    .find(|n| n.has_tag_name("DataArray") && n.attribute("Name") == Some(name))
            })
        else {
            return Ok(None);
        };
        if xml.components(node)? != components {
            return Err(xml.err(
                node,
                format!("point array `{name}` must have {components} components"),
            ));
        }
        let mut values = Vec::new();
        arrays.read(
            node,
            Some(point_count.saturating_mul(components)),
            name,
            |value, _| {
                values.push(value.real());
                Ok(())
            },
        )?;
        Ok(Some(values))
    })
}

/// Parses `data` (the content of `file`) as a single-piece VTU and calls `f` with the
/// document, the array decoder and the `<Piece>` element.
fn with_piece<T>(
    file: &str,
    data: &[u8],
    f: impl FnOnce(Xml, &Arrays, Node) -> Result<T>,
) -> Result<T> {
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
    f(xml, &arrays, *piece)
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
