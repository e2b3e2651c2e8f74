//! The `Graph` handle: an execution graph held by the Rust core, with its plan, bound
//! machine and simulator lists cached beside it, and every analysis as a method that
//! returns plain dicts / numpy arrays (heavy work without the GIL).

use std::sync::{Arc, Mutex};

use crate::config::{self, on_net, Config, NetCache};
use crate::errors::input_error;

use latitude_core::engine::rational::Rat;
use latitude_core::engine::{parametric, predict as engine_predict, tolerance, Plan};
use latitude_core::gen::random::{random_graph, RandomSpec};
use latitude_core::graph::{ExecGraph, Kind};
use latitude_core::model::{Model, NPARAM};
use latitude_core::schedule::{self};
use latitude_core::{goal, lgraph, lp, Error};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{pair_rows, rat, schedule_options, schedule_stats, ticks, STEP_NAMES};
use crate::decompose;
use crate::sim;

struct Inner {
    g: ExecGraph,
    plan: Option<Arc<Plan>>,
    /// The machine bound to this graph's ranks (kept while the same machine is used).
    net: NetCache,
    /// Simulator successor lists (invalidated when a plan re-orders the graph).
    sim: Option<Arc<latitude_core::sim::SimGraph>>,
}

impl Inner {
    fn plan(&mut self, model: Model) -> Result<Arc<Plan>, Error> {
        if let Some(p) = &self.plan {
            if p.model == model {
                return Ok(p.clone());
            }
        }
        self.plan = None; // free the old plan before building the next
        self.sim = None; // preparing may re-order the vertices
        let plan = Arc::new(Plan::prepare(&mut self.g, model)?);
        self.plan = Some(plan.clone());
        Ok(plan)
    }

    /// Plan and bound network for a configuration.
    fn prepare(&mut self, cfg: &Config) -> Result<(Arc<Plan>, config::Net), Error> {
        let plan = self.plan(cfg.model)?;
        let net = self.net.get(&self.g, &cfg.machine)?;
        Ok((plan, net))
    }

    fn sim_graph(&mut self) -> Result<Arc<latitude_core::sim::SimGraph>, Error> {
        if self.sim.is_none() {
            self.sim = Some(Arc::new(latitude_core::sim::SimGraph::new(&self.g)?));
        }
        Ok(self.sim.clone().unwrap())
    }
}

/// An execution graph held by the Rust core.
#[pyclass(frozen, module = "latitude._core")]
pub(crate) struct Graph {
    inner: Mutex<Inner>,
}

pub(crate) fn wrap(g: ExecGraph) -> Graph {
    Graph { inner: Mutex::new(Inner { g, plan: None, net: NetCache::default(), sim: None }) }
}

#[pymethods]
impl Graph {
    /// Read a GOAL file. `progress(bytes_read, total_bytes)` is called now and then.
    #[staticmethod]
    #[pyo3(signature = (path, progress=None))]
    fn load_goal(py: Python<'_>, path: String, progress: Option<Py<PyAny>>) -> PyResult<Graph> {
        let res = py.detach(|| {
            let mut report = |done: u64, total: u64| {
                if let Some(cb) = &progress {
                    Python::attach(|py| {
                        let _ = cb.call1(py, (done, total));
                    });
                }
            };
            goal::read_goal_progress(&path, &mut report)
        });
        res.map(wrap).map_err(|e| input_error(py, e))
    }

    /// Convert a liballprof trace (a directory or the rank-0 file) into a graph, scheduling
    /// collectives with `coll` (a `--coll` spec); `lines` keeps every vertex's trace line
    /// (`arrays()["line"]`). Returns (graph, stats dict).
    #[staticmethod]
    #[pyo3(signature = (path, coll="default", timemult=1000.0, request_size=None, mpi="auto", p2p=true, collectives=true, progress=None, lines=false, issue_time=true))]
    #[allow(clippy::too_many_arguments)]
    fn from_trace<'py>(
        py: Python<'py>,
        path: String,
        coll: &str,
        timemult: f64,
        request_size: Option<u32>,
        mpi: &str,
        p2p: bool,
        collectives: bool,
        progress: Option<Py<PyAny>>,
        lines: bool,
        issue_time: bool,
    ) -> PyResult<(Graph, Bound<'py, PyDict>)> {
        let mut opts = schedule_options(coll, timemult, request_size, mpi, p2p, collectives).map_err(|e| input_error(py, e))?;
        (opts.lines, opts.issue_time) = (lines, issue_time);
        let res = py.detach(|| {
            let mut report = |done: u64, total: u64| {
                if let Some(cb) = &progress {
                    Python::attach(|py| {
                        let _ = cb.call1(py, (done, total));
                    });
                }
            };
            schedule::schedule_path(&path, &opts, &mut report)
        });
        let s = res.map_err(|e| input_error(py, e))?;
        let stats = schedule_stats(py, &s.stats, &opts)?;
        Ok((wrap(s.graph), stats))
    }

    /// A random MPI-like program (property tests, benches).
    #[staticmethod]
    #[pyo3(signature = (ranks=4, rounds=6, seed=1, max_calc=5000, sizes=None, p_nonblocking=0.5, p_message=0.7, p_extra_edge=0.2, unsafe_exchanges=false, p_copy=0.0, p_call=0.0))]
    #[allow(clippy::too_many_arguments)]
    fn random(
        py: Python<'_>,
        ranks: u32,
        rounds: u32,
        seed: u64,
        max_calc: u64,
        sizes: Option<Vec<u64>>,
        p_nonblocking: f64,
        p_message: f64,
        p_extra_edge: f64,
        unsafe_exchanges: bool,
        p_copy: f64,
        p_call: f64,
    ) -> PyResult<Graph> {
        let mut spec =
            RandomSpec { ranks, rounds, seed, max_calc, p_nonblocking, p_message, p_extra_edge, unsafe_exchanges, p_copy, p_call, ..Default::default() };
        if let Some(s) = sizes {
            spec.sizes = s;
        }
        py.detach(|| random_graph(&spec)).map(wrap).map_err(|e| input_error(py, e))
    }

    fn write_goal(&self, py: Python<'_>, path: String) -> PyResult<()> {
        py.detach(|| goal::write_goal(&self.inner.lock().unwrap().g, &path)).map_err(|e| input_error(py, e))
    }

    /// Load an `.lgraph` file (mapped, checked, not parsed).
    #[staticmethod]
    fn load_lgraph(py: Python<'_>, path: String) -> PyResult<Graph> {
        py.detach(|| lgraph::read(&path)).map(wrap).map_err(|e| input_error(py, e))
    }

    /// The graph in the `.lgraph` file at `path` if it is intact and was written with `key`,
    /// else None.
    #[staticmethod]
    fn load_lgraph_if_key(py: Python<'_>, path: String, key: u64) -> Option<Graph> {
        py.detach(|| lgraph::read_if_key(&path, key)).map(wrap)
    }

    /// Write the graph as `.lgraph` (atomically); `key` (0: none) names what it was made from.
    #[pyo3(signature = (path, key=0))]
    fn write_lgraph(&self, py: Python<'_>, path: String, key: u64) -> PyResult<()> {
        py.detach(|| lgraph::write(&self.inner.lock().unwrap().g, &path, key)).map_err(|e| input_error(py, e))
    }

    /// Size and shape: ranks, vertices, edges, messages, bytes, order, wildcards, source.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let inner = self.inner.lock().unwrap();
        let g = &inner.g;
        let (bytes, messages) = g.message_stats();
        let d = PyDict::new(py);
        d.set_item("ranks", g.num_ranks())?;
        d.set_item("vertices", g.len())?;
        d.set_item("edges", g.num_edges())?;
        d.set_item("messages", messages)?;
        d.set_item("bytes", bytes)?;
        d.set_item("order", format!("{:?}", g.order_kind()).to_lowercase())?;
        d.set_item("wildcard_recvs", g.wildcard_recvs())?;
        d.set_item("source", g.source().map(|s| s.path.clone()))?;
        d.set_item("max_cpu", g.max_cpu())?;
        d.set_item("max_nic", g.max_nic())?;
        // the ends of collective calls (what the call cost K prices)
        d.set_item("collective_calls", g.colls().marks.len())?;
        Ok(d)
    }

    /// Where every rank's time goes at a configuration (engine/decompose.rs).
    fn decompose<'py>(&self, py: Python<'py>, cfg: PyRef<'py, Config>) -> PyResult<Bound<'py, PyDict>> {
        let cfg: &Config = &cfg;
        let out = py.detach(|| {
            let mut inner = self.inner.lock().unwrap();
            let (plan, net) = inner.prepare(cfg)?;
            on_net!(&net, |r| latitude_core::engine::decompose::decompose(&inner.g, &plan, r, &cfg.point))
        });
        decompose::result_dict(py, out.map_err(|e| input_error(py, e))?)
    }

    /// One prediction at a configuration; with `pairs`, the pairwise sensitivities of the
    /// same pass (the critical path's messages per pair of ranks).
    #[pyo3(signature = (cfg, path_limit=0, pairs=false))]
    fn predict<'py>(&self, py: Python<'py>, cfg: PyRef<'py, Config>, path_limit: usize, pairs: bool) -> PyResult<Bound<'py, PyDict>> {
        let cfg: &Config = &cfg;
        let pt = cfg.point;
        let out = py.detach(|| {
            let mut inner = self.inner.lock().unwrap();
            let (plan, net) = inner.prepare(cfg)?;
            let g = &inner.g;
            on_net!(&net, |r| {
                let pr = engine_predict(g, &plan, r, &pt)?;
                let summary = pr.summary(g, r);
                let steps: Vec<(u32, u8, u32, u32, i128, String)> = pr
                    .path
                    .iter()
                    .rev()
                    .take(path_limit)
                    .rev()
                    .map(|s| (s.vertex, s.kind as u8, g.rank(s.vertex), g.local(s.vertex), s.concrete(g, r, &plan.model).eval(&pt), g.location(s.vertex)))
                    .collect();
                let pairs = pairs.then(|| pair_rows(g, r, &pr));
                Ok::<_, Error>((pr, summary, steps, plan.nslots(), pairs))
            })
        });
        let (pr, s, steps, nslots, pairs) = out.map_err(|e| input_error(py, e))?;
        let d = PyDict::new(py);
        d.set_item("t", pr.t)?;
        d.set_item("unit", pr.point.unit)?;
        d.set_item("runtime_ns", pr.runtime_ns())?;
        d.set_item("theta_ns", pr.point.ns())?;
        d.set_item("right", pr.right.clone())?;
        d.set_item("left", pr.left.clone())?;
        d.set_item("latency_terms_right", pr.lat_right)?;
        d.set_item("latency_terms_left", pr.lat_left)?;
        d.set_item("param_names", cfg.names.clone())?;
        d.set_item("calc_ns", s.calc_ns)?;
        d.set_item("latency_ns", s.latency_ns)?;
        d.set_item("bandwidth_ns", s.bandwidth_ns)?;
        d.set_item("overhead_ns", s.overhead_ns)?;
        d.set_item("gap_ns", s.gap_ns)?;
        d.set_item("messages", s.messages)?;
        d.set_item("path_steps", s.steps)?;
        // Per-rank sums as lists, not numpy arrays: `predict` then never imports numpy
        // (~0.1 s of start-up, the largest part of a small command).
        d.set_item("rank_calc_ns", s.rank_calc_ns)?;
        d.set_item("rank_overhead_ns", s.rank_overhead_ns)?;
        d.set_item("rank_network_ns", s.rank_network_ns)?;
        d.set_item("rank_gap_ns", s.rank_gap_ns)?;
        d.set_item("rank_messages", s.rank_messages)?;
        d.set_item("last_vertex", pr.last)?;
        d.set_item("slots", nslots)?;
        d.set_item("path", steps.into_iter().map(|(v, k, r, l, c, loc)| (v, STEP_NAMES[k as usize], r, l, pr.point.to_ns(c), loc)).collect::<Vec<_>>())?;
        if let Some(rows) = pairs {
            let pd = PyDict::new(py);
            pd.set_item("a", rows.a.into_pyarray(py))?;
            pd.set_item("b", rows.b.into_pyarray(py))?;
            pd.set_item("lambda_L", rows.lat.into_pyarray(py))?;
            pd.set_item("lambda_G", rows.bytes.into_pyarray(py))?;
            pd.set_item("steps", rows.steps.into_pyarray(py))?;
            pd.set_item("latency_ns", rows.lat_ns.into_pyarray(py))?;
            pd.set_item("gap_ns_per_byte", rows.gap_ns.into_pyarray(py))?;
            d.set_item("pairs", pd)?;
        }
        Ok(d)
    }

    /// Node of each rank on the configuration's machine (0..P−1 without one).
    fn placement<'py>(&self, py: Python<'py>, cfg: PyRef<'py, Config>) -> PyResult<Bound<'py, numpy::PyArray1<u32>>> {
        let cfg: &Config = &cfg;
        let out = py.detach(|| {
            let mut inner = self.inner.lock().unwrap();
            let Inner { g, net, .. } = &mut *inner;
            match net.get(g, &cfg.machine)? {
                config::Net::Flat(_) => Ok::<_, Error>((0..g.num_ranks()).collect::<Vec<u32>>()),
                config::Net::Machine(n) => Ok(n.node_of.clone()),
            }
        });
        Ok(out.map_err(|e| input_error(py, e))?.into_pyarray(py))
    }

    /// The LLAMP LP (Algorithm 1) as row-wise CSR arrays for HiGHS: one column per named
    /// parameter, or (`pairwise`) per pair of ranks that talk.
    #[pyo3(signature = (cfg, pairwise=false))]
    fn lp<'py>(&self, py: Python<'py>, cfg: PyRef<'py, Config>, pairwise: bool) -> PyResult<Bound<'py, PyDict>> {
        let cfg: &Config = &cfg;
        let pt = cfg.point;
        let m = py
            .detach(|| {
                let mut inner = self.inner.lock().unwrap();
                let (plan, net) = inner.prepare(cfg)?;
                on_net!(&net, |r| lp::build_lp(&inner.g, &plan, r, &pt, pairwise))
            })
            .map_err(|e| input_error(py, e))?;
        let d = PyDict::new(py);
        d.set_item("num_col", m.num_col)?;
        d.set_item("num_row", m.num_row)?;
        d.set_item("t_col", m.t_col)?;
        let mut cols: Vec<String> = lp::PARAM_COLS.iter().map(|s| s.to_string()).collect();
        cols.extend(cfg.names[NPARAM..].iter().cloned());
        for (a, b) in &m.pairs {
            cols.push(format!("l_{a}_{b}"));
            cols.push(format!("g_{a}_{b}"));
        }
        d.set_item("param_cols", cols)?;
        d.set_item("pairs", m.pairs.clone())?;
        d.set_item("start", m.start.into_pyarray(py))?;
        d.set_item("index", m.index.into_pyarray(py))?;
        d.set_item("value", m.value.into_pyarray(py))?;
        d.set_item("row_lower", m.row_lower.into_pyarray(py))?;
        d.set_item("col_lower", m.col_lower.into_pyarray(py))?;
        d.set_item("col_cost", m.col_cost.into_pyarray(py))?;
        d.set_item("var_vertex", m.var_vertex.into_pyarray(py))?;
        d.set_item("var_kind", m.var_kind.iter().map(|&k| k as u8).collect::<Vec<u8>>().into_pyarray(py))?;
        Ok(d)
    }

    /// One discrete-event simulation (see latitude_core::sim). semantics = "design" or
    /// "loggopsim"; noise = list of spec dicts (latitude/noise.py); record = timeline data.
    #[pyo3(signature = (cfg, semantics="design", cpu_serialization=true, noise=None, seed=0, record=false))]
    #[allow(clippy::too_many_arguments)]
    fn simulate<'py>(
        &self,
        py: Python<'py>,
        cfg: PyRef<'py, Config>,
        semantics: &str,
        cpu_serialization: bool,
        noise: Option<Bound<'py, pyo3::types::PyList>>,
        seed: u64,
        record: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let cfg: &Config = &cfg;
        let setup = sim::setup(cfg.point, cfg.model, semantics, cpu_serialization, noise.as_ref(), record)?.map_err(|e| input_error(py, e))?;
        let out = py.detach(|| {
            let mut inner = self.inner.lock().unwrap();
            let sg = inner.sim_graph()?;
            let Inner { g, net, .. } = &mut *inner;
            let net = net.get(g, &cfg.machine)?;
            on_net!(&net, |r| sim::run_one(g, &sg, r, &setup, seed))
        });
        let (r, elapsed) = out.map_err(|e| input_error(py, e))?;
        sim::result_dict(py, &self.inner.lock().unwrap().g, &r, elapsed)
    }

    /// Monte Carlo samples first..first+count on `threads` threads (GIL released).
    #[pyo3(signature = (cfg, semantics="design", cpu_serialization=true, noise=None, seed=0, first=0, count=1, threads=1))]
    #[allow(clippy::too_many_arguments)]
    fn simulate_samples<'py>(
        &self,
        py: Python<'py>,
        cfg: PyRef<'py, Config>,
        semantics: &str,
        cpu_serialization: bool,
        noise: Option<Bound<'py, pyo3::types::PyList>>,
        seed: u64,
        first: u64,
        count: u64,
        threads: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        let cfg: &Config = &cfg;
        let setup = sim::setup(cfg.point, cfg.model, semantics, cpu_serialization, noise.as_ref(), false)?.map_err(|e| input_error(py, e))?;
        let out = py.detach(|| {
            let mut inner = self.inner.lock().unwrap();
            let sg = inner.sim_graph()?;
            let Inner { g, net, .. } = &mut *inner;
            let net = net.get(g, &cfg.machine)?;
            on_net!(&net, |r| sim::run_samples(g, &sg, r, &setup, seed, first, count, threads))
        });
        sim::samples(py, out)?.map_err(|e| input_error(py, e))
    }

    /// Every breakpoint of T in parameter `param` (an index into the configuration's names)
    /// on [lo, hi] (ns, or ns per byte), exact. Positions come as (num, den) in ticks (10⁻⁹ ns).
    #[pyo3(signature = (cfg, param, lo, hi, step=None))]
    fn sweep<'py>(&self, py: Python<'py>, cfg: PyRef<'py, Config>, param: usize, lo: f64, hi: f64, step: Option<f64>) -> PyResult<Bound<'py, PyDict>> {
        let cfg: &Config = &cfg;
        let pt = cfg.point;
        let (lo, hi) = (ticks(lo), ticks(hi));
        let step = step.map(ticks);
        if param >= pt.n || lo > hi {
            return Err(pyo3::exceptions::PyValueError::new_err("bad sweep parameter or range"));
        }
        let sw = py
            .detach(|| {
                let mut inner = self.inner.lock().unwrap();
                let (plan, net) = inner.prepare(cfg)?;
                on_net!(&net, |r| parametric::sweep(&inner.g, &plan, r, &pt, param, lo, hi, parametric::SweepOptions { step, ..Default::default() }))
            })
            .map_err(|e| input_error(py, e))?;
        let d = PyDict::new(py);
        let bps: Vec<_> = sw.breakpoints.iter().map(|b| (rat(b.at), b.left.s, b.right.s, b.left.c, b.right.c, b.exact)).collect();
        let pieces: Vec<_> = sw.pieces.iter().map(|pc| (rat(pc.from), rat(pc.to), pc.line.s, pc.line.c)).collect();
        d.set_item("breakpoints", bps)?;
        d.set_item("pieces", pieces)?;
        d.set_item("evaluations", sw.evaluations)?;
        d.set_item("passes", sw.passes)?;
        Ok(d)
    }

    /// Largest value of parameter `param` with T ≤ ratio·T(x0) for each ratio (num, den).
    /// Returns T(x0) in ticks and, per ratio, (num, den) in ticks or None (unbounded).
    #[pyo3(signature = (cfg, param, x0, ratios))]
    fn tolerance<'py>(&self, py: Python<'py>, cfg: PyRef<'py, Config>, param: usize, x0: f64, ratios: Vec<(i128, i128)>) -> PyResult<Bound<'py, PyDict>> {
        let cfg: &Config = &cfg;
        let pt = cfg.point;
        if param >= pt.n || ratios.iter().any(|&(n, d)| d <= 0 || n < d) {
            return Err(pyo3::exceptions::PyValueError::new_err("bad tolerance parameter or ratio (< 1)"));
        }
        let x0 = ticks(x0);
        let (t0, res) = py
            .detach(|| {
                let mut inner = self.inner.lock().unwrap();
                let (plan, net) = inner.prepare(cfg)?;
                on_net!(&net, |r| tolerance::tolerance(&inner.g, &plan, r, &pt, param, x0, &ratios))
            })
            .map_err(|e| input_error(py, e))?;
        let d = PyDict::new(py);
        d.set_item("t0", t0)?;
        d.set_item("x0", x0)?;
        d.set_item("max", res.iter().map(|r| r.max.map(rat)).collect::<Vec<_>>())?;
        d.set_item("evaluations", res.iter().map(|r| r.evaluations).collect::<Vec<_>>())?;
        Ok(d)
    }

    /// For each absolute target τ = (num, den) ticks: the largest value of parameter `param`
    /// ≥ x0 with T ≤ τ: (num, den) ticks, "unbounded", or "exceeded" (T(x0) > τ already).
    #[pyo3(signature = (cfg, param, x0, targets))]
    fn max_below(
        &self,
        py: Python<'_>,
        cfg: PyRef<'_, Config>,
        param: usize,
        x0: f64,
        targets: Vec<(i128, i128)>,
    ) -> PyResult<Vec<(&'static str, i128, i128)>> {
        let cfg: &Config = &cfg;
        let pt = cfg.point;
        if param >= pt.n || targets.iter().any(|&(_, d)| d <= 0) {
            return Err(pyo3::exceptions::PyValueError::new_err("bad parameter or target"));
        }
        let targets: Vec<Rat> = targets.into_iter().map(|(n, d)| Rat::new(n, d)).collect();
        let x0 = ticks(x0);
        let (bounds, _) = py
            .detach(|| {
                let mut inner = self.inner.lock().unwrap();
                let (plan, net) = inner.prepare(cfg)?;
                on_net!(&net, |r| tolerance::max_below(&inner.g, &plan, r, &pt, param, x0, &targets))
            })
            .map_err(|e| input_error(py, e))?;
        Ok(bounds
            .into_iter()
            .map(|b| match b {
                tolerance::Bound::Exceeded => ("exceeded", 0, 1),
                tolerance::Bound::Unbounded => ("unbounded", 0, 1),
                tolerance::Bound::Max(r) => ("max", r.num, r.den),
            })
            .collect())
    }

    /// The collective calls' end vertices (latitude_core::graph::CollCalls): `kinds` as
    /// (collective, algorithm) pairs and per mark its vertex, kind index, ranks, bytes and
    /// instance key; empty arrays for a graph without calls.
    fn coll_calls<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let inner = self.inner.lock().unwrap();
        let c = inner.g.colls();
        let d = PyDict::new(py);
        d.set_item("kinds", c.kinds.clone())?;
        d.set_item("vertex", c.marks.iter().map(|m| m.vertex).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("kind", c.marks.iter().map(|m| m.kind).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("procs", c.marks.iter().map(|m| m.procs).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("bytes", c.marks.iter().map(|m| m.bytes).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("instance", c.marks.iter().map(|m| m.instance).collect::<Vec<_>>().into_pyarray(py))?;
        Ok(d)
    }

    /// Per-vertex arrays (kind 0/1/2 = calc/send/recv, rank, local index, value, peer, tag,
    /// partner, and `line` when the graph keeps source lines) in stored order, for inspection
    /// and tests; `edges` also lists every dependency (a Python list: large).
    #[pyo3(signature = (edges=true))]
    fn arrays<'py>(&self, py: Python<'py>, edges: bool) -> PyResult<Bound<'py, PyDict>> {
        let inner = self.inner.lock().unwrap();
        let g = &inner.g;
        let n = g.len() as u32;
        let d = PyDict::new(py);
        d.set_item("kind", (0..n).map(|v| g.kind(v) as u8).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("rank", (0..n).map(|v| g.rank(v)).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("local", (0..n).map(|v| g.local(v)).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("val", (0..n).map(|v| g.val(v)).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("peer", (0..n).map(|v| g.peer(v)).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("tag", (0..n).map(|v| g.tag(v)).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("partner", (0..n).map(|v| g.partner(v)).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("copy", (0..n).map(|v| g.copy(v)).collect::<Vec<_>>().into_pyarray(py))?;
        if edges {
            let edges: Vec<(u32, u32, bool)> =
                (0..n).flat_map(|v| g.preds(v).map(move |(q, dep)| (v, q, dep == latitude_core::graph::Dep::Irequires))).collect();
            d.set_item("edges", edges)?;
        }
        if let Some(src) = g.source() {
            d.set_item("line", src.line.to_vec().into_pyarray(py))?;
        }
        let _ = Kind::Calc;
        Ok(d)
    }
}
