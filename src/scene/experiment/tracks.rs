//! Marker track files (docs/outputs.md): one long CSV table, a row per marker and sample,
//!
//! ```text
//! time,marker,x,y,z
//! 0.0,tip,0.00087,0.00124,0.10896
//! ```
//!
//! time in s, coordinates in the scene frame in m or mm (the `--marker-unit` of the command,
//! [`MarkerUnit`]). Observed tracks (motion capture, a camera) and simulated ones
//! (`simulate --markers-out`) share the format, the reader and the writer. The writer writes
//! every number in Rust's shortest round-trip form, so that a file written in m reads back bit
//! for bit.

use std::path::Path;

use crate::error::Result;
use crate::math::Vec3;
use crate::mesh::io::StagedFile;

use super::csv_table::{CsvTable, read_text};

use crate::scene::model::{Scene, State};

/// The header of a marker track file (whitespace around the fields is tolerated on reading).
pub const TRACKS_HEADER: &str = "time,marker,x,y,z";

/// The unit of a track file's coordinates (`--marker-unit m|mm`); times are always in s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MarkerUnit {
    /// Metres (the default, the scene's unit).
    #[default]
    Metres,
    /// Millimetres (motion-capture systems' usual unit).
    Millimetres,
}

impl MarkerUnit {
    /// A coordinate of the file, in this unit, in m (a division by 1000 for mm: correctly
    /// rounded).
    pub fn to_metres(self, v: f64) -> f64 {
        match self {
            MarkerUnit::Metres => v,
            MarkerUnit::Millimetres => v / 1000.0,
        }
    }

    /// A coordinate in m, in this unit (a product by 1000 for mm: correctly rounded).
    pub fn from_metres(self, v: f64) -> f64 {
        match self {
            MarkerUnit::Metres => v,
            MarkerUnit::Millimetres => v * 1000.0,
        }
    }

    /// `m` or `mm`.
    pub fn label(self) -> &'static str {
        match self {
            MarkerUnit::Metres => "m",
            MarkerUnit::Millimetres => "mm",
        }
    }
}

impl std::str::FromStr for MarkerUnit {
    type Err = String;

    /// `m` or `mm`.
    fn from_str(text: &str) -> Result<MarkerUnit, String> {
        match text {
            "m" => Ok(MarkerUnit::Metres),
            "mm" => Ok(MarkerUnit::Millimetres),
            other => Err(format!(
                "`{other}` is not a marker unit: use m or mm (metres or millimetres)"
            )),
        }
    }
}

/// One marker's samples: times (s), strictly increasing, and positions (m, scene frame).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Track {
    /// Sample times (s), strictly increasing.
    pub times: Vec<f64>,
    /// The marker's position at each time (m, scene frame).
    pub positions: Vec<Vec3>,
}

impl Track {
    /// Number of samples.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// Whether the track has no sample.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }
}

/// The tracks of a scene's markers: one [`Track`] per marker, in the scene's marker order
/// (`Scene::markers`); a marker never sampled has an empty track.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkerTracks {
    /// The markers' names.
    pub names: Vec<String>,
    /// Their tracks (same order).
    pub tracks: Vec<Track>,
}

impl MarkerTracks {
    /// Empty tracks of the markers `names`.
    pub fn new(names: Vec<String>) -> MarkerTracks {
        let tracks = vec![Track::default(); names.len()];
        MarkerTracks { names, tracks }
    }

    /// Empty tracks of `scene`'s markers.
    pub fn for_scene(scene: &Scene) -> MarkerTracks {
        MarkerTracks::new(
            scene
                .markers
                .names()
                .into_iter()
                .map(String::from)
                .collect(),
        )
    }

    /// The track of the marker `name`, if it is one of them.
    pub fn track(&self, name: &str) -> Option<&Track> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|k| &self.tracks[k])
    }

    /// Number of samples over all markers (the data rows of the file).
    pub fn samples(&self) -> usize {
        self.tracks.iter().map(Track::len).sum()
    }

    /// Appends one sample of every marker at `time` (s): `positions` (m), one per marker.
    ///
    /// # Panics
    /// If `positions` has not one entry per marker, or `time` is not finite or not after a
    /// marker's last sample.
    pub fn record(&mut self, time: f64, positions: &[Vec3]) {
        assert_eq!(
            positions.len(),
            self.tracks.len(),
            "one position per marker"
        );
        assert!(time.is_finite(), "a sample time is finite");
        for (track, p) in self.tracks.iter_mut().zip(positions) {
            assert!(
                track.times.last().is_none_or(|&last| time > last),
                "sample times increase"
            );
            track.times.push(time);
            track.positions.push(*p);
        }
    }

    /// Appends every marker of `scene` at `state`, at time `t0 + state.time` (s): `t0` is the
    /// time origin of the run in the track file's clock (0 for a run that starts the file's
    /// time; a recorded experiment's start otherwise).
    pub fn record_state(&mut self, scene: &Scene, state: &State, t0: f64) {
        self.record(t0 + state.time, &scene.markers.positions(state));
    }

    /// The file's text in `unit`: the header, then one row per sample, by time, and at equal
    /// times in marker order. Numbers in Rust's shortest round-trip form (`{:?}`): read back
    /// in m, every value is the same `f64`.
    pub fn to_csv(&self, unit: MarkerUnit) -> String {
        let mut rows: Vec<(f64, usize, usize)> = self
            .tracks
            .iter()
            .enumerate()
            .flat_map(|(m, t)| {
                t.times
                    .iter()
                    .enumerate()
                    .map(move |(k, &time)| (time, m, k))
            })
            .collect();
        // Stable: equal times keep the marker order.
        rows.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut out = String::with_capacity(48 * (rows.len() + 1));
        out.push_str(TRACKS_HEADER);
        out.push('\n');
        for (time, m, k) in rows {
            let p = self.tracks[m].positions[k];
            let [x, y, z] = [p.x, p.y, p.z].map(|c| unit.from_metres(c));
            out.push_str(&format!("{time:?},{},{x:?},{y:?},{z:?}\n", self.names[m]));
        }
        out
    }

    /// Writes the file to `path` in `unit` completely or not at all (a temporary file beside
    /// it, renamed).
    pub fn write(&self, path: &Path, unit: MarkerUnit) -> Result<()> {
        self.stage(path, unit)?.commit()
    }

    /// Writes the file beside `path` under a temporary name, to be moved into place by
    /// [`StagedFile::commit`] once the rest of the run's outputs are written (dropped, it is
    /// removed).
    pub fn stage(&self, path: &Path, unit: MarkerUnit) -> Result<StagedFile> {
        StagedFile::write(path, self.to_csv(unit).as_bytes())
    }

    /// Reads the track file at `path` ([`MarkerTracks::parse`]).
    pub fn read(path: &Path, names: &[&str], unit: MarkerUnit) -> Result<MarkerTracks> {
        let (file, text) = read_text(path)?;
        MarkerTracks::parse(&file, &text, names, unit)
    }

    /// Parses the text of a track file called `file` (named in errors) whose coordinates are
    /// in `unit`, for a scene whose markers are `names` (in scene order: the tracks come back
    /// in that order, a marker the file never samples with an empty track).
    ///
    /// - The first line is the header `time,marker,x,y,z` (whitespace around the fields and a
    ///   UTF-8 byte-order mark are tolerated); blank lines are skipped.
    /// - A row with an empty or NaN time or coordinate is no sample: it is skipped (a marker
    ///   the camera lost). Rows missing altogether are no samples either.
    /// - Errors (one line: `FILE: line N: …`): a wrong number of fields, a time or coordinate
    ///   that is not a number (nor empty, nor NaN) or is infinite, a marker the scene lacks
    ///   (with the scene's markers), and a time not after the same marker's previous time
    ///   (times increase strictly per marker; rows without coordinates count).
    pub fn parse(file: &str, text: &str, names: &[&str], unit: MarkerUnit) -> Result<MarkerTracks> {
        let table = CsvTable::new(file, text);
        table.expect_header(TRACKS_HEADER)?;
        let mut tracks = MarkerTracks::new(names.iter().map(|n| n.to_string()).collect());
        // Per marker: the last time read (s) and its line.
        let mut last: Vec<Option<(f64, usize)>> = vec![None; names.len()];
        for (line, fields) in table.rows() {
            table.expect_fields(line, &fields, TRACKS_HEADER)?;
            let at = |message: String| table.error(line, message);
            let number = |k: usize, what: &str, unit: &str| {
                read_number(fields[k])
                    .map_err(|why| at(format!("{what} `{}` {why} ({unit})", fields[k])))
            };
            let time = number(0, "time", "s")?;
            let marker = fields[1];
            let Some(m) = names.iter().position(|n| *n == marker) else {
                let known = if names.is_empty() {
                    "the scene has no marker".to_string()
                } else {
                    format!("the scene's markers: {}", names.join(", "))
                };
                return Err(at(format!(
                    "marker `{marker}` is not a marker of the scene ({known})"
                )));
            };
            let mut p = [None; 3];
            for (a, axis) in ["x", "y", "z"].iter().enumerate() {
                p[a] = number(2 + a, axis, unit.label())?;
            }
            let Some(time) = time else {
                continue;
            };
            if let Some((before, before_line)) = last[m]
                && !(time > before)
            {
                return Err(at(format!(
                    "marker `{marker}`: time {time} s is not after its previous time {before} s (line {before_line}); times must increase strictly per marker"
                )));
            }
            last[m] = Some((time, line));
            if let [Some(x), Some(y), Some(z)] = p {
                let track = &mut tracks.tracks[m];
                track.times.push(time);
                track.positions.push(Vec3::new(
                    unit.to_metres(x),
                    unit.to_metres(y),
                    unit.to_metres(z),
                ));
            }
        }
        Ok(tracks)
    }
}

/// A field as a number: `None` when empty or NaN (no sample), an error message for text that
/// is not a number or for an infinite one.
fn read_number(field: &str) -> std::result::Result<Option<f64>, &'static str> {
    if field.is_empty() {
        return Ok(None);
    }
    match field.parse::<f64>() {
        Ok(v) if v.is_nan() => Ok(None),
        Ok(v) if v.is_infinite() => Err("is not finite"),
        Ok(v) => Ok(Some(v)),
        Err(_) => Err("is not a number"),
    }
}
