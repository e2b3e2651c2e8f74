#!/usr/bin/env python3
"""Issue 24 bench: sweep throughput (points/s) on a 10⁶-vertex graph.

    flock -x /work/.quiet.lock python3 bench/sweep_bench.py [--points 32] [--vertices 1e6]

The graph is bench/scale.py's 3-D stencil workload (512 ranks, ~10⁶ vertices), written once
as GOAL. Each point is T, every λ, ρ_L, the critical path and the 1/2/5 % L tolerances at one
(L, G). The same points run four ways, each timed from start to end as a user would (process
start, imports, cluster start, graph loads included):

  loop         one `latitude tolerance GRAPH -L x -G y --json` process per point (the
               baseline: what a shell loop over the existing CLI does; one graph load per point)
  sweep 1      `latitude sweep --workers 1`: the points in one process, one graph load
  sweep pool   `latitude sweep` on the local process pool (one worker per core)
  sweep dask   `latitude sweep --dask tcp://...` on a real `dask scheduler` with two
               `dask worker --nthreads 1` processes started here (start-up not timed)

Every mode's runtimes are checked equal to the loop's (the engine is exact). Peak RSS is the
largest VmHWM among the processes of the mode (sampled from /proc while it runs). Ratios are
against the loop measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)

from scale import job_text  # noqa: E402


def env() -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + e.get("PYTHONPATH", "")
    return e


def latitude(*args) -> list:
    return [sys.executable, "-m", "latitude", *map(str, args)]


class PeakRSS:
    """The largest VmHWM (MiB) among the descendants of this process, sampled every 50 ms."""

    def __init__(self):
        self.peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _run(self):
        me = os.getpid()
        while not self._stop.wait(0.05):
            for pid in _descendants(me):
                self.peak = max(self.peak, _hwm(pid))


def _descendants(root: int) -> list:
    children = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(d))
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _hwm(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def points(n: int) -> list:
    """n (L, G) points: L from 1 to 40 µs, G 0.018 and 0.05 ns/B."""
    ls = max(1, n // 2)
    return [(1000.0 + 39000.0 * i / max(ls - 1, 1), g) for g in (0.018, 0.05) for i in range(ls)][:n]


def spec_text(goal: str, pts: list) -> str:
    ls = sorted({p[0] for p in pts})
    gs = sorted({p[1] for p in pts})
    return (
        f'input = ["{goal}"]\n[params]\n'
        f"L = [{', '.join(f'{x!r}' for x in ls)}]\n"
        f"G = [{', '.join(f'{x!r}' for x in gs)}]\n"
        "[analysis]\npct = [1, 2, 5]\n"
    )


def run_loop(goal: str, pts: list) -> dict:
    runtimes = {}
    with PeakRSS() as rss:
        t = time.perf_counter()
        for L, G in pts:
            out = subprocess.run(
                latitude("tolerance", goal, "-L", f"{L}ns", "-G", f"{G}ns", "--json"),
                capture_output=True,
                text=True,
                env=env(),
                check=True,
            )
            runtimes[(L, G)] = json.loads(out.stdout)["baseline_runtime_ns"]
        wall = time.perf_counter() - t
    return {"wall": wall, "runtimes": runtimes, "rss": rss.peak, "loads": len(pts)}


def run_sweep(spec: str, out: str, *args) -> dict:
    with PeakRSS() as rss:
        t = time.perf_counter()
        proc = subprocess.run(
            latitude("sweep", spec, "-o", out, "--json", *args), capture_output=True, text=True, env=env(), check=True
        )
        wall = time.perf_counter() - t
    summary = json.loads(proc.stdout)
    import pyarrow.parquet as pq

    rows = pq.read_table(out).to_pylist()
    assert not any(r["error"] for r in rows), [r["error"] for r in rows if r["error"]]
    return {
        "wall": wall,
        "runtimes": {(r["L"], r["G"]): r["T_ns"] for r in rows},
        "rss": rss.peak,
        "loads": summary["graph_loads"],
    }


def dask_cluster(log):
    dask = shutil.which("dask")
    if not dask:
        return None, []
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    procs = [
        subprocess.Popen(
            [dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
            env=env(),
            stdout=log,
            stderr=log,
        )
    ]
    for i in range(2):
        procs.append(
            subprocess.Popen(
                [dask, "worker", address, "--nthreads", "1", "--name", f"b{i}", "--no-dashboard"],
                env=env(),
                stdout=log,
                stderr=log,
            )
        )
    from distributed import Client

    with Client(address, timeout="60s") as client:
        client.wait_for_workers(2, timeout=120)
    return address, procs


def stop(procs) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", type=int, default=32)
    ap.add_argument("--vertices", type=float, default=1e6)
    ap.add_argument("--keep", metavar="DIR", help="keep the graph, spec and results here")
    a = ap.parse_args()
    work = a.keep or tempfile.mkdtemp(prefix="sweep-bench-")
    os.makedirs(work, exist_ok=True)
    job, goal = os.path.join(work, "stencil.job"), os.path.join(work, "stencil.goal")
    with open(job, "w") as f:
        f.write(job_text(a.vertices))
    subprocess.run(latitude("generate", job, "-o", goal), check=True, env=env(), capture_output=True)
    import latitude as lat

    info = lat.load(goal, progress=False).info
    pts = points(a.points)
    spec = os.path.join(work, "spec.toml")
    with open(spec, "w") as f:
        f.write(spec_text(goal, pts))
    cores = len(os.sched_getaffinity(0))
    print(f"graph: {info['vertices']:,} vertices, {info['ranks']} ranks; {len(pts)} points; {cores} cores", flush=True)
    results = {"loop (a process per point)": run_loop(goal, pts)}
    results["sweep, 1 process"] = run_sweep(spec, os.path.join(work, "one.parquet"), "--workers", "1")
    results[f"sweep, local pool ({cores} workers)"] = run_sweep(spec, os.path.join(work, "pool.parquet"))
    with open(os.path.join(work, "dask.log"), "w") as log:
        address, procs = dask_cluster(log)
        try:
            if address:
                results["sweep, dask (2 workers)"] = run_sweep(
                    spec, os.path.join(work, "dask.parquet"), "--dask", address
                )
        finally:
            stop(procs)
    base = results["loop (a process per point)"]
    for name, r in results.items():
        assert r["runtimes"] == base["runtimes"], f"{name}: runtimes differ from the loop's"
    print(f"\n{'mode':36} {'wall s':>8} {'points/s':>9} {'vs loop':>8} {'graph loads':>12} {'peak RSS MiB':>13}")
    for name, r in results.items():
        rate = len(pts) / r["wall"]
        print(
            f"{name:36} {r['wall']:8.2f} {rate:9.2f} {base['wall'] / r['wall']:7.2f}x {r['loads']:12d} {r['rss']:13.0f}"
        )
    print("\nruntimes equal across all modes (exact engine)")
    if not a.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
