//! Conversions between Python's arguments and results and the core's types: parameter
//! ticks, rationals, schedule options and statistics, pairwise rows, critical-path step names.

use latitude_core::collectives::Selection;
use latitude_core::engine::pairs::pair_sensitivities;
use latitude_core::engine::rational::Rat;
use latitude_core::graph::ExecGraph;
use latitude_core::model::TICKS_PER_NS;
use latitude_core::net::Routes;
use latitude_core::schedule::{MpiFlavor, ScheduleOptions, ScheduleStats};
use latitude_core::Error;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// ns (float) -> ticks (10⁻⁹ ns, integer), the unit of exact parameter values.
pub(crate) fn ticks(ns: f64) -> i128 {
    (ns * TICKS_PER_NS as f64).round() as i128
}

/// Pairwise sensitivities as columns, with each pair's latency and gap on the machine.
pub(crate) struct PairRows {
    pub(crate) a: Vec<u32>,
    pub(crate) b: Vec<u32>,
    pub(crate) lat: Vec<u64>,
    pub(crate) bytes: Vec<u64>,
    pub(crate) steps: Vec<u64>,
    pub(crate) lat_ns: Vec<f64>,
    pub(crate) gap_ns: Vec<f64>,
}

pub(crate) fn pair_rows<R: Routes>(g: &ExecGraph, net: &R, pr: &latitude_core::engine::Prediction) -> PairRows {
    let pairs = pair_sensitivities(g, &pr.path);
    let pt = &pr.point;
    let routes: Vec<_> = pairs.iter().map(|x| net.route(x.a, x.b)).collect();
    PairRows {
        a: pairs.iter().map(|x| x.a).collect(),
        b: pairs.iter().map(|x| x.b).collect(),
        lat: pairs.iter().map(|x| x.lat).collect(),
        bytes: pairs.iter().map(|x| x.bytes).collect(),
        steps: pairs.iter().map(|x| x.steps).collect(),
        lat_ns: routes.iter().map(|r| pt.to_ns(r.lat.at(pt))).collect(),
        gap_ns: routes.iter().map(|r| pt.to_ns(r.gap.at(pt))).collect(),
    }
}

pub(crate) fn rat(r: Rat) -> (i128, i128) {
    (r.num, r.den)
}

pub(crate) fn schedule_options(
    coll: &str,
    timemult: f64,
    request_size: Option<u32>,
    mpi: &str,
    p2p: bool,
    collectives: bool,
) -> Result<ScheduleOptions, Error> {
    let opt_err = |opt: &str, m: String| Error { location: opt.to_string(), message: m };
    let coll = Selection::parse(coll).map_err(|m| opt_err("--coll", m))?;
    if let Some(s) = request_size {
        if s != 4 && s != 8 {
            return Err(opt_err("--request-size", format!("expected auto, 4 or 8, got {s}")));
        }
    }
    let mpi = match mpi {
        "auto" => MpiFlavor::Auto,
        "openmpi" => MpiFlavor::OpenMpi,
        "mpich" => MpiFlavor::Mpich,
        other => return Err(opt_err("--mpi", format!("expected auto, openmpi or mpich, got {other:?}"))),
    };
    if !(timemult.is_finite() && timemult > 0.0) {
        return Err(opt_err("--timemult", format!("expected a positive number, got {timemult}")));
    }
    Ok(ScheduleOptions { coll, timemult, request_size, mpi, p2p, collectives, lines: false, issue_time: true })
}

pub(crate) fn schedule_stats<'py>(py: Python<'py>, s: &ScheduleStats, opts: &ScheduleOptions) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("ranks", s.ranks)?;
    d.set_item("events", s.events)?;
    d.set_item("trace_bytes", s.trace_bytes)?;
    d.set_item("pattern", &s.pattern)?;
    d.set_item("extended", s.extended)?;
    d.set_item("mpi", &s.mpi)?;
    d.set_item("request_size", s.request_size)?;
    d.set_item("coll", opts.coll.describe())?;
    let colls = PyDict::new(py);
    for (k, v) in &s.collectives {
        colls.set_item(k, v)?;
    }
    d.set_item("collectives", colls)?;
    let un = PyDict::new(py);
    for (k, u) in &s.unmodelled {
        let e = PyDict::new(py);
        e.set_item("calls", u.calls)?;
        e.set_item("time_ns", u.time_ns)?;
        e.set_item("reason", &u.reason)?;
        un.set_item(k, e)?;
    }
    d.set_item("unmodelled", un)?;
    d.set_item("unresolved_wildcards", s.unresolved_wildcards)?;
    d.set_item("cancelled_recvs", s.cancelled_recvs)?;
    d.set_item("cancelled_sends", s.cancelled_sends)?;
    d.set_item("assumed_cancelled", s.assumed_cancelled)?;
    d.set_item("polls", s.polls)?;
    d.set_item("poll_records", s.poll_records)?;
    d.set_item("poll_ns", s.poll_ns)?;
    d.set_item("poll_work_ns", s.poll_work_ns)?;
    d.set_item("poll_shifts", s.poll_shifts)?;
    d.set_item("poll_shift_ns", s.poll_shift_ns)?;
    d.set_item("issue_calls", s.issue_calls)?;
    d.set_item("issue_ns", s.issue_ns)?;
    d.set_item("negative_gaps", s.negative_gaps)?;
    d.set_item("notes", s.notes.clone())?;
    Ok(d)
}

pub(crate) const STEP_NAMES: [&str; 9] = ["calc", "send_overhead", "recv_overhead", "message", "rts", "handshake_recv", "handshake_send", "nic_gap", "call"];
