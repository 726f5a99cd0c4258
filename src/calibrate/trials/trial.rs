//! One trial of an experiment: the command log a robot followed (`INPUTS.csv`,
//! docs/cli.md#commands-over-time) and the marker tracks observed meanwhile (`MARKERS.csv`,
//! docs/outputs.md#marker-track-files), given as `--trial INPUTS.csv:MARKERS.csv`, read and
//! checked against each other and the scene.
//!
//! The time base is the log's: simulation time 0 is the log's first row t₀, and a marker
//! sample at file time t is compared with the run at simulation time t − t₀ (the same clock
//! for both files). The run lasts the whole steps that reach the last sample,
//! ⌈(t_last − t₀)/dt − 10⁻⁹⌉ (as `simulate --inputs` reaches a log's last row), so no sample lies
//! after the run's end; a sample before t₀ is an error, since nothing is simulated there.

use std::path::Path;

use crate::error::{Error, Result};
use crate::scene::{CommandLog, CommandSchedule, MarkerTracks, MarkerUnit, Scene};

/// A trial: a command log and the marker tracks observed while the robot followed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Trial {
    /// The `--trial` argument (`INPUTS.csv:MARKERS.csv`), or a label, as given.
    pub label: String,
    /// The command log.
    pub log: CommandLog,
    /// The marker file's name, as given.
    pub markers_file: String,
    /// The observed tracks (m, the camera's frame, times in s on the log's clock), one per
    /// marker of the scene in scene order (a marker the file never samples has none).
    pub observed: MarkerTracks,
    /// The steps the trial is simulated for: the whole steps that reach its last sample.
    pub steps: usize,
}

impl Trial {
    /// Reads the trial of a `--trial INPUTS.csv:MARKERS.csv` argument (`arg`, split at its
    /// first `:`) for `scene`, its marker coordinates in `unit`. Errors: an argument without
    /// `:` or a file that cannot be read (naming the argument), the files' own errors (file and
    /// line: [`CommandLog::parse`], [`MarkerTracks::parse`]), and [`Trial::new`]'s.
    pub fn from_argument(scene: &Scene, arg: &str, unit: MarkerUnit) -> Result<Trial> {
        let what = || format!("--trial `{arg}`");
        let Some((inputs, markers)) = arg.split_once(':') else {
            return Err(Error::invalid(
                what(),
                "expected INPUTS.csv:MARKERS.csv (the command log, a colon, the marker tracks)",
            ));
        };
        if inputs.is_empty() || markers.is_empty() {
            return Err(Error::invalid(
                what(),
                "expected INPUTS.csv:MARKERS.csv, with a file on each side of the colon",
            ));
        }
        for (file, role) in [(inputs, "command log"), (markers, "marker file")] {
            let path = Path::new(file);
            if let Err(e) = std::fs::metadata(path) {
                return Err(Error::invalid(what(), format!("the {role} `{file}`: {e}")));
            }
            if path.is_dir() {
                return Err(Error::invalid(
                    what(),
                    format!("the {role} `{file}` is a folder, not a file"),
                ));
            }
        }
        let log = CommandLog::read(Path::new(inputs))?;
        let names = scene.markers.names();
        let observed = MarkerTracks::read(Path::new(markers), &names, unit)?;
        Trial::new(scene, arg.to_string(), log, markers.to_string(), observed)
    }

    /// A trial of `scene` from a read `log` and `observed` tracks (in the scene's marker order,
    /// m, camera frame) of the file `markers_file`, labelled `label`. Errors: a scene without
    /// markers, a log naming no actuator of the scene ([`CommandSchedule::new`]), a marker file
    /// without a sample, a sample before the log's first row t₀ (naming the marker file, the
    /// marker and the time; all of them before t₀: the two clocks do not overlap).
    pub fn new(
        scene: &Scene,
        label: String,
        log: CommandLog,
        markers_file: String,
        observed: MarkerTracks,
    ) -> Result<Trial> {
        if scene.markers.is_empty() {
            return Err(Error::invalid(
                format!("trial `{label}`"),
                "the scene has no marker to compare the tracks with (add [[soft_body.marker]] entries)",
            ));
        }
        assert_eq!(
            observed.names,
            scene
                .markers
                .names()
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>(),
            "tracks in the scene's marker order"
        );
        // The log's names against the scene's actuators (file and line 1 on error).
        CommandSchedule::new(scene, log.clone())?;
        let t0 = log.t0();
        let last = observed
            .tracks
            .iter()
            .filter_map(|t| t.times.last().copied())
            .fold(f64::NEG_INFINITY, f64::max);
        if observed.samples() == 0 {
            return Err(Error::invalid(
                &markers_file,
                "has no marker sample (every row is missing a time or a coordinate)",
            ));
        }
        if last < t0 {
            return Err(Error::invalid(
                &markers_file,
                format!(
                    "its samples end at {last} s, before the first row of the command log {} (t₀ = {t0} s): the two files' clocks do not overlap (no sample at or after t₀; both files' times must be on the same clock)",
                    log.file
                ),
            ));
        }
        for (name, track) in observed.names.iter().zip(&observed.tracks) {
            if let Some(&t) = track.times.first()
                && t < t0
            {
                return Err(Error::invalid(
                    &markers_file,
                    format!(
                        "marker `{name}`: its sample at {t} s lies before the first row of the command log {} (t₀ = {t0} s), where nothing is simulated: trim the tracks to t ≥ t₀",
                        log.file
                    ),
                ));
            }
        }
        let steps = steps_to_reach(t0, last, scene.simulation.dt);
        Ok(Trial {
            label,
            log,
            markers_file,
            observed,
            steps,
        })
    }

    /// The log's first row time t₀ (s): simulation time 0.
    pub fn t0(&self) -> f64 {
        self.log.t0()
    }

    /// The observed samples over all markers.
    pub fn samples(&self) -> usize {
        self.observed.samples()
    }
}

/// The whole steps of `dt` (s) from `t0` that reach `last` (s): ⌈(last − t₀)/dt − 10⁻⁹⌉, 0 when
/// `last` ≤ t₀ (the 10⁻⁹ keeps samples taken at the steps' times from gaining a step to
/// rounding).
pub fn steps_to_reach(t0: f64, last: f64, dt: f64) -> usize {
    ((last - t0) / dt - 1e-9).ceil().max(0.0) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_reaches_the_last_sample_without_a_spare_step() {
        assert_eq!(steps_to_reach(1.0, 1.0, 0.01), 0);
        assert_eq!(steps_to_reach(1.0, 1.3, 0.01), 30);
        assert_eq!(steps_to_reach(1.0, 1.3001, 0.01), 31);
        // 0.1 + 29 × 0.01 in floating point is 0.39000000000000007 or 0.38999999999999996:
        // either way 29 steps.
        assert_eq!(steps_to_reach(0.1, 0.1 + 29.0 * 0.01, 0.01), 29);
    }
}
