#!/usr/bin/env python3
"""Where alltoall's ΔL = 0 gap comes from (docs/validation.md, "alltoall at ΔL = 0").

    flock -x /work/.quiet.lock python3 bench/alltoall_gap.py [--traces 5] [-o DIR]

Steps: calibrate under the injector (3 runs, per-size medians, protocol classes) as
`latitude validate` does; trace apps/alltoall (1024², 50 iterations, 2 ranks) --traces times
and keep the fastest traced run (the least disturbed by other load); predict it and split
MPI_Alltoall's time per call into the model's part and the measured one (`latitude
decompose`); and time MPI_Alltoall of the same 2 MiB blocks against its two parts, an
MPI_Sendrecv of the peer's block and a memcpy of the rank's own block, with caches cold (a
16 MiB sweep before each call, as the application's transposes leave them). The schedule
copies the rank's own block before the messages (docs/collectives.md, "Local copies"), priced
b·C with C the calibrated per-byte cost of a local copy with cold caches (docs/model.md §1);
the prediction is also made with the copy priced b·O (the eager copy's per-byte cost, what
the model charged before C) and without the copy. Writes DIR/alltoall_gap.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
ENV = dict(
    os.environ,
    PYTHONPATH=os.path.join(ROOT, "python"),
    OMPI_ALLOW_RUN_AS_ROOT="1",
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
)
BLOCK = 262144  # doubles per destination: alltoall --n 1024 on 2 ranks
PARTS_C = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static void out(const char *what, double *t, int n, int rank) {
    qsort(t, n, sizeof *t, cmp);
    if (rank == 0) printf("%s %.1f %.1f\n", what, 1e6 * t[0], 1e6 * t[n / 2]);
}
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n = 200; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t blk = (size_t)atol(argv[1]), nscr = 2u << 20;
    double *s = malloc(2 * blk * 8), *r = malloc(2 * blk * 8), *scr = malloc(nscr * 8), t[200];
    memset(s, 1, 2 * blk * 8); memset(r, 0, 2 * blk * 8); memset(scr, 0, nscr * 8);
#define COLD() for (size_t q = 0; q < nscr; q += 8) scr[q] += 1; for (size_t q = 0; q < 2 * blk; q += 8) s[q] += 1
    for (int i = 0; i < n; i++) { COLD(); MPI_Barrier(MPI_COMM_WORLD); double t0 = MPI_Wtime();
        MPI_Alltoall(s, blk, MPI_DOUBLE, r, blk, MPI_DOUBLE, MPI_COMM_WORLD); t[i] = MPI_Wtime() - t0; }
    out("alltoall", t, n, rank);
    for (int i = 0; i < n; i++) { COLD(); MPI_Barrier(MPI_COMM_WORLD); double t0 = MPI_Wtime();
        MPI_Sendrecv(s + blk * (1 - rank), blk, MPI_DOUBLE, 1 - rank, 0, r + blk * (1 - rank), blk, MPI_DOUBLE,
                     1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); t[i] = MPI_Wtime() - t0; }
    out("sendrecv", t, n, rank);
    for (int i = 0; i < n; i++) { COLD(); MPI_Barrier(MPI_COMM_WORLD); double t0 = MPI_Wtime();
        memcpy(r + blk * rank, s + blk * rank, blk * 8); t[i] = MPI_Wtime() - t0; }
    out("memcpy", t, n, rank);
    MPI_Finalize();
    return 0;
}
"""


def latitude(*args) -> str:
    return subprocess.run(
        [sys.executable, "-m", "latitude", *map(str, args)], env=ENV, check=True, capture_output=True, text=True
    ).stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--traces", type=int, default=5, help="traced runs; the fastest is used (default 5)")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--mpicc", default="mpicc")
    ap.add_argument("-o", "--output", default="latitude-alltoall-gap")
    a = ap.parse_args()
    from latitude import load, tracer
    from latitude.params import Params

    os.makedirs(a.output, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="a2a-gap-")
    subprocess.run(
        ["make", "-s", "-C", os.path.join(ROOT, "apps"), f"BIN={tmp}", f"MPICC={a.mpicc}", f"{tmp}/alltoall"],
        check=True,
    )
    with open(os.path.join(tmp, "parts.c"), "w") as f:
        f.write(PARTS_C)
    subprocess.run([a.mpicc, "-O2", "-o", f"{tmp}/parts", f"{tmp}/parts.c"], check=True)
    machine = os.path.join(a.output, "machine.toml")
    # as validate does: L = 0 (with a note) rather than no calibration when L is not identified
    latitude(
        "calibrate", "--under-injector", "--repeat", "3", "--allow-zero-L", "-o", machine, "--", a.mpirun, "-np", "2"
    )
    params = Params.from_machine(machine)
    runs = []
    for i in range(a.traces):
        d = os.path.join(a.output, f"trace-{i + 1}")
        latitude("trace", "-o", d, "--", a.mpirun, "-np", "2", f"{tmp}/alltoall", "--n", "1024", "--iters", "50")
        runs.append((tracer.traced_runtime_ns(Path(d)), d))
    traced_ns, trace = min(runs)
    graph = load(trace)
    pred_O = graph.predict(params.replace(C=None)).runtime_ns  # the copy priced b·O, as before C
    dec = json.loads(latitude("decompose", trace, "--machine", machine, "--json"))
    call = next(c for c in dec["per_call"] if c["call"] == "MPI_Alltoall")
    per_rank_calls = call["count"] / 2
    model_us = (call["network_ns"] + call["stack_ns"] + call["sync_ns"]) / call["count"] / 1e3
    measured_us = call["measured_ns"] / call["count"] / 1e3
    per_byte = params.C if params.C is not None else params.O  # what prices the copy
    copy_us = (BLOCK * 8 - 1) * per_byte / 1e3
    copy_O_us = (BLOCK * 8 - 1) * params.O / 1e3
    parts = subprocess.run(
        [a.mpirun, "-np", "2", f"{tmp}/parts", str(BLOCK)], env=ENV, check=True, capture_output=True, text=True
    ).stdout.split("\n")
    micro = {w[0]: {"min_us": float(w[1]), "median_us": float(w[2])} for w in (ln.split() for ln in parts) if w}
    pred = dec["runtime_ns"]
    out = {
        "machine": params.to_dict(),
        "traced_runs_ms": sorted(t / 1e6 for t, _ in runs),
        "traced_ms": traced_ns / 1e6,
        "predicted_ms": pred / 1e6,
        "error_pct": 100 * (pred / traced_ns - 1),
        "alltoall_calls_per_rank": per_rank_calls,
        "alltoall_model_us_per_call": model_us,
        "alltoall_measured_us_per_call": measured_us,
        "alltoall_stack_us_per_call": call["stack_ns"] / call["count"] / 1e3,
        "copy_priced_by": "C" if params.C is not None else "O",
        "own_block_copy_us": copy_us,
        "own_block_copy_bO_us": copy_O_us,
        "micro_cold": micro,
        "predicted_with_O_ms": pred_O / 1e6,
        "error_with_O_pct": 100 * (pred_O / traced_ns - 1),
        # the copy is on every rank's path once per call (2 ranks, symmetric)
        "predicted_without_copy_ms": (pred - per_rank_calls * copy_us * 1e3) / 1e6,
    }
    out["error_without_copy_pct"] = 100 * (out["predicted_without_copy_ms"] * 1e6 / traced_ns - 1)
    with open(os.path.join(a.output, "alltoall_gap.json"), "w") as f:
        json.dump(out, f, indent=1)
    print(f"traced runs (ms): {', '.join(f'{t:.1f}' for t in out['traced_runs_ms'])}; the fastest is used")
    by = out["copy_priced_by"]
    print(
        f"prediction (copy priced b·{by}) {out['predicted_ms']:.1f} ms against {out['traced_ms']:.1f} ms traced: "
        f"{out['error_pct']:+.2f} %; with the copy priced b·O: {out['predicted_with_O_ms']:.1f} ms "
        f"({out['error_with_O_pct']:+.2f} %)"
    )
    print(
        f"MPI_Alltoall per call: model {model_us:.0f} µs (network + stack + sync), measured {measured_us:.0f} µs, "
        f"gap {measured_us - model_us:.0f} µs × {per_rank_calls:.0f} calls per rank"
    )
    print(
        "cold 2 MiB blocks, min / median µs: "
        + ", ".join(f"{k} {v['min_us']:.0f} / {v['median_us']:.0f}" for k, v in micro.items())
    )
    print(
        f"the own block's copy, b·{by} = {copy_us:.0f} µs per call (b·O = {copy_O_us:.0f} µs; C = "
        f"{params.C} ns/B, O = {params.O:.4g} ns/B), is in the model's stack "
        f"({out['alltoall_stack_us_per_call']:.0f} µs per call); without it the prediction would be "
        f"{out['predicted_without_copy_ms']:.1f} ms ({out['error_without_copy_pct']:+.2f} %)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
