//! `latitude._core`: the Rust core seen from Python. Thin on purpose: a graph handle,
//! loaders, and calls that return plain dicts / numpy arrays; `latitude.graph` builds the
//! user-facing objects. Heavy work runs without the GIL.

mod config;
mod convert;
mod decompose;
mod errors;
mod graph;
mod sim;
mod synth;

use crate::config::Config;
use crate::errors::input_error;
use graph::Graph;

use latitude_core::model::{p, NPARAM};
use latitude_core::{lgraph, Error};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Cache key of a graph made from `paths` (files, or directories of files) with options
/// `extra`: their sizes and modification times. None if a path is missing.
#[pyfunction]
#[pyo3(signature = (paths, extra=b"".to_vec()))]
fn lgraph_key(paths: Vec<String>, extra: Vec<u8>) -> Option<u64> {
    let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    lgraph::cache_key(&refs, &extra)
}

/// Is this file an `.lgraph` (by its magic bytes)?
#[pyfunction]
fn is_lgraph(path: &str) -> bool {
    lgraph::is_lgraph(path)
}

/// Threads of the core's data-parallel loops (LATITUDE_THREADS, else the available cores);
/// InputError when LATITUDE_THREADS is set to anything but a positive whole number.
#[pyfunction]
fn threads(py: Python<'_>) -> PyResult<usize> {
    use latitude_core::parallel::{threads_from_env, THREADS_ENV};
    threads_from_env().map_err(|v| input_error(py, Error::in_file(THREADS_ENV, format!("expected a positive whole number of threads, got '{v}'"))))?;
    Ok(latitude_core::parallel::threads())
}

/// The calls of every rank of a trace (a directory or the rank-0 file): per rank a dict of
/// `names` (list) and arrays `name` (index into names), `start_ns`, `end_ns` (after the
/// rank's MPI_Init, scaled by `timemult`), `line`.
#[pyfunction]
#[pyo3(signature = (path, timemult=1000.0))]
fn trace_times<'py>(py: Python<'py>, path: String, timemult: f64) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let set = latitude_core::trace::discover(&path).map_err(|e| input_error(py, e))?;
    let ranks = py.detach(|| latitude_core::trace::call_times(&set, timemult)).map_err(|e| input_error(py, e))?;
    ranks
        .into_iter()
        .map(|t| {
            let d = PyDict::new(py);
            d.set_item("names", t.names)?;
            d.set_item("name", t.name.into_pyarray(py))?;
            d.set_item("start_ns", t.start_ns.into_pyarray(py))?;
            d.set_item("end_ns", t.end_ns.into_pyarray(py))?;
            d.set_item("line", t.line.into_pyarray(py))?;
            Ok(d)
        })
        .collect()
}

/// {MPI function name: how the trace reader treats it} (see `trace::known_calls`).
#[pyfunction]
fn trace_calls() -> std::collections::BTreeMap<&'static str, &'static str> {
    latitude_core::trace::known_calls().into_iter().collect()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<Graph>()?;
    m.add_class::<Config>()?;
    m.add_class::<config::Machine>()?;
    m.add_function(wrap_pyfunction!(lgraph_key, m)?)?;
    m.add_function(wrap_pyfunction!(is_lgraph, m)?)?;
    m.add_function(wrap_pyfunction!(synth::generate_job, m)?)?;
    m.add_function(wrap_pyfunction!(synth::check_job, m)?)?;
    m.add_function(wrap_pyfunction!(synth::available_memory, m)?)?;
    m.add_function(wrap_pyfunction!(threads, m)?)?;
    m.add_function(wrap_pyfunction!(trace_calls, m)?)?;
    m.add_function(wrap_pyfunction!(trace_times, m)?)?;
    m.add("NPARAM", NPARAM)?;
    m.add("MAXP", latitude_core::model::MAXP)?;
    m.add("PARAM_NAMES", p::NAMES.to_vec())?;
    Ok(())
}
