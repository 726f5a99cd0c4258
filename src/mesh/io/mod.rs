//! Mesh file input and output. Readers are chosen by content, not by extension (a `.vtk` file
//! holding VTU XML is read as VTU); every reader works on bytes so it can be fuzzed, and
//! reports malformed input as [`crate::Error::Parse`] naming the file and the line or byte.

mod cursor;
mod vtk_cells;
mod vtk_scalar;

pub mod gidmsh;
pub mod msh;
pub mod obj;
pub mod pvd;
pub mod stl;
pub mod vtk_legacy;
pub mod vtu;

pub use cursor::{Cursor, Endian};

use std::path::Path;

use crate::error::{Error, Location, Result};

use super::Mesh;

/// The mesh file formats the readers understand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// gmsh MSH 2.2 or 4.1, ASCII or binary.
    Msh,
    /// Legacy VTK unstructured grid, ASCII or binary (big-endian).
    VtkLegacy,
    /// VTK XML unstructured grid (`.vtu`), ascii or inline base64 data.
    Vtu,
    /// GiD ASCII mesh (`.gidmsh`), opened by a `MESH … ElemType … Nnode …` line.
    GidMsh,
}

/// Detects the format of a mesh file from its first bytes.
pub fn sniff(data: &[u8]) -> Option<Format> {
    let start = data
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(data.len());
    let head = &data[start..];
    let head = head
        .strip_prefix(b"\xEF\xBB\xBF".as_slice())
        .unwrap_or(head);
    if head.starts_with(b"$MeshFormat") {
        Some(Format::Msh)
    } else if head.starts_with(b"# vtk DataFile") {
        Some(Format::VtkLegacy)
    } else if head.starts_with(b"<?xml") || head.starts_with(b"<VTKFile") {
        Some(Format::Vtu)
    } else if head.len() >= 5 && head[..5].eq_ignore_ascii_case(b"MESH ") {
        Some(Format::GidMsh)
    } else {
        None
    }
}

/// Reads a mesh file, choosing the reader by content.
pub fn read_mesh(path: impl AsRef<Path>) -> Result<Mesh> {
    let path = path.as_ref();
    let data = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    read_mesh_bytes(&path.display().to_string(), &data)
}

/// Reads a mesh from the bytes of a file called `file` (used in error messages).
pub fn read_mesh_bytes(file: &str, data: &[u8]) -> Result<Mesh> {
    match sniff(data) {
        Some(Format::Msh) => msh::read_msh(file, data),
        Some(Format::VtkLegacy) => vtk_legacy::read_vtk_legacy(file, data),
        Some(Format::Vtu) => vtu::read_vtu(file, data),
        Some(Format::GidMsh) => gidmsh::read_gidmsh(file, data),
        None => Err(Error::parse(
            file,
            Location::Byte(0),
            "not a mesh file this program reads (expected gmsh MSH `$MeshFormat`, legacy VTK `# vtk DataFile`, VTU XML, or GiD `MESH`)",
        )),
    }
}

/// Reads a triangle surface (a rigid obstacle) from an `.stl` (ASCII or binary) or `.obj`
/// file, chosen by the extension (case-insensitive). Errors name the file and the line or byte.
pub fn read_surface(path: impl AsRef<Path>) -> Result<super::TriangleSurface> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let reader = match ext.as_deref() {
        Some("stl") => stl::read_stl,
        Some("obj") => obj::read_obj,
        _ => {
            return Err(Error::invalid(
                name,
                "unknown surface format: expected a .stl or .obj file",
            ));
        }
    };
    let data = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    reader(&name, &data)
}

/// Writes `bytes` to `path` completely or not at all: into a temporary file beside it, then
/// renamed over `path` (a rename within one directory is atomic on POSIX file systems).
pub fn write_file_atomic(path: impl AsRef<Path>, bytes: &[u8]) -> Result<()> {
    StagedFile::write(path, bytes)?.commit()
}

/// A file written beside its destination under a temporary name (`.NAME.PID.tmp`) and moved
/// into place by [`StagedFile::commit`]: a run can stage an output once its bytes are known
/// and commit it only when everything else has succeeded. Dropped uncommitted (a run that
/// failed later), it removes the temporary file: nothing is left at the destination or beside
/// it.
#[derive(Debug)]
pub struct StagedFile {
    /// The temporary file.
    tmp: std::path::PathBuf,
    /// The destination.
    path: std::path::PathBuf,
    committed: bool,
}

impl StagedFile {
    /// Writes `bytes` into the temporary file beside `path` (its folder must exist). A write
    /// that fails removes what it wrote and names the temporary file.
    pub fn write(path: impl AsRef<Path>, bytes: &[u8]) -> Result<StagedFile> {
        let path = path.as_ref();
        let name = path
            .file_name()
            .ok_or_else(|| Error::invalid(path.display().to_string(), "is not a file path"))?;
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".{}.tmp", std::process::id()));
        let staged = StagedFile {
            tmp: path.with_file_name(tmp_name),
            path: path.to_path_buf(),
            committed: false,
        };
        // On failure `staged` is dropped, which removes a partly written file.
        std::fs::write(&staged.tmp, bytes).map_err(|e| Error::io(&staged.tmp, e))?;
        Ok(staged)
    }

    /// The destination path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the temporary file over the destination (atomic within one folder on POSIX
    /// file systems); on failure the temporary file is removed.
    pub fn commit(mut self) -> Result<()> {
        let result = std::fs::rename(&self.tmp, &self.path).map_err(|e| Error::io(&self.path, e));
        self.committed = result.is_ok();
        result
    }
}

impl Drop for StagedFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_sniffed_by_content() {
        assert_eq!(sniff(b"$MeshFormat\n4.1 0 8\n"), Some(Format::Msh));
        assert_eq!(
            sniff(b"# vtk DataFile Version 2.0\n"),
            Some(Format::VtkLegacy)
        );
        assert_eq!(
            sniff(b"\n<?xml version=\"1.0\"?>\n<VTKFile"),
            Some(Format::Vtu)
        );
        assert_eq!(
            sniff(b"<VTKFile type=\"UnstructuredGrid\">"),
            Some(Format::Vtu)
        );
        assert_eq!(
            sniff(b"MESH dimension 3 ElemType Tetrahedra Nnode 4\n"),
            Some(Format::GidMsh)
        );
        assert_eq!(sniff(b"solid cube\n"), None);
        let err = read_mesh_bytes("x.stl", b"solid cube\n")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("x.stl: byte 0: not a mesh file"), "{err}");
    }

    #[test]
    fn atomic_write_leaves_no_temporary_file() {
        let dir = std::env::temp_dir().join(format!("diffsoro-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.json");
        write_file_atomic(&path, b"{}").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{}");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_staged_file_appears_on_commit_and_leaves_nothing_when_dropped() {
        let dir = std::env::temp_dir().join(format!("diffsoro-staged-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let names = || -> Vec<String> {
            let mut n: Vec<String> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            n.sort();
            n
        };
        let path = dir.join("tracks.csv");
        let staged = StagedFile::write(&path, b"a").unwrap();
        assert_eq!(names(), [format!(".tracks.csv.{}.tmp", std::process::id())]);
        drop(staged);
        assert!(names().is_empty());
        let staged = StagedFile::write(&path, b"b").unwrap();
        assert_eq!(staged.path(), path);
        staged.commit().unwrap();
        assert_eq!(names(), ["tracks.csv"]);
        assert_eq!(std::fs::read(&path).unwrap(), b"b");
        // A folder that does not exist: an error naming the temporary file, nothing written.
        let err = StagedFile::write(dir.join("no/tracks.csv"), b"c").unwrap_err();
        assert!(err.to_string().contains(".tracks.csv."), "{err}");
        assert_eq!(names(), ["tracks.csv"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
