//! Job-file bindings: `latitude._core.generate_job` (job file → graph + statistics) and
//! `latitude._core.check_job` (the canonical text of a job file, `latitude generate --check`).

use latitude_core::collectives::Selection;
use latitude_core::synth::{build, finish, JobFile, JobStats, SynthOptions};
use latitude_core::Error;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::input_error;
use crate::graph::{wrap, Graph};

fn parse(path: &str, text: Option<&str>) -> Result<JobFile, Error> {
    match text {
        Some(t) => JobFile::parse(t, path),
        None => JobFile::read(path),
    }
}

/// Generate the graph of a job file (read from `path`, or `text` named `path`). Returns
/// (graph, stats). `progress(phase, done, total)` is called now and then.
#[pyfunction]
#[pyo3(signature = (path, text=None, seed=1, coll="default", progress=None, max_ops=None))]
pub fn generate_job<'py>(
    py: Python<'py>,
    path: String,
    text: Option<String>,
    seed: u64,
    coll: &str,
    progress: Option<Py<PyAny>>,
    max_ops: Option<u64>,
) -> PyResult<(Graph, Bound<'py, PyDict>)> {
    let coll = Selection::parse(coll).map_err(|m| input_error(py, Error { location: "--coll".into(), message: m }))?;
    let opts = SynthOptions { seed, coll, max_ops };
    let res = py.detach(|| {
        let report = |phase: &str, done: u64, total: u64| {
            if let Some(cb) = &progress {
                Python::attach(|py| {
                    let _ = cb.call1(py, (phase, done, total));
                });
            }
        };
        let file = parse(&path, text.as_deref())?;
        let (b, jobs) = build(&file, &opts, &mut |d, t| report("generating", d, t))?;
        report("ordering", 0, 0);
        let g = finish(b, &file.path)?;
        Ok::<_, Error>((g, jobs, file.world))
    });
    let (g, jobs, world) = res.map_err(|e| input_error(py, e))?;
    let d = PyDict::new(py);
    d.set_item("world", world)?;
    d.set_item("seed", seed)?;
    d.set_item("coll", opts.coll.describe())?;
    d.set_item("jobs", job_list(py, &jobs)?)?;
    Ok((wrap(g), d))
}

fn job_list<'py>(py: Python<'py>, jobs: &[JobStats]) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for j in jobs {
        let jd = PyDict::new(py);
        jd.set_item("name", &j.name)?;
        jd.set_item("ranks", j.ranks)?;
        jd.set_item("iterations", j.iterations)?;
        let ms = PyList::empty(py);
        for m in &j.motifs {
            let md = PyDict::new(py);
            md.set_item("line", m.line)?;
            md.set_item("motif", m.name)?;
            md.set_item("calls", m.calls)?;
            md.set_item("alg", m.alg.clone())?;
            ms.append(md)?;
        }
        jd.set_item("motifs", ms)?;
        out.append(jd)?;
    }
    Ok(out)
}

/// The job file as understood (every value resolved), or InputError.
#[pyfunction]
#[pyo3(signature = (path, text=None))]
pub fn check_job(py: Python<'_>, path: String, text: Option<String>) -> PyResult<String> {
    parse(&path, text.as_deref()).map(|f| f.canonical()).map_err(|e| input_error(py, e))
}

/// Memory the machine has available now, in bytes (None if unknown): the budget that job
/// generation and Monte Carlo samples are checked against.
#[pyfunction]
pub fn available_memory() -> Option<u128> {
    latitude_core::synth::budget::available_memory()
}
