//! Writing a run's documents (charts' SVG and CSV, the summary page, the report's JSON)
//! together, all or nothing: [`FileSet`].

use std::path::{Path, PathBuf};

use super::line_chart::LineChart;
use super::summary::Summary;
use crate::error::{Error, Result};

/// Documents rendered in memory and written into one folder together by [`FileSet::write`],
/// all or nothing: every document is rendered before anything is written, every target is
/// checked first (a folder in a file's place is an error naming it), then all are written
/// under temporary names beside their targets and only then renamed into place, in the order
/// they were added (so a report's JSON added last appears last). On a failure the temporary
/// files are removed and no target is touched (short of a failure between two renames).
pub struct FileSet {
    dir: PathBuf,
    files: Vec<(PathBuf, Vec<u8>)>,
}

impl FileSet {
    /// An empty set of documents for the folder `dir` (which must exist when written).
    pub fn new(dir: &Path) -> FileSet {
        FileSet {
            dir: dir.to_path_buf(),
            files: Vec::new(),
        }
    }

    /// Adds `DIR/NAME` with the content `bytes`.
    pub fn add(&mut self, name: &str, bytes: impl Into<Vec<u8>>) {
        self.files.push((self.dir.join(name), bytes.into()));
    }

    /// Adds `chart` as `DIR/STEM.svg` and `DIR/STEM.csv`. Errors: the chart cannot be drawn
    /// (see [`LineChart::to_svg`]).
    pub fn add_chart(&mut self, chart: &LineChart, stem: &str) -> Result<()> {
        let svg = chart.to_svg()?;
        let csv = chart.to_csv()?;
        self.add(&format!("{stem}.svg"), svg);
        self.add(&format!("{stem}.csv"), csv);
        Ok(())
    }

    /// Adds `summary` as `DIR/summary.svg`.
    pub fn add_summary(&mut self, summary: &Summary) -> Result<()> {
        let svg = summary.to_svg()?;
        self.add("summary.svg", svg);
        Ok(())
    }

    /// Writes every document, all or nothing, and returns their paths in the order added.
    pub fn write(self) -> Result<Vec<PathBuf>> {
        if let Some((path, _)) = self.files.iter().find(|(path, _)| path.is_dir()) {
            return Err(Error::invalid(
                path.display().to_string(),
                "is a folder where diffsoro writes a file: move it away",
            ));
        }
        let files: Vec<(&Path, &[u8])> = self
            .files
            .iter()
            .map(|(p, b)| (p.as_path(), b.as_slice()))
            .collect();
        write_all_or_nothing(&files)?;
        Ok(self.files.into_iter().map(|(p, _)| p).collect())
    }
}

/// Writes `chart` as `DIR/STEM.svg` and `DIR/STEM.csv` (the folder must exist), all or
/// nothing ([`FileSet`]), and returns both paths.
pub fn write_chart(chart: &LineChart, dir: &Path, stem: &str) -> Result<(PathBuf, PathBuf)> {
    let mut set = FileSet::new(dir);
    set.add_chart(chart, stem)?;
    let mut paths = set.write()?.into_iter();
    let (Some(svg), Some(csv)) = (paths.next(), paths.next()) else {
        unreachable!("a chart adds two files");
    };
    Ok((svg, csv))
}

/// Writes `summary` as `DIR/summary.svg` (the folder must exist), all or nothing
/// ([`FileSet`]), and returns its path.
pub fn write_summary(summary: &Summary, dir: &Path) -> Result<PathBuf> {
    let mut set = FileSet::new(dir);
    set.add_summary(summary)?;
    set.write()?;
    Ok(dir.join("summary.svg"))
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
        let tmp = match temporary(path) {
            Ok(tmp) => tmp,
            Err(e) => {
                cleanup(&written);
                return Err(e);
            }
        };
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
