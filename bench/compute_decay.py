#!/usr/bin/env python3
"""Does a rank's computation take longer after a longer wait? The part of an injected run's
growth that a model with fixed computation times cannot predict.

The model prices each computation block at its traced duration. With ΔL added, ranks wait
longer between blocks; if the machine lets other work take over the caches meanwhile (a
virtual machine shares its host's caches with other guests), the blocks themselves grow, and
the whole program's slope exceeds what its messages add. Two measurements:

1. **apps/decay** (no communication): per working set, the median stencil sweep after a spin
   of 0 … 3000 µs, gaps interleaved in one run on 2 ranks (a change of the machine's state
   falls on every gap alike).
2. **halo2d and CG** (docs/validation.md's programs, fewer iterations): injected runs at ΔL = 0
   and ΔL = --delta-L, alternating (--reps each), every rank reporting its time outside MPI
   calls (--report-compute); the runtime's growth against the model's (the program's trace
   priced by a machine calibrated under the injector), and how much of the difference the
   growth of the computation accounts for (the larger rank's, medians over the runs).

    flock -x /work/.quiet.lock python3 bench/compute_decay.py [--delta-L 200] [--reps 3]
        [--machine m.toml] [--json out.json]

Prints Markdown tables (stdout) and writes --json.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from inject_gap import MPIRUN, ROOT, calibrate, latitude, predict

# working sets per rank: L2-resident, CG's (4 arrays of 256 × 514), halo2d's (2 of 512 × 1026),
# and one no cache holds
WORKING_SETS_KIB = [512, 4096, 8192, 65536]
GAPS_US = [0, 50, 200, 1000, 3000]
PROGRAMS = {
    "halo2d": ["halo2d", "--nx", "1024", "--ny", "1024", "--iters", "500", "--allreduce-every", "1"],
    "cg": ["cg", "--n", "512", "--iters", "500"],
}


def run(cmd: list[str]) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-3000:]}")
    return p


def decay(bin_dir: Path, kib: int) -> list[dict]:
    gaps = ",".join(str(g) for g in GAPS_US)
    out = run([*MPIRUN, str(bin_dir / "decay"), "--kib", str(kib), "--gaps-us", gaps]).stdout
    rows = []
    for m in re.finditer(r"decay kib=(\d+) gap_us=(\S+) sweep_us=(\S+) ratio=(\S+)", out):
        rows.append({"kib": int(m[1]), "gap_us": float(m[2]), "sweep_us": float(m[3]), "ratio": float(m[4])})
    if len(rows) != len(GAPS_US):
        raise SystemExit(f"apps/decay --kib {kib}: expected {len(GAPS_US)} lines, got\n{out}")
    return rows


def injected(prog: list[str], machine: Path, delta_us: float) -> dict:
    """One injected run: its runtime, the larger rank's time outside MPI (the program's own
    timing) and outside the injector's waiting loops (its busy time, what validate uses)."""
    p = run([
        sys.executable, "-m", "latitude", "inject", "--delta-L", f"{delta_us}us", "--machine", str(machine),
        "--json", "--", *MPIRUN, *prog, "--report-compute",
    ])  # fmt: skip
    compute = [float(x) for x in re.findall(r"compute_s rank=\d+ (\S+)", p.stderr)]
    if not compute:
        raise SystemExit(f"{' '.join(prog)}: no compute_s lines\n{p.stderr[-2000:]}")
    s = json.loads(p.stdout)
    return {
        "runtime_ms": s["runtime_ns"] / 1e6,
        "compute_ms": 1e3 * max(compute),
        "busy_ms": max(s["rank_busy_ns"]) / 1e6,
    }


def program(name: str, prog: list[str], machine: Path, a, tmp: Path) -> dict:
    trace = tmp / f"trace-{name}"
    latitude("trace", "-o", str(trace), "--", *MPIRUN, *prog)
    p0, pd = predict(trace, machine), predict(trace, machine, a.delta_L * 1e3)
    runs: dict[float, list[dict]] = {0.0: [], a.delta_L: []}
    for _ in range(a.reps):
        for d in runs:
            runs[d].append(injected(prog, machine, d))

    def med(d: float, key: str) -> float:
        return statistics.median(r[key] for r in runs[d])

    growth = med(a.delta_L, "runtime_ms") - med(0.0, "runtime_ms")
    model = (pd["runtime_ns"] - p0["runtime_ns"]) / 1e6
    compute = med(a.delta_L, "compute_ms") - med(0.0, "compute_ms")
    busy = med(a.delta_L, "busy_ms") - med(0.0, "busy_ms")
    return {
        "program": name,
        "args": prog[1:],
        "runs": {str(d): r for d, r in runs.items()},
        "growth_ms": growth,
        "model_growth_ms": model,
        "excess_ms": growth - model,
        "compute0_ms": med(0.0, "compute_ms"),
        "compute_growth_ms": compute,
        "busy_growth_ms": busy,
        "left_ms": growth - model - compute,
    }


def decay_table(rows: list[dict]) -> str:
    head = "| working set per rank | " + " | ".join(f"after {g:g} µs" for g in GAPS_US) + " |"
    lines = [head, "|---:|" + "---:|" * len(GAPS_US)]
    for kib in WORKING_SETS_KIB:
        cells = [r for r in rows if r["kib"] == kib]
        lines.append(
            f"| {kib:,} KiB | " + " | ".join(f"{r['sweep_us']:.1f} µs ({r['ratio']:.2f}×)" for r in cells) + " |"
        )
    return "\n".join(lines)


def program_table(rows: list[dict], dl: float) -> str:
    lines = [
        f"| program | runtime growth, ΔL = 0 → {dl:g} µs (ms) | the model's (ms) | excess (ms) "
        "| computation at ΔL = 0 (ms) | its growth (ms) | excess left (ms) | busy time's growth (ms) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['program']} | {r['growth_ms']:.1f} | {r['model_growth_ms']:.1f} | {r['excess_ms']:+.1f} "
            f"({100 * r['excess_ms'] / r['model_growth_ms']:+.1f} %) | {r['compute0_ms']:.1f} "
            f"| {r['compute_growth_ms']:+.1f} | {r['left_ms']:+.1f} ({100 * r['left_ms'] / r['model_growth_ms']:+.1f} %) "
            f"| {r['busy_growth_ms']:+.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--delta-L", type=float, default=200.0, help="ΔL of the injected runs, µs")
    ap.add_argument("--reps", type=int, default=3, help="injected runs per ΔL and program")
    ap.add_argument("--machine", type=Path, help="machine file (default: calibrated under the injector)")
    ap.add_argument("--programs", default=",".join(PROGRAMS))
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="compute-decay-") as t:
        tmp = Path(t)
        run(["make", "-s", "-C", str(ROOT / "apps"), f"BIN={tmp}"])
        rows = [r for kib in WORKING_SETS_KIB for r in decay(tmp, kib)]
        print("Median stencil sweep after a spin (2 ranks, no communication; ratio to no spin)\n")
        print(decay_table(rows) + "\n")
        machine = a.machine or calibrate(tmp / "machine.toml", "--under-injector")
        progs = []
        for name in [p for p in a.programs.split(",") if p]:
            prog = [str(tmp / PROGRAMS[name][0]), *PROGRAMS[name][1:]]
            progs.append(program(name, prog, machine, a, tmp))
        print(f"Injected runs (medians of {a.reps}) against the model, and the computation's growth\n")
        print(program_table(progs, a.delta_L))
    if a.json:
        a.json.write_text(json.dumps({"delta_L_us": a.delta_L, "decay": rows, "programs": progs}, indent=1) + "\n")


if __name__ == "__main__":
    main()
