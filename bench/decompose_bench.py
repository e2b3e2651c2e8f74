#!/usr/bin/env python3
"""Issue 20 bench: `latitude decompose` against `latitude predict` on one graph.

    flock -x /work/.quiet.lock python3 bench/decompose_bench.py [--iterations 100] [--repeat 3]

The workload is examples/halo-allreduce-256.job (256 ranks, halo2d + 8-byte allreduce per
iteration) with --iterations iterations (100: ~0.9·10⁶ ops; 1,000: ~9·10⁶). Each measurement
runs in a fresh process: the graph is generated, VmHWM reset through /proc/self/clear_refs,
then one `predict` (T, λ, critical path) or one `decompose` (exact times of every op, the
pieces of every waited-for message, per rank / per op kind sums). Reported: the median time
of --repeat runs, its ratio to predict's in the same repeat, peak RSS above the graph, and
bytes per op. The decomposition keeps 36 bytes per op in the core (two exact times, a winner)
plus ~21 bytes per piece; a target is within 3× predict's time.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JOB = os.path.join(ROOT, "python", "latitude", "data", "examples", "halo-allreduce-256.job")

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from latitude import api
text = open(sys.argv[2]).read().replace("[ITERATIONS] 20", "[ITERATIONS] " + sys.argv[3])
import tempfile, os
with tempfile.NamedTemporaryFile("w", suffix=".job", delete=False) as f:
    f.write(text)
g = api.load(f.name, progress=False)
os.unlink(f.name)
def rss():
    for line in open("/proc/self/status"):
        if line.startswith(("VmHWM", "VmRSS")):
            yield line.split()[0], int(line.split()[1]) * 1024
base = dict(rss())["VmRSS:"]
open("/proc/self/clear_refs", "w").write("5")
t = time.perf_counter()
if sys.argv[4] == "predict":
    g.predict()
else:
    g.decompose()
dt = time.perf_counter() - t
print(json.dumps({"seconds": dt, "extra_rss": dict(rss())["VmHWM:"] - base, "ops": g.info["vertices"]}))
"""


def run(what: str, iterations: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, os.path.join(ROOT, "python"), JOB, str(iterations), what],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    rows = {"predict": [], "decompose": []}
    for _ in range(a.repeat):
        for what in rows:
            rows[what].append(run(what, a.iterations))
    p = statistics.median(r["seconds"] for r in rows["predict"])
    for what, rs in rows.items():
        t = statistics.median(r["seconds"] for r in rs)
        mem = statistics.median(r["extra_rss"] for r in rs)
        ops = rs[0]["ops"]
        print(
            f"{what:10} {ops:>12,} ops  {t:8.3f} s  ({t / p:4.2f}x predict)  +{mem / 2**20:8.1f} MiB  ({mem / ops:5.1f} B/op)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
