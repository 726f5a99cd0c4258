//! Reading a run's output folder: one `NAME.pvd` per soft body or rigid system, each listing
//! its `NAME_NNNNNN.vtu` frames, into the surfaces the viewer draws.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::mesh::io::pvd::read_pvd;
use crate::mesh::io::vtu::{read_vtu, read_vtu_point_vectors};

/// One body's surface over the frames of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct BodyFrames {
    /// The body's name (the `.pvd` file's stem).
    pub name: String,
    /// True for a soft body (its `.vtu` holds tetrahedra), false for a rigid system (a
    /// surface of triangles).
    pub soft: bool,
    /// Surface triangles, as indices into each frame's `positions`, outward normals.
    pub triangles: Vec<[u32; 3]>,
    /// Per frame, the position (m) of every surface vertex.
    pub positions: Vec<Vec<[f32; 3]>>,
    /// Per frame, the displacement magnitude (m) of every surface vertex (soft bodies; empty
    /// for rigid systems and for files without a `displacement` array).
    pub displacement: Vec<Vec<f32>>,
}

/// The frames of a run: their times and every body's surface.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFrames {
    /// The folder the run was read from.
    pub dir: PathBuf,
    /// Time of each frame (s), from the first `.pvd` (all bodies list the same frames).
    pub times: Vec<f64>,
    /// The bodies, soft and rigid, in the order of their `.pvd` file names.
    pub bodies: Vec<BodyFrames>,
}

/// Reads every `NAME.pvd` of `dir` and the `.vtu` frames it lists. Errors name the folder or
/// the file: a missing folder, a folder without `.pvd`, a `.pvd` with no frames or with a
/// different number of frames than the others, a frame whose mesh differs from the first.
pub fn read_run(dir: &Path) -> Result<RunFrames> {
    let here = || format!("view: `{}`", dir.display());
    if !dir.is_dir() {
        return Err(Error::invalid(here(), "no such folder"));
    }
    let listing = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let mut pvds: Vec<PathBuf> = listing
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pvd") && p.is_file())
        .collect();
    pvds.sort();
    if pvds.is_empty() {
        return Err(Error::invalid(here(), "no .pvd file in this folder"));
    }
    let mut times: Option<Vec<f64>> = None;
    let mut bodies = Vec::new();
    for pvd in &pvds {
        let (frame_times, body) = read_body(dir, pvd)?;
        match &times {
            None => times = Some(frame_times),
            Some(t) if t.len() != frame_times.len() => {
                return Err(Error::invalid(
                    format!("view: `{}`", pvd.display()),
                    format!(
                        "lists {} frames, but `{}` lists {}",
                        frame_times.len(),
                        pvds[0].display(),
                        t.len()
                    ),
                ));
            }
            Some(_) => {}
        }
        bodies.push(body);
    }
    Ok(RunFrames {
        dir: dir.to_path_buf(),
        times: times.unwrap_or_default(),
        bodies,
    })
}

/// Reads one body's `.pvd` and frames: the frame times (s) and the body's surface.
fn read_body(dir: &Path, pvd: &Path) -> Result<(Vec<f64>, BodyFrames)> {
    let label = pvd.display().to_string();
    let text = std::fs::read_to_string(pvd).map_err(|e| Error::io(pvd, e))?;
    let list = read_pvd(&label, &text)?;
    if list.is_empty() {
        return Err(Error::invalid(
            format!("view: `{label}`"),
            "lists no frames",
        ));
    }
    let name = pvd
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut body = BodyFrames {
        name,
        soft: false,
        triangles: Vec::new(),
        positions: Vec::new(),
        displacement: Vec::new(),
    };
    // Surface vertex → mesh node, fixed by the first frame.
    let mut nodes: Vec<usize> = Vec::new();
    let mut node_count = 0;
    for (k, (_, file)) in list.iter().enumerate() {
        let path = pvd.parent().unwrap_or(dir).join(file);
        let label = path.display().to_string();
        let data = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
        let mesh = read_vtu(&label, &data)?;
        if k == 0 {
            body.soft = !mesh.tetrahedra().is_empty();
            let faces = if body.soft {
                mesh.boundary_triangles()
            } else {
                mesh.triangles().to_vec()
            };
            // Keep only the nodes the surface uses, renumbered in order of first use.
            let mut index = vec![u32::MAX; mesh.node_count()];
            for face in &faces {
                let mut tri = [0u32; 3];
                for (t, &n) in tri.iter_mut().zip(face) {
                    if index[n] == u32::MAX {
                        index[n] = nodes.len() as u32;
                        nodes.push(n);
                    }
                    *t = index[n];
                }
                body.triangles.push(tri);
            }
            node_count = mesh.node_count();
        } else if mesh.node_count() != node_count {
            return Err(Error::invalid(
                format!("view: `{label}`"),
                format!(
                    "{} points, but the body's first frame has {node_count}",
                    mesh.node_count()
                ),
            ));
        }
        let p = mesh.positions();
        body.positions.push(
            nodes
                .iter()
                .map(|&n| [p[n].x as f32, p[n].y as f32, p[n].z as f32])
                .collect(),
        );
        if body.soft
            && let Some(u) = read_vtu_point_vectors(&label, &data, "displacement")?
        {
            body.displacement
                .push(nodes.iter().map(|&n| u[n].norm() as f32).collect());
        }
    }
    if body.displacement.len() != body.positions.len() {
        body.displacement.clear();
    }
    Ok((list.iter().map(|(t, _)| *t).collect(), body))
}
