#!/usr/bin/env python3
"""Injector self-check: the ping-pong half round trip grows by ΔL (eager rule) or 3·ΔL
(handshake rendezvous, messages above the eager limit) when the latency injector adds ΔL.

Each repetition is one run of latitude-calib's selfcheck ping-pong under the injector: per
size, --batches blocks; in each block every ΔL (0 and those of --deltas, the order reversed
every other block) gets --iters round trips, each timed on its own; a block's half round
trip at ΔL is its fastest one (--stat min). ΔL is switched inside the run (MPI_Pcontrol, see
tracer/ij_core.c). The growth of a size at ΔL is the median, over the blocks of all
repetitions, of the paired difference (block at ΔL − block at ΔL = 0, same block). Bound:
|growth − k·ΔL| ≤ max(0.5 µs, 3 %·k·ΔL), k = 1 (eager) or 3 (rendezvous).

Why this estimator (the previous one, one process per ΔL and the median of 9 batch means,
missed cells by noise; evidence in docs/injector.md):
* a 256 KiB or 1 MiB half round trip differs between processes by more than the bound
  (memory placement of the buffers), so ΔL = 0 and ΔL = x are compared within one process,
  in adjacent blocks;
* a rank preempted by another process loses whole time slices (ms): a batch mean takes them
  all in, more of them the longer the batch (larger ΔL), and with a 3 ms round trip (the
  rendezvous at ΔL = 500 µs) most round trips of a block contain one, so even the median is
  off; preemption only adds time, so the fastest round trip of a block is the estimate;
* receives are posted before their message is sent (--receives preposted): in the blocking
  MPI_Send/MPI_Recv ping-pong, MPI's own rendezvous (above its eager limit, 4 KiB in Open
  MPI's shared memory) holds the sender until the receiver took the data, so at ΔL = 0 the
  next receive is posted late, which a hold of ΔL hides: the growth of 256 KiB and 1 MiB
  fell short of ΔL by 1–5 µs (and of 3·ΔL by up to 17 µs), a property of MPI's protocol
  (the model's max(R, a) does the same with a late R), not of the injector.

    flock -x /work/.quiet.lock python3 bench/injector_selfcheck.py
    python3 bench/injector_selfcheck.py --reps 3 --deltas 1,5,20 --rendezvous-only

Timings need a quiet machine: other load on the cores of the two ranks shows up directly in
the table. Prints a Markdown table (docs/injector.md) and exits 1 if a bound is missed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")

from latitude import inject  # noqa: E402

SIZES = [8, 64, 512, 4096, 32768, 262144, 1048576]
DELTAS_US = [1, 5, 20, 100, 500]


def blocks(launch, lib, prog, opts, sizes, deltas, batches, iters, preposted) -> list[tuple]:
    """One run: rows (size, ΔL µs, block, median half RTT µs, min, mean)."""
    argv = launch.argv + [
        str(prog),
        "--what",
        "selfcheck",
        "--sizes",
        ",".join(map(str, sizes)),
        "--deltas",
        ",".join(f"{d:g}" for d in [0.0, *deltas]),
        "--batches",
        str(batches),
        "--iters",
        str(iters),
        "--preposted",
        str(int(preposted)),
    ]
    res = inject.run_injected(launch, opts, lib, argv=argv, timeout=900)
    rows = []
    for line in res.stdout.splitlines():
        if line.startswith("selfcheck,"):
            f = line.split(",")
            rows.append((int(f[1]), float(f[2]), int(f[3]), float(f[4]), float(f[5]), float(f[6])))
    if not rows:
        raise SystemExit(f"no selfcheck lines from {' '.join(argv)}:\n{res.stdout}\n{res.stderr}")
    return rows


def measure(launch, sizes, deltas, reps, batches, iters, eager_limit, preposted, stat="min", raw=None):
    """growth[(ΔL, size)] = median paired difference; base[size]; spread[(ΔL, size)] =
    half the interquartile range of the paired differences (their noise, for the notes)."""
    lib = launch.build(inject.INJECT_LIB)
    prog = launch.build(inject.CALIB_PROGRAM)
    pairs = {(d, s): [] for d in deltas for s in sizes}
    base = {s: [] for s in sizes}
    for rep in range(reps):
        t0 = time.monotonic()
        rows = blocks(
            launch, lib, prog, inject.InjectOptions(eager_limit=eager_limit), sizes, deltas, batches, iters, preposted
        )
        if raw is not None:
            raw.extend((eager_limit or 0, int(preposted), rep, *r) for r in rows)
        med = {(s, d, b): (lo if stat == "min" else m) for s, d, b, m, lo, _ in rows}
        for (s, d, b), m in med.items():
            if d == 0:
                base[s].append(m)
            else:
                pairs[(d, s)].append(m - med[(s, 0.0, b)])
        print(f"# repetition {rep + 1}/{reps} done ({time.monotonic() - t0:.0f} s)", file=sys.stderr, flush=True)
    growth = {k: statistics.median(v) for k, v in pairs.items()}
    spread = {}
    for k, v in pairs.items():
        q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0]] * 3
        spread[k] = (q[2] - q[0]) / 2
    return growth, {s: statistics.median(v) for s, v in base.items()}, spread


def table(title, growth, base, sizes, deltas, k) -> tuple[str, int]:
    lines = [
        f"**{title}** (expected growth {'' if k == 1 else f'{k}·'}ΔL; cell: measured growth, µs)",
        "",
        "| size | half RTT at ΔL = 0 (µs) | " + " | ".join(f"ΔL = {d:g} µs" for d in deltas) + " |",
        "|---:|---:|" + "---:|" * len(deltas),
    ]
    misses = 0
    for s in sizes:
        cells = []
        for d in deltas:
            g = growth[(d, s)]
            bound = max(0.5, 0.03 * k * d)
            ok = abs(g - k * d) <= bound
            misses += not ok
            cells.append(f"{g:.2f}" + ("" if ok else " ✗"))
        lines.append(f"| {s:,} B | {base[s]:.2f} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        f"bound |growth − {k if k > 1 else ''}ΔL| ≤ max(0.5 µs, 3 %): "
        + ("all within" if not misses else f"{misses} cells outside (✗)")
    )
    return "\n".join(lines), misses


def noise_note(spread, sizes, deltas) -> str:
    worst = max(sizes, key=lambda s: max(spread[(d, s)] for d in deltas))
    return (
        "noise of one block's paired difference (half interquartile range): "
        + ", ".join(f"{s:,} B {max(spread[(d, s)] for d in deltas):.2f} µs" for s in sizes)
        + f" (largest: {worst:,} B)"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--launcher", default="mpirun -np 2", help="launch command without a program")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--deltas", default=",".join(map(str, DELTAS_US)), help="ΔL values, µs")
    ap.add_argument("--reps", type=int, default=3, help="runs (processes) per table")
    ap.add_argument("--batches", type=int, default=25, help="blocks per size and run")
    ap.add_argument("--iters", type=int, default=20, help="timed round trips per block and ΔL")
    ap.add_argument(
        "--eager-limit",
        type=int,
        default=4040,
        help="S for the rendezvous table (the machine's, from latitude calibrate)",
    )
    ap.add_argument(
        "--receives",
        choices=["preposted", "blocking"],
        default="preposted",
        help="ping-pong with receives posted before the message is sent, or MPI_Send/MPI_Recv (see above)",
    )
    ap.add_argument(
        "--stat",
        choices=["min", "median"],
        default="min",
        help="a block's half round trip: its fastest round trip or the median",
    )
    ap.add_argument("--raw", help="write every block (CSV) to this file")
    ap.add_argument("--rendezvous-only", action="store_true")
    ap.add_argument("--eager-only", action="store_true")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    deltas = [float(x) for x in args.deltas.split(",")]
    launch = inject.Launch.resolve(args.launcher.split())
    print(
        f"# {args.launcher}, {args.reps} runs × {args.batches} blocks × {args.iters} round trips "
        f"per ΔL, {args.receives} receives, block statistic {args.stat}; {inject.environment_note()}"
    )
    misses = 0
    raw = [] if args.raw else None
    if not args.rendezvous_only:
        g, b, sp = measure(
            launch,
            sizes,
            deltas,
            args.reps,
            args.batches,
            args.iters,
            None,
            args.receives == "preposted",
            args.stat,
            raw,
        )
        text, m = table("Eager rule for every size (no eager limit)", g, b, sizes, deltas, 1)
        print(text + "\n\n" + noise_note(sp, sizes, deltas) + "\n", flush=True)
        misses += m
    big = [s for s in sizes if s > args.eager_limit]
    if big and not args.eager_only:
        g, b, sp = measure(
            launch,
            big,
            deltas,
            args.reps,
            args.batches,
            args.iters,
            args.eager_limit,
            args.receives == "preposted",
            args.stat,
            raw,
        )
        text, m = table(f"Handshake rendezvous above S = {args.eager_limit} B", g, b, big, deltas, 3)
        print(text + "\n\n" + noise_note(sp, big, deltas), flush=True)
        misses += m
    print(f"# {inject.environment_note()}")
    if args.raw:
        with open(args.raw, "w") as f:
            f.write("eager_limit,preposted,run,bytes,delta_us,block,median_us,min_us,mean_us\n")
            f.writelines(",".join(map(str, r)) + "\n" for r in raw)
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
