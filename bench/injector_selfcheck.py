#!/usr/bin/env python3
"""Injector self-check: the ping-pong half round trip grows by ΔL (eager rule) or 3·ΔL
(handshake rendezvous, messages above the eager limit) when the latency injector adds ΔL.

For every repetition and every ΔL it runs latitude-calib's ping-pong under the injector and
takes the median half round trip per size (over --batches batches of --iters round trips);
the growth of a size at ΔL is the median over repetitions of (half RTT at ΔL − half RTT at
ΔL = 0 in the same repetition). Bound: |growth − k·ΔL| ≤ max(0.5 µs, 3 %·k·ΔL).

    flock -x /work/.quiet.lock nice -n -10 python3 bench/injector_selfcheck.py
    python3 bench/injector_selfcheck.py --reps 3 --deltas 1,5,20 --rendezvous-only

Timings need a quiet machine: other load on the cores of the two ranks shows up directly in
the table. Prints a Markdown table (docs/validation.md) and exits 1 if a bound is missed.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")

from latitude import inject  # noqa: E402

SIZES = [8, 64, 512, 4096, 32768, 262144, 1048576]
DELTAS_US = [1, 5, 20, 100, 500]


def halves(launch, lib, prog, opts, sizes, batches, iters) -> dict[int, float]:
    argv = launch.argv + [str(prog), "--what", "pingpong", "--sizes", ",".join(map(str, sizes)),
                          "--batches", str(batches), "--iters", str(iters)]
    res = inject.run_injected(launch, opts, lib, argv=argv, timeout=900)
    out = {}
    for line in res.stdout.splitlines():
        if line.startswith("pingpong,"):
            f = line.split(",")
            out[int(f[1])] = float(f[3])  # median over batches, µs
    return out


def measure(launch, sizes, deltas, reps, batches, iters, eager_limit):
    lib = launch.build(inject.INJECT_LIB)
    prog = launch.build(inject.CALIB_PROGRAM)
    growth = {(d, s): [] for d in deltas for s in sizes}
    base_all = {s: [] for s in sizes}
    for rep in range(reps):
        order = deltas if rep % 2 == 0 else list(reversed(deltas))
        base = halves(launch, lib, prog, inject.InjectOptions(eager_limit=eager_limit), sizes, batches, iters)
        for s in sizes:
            base_all[s].append(base[s])
        for d in order:
            # fewer round trips at large ΔL: they take longer
            it = max(10, min(iters, int(iters * 20 / max(d, 20))))
            h = halves(launch, lib, prog, inject.InjectOptions(delta_L=d * 1e3, eager_limit=eager_limit),
                       sizes, batches, it)
            for s in sizes:
                growth[(d, s)].append(h[s] - base[s])
        print(f"# repetition {rep + 1}/{reps} done", file=sys.stderr, flush=True)
    return {k: statistics.median(v) for k, v in growth.items()}, {s: statistics.median(v) for s, v in base_all.items()}


def table(title, growth, base, sizes, deltas, k) -> tuple[str, int]:
    lines = [f"**{title}** (expected growth {'' if k == 1 else f'{k}·'}ΔL; cell: measured growth, µs)", "",
             "| size | half RTT at ΔL = 0 (µs) | " + " | ".join(f"ΔL = {d} µs" for d in deltas) + " |",
             "|---:|---:|" + "---:|" * len(deltas)]
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
    lines.append(f"bound |growth − {k if k > 1 else ''}ΔL| ≤ max(0.5 µs, 3 %): "
                 + ("all within" if not misses else f"{misses} cells outside (✗)"))
    return "\n".join(lines), misses


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--launcher", default="mpirun -np 2", help="launch command without a program")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--deltas", default=",".join(map(str, DELTAS_US)), help="ΔL values, µs")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--batches", type=int, default=9)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--eager-limit", type=int, default=4040,
                    help="S for the rendezvous table (the machine's, from latitude calibrate)")
    ap.add_argument("--rendezvous-only", action="store_true")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    deltas = [float(x) for x in args.deltas.split(",")]
    launch = inject.Launch.resolve(args.launcher.split())
    print(f"# {args.launcher}, {args.reps} repetitions × {args.batches} batches; {inject.environment_note()}")
    misses = 0
    if not args.rendezvous_only:
        g, b = measure(launch, sizes, deltas, args.reps, args.batches, args.iters, None)
        text, m = table("Eager rule for every size (no eager limit)", g, b, sizes, deltas, 1)
        print(text + "\n")
        misses += m
    big = [s for s in sizes if s > args.eager_limit]
    if big:
        g, b = measure(launch, big, deltas, args.reps, args.batches, args.iters, args.eager_limit)
        text, m = table(f"Handshake rendezvous above S = {args.eager_limit} B", g, b, big, deltas, 3)
        print(text)
        misses += m
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
