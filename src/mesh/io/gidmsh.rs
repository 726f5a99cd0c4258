//! Reader of GiD ASCII mesh files (`.gidmsh`, `.msh` exported by GiD), as used by the SOFA
//! Tripod example.
//!
//! A file holds one or more blocks, each opened by a header line
//! `MESH ["name"] dimension 3 ElemType Tetrahedra Nnode 4`, then optionally
//! `Coordinates` … `End Coordinates` (lines `id x y z`; `id x y` in dimension 2) and
//! `Elements` … `End Elements` (lines `id n1 … nNnode [material]`). Ids are 1-based and need
//! not be contiguous; all blocks share one node numbering. Linear tetrahedra become the
//! mesh's tetrahedra, linear triangles its triangles; other element types are skipped.
//! Lines starting with `#` are comments.

use std::collections::HashMap;

use crate::error::{Error, Location, Result};
use crate::math::Vec3;
use crate::mesh::{Groups, Mesh};

use super::Cursor;
use super::vtk_cells::in_file;

/// What the elements of the current `MESH` block become.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Tetrahedra,
    Triangles,
    Skipped,
}

/// The header of a `MESH` block.
#[derive(Debug, Clone, Copy)]
struct Block {
    dimension: usize,
    kind: Kind,
    nodes_per_element: usize,
}

/// Reads a GiD ASCII mesh from `data`, the content of the file called `file`.
///
/// Positions are returned as stored (the file's unit). Malformed input is an
/// [`Error::Parse`] naming the line.
pub fn read_gidmsh(file: &str, data: &[u8]) -> Result<Mesh> {
    let mut c = Cursor::new(file, data);
    let mut index_of_id: HashMap<u64, usize> = HashMap::new();
    let mut positions: Vec<Vec3> = Vec::new();
    // Elements by node id, with the line each was read on (ids resolve at the end, as a
    // later block may define nodes).
    let mut tets: Vec<([u64; 4], usize)> = Vec::new();
    let mut tris: Vec<([u64; 3], usize)> = Vec::new();
    let mut block: Option<Block> = None;
    let err = |line: usize, message: String| Error::parse(file, Location::Line(line), message);

    while c.remaining() > 0 {
        let line_no = c.line();
        let line = c.line_text()?.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let first = line.split_whitespace().next().unwrap_or("");
        if first.eq_ignore_ascii_case("MESH") {
            block = Some(parse_header(line).map_err(|m| err(line_no, m))?);
        } else if first.eq_ignore_ascii_case("Coordinates") {
            let b = block.ok_or_else(|| err(line_no, "Coordinates before any MESH line".into()))?;
            loop {
                let n = c.line();
                if c.remaining() == 0 {
                    return Err(err(
                        n,
                        "unexpected end of file, expected `End Coordinates`".into(),
                    ));
                }
                let text = c.line_text()?.trim();
                if text.is_empty() || text.starts_with('#') {
                    continue;
                }
                if is_end(text, "Coordinates") {
                    break;
                }
                let values: Vec<&str> = text.split_whitespace().collect();
                if values.len() != 1 + b.dimension {
                    return Err(err(
                        n,
                        format!(
                            "a node line holds an id and {} coordinates, found `{text}`",
                            b.dimension
                        ),
                    ));
                }
                let id = parse_id(values[0]).map_err(|m| err(n, m))?;
                let mut p = Vec3::zeros();
                for (k, v) in values[1..].iter().enumerate() {
                    let x: f64 = v
                        .parse()
                        .map_err(|_| err(n, format!("expected a coordinate, found `{v}`")))?;
                    if !x.is_finite() {
                        return Err(err(
                            n,
                            format!("coordinate of node {id} is not finite ({x})"),
                        ));
                    }
                    p[k] = x;
                }
                if index_of_id.insert(id, positions.len()).is_some() {
                    return Err(err(n, format!("node {id} is defined twice")));
                }
                positions.push(p);
            }
        } else if first.eq_ignore_ascii_case("Elements") {
            let b = block.ok_or_else(|| err(line_no, "Elements before any MESH line".into()))?;
            loop {
                let n = c.line();
                if c.remaining() == 0 {
                    return Err(err(
                        n,
                        "unexpected end of file, expected `End Elements`".into(),
                    ));
                }
                let text = c.line_text()?.trim();
                if text.is_empty() || text.starts_with('#') {
                    continue;
                }
                if is_end(text, "Elements") {
                    break;
                }
                let values: Vec<&str> = text.split_whitespace().collect();
                let k = b.nodes_per_element;
                if values.len() != 1 + k && values.len() != 2 + k {
                    return Err(err(
                        n,
                        format!(
                            "an element line holds an id, {k} node ids and an optional material, found `{text}`"
                        ),
                    ));
                }
                let mut ids = [0u64; 4];
                if b.kind != Kind::Skipped {
                    for (slot, v) in ids.iter_mut().zip(&values[1..=k]) {
                        *slot = parse_id(v).map_err(|m| err(n, m))?;
                    }
                }
                match b.kind {
                    Kind::Tetrahedra => tets.push((ids, n)),
                    Kind::Triangles => tris.push(([ids[0], ids[1], ids[2]], n)),
                    Kind::Skipped => {}
                }
            }
        } else {
            return Err(err(
                line_no,
                format!("expected MESH, Coordinates or Elements, found `{first}`"),
            ));
        }
    }
    if block.is_none() {
        return Err(err(1, "no MESH header (not a GiD mesh file)".into()));
    }
    let resolve = |id: u64, line: usize| {
        index_of_id
            .get(&id)
            .copied()
            .ok_or_else(|| err(line, format!("element refers to undefined node {id}")))
    };
    let tetrahedra = tets
        .iter()
        .map(|(ids, line)| {
            Ok([
                resolve(ids[0], *line)?,
                resolve(ids[1], *line)?,
                resolve(ids[2], *line)?,
                resolve(ids[3], *line)?,
            ])
        })
        .collect::<Result<Vec<_>>>()?;
    let triangles = tris
        .iter()
        .map(|(ids, line)| {
            Ok([
                resolve(ids[0], *line)?,
                resolve(ids[1], *line)?,
                resolve(ids[2], *line)?,
            ])
        })
        .collect::<Result<Vec<_>>>()?;
    Mesh::new(positions, tetrahedra, triangles, Groups::default()).map_err(|e| in_file(file, e))
}

/// Whether `text` is `End <what>` (case-insensitive, any spacing).
fn is_end(text: &str, what: &str) -> bool {
    let mut words = text.split_whitespace();
    words.next().is_some_and(|w| w.eq_ignore_ascii_case("End"))
        && words.next().is_some_and(|w| w.eq_ignore_ascii_case(what))
        && words.next().is_none()
}

/// A positive node id.
fn parse_id(token: &str) -> std::result::Result<u64, String> {
    match token.parse::<u64>() {
        Ok(id) if id > 0 => Ok(id),
        _ => Err(format!("expected a positive node id, found `{token}`")),
    }
}

/// Parses `MESH ["name"] dimension D ElemType T Nnode N` (keys in any case and order; the
/// name may hold spaces inside its quotes).
fn parse_header(line: &str) -> std::result::Result<Block, String> {
    // Drop a quoted name so its words cannot be mistaken for keys.
    let unquoted: String = line.split('"').step_by(2).collect::<Vec<_>>().join(" ");
    let words: Vec<&str> = unquoted.split_whitespace().collect();
    let value = |key: &str| {
        words
            .iter()
            .position(|w| w.eq_ignore_ascii_case(key))
            .and_then(|i| words.get(i + 1).copied())
            .ok_or_else(|| format!("MESH header without `{key} <value>`"))
    };
    let dimension = match value("dimension")? {
        "2" => 2,
        "3" => 3,
        d => return Err(format!("MESH dimension must be 2 or 3, found `{d}`")),
    };
    let elem_type = value("ElemType")?.to_ascii_lowercase();
    let nodes_per_element: usize = value("Nnode")?
        .parse()
        .ok()
        .filter(|&n| (1..=64).contains(&n))
        .ok_or_else(|| "MESH Nnode must be a number of nodes from 1 to 64".to_string())?;
    let kind = match (elem_type.as_str(), nodes_per_element) {
        ("tetrahedra", 4) => Kind::Tetrahedra,
        ("triangle", 3) => Kind::Triangles,
        ("tetrahedra", n) | ("triangle", n) => {
            return Err(format!(
                "{elem_type} with {n} nodes are not supported (only linear elements)"
            ));
        }
        _ => Kind::Skipped,
    };
    Ok(Block {
        dimension,
        kind,
        nodes_per_element,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TET: &str = "MESH dimension 3 ElemType Tetrahedra Nnode 4
Coordinates
    1 0 0 0
    2 1 0 0
    3 0 1 0
   10 0 0 1
End Coordinates

Elements
7 1 2 3 10 1
End Elements
MESH \"skin mesh\" dimension 3 ElemType Triangle Nnode 3
Coordinates
End Coordinates
Elements
1 1 3 2
End Elements
MESH dimension 3 ElemType Linear Nnode 2
Elements
1 1 2
End Elements
";

    fn err(text: &str) -> String {
        read_gidmsh("t.gidmsh", text.as_bytes())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn blocks_ids_and_element_kinds() {
        let mesh = read_gidmsh("t.gidmsh", TET.as_bytes()).unwrap();
        assert_eq!(mesh.node_count(), 4);
        assert_eq!(mesh.positions()[3], Vec3::z());
        assert_eq!(mesh.tetrahedra(), &[[0, 1, 2, 3]]);
        assert_eq!(mesh.triangles(), &[[0, 2, 1]]);
        assert!((mesh.volume() - 1.0 / 6.0).abs() < 1e-15);
    }

    #[test]
    fn malformed_files_are_errors_naming_the_line() {
        assert_eq!(
            err(&TET.replace("7 1 2 3 10 1", "7 1 2 3 11")),
            "t.gidmsh: line 10: element refers to undefined node 11"
        );
        assert_eq!(
            err(&TET.replace("   10 0 0 1", "   10 0 nan 1")),
            "t.gidmsh: line 6: coordinate of node 10 is not finite (NaN)"
        );
        assert_eq!(
            err(&TET.replace("    3 0 1 0", "    2 0 1 0")),
            "t.gidmsh: line 5: node 2 is defined twice"
        );
        assert!(
            err(&TET.replace("7 1 2 3 10 1", "7 1 2 3"))
                .starts_with("t.gidmsh: line 10: an element line")
        );
        assert!(
            err(&TET.replace("    2 1 0 0", "    2 1 0"))
                .starts_with("t.gidmsh: line 4: a node line")
        );
        assert_eq!(
            err(&TET.replace("7 1 2 3 10 1", "7 1 0 3 10")),
            "t.gidmsh: line 10: expected a positive node id, found `0`"
        );
        assert_eq!(
            err(&TET.replace("Nnode 4", "Nnode 10")),
            "t.gidmsh: line 1: tetrahedra with 10 nodes are not supported (only linear elements)"
        );
        assert_eq!(
            err(&TET.replace("dimension 3 ElemType Tet", "ElemType Tet")),
            "t.gidmsh: line 1: MESH header without `dimension <value>`"
        );
        assert_eq!(
            err(&TET[..TET.find("End Coordinates").unwrap()]),
            "t.gidmsh: line 7: unexpected end of file, expected `End Coordinates`"
        );
        assert_eq!(
            err(&TET.replace("Elements\n7", "Element\n7")),
            "t.gidmsh: line 9: expected MESH, Coordinates or Elements, found `Element`"
        );
        assert_eq!(
            err("Coordinates\n1 0 0 0\nEnd Coordinates\n"),
            "t.gidmsh: line 1: Coordinates before any MESH line"
        );
        assert_eq!(
            err(""),
            "t.gidmsh: line 1: no MESH header (not a GiD mesh file)"
        );
        for end in 0..TET.len() {
            let _ = read_gidmsh("t.gidmsh", &TET.as_bytes()[..end]);
        }
    }

    /// Every single-byte corruption of a valid input gives an error or a mesh, never a panic.
    #[test]
    fn corrupted_bytes_never_panic() {
        for input in [TET.as_bytes().to_vec()] {
            for i in 0..input.len() {
                for b in [0u8, b'9', b' ', b'\n', b'-', b'=', b'"', b'<', 0xff] {
                    let mut x = input.clone();
                    x[i] = b;
                    let _ = read_gidmsh("t.gidmsh", &x);
                }
            }
        }
    }
}
