//! Sorting the cells of a VTK unstructured grid into the tetrahedra and triangles of a
//! [`Mesh`](crate::mesh::Mesh), shared by the legacy and XML readers.

use crate::error::{Error, Location, Result};

/// VTK cell type of a linear triangle.
pub(crate) const VTK_TRIANGLE: u8 = 5;
/// VTK cell type of a linear tetrahedron.
pub(crate) const VTK_TETRA: u8 = 10;

/// What one VTK cell became.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CellKind {
    /// Tetrahedron number `.0` of the mesh.
    Tetrahedron(usize),
    /// Triangle number `.0` of the mesh.
    Triangle(usize),
    /// A cell of another type (vertex, line, hexahedron, …), skipped.
    Skipped,
}

/// The cells of a grid sorted by kind.
#[derive(Debug, Default)]
pub(crate) struct SortedCells {
    pub tetrahedra: Vec<[usize; 4]>,
    pub triangles: Vec<[usize; 3]>,
    /// For each VTK cell, what it became.
    pub kinds: Vec<CellKind>,
}

/// Sorts the cells given as `starts` (cell `i` uses `connectivity[starts[i]..starts[i + 1]]`,
/// so `starts` has one more entry than `types`) into tetrahedra (type 10) and triangles
/// (type 5); other types are skipped. Every node index must be below `point_count`. Errors
/// are reported at `location` of `file`.
pub(crate) fn sort_cells(
    file: &str,
    location: Location,
    point_count: usize,
    starts: &[usize],
    connectivity: &[usize],
    types: &[u8],
) -> Result<SortedCells> {
    assert_eq!(
        starts.len(),
        types.len() + 1,
        "one start per cell plus the end"
    );
    let err = |message: String| Error::parse(file, location, message);
    let mut out = SortedCells {
        kinds: Vec::with_capacity(types.len()),
        ..SortedCells::default()
    };
    for (cell, &ty) in types.iter().enumerate() {
        let (start, end) = (starts[cell], starts[cell + 1]);
        if start > end || end > connectivity.len() {
            return Err(err(format!(
                "cell {cell} spans connectivity entries {start}..{end}, outside the {} entries",
                connectivity.len()
            )));
        }
        let nodes = &connectivity[start..end];
        if let Some(&bad) = nodes.iter().find(|&&v| v >= point_count) {
            return Err(err(format!(
                "cell {cell} refers to node {bad}, but the file has {point_count} points"
            )));
        }
        let wrong_size = |expected: usize| {
            err(format!(
                "cell {cell} of type {ty} has {} nodes, expected {expected}",
                nodes.len()
            ))
        };
        let kind = match ty {
            VTK_TETRA => {
                let tet: [usize; 4] = nodes.try_into().map_err(|_| wrong_size(4))?;
                out.tetrahedra.push(tet);
                CellKind::Tetrahedron(out.tetrahedra.len() - 1)
            }
            VTK_TRIANGLE => {
                let tri: [usize; 3] = nodes.try_into().map_err(|_| wrong_size(3))?;
                out.triangles.push(tri);
                CellKind::Triangle(out.triangles.len() - 1)
            }
            _ => CellKind::Skipped,
        };
        out.kinds.push(kind);
    }
    Ok(out)
}

/// Turns a [`Error::Invalid`] from [`Mesh::new`](crate::mesh::Mesh::new) (a degenerate
/// tetrahedron, say) into a parse error naming the file.
pub(crate) fn in_file(file: &str, error: Error) -> Error {
    match error {
        Error::Invalid { what, message } => {
            Error::parse(file, Location::Whole, format!("{what}: {message}"))
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_sorted_by_type_and_checked() {
        let starts = [0, 1, 3, 6, 10];
        let conn = [0, 0, 1, 0, 1, 2, 0, 1, 2, 3];
        let types = [1, 3, 5, 10];
        let s = sort_cells("f", Location::Whole, 4, &starts, &conn, &types).unwrap();
        assert_eq!(s.tetrahedra, vec![[0, 1, 2, 3]]);
        assert_eq!(s.triangles, vec![[0, 1, 2]]);
        assert_eq!(
            s.kinds,
            vec![
                CellKind::Skipped,
                CellKind::Skipped,
                CellKind::Triangle(0),
                CellKind::Tetrahedron(0)
            ]
        );
        let err = sort_cells("f", Location::Line(9), 3, &starts, &conn, &types).unwrap_err();
        assert_eq!(
            err.to_string(),
            "f: line 9: cell 3 refers to node 3, but the file has 3 points"
        );
        let err = sort_cells("f", Location::Whole, 4, &starts, &conn, &[1, 3, 10, 10]);
        assert!(
            err.unwrap_err()
                .to_string()
                .contains("cell 2 of type 10 has 3 nodes")
        );
    }
}
