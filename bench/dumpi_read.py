"""Throughput of reading DUMPI traces (records per second) and peak RSS.

Writes a synthetic DUMPI run with tests/dumpi_writer.py (a ring: per iteration Irecv +
Isend + Waitall, an Allreduce every 10 iterations), then schedules it in a child process per
case. Baseline, measured in the same run: scheduling the same calls from our own trace
format (the DUMPI run converted once beforehand), so the ratio is what reading DUMPI costs
on top of scheduling.

    PYTHONPATH=python python3 bench/dumpi_read.py [--ranks 16] [--iters 20000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests"))

from dumpi_writer import Writer, arr, u16, u32, write_meta  # noqa: E402
from latitude.formats import dumpi_format as F  # noqa: E402

CHILD = """
import json, resource, sys, time
from latitude import Graph
t = time.perf_counter()
g = Graph.from_trace(sys.argv[1], progress=False)
print(json.dumps({"s": time.perf_counter() - t, "vertices": g.info["vertices"],
                  "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def write_run(d: str, ranks: int, iters: int) -> tuple[str, int]:
    records = 0
    world = u16(F.COMM_WORLD)
    for r in range(ranks):
        w = Writer(os.path.join(d, f"run-{r:04d}.bin"))
        t = 1000
        w.record("Init", 0, t, u32(0))
        for i in range(iters):
            # dumpi_write_irecv / _isend: count, datatype, peer, tag, comm, request
            w.record("Irecv", t + 100, t + 200, u32(256) + u16(9) + u32((r - 1) % ranks) + u32(1) + world + u32(2))
            w.record("Isend", t + 300, t + 400, u32(256) + u16(9) + u32((r + 1) % ranks) + u32(1) + world + u32(3))
            # dumpi_write_waitall: count, requests, statuses (bytes, source, cancelled, error, tag)
            st = u32(2) + (u32(1024) + u32((r - 1) % ranks) + bytes(2) + u32(1)) * 2
            w.record("Waitall", t + 500, t + 900, u32(2) + arr([2, 3]) + st)
            records += 3
            if i % 10 == 9:
                w.record("Allreduce", t + 1000, t + 1500, u32(1) + u16(14) + bytes([3]) + world)
                records += 1
            t += 2000
        w.record("Finalize", t, t + 10)
        w.close(r)
        records += 2
    return write_meta(os.path.join(d, "run"), ranks), records


def child(path: str) -> dict:
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    out = subprocess.run([sys.executable, "-c", CHILD, path], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=16)
    ap.add_argument("--iters", type=int, default=20000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        meta, records = write_run(d, args.ranks, args.iters)
        size = sum(os.path.getsize(os.path.join(d, n)) for n in os.listdir(d))
        print(f"wrote {records:,} records, {size / 2**20:.1f} MiB in {time.perf_counter() - t:.1f} s")
        from latitude.formats import dumpi_run

        ours = os.path.join(d, "ours")
        os.mkdir(ours)
        dumpi_run.convert(meta, ours)
        base, got = child(ours), child(meta)
        assert base["vertices"] == got["vertices"]
        print(f"{'input':<22}{'s':>8}{'records/s':>14}{'peak RSS MiB':>14}")
        for name, r in (("our trace format", base), ("DUMPI", got)):
            print(f"{name:<22}{r['s']:>8.2f}{records / r['s']:>14,.0f}{r['rss_mib']:>14.0f}")
        print(f"DUMPI / our format: {got['s'] / base['s']:.2f}x time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
