//! Writing a chart's SVG and CSV together, all or nothing.

use std::path::{Path, PathBuf};

use super::line_chart::LineChart;
use super::summary::Summary;
use crate::error::{Error, Result};

/// Writes `chart` as `DIR/STEM.svg` and `DIR/STEM.csv` (the folder must exist) and returns
/// both paths. All or nothing: both documents are rendered first, written under temporary
/// names beside their targets, and only then renamed into place; on a failure the temporary
/// files are removed and no target is touched (short of a failure between the two renames).
pub fn write_chart(chart: &LineChart, dir: &Path, stem: &str) -> Result<(PathBuf, PathBuf)> {
    let svg = chart.to_svg()?;
    let csv = chart.to_csv()?;
    let svg_path = dir.join(format!("{stem}.svg"));
    let csv_path = dir.join(format!("{stem}.csv"));
    write_all_or_nothing(&[(&svg_path, svg.as_bytes()), (&csv_path, csv.as_bytes())])?;
    Ok((svg_path, csv_path))
}

/// Writes `summary` as `DIR/summary.svg` (the folder must exist), all or nothing (rendered
/// first, written under a temporary name, renamed into place), and returns its path.
pub fn write_summary(summary: &Summary, dir: &Path) -> Result<PathBuf> {
    let svg = summary.to_svg()?;
    let path = dir.join("summary.svg");
    write_all_or_nothing(&[(&path, svg.as_bytes())])?;
    Ok(path)
}

/// Writes every `(path, bytes)` under a temporary name, then renames them all into place.
fn write_all_or_nothing(files: &[(&Path, &[u8])]) -> Result<()> {
    let temporary = |path: &Path| -> Result<PathBuf> {
        let name = path
            .file_name()
            .ok_or_else(|| Error::invalid(path.display().to_string(), "is not a file path"))?;
        let mut tmp = std::ffi::OsString::from(".");
        tmp.push(name);
        tmp.push(format!(".{}.tmp", std::process::id()));
        Ok(path.with_file_name(tmp))
    };
    let mut written: Vec<PathBuf> = Vec::with_capacity(files.len());
    let cleanup = |written: &[PathBuf]| {
        for t in written {
            let _ = std::fs::remove_file(t);
        }
    };
    for (path, bytes) in files {
        let tmp = temporary(path)?;
        if let Err(e) = std::fs::write(&tmp, bytes) {
            written.push(tmp.clone());
            cleanup(&written);
            return Err(Error::io(tmp, e));
        }
        written.push(tmp);
    }
    for (k, ((path, _), tmp)) in files.iter().zip(&written).enumerate() {
        if let Err(e) = std::fs::rename(tmp, path) {
            cleanup(&written[k..]);
            return Err(Error::io(path, e));
        }
    }
    Ok(())
}
