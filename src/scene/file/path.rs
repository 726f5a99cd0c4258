//! Paths in a scene file: relative to the scene file's folder, or starting with an environment
//! variable, `$NAME/…`, for files the repository does not ship (the published SoftRobots
//! meshes under `$DIFFSORO_REAL_MESHES`, docs/real-meshes.md).

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// `path` as a file path: `$NAME/rest` becomes the variable's value joined with `rest`, any
/// other relative path is joined to `dir` (the scene file's folder). Errors, naming `key` (the
/// scene key that holds the path): a variable that is not set.
pub fn scene_path(dir: &Path, path: &Path, key: &str) -> Result<PathBuf> {
    let Some(text) = path.to_str().and_then(|t| t.strip_prefix('$')) else {
        return Ok(dir.join(path));
    };
    let (name, rest) = text.split_once('/').unwrap_or((text, ""));
    match std::env::var_os(name) {
        Some(value) => Ok(PathBuf::from(value).join(rest)),
        None => Err(Error::invalid(
            key,
            format!(
                "`{}` starts with ${name}, which is not set: set it to the folder that holds the file (docs/real-meshes.md for the published SoftRobots meshes), or give --set {key}=PATH",
                path.display()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_join_the_scene_folder_and_variables_expand() {
        let dir = Path::new("/scenes");
        assert_eq!(
            scene_path(dir, Path::new("../meshes/a.msh"), "k").unwrap(),
            Path::new("/scenes/../meshes/a.msh")
        );
        assert_eq!(
            scene_path(dir, Path::new("/abs/a.msh"), "k").unwrap(),
            Path::new("/abs/a.msh")
        );
        let home = std::env::var_os("HOME").expect("HOME is set");
        assert_eq!(
            scene_path(dir, Path::new("$HOME/x/a.vtk"), "k").unwrap(),
            PathBuf::from(home).join("x/a.vtk")
        );
        let e = scene_path(
            dir,
            Path::new("$DIFFSORO_NO_SUCH_VAR/a.vtk"),
            "soft_body.t.mesh",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("soft_body.t.mesh")
                && e.contains("$DIFFSORO_NO_SUCH_VAR")
                && e.contains("--set"),
            "{e}"
        );
    }
}
