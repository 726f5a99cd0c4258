//! A triangle surface as a VTK XML unstructured grid (`.vtu`, ASCII): the ParaView frames of
//! rigid bodies (their collision shapes, tessellated and placed in the world).

use crate::math::Vec3;

/// The `.vtu` text of the triangles `triangles` (VTK type 5) over `vertices` (m), with one
/// 3-component point field per entry of `point_fields` (e.g. `velocity`, m/s).
///
/// Panics if a triangle indexes past `vertices` or a field has another length (caller bugs).
pub fn write_surface_vtu(
    vertices: &[Vec3],
    triangles: &[[usize; 3]],
    point_fields: &[(&str, &[Vec3])],
) -> Vec<u8> {
    use std::fmt::Write;
    let n = vertices.len();
    assert!(
        triangles.iter().flatten().all(|&i| i < n),
        "write_surface_vtu: index"
    );
    let mut s = String::new();
    s.push_str("<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n<UnstructuredGrid>\n");
    let _ = writeln!(
        s,
        "<Piece NumberOfPoints=\"{n}\" NumberOfCells=\"{}\">",
        triangles.len()
    );
    s.push_str("<PointData>\n");
    for (name, field) in point_fields {
        assert_eq!(field.len(), n, "write_surface_vtu: field `{name}` length");
        let _ = writeln!(
            s,
            "<DataArray type=\"Float64\" Name=\"{}\" NumberOfComponents=\"3\" format=\"ascii\">",
            super::escape_xml(name)
        );
        for v in *field {
            let _ = writeln!(s, "{:e} {:e} {:e}", v.x, v.y, v.z);
        }
        s.push_str("</DataArray>\n");
    }
    s.push_str("</PointData>\n<Points>\n<DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">\n");
    for p in vertices {
        let _ = writeln!(s, "{:e} {:e} {:e}", p.x, p.y, p.z);
    }
    s.push_str("</DataArray>\n</Points>\n<Cells>\n<DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n");
    for t in triangles {
        let _ = writeln!(s, "{} {} {}", t[0], t[1], t[2]);
    }
    s.push_str("</DataArray>\n<DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n");
    for k in 1..=triangles.len() {
        let _ = writeln!(s, "{}", 3 * k);
    }
    s.push_str("</DataArray>\n<DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">\n");
    for _ in triangles {
        s.push_str("5\n");
    }
    s.push_str("</DataArray>\n</Cells>\n</Piece>\n</UnstructuredGrid>\n</VTKFile>\n");
    s.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_triangle_reads_back_as_its_points_and_cell() {
        let v = [Vec3::zeros(), Vec3::x(), Vec3::y()];
        let bytes = write_surface_vtu(&v, &[[0, 1, 2]], &[("velocity", &v)]);
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.contains("NumberOfPoints=\"3\" NumberOfCells=\"1\""));
        assert!(text.contains("Name=\"velocity\""));
        assert!(text.contains("\n0 1 2\n"));
    }
}
