//! The `--out` folder of the long-running commands (`calibrate`, `control`), checked before
//! the run starts: created if missing and probed for writing, with a one-line error naming
//! `--out` and the path; removed again (with the parents it created) when the run fails and
//! nothing was written into it. Part of the `diffsoro` binary, not of the library.

use std::path::{Path, PathBuf};

/// An output folder made ready for writing by [`OutFolder::prepare`].
pub struct OutFolder {
    path: PathBuf,
    /// The folders `prepare` created, deepest first (removed by [`OutFolder::discard`]).
    created: Vec<PathBuf>,
}

impl OutFolder {
    /// Creates `path` (and missing parents) if needed and checks a file can be written in it.
    /// Errors: `--out `PATH`: …` when `path` is a file, cannot be created or is not writable.
    pub fn prepare(path: &Path) -> diffsoro::Result<OutFolder> {
        let what = || format!("--out `{}`", path.display());
        if path.exists() && !path.is_dir() {
            return Err(diffsoro::Error::invalid(
                what(),
                "exists and is not a folder",
            ));
        }
        let mut created = Vec::new();
        let mut missing = Some(path);
        while let Some(p) = missing.filter(|p| !p.as_os_str().is_empty() && !p.exists()) {
            created.push(p.to_path_buf());
            missing = p.parent();
        }
        let folder = OutFolder {
            path: path.to_path_buf(),
            created,
        };
        if let Err(e) = std::fs::create_dir_all(path) {
            folder.discard();
            return Err(diffsoro::Error::invalid(
                what(),
                format!("cannot create the folder ({e})"),
            ));
        }
        let probe = path.join(format!(".diffsoro-write-test-{}", std::process::id()));
        let written = std::fs::write(&probe, b"");
        let _ = std::fs::remove_file(&probe);
        if let Err(e) = written {
            folder.discard();
            return Err(diffsoro::Error::invalid(
                what(),
                format!("is not writable ({e})"),
            ));
        }
        Ok(folder)
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the folders `prepare` created, deepest first, as long as they are empty (a
    /// failed run leaves no empty folder behind; nothing that was there before is touched).
    pub fn discard(&self) {
        for dir in &self.created {
            if std::fs::remove_dir(dir).is_err() {
                break;
            }
        }
    }
}

/// Runs `job` with the prepared `--out` folder (if any); when `job` fails, discards the
/// folders prepared for it.
pub fn with_out_folder<T>(
    out: Option<&Path>,
    job: impl FnOnce(Option<&Path>) -> diffsoro::Result<T>,
) -> diffsoro::Result<T> {
    let folder = out.map(OutFolder::prepare).transpose()?;
    let result = job(folder.as_ref().map(OutFolder::path));
    if result.is_err()
        && let Some(f) = &folder
    {
        f.discard();
    }
    result
}
