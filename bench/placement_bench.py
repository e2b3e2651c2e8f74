#!/usr/bin/env python3
"""Issue 19 bench: what a placement costs to price, and what each method takes.

    flock -x /work/.quiet.lock python3 bench/placement_bench.py [--evaluations 300] [--repeat 3]

Workloads (bundled examples): the 256-rank halo + allreduce job on a 3-tier fat tree (k = 16,
6 ranks per node), and the 64-rank halo on a 2-tier fat tree (k = 8, 6 per node). Per
workload:
  predict     one prediction with the machine's own placement (the graph already planned):
              the baseline every ratio is against, measured in the same run
  per map     the time of one engine pass on a new map (Params.with_placement: a new
              machine bound to the same graph and plan), from annealing's passes
  sens        Algorithm 3 + refinement from block: passes, seconds, change vs block
  scotch      the Scotch adapter (files, amk_grf, scotch_gmap, repair) end to end
Times are medians of --repeat runs. Prints a table and a JSON line.
"""

import argparse
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

import latitude  # noqa: E402
from latitude import Params, place  # noqa: E402
from latitude.place_model import Problem, volumes  # noqa: E402

EX = os.path.join(ROOT, "examples")
CASES = [
    ("halo-allreduce-256", "halo-allreduce-256.job", "machines/fat-tree-k16-6pn.toml"),
    ("halo-64", "halo-64.job", "machines/fat-tree-k8-6pn.toml"),
]


def one(name: str, job: str, machine: str, evaluations: int) -> dict:
    g = latitude.load(os.path.join(EX, job))
    p = Params.from_machine(os.path.join(EX, machine))
    g.predict(p)  # plan once
    t = time.perf_counter()
    t_block = g.predict(p).runtime_ns
    predict_s = time.perf_counter() - t
    block = [int(n) for n in g.placement(p)]
    prob = Problem.of(g, p, block)
    t = time.perf_counter()
    place.anneal(prob, block, place.Options(seed=1, budget=None, max_evaluations=evaluations))
    per_map = (time.perf_counter() - t) / max(prob.evaluations, 1)
    prob = Problem.of(g, p, block)
    t = time.perf_counter()
    nodes, info = place.sens(prob, block, place.Options(budget=None))
    sens_s = time.perf_counter() - t
    sens_t = prob.runtime(nodes)
    t = time.perf_counter()
    place.scotch_map(prob, volumes(g))
    scotch_s = time.perf_counter() - t
    return {
        "workload": name,
        "ranks": g.num_ranks,
        "vertices": len(g),
        "predict_s": predict_s,
        "per_map_s": per_map,
        "per_map_ratio": per_map / predict_s,
        "sens_s": sens_s,
        "sens_passes": prob.evaluations,
        "sens_change": sens_t / t_block - 1.0,
        "alg3_swaps": info["alg3_swaps"],
        "scotch_s": scotch_s,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--evaluations", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows = []
    for case in CASES:
        runs = [one(*case, args.evaluations) for _ in range(args.repeat)]
        row = dict(runs[0])
        for k in ("predict_s", "per_map_s", "per_map_ratio", "sens_s", "scotch_s"):
            row[k] = statistics.median(r[k] for r in runs)
        rows.append(row)
    print(
        f"{'workload':<20} {'ranks':>6} {'vertices':>9} {'predict':>9} {'per map':>9} {'ratio':>6} "
        f"{'sens':>8} {'passes':>7} {'vs block':>9} {'scotch':>8}"
    )
    for r in rows:
        print(
            f"{r['workload']:<20} {r['ranks']:>6} {r['vertices']:>9,} {r['predict_s'] * 1e3:>7.1f}ms "
            f"{r['per_map_s'] * 1e3:>7.1f}ms {r['per_map_ratio']:>6.2f} {r['sens_s']:>7.2f}s {r['sens_passes']:>7} "
            f"{100 * r['sens_change']:>+8.2f}% {r['scotch_s']:>7.2f}s"
        )
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
