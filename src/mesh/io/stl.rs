//! STL reader (ASCII and binary) for rigid obstacle surfaces. STL stores a triangle soup;
//! corners with identical coordinates are welded into shared vertices
//! ([`crate::mesh::weld_triangle_soup`]). The facet normals of the file are ignored: the
//! orientation is the corners' order (right-hand rule), as the format specifies.
//!
//! A binary file is recognised by its size (84 + 50 × the count at byte 80); anything else
//! that starts with `solid` is read as ASCII. Errors name the file and the line (ASCII) or
//! byte (binary).

use crate::error::{Error, Location, Result};
use crate::math::Vec3;
use crate::mesh::{TriangleSurface, weld_triangle_soup};

/// Reads the STL bytes of the file `file` (named in errors) into a checked surface.
pub fn read_stl(file: &str, data: &[u8]) -> Result<TriangleSurface> {
    let corners = if is_binary(data) {
        read_binary(file, data)?
    } else if data.trim_ascii_start().starts_with(b"solid") {
        read_ascii(file, data)?
    } else if data.len() >= 84 {
        let count = u32::from_le_bytes([data[80], data[81], data[82], data[83]]) as u64;
        return Err(Error::parse(
            file,
            Location::Byte(80),
            format!(
                "binary STL header announces {count} triangles ({} bytes) but the file has {} bytes",
                84 + 50 * count,
                data.len()
            ),
        ));
    } else {
        return Err(Error::parse(
            file,
            Location::Byte(0),
            "not an STL file (neither `solid …` ASCII nor an 84-byte binary header)",
        ));
    };
    let (vertices, triangles) = weld_triangle_soup(&corners);
    TriangleSurface::new(file, vertices, triangles)
}

fn is_binary(data: &[u8]) -> bool {
    if data.len() < 84 {
        return false;
    }
    let count = u32::from_le_bytes([data[80], data[81], data[82], data[83]]) as u64;
    data.len() as u64 == 84 + 50 * count
}

fn read_binary(file: &str, data: &[u8]) -> Result<Vec<[Vec3; 3]>> {
    let count = (data.len() - 84) / 50;
    let f = |at: usize| -> Result<f64> {
        let x = f32::from_le_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
        if x.is_finite() {
            Ok(x as f64)
        } else {
            Err(Error::parse(
                file,
                Location::Byte(at),
                "coordinate is not finite",
            ))
        }
    };
    (0..count)
        .map(|k| {
            let base = 84 + 50 * k + 12;
            let mut tri = [Vec3::zeros(); 3];
            for (c, p) in tri.iter_mut().enumerate() {
                let at = base + 12 * c;
                *p = Vec3::new(f(at)?, f(at + 4)?, f(at + 8)?);
            }
            Ok(tri)
        })
        .collect()
}

fn read_ascii(file: &str, data: &[u8]) -> Result<Vec<[Vec3; 3]>> {
    let text = std::str::from_utf8(data).map_err(|e| {
        Error::parse(
            file,
            Location::Byte(e.valid_up_to()),
            "ASCII STL is not valid UTF-8 text",
        )
    })?;
    let err = |line: usize, msg: String| Error::parse(file, Location::Line(line), msg);
    let mut out = Vec::new();
    let mut corners: Vec<Vec3> = Vec::with_capacity(3);
    // States: 0 outside a solid, 1 in a solid, 2 in a facet, 3 in its loop, 4 loop closed.
    let mut state = 0;
    let mut last = 0;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        last = n;
        let mut words = line.split_whitespace();
        let Some(key) = words.next() else { continue };
        match (state, key) {
            (0, "solid") => state = 1,
            (1, "endsolid") => state = 0,
            (1, "facet") => state = 2,
            (2, "outer") => {
                if words.next() != Some("loop") {
                    return Err(err(n, "expected `outer loop`".into()));
                }
                corners.clear();
                state = 3;
            }
            (3, "vertex") => {
                let mut p = [0.0; 3];
                for x in &mut p {
                    let w = words
                        .next()
                        .ok_or_else(|| err(n, "`vertex` needs three coordinates".into()))?;
                    *x = w
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite())
                        .ok_or_else(|| err(n, format!("bad coordinate `{w}`")))?;
                }
                if corners.len() == 3 {
                    return Err(err(n, "a facet has more than three vertices".into()));
                }
                corners.push(Vec3::from(p));
            }
            (3, "endloop") => {
                if corners.len() != 3 {
                    return Err(err(
                        n,
                        format!("a facet has {} vertices, expected 3", corners.len()),
                    ));
                }
                out.push([corners[0], corners[1], corners[2]]);
                state = 4;
            }
            (4, "endfacet") => state = 1,
            (_, other) => {
                let expected = [
                    "`solid`",
                    "`facet` or `endsolid`",
                    "`outer loop`",
                    "`vertex` or `endloop`",
                    "`endfacet`",
                ][state];
                return Err(err(n, format!("unexpected `{other}`, expected {expected}")));
            }
        }
    }
    if state != 0 {
        return Err(err(
            last,
            "file ends inside a solid (missing `endsolid`?)".into(),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRI: &str = "solid t\n facet normal 0 0 1\n  outer loop\n   vertex 0 0 0\n   vertex 1 0 0\n   vertex 0 1 0\n  endloop\n endfacet\nendsolid t\n";

    fn binary(tris: &[[[f32; 3]; 3]]) -> Vec<u8> {
        let mut b = vec![b'x'; 80];
        b.extend_from_slice(&(tris.len() as u32).to_le_bytes());
        for t in tris {
            b.extend_from_slice(&[0u8; 12]);
            for p in t {
                for x in p {
                    b.extend_from_slice(&x.to_le_bytes());
                }
            }
            b.extend_from_slice(&[0u8; 2]);
        }
        b
    }

    #[test]
    fn ascii_and_binary_read_the_same_triangle() {
        let a = read_stl("a.stl", TRI.as_bytes()).unwrap();
        let b = read_stl(
            "b.stl",
            &binary(&[[[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]),
        )
        .unwrap();
        assert_eq!(a, b);
        assert_eq!(a.triangles, vec![[0, 1, 2]]);
        assert_eq!(a.vertices[1], Vec3::x());
    }

    #[test]
    fn bad_stl_names_the_place() {
        let bad = TRI.replace("vertex 1 0 0", "vertex 1 zero 0");
        let e = read_stl("a.stl", bad.as_bytes()).unwrap_err().to_string();
        assert!(e.starts_with("a.stl: line 5: bad coordinate `zero`"), "{e}");
        let bad = TRI.replace("   vertex 0 1 0\n", "");
        let e = read_stl("a.stl", bad.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("line 6") && e.contains("2 vertices"), "{e}");
        let e = read_stl("a.stl", b"solid empty\nendsolid empty\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("empty mesh"), "{e}");
        let e = read_stl("a.stl", &TRI.as_bytes()[..60])
            .unwrap_err()
            .to_string();
        assert!(e.contains("ends inside"), "{e}");
        // A binary header announcing more triangles than the file holds.
        let mut b = binary(&[[[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]);
        b[80] = 7;
        let e = read_stl("b.stl", &b).unwrap_err().to_string();
        assert!(
            e.starts_with("b.stl: byte 80: binary STL header announces 7"),
            "{e}"
        );
        let b = binary(&[[[0.0; 3], [f32::NAN, 0.0, 0.0], [0.0, 1.0, 0.0]]]);
        let e = read_stl("b.stl", &b).unwrap_err().to_string();
        assert!(e.starts_with("b.stl: byte 108:"), "{e}");
        let e = read_stl("b.stl", &binary(&[])).unwrap_err().to_string();
        assert!(e.contains("empty mesh"), "{e}");
        assert!(read_stl("c.stl", b"hello").is_err());
    }
}
