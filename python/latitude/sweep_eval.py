"""The worker side of a sweep: evaluate a batch of points on one graph.

A worker process (a local pool process or a Dask worker) keeps the graph it loaded last, so
the batches of one graph that reach it cost one load, not one per batch and never one per
point. Each point is one exact engine pass for T, λ and the critical path, plus the exact
tolerance search per tolerance parameter (latitude.analysis). A point that fails records
its one-line error in its row; the batch goes on.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from latitude.api import load
from latitude.errors import LatitudeError
from latitude.traces import ScheduleOptions

# The critical-path components copied into each row (ns).
PATH_COLUMNS = ("calc_ns", "latency_ns", "bandwidth_ns", "overhead_ns", "gap_ns")

# One graph per worker process: the last one loaded (a Dask worker may run tasks on several
# threads, hence the lock).
_cache: dict = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class Analysis:
    """What every point computes beyond T and λ: the x % tolerances of these parameters."""

    pcts: tuple = ("1", "2", "5")
    tolerance: tuple = ("L",)

    def columns(self) -> list:
        """The tolerance columns, in order: tol_<param>_<pct>pct (the largest value)."""
        return [tol_column(p, pct) for p in self.tolerance for pct in self.pcts]


@dataclass
class BatchResult:
    rows: list
    loaded: bool  # this batch loaded its graph (False: the worker had it already)
    load_seconds: float


def tol_column(param: str, pct: str) -> str:
    return f"tol_{param}_{pct}pct"


def one_line(err: BaseException) -> str:
    """An error as the one line the CLI would print for it."""
    if isinstance(err, (LatitudeError, ValueError)) and str(err):
        text = str(err)
    else:
        text = f"{type(err).__name__}: {err}"
    return " ".join(text.split())


def _graph(source):
    """The graph of `source`, from this worker's cache when it is the last one loaded."""
    key = source.key()
    if key in _cache:
        return _cache[key], False
    _cache.clear()  # free the previous graph before loading the next one
    graph = load(
        source.input, progress=False, schedule=ScheduleOptions(coll=source.coll or "default"), seed=source.seed or 1
    )
    _cache[key] = graph
    return graph, True


def evaluate_batch(source, points: list, analysis: Analysis) -> BatchResult:
    """Rows for `points` (all on `source`'s graph), in order."""
    with _lock:
        start = time.perf_counter()
        try:
            graph, loaded = _graph(source)
        except Exception as err:  # noqa: BLE001 - every point records why its graph failed
            message = one_line(err)
            rows = [_row(p, {"error": message}) for p in points]
            return BatchResult(rows, True, time.perf_counter() - start)
        load_seconds = time.perf_counter() - start
        rows = [evaluate_point(graph, p, analysis) for p in points]
        return BatchResult(rows, loaded, load_seconds)


def evaluate_point(graph, point, analysis: Analysis) -> dict:
    """One point's row: its inputs, then T, λ, ρ_L, the critical path and the tolerances."""
    start = time.perf_counter()
    try:
        params = point.params()
        pred = graph.predict(params)
        out = {"T_ns": pred.runtime_ns, "rho_L": pred.rho_L}
        for name, value in pred.lambda_.items():
            out[f"lambda_{name}"] = value
        out["lambda_left_L"] = pred.lambda_left["L"]
        out["messages_on_path"] = pred.critical_path["messages"]
        for key in PATH_COLUMNS:
            out[f"path_{key}"] = pred.critical_path[key]
        for name in analysis.tolerance:
            tol = graph.tolerance(list(analysis.pcts), param=name, params=params)
            for pct in analysis.pcts:
                m = tol.max(pct)
                out[tol_column(name, pct)] = float("inf") if m is None else m
        out["error"] = None
    except Exception as err:  # noqa: BLE001 - a failing point records its error, the sweep goes on
        out = {"error": one_line(err)}
    out["seconds"] = time.perf_counter() - start
    return _row(point, out)


def _row(point, results: dict) -> dict:
    source = point.source
    row = {
        "input": source.input,
        "kind": source.kind,
        "seed": source.seed,
        "coll": source.coll,
        "machine": point.machine,
        "placement": point.placement,
    }
    row.update(point.values)
    row.update(results)
    return row
