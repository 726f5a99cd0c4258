//! The tetrahedral mesh: positions, 4-node tetrahedra, 3-node triangles and named groups.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::math::Vec3;

/// Named groups of mesh entities (gmsh physical groups and the like). Each list holds indices
/// into the matching array of the [`Mesh`], sorted ascending and without duplicates.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Groups {
    /// Groups of nodes (gmsh physical groups of dimension 0).
    pub nodes: BTreeMap<String, Vec<usize>>,
    /// Groups of triangles (physical surfaces; e.g. a clamped face or a pneumatic cavity).
    pub triangles: BTreeMap<String, Vec<usize>>,
    /// Groups of tetrahedra (physical volumes).
    pub tetrahedra: BTreeMap<String, Vec<usize>>,
}

/// A tetrahedral mesh. Invariants, checked by [`Mesh::new`]: every coordinate is finite, every
/// element refers to an existing node, every group to existing entities, every tetrahedron
/// has a positive signed volume (negatively oriented ones are re-oriented on construction;
/// degenerate ones are an error), and no two tetrahedra overlap across a face (a folded mesh
/// is an error, see [`crate::mesh::check_not_folded`]). Nodes that belong to no tetrahedron are kept (they keep their
/// row in outputs) but carry no mass.
#[derive(Debug, Clone, PartialEq)]
pub struct Mesh {
    positions: Vec<Vec3>,
    tetrahedra: Vec<[usize; 4]>,
    triangles: Vec<[usize; 3]>,
    groups: Groups,
    /// How many tetrahedra [`Mesh::new`] re-oriented, and the first one's index.
    reoriented: (usize, Option<usize>),
}

/// The summary `diffsoro info` prints (docs/outputs.md).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct MeshInfo {
    /// Number of nodes (all of them, used by a tetrahedron or not).
    pub nodes: usize,
    /// Number of tetrahedra.
    pub tetrahedra: usize,
    /// Number of triangles of the boundary surface of the tetrahedra.
    pub surface_triangles: usize,
    /// Total volume of the tetrahedra, in the mesh's unit cubed.
    pub volume: f64,
    /// Axis-aligned bounding box of all nodes, `[min, max]`.
    pub bbox: [[f64; 3]; 2],
    /// Entity count of each named group (nodes, triangles or tetrahedra). A name used by
    /// groups of several kinds is suffixed with `@nodes` / `@triangles` for the lower kinds.
    pub physical_groups: BTreeMap<String, usize>,
}

/// Relative threshold under which a tetrahedron counts as degenerate: |6V| ≤ this · ℓ³,
/// with ℓ its longest edge (a regular tetrahedron has 6V/ℓ³ = 1/√2 ≈ 0.71).
pub const DEGENERATE_TOLERANCE: f64 = 1e-10;

/// Six times the signed volume of the tetrahedron (p0, p1, p2, p3): det[p1−p0, p2−p0, p3−p0].
#[inline]
pub fn six_signed_volume(p: [&Vec3; 4]) -> f64 {
    (p[1] - p[0]).cross(&(p[2] - p[0])).dot(&(p[3] - p[0]))
}

impl Mesh {
    /// Builds and validates a mesh; tetrahedra with negative signed volume are re-oriented
    /// (nodes 2 and 3 swapped), group index lists are sorted and deduplicated.
    ///
    /// Errors ([`Error::Invalid`]) name the offending item: `node 7` (non-finite coordinate),
    /// `tetrahedron 12` (unknown node, repeated node, zero volume), `tetrahedra 3 and 17` (they
    /// overlap: a folded mesh), `triangle 3`, `group "clamp"`.
    pub fn new(
        positions: Vec<Vec3>,
        mut tetrahedra: Vec<[usize; 4]>,
        triangles: Vec<[usize; 3]>,
        mut groups: Groups,
    ) -> Result<Mesh> {
        let n = positions.len();
        let mut reoriented = (0, None);
        if let Some(i) = positions
            .iter()
            .position(|p| !p.iter().all(|c| c.is_finite()))
        {
            return Err(Error::invalid(
                format!("node {i}"),
                format!("coordinate is not finite: {:?}", positions[i].as_slice()),
            ));
        }
        for (e, tet) in tetrahedra.iter_mut().enumerate() {
            if let Some(&bad) = tet.iter().find(|&&v| v >= n) {
                return Err(Error::invalid(
                    format!("tetrahedron {e}"),
                    format!("refers to node {bad}, but the mesh has {n} nodes"),
                ));
            }
            let p = tet.map(|v| &positions[v]);
            let six_v = six_signed_volume(p);
            let mut longest: f64 = 0.0;
            for a in 0..4 {
                for b in a + 1..4 {
                    longest = longest.max((p[a] - p[b]).norm());
                }
            }
            if six_v.abs() <= DEGENERATE_TOLERANCE * longest.powi(3) || longest == 0.0 {
                return Err(Error::invalid(
                    format!("tetrahedron {e}"),
                    format!("is degenerate (zero volume), nodes {tet:?}"),
                ));
            }
            if six_v < 0.0 {
                tet.swap(2, 3);
                reoriented.0 += 1;
                reoriented.1.get_or_insert(e);
            }
        }
        super::check_not_folded(&tetrahedra)?;
        for (t, tri) in triangles.iter().enumerate() {
            if let Some(&bad) = tri.iter().find(|&&v| v >= n) {
                return Err(Error::invalid(
                    format!("triangle {t}"),
                    format!("refers to node {bad}, but the mesh has {n} nodes"),
                ));
            }
        }
        let limits = [
            ("node", n),
            ("triangle", triangles.len()),
            ("tetrahedron", tetrahedra.len()),
        ];
        let kinds = [
            &mut groups.nodes,
            &mut groups.triangles,
            &mut groups.tetrahedra,
        ];
        for (map, (kind, len)) in kinds.into_iter().zip(limits) {
            for (name, list) in map.iter_mut() {
                list.sort_unstable();
                list.dedup();
                if let Some(&bad) = list.last().filter(|&&i| i >= len) {
                    return Err(Error::invalid(
                        format!("group \"{name}\""),
                        format!("refers to {kind} {bad}, but the mesh has {len}"),
                    ));
                }
            }
        }
        Ok(Mesh {
            positions,
            tetrahedra,
            triangles,
            groups,
            reoriented,
        })
    }

    /// How many tetrahedra had a negative signed volume in the input and were re-oriented
    /// (nodes 2 and 3 swapped), and the index of the first: worth a warning, since a mesher
    /// that writes inverted elements may have written others wrong too.
    pub fn reoriented(&self) -> (usize, Option<usize>) {
        self.reoriented
    }

    /// Node positions (the mesh's unit; metres once a scene has applied its `scale`).
    pub fn positions(&self) -> &[Vec3] {
        &self.positions
    }

    /// Tetrahedra as node indices, each with positive signed volume.
    pub fn tetrahedra(&self) -> &[[usize; 4]] {
        &self.tetrahedra
    }

    /// Triangles read from the file (surface physical groups, VTK triangle cells), as node
    /// indices. Not the boundary surface: see [`Mesh::boundary_triangles`].
    pub fn triangles(&self) -> &[[usize; 3]] {
        &self.triangles
    }

    /// The named groups.
    pub fn groups(&self) -> &Groups {
        &self.groups
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.positions.len()
    }

    /// The nodes of the group called `name`, whatever its kind (a node group, or the nodes of
    /// a triangle or tetrahedron group), sorted; `None` if no group has that name.
    pub fn group_nodes(&self, name: &str) -> Option<Vec<usize>> {
        let g = &self.groups;
        let mut nodes: Vec<usize> = if let Some(list) = g.nodes.get(name) {
            list.clone()
        } else if let Some(list) = g.triangles.get(name) {
            list.iter().flat_map(|&t| self.triangles[t]).collect()
        } else {
            g.tetrahedra
                .get(name)?
                .iter()
                .flat_map(|&t| self.tetrahedra[t])
                .collect()
        };
        nodes.sort_unstable();
        nodes.dedup();
        Some(nodes)
    }

    /// The names of every group (node, triangle and tetrahedron groups), sorted: what an
    /// error about an unknown group lists.
    pub fn group_names(&self) -> Vec<&String> {
        let g = &self.groups;
        let mut known: Vec<&String> = g
            .nodes
            .keys()
            .chain(g.triangles.keys())
            .chain(g.tetrahedra.keys())
            .collect();
        known.sort();
        known
    }

    /// The mesh with every coordinate multiplied by `factor` (e.g. 0.001 for a mesh in mm).
    pub fn scaled(&self, factor: f64) -> Result<Mesh> {
        if !(factor.is_finite() && factor > 0.0) {
            return Err(Error::invalid(
                "scale",
                format!("must be a positive finite number, got {factor}"),
            ));
        }
        let positions = self.positions.iter().map(|p| p * factor).collect();
        Ok(Mesh {
            positions,
            ..self.clone()
        })
    }

    /// The mesh moved rigidly: every position p becomes `rotation` · p + `translation` (same
    /// unit as the mesh). `rotation` must be a proper rotation (orthonormal, det = +1), which
    /// keeps every tetrahedron's orientation; errors on non-finite input.
    pub fn placed(&self, rotation: &crate::math::Mat3, translation: Vec3) -> Result<Mesh> {
        if !(rotation.iter().all(|v| v.is_finite()) && translation.iter().all(|v| v.is_finite())) {
            return Err(Error::invalid("placement", "must be finite"));
        }
        assert!(
            (rotation.determinant() - 1.0).abs() < 1e-9,
            "Mesh::placed needs a proper rotation"
        );
        let positions = self
            .positions
            .iter()
            .map(|p| rotation * p + translation)
            .collect();
        Ok(Mesh {
            positions,
            ..self.clone()
        })
    }

    /// Total volume of the tetrahedra (unit³).
    pub fn volume(&self) -> f64 {
        self.tetrahedra
            .iter()
            .map(|t| six_signed_volume(t.map(|v| &self.positions[v])) / 6.0)
            .sum()
    }

    /// Axis-aligned bounding box `[min, max]` of all nodes (zeros for an empty mesh).
    pub fn bounding_box(&self) -> [Vec3; 2] {
        let Some(first) = self.positions.first() else {
            return [Vec3::zeros(), Vec3::zeros()];
        };
        self.positions
            .iter()
            .fold([*first, *first], |[lo, hi], p| [lo.inf(p), hi.sup(p)])
    }

    /// The boundary surface of the tetrahedra: triangles with outward normals (right-hand
    /// rule), see [`crate::mesh::boundary_triangles`].
    pub fn boundary_triangles(&self) -> Vec<[usize; 3]> {
        super::boundary_triangles(&self.tetrahedra)
    }

    /// For each node, whether it belongs to at least one tetrahedron (nodes that do not carry
    /// no mass and no stiffness).
    pub fn nodes_in_tetrahedra(&self) -> Vec<bool> {
        let mut used = vec![false; self.positions.len()];
        for t in &self.tetrahedra {
            for &v in t {
                used[v] = true;
            }
        }
        used
    }

    /// The summary `diffsoro info` prints (docs/outputs.md).
    pub fn info(&self) -> MeshInfo {
        let [lo, hi] = self.bounding_box();
        let mut physical_groups = BTreeMap::new();
        let g = &self.groups;
        for (map, suffix) in [
            (&g.tetrahedra, ""),
            (&g.triangles, "@triangles"),
            (&g.nodes, "@nodes"),
        ] {
            for (name, list) in map {
                let key = if physical_groups.contains_key(name) {
                    format!("{name}{suffix}")
                } else {
                    name.clone()
                };
                physical_groups.insert(key, list.len());
            }
        }
        MeshInfo {
            nodes: self.positions.len(),
            tetrahedra: self.tetrahedra.len(),
            surface_triangles: self.boundary_triangles().len(),
            volume: self.volume(),
            bbox: [[lo.x, lo.y, lo.z], [hi.x, hi.y, hi.z]],
            physical_groups,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit_tet() -> Vec<Vec3> {
        vec![Vec3::zeros(), Vec3::x(), Vec3::y(), Vec3::z()]
    }

    #[test]
    fn negatively_oriented_tetrahedra_are_reoriented() {
        let mesh = Mesh::new(unit_tet(), vec![[0, 2, 1, 3]], vec![], Groups::default()).unwrap();
        assert!((mesh.volume() - 1.0 / 6.0).abs() < 1e-15);
        assert_eq!(mesh.tetrahedra()[0], [0, 2, 3, 1]);
        assert_eq!(mesh.reoriented(), (1, Some(0)));
        // Two tetrahedra, the second inverted: counted once, the first index named; a scaled
        // copy keeps the count.
        let mut p = unit_tet();
        p.push(Vec3::new(1.0, 1.0, 1.0));
        let mesh = Mesh::new(
            p,
            vec![[0, 1, 2, 3], [1, 2, 4, 3]],
            vec![],
            Groups::default(),
        );
        let mesh = mesh.unwrap();
        let six_v = six_signed_volume([1, 2, 4, 3].map(|i| &mesh.positions()[i]));
        assert_eq!(
            mesh.reoriented(),
            (usize::from(six_v < 0.0), (six_v < 0.0).then_some(1))
        );
        assert_eq!(mesh.scaled(0.001).unwrap().reoriented(), mesh.reoriented());
    }

    #[test]
    fn degenerate_tetrahedron_is_an_error_naming_its_index() {
        let mut p = unit_tet();
        p.push(Vec3::new(1.0, 1.0, 0.0)); // coplanar with nodes 0, 1, 2
        let err = Mesh::new(
            p,
            vec![[0, 1, 2, 3], [0, 1, 2, 4]],
            vec![],
            Groups::default(),
        )
        .unwrap_err();
        assert!(err.to_string().starts_with("tetrahedron 1:"), "{err}");
    }

    #[test]
    fn bad_node_references_and_coordinates_are_errors() {
        let err = Mesh::new(unit_tet(), vec![[0, 1, 2, 9]], vec![], Groups::default()).unwrap_err();
        assert!(
            err.to_string().contains("tetrahedron 0") && err.to_string().contains("node 9"),
            "{err}"
        );
        let mut p = unit_tet();
        p[2].y = f64::NAN;
        let err = Mesh::new(p, vec![], vec![], Groups::default()).unwrap_err();
        assert!(err.to_string().starts_with("node 2:"), "{err}");
        let mut groups = Groups::default();
        groups.tetrahedra.insert("body".into(), vec![0, 1]);
        let err = Mesh::new(unit_tet(), vec![[0, 1, 2, 3]], vec![], groups).unwrap_err();
        assert!(err.to_string().contains("group \"body\""), "{err}");
    }

    #[test]
    fn free_nodes_are_kept_and_reported() {
        let mut p = unit_tet();
        p.push(Vec3::new(5.0, -1.0, 2.0));
        let mesh = Mesh::new(p, vec![[0, 1, 2, 3]], vec![], Groups::default()).unwrap();
        assert_eq!(mesh.node_count(), 5);
        assert_eq!(
            mesh.nodes_in_tetrahedra(),
            vec![true, true, true, true, false]
        );
        let info = mesh.info();
        assert_eq!(info.bbox, [[0.0, -1.0, 0.0], [5.0, 1.0, 2.0]]);
        assert_eq!(info.surface_triangles, 4);
    }

    #[test]
    fn group_nodes_resolves_every_kind() {
        let mut groups = Groups::default();
        groups.triangles.insert("face".into(), vec![0]);
        groups.nodes.insert("tip".into(), vec![3]);
        let mesh = Mesh::new(unit_tet(), vec![[0, 1, 2, 3]], vec![[2, 1, 0]], groups).unwrap();
        assert_eq!(mesh.group_nodes("face"), Some(vec![0, 1, 2]));
        assert_eq!(mesh.group_nodes("tip"), Some(vec![3]));
        assert_eq!(mesh.group_nodes("nope"), None);
    }
}
