//! `diffsoro.read_marker_tracks`: a marker track file (`time,marker,x,y,z`, docs/outputs.md)
//! read by the crate's reader, as NumPy arrays.

use std::path::PathBuf;

use diffsoro::scene::{MarkerTracks, MarkerUnit};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::nodes_to_array;
use crate::errors::{guarded, invalid};
use crate::scene::PyScene;

/// Reads the marker track file at `path` for `scene`'s markers, its coordinates in `unit`
/// (`"m"` or `"mm"`; times in s): {name: (times (T,) in s, positions (T, 3) in m)} for every
/// marker of the scene in its marker order (`Scene.marker_names`), a marker the file never
/// samples with T = 0. Rows with an empty or NaN value are no samples. Raises
/// `FileNotFoundError` for a missing file and `ValueError` with the reader's one-line message
/// naming the file and the line (a wrong header or field count, a value that is not a number,
/// a marker the scene lacks, a time not after the same marker's previous one) or the unit.
#[pyfunction]
#[pyo3(signature = (path, scene, unit = "m"))]
pub fn read_marker_tracks<'py>(
    py: Python<'py>,
    path: PathBuf,
    scene: &PyScene,
    unit: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let unit: MarkerUnit = unit.parse().map_err(|e| invalid("unit", e))?;
    let names = scene.scene.markers.names();
    let tracks = py.detach(|| guarded(|| MarkerTracks::read(&path, &names, unit)))?;
    let out = PyDict::new(py);
    for (name, track) in tracks.names.iter().zip(&tracks.tracks) {
        let times = PyArray1::from_slice(py, &track.times);
        let positions = nodes_to_array(py, &track.positions);
        out.set_item(name, (times, positions))?;
    }
    Ok(out)
}
