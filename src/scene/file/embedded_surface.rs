//! A surface file embedded in a soft body's volume mesh: a pneumatic cavity's own surface
//! (`[[soft_body.pneumatic]] surface`) or the body's contact surface
//! (`[soft_body.contact] surface`). The file is read under its scene key (errors name the
//! key), placed as the body's mesh is placed (`scale`, then `rotation` and `translation`), and
//! its vertices are embedded in their tetrahedra within the body's `embed_tolerance`
//! ([`BodyEmbedding`], which also embeds cable points and effectors), keeping count of those
//! just outside the mesh for one warning when the scene did not state `embed_tolerance`.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use crate::actuator::EmbeddedPoint;
use crate::error::{Error, Result};
use crate::math::Vec3;
use crate::mesh::{Mesh, TriangleSurface};

use super::contact::axis_angle_matrix;
use crate::scene::file::SoftBodySection;

/// Without `embed_tolerance`, points farther outside the mesh than this fraction of its
/// bounding-box diagonal are errors.
pub const EMBEDDING_TOLERANCE: f64 = 1e-3;

/// A surface file read for a body and placed as its mesh is placed.
pub(in crate::scene) struct PlacedSurfaceFile {
    /// The file read (the scene's path resolved: `scene_path`).
    pub path: PathBuf,
    /// Its triangles, vertices in m in the world frame.
    pub surface: TriangleSurface,
}

/// Reads `file` (as written in the scene, relative to `dir`, the scene file's folder) with
/// `read` and places it as `section`'s mesh is placed. Errors name `key`, the scene key that
/// holds the path: an unset `$VARIABLE`, a missing file, an unreadable one (the reader's error
/// re-keyed by [`in_key`]).
pub(in crate::scene) fn read_placed_surface(
    section: &SoftBodySection,
    dir: &Path,
    file: &Path,
    key: &str,
    read: fn(&Path) -> Result<TriangleSurface>,
) -> Result<PlacedSurfaceFile> {
    let path = super::path::scene_path(dir, file, key)?;
    if !path.is_file() {
        return Err(Error::invalid(
            key,
            format!("file {} not found", path.display()),
        ));
    }
    let surface = read(&path).map_err(in_key(key))?;
    let rotation = axis_angle_matrix(section.rotation.unwrap_or([0.0; 3]));
    let translation = Vec3::from(section.translation.unwrap_or([0.0; 3]));
    Ok(PlacedSurfaceFile {
        surface: surface.transformed(section.scale, &rotation, &translation),
        path,
    })
}

/// An error about a file (`what: message`, `what` the file) as one about the scene key `key`
/// (`key: what: message`); other errors (I/O) unchanged.
pub(in crate::scene) fn in_key(key: &str) -> impl Fn(Error) -> Error + '_ {
    move |e| match e {
        Error::Invalid { what, message } => Error::invalid(key, format!("{what}: {message}")),
        other => other,
    }
}

/// Embeds points in one body's mesh (`actuator::EmbeddedPoint::locate_outside`) within the
/// body's `embed_tolerance`, counting those that lie outside the mesh and keeping the
/// farthest.
pub(in crate::scene) struct BodyEmbedding<'a> {
    mesh: &'a Mesh,
    /// How far outside the mesh a point may lie (m): `embed_tolerance`, by default
    /// [`EMBEDDING_TOLERANCE`] of the mesh's bounding-box diagonal.
    tolerance: f64,
    /// Whether the scene stated `embed_tolerance`: then points outside the mesh within it are
    /// what the user asked for, and no warning reports them.
    stated: bool,
    outside: RefCell<Option<Outside>>,
}

/// The points an embedding found outside the mesh.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::scene) struct Outside {
    /// How many.
    pub count: usize,
    /// The farthest one's name (its scene key, or the key and vertex of a surface file).
    pub farthest: String,
    /// Its distance to the mesh (m).
    pub distance: f64,
    /// The default tolerance they are within (m).
    pub tolerance: f64,
}

impl Outside {
    /// What happens to them, for a warning: `lie outside the mesh and follow … (within the
    /// default embed_tolerance … m …)`, the farthest called `farthest`, and how to accept them
    /// silently.
    pub fn consequence(&self, farthest: &str) -> String {
        format!(
            "lie outside the mesh and follow their nearest tetrahedron (extrapolated barycentric weights); the farthest, {farthest}, by {:.3e} m (within the default embed_tolerance, {:.3e} m = {EMBEDDING_TOLERANCE:e} of the mesh's bounding-box diagonal; stating embed_tolerance accepts them without this warning)",
            self.distance, self.tolerance
        )
    }
}

impl<'a> BodyEmbedding<'a> {
    /// The embedding of `section`'s points in `mesh` (m, placed).
    pub fn new(section: &SoftBodySection, mesh: &'a Mesh) -> BodyEmbedding<'a> {
        let [lo, hi] = mesh.bounding_box();
        BodyEmbedding {
            mesh,
            tolerance: section
                .embed_tolerance
                .unwrap_or(EMBEDDING_TOLERANCE * (hi - lo).norm()),
            stated: section.embed_tolerance.is_some(),
            outside: RefCell::new(None),
        }
    }

    /// Embeds `point` (m); `name` names it in errors (farther than the tolerance from the
    /// mesh, not finite) and in the warning if it is the farthest outside.
    pub fn locate(&self, point: Vec3, name: String) -> Result<EmbeddedPoint> {
        let (e, d) = EmbeddedPoint::locate_outside(self.mesh, point, self.tolerance, &name)?;
        if d > 0.0 {
            let mut outside = self.outside.borrow_mut();
            match outside.as_mut() {
                None => {
                    *outside = Some(Outside {
                        count: 1,
                        farthest: name,
                        distance: d,
                        tolerance: self.tolerance,
                    })
                }
                Some(o) => {
                    o.count += 1;
                    if d > o.distance {
                        (o.farthest, o.distance) = (name, d);
                    }
                }
            }
        }
        Ok(e)
    }

    /// The points embedded so far that lie outside the mesh, for a warning: none when the
    /// scene stated the body's `embed_tolerance` (the user said points within it are meant),
    /// those found within the default tolerance otherwise.
    pub fn outside_to_warn(self) -> Option<Outside> {
        if self.stated {
            None
        } else {
            self.outside.into_inner()
        }
    }
}
