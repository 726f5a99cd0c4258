//! `[soft_body.contact] surface`: a soft body's contact surface given as a file of its own,
//! embedded in the volume mesh (SOFA's collision model under a `BarycentricMapping`, e.g.
//! the Trunk's `trunk_colli.stl`, the servo finger's `finger_surface_contact_in1.stl`). Its
//! vertices, placed as the body's mesh is placed, become the body's contact points, each
//! following its tetrahedron, and its triangles the body's surface in self-contact and
//! contact between bodies (`contact::ContactPoints`; docs/scene-file.md "A contact surface
//! of its own").

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::contact::{ContactPoints, EmbeddedSurface};
use crate::error::{Error, Result};
use crate::mesh::{Mesh, TriangleSurface};

use super::contact::read_obstacle_surface;
use super::embedded_surface::{BodyEmbedding, read_placed_surface};
use crate::scene::file::SoftBodySection;

/// `[soft_body.contact]`: how the body meets obstacles and rigid shapes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SoftContactSection {
    /// A surface file (`.stl`, `.obj`, or a tetrahedral mesh whose boundary is taken),
    /// relative to the scene file, in the mesh file's unit and frame: it gets the body's
    /// `scale`, `rotation` and `translation`. Its vertices, each within the body's
    /// `embed_tolerance` of the mesh, are the body's contact points instead of the boundary
    /// nodes, and its triangles (normals out of the body) its surface in self-contact and
    /// contact between bodies. It need not be closed (a fingertip pad is a patch). A list of
    /// files is one surface of all their triangles (SOFA scenes often give a body several
    /// collision meshes: the Finger's `fingerCollision_part1/2.stl`).
    pub surface: SurfaceFiles,
}

/// One surface file, or several taken together.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum SurfaceFiles {
    /// `surface = "pad.stl"`.
    One(PathBuf),
    /// `surface = ["in1.stl", "in2.stl"]`.
    Many(Vec<PathBuf>),
}

impl SurfaceFiles {
    /// The files with the scene key each is read under (`KEY` or `KEY[i]`).
    fn keyed(&self, key: &str) -> Vec<(String, &PathBuf)> {
        match self {
            SurfaceFiles::One(p) => vec![(key.to_string(), p)],
            SurfaceFiles::Many(ps) => ps
                .iter()
                .enumerate()
                .map(|(i, p)| (format!("{key}[{i}]"), p))
                .collect(),
        }
    }
}

/// The contact points of body `section` on `mesh` (m, placed): its boundary nodes, or its
/// `[soft_body.contact] surface`'s vertices (those its triangles use, in file order) embedded
/// in `mesh` (`embedded_surface::BodyEmbedding`), with a warning when some lie outside it and the scene
/// did not state `embed_tolerance`. `what` is `soft_body.NAME`, `dir` the scene file's folder.
/// Errors name the key: a missing or unreadable file, a vertex farther than `embed_tolerance`
/// from the mesh.
pub(in crate::scene) fn contact_points(
    section: &SoftBodySection,
    mesh: &Mesh,
    what: &str,
    dir: &Path,
) -> Result<(ContactPoints, Option<String>)> {
    let Some(contact) = &section.contact else {
        return Ok((ContactPoints::Nodes, None));
    };
    let key = format!("{what}.contact.surface");
    let files = contact.surface.keyed(&key);
    if files.is_empty() {
        return Err(Error::invalid(&key, "names no file"));
    }
    // Every file's triangles, in list order, on one vertex list.
    let mut surface = TriangleSurface {
        vertices: Vec::new(),
        triangles: Vec::new(),
    };
    // Where each file's vertices start, with its key: names a vertex in errors.
    let mut starts: Vec<(usize, String)> = Vec::new();
    for (key, file) in files {
        let part = read_placed_surface(section, dir, file, &key, read_obstacle_surface)?.surface;
        let offset = surface.vertices.len();
        starts.push((offset, key));
        surface.vertices.extend(part.vertices);
        surface
            .triangles
            .extend(part.triangles.iter().map(|t| t.map(|v| v + offset)));
    }
    // The vertices its triangles use (a volume mesh file lists interior nodes too).
    let mut used = vec![false; surface.vertices.len()];
    for t in &surface.triangles {
        for &v in t {
            used[v] = true;
        }
    }
    let name = |k: usize| {
        let (start, key) = starts
            .iter()
            .rev()
            .find(|(start, _)| *start <= k)
            .expect("the first file starts at 0");
        format!("{key} vertex {}", k - start)
    };
    let embedding = BodyEmbedding::new(section, mesh);
    let points = surface
        .vertices
        .iter()
        .enumerate()
        .filter(|(k, _)| used[*k])
        .map(|(k, v)| embedding.locate(*v, name(k)))
        .collect::<Result<Vec<_>>>()?;
    let warning = embedding.outside_to_warn().map(|o| {
        format!(
            "{key}: {} of its {} vertices {}",
            o.count,
            points.len(),
            o.consequence(&o.farthest)
        )
    });
    // The triangles over the kept vertices' indices.
    let mut index = vec![usize::MAX; used.len()];
    for (i, k) in (0..used.len()).filter(|&k| used[k]).enumerate() {
        index[k] = i;
    }
    let triangles = surface
        .triangles
        .iter()
        .map(|t| t.map(|v| index[v]))
        .collect();
    Ok((
        ContactPoints::Embedded(EmbeddedSurface { points, triangles }.into()),
        warning,
    ))
}
