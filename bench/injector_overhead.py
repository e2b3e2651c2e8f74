#!/usr/bin/env python3
"""What the latency injector costs at ΔL = 0: the validation study's applications (2 ranks,
same arguments as bench/validation.py) run plain, under the tracer, and under the injector
with ΔL = 0, interleaved (plain, traced, injected, plain, …) so slow drifts of the machine hit
all three alike. The runtime is the application's own timer (`elapsed_s`, or LAMMPS's "Loop
time"), the same in all three modes.

    flock -x /work/.quiet.lock python3 bench/injector_overhead.py [--apps cg,lammps] [--reps 5]

`latitude validate` predicts from a trace of the plain program and measures under the
injector; a difference between "plain" and "injected, ΔL = 0" here is an offset the model
cannot see (docs/validation.md, "What that study showed"). The injector runs with the eager
limit `latitude validate` calibrates on this machine (--eager-limit, default 4040 B: larger
messages follow the handshake rendezvous rule); --eager-limit 0 makes every message eager,
as this bench did before, which left the rendezvous rule (and alltoall's 2 MiB blocks'
holds at ΔL = 0, docs/injector.md) out of the comparison.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validation import APPS, APPS_DIR  # noqa: E402

TIMER = re.compile(r"^(?:elapsed_s (\S+)|Loop time of (\S+) on)", re.M)
MODES = ("plain", "traced", "injected")


def command(mode: str, prog: list, tmp: str, eager_limit: int) -> list:
    mpirun = ["mpirun", "-np", "2", *prog]
    if mode == "plain":
        return mpirun
    if mode == "traced":
        return [sys.executable, "-m", "latitude", "trace", "-o", tempfile.mkdtemp(dir=tmp), "--", *mpirun]
    limit = ["--eager-limit", str(eager_limit)] if eager_limit > 0 else []
    return [sys.executable, "-m", "latitude", "inject", "--delta-L", "0", *limit, "--", *mpirun]


def run_once(mode: str, prog: list, tmp: str, eager_limit: int) -> float:
    cmd = command(mode, prog, tmp, eager_limit)
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
    found = TIMER.findall(proc.stdout + "\n" + proc.stderr)  # apps print their timer on stderr
    if proc.returncode != 0 or not found:
        raise SystemExit(f"{' '.join(cmd)}: exit {proc.returncode}, no timer line\n{proc.stderr[-2000:]}")
    # Each rank may print one; the slowest rank's time is the run's.
    return max(float(a or b) for a, b in found)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--apps", default=",".join(APPS))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument(
        "--eager-limit", type=int, default=4040, help="injector's S in bytes (default 4040; 0: every message eager)"
    )
    ap.add_argument("--bin", default=APPS_DIR, help="directory of the built apps/ programs (default apps/)")
    a = ap.parse_args()
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    rows = []
    for name in a.apps.split(","):
        prog = [w.replace("{bin}", a.bin) for w in APPS[name][1]]
        times = {m: [] for m in MODES}
        with tempfile.TemporaryDirectory(prefix="latitude-ovh-") as tmp:
            for m in MODES:  # warm-up: builds the tracer / injector once, pages the binary in
                run_once(m, prog, tmp, a.eager_limit)
            for _ in range(a.reps):
                for m in MODES:
                    times[m].append(run_once(m, prog, tmp, a.eager_limit))
        rows.append((name, times))
        print(
            f"{name}: " + ", ".join(f"{m} {statistics.mean(t):.3f}s" for m, t in times.items()),
            file=sys.stderr,
            flush=True,
        )
    s = f"eager limit {a.eager_limit} B" if a.eager_limit > 0 else "every message eager"
    print(
        f"mpirun -np 2, {a.reps} interleaved runs per mode, injector's {s}; application's own timer (s), mean ± std\n"
    )
    print("| app | plain | traced | injected, ΔL = 0 | traced / plain | injected / plain |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, t in rows:
        mean = {m: statistics.mean(v) for m, v in t.items()}
        cell = [f"{mean[m]:.3f} ± {statistics.stdev(t[m]) if len(t[m]) > 1 else 0:.3f}" for m in MODES]
        print(
            f"| {name} | {' | '.join(cell)} | {100 * (mean['traced'] / mean['plain'] - 1):+.1f} % "
            f"| {100 * (mean['injected'] / mean['plain'] - 1):+.1f} % |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
