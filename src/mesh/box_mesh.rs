//! A structured box tetrahedraliser for tests and benchmarks.

use crate::error::{Error, Result};
use crate::math::Vec3;

use super::{Groups, Mesh};

/// A box `[min, max]` split into `nx × ny × nz` hexahedral cells, each cut into 6 tetrahedra
/// around its main diagonal (Kuhn / Freudenthal split, conforming between cells). Gives
/// (nx+1)(ny+1)(nz+1) nodes and 6·nx·ny·nz tetrahedra; node `(i, j, k)` has index
/// `i + (nx+1)(j + (ny+1)k)`. Node groups `xmin`, `xmax`, `ymin`, `ymax`, `zmin`, `zmax`
/// hold the nodes of each face; the tetrahedron group `body` holds them all.
pub fn box_mesh(cells: [usize; 3], min: [f64; 3], max: [f64; 3]) -> Result<Mesh> {
    let [nx, ny, nz] = cells;
    if nx == 0 || ny == 0 || nz == 0 {
        return Err(Error::invalid(
            "box mesh",
            format!("needs at least one cell per axis, got {cells:?}"),
        ));
    }
    if (0..3).any(|a| !(max[a] > min[a])) {
        return Err(Error::invalid(
            "box mesh",
            format!("max {max:?} must exceed min {min:?} on every axis"),
        ));
    }
    let id = |i: usize, j: usize, k: usize| i + (nx + 1) * (j + (ny + 1) * k);
    let mut positions = Vec::with_capacity((nx + 1) * (ny + 1) * (nz + 1));
    for k in 0..=nz {
        for j in 0..=ny {
            for i in 0..=nx {
                let t = [
                    i as f64 / nx as f64,
                    j as f64 / ny as f64,
                    k as f64 / nz as f64,
                ];
                positions.push(Vec3::from_fn(|a, _| min[a] + t[a] * (max[a] - min[a])));
            }
        }
    }
    // The 6 tetrahedra of the unit cube sharing the diagonal 0 → 7 (corner c = x + 2y + 4z):
    // one per permutation of the axes, walking 0 → 7 along unit edges.
    const PATHS: [[usize; 4]; 6] = [
        [0, 1, 3, 7],
        [0, 1, 5, 7],
        [0, 2, 3, 7],
        [0, 2, 6, 7],
        [0, 4, 5, 7],
        [0, 4, 6, 7],
    ];
    let mut tetrahedra = Vec::with_capacity(6 * nx * ny * nz);
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let corner = |c: usize| id(i + (c & 1), j + ((c >> 1) & 1), k + ((c >> 2) & 1));
                for path in PATHS {
                    tetrahedra.push(path.map(corner));
                }
            }
        }
    }
    let mut groups = Groups::default();
    let n = [nx, ny, nz];
    for (axis, names) in [["xmin", "xmax"], ["ymin", "ymax"], ["zmin", "zmax"]]
        .iter()
        .enumerate()
    {
        for (side, name) in names.iter().enumerate() {
            let fixed = if side == 0 { 0 } else { n[axis] };
            let nodes = (0..positions.len())
                .filter(|&v| {
                    let ijk = [
                        v % (nx + 1),
                        (v / (nx + 1)) % (ny + 1),
                        v / ((nx + 1) * (ny + 1)),
                    ];
                    ijk[axis] == fixed
                })
                .collect();
            groups.nodes.insert(name.to_string(), nodes);
        }
    }
    groups
        .tetrahedra
        .insert("body".into(), (0..tetrahedra.len()).collect());
    Mesh::new(positions, tetrahedra, Vec::new(), groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_volume_and_faces_match_the_box() {
        let mesh = box_mesh([3, 2, 5], [-1.0, 0.0, 2.0], [2.0, 0.5, 3.0]).unwrap();
        assert_eq!(mesh.node_count(), 4 * 3 * 6);
        assert_eq!(mesh.tetrahedra().len(), 6 * 30);
        assert!((mesh.volume() - 3.0 * 0.5 * 1.0).abs() < 1e-13);
        // Every tetrahedron of the split has the same volume, 1/6 of its cell.
        let cell = 1.0 * 0.25 * 0.2;
        for t in mesh.tetrahedra() {
            let v =
                super::super::tet_mesh::six_signed_volume(t.map(|v| &mesh.positions()[v])) / 6.0;
            assert!((v - cell / 6.0).abs() < 1e-15);
        }
        assert_eq!(mesh.groups().nodes["xmin"].len(), 3 * 6);
        assert!(
            mesh.groups().nodes["zmax"]
                .iter()
                .all(|&v| mesh.positions()[v].z == 3.0)
        );
    }

    #[test]
    fn bad_boxes_are_errors() {
        assert!(box_mesh([0, 1, 1], [0.0; 3], [1.0; 3]).is_err());
        assert!(box_mesh([1, 1, 1], [0.0; 3], [1.0, 0.0, 1.0]).is_err());
    }
}
