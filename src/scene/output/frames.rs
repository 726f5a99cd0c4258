//! Output of a run for ParaView: one `.vtu` per body and frame plus a `.pvd` index per body,
//! and `final.json`. Outputs are written completely or not at all: frames go to a staging
//! folder inside the output folder and are moved into place only when the run has finished;
//! a run that fails (or is dropped) removes its staging folder, and a run that starts removes
//! the staging folders of killed runs (`stale_staging`). A reused output folder is replaced as
//! one unit: a finished run removes the earlier frames of its bodies that its new `.pvd` files do
//! not list (`stale_frames`); other files are left alone.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::math::Vec3;
use crate::mesh::io::pvd::write_pvd;
use crate::mesh::io::vtu::{VtuEncoding, write_surface_vtu, write_vtu_with_scalars};
use crate::mesh::io::write_file_atomic;

use super::stale_frames::remove_unlisted_frames;
use super::stale_staging::{remove_stale_staging, staging_name};
use crate::scene::model::RigidState;
use crate::scene::model::rigid::RigidSystem;
use crate::scene::model::{Scene, State};
use crate::scene::step::contact::stage::ContactOutcome;

/// A series of frames being written into `dir`.
pub struct FrameSeries {
    dir: PathBuf,
    staging: PathBuf,
    /// Per soft body then per rigid system, (time, file name) of each frame.
    frames: Vec<Vec<(f64, String)>>,
    finished: bool,
}

impl FrameSeries {
    /// Starts a series in `dir` (created if needed) for the bodies of `scene`, after removing
    /// the staging folders that killed runs left in `dir`.
    pub fn create(dir: &Path, scene: &Scene) -> Result<FrameSeries> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        remove_stale_staging(dir);
        let staging = dir.join(staging_name(std::process::id()));
        std::fs::create_dir_all(&staging).map_err(|e| Error::io(&staging, e))?;
        Ok(FrameSeries {
            dir: dir.to_path_buf(),
            staging,
            frames: vec![Vec::new(); scene.bodies.len() + scene.rigid.systems.len()],
            finished: false,
        })
    }

    /// Writes the frame of `state`: per body `NAME_NNNNNN.vtu` (binary), with point fields
    /// `displacement` (m, from the rest positions), `velocity` (m/s) and `von_mises` (Pa,
    /// `SoftBody::nodal_von_mises`).
    pub fn write(&mut self, scene: &Scene, state: &State) -> Result<()> {
        self.write_with_contacts(scene, state, None)
    }

    /// [`FrameSeries::write`], and with `contacts` (the step's [`ContactOutcome`] per soft
    /// body) when the scene has contact, a point field `contact_force` on each soft body: the
    /// contact force on each node during the step that ended at this frame (N, world frame;
    /// zero at nodes without contact).
    pub fn write_with_contacts(
        &mut self,
        scene: &Scene,
        state: &State,
        contacts: Option<&[ContactOutcome]>,
    ) -> Result<()> {
        let contacts = contacts.filter(|_| scene.contact.is_active());
        for (i, ((body, bs), frames)) in scene
            .bodies
            .iter()
            .zip(&state.bodies)
            .zip(&mut self.frames)
            .enumerate()
        {
            let displacement: Vec<Vec3> = bs
                .positions
                .iter()
                .zip(body.rest_positions())
                .map(|(x, x0)| x - x0)
                .collect();
            let mut fields: Vec<(&str, &[Vec3])> = vec![
                ("displacement", &displacement),
                ("velocity", &bs.velocities),
            ];
            let mut force: Vec<Vec3>;
            if let Some(outcome) = contacts.and_then(|c| c.get(i)) {
                force = vec![Vec3::zeros(); bs.positions.len()];
                for &(node, f) in &outcome.node_forces {
                    force[node] += f;
                }
                fields.push(("contact_force", &force));
            }
            let von_mises = body.nodal_von_mises(&bs.positions);
            let bytes = write_vtu_with_scalars(
                body.mesh(),
                Some(&bs.positions),
                &fields,
                &[("von_mises", &von_mises)],
                VtuEncoding::Binary,
            );
            let name = format!("{}_{:06}.vtu", body.name(), state.steps);
            let path = self.staging.join(&name);
            std::fs::write(&path, bytes).map_err(|e| Error::io(&path, e))?;
            replace_frame(frames, state.time, name);
        }
        // Rigid systems: their collision shapes placed in the world, one surface per system,
        // with the velocity of each surface point (m/s).
        let soft = scene.bodies.len();
        for ((sys, rs), frames) in scene
            .rigid
            .systems
            .iter()
            .zip(&state.rigid)
            .zip(&mut self.frames[soft..])
        {
            let (vertices, triangles, velocities) = rigid_surface(sys, rs);
            let bytes = write_surface_vtu(&vertices, &triangles, &[("velocity", &velocities)]);
            let name = format!("{}_{:06}.vtu", sys.name, state.steps);
            let path = self.staging.join(&name);
            std::fs::write(&path, bytes).map_err(|e| Error::io(&path, e))?;
            replace_frame(frames, state.time, name);
        }
        Ok(())
    }

    /// Removes the frames an earlier run left in the folder for these bodies that this run
    /// does not write, moves the frames into place, writes one `NAME.pvd` per body and
    /// `final.json` (`final_json`, last, atomically). Returns the paths of the `.pvd` files.
    pub fn finish(mut self, scene: &Scene, final_json: &[u8]) -> Result<Vec<PathBuf>> {
        let mut pvds = Vec::new();
        let names = scene
            .bodies
            .iter()
            .map(|b| b.name())
            .chain(scene.rigid.systems.iter().map(|s| s.name.as_str()));
        for (name_of, frames) in names.zip(&self.frames) {
            let keep = frames.iter().map(|(_, n)| n.as_str()).collect();
            remove_unlisted_frames(&self.dir, name_of, &keep)?;
            for (_, name) in frames {
                let (from, to) = (self.staging.join(name), self.dir.join(name));
                std::fs::rename(&from, &to).map_err(|e| Error::io(&to, e))?;
            }
            let list: Vec<(f64, &str)> = frames.iter().map(|(t, n)| (*t, n.as_str())).collect();
            let pvd = self.dir.join(format!("{name_of}.pvd"));
            write_file_atomic(&pvd, write_pvd(&list).as_bytes())?;
            pvds.push(pvd);
        }
        write_file_atomic(self.dir.join("final.json"), final_json)?;
        let _ = std::fs::remove_dir_all(&self.staging);
        self.finished = true;
        Ok(pvds)
    }
}

/// Lists the frame `name` at `time`, replacing an earlier frame of the same name (a state
/// written twice at one step, as `simulate --static` writes the rest state and then the
/// equilibrium: the file was overwritten, so it is listed once).
fn replace_frame(frames: &mut Vec<(f64, String)>, time: f64, name: String) {
    frames.retain(|(_, n)| *n != name);
    frames.push((time, name));
}

impl Drop for FrameSeries {
    fn drop(&mut self) {
        if !self.finished {
            let _ = std::fs::remove_dir_all(&self.staging);
        }
    }
}

/// The collision shapes of `sys` at `state`, placed in the world as one surface: vertices (m),
/// triangles, and each vertex's velocity (m/s).
fn rigid_surface(sys: &RigidSystem, state: &RigidState) -> (Vec<Vec3>, Vec<[usize; 3]>, Vec<Vec3>) {
    let mut buf = crate::scene::model::rigid_system::SystemBuffers::new(sys);
    sys.kinematics(&mut buf, &state.q);
    let poses: Vec<_> = sys
        .colliders
        .iter()
        .map(|c| {
            sys.joint_pose(&buf, &state.q, c.joint)
                .compose(&c.placement)
        })
        .collect();
    let (mut vertices, mut triangles, mut velocities) = (Vec::new(), Vec::new(), Vec::new());
    for (c, pose) in sys.colliders.iter().zip(&poses) {
        let (v, t) = c.collider.surface();
        let offset = vertices.len();
        let (vo, w) = sys.body_velocity(&buf, &state.q, c.joint, &state.v);
        for p in &v {
            let x = pose.transform_point(p);
            velocities.push(vo + w.cross(&x));
            vertices.push(x);
        }
        triangles.extend(
            t.iter()
                .map(|t| [t[0] + offset, t[1] + offset, t[2] + offset]),
        );
    }
    (vertices, triangles, velocities)
}
