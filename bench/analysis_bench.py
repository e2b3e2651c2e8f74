#!/usr/bin/env python3
"""Issue 3 bench: all critical latencies over a range, a 100-point curve, and 1/2/5 %
tolerance, exact engine vs --method lp (LLAMP's Algorithm 2 and max-l LP on HiGHS).

    python3 bench/analysis_bench.py [--sizes 1e6,1e7] [--graphs stencil,random] [--lp-budget 600]

Graphs: `stencil` is bench/scale.py's generated 3-D stencil job (halo3d + allreduce + jittered
compute), `random` a random 64-rank message graph with many critical latencies. Each graph
and size runs in a fresh process. The engine sweep is exact. Algorithm 2 runs downwards from
the top of the range for at most --lp-budget seconds; if it has not covered the range by then,
the engine is timed again on exactly the part the LP covered, so the sweep ratio compares the
same work, and the answers are compared there. The tolerance LPs get the same budget (HiGHS
time limit; a cut one is reported as "≥"). LP is skipped above --lp-limit vertices (one HiGHS
solve of a 10⁷-vertex LP needs ~10 GB and tens of minutes, see bench/engine_vs_lp.py).
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))


_T0 = time.perf_counter()


def _progress(what: str) -> None:
    print(f"[{time.perf_counter() - _T0:7.1f}s] {what}", file=sys.stderr, flush=True)


class Clock:
    """Wall and process CPU time of a stage. Ratios use CPU time (both sides), so other work
    sharing the machine during the long LP runs does not count for or against either side."""

    def __enter__(self):
        self.w, self.c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.w, time.process_time() - self.c


def make_graph(kind: str, n: int):
    import latitude

    if kind == "random":
        ranks = 64
        return latitude.Graph.random(ranks=ranks, rounds=max(1, int(n / (ranks * 3.1))), seed=2, max_calc=20000)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import tempfile

    import scale  # the issue-8 stencil workload (halo3d + allreduce + jittered compute)

    with tempfile.NamedTemporaryFile("w", suffix=".job", delete=False) as f:
        f.write(scale.job_text(n))
    try:
        return latitude.generate(f.name, progress=False)
    finally:
        os.remove(f.name)


def same_breakpoints(engine, lp) -> bool:
    return len(engine) == len(lp) and all(
        abs(float(a.at) - float(b.at)) <= 1e-6 * float(a.at)
        and a.left.slope == b.left.slope
        and a.right.slope == b.right.slope
        for a, b in zip(engine, lp)
    )


def child(kind: str, n: int, range_us: float, lp_budget: float, do_lp: bool) -> dict:
    from latitude import Params

    _progress(f"building the {kind} graph")
    g = make_graph(kind, n)
    p = Params()
    lo, hi = p.L, p.L + range_us * 1e3
    out = {"graph": kind, "vertices": len(g)}
    t = time.perf_counter()
    g.predict(p)  # plan
    out["plan_s"] = time.perf_counter() - t
    with Clock() as c:
        s = g.sensitivity(lo, hi, params=p)
        curve = s.curve(100)
    out["engine_sweep_s"], out["engine_sweep_cpu"] = c.wall, c.cpu
    out.update(
        breakpoints=len(s.breakpoints),
        engine_passes=s.passes,
        engine_evaluations=s.evaluations,
        curve_points=len(curve),
    )
    with Clock() as c:
        tol = g.tolerance([1, 2, 5], params=p)
    out["engine_tol_s"], out["engine_tol_cpu"] = c.wall, c.cpu
    _progress(
        f"engine: {len(s.breakpoints)} critical latencies in {out['engine_sweep_s']:.2f}s, tolerance {out['engine_tol_s']:.2f}s"
    )
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if not do_lp:
        return out
    with Clock() as c:
        ls = g.sensitivity(lo, hi, params=p, method="lp", max_seconds=lp_budget or None)
    out["lp_sweep_s"], out["lp_sweep_cpu"] = c.wall, c.cpu
    out.update(
        lp_complete=ls.complete, lp_solves=ls.evaluations, lp_breakpoints=len(ls.breakpoints), lp_from=float(ls.lo)
    )
    _progress(
        f"LP: {len(ls.breakpoints)} critical latencies in [{ls.lo / 1e3:.2f}, {hi / 1e3:.2f}] us in {out['lp_sweep_s']:.1f}s"
    )
    # The engine on exactly the part of the range the LP covered: a ratio for the same work.
    with Clock() as c:
        cs = g.sensitivity(float(ls.lo), hi, params=p)
        cs.curve(100)
    out["engine_covered_s"], out["engine_covered_cpu"] = c.wall, c.cpu
    lp_bps = [b for b in ls.breakpoints if float(b.at) > ls.lo]
    out["same_breakpoints"] = same_breakpoints(
        [b for b in s.breakpoints if float(b.at) > ls.lo], lp_bps
    ) and same_breakpoints([b for b in cs.breakpoints if float(b.at) > ls.lo], lp_bps)
    with Clock() as c:
        try:
            lt = g.tolerance([1, 2, 5], params=p, method="lp", max_seconds=lp_budget or None)
        except TimeoutError:
            lt = None
    out["lp_tol_complete"] = lt is not None
    if lt is not None:
        out["same_tolerance"] = all(
            (tol.max(x) is None and lt.max(x) is None) or abs(tol.max(x) - lt.max(x)) <= 1e-6 * tol.max(x)
            for x in (1, 2, 5)
        )
    out["lp_tol_s"], out["lp_tol_cpu"] = c.wall, c.cpu
    _progress(f"LP tolerance: {out['lp_tol_s']:.1f}s" + ("" if out["lp_tol_complete"] else " (cut)"))
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1e6,1e7")
    ap.add_argument(
        "--graphs", default="stencil,random", help="stencil (bench/scale.py's generated halo3d job), random"
    )
    ap.add_argument("--range-us", type=float, default=100.0, help="L range above the baseline (default 100 µs)")
    ap.add_argument(
        "--lp-budget",
        type=float,
        default=600.0,
        help="seconds for Algorithm 2 and for the tolerance LPs (0 = unlimited)",
    )
    ap.add_argument("--lp-limit", type=float, default=2e6, help="largest size for which the LP method runs")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        n = float(a.child[1])
        print(json.dumps(child(a.child[0], int(n), a.range_us, a.lp_budget, n <= a.lp_limit)))
        return 0
    rows = []
    for kind in a.graphs.split(","):
        for s in a.sizes.split(","):
            proc = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    kind,
                    s,
                    "--range-us",
                    str(a.range_us),
                    "--lp-budget",
                    str(a.lp_budget),
                    "--lp-limit",
                    str(a.lp_limit),
                ],
                stdout=subprocess.PIPE,
                text=True,
            )
            if proc.returncode:
                return 1
            rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
            print(json.dumps(rows[-1]), file=sys.stderr)
    print_table(rows)
    return 0


def print_table(rows: list) -> None:
    print(
        "| graph | vertices | critical latencies | engine: all + 100-pt curve | engine tol 1/2/5 % | LP Algorithm 2 (covered) "
        "| engine, same range | sweep ratio | LP tol 1/2/5 % | tol ratio | same answers | peak RSS |"
    )
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|---:|")
    for r in rows:
        cells = [
            r["graph"],
            f"{r['vertices']:,}",
            str(r["breakpoints"]),
            f"{r['engine_sweep_s']:.2f} s ({r['engine_passes']} passes)",
            f"{r['engine_tol_s']:.2f} s",
        ]
        if "lp_sweep_s" in r:
            cov = "all" if r["lp_complete"] else f"from {r['lp_from'] / 1e3:.1f} µs, cut"
            tol_bound = "" if r["lp_tol_complete"] else "≥ "
            same = r["same_breakpoints"] and r.get("same_tolerance", True)
            cells += [
                f"{r['lp_sweep_s']:.1f} s, {r['lp_breakpoints']} found ({cov})",
                f"{r['engine_covered_s']:.2f} s",
                f"{r['lp_sweep_cpu'] / r['engine_covered_cpu']:,.0f}×",
                f"{tol_bound}{r['lp_tol_s']:.1f} s",
                f"{tol_bound}{r['lp_tol_cpu'] / r['engine_tol_cpu']:,.0f}×",
                ("yes" if same else "NO") + ("" if r["lp_tol_complete"] else " (breakpoints)"),
            ]
        else:
            cells += ["-"] * 6
        cells.append(f"{r['peak_rss_mb']:.0f} MB" if "peak_rss_mb" in r else "-")
        print("| " + " | ".join(cells) + " |")
    print(
        "times: wall clock; ratios: process CPU time of the LP method / of the engine (the engine's threads counted),\n"
        "the sweep on the same range (the part the LP covered within its budget)"
    )


if __name__ == "__main__":
    sys.exit(main())
