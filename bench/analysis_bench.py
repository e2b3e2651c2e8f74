#!/usr/bin/env python3
"""Issue 3 bench: all critical latencies over a range, a 100-point curve, and 1/2/5 %
tolerance, exact engine vs --method lp (LLAMP's Algorithm 2 and max-l LP on HiGHS).

    python3 bench/analysis_bench.py [--sizes 1e6,1e7] [--lp-budget 1800] [--range-us 100]

Each size runs in a fresh process. The engine sweep is exact; the LP sweep runs Algorithm 2
for at most --lp-budget seconds: if it has not covered the range by then, the ratio printed is
a lower bound ("≥") and the answers are compared on the part it covered. LP is skipped for
sizes above --lp-limit (one HiGHS solve of a 10⁷-vertex LP needs ~10 GB and tens of minutes,
see bench/engine_vs_lp.py).
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


def child(n: int, range_us: float, lp_budget: float, do_lp: bool) -> dict:
    import latitude
    from latitude import Params

    ranks = 64
    g = latitude.Graph.random(ranks=ranks, rounds=max(1, int(n / (ranks * 3.1))), seed=2, max_calc=20000)
    p = Params()
    lo, hi = p.L, p.L + range_us * 1e3
    out = {"vertices": len(g)}
    t = time.perf_counter()
    g.predict(p)  # plan
    out["plan_s"] = time.perf_counter() - t
    t = time.perf_counter()
    s = g.sensitivity(lo, hi, params=p)
    curve = s.curve(100)
    out["engine_sweep_s"] = time.perf_counter() - t
    out["breakpoints"] = len(s.breakpoints)
    out["engine_passes"] = s.passes
    out["engine_evaluations"] = s.evaluations
    t = time.perf_counter()
    tol = g.tolerance([1, 2, 5], params=p)
    out["engine_tol_s"] = time.perf_counter() - t
    out["curve_points"] = len(curve)
    if do_lp:
        t = time.perf_counter()
        ls = g.sensitivity(lo, hi, params=p, method="lp") if lp_budget <= 0 else \
            __import__("latitude.lp_analysis", fromlist=["x"]).sensitivity(g, p, "L", lo, hi, max_seconds=lp_budget)
        out["lp_sweep_s"] = time.perf_counter() - t
        out["lp_complete"] = ls.complete
        out["lp_solves"] = ls.evaluations
        covered = [b for b in s.breakpoints if float(b.at) >= ls.lo]
        out["lp_breakpoints"] = len(ls.breakpoints)
        out["same_breakpoints"] = len(covered) == len(ls.breakpoints) and all(
            abs(float(a.at) - float(b.at)) <= 1e-6 * float(a.at) and a.left.slope == b.left.slope and a.right.slope == b.right.slope
            for a, b in zip(covered, ls.breakpoints))
        t = time.perf_counter()
        lt = g.tolerance([1, 2, 5], params=p, method="lp")
        out["lp_tol_s"] = time.perf_counter() - t
        out["same_tolerance"] = all(
            (tol.max(x) is None and lt.max(x) is None) or abs(tol.max(x) - lt.max(x)) <= 1e-6 * tol.max(x) for x in (1, 2, 5))
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1e6,1e7")
    ap.add_argument("--range-us", type=float, default=100.0, help="L range above the baseline (default 100 µs)")
    ap.add_argument("--lp-budget", type=float, default=1800.0, help="seconds for Algorithm 2 (0 = unlimited)")
    ap.add_argument("--lp-limit", type=float, default=2e6, help="largest size for which the LP method runs")
    ap.add_argument("--child", type=float, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(int(a.child), a.range_us, a.lp_budget, a.child <= a.lp_limit)))
        return 0
    rows = []
    for s in a.sizes.split(","):
        proc = subprocess.run([sys.executable, __file__, "--child", s, "--range-us", str(a.range_us),
                               "--lp-budget", str(a.lp_budget), "--lp-limit", str(a.lp_limit)], capture_output=True, text=True)
        if proc.returncode:
            print(proc.stderr, file=sys.stderr)
            return 1
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(f"done {rows[-1]['vertices']:,}", file=sys.stderr)
    print(f"{'vertices':>11} {'crit. lat.':>10} {'engine sweep':>12} {'passes':>6} {'engine tol':>10} {'LP sweep':>12} {'LP tol':>8}"
          f" {'sweep ratio':>11} {'tol ratio':>9} {'same answers':>12} {'peak RSS':>9}")
    for r in rows:
        if "lp_sweep_s" in r:
            bound = "" if r["lp_complete"] else "≥"
            ratio = f"{bound}{r['lp_sweep_s'] / r['engine_sweep_s']:,.0f}x"
            tol_ratio = f"{r['lp_tol_s'] / r['engine_tol_s']:,.0f}x"
            lp = f"{r['lp_sweep_s']:.1f}s" + ("" if r["lp_complete"] else " (cut)")
            same = "yes" if r["same_breakpoints"] and r["same_tolerance"] else "NO"
            lpt = f"{r['lp_tol_s']:.1f}s"
        else:
            ratio = tol_ratio = lp = lpt = same = "-"
        print(f"{r['vertices']:>11,} {r['breakpoints']:>10} {r['engine_sweep_s']:>11.2f}s {r['engine_passes']:>6}"
              f" {r['engine_tol_s']:>9.2f}s {lp:>12} {lpt:>8} {ratio:>11} {tol_ratio:>9} {same:>12} {r['peak_rss_mb']:>7.0f}MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
