//! The folder of the published SoftRobots meshes (docs/real-meshes.md), shared by the tests
//! that read them (all `#[ignore]`d, so they run only when asked for).

use std::path::{Path, PathBuf};

/// `$DIFFSORO_REAL_MESHES`, or `../shared/meshes-real` beside the clone. Panics when it is
/// absent, saying where it was looked for.
pub fn real_meshes() -> PathBuf {
    let dir = std::env::var_os("DIFFSORO_REAL_MESHES").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/meshes-real"),
        PathBuf::from,
    );
    assert!(
        dir.is_dir(),
        "{} is absent: put the published meshes there or set DIFFSORO_REAL_MESHES (docs/real-meshes.md)",
        dir.display()
    );
    dir
}
