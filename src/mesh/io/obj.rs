//! Wavefront OBJ reader for rigid obstacle surfaces: `v x y z [w]` vertices and `f` faces
//! (`i`, `i/t`, `i//n`, `i/t/n`; 1-based, negative = relative to the end), polygons split
//! into triangle fans from their first corner. Other statements (`vn`, `vt`, `o`, `g`, `s`,
//! `usemtl`, `mtllib`, `l`, …) are ignored. Errors name the file and the line.

use crate::error::{Error, Location, Result};
use crate::math::Vec3;
use crate::mesh::TriangleSurface;

/// Reads the OBJ bytes of the file `file` (named in errors) into a checked surface.
pub fn read_obj(file: &str, data: &[u8]) -> Result<TriangleSurface> {
    let text = std::str::from_utf8(data).map_err(|e| {
        Error::parse(
            file,
            Location::Byte(e.valid_up_to()),
            "OBJ is not valid UTF-8 text",
        )
    })?;
    let err = |line: usize, msg: String| Error::parse(file, Location::Line(line), msg);
    let mut vertices = Vec::new();
    let mut triangles = Vec::new();
    let mut corners = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.split('#').next().unwrap_or("");
        let mut words = line.split_whitespace();
        match words.next() {
            Some("v") => {
                let mut p = [0.0; 3];
                for x in &mut p {
                    let w = words
                        .next()
                        .ok_or_else(|| err(n, "`v` needs three coordinates".into()))?;
                    *x = w
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite())
                        .ok_or_else(|| err(n, format!("bad coordinate `{w}`")))?;
                }
                vertices.push(Vec3::from(p));
            }
            Some("f") => {
                corners.clear();
                for w in words {
                    let first = w.split('/').next().unwrap_or("");
                    let k: i64 = first
                        .parse()
                        .map_err(|_| err(n, format!("bad vertex index `{w}`")))?;
                    let count = vertices.len() as i64;
                    let index = if k > 0 { k - 1 } else { count + k };
                    if k == 0 || !(0..count).contains(&index) {
                        return Err(err(
                            n,
                            format!("vertex index {k} out of range ({count} vertices so far)"),
                        ));
                    }
                    corners.push(index as usize);
                }
                if corners.len() < 3 {
                    return Err(err(
                        n,
                        format!("a face needs at least 3 vertices, got {}", corners.len()),
                    ));
                }
                for j in 1..corners.len() - 1 {
                    triangles.push([corners[0], corners[j], corners[j + 1]]);
                }
            }
            _ => {}
        }
    }
    TriangleSurface::new(file, vertices, triangles)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quads_are_split_and_indices_resolved() {
        let text = "# a unit square\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvn 0 0 1\nf 1//1 2//1 3//1 4//1\nf -4 -2 -1\n";
        let s = read_obj("q.obj", text.as_bytes()).unwrap();
        assert_eq!(s.triangles, vec![[0, 1, 2], [0, 2, 3], [0, 2, 3]]);
        assert_eq!(s.vertices[2], Vec3::new(1.0, 1.0, 0.0));
    }

    #[test]
    fn bad_obj_names_the_line() {
        let e = read_obj("q.obj", b"v 0 0 0\nv 1 0\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("q.obj: line 2: `v` needs three"), "{e}");
        let e = read_obj("q.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("q.obj: line 4: vertex index 4 out of range"),
            "{e}"
        );
        let e = read_obj("q.obj", b"v 0 0 0\nf 1 1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("at least 3"), "{e}");
        let e = read_obj("q.obj", b"v 0 0 0\nv 1 0 0\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("empty mesh"), "{e}");
        let e = read_obj("q.obj", b"v 0 0 x\n").unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("`x`"), "{e}");
    }
}
