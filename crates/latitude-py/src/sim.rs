//! Simulator bindings: Python arguments → core options, results → dicts of numpy arrays.
//! `Graph.simulate` / `Graph.simulate_samples` in lib.rs delegate here.

use std::time::Instant;

use latitude_core::graph::{ExecGraph, Kind};
use latitude_core::model::{Model, Point};
use latitude_core::net::Routes;
use latitude_core::sim::{self, CollDelays, Dist, NoiseSpec, OsNoise, Semantics, SimGraph, SimOptions, SimResult};
use latitude_core::Error;
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// Everything a simulation needs besides the graph.
pub struct Setup {
    pub pt: Point,
    pub opts: SimOptions,
    pub noise: NoiseSpec,
}

fn semantics(name: &str) -> PyResult<Semantics> {
    match name {
        "design" => Ok(Semantics::Design),
        "loggopsim" => Ok(Semantics::LogGopSim),
        _ => Err(pyo3::exceptions::PyValueError::new_err(format!("unknown semantics {name:?} (design or loggopsim)"))),
    }
}

fn get<'py, T: pyo3::conversion::FromPyObjectOwned<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<T> {
    match d.get_item(key)? {
        Some(v) => v.extract().map_err(Into::into),
        None => Err(pyo3::exceptions::PyKeyError::new_err(format!("noise spec lacks {key:?}"))),
    }
}

fn dist(d: &Bound<'_, PyDict>) -> PyResult<Dist> {
    let kind: String = get(d, "dist")?;
    Ok(match kind.as_str() {
        "gaussian" => Dist::Gaussian { sigma: get(d, "sigma")?, relative: get(d, "relative")? },
        "lognormal" => Dist::LogNormal { sigma: get(d, "sigma")? },
        "uniform" => Dist::Uniform { lo: get(d, "lo")?, hi: get(d, "hi")? },
        _ => return Err(pyo3::exceptions::PyValueError::new_err(format!("unknown distribution {kind:?}"))),
    })
}

/// Noise specs as dicts (see latitude/noise.py) → NoiseSpec; reads trace files.
fn noise_spec(list: Option<&Bound<'_, PyList>>) -> PyResult<Result<NoiseSpec, Error>> {
    let mut spec = NoiseSpec::default();
    let Some(list) = list else { return Ok(Ok(spec)) };
    for item in list.iter() {
        let d = item.cast_into::<PyDict>()?;
        let target: String = get(&d, "target")?;
        match target.as_str() {
            "calc" => spec.calc = Some(dist(&d)?),
            "latency" => spec.latency = Some(dist(&d)?),
            "os" => {
                spec.os.push(OsNoise::Periodic { period_ns: get(&d, "period")?, duration_ns: get(&d, "duration")?, synchronized: get(&d, "synchronized")? })
            }
            "trace" => {
                let path: String = get(&d, "path")?;
                match sim::read_trace(&path) {
                    Ok(events) => spec.os.push(OsNoise::Trace { events, cosched: get(&d, "cosched")? }),
                    Err(e) => return Ok(Err(e)),
                }
            }
            "coll" => {
                let tables: Vec<Bound<'_, PyDict>> =
                    get::<Vec<Bound<'_, PyAny>>>(&d, "tables")?.into_iter().map(|t| t.cast_into::<PyDict>()).collect::<Result<_, _>>()?;
                for t in tables {
                    spec.coll.push(CollDelays { coll: get(&t, "coll")?, procs: get(&t, "procs")?, bytes: get(&t, "bytes")?, delays_ns: get(&t, "delays_ns")? });
                }
            }
            _ => return Err(pyo3::exceptions::PyValueError::new_err(format!("unknown noise target {target:?}"))),
        }
    }
    Ok(Ok(spec))
}

#[allow(clippy::too_many_arguments)]
pub fn setup(
    pt: Point,
    model: Model,
    semantics_name: &str,
    cpu_serialization: bool,
    noise: Option<&Bound<'_, PyList>>,
    record: bool,
) -> PyResult<Result<Setup, Error>> {
    let semantics = semantics(semantics_name)?;
    let noise = match noise_spec(noise)? {
        Ok(n) => n,
        Err(e) => return Ok(Err(e)),
    };
    Ok(Ok(Setup { pt, opts: SimOptions { semantics, model, cpu_serialization, record }, noise }))
}

/// One simulation, timed.
pub fn run_one(g: &ExecGraph, sg: &SimGraph, net: &dyn Routes, s: &Setup, seed: u64) -> Result<(SimResult, f64), Error> {
    let t0 = Instant::now();
    let r = sim::simulate(g, sg, net, &s.pt, &s.opts, &s.noise, seed)?;
    Ok((r, t0.elapsed().as_secs_f64()))
}

/// A result as a dict (timeline arrays under "timeline" when recorded).
pub fn result_dict<'py>(py: Python<'py>, g: &ExecGraph, r: &SimResult, elapsed: f64) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("runtime_ns", r.runtime_ns())?;
    d.set_item("rank_end_ns", r.rank_end_ns().into_pyarray(py))?;
    d.set_item("rank_end_units", r.rank_end.clone().into_pyarray(py))?;
    d.set_item("unit_ticks", r.unit_ticks)?;
    d.set_item("exact", r.exact)?;
    d.set_item("events", r.events)?;
    d.set_item("elapsed_s", elapsed)?;
    d.set_item("static_mismatches", r.static_mismatches)?;
    d.set_item("unfinished", r.unfinished)?;
    if let Some(rec) = &r.record {
        d.set_item("timeline", timeline_dict(py, g, r, rec)?)?;
    }
    Ok(d)
}

/// Columnar timeline data: slices (CPU phases), waits, message flows, critical marks.
fn timeline_dict<'py>(py: Python<'py>, g: &ExecGraph, r: &SimResult, rec: &sim::Record) -> PyResult<Bound<'py, PyDict>> {
    let cp = rec.critical_path(g);
    let mut crit = vec![false; rec.slices.len()];
    for &i in &cp.slices {
        crit[i as usize] = true;
    }
    let mut crit_msg = vec![false; g.len()];
    for &u in &cp.messages {
        crit_msg[u as usize] = true;
    }
    let ns = |t: u64| r.to_ns(t);
    let sl = &rec.slices;
    let d = PyDict::new(py);
    d.set_item("s_rank", sl.iter().map(|s| s.rank).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("s_cpu", sl.iter().map(|s| s.cpu).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("s_lane", rec.lanes().into_pyarray(py))?;
    d.set_item("s_t0_ns", sl.iter().map(|s| ns(s.t0)).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("s_t1_ns", sl.iter().map(|s| ns(s.t1.max(s.t0))).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("s_kind", sl.iter().map(|s| s.kind as u8).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("s_vertex", sl.iter().map(|s| s.v).collect::<Vec<_>>().into_pyarray(py))?;
    // LogGOPSim's arrival phases belong to the message (the send), not to an op of the rank
    // that runs them: no op index there.
    let local = |s: &sim::Slice| if s.kind == sim::SliceKind::Recv && g.kind(s.v) == Kind::Send { u32::MAX } else { g.local(s.v) };
    d.set_item("s_local", sl.iter().map(local).collect::<Vec<_>>().into_pyarray(py))?;
    // The other side of a message phase: a send's destination, a receive's actual source and
    // size (from the matched send: a receive may be ANY_SOURCE, LogGOPSim's arrival phases
    // belong to the send).
    let mut other: Vec<u32> = sl.iter().map(|s| if s.kind == sim::SliceKind::Calc { u32::MAX } else { g.peer(s.v) }).collect();
    let mut bytes: Vec<u64> = sl.iter().map(|s| if s.kind == sim::SliceKind::Calc { 0 } else { g.val(s.v) }).collect();
    for &(u, _, dst) in &rec.flows {
        other[dst as usize] = g.rank(u);
        bytes[dst as usize] = g.val(u);
    }
    d.set_item("s_other", other.into_pyarray(py))?;
    d.set_item("s_bytes", bytes.into_pyarray(py))?;
    d.set_item("s_tag", sl.iter().map(|s| g.tag(s.v)).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("s_val", sl.iter().map(|s| g.val(s.v)).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("s_critical", crit.into_pyarray(py))?;
    let waits = rec.waits(g);
    d.set_item("w_vertex", waits.iter().map(|w| w.0).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("w_rank", waits.iter().map(|w| g.rank(w.0)).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("w_kind", waits.iter().map(|w| g.kind(w.0) as u8).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("w_local", waits.iter().map(|w| g.local(w.0)).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("w_t0_ns", waits.iter().map(|w| ns(w.1)).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("w_t1_ns", waits.iter().map(|w| ns(w.2)).collect::<Vec<_>>().into_pyarray(py))?;
    let flows: Vec<&(u32, u32, u32)> = rec.flows.iter().filter(|f| f.1 != u32::MAX).collect();
    d.set_item("f_send", flows.iter().map(|f| f.0).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("f_src", flows.iter().map(|f| f.1).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("f_dst", flows.iter().map(|f| f.2).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("f_critical", flows.iter().map(|f| crit_msg[f.0 as usize]).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("critical_slices", cp.slices.len())?;
    d.set_item("critical_messages", cp.messages.len())?;
    d.set_item("ranks", g.num_ranks())?;
    Ok(d)
}

/// Monte Carlo samples → {"runtime_ns", "slowest_rank", "events", "elapsed_s"}.
pub fn samples<'py>(py: Python<'py>, out: Result<(Vec<sim::Sample>, f64), Error>) -> PyResult<Result<Bound<'py, PyDict>, Error>> {
    let (samples, elapsed) = match out {
        Ok(x) => x,
        Err(e) => return Ok(Err(e)),
    };
    let d = PyDict::new(py);
    d.set_item("runtime_ns", samples.iter().map(|s| s.runtime_ns).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("slowest_rank", samples.iter().map(|s| s.slowest_rank).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("events", samples.iter().map(|s| s.events).sum::<u64>())?;
    d.set_item("elapsed_s", elapsed)?;
    Ok(Ok(d))
}

#[allow(clippy::too_many_arguments)]
pub fn run_samples(
    g: &ExecGraph,
    sg: &SimGraph,
    net: &dyn Routes,
    s: &Setup,
    seed: u64,
    first: u64,
    count: u64,
    threads: usize,
) -> Result<(Vec<sim::Sample>, f64), Error> {
    let t0 = Instant::now();
    let out = sim::simulate_samples(g, sg, net, &s.pt, &s.opts, &s.noise, seed, first, count, threads)?;
    Ok((out, t0.elapsed().as_secs_f64()))
}
