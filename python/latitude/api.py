"""Python API: load a graph, price it, and get results as dicts or pandas DataFrames.

import latitude
g = latitude.load("app.goal")
p = g.predict(L="3us", o="1.5us", G="0.018ns")
p.runtime_ns, p.lambda_["L"], p.rho_L
p.per_rank()            # pandas DataFrame (pandas optional elsewhere)
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from latitude.errors import InputError
from latitude.params import PARAM_NAMES, Params

# Files at least this large get a progress bar while loading.
_PROGRESS_BYTES = 64 << 20


def _core():
    try:
        from latitude import _core
    except ImportError as err:  # pragma: no cover - broken install
        raise InputError(None, f"the Latitude extension module is not built ({err}); run `pip install .`") from None
    return _core


def load(path: str, progress: bool = True, schedule=None, seed: int = 1) -> Graph:
    """Load an execution graph from a GOAL file, schedule a liballprof trace (a directory
    or the rank-0 file) in memory with `schedule` (a latitude.traces.ScheduleOptions), or
    generate a job file's graph (latitude.jobs; `seed`, and `schedule.coll` for collective
    motifs without alg=)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise InputError(path, "no such file or directory")
    from latitude.jobs import generate, is_job_file
    from latitude.traces import is_trace

    if is_job_file(path):
        return generate(path, seed=seed, coll=schedule.coll if schedule else "default", progress=progress)

    if is_trace(path):
        from latitude.traces import schedule as schedule_trace

        return schedule_trace(path, schedule, progress)[0]
    core = _core()
    if progress and os.path.getsize(path) >= _PROGRESS_BYTES:
        from latitude.progress import progress as bar

        with bar(f"loading {os.path.basename(path)}") as update:
            handle = core.Graph.load_goal(path, update)
    else:
        handle = core.Graph.load_goal(path)
    return Graph(handle, path)


def _method(name: str):
    if name == "engine":
        from latitude import analysis

        return analysis
    if name == "lp":
        from latitude import lp_analysis

        return lp_analysis
    raise InputError("--method", f"expected engine or lp, got {name!r}")


def _params(params: Params | None, kw: dict) -> Params:
    base = params or Params()
    return base.replace(**kw) if kw else base


class Graph:
    """An execution graph held by the Rust core."""

    def __init__(self, handle, path: str | None = None):
        self._h = handle
        self.path = path

    @classmethod
    def random(cls, **spec) -> Graph:
        """A random MPI-like program (see latitude_core::gen::random)."""
        return cls(_core().Graph.random(**spec))

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
        self._h.write_goal(os.fspath(path))

    def predict(self, params: Params | None = None, path_steps: int = 0, **kw) -> Prediction:
        """T(θ), derivatives, ρ_L and the critical path at one parameter point."""
        p = _params(params, kw)
        raw = self._h.predict(p.theta, path_limit=path_steps, **p.model_kwargs())
        return Prediction(raw, p)

    def lp(self, params: Params | None = None, **kw):
        """The LLAMP LP (Algorithm 1) at `params`, ready to solve with HiGHS or export."""
        from latitude.lp import LinearProgram

        p = _params(params, kw)
        return LinearProgram(self._h.lp(p.theta, **p.model_kwargs()), p, self)

    def simulate(self, params: Params | None = None, options=None, record: bool = False, **kw):
        """One discrete-event simulation (latitude.simulation); keyword arguments may set
        parameters (L="3us") and SimOptions fields (semantics, noise, seed, ...)."""
        from latitude.simulation import simulate, split_kwargs

        p, o = split_kwargs(params, options, kw)
        return simulate(self._h, p, o, record)

    def simulate_samples(self, n: int, params: Params | None = None, options=None, threads: int | None = None, **kw):
        """`n` Monte Carlo samples (noise drawn per sample from the seed), on all cores."""
        from latitude.simulation import simulate_samples, split_kwargs

        p, o = split_kwargs(params, options, kw)
        return simulate_samples(self._h, n, p, o, threads)

    def arrays(self) -> dict:
        return self._h.arrays()

    def sensitivity(
        self, lo, hi, param: str = "L", step=None, params: Params | None = None, method: str = "engine", **kw
    ):
        """Every critical point of T in `param` (L or G) on [lo, hi], exact (see latitude.analysis)."""
        from latitude.units import parse_gap, parse_time

        conv = parse_time if param == "L" else parse_gap
        lo, hi = conv(lo, "lo"), conv(hi, "hi")
        step = None if step is None else conv(step, "step")
        p = _params(params, kw)
        return _method(method).sensitivity(self, p, param, lo, hi, step)

    def tolerance(
        self,
        pcts=(1, 2, 5),
        param: str = "L",
        baseline=None,
        params: Params | None = None,
        method: str = "engine",
        **kw,
    ):
        """Largest L (or G) keeping T within x % of T(baseline), for each x in `pcts`."""
        from latitude.units import parse_gap, parse_time

        if baseline is not None:
            baseline = (parse_time if param == "L" else parse_gap)(baseline, "--baseline")
        p = _params(params, kw)
        return _method(method).tolerance(self, p, param, list(pcts), baseline)

    def tolerance_map(self, l_range, g_range, pcts=(1, 2, 5), resolution: int = 64, params: Params | None = None, **kw):
        """Boundaries of {(L, G): T ≤ (1 + x/100)·T₀} (see latitude.analysis.tolerance_map)."""
        from latitude import analysis

        return analysis.tolerance_map(self, _params(params, kw), l_range, g_range, list(pcts), resolution)


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
        """Right derivatives ∂T/∂p (the slope for increasing p)."""
        return dict(zip(PARAM_NAMES, self.raw["right"]))

    @property
    def lambda_left(self) -> dict:
        return dict(zip(PARAM_NAMES, self.raw["left"]))

    @property
    def rho_L(self) -> float:
        """Share of the runtime spent in network latency: L·λ_L / T."""
        t = self.runtime_ns
        return self.params.L * self.lambda_["L"] / t if t > 0 else 0.0

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
        """The stable JSON contract of `latitude predict --json` (DESIGN §6)."""
        keys = ("L", "G", "o", "g", "O")
        cp = self.critical_path
        cp["per_rank"] = [row for row in self.per_rank_rows() if any(row[k] for k in row if k != "rank")]
        return {
            "runtime_ns": self.runtime_ns,
            "lambda": {k: self.lambda_[k] for k in keys},
            "lambda_left": {k: self.lambda_left[k] for k in keys},
            "rho_L": self.rho_L,
            "critical_path": cp,
            "params": self.params.to_dict(),
        }
