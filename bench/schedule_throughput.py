"""Throughput of `latitude schedule` (trace events converted per second) and its peak RSS.

Generates a large synthetic liballprof trace in our format (a 2-D halo exchange: per
iteration 4 Irecv + 4 Isend + Waitall with '#@ done', an Allreduce every 10 iterations),
converts it in a child process per case and prints a table. Baseline, measured in the same
run: reading the GOAL file of the same graph with the core's GOAL reader (a parser of the
same size of output) — the ratio shows what the conversion costs beyond building a graph.

    PYTHONPATH=python python3 bench/schedule_throughput.py [--ranks 32] [--iters 25000]

Target: ≥ 2 M events/s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))


def write_trace(d: str, ranks: int, iters: int) -> int:
    """A px × py halo exchange; returns the number of call records."""
    px = 1
    while px * px < ranks:
        px *= 2
    px = max(1, min(px, ranks))
    while ranks % px:
        px -= 1
    py = ranks // px
    events = 0
    for r in range(ranks):
        x, y = r % px, r // px
        nbrs = [((x - 1) % px) + y * px, ((x + 1) % px) + y * px, x + ((y - 1) % py) * px, x + ((y + 1) % py) * px]
        head = (
            f"#@ latitude-trace 1\n#@ world rank={r} size={ranks}\n#@ request_size 8\n"
            f"#@ const any_source=-1 any_tag=-1 proc_null=-2\n#@ comm 7 seq=0 world=0-{ranks - 1}\n\n"
        )
        lines = [head, "MPI_Init:-:1:2:0.000\n"]
        t = 10.0
        idx = 1
        for it in range(iters):
            first = idx
            for k, n in enumerate(nbrs):
                lines.append(
                    f"MPI_Irecv:{t:.3f}:1000:512:10,8,8:{n}:{k ^ 1}:7,{r},{ranks}:{2000 + 8 * k}:{t + 0.5:.3f}\n"
                )
                t += 1.0
            for k, n in enumerate(nbrs):
                lines.append(f"MPI_Isend:{t:.3f}:1000:512:10,8,8:{n}:{k}:7,{r},{ranks}:{2032 + 8 * k}:{t + 0.5:.3f}\n")
                t += 1.0
            lines.append(
                f"MPI_Waitall:{t:.3f}:8:2000:0:{t + 3.0:.3f}\n#@ done {','.join(str(first + i) for i in range(8))}\n"
            )
            t += 50.0
            idx += 9
            if it % 10 == 9:
                lines.append(f"MPI_Allreduce:{t:.3f}:1:2:1:10,8,8:3:7,{r},{ranks}:{t + 5.0:.3f}\n")
                t += 20.0
                idx += 1
        lines.append(f"MPI_Finalize:{t:.3f}:-\n#@ end finalize\n")
        events += idx + 1
        with open(os.path.join(d, f"pmpi-trace-rank-{r}.txt"), "w") as f:
            f.writelines(lines)
    return events


def child(args: argparse.Namespace) -> None:
    """Run one case; print JSON with seconds and peak RSS."""
    from latitude import _core

    t0 = time.perf_counter()
    if args.case == "goal":
        g = _core.Graph.load_goal(args.path)
    else:
        g, _ = _core.Graph.from_trace(args.path, coll=args.case)
        if args.write:
            g.write_goal(args.write)
    secs = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"seconds": secs, "rss": rss, "vertices": g.info()["vertices"]}))


def run_child(case: str, path: str, write: str | None = None) -> dict:
    cmd = [sys.executable, __file__, "--child", case, "--path", path]
    if write:
        cmd += ["--write", write]
    out = subprocess.run(
        cmd, capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")}
    )
    return json.loads(out.stdout)


def best(case: str, path: str, repeats: int) -> dict:
    runs = [run_child(case, path) for _ in range(repeats)]
    return min(runs, key=lambda r: r["seconds"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=32)
    ap.add_argument("--iters", type=int, default=25000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--child")
    ap.add_argument("--path")
    ap.add_argument("--write")
    args = ap.parse_args()
    if args.child:
        args.case = args.child
        child(args)
        return
    with tempfile.TemporaryDirectory(prefix="latitude-bench-") as d:
        t0 = time.perf_counter()
        events = write_trace(d, args.ranks, args.iters)
        size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
        print(
            f"synthetic trace: {args.ranks} ranks, {events:,} events, {size / 2**20:.0f} MiB "
            f"(written in {time.perf_counter() - t0:.1f} s)"
        )
        goal = os.path.join(d, "graph.goal")
        run_child("default", d, write=goal)
        base = best("goal", goal, args.repeats)
        rows = [("read GOAL of the same graph (baseline)", base)]
        for case in ("default", "schedgen"):
            rows.append((f"schedule --coll {case}", best(case, d, args.repeats)))
        print(f"{'case':<42} {'seconds':>8} {'events/s':>12} {'peak RSS':>10} {'vs baseline':>12}")
        for name, r in rows:
            rate = events / r["seconds"]
            print(
                f"{name:<42} {r['seconds']:8.2f} {rate / 1e6:10.2f} M {r['rss'] / 2**20:8.0f} MiB "
                f"{r['seconds'] / base['seconds']:11.2f}x"
            )
        print(f"graph: {base['vertices']:,} vertices; best of {args.repeats} runs each")


if __name__ == "__main__":
    main()
