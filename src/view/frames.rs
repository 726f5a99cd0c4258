//! Reading a run's output folder: one `NAME.pvd` per soft body or rigid system, each listing
//! its `NAME_NNNNNN.vtu` frames, into the surfaces the viewer draws.

use std::path::{Path, PathBuf};

use super::run_info::{RunInfo, read_info};
use crate::error::{Error, Result};
use crate::mesh::io::pvd::read_pvd;
use crate::mesh::io::vtu::{read_vtu, read_vtu_point_scalars, read_vtu_point_vectors};
use crate::scene::{EffectorOutput, ObstacleOutput};

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
    /// Per frame, the von Mises stress (Pa) at every surface vertex (soft bodies whose frames
    /// carry a `von_mises` field; empty otherwise).
    pub stress: Vec<Vec<f32>>,
    /// Per frame, the contact forces on the body's nodes: `[x, y, z, fx, fy, fz]`, the node's
    /// position (m) and the force on it (N), for each node with a non-zero `contact_force`
    /// (soft bodies; empty for frames without that field).
    pub contacts: Vec<Vec<[f64; 6]>>,
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
    /// The scene's gravity (m/s²), from `final.json`; the page puts −gravity up (+y when
    /// unknown or zero).
    pub gravity: Option<[f64; 3]>,
    /// The scene's obstacles (world frame, m), as `final.json` records them; empty when it
    /// has none or there is no `final.json`.
    pub obstacles: Vec<ObstacleOutput>,
    /// The effectors whose embedding `final.json` records, with their path over the frames.
    pub effectors: Vec<EffectorPath>,
    /// A `control` run's target positions (m), from `control.json`; empty otherwise (and
    /// for a joint effector, whose target is a coordinate, not a point).
    pub targets: Vec<[f64; 3]>,
}

/// One effector's position over the frames of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct EffectorPath {
    /// The effector's name.
    pub name: String,
    /// The soft body it is embedded in.
    pub body: String,
    /// Its position at each frame (m): Σᵢ wᵢ xᵢ over the nodes `final.json` names, with the
    /// frame's node positions.
    pub positions: Vec<[f64; 3]>,
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
    let RunInfo {
        obstacles,
        gravity,
        effectors: embedded,
        targets,
    } = read_info(dir)?;
    let mut times: Option<Vec<f64>> = None;
    let mut bodies = Vec::new();
    let mut effectors = Vec::new();
    for pvd in &pvds {
        let name = pvd
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let probes: Vec<&EffectorOutput> = embedded.iter().filter(|e| e.body == name).collect();
        let (frame_times, body, paths) = read_body(dir, pvd, name, &probes)?;
        effectors.extend(probes.iter().zip(paths).map(|(e, positions)| EffectorPath {
            name: e.name.clone(),
            body: e.body.clone(),
            positions,
        }));
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
        gravity,
        obstacles,
        effectors,
        targets,
    })
}

/// One body's frame times (s), surface, and the path (m) of each of `probes`, its effectors.
type BodyRead = (Vec<f64>, BodyFrames, Vec<Vec<[f64; 3]>>);

/// Reads one body's `.pvd` and frames: the frame times (s), the body's surface, and per
/// effector of `probes` its position at each frame. An effector node the mesh does not have
/// is an error naming the frame.
fn read_body(dir: &Path, pvd: &Path, name: String, probes: &[&EffectorOutput]) -> Result<BodyRead> {
    let label = pvd.display().to_string();
    let text = std::fs::read_to_string(pvd).map_err(|e| Error::io(pvd, e))?;
    let list = read_pvd(&label, &text)?;
    if list.is_empty() {
        return Err(Error::invalid(
            format!("view: `{label}`"),
            "lists no frames",
        ));
    }
    let mut paths = vec![Vec::new(); probes.len()];
    let mut body = BodyFrames {
        name,
        soft: false,
        triangles: Vec::new(),
        positions: Vec::new(),
        displacement: Vec::new(),
        stress: Vec::new(),
        contacts: Vec::new(),
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
        for (e, path) in probes.iter().zip(&mut paths) {
            if let Some(&n) = e.nodes.iter().find(|&&n| n >= p.len()) {
                return Err(Error::invalid(
                    format!("view: `{label}`"),
                    format!(
                        "effector `{}` follows node {n}, but the frame has {} points",
                        e.name,
                        p.len()
                    ),
                ));
            }
            let mut x = [0.0; 3];
            for (&n, &w) in e.nodes.iter().zip(&e.weights) {
                for (k, xk) in x.iter_mut().enumerate() {
                    *xk += w * p[n][k];
                }
            }
            path.push(x);
        }
        body.positions.push(
            nodes
                .iter()
                .map(|&n| [p[n].x as f32, p[n].y as f32, p[n].z as f32])
                .collect(),
        );
        let forces = if body.soft {
            read_vtu_point_vectors(&label, &data, "contact_force")?
        } else {
            None
        };
        body.contacts.push(
            forces
                .iter()
                .flatten()
                .zip(p)
                .filter(|(f, _)| f.norm() > 0.0)
                .map(|(f, x)| [x.x, x.y, x.z, f.x, f.y, f.z])
                .collect(),
        );
        if body.soft
            && let Some(v) = read_vtu_point_scalars(&label, &data, "von_mises")?
        {
            body.stress
                .push(nodes.iter().map(|&n| v[n] as f32).collect());
        }
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
    if body.stress.len() != body.positions.len() {
        body.stress.clear();
    }
    Ok((list.iter().map(|(t, _)| *t).collect(), body, paths))
}
