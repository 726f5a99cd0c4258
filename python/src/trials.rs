//! `diffsoro.calibrate(scene, trials=[…], params=[…])`: a fit to trials given as arrays (the
//! CLI's `calibrate --trial INPUTS.csv:MARKERS.csv`), each trial a dict of its commands and its
//! observed marker samples.

use std::fmt::Write as _;

use diffsoro::calibrate::trials::{Trial, TrialOptions, TrialSetup, parse_comparison};
use diffsoro::scene::{CommandLog, MarkerTracks, MarkerUnit, RunStart, Scene};
use numpy::{AllowTypeChange, PyArrayLike1, PyArrayLike2};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::{guarded, invalid};

/// One trial from its dict: `"times"` (R,) s and `"commands"` {actuator: (R,) command units},
/// and `"markers"` either {"times": (N,) s, "names": N names, "xyz": (N, 3)} (long form, one
/// row per sample, as a marker file's rows) or {name: (times (T,), positions (T, 3))} (as
/// `read_marker_tracks` returns), coordinates in `unit`; optional `"label"`. The marker
/// samples go through the marker-file reader's rules (NaN rows skipped, an unknown marker or
/// a time not after the same marker's previous one an error naming the row).
fn trial_of(
    scene: &Scene,
    k: usize,
    trial: &Bound<'_, PyAny>,
    unit: MarkerUnit,
) -> PyResult<Trial> {
    let what = |key: &str| format!("trials[{k}][{key:?}]");
    let dict = trial.cast::<PyDict>().map_err(|_| {
        invalid(
            format!("trials[{k}]"),
            "expected a dict with \"times\", \"commands\" and \"markers\"",
        )
    })?;
    let get = |key: &str| -> PyResult<Bound<'_, PyAny>> {
        dict.get_item(key)?
            .ok_or_else(|| invalid(format!("trials[{k}]"), format!("has no {key:?}")))
    };
    let label: String = match dict.get_item("label")? {
        Some(l) => l.extract()?,
        None => format!("trials[{k}]"),
    };
    let times: PyArrayLike1<'_, f64, AllowTypeChange> = get("times")?.extract()?;
    let commands = get("commands")?;
    let commands = commands
        .cast::<PyDict>()
        .map_err(|_| invalid(what("commands"), "expected a dict {actuator: (R,) array}"))?;
    let mut columns = Vec::new();
    for (name, column) in commands.iter() {
        let column: PyArrayLike1<'_, f64, AllowTypeChange> = column.extract()?;
        columns.push((name.extract::<String>()?, column.as_array().to_vec()));
    }
    let log = guarded(|| {
        CommandLog::from_columns(&what("commands"), times.as_array().to_vec(), columns)
    })?;
    // The samples as the rows of a marker file (`{:?}` round-trips every f64), read by the
    // file reader: row i is line i + 2 in its messages.
    let markers = get("markers")?;
    let markers = markers
        .cast::<PyDict>()
        .map_err(|_| invalid(what("markers"), "expected a dict"))?;
    let mut rows: Vec<(f64, String, [f64; 3])> = Vec::new();
    if let Some(names) = markers.get_item("names")? {
        let names: Vec<String> = names.extract()?;
        let t: PyArrayLike1<'_, f64, AllowTypeChange> = markers
            .get_item("times")?
            .ok_or_else(|| invalid(what("markers"), "has \"names\" but no \"times\""))?
            .extract()?;
        let xyz: PyArrayLike2<'_, f64, AllowTypeChange> = markers
            .get_item("xyz")?
            .ok_or_else(|| invalid(what("markers"), "has \"names\" but no \"xyz\""))?
            .extract()?;
        let (t, xyz) = (t.as_array(), xyz.as_array());
        if t.len() != names.len() || xyz.nrows() != names.len() || xyz.ncols() != 3 {
            return Err(invalid(
                what("markers"),
                format!(
                    "\"times\" ({}), \"names\" ({}) and \"xyz\" {:?} must have one row per sample, xyz three columns",
                    t.len(),
                    names.len(),
                    xyz.shape()
                ),
            ));
        }
        for (i, name) in names.into_iter().enumerate() {
            rows.push((t[i], name, [xyz[(i, 0)], xyz[(i, 1)], xyz[(i, 2)]]));
        }
    } else {
        for (name, track) in markers.iter() {
            let name: String = name.extract()?;
            let (t, p): (
                PyArrayLike1<'_, f64, AllowTypeChange>,
                PyArrayLike2<'_, f64, AllowTypeChange>,
            ) = track.extract()?;
            let (t, p) = (t.as_array(), p.as_array());
            if p.nrows() != t.len() || p.ncols() != 3 {
                return Err(invalid(
                    what("markers"),
                    format!(
                        "{name:?}: {} times and positions {:?}: expected (T,) and (T, 3)",
                        t.len(),
                        p.shape()
                    ),
                ));
            }
            for i in 0..t.len() {
                rows.push((t[i], name.clone(), [p[(i, 0)], p[(i, 1)], p[(i, 2)]]));
            }
        }
    }
    let mut text = String::from("time,marker,x,y,z\n");
    for (t, name, p) in &rows {
        let _ = writeln!(text, "{t:?},{name},{:?},{:?},{:?}", p[0], p[1], p[2]);
    }
    let names = scene.markers.names();
    let file = format!("{} (row i is line i + 2)", what("markers"));
    let observed = guarded(|| MarkerTracks::parse(&file, &text, &names, unit))?;
    guarded(|| Trial::new(scene, label, log, what("markers"), observed))
}

/// The checked setup of a fit of `params` of `scene` to `trials` (`trial_of`), as `diffsoro
/// calibrate --trial`: `options` are `compare`, `register`, `start` (None: the defaults) and
/// the markers' unit.
pub fn trial_setup(
    scene: &Scene,
    trials: &Bound<'_, PyList>,
    params: &[String],
    bounds: &[String],
    init: &[String],
    options: (Option<&str>, Option<&str>, Option<&str>, &str),
) -> PyResult<TrialSetup> {
    let (compare, register, start, unit) = options;
    let unit: MarkerUnit = unit.parse().map_err(|e| invalid("marker_unit", e))?;
    let (comparison, registration) =
        guarded(|| parse_comparison(compare, register, ["compare", "register"]))?;
    let options = TrialOptions {
        start: match start {
            Some(s) => guarded(|| RunStart::parse("start", s))?,
            None => RunStart::default(),
        },
        comparison,
        registration,
    };
    let trials = trials
        .iter()
        .enumerate()
        .map(|(k, t)| trial_of(scene, k, &t, unit))
        .collect::<PyResult<Vec<_>>>()?;
    let mut setup = guarded(|| TrialSetup::new(scene, params, bounds, init, options))?;
    setup.trials = trials;
    Ok(setup)
}
