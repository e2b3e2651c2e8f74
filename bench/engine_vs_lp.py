#!/usr/bin/env python3
"""Engine pass vs LP build + HiGHS solve on generated graphs (issue 2 bench).

    python3 bench/engine_vs_lp.py [--sizes 1e5,1e6,1e7] [--lp-limit 1e6] [--time-limit 900]

Each size runs in a fresh process (peak RSS is per size). Graphs come from the seeded
random-program generator (64 ranks). Prints vertices/s of one engine pass (median of 3,
plan excluded and reported separately), LP build and solve times, and the ratio
(LP build + solve) / engine pass, all measured in the same run.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))


def one(n: int, do_lp: bool, time_limit: float) -> dict:
    import latitude

    ranks = 64
    rounds = max(1, int(n / (ranks * 3.1)))
    t = time.perf_counter()
    g = latitude.Graph.random(ranks=ranks, rounds=rounds, seed=1)
    out = {"vertices": len(g), "generate_s": time.perf_counter() - t}
    t = time.perf_counter()
    p = g.predict()  # first call builds the plan
    out["plan_and_pass_s"] = time.perf_counter() - t
    passes = []
    for _ in range(3):
        t = time.perf_counter()
        p = g.predict()
        passes.append(time.perf_counter() - t)
    out["engine_s"] = statistics.median(passes)
    out["runtime_ns"] = p.runtime_ns
    if do_lp:
        t = time.perf_counter()
        lp = g.lp()
        out["lp_build_s"] = time.perf_counter() - t
        h = lp.highs()
        h.setOptionValue("time_limit", float(time_limit))
        t = time.perf_counter()
        h.run()
        out["lp_solve_s"] = time.perf_counter() - t
        status = h.modelStatusToString(h.getModelStatus())
        out["lp_status"] = status
        if status == "Optimal":
            obj = h.getInfo().objective_function_value
            out["lp_rel_diff"] = abs(obj - p.runtime_ns) / p.runtime_ns
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1e5,1e6,1e7")
    ap.add_argument("--lp-limit", type=float, default=1e7, help="largest size for which the LP is built and solved")
    ap.add_argument("--time-limit", type=float, default=900, help="HiGHS time limit per solve (s)")
    ap.add_argument("--child", type=float, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(one(int(a.child), a.child <= a.lp_limit, a.time_limit)))
        return 0
    hdr = f"{'vertices':>12} {'engine pass':>12} {'vertices/s':>12} {'plan+pass':>10} {'LP build':>9} {'LP solve':>10} {'LP/engine':>10} {'LP status':>10} {'peak RSS':>9}"
    print(hdr, flush=True)
    for s in a.sizes.split(","):
        n = float(s)
        proc = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                str(n),
                "--lp-limit",
                str(a.lp_limit),
                "--time-limit",
                str(a.time_limit),
            ],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return 1
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        lp = r.get("lp_build_s", 0) + r.get("lp_solve_s", 0)
        ratio = f"{lp / r['engine_s']:,.0f}x" if "lp_solve_s" in r else "-"
        print(
            f"{r['vertices']:>12,} {r['engine_s']:>11.3f}s {r['vertices'] / r['engine_s']:>12,.0f} {r['plan_and_pass_s']:>9.2f}s"
            f" {r.get('lp_build_s', float('nan')):>8.2f}s {r.get('lp_solve_s', float('nan')):>9.1f}s {ratio:>10}"
            f" {r.get('lp_status', '-'):>10} {r['peak_rss_mb']:>7.0f}MB",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
