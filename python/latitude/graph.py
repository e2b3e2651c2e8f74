"""The execution graph and its results: :class:`Graph`, :class:`Prediction`, and the reports
of how a graph was made (:class:`ScheduleReport`, :class:`GenerateReport`).

    import latitude
    g = latitude.load("app.goal")         # or Graph.from_goal / from_trace / from_job
    p = g.predict(L="3us", o="1.5us", G="0.018ns")
    p.runtime_ns, p.lambda_["L"], p.rho_L
    p.per_rank()                          # pandas DataFrame (pandas optional elsewhere)

A Graph holds the Rust core's graph; every analysis takes it through a public method here,
so nothing outside this module touches the core handle.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from latitude import _core
from latitude.errors import InputError
from latitude.formats import foreign
from latitude.jobs import job_source
from latitude.outputs import atomic
from latitude.params import PARAM_NAMES, Params
from latitude.progress import progress as progress_bar
from latitude.traces import ScheduleOptions, trace_bytes
from latitude.units import fmt_size, fmt_time

if TYPE_CHECKING:
    from latitude import lp
    from latitude.decomposition import Decomposition
    from latitude.pairs import Pairs

# Inputs at least this large get a progress bar while loading or scheduling.
PROGRESS_BYTES = 64 << 20
# The first bytes of an .lgraph file (docs/graph-format.md).
LGRAPH_MAGIC = b"\x89LGRAPH\n"


def _uses_lp(method: str) -> bool:
    """True for the LP method (HiGHS), False for the exact engine."""
    if method not in ("engine", "lp"):
        raise InputError("--method", f"expected engine or lp, got {method!r}")
    return method == "lp"


def _params(params: Params | None, kw: dict) -> Params:
    base = params or Params()
    return base.replace(**kw) if kw else base


def _schedule(path: str, kwargs: dict, progress: bool):
    """The core's conversion of the trace files at `path` (a bar on large traces)."""
    if progress and trace_bytes(path) >= PROGRESS_BYTES:
        with progress_bar(f"scheduling {os.path.basename(os.path.normpath(path))}") as update:
            return _core.Graph.from_trace(path, progress=update, **kwargs)
    return _core.Graph.from_trace(path, **kwargs)


def _exists(path: str) -> str:
    path = os.fspath(path)
    if not os.path.exists(path):
        raise InputError(path, "no such file or directory")
    return path


class GraphReport:
    """How a graph was made (trace conversion, job-file generation): the core's stats dict
    plus the graph's size."""

    def __init__(self, stats: dict, info: dict):
        self.stats = stats
        self.info = info

    def to_dict(self) -> dict:
        out = dict(self.stats)
        out["graph"] = {k: self.info[k] for k in ("ranks", "vertices", "edges", "messages", "bytes")}
        return out


class ScheduleReport(GraphReport):
    """What the trace conversion did: calls, collectives by algorithm, unmodelled calls."""

    def summary(self) -> str:
        """One line: ranks, ops, messages, collectives by algorithm, unmodelled calls."""
        s, i = self.stats, self.info
        parts = [
            f"{s['ranks']} ranks, {s['events']:,} calls → {i['vertices']:,} ops, "
            f"{i['messages']:,} messages ({fmt_size(i['bytes'])})"
        ]
        if s["collectives"]:
            colls = ", ".join(f"{k.replace(' ', '/')} {v:,}" for k, v in s["collectives"].items())
            parts.append(f"collectives (calls on all ranks): {colls}")
        else:
            parts.append("no collectives")
        if s["unmodelled"]:
            names = ", ".join(f"{k} ×{v['calls']:,}" for k, v in s["unmodelled"].items())
            parts.append(f"not modelled: {names}")
        return "; ".join(parts)

    def notes(self) -> list[str]:
        """One line per unmodelled call name (with the time kept as computation), then notes."""
        out = []
        for name, u in self.stats["unmodelled"].items():
            out.append(f"{name}: {u['calls']:,} calls, {fmt_time(u['time_ns'])} kept as computation ({u['reason']})")
        out.extend(self.stats["notes"])
        return out


class GenerateReport(GraphReport):
    """What generation did: jobs, their motifs and calls."""

    def summary(self) -> str:
        """One line: jobs with their motifs, then the graph's size."""
        jobs = []
        for j in self.stats["jobs"]:
            motifs = ", ".join(
                m["motif"] + (f"/{m['alg']}" if m["alg"] else "") + f" ×{m['calls']:,}" for m in j["motifs"]
            )
            jobs.append(f"{j['name']} ({j['ranks']:,} ranks, {j['iterations']:,} iterations: {motifs})")
        i = self.info
        return (
            f"{len(jobs)} job{'s' if len(jobs) != 1 else ''} on {self.stats['world']:,} ranks: "
            + "; ".join(jobs)
            + f" → {i['vertices']:,} ops, {i['messages']:,} messages ({fmt_size(i['bytes'])})"
        )


class Graph:
    """An execution graph held by the Rust core. `path` is the file it came from (None for
    job text and random graphs); `report` says how it was made from a trace or a job file
    (None for GOAL and random graphs)."""

    def __init__(self, core_graph, path: str | None = None, report: GraphReport | None = None):
        self._h = core_graph
        self.path = path
        self.report = report
        # The trace-graph cache entry it came from or went into (latitude.trace_cache), if any.
        self.cache_entry = None

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_goal(cls, path: str, progress: bool = True) -> Graph:
        """Read a GOAL file (LogGOPSim's schedule text); a bar on large files."""
        path = _exists(path)
        if progress and os.path.getsize(path) >= PROGRESS_BYTES:
            with progress_bar(f"loading {os.path.basename(path)}") as update:
                return cls(_core.Graph.load_goal(path, update), path)
        return cls(_core.Graph.load_goal(path), path)

    @classmethod
    def from_lgraph(cls, path: str) -> Graph:
        """Map an .lgraph file (checked, not parsed: docs/graph-format.md)."""
        path = _exists(path)
        return cls(_core.Graph.load_lgraph(path), path)

    @classmethod
    def cached_goal(cls, path: str, progress: bool = True) -> Graph:
        """A GOAL file through the binary kept next to it (`PATH.lgraph`): mapped while its
        recorded size and modification time match the GOAL file's, else the GOAL is read and
        the binary (re)written. A file of that name that is not an .lgraph is left alone, and
        a directory that cannot be written to just means no cache."""
        path = _exists(path)
        cache = path + ".lgraph"
        key = _core.lgraph_key([path])
        handle = _core.Graph.load_lgraph_if_key(cache, key) if key else None
        if handle is not None:
            return cls(handle, path)
        graph = cls.from_goal(path, progress)
        if key and (not os.path.exists(cache) or _core.is_lgraph(cache)):
            try:
                graph.write_lgraph(cache, key)
            except InputError:
                pass
        return graph

    @classmethod
    def from_trace(
        cls,
        path: str,
        options: ScheduleOptions | None = None,
        progress: bool = True,
        timeline: str | None = None,
        calls: bool = False,
    ) -> Graph:
        """Schedule a trace in memory: ours or liballprof's (directory or rank-0 file), or one
        another tool wrote (an OTF2 archive: converted first, latitude.formats.foreign);
        `report` is a ScheduleReport. `timeline`: also write the traced run's measured
        timeline there (Chrome trace JSON, latitude.traced_timeline); its summary goes to
        `report.stats["timeline"]`. `calls`: every vertex keeps its trace line and
        `report.stats["calls"]` holds the measured calls per rank (`_core.trace_times`), which
        `latitude decompose` sets beside the model."""
        path = _exists(path)
        kwargs = (options or ScheduleOptions()).core_kwargs()
        kwargs["lines"] = timeline is not None or calls
        fmt = foreign.kind(path)

        def schedule(files: str):
            handle, stats = _schedule(files, kwargs, progress)
            if calls:
                stats["calls"] = _core.trace_times(files, kwargs["timemult"])
            if timeline is not None:
                from latitude import traced_timeline  # numpy: start-up only timelines pay

                stats["timeline"] = traced_timeline.write(timeline, files, handle, kwargs["timemult"], path)
            return handle, stats

        if fmt is None:
            handle, stats = schedule(path)
        else:
            with foreign.converted(path, fmt, progress) as (converted, conv):
                handle, stats = schedule(converted)
            stats["notes"] = conv.notes + stats["notes"]
            stats["source"] = {"format": fmt, "path": conv.origin_file, "what": conv.source, "events": conv.events}
            stats["pattern"] = fmt
        graph = cls(handle, path)
        graph.report = ScheduleReport(stats, graph.info)
        return graph

    @classmethod
    def from_job(
        cls, job: str, seed: int = 1, coll: str = "default", progress: bool = True, max_ops: int | None = None
    ) -> Graph:
        """Generate a job file's graph. `job` is a path or the job text itself; `seed` drives
        the compute motifs' distributions; `coll` chooses algorithms for collective motifs
        without `alg=` (the `--coll` syntax). A graph estimated above `max_ops` operations
        (default: what the available memory holds) is refused before generating.
        `report` is a GenerateReport."""
        path, text = job_source(job)
        if seed < 0 or seed >= 2**64:
            raise InputError("--seed", f"expected a seed in 0..2^64-1, got {seed}")
        if max_ops is not None and not 0 < max_ops < 2**64:
            raise InputError("--max-ops", f"expected a positive number of operations, got {max_ops}")
        if progress:
            with progress_bar("generating") as update:

                def report(phase, done, total):
                    if phase == "generating":
                        update(done, total)

                handle, stats = _core.generate_job(
                    path, text=text, seed=seed, coll=coll, progress=report, max_ops=max_ops
                )
        else:
            handle, stats = _core.generate_job(path, text=text, seed=seed, coll=coll, max_ops=max_ops)
        graph = cls(handle, path if text is None else None)
        graph.report = GenerateReport(stats, graph.info)
        return graph

    @classmethod
    def random(cls, **spec) -> Graph:
        """A random MPI-like program (see latitude_core::gen::random)."""
        return cls(_core.Graph.random(**spec))

    # -- the graph ----------------------------------------------------------------------

    @property
    def info(self) -> dict:
        return self._h.info()

    @property
    def num_ranks(self) -> int:
        return self.info["ranks"]

    def __len__(self) -> int:
        return self.info["vertices"]

    def __repr__(self) -> str:
        i = self.info
        src = f" from {self.path}" if self.path else ""
        return f"<latitude.Graph {i['ranks']} ranks, {i['vertices']} ops, {i['messages']} messages{src}>"

    def write_goal(self, path: str) -> None:
        """GOAL text at `path`, installed atomically (a killed run leaves the old file)."""
        with atomic(path, "GOAL file") as tmp:
            self._h.write_goal(tmp)

    def write_lgraph(self, path: str, key: int = 0) -> None:
        """The graph as .lgraph (binary, mapped when loaded: docs/graph-format.md); `key`
        (0: none) records what it was made from (`_core.lgraph_key`), for caches. Installed
        atomically, as write_goal."""
        with atomic(path, ".lgraph file") as tmp:
            self._h.write_lgraph(tmp, key)

    def write(self, path: str) -> None:
        """.lgraph if `path` ends in .lgraph, else GOAL text (either written atomically)."""
        path = os.fspath(path)
        (self.write_lgraph if path.endswith(".lgraph") else self.write_goal)(path)

    def arrays(self, edges: bool = True) -> dict:
        """Per-vertex arrays (kind, rank, local, val, peer, tag, partner, copy: the bytes a
        calc copies), and every dependency with `edges`."""
        return self._h.arrays(edges=edges)

    def coll_calls(self) -> dict:
        """Each rank's end of each collective call, for a graph scheduled from a trace (empty
        otherwise): `kinds`, (collective, algorithm) pairs, and per mark numpy arrays `vertex`,
        `kind` (index into kinds), `procs`, `bytes`, `instance` (shared by a call's members)."""
        return self._h.coll_calls()

    # -- analyses -----------------------------------------------------------------------

    def predict(self, params: Params | None = None, path_steps: int = 0, **kw) -> Prediction:
        """T(θ), derivatives, ρ_L and the critical path at one parameter point."""
        p = _params(params, kw)
        raw = self._h.predict(p.to_core(), path_limit=path_steps)
        return Prediction(raw, p)

    def decompose(self, params: Params | None = None, **kw) -> Decomposition:
        """Each rank's time split into computation, network, MPI stack and synchronization,
        per rank, per MPI function and overall (latitude.decomposition); a graph read with
        `from_trace(calls=True)` names the MPI functions and adds their measured time."""
        from latitude import decomposition  # numpy: start-up only the decomposition pays

        calls = (self.report.stats.get("calls") if self.report is not None else None) or None
        return decomposition.decompose(self._h, _params(params, kw), calls)

    def pairs(self, params: Params | None = None, **kw) -> Pairs:
        """Pairwise sensitivities λ_L^{ij}, λ_G^{ij} read off the critical path of one
        prediction (latitude.pairs)."""
        from latitude.pairs import Pairs  # numpy: start-up only pairwise output pays

        p = _params(params, kw)
        cfg = p.to_core()
        raw = self._h.predict(cfg, pairs=True)
        return Pairs(Prediction(raw, p), raw["pairs"], self._h.placement(cfg))

    def placement(self, params: Params | None = None, **kw):
        """The node of each rank on the machine of `params` (a numpy array)."""
        return self._h.placement(_params(params, kw).to_core())

    def lp(self, params: Params | None = None, pairwise: bool = False, **kw) -> lp.LinearProgram:
        """The LLAMP LP (Algorithm 1) at `params`, ready to solve with HiGHS or export: one
        column per named parameter, or with `pairwise` one latency and one gap column per
        pair of ranks that talk (the LLAMP paper's App. I)."""
        from latitude import lp  # start-up only the LP pays (ctypes, the solver's lookup)

        return lp.build(self._h, _params(params, kw), pairwise)

    def simulate(self, params: Params | None = None, options=None, record: bool = False, **kw):
        """One discrete-event simulation (latitude.simulation); keyword arguments may set
        parameters (L="3us") and SimOptions fields (semantics, noise, seed, ...)."""
        from latitude import simulation  # numpy: start-up only simulations pay

        p, o = simulation.split_kwargs(params, options, kw)
        return simulation.simulate(self._h, p, o, record)

    def simulate_samples(
        self, n: int, params: Params | None = None, options=None, threads: int | None = None, progress=None, **kw
    ):
        """`n` Monte Carlo samples (noise drawn per sample from the seed), on all cores;
        `progress(done, total)` is called between chunks of samples."""
        from latitude import simulation  # numpy: start-up only simulations pay

        p, o = simulation.split_kwargs(params, options, kw)
        return simulation.simulate_samples(self._h, n, p, o, threads, progress)

    def sensitivity(
        self,
        lo,
        hi,
        param: str = "L",
        step=None,
        params: Params | None = None,
        method: str = "engine",
        max_seconds: float | None = None,
        **kw,
    ):
        """Every critical point of T in `param` (any named parameter: L, G, a link class, …)
        on [lo, hi], exact (see latitude.analysis). `max_seconds` bounds the lp method
        (benchmarks)."""
        p = _params(params, kw)
        lo, hi = p.parse(param, lo, "lo"), p.parse(param, hi, "hi")
        step = None if step is None else p.parse(param, step, "step")
        if _uses_lp(method):
            from latitude import lp_analysis  # numpy: start-up only the LP method pays

            return lp_analysis.sensitivity(self._h, p, param, lo, hi, step, max_seconds)
        from latitude import analysis  # start-up only the sweeps pay (fractions, dataclasses)

        return analysis.sensitivity(self._h, p, param, lo, hi, step)

    def tolerance(
        self,
        pcts=(1, 2, 5),
        param: str = "L",
        baseline=None,
        params: Params | None = None,
        method: str = "engine",
        max_seconds: float | None = None,
        **kw,
    ):
        """Largest value of `param` (L, G, a link class, …) keeping T within x % of
        T(baseline), the others fixed, for each x in `pcts`."""
        p = _params(params, kw)
        if baseline is not None:
            baseline = p.parse(param, baseline, "--baseline")
        if _uses_lp(method):
            from latitude import lp_analysis  # numpy: start-up only the LP method pays

            return lp_analysis.tolerance(self._h, p, param, list(pcts), baseline, max_seconds)
        from latitude import analysis  # start-up only the sweeps pay (fractions, dataclasses)

        return analysis.tolerance(self._h, p, param, list(pcts), baseline)

    def tolerance_map(
        self,
        l_range,
        g_range,
        pcts=(1, 2, 5),
        resolution: int = 64,
        params: Params | None = None,
        axes=("L", "G"),
        **kw,
    ):
        """Boundaries of {(x, y): T ≤ (1 + p/100)·T₀} for two named parameters `axes`
        (default L and G; the ranges are theirs, in that order; see
        latitude.analysis.tolerance_map)."""
        p = _params(params, kw)
        from latitude import analysis  # start-up only the sweeps pay (fractions, dataclasses)

        return analysis.tolerance_map(self._h, p, l_range, g_range, list(pcts), resolution, axes)


@dataclass
class Prediction:
    """One prediction. Times in ns; derivatives are exact (integers)."""

    raw: dict = field(repr=False)
    params: Params

    @property
    def runtime_ns(self) -> float:
        return self.raw["runtime_ns"]

    @property
    def lambda_(self) -> dict:
        """Right derivatives ∂T/∂p for every named parameter (the slope for increasing p)."""
        return dict(zip(self.raw["param_names"], self.raw["right"]))

    @property
    def lambda_left(self) -> dict:
        return dict(zip(self.raw["param_names"], self.raw["left"]))

    @property
    def latency_terms(self) -> int:
        """Message-latency terms on the critical path (each message pays its pair's whole
        latency once per term): ∂T/∂ΔL for a ΔL added to every pair, the sum of the
        pairwise λ_L^{ij}. On a flat machine it is λ_L."""
        return int(self.raw["latency_terms_right"])

    @property
    def rho_L(self) -> float:
        """Share of the runtime spent in network latency: L·λ_L / T."""
        t = self.runtime_ns
        return self.params.L * self.lambda_["L"] / t if t > 0 else 0.0

    @property
    def rho(self) -> dict:
        """θ_k·λ_k / T for every named parameter: the share of T each parameter accounts for."""
        t = self.runtime_ns
        return {n: (v * self.lambda_[n] / t if t > 0 else 0.0) for n, v in zip(self.params.names, self.params.theta)}

    @property
    def critical_path(self) -> dict:
        r = self.raw
        return {
            "messages": int(r["messages"]),
            "calc_ns": r["calc_ns"],
            "latency_ns": r["latency_ns"],
            "bandwidth_ns": r["bandwidth_ns"],
            "overhead_ns": r["overhead_ns"],
            "gap_ns": r["gap_ns"],
            "steps": int(r["path_steps"]),
        }

    def per_rank_rows(self) -> list[dict]:
        r = self.raw
        return [
            {
                "rank": i,
                "calc_ns": float(r["rank_calc_ns"][i]),
                "overhead_ns": float(r["rank_overhead_ns"][i]),
                "network_ns": float(r["rank_network_ns"][i]),
                "gap_ns": float(r["rank_gap_ns"][i]),
                "messages": int(r["rank_messages"][i]),
            }
            for i in range(len(r["rank_calc_ns"]))
        ]

    def per_rank(self):
        """Critical-path time per rank as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.per_rank_rows()).set_index("rank")

    def path(self) -> list[dict]:
        """The last steps of the critical path (as many as requested with path_steps)."""
        return [
            {"vertex": v, "step": k, "rank": r, "op": l, "cost_ns": c, "where": loc}
            for v, k, r, l, c, loc in self.raw["path"]
        ]

    def to_dict(self) -> dict:
        """The stable JSON contract of `latitude predict --json` (docs/json.md)."""
        keys = ("L", "G", "o", "g", "O") + self.params.names[len(PARAM_NAMES) :]
        cp = self.critical_path
        cp["latency_terms"] = self.latency_terms
        cp["per_rank"] = [row for row in self.per_rank_rows() if any(row[k] for k in row if k != "rank")]
        out = {
            "runtime_ns": self.runtime_ns,
            "lambda": {k: self.lambda_[k] for k in keys},
            "lambda_left": {k: self.lambda_left[k] for k in keys},
            "rho_L": self.rho_L,
            "critical_path": cp,
            "params": self.params.to_dict(),
        }
        if self.params.machine:
            out["rho"] = self.rho
        return out
