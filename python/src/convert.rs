//! Conversions between the crate's types and Python objects: nodal fields as (n, 3) float64
//! NumPy arrays (owned out, read-only views in), serde values through Python's `json`, and
//! `overrides={...}` values as the crate's `--set PATH=VALUE` strings.

use diffsoro::math::Vec3;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray2, ndarray::Array2};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::errors::invalid;

/// An owned (n, 3) float64 array of a nodal field (one copy).
pub fn nodes_to_array<'py>(py: Python<'py>, field: &[Vec3]) -> Bound<'py, PyArray2<f64>> {
    let flat: Vec<f64> = field.iter().flat_map(|p| [p.x, p.y, p.z]).collect();
    Array2::from_shape_vec((field.len(), 3), flat)
        .expect("3 components per node")
        .into_pyarray(py)
}

/// An owned float64 array of shape (3,).
pub fn vec3_to_array<'py>(py: Python<'py>, p: Vec3) -> Bound<'py, PyArray1<f64>> {
    vec![p.x, p.y, p.z].into_pyarray(py)
}

/// A nodal field from an (n, 3) array of any strides; `what` names it in errors (shape,
/// non-finite entries).
pub fn array_to_nodes(
    array: &PyReadonlyArray2<'_, f64>,
    n: usize,
    what: &str,
) -> PyResult<Vec<Vec3>> {
    let view = array.as_array();
    if view.shape() != [n, 3] {
        return Err(invalid(
            what,
            format!("has shape {:?}, expected ({n}, 3)", view.shape()),
        ));
    }
    let mut out = Vec::with_capacity(n);
    for (i, row) in view.outer_iter().enumerate() {
        let p = Vec3::new(row[0], row[1], row[2]);
        if !p.iter().all(|c| c.is_finite()) {
            return Err(invalid(format!("{what} row {i}"), "is not finite"));
        }
        out.push(p);
    }
    Ok(out)
}

/// A serialisable value as Python objects (dicts, lists, floats, …) through `json.loads`:
/// floats are exactly those of the CLI's JSON.
pub fn to_python<'py>(
    py: Python<'py>,
    value: &impl serde::Serialize,
) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(value).map_err(|e| invalid("JSON output", e))?;
    py.import("json")?.call_method1("loads", (text,))
}

/// JSON text of a Python object (through `json.dumps`).
pub fn to_json_text(value: &Bound<'_, PyAny>) -> PyResult<String> {
    value
        .py()
        .import("json")?
        .call_method1("dumps", (value,))?
        .extract()
}

/// A Python value (bool, int, float, str, or a list or tuple of them) as a TOML value;
/// `key` names it in errors.
fn to_toml(key: &str, value: &Bound<'_, PyAny>) -> PyResult<toml::Value> {
    if value.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(value.extract()?));
    }
    if value.is_instance_of::<PyInt>() {
        let i: i64 = value
            .extract()
            .map_err(|_| invalid(format!("override `{key}`"), "integer out of range"))?;
        return Ok(toml::Value::Integer(i));
    }
    if value.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(value.extract()?));
    }
    if value.is_instance_of::<PyString>() {
        return Ok(toml::Value::String(value.extract()?));
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let items = value
            .try_iter()?
            .map(|item| to_toml(key, &item?))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(toml::Value::Array(items));
    }
    // NumPy scalars and other numbers.
    if let Ok(f) = value.extract::<f64>() {
        return Ok(toml::Value::Float(f));
    }
    Err(invalid(
        format!("override `{key}`"),
        format!(
            "value of type {} is not a number, bool, string or list",
            value.get_type().name()?
        ),
    ))
}

/// `overrides={"soft_body.beam.young_modulus": 3e5, …}` as the crate's `--set` strings
/// (`PATH=VALUE`, VALUE in TOML), in the dict's order.
pub fn override_strings(overrides: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<String>> {
    let Some(dict) = overrides else {
        return Ok(Vec::new());
    };
    dict.iter()
        .map(|(k, v)| {
            let key: String = k
                .extract()
                .map_err(|_| invalid("overrides", "keys must be strings (dotted paths)"))?;
            let value = to_toml(&key, &v)?;
            Ok(format!("{key}={value}"))
        })
        .collect()
}
