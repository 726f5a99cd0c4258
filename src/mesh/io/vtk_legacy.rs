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

mod sections;

use super::Cursor;
use super::vtk_cells::{in_file, sort_cells};
use super::vtk_scalar::ScalarType;
use sections::Reader;

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

#[cfg(test)]
mod tests;
