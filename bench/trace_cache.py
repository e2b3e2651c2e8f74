"""What the trace-graph cache (latitude.trace_cache) saves: `latitude predict TRACE --json`
on a synthetic halo-exchange trace (bench/schedule_throughput.py's), each in a fresh process:

- no cache (`--no-cache`): schedules the trace, the baseline measured in the same run;
- cold: schedules and writes the cache entry (the baseline plus the .lgraph write);
- warm: maps the cached graph (no scheduling, no traced-run analysis).

Prints wall times (median of the repeats), warm/no-cache ratio, the entry's size, and checks
that the three outputs are identical. The cache lives in a temporary XDG_CACHE_HOME.

    PYTHONPATH=python python3 bench/trace_cache.py [--ranks 16] [--iters 20000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from schedule_throughput import ROOT, write_trace


def predict(trace: str, env: dict, *flags: str) -> tuple[float, str]:
    """Wall seconds and stdout of one `latitude predict TRACE --json FLAGS`."""
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "latitude", "predict", trace, "--json", *flags],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return time.perf_counter() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=16)
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="lat-trace-cache-") as tmp:
        trace = os.path.join(tmp, "trace")
        os.mkdir(trace)
        events = write_trace(trace, a.ranks, a.iters)
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), XDG_CACHE_HOME=os.path.join(tmp, "xdg"))
        env.pop("LATITUDE_CACHE_DIR", None)
        env.pop("LATITUDE_CACHE", None)
        cache = os.path.join(tmp, "xdg", "latitude", "graphs")
        times: dict[str, list[float]] = {"no cache": [], "cold": [], "warm": []}
        outputs = set()
        for _ in range(a.repeats):
            for case, flags in (("no cache", ["--no-cache"]), ("cold", []), ("warm", [])):
                if case == "cold":
                    shutil.rmtree(cache, ignore_errors=True)
                wall, out = predict(trace, env, *flags)
                times[case].append(wall)
                outputs.add(out)
        size = sum(e.stat().st_size for e in os.scandir(cache))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"trace: {a.ranks} ranks, {events:,} calls; {a.repeats} repeats, median wall of `latitude predict --json`")
    for case, t in med.items():
        print(f"  {case:9s} {t:8.3f} s   ×{t / med['no cache']:.3f} of no cache")
    print(f"  cache entry {size / 2**20:.1f} MiB; outputs identical: {'yes' if len(outputs) == 1 else 'NO'}")
    print(f"  load: {os.getloadavg()[0]:.2f} (1-min average)")


if __name__ == "__main__":
    main()
