//! A path of points over time, `time,x,y,z` (s, m, scene frame): the waypoints of trajectory
//! optimisation (`optimize --waypoints`), a moving target.
//!
//! ```text
//! time,x,y,z
//! 0.5,0.0,0.01,0.19
//! ```

use std::path::Path;

use crate::error::{Error, Result};
use crate::math::Vec3;

use super::csv_table::{CsvTable, read_text};
use super::interpolate::{blend, held_weights};

/// The header of a point path file (whitespace around the fields is tolerated on reading).
pub const POINT_PATH_HEADER: &str = "time,x,y,z";

/// Points at strictly increasing times.
#[derive(Debug, Clone, PartialEq)]
pub struct PointPath {
    /// The file it was read from (for messages; empty for arrays).
    pub file: String,
    /// Times (s), strictly increasing, at least one.
    pub times: Vec<f64>,
    /// The points (m, scene frame), one per time.
    pub positions: Vec<Vec3>,
}

impl PointPath {
    /// Reads the point path file at `path` ([`PointPath::parse`]).
    pub fn read(path: &Path) -> Result<PointPath> {
        let (file, text) = read_text(path)?;
        PointPath::parse(&file, &text)
    }

    /// Parses the text of a point path file called `file` (named in errors): the header
    /// `time,x,y,z` (a UTF-8 byte-order mark and whitespace around fields tolerated), then
    /// one row per point; blank lines are skipped. Errors (one line: `FILE: line N: …`): a
    /// wrong header or number of fields, a field that is not a finite number, a time not
    /// after the previous one, no row at all.
    pub fn parse(file: &str, text: &str) -> Result<PointPath> {
        let table = CsvTable::new(file, text);
        table.expect_header(POINT_PATH_HEADER)?;
        let mut path = PointPath {
            file: file.to_string(),
            times: Vec::new(),
            positions: Vec::new(),
        };
        for (line, fields) in table.rows() {
            table.expect_fields(line, &fields, POINT_PATH_HEADER)?;
            let mut v = [0.0; 4];
            for (k, (slot, what)) in v.iter_mut().zip(["time", "x", "y", "z"]).enumerate() {
                let unit = if k == 0 { "s" } else { "m" };
                *slot = match fields[k].parse::<f64>() {
                    Ok(x) if x.is_finite() => x,
                    _ => {
                        return Err(table.error(
                            line,
                            format!("{what} `{}` is not a finite number ({unit})", fields[k]),
                        ));
                    }
                };
            }
            if let Some(&previous) = path.times.last()
                && !(v[0] > previous)
            {
                return Err(table.error(
                    line,
                    format!(
                        "time {} s does not follow {previous} s: times increase",
                        v[0]
                    ),
                ));
            }
            path.times.push(v[0]);
            path.positions.push(Vec3::new(v[1], v[2], v[3]));
        }
        if path.times.is_empty() {
            return Err(Error::invalid(
                file,
                "has no point (a row `time,x,y,z` below the header)",
            ));
        }
        Ok(path)
    }

    /// The number of points.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// True for a path without a point (never one read from a file).
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// The point at time `t` (s): linear between the points around `t`, held before the
    /// first and after the last (`interpolate::held_weights`).
    pub fn at(&self, t: f64) -> Vec3 {
        blend(&self.positions, held_weights(&self.times, t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_reads_and_interpolates_linearly_and_holds_outside() {
        let p = PointPath::parse("p.csv", "time, x, y, z\n0.5,0,0,1\n\n1.5,2,0,3\n").unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p.at(0.0), Vec3::new(0.0, 0.0, 1.0));
        // A quarter of the way: 0.5 + 0.25 · 1 s.
        assert_eq!(p.at(0.75), Vec3::new(0.5, 0.0, 1.5));
        assert_eq!(p.at(9.0), Vec3::new(2.0, 0.0, 3.0));
    }

    #[test]
    fn each_bad_file_gets_one_line_naming_file_and_line() {
        let cases = [
            (
                "time,x,y\n",
                "p.csv: line 1: expected the header `time,x,y,z`",
            ),
            ("time,x,y,z\n0,1,2\n", "p.csv: line 2: expected 4 fields"),
            (
                "time,x,y,z\n0,1,2,a\n",
                "p.csv: line 2: z `a` is not a finite number (m)",
            ),
            (
                "time,x,y,z\n0,1,2,3\n\n0,1,2,3\n",
                "p.csv: line 4: time 0 s does not follow 0 s",
            ),
            ("time,x,y,z\n", "p.csv: has no point"),
        ];
        for (text, expected) in cases {
            let e = PointPath::parse("p.csv", text).unwrap_err().to_string();
            assert!(e.starts_with(expected), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
