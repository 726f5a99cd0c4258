//! `diffsoro._diffsoro`: the Python bindings of diffsoro (PyO3), re-exported by the
//! pure-Python package `diffsoro` (`python/diffsoro`). A thin layer: arguments and arrays in,
//! the crate's scenes, steps, derivatives and jobs, NumPy arrays and dicts out. No physics.

mod controller;
mod convert;
mod derivatives;
mod errors;
mod jobs;
mod scene;
mod simulation;
mod tape;
mod tracks;
mod trials;

use pyo3::prelude::*;

/// The compiled part of `diffsoro`; import `diffsoro` instead.
#[pymodule]
fn _diffsoro(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<scene::PyScene>()?;
    m.add_class::<simulation::PySimulation>()?;
    m.add_class::<tape::PyTape>()?;
    m.add_class::<controller::PyController>()?;
    m.add_function(wrap_pyfunction!(jobs::calibrate, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::control, m)?)?;
    m.add_function(wrap_pyfunction!(tracks::read_marker_tracks, m)?)?;
    m.add(
        "ConvergenceError",
        m.py().get_type::<errors::ConvergenceError>(),
    )?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
