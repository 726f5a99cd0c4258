//! The viewer (layer 6): one self-contained HTML page showing a run's frames in 3D.
//!
//! [`read_run`] reads the `.pvd`/`.vtu` series a run wrote into its output folder (see
//! `scene::FrameSeries`) and, through [`read_info`], what its `final.json` and `control.json`
//! record beside them (obstacles, gravity, effector embeddings, a control target);
//! [`write_page`] turns them into one HTML file that embeds three.js (vendored under
//! `src/view/vendor/`, MIT) and opens in any browser with no network.

mod frames;
mod page;
mod run_info;

pub use frames::{BodyFrames, EffectorPath, RunFrames, read_run};
pub use page::write_page;
pub use run_info::{RunInfo, read_info};

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::mesh::io::write_file_atomic;

/// Reads the run in `dir` and writes its page to `out` (default `dir/view.html`), written
/// completely or not at all. Returns the page's path and the run that was shown.
pub fn write_view(dir: &Path, out: Option<&Path>) -> Result<(PathBuf, RunFrames)> {
    let run = read_run(dir)?;
    let path = out.map_or_else(|| dir.join("view.html"), Path::to_path_buf);
    let html = write_page(&run);
    write_file_atomic(&path, html.as_bytes())?;
    Ok((path, run))
}
