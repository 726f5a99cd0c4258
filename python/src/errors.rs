//! Rust errors and panics as Python exceptions, with the CLI's one-line messages.
//!
//! `FileNotFoundError` for a missing scene, mesh or obstacle file; `OSError` for another
//! I/O failure; `ValueError` for bad input (parse errors, out-of-range values, unknown keys
//! and names); `diffsoro.ConvergenceError` (a `RuntimeError`) for a contact solve that
//! stopped at its iteration limit under `strict=True`; `RuntimeError` for an internal error
//! (a Rust panic, caught before it reaches Python).

use std::panic::{AssertUnwindSafe, catch_unwind};

use pyo3::create_exception;
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

create_exception!(
    _diffsoro,
    ConvergenceError,
    PyRuntimeError,
    "An iterative solve (a step's contact NCP) stopped at its iteration limit under strict=True."
);

/// The Python exception of a library error; the message is the CLI's (`error: MESSAGE`).
pub fn to_py(e: diffsoro::Error) -> PyErr {
    let message = e.to_string();
    match &e {
        diffsoro::Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err(message)
        }
        diffsoro::Error::Io { .. } => PyOSError::new_err(message),
        // The scene checks a mesh or obstacle path before opening it:
        // `soft_body.beam.mesh: file ../meshes/x.msh not found`.
        diffsoro::Error::Invalid { message: m, .. }
            if m.starts_with("file ") && m.ends_with(" not found") =>
        {
            PyFileNotFoundError::new_err(message)
        }
        _ => PyValueError::new_err(message),
    }
}

/// Runs `f`, turning a library error into its Python exception and a panic into a
/// `RuntimeError` (no panic crosses into Python).
pub fn guarded<T>(f: impl FnOnce() -> diffsoro::Result<T>) -> PyResult<T> {
    guarded_py(|| f().map_err(to_py))
}

/// Runs `f` on a worker of the bindings' rayon pool (as many threads as RAYON_NUM_THREADS or
/// the cores), so the parallel loops of a step start on the thread that runs it instead of
/// being handed over from the caller's thread and waited for; `f` itself when the pool
/// cannot be built.
pub fn on_worker<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    match POOL.get_or_init(|| rayon::ThreadPoolBuilder::new().build().ok()) {
        Some(pool) => pool.install(f),
        None => f(),
    }
}

/// [`guarded`] for a closure that already returns Python errors.
pub fn guarded_py<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(PyRuntimeError::new_err(format!(
                "internal error in diffsoro (please report it): {what}"
            )))
        }
    }
}

/// A `ValueError` naming `what` (one line: `what: message`).
pub fn invalid(what: impl std::fmt::Display, message: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("{what}: {message}"))
}
