"""Design-space sweeps: the points of a spec (latitude.sweep_spec), evaluated in batches on a
local process pool or a Dask cluster (latitude.sweep_eval), rows kept by latitude.sweep_store.

    import latitude.sweep as sweep
    spec = sweep.read_spec("spec.toml")
    summary = sweep.run(spec, "results.parquet", sweep.RunOptions(dask="local"))

Points are batched per graph (every batch holds points of one graph only) and batches are
submitted graph by graph, so a worker loads each graph about once and evaluates many points
on it. Dask: `local` starts a LocalCluster with one single-threaded worker process per core;
`tcp://host:port` uses a running scheduler, whose workers must import the same latitude and
see the inputs at the same paths (a shared file system, as on a cluster).
"""

from __future__ import annotations

import concurrent.futures
import math
import multiprocessing
import os
import time
from dataclasses import dataclass, field

from latitude.errors import InputError, ToolError
from latitude.progress import progress
from latitude.sweep_eval import Analysis, evaluate_batch
from latitude.sweep_spec import Spec
from latitude.sweep_spec import read as read_spec
from latitude.sweep_store import Store

__all__ = ["RunOptions", "Summary", "input_columns", "point_key", "read_spec", "row_key", "run"]

# A batch is at most this many points (what a killed sweep can lose per worker), and small
# enough that every worker gets several batches.
MAX_BATCH = 64
BATCHES_PER_WORKER = 4


@dataclass(frozen=True)
class RunOptions:
    workers: int | None = None  # local pool size (default: the cores)
    dask: str | None = None  # None (local pool) | "local" | "tcp://host:port"
    batch: int | None = None  # points per batch (default: see batch_size)
    resume: bool = False
    progress: bool = True


@dataclass
class Summary:
    points: int  # in the spec
    skipped: int  # already in the output (--resume)
    evaluated: int
    failed: int
    batches: int
    graph_loads: int
    workers: int
    seconds: float
    engine: str
    columns: list = field(default_factory=list)

    @property
    def points_per_second(self) -> float:
        return self.evaluated / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict:
        out = dict(self.__dict__)
        out.pop("columns")
        out["points_per_second"] = self.points_per_second
        return out


def input_columns(spec: Spec) -> list:
    return ["input", "kind", "seed", "coll", "machine", "placement"] + spec.param_names


def point_key(point) -> tuple:
    return point.key()


def row_key(spec: Spec):
    """A row's point key (as Point.key builds it), for --resume."""
    names = ["input", "seed", "coll", "machine", "placement"] + spec.param_names
    return lambda row: tuple(row.get(n) for n in names)


def batch_size(points: int, workers: int, requested: int | None) -> int:
    if requested is not None:
        if requested < 1:
            raise InputError("--batch", f"expected a positive number of points, got {requested}")
        return requested
    return max(1, min(MAX_BATCH, math.ceil(points / (workers * BATCHES_PER_WORKER))))


def batches(points: list, size: int) -> list:
    """(source, points) pairs: consecutive points of one graph, at most `size` each."""
    out = []
    for p in points:
        if out and out[-1][0] == p.source and len(out[-1][1]) < size:
            out[-1][1].append(p)
        else:
            out.append((p.source, [p]))
    return out


def run(spec: Spec, output: str, options: RunOptions = RunOptions()) -> Summary:
    """Evaluate every point of `spec` not yet in `output` and write them all to it."""
    store = Store(output, options.resume, row_key(spec))
    done = store.keys()
    points = spec.points()
    todo = [p for p in points if p.key() not in done]
    analysis = Analysis(tuple(spec.pcts), tuple(spec.tolerance))
    columns = input_columns(spec) + _result_columns(spec, analysis)
    order = {p.key(): i for i, p in enumerate(points)}
    start = time.perf_counter()
    executor = _executor(options)
    if options.batch is not None:
        batch_size(1, 1, options.batch)  # checked before any cluster starts
    loads = failed = evaluated = 0
    try:
        with executor as ex:
            work = batches(todo, batch_size(len(todo), ex.workers, options.batch))
            with progress("sweep", total=len(todo), unit="points", enabled=options.progress) as update:
                futures = [ex.submit(evaluate_batch, source, pts, analysis) for source, pts in work]
                for fut in ex.completed(futures):
                    result = fut.result()
                    store.append(result.rows)
                    loads += result.loaded
                    failed += sum(1 for r in result.rows if r.get("error"))
                    evaluated += len(result.rows)
                    update(evaluated)
    except BaseException:
        if evaluated:  # keep what was done (the journal has it too)
            store.close(columns, order)
        raise
    store.close(columns, order)
    seconds = time.perf_counter() - start
    return Summary(
        len(points), len(points) - len(todo), evaluated, failed, len(work), loads, ex.workers, seconds, ex.name, columns
    )


def _result_columns(spec: Spec, analysis: Analysis) -> list:
    from latitude.params import PARAM_NAMES
    from latitude.sweep_eval import PATH_COLUMNS

    cols = ["T_ns", "rho_L"] + [f"lambda_{n}" for n in PARAM_NAMES] + ["lambda_left_L", "messages_on_path"]
    cols += [f"path_{k}" for k in PATH_COLUMNS] + analysis.columns()
    return cols + ["error", "seconds"]


# -- executors -------------------------------------------------------------------------------


def _executor(options: RunOptions):
    if options.dask is None:
        return LocalPool(options.workers)
    if options.workers is not None and options.dask != "local":
        raise InputError("--workers", "the workers of a running Dask scheduler are its own (drop --workers)")
    return DaskExecutor(options.dask, options.workers)


def _single_threaded():
    """Pool workers run one core each: the pool is the parallelism."""
    os.environ["LATITUDE_THREADS"] = "1"


class LocalPool:
    """A process pool sized to the cores (or `workers`); one worker runs in this process."""

    name = "local pool"

    def __init__(self, workers: int | None):
        if workers is not None and workers < 1:
            raise InputError("--workers", f"expected a positive number of workers, got {workers}")
        self.workers = workers or len(os.sched_getaffinity(0))
        self.pool = None

    def __enter__(self):
        if self.workers > 1:
            ctx = multiprocessing.get_context("spawn")  # no fork of a process with threads
            self.pool = concurrent.futures.ProcessPoolExecutor(self.workers, ctx, initializer=_single_threaded)
        return self

    def __exit__(self, *exc):
        if self.pool:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def submit(self, fn, *args):
        if self.pool:
            return self.pool.submit(fn, *args)
        return _Deferred(fn, args)

    def completed(self, futures):
        if self.pool:
            return concurrent.futures.as_completed(futures)
        return iter(futures)


class _Deferred:
    """A call run when its result is asked for (the pool of one: this process)."""

    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def result(self):
        return self.fn(*self.args)


class DaskExecutor:
    """Batches as Dask tasks: on a LocalCluster (`local`) or a running scheduler (tcp://...)."""

    def __init__(self, address: str, workers: int | None):
        if address != "local" and not address.startswith(("tcp://", "tls://", "ucx://", "inproc://")):
            raise InputError(
                "--dask", f"expected local or a scheduler address such as tcp://host:8786, got {address!r}"
            )
        if workers is not None and workers < 1:
            raise InputError("--workers", f"expected a positive number of workers, got {workers}")
        self.address = address
        self.requested = workers
        self.name = "dask " + address
        self.cluster = self.client = None

    def __enter__(self):
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise InputError("--dask", "needs Dask's distributed package (pip install 'dask[distributed]')") from None
        try:
            if self.address == "local":
                n = self.requested or len(os.sched_getaffinity(0))
                self.cluster = LocalCluster(
                    n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None, env=_worker_env()
                )
                self.client = Client(self.cluster)
            else:
                self.client = Client(self.address, timeout="15s")
        except OSError as err:
            self.__exit__(None, None, None)
            raise ToolError(f"--dask {self.address}: cannot reach the scheduler ({err})") from None
        self.workers = max(1, sum(w["nthreads"] for w in self.client.scheduler_info()["workers"].values()))
        return self

    def __exit__(self, *exc):
        if self.client:
            self.client.close()
        if self.cluster:
            self.cluster.close()

    def submit(self, fn, *args):
        return self.client.submit(fn, *args, pure=False)

    def completed(self, futures):
        from distributed import as_completed

        return as_completed(futures)


def _worker_env() -> dict:
    """What a LocalCluster's workers need: one core each, and this checkout's package."""
    env = {"LATITUDE_THREADS": "1"}
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)
    return env
