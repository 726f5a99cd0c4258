//! The gmsh MSH reader: formats 2.2 and 4.1, ASCII and binary.
//!
//! What is kept: every node (tags may be sparse and in any order; nodes are numbered in file
//! order), every 4-node tetrahedron (type 4) and 3-node triangle (type 2), and point elements
//! (type 15) as members of node groups. Every other element type (lines, quadrangles,
//! hexahedra, second-order elements, …) is parsed past and dropped. Physical groups become
//! [`Groups`]: a tetrahedron of physical volume P goes to `groups.tetrahedra[name(P)]`, a
//! triangle of a physical surface to `groups.triangles`, the node of a point element to
//! `groups.nodes`; a group without a `$PhysicalNames` entry is named by its number (`"7"`).
//! MSH 2.2 takes an element's physical group from its first tag; MSH 4.1 from the
//! `$Entities` section (an entity may belong to several groups). Elements of the same type on
//! the same nodes are one element (MSH 2.2 repeats an element once per physical group it
//! belongs to). Unknown sections (`$Periodic`, `$NodeData`, `$Comments`, …) are skipped.
//!
//! Format reference: gmsh reference manual, section "MSH file format" (version 4.1) and its
//! "Legacy formats" appendix (version 2.2).

mod fields;
mod v2;
mod v4;

use std::collections::{BTreeMap, HashMap};

use crate::error::{Error, Result};
use crate::math::Vec3;
use crate::mesh::{Groups, Mesh};

use super::{Cursor, Endian};
use fields::Fields;

/// Reads a gmsh MSH file (2.2 or 4.1, ASCII or binary) from its bytes; `file` names it in
/// errors. Coordinates are returned as stored (the file's unit).
///
/// Errors: [`Error::Parse`] naming `file` and the line (ASCII) or byte offset (binary) for
/// malformed input (truncation, counts that disagree with the data, an element referring to
/// an undefined node, a non-finite coordinate, an unsupported version or data size, a bad
/// endianness marker); [`Error::Invalid`] prefixed with `file` when the mesh itself is
/// invalid (a degenerate tetrahedron).
pub fn read_msh(file: &str, data: &[u8]) -> Result<Mesh> {
    let mut c = Cursor::new(file, data);
    c.skip_whitespace();
    if c.rest().starts_with(b"\xEF\xBB\xBF") {
        c.bytes(3)?;
    }
    let (version, binary) = mesh_format(&mut c)?;
    let mut f = Fields { c: &mut c, binary };
    let mut b = Builder::default();
    let mut entities = HashMap::new();
    let (mut seen_nodes, mut seen_elements) = (false, false);
    while !f.c.at_end() {
        let line = f.c.line();
        let section = f.c.token()?;
        if !section.starts_with('$') || section.len() > MAX_SECTION_NAME {
            return Err(f.c.err_line(format!(
                "expected a section header such as `$Nodes`, found `{}`",
                section.chars().take(40).collect::<String>()
            )));
        }
        match section {
            "$PhysicalNames" => physical_names(f.c, &mut b.names)?,
            "$Entities" if version == Version::V41 => v4::entities(&mut f, &mut entities)?,
            "$Nodes" => {
                if std::mem::replace(&mut seen_nodes, true) {
                    return Err(f.c.err_line("second `$Nodes` section"));
                }
                match version {
                    Version::V22 => v2::nodes(&mut f, &mut b)?,
                    Version::V41 => v4::nodes(&mut f, &mut b)?,
                }
            }
            "$Elements" => {
                if std::mem::replace(&mut seen_elements, true) {
                    return Err(f.c.err_line("second `$Elements` section"));
                }
                if !seen_nodes {
                    return Err(f.c.err_line("`$Elements` section before `$Nodes`"));
                }
                match version {
                    Version::V22 => v2::elements(&mut f, &mut b)?,
                    Version::V41 => v4::elements(&mut f, &mut b, &entities)?,
                }
            }
            _ => {
                let end = format!("$End{}", &section[1..]);
                if !f.c.skip_past(end.as_bytes()) {
                    return Err(Error::parse(
                        file,
                        crate::error::Location::Line(line),
                        format!("section `{section}` has no `{end}`"),
                    ));
                }
            }
        }
    }
    if !seen_nodes {
        return Err(f.c.err_line("no `$Nodes` section"));
    }
    if !seen_elements {
        return Err(f.c.err_line("no `$Elements` section"));
    }
    b.finish(file)
}

/// Longest section name accepted (gmsh's longest is `$InterpolationScheme`); bounds the cost
/// of scanning for the end of an unknown section.
const MAX_SECTION_NAME: usize = 64;

/// The MSH versions this reader handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    V22,
    V41,
}

/// Reads `$MeshFormat … $EndMeshFormat`: the version and, for binary files, the byte order
/// given by the endianness marker (the `int` 1 written natively).
fn mesh_format(c: &mut Cursor<'_>) -> Result<(Version, Option<Endian>)> {
    c.expect("$MeshFormat")?;
    let version = c
        .token()
        .map_err(|_| c.err_line("unexpected end of file, expected the MSH version"))?;
    let version = match version {
        "2.2" => Version::V22,
        "4.1" => Version::V41,
        other => {
            return Err(c.err_line(format!(
                "unsupported MSH version {}; this reader handles 2.2 and 4.1",
                other.chars().take(20).collect::<String>()
            )));
        }
    };
    let file_type: u64 = c.parse("file type (0 for ASCII, 1 for binary)")?;
    let data_size: u64 = c.parse("data size")?;
    if data_size != 8 {
        return Err(c.err_line(format!(
            "unsupported data size {data_size}; this reader handles 8-byte doubles"
        )));
    }
    let binary = match file_type {
        0 => None,
        1 => {
            c.skip_line_end();
            let at = c.pos();
            let marker = c.bytes(4)?;
            let marker = [marker[0], marker[1], marker[2], marker[3]];
            if i32::from_le_bytes(marker) == 1 {
                Some(Endian::Little)
            } else if i32::from_be_bytes(marker) == 1 {
                Some(Endian::Big)
            } else {
                return Err(Error::parse(
                    c.file(),
                    crate::error::Location::Byte(at),
                    format!("bad endianness marker {marker:?} (expected the int 1)"),
                ));
            }
        }
        other => {
            return Err(c.err_line(format!(
                "unsupported file type {other} (0 for ASCII, 1 for binary)"
            )));
        }
    };
    c.expect("$EndMeshFormat")?;
    Ok((version, binary))
}

/// Reads `$PhysicalNames` (always text): `count`, then `dim tag "name"` lines.
fn physical_names(c: &mut Cursor<'_>, names: &mut HashMap<(i64, i64), String>) -> Result<()> {
    let n: u64 = c.parse("number of physical names")?;
    let n = c.check_count(n, 4, "physical names")?;
    for _ in 0..n {
        let dim: i64 = c.parse("physical group dimension")?;
        let tag: i64 = c.parse("physical group tag")?;
        let text = c.line_text()?.trim();
        let name = text
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .unwrap_or(text);
        if !name.is_empty() {
            names.insert((dim, tag), name.to_string());
        }
    }
    c.expect("$EndPhysicalNames")
}

/// The number of nodes of gmsh element type `element_type` (from gmsh's
/// `getElementProperties`), `None` for unknown types and types of variable size (polygons).
fn nodes_per_element(element_type: i64) -> Option<usize> {
    #[rustfmt::skip]
    const TABLE: &[(i64, usize)] = &[
        (1, 2), (2, 3), (3, 4), (4, 4), (5, 8), (6, 6), (7, 5), (8, 3), (9, 6), (10, 9),
        (11, 10), (12, 27), (13, 18), (14, 14), (15, 1), (16, 8), (17, 20), (18, 15), (19, 13),
        (20, 9), (21, 10), (22, 12), (23, 15), (24, 15), (25, 21), (26, 4), (27, 5), (28, 6),
        (29, 20), (30, 35), (31, 56), (32, 22), (33, 28), (36, 16), (37, 25), (38, 36),
        (39, 12), (40, 16), (41, 20), (42, 28), (43, 36), (44, 45), (45, 55), (46, 66),
        (47, 49), (48, 64), (49, 81), (50, 100), (51, 121), (52, 18), (53, 21), (54, 24),
        (55, 27), (56, 30), (57, 24), (58, 28), (59, 32), (60, 36), (61, 40), (62, 7), (63, 8),
        (64, 9), (65, 10), (66, 11), (71, 84), (72, 120), (73, 165), (74, 220), (75, 286),
        (79, 34), (80, 40), (81, 46), (82, 52), (83, 58), (84, 1), (85, 1), (86, 1), (87, 1),
        (88, 1), (89, 1), (92, 64), (93, 125), (94, 216), (95, 343), (96, 512), (97, 729),
        (98, 1000), (99, 32), (100, 44), (101, 56), (102, 68), (103, 80), (104, 92),
        (105, 104), (118, 30), (119, 55), (120, 91), (121, 140), (122, 204), (123, 285),
        (124, 385), (125, 21), (126, 29), (127, 37), (128, 45), (129, 53), (130, 61),
        (131, 69), (132, 1), (137, 16),
    ];
    TABLE
        .binary_search_by_key(&element_type, |&(t, _)| t)
        .ok()
        .map(|i| TABLE[i].1)
}

/// gmsh element types this reader keeps.
const TRIANGLE: i64 = 2;
const TETRAHEDRON: i64 = 4;
const POINT: i64 = 15;

/// Accumulates what the sections hold and builds the [`Mesh`].
#[derive(Default)]
struct Builder {
    positions: Vec<Vec3>,
    node_of_tag: HashMap<u64, usize>,
    tetrahedra: Vec<[usize; 4]>,
    tetrahedron_of_nodes: HashMap<[usize; 4], usize>,
    triangles: Vec<[usize; 3]>,
    triangle_of_nodes: HashMap<[usize; 3], usize>,
    /// (dimension, physical tag) → indices of nodes (dim 0), triangles (2) or tetrahedra (3).
    physical: BTreeMap<(i64, i64), Vec<usize>>,
    /// (dimension, physical tag) → name.
    names: HashMap<(i64, i64), String>,
}

impl Builder {
    /// Adds a node; `Err(())` if its tag is already defined.
    fn add_node(&mut self, tag: u64, p: Vec3) -> std::result::Result<(), ()> {
        let index = self.positions.len();
        if self.node_of_tag.insert(tag, index).is_some() {
            return Err(());
        }
        self.positions.push(p);
        Ok(())
    }

    /// The index of the node tagged `tag`.
    fn node(&self, tag: u64) -> Option<usize> {
        self.node_of_tag.get(&tag).copied()
    }

    /// Adds an element of a kept type (`TRIANGLE`, `TETRAHEDRON` or `POINT`) on `nodes` (node
    /// indices, as many as the type has), member of the physical groups `physicals`.
    fn add_element(&mut self, element_type: i64, nodes: &[usize], physicals: &[i64]) {
        let (dim, index) = match element_type {
            POINT => (0, nodes[0]),
            TRIANGLE => {
                let tri = [nodes[0], nodes[1], nodes[2]];
                let mut key = tri;
                key.sort_unstable();
                let next = self.triangles.len();
                let index = *self.triangle_of_nodes.entry(key).or_insert(next);
                if index == next {
                    self.triangles.push(tri);
                }
                (2, index)
            }
            TETRAHEDRON => {
                let tet = [nodes[0], nodes[1], nodes[2], nodes[3]];
                let mut key = tet;
                key.sort_unstable();
                let next = self.tetrahedra.len();
                let index = *self.tetrahedron_of_nodes.entry(key).or_insert(next);
                if index == next {
                    self.tetrahedra.push(tet);
                }
                (3, index)
            }
            _ => unreachable!("add_element called with element type {element_type}"),
        };
        for &p in physicals.iter().filter(|&&p| p != 0) {
            self.physical.entry((dim, p)).or_default().push(index);
        }
    }

    /// Names the groups and validates the mesh.
    fn finish(self, file: &str) -> Result<Mesh> {
        let mut groups = Groups::default();
        for ((dim, tag), list) in self.physical {
            let name = self
                .names
                .get(&(dim, tag))
                .cloned()
                .unwrap_or_else(|| tag.to_string());
            let map = match dim {
                0 => &mut groups.nodes,
                2 => &mut groups.triangles,
                _ => &mut groups.tetrahedra,
            };
            map.entry(name).or_default().extend(list);
        }
        Mesh::new(self.positions, self.tetrahedra, self.triangles, groups).map_err(|e| match e {
            Error::Invalid { what, message } => Error::invalid(format!("{file}: {what}"), message),
            e => e,
        })
    }
}

#[cfg(test)]
mod tests;
