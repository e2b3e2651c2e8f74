//! `Graph.decompose` (lib.rs delegates here): the core's decomposition as a dict of numpy
//! arrays.

use latitude_core::engine::decompose::{Decomposition, PARTS, PART_NAMES};
use numpy::{IntoPyArray, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

pub fn result_dict<'py>(py: Python<'py>, d: Decomposition) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("runtime_ns", d.t_ns)?;
    out.set_item("parts", PART_NAMES.to_vec())?;
    out.set_item("rank_end_ns", d.rank_end_ns.into_pyarray(py))?;
    let flat: Vec<f64> = d.rank_parts_ns.iter().flat_map(|x| x.iter().copied()).collect();
    let ranks = flat.len() / PARTS;
    out.set_item("rank_parts_ns", numpy::PyArray1::from_vec(py, flat).reshape([ranks, PARTS])?)?;
    out.set_item("seg_vertex", d.seg_vertex.into_pyarray(py))?;
    out.set_item("seg_from", d.seg_from.into_pyarray(py))?;
    out.set_item("seg_until", d.seg_until.into_pyarray(py))?;
    out.set_item("seg_part", d.seg_part.into_pyarray(py))?;
    out.set_item("seg_ns", d.seg_ns.into_pyarray(py))?;
    out.set_item("residual", d.residual)?;
    Ok(out)
}
