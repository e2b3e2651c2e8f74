#!/usr/bin/env python3
"""How much CPU time other work takes from busy ranks: one spinning process per core, each
reading the clock in a tight loop; a gap of more than --gap-us between two reads is time the
process did not run (another process on its core, or the host of a VM descheduling the
virtual CPU).

Two-rank timing runs keep both cores busy for their whole length (MPI ranks spin while they
wait), and time a rank loses inside an MPI call is time no model of the program can see (the
trace carries what it loses while computing). So a timing study should know how quiet the
machine was: bench/validation.py runs this probe before and after each program. On the
development VM (2026-11-29), idle: 0.0-0.9 % lost with every core busy; while another
engineer's tests ran beside it (outside the quiet lock): 12-39 %, in gaps of 4-12 ms.

    flock -x /work/.quiet.lock python3 bench/cpu_stall.py [--seconds 3] [--gap-us 500] [--window-ms 250]

Prints one line per configuration (one core busy, every core busy) and core: gaps, time
lost and its share, and the share lost in each window of --window-ms; --json writes the same.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import time


def spin(cpu: int, seconds: float, gap_ns: int, out) -> None:
    """Spin on `cpu` for `seconds`; send back (start offset, length) of every gap, in ns."""
    os.sched_setaffinity(0, {cpu})
    clock = time.perf_counter_ns
    t0 = last = clock()
    end = t0 + int(seconds * 1e9)
    gaps = []
    while last < end:
        t = clock()
        if t - last > gap_ns:
            gaps.append((last - t0, t - last))
        last = t
    out.send(gaps)


def probe(cpus: list[int], seconds: float, gap_ns: int) -> dict[int, list]:
    """Gaps per CPU with one spinning process on each of `cpus`, all at once."""
    pipes, procs = [], []
    for cpu in cpus:
        recv, send = mp.Pipe(duplex=False)
        p = mp.Process(target=spin, args=(cpu, seconds, gap_ns, send))
        p.start()
        pipes.append(recv)
        procs.append(p)
    found = {cpu: pipe.recv() for cpu, pipe in zip(cpus, pipes)}
    for p in procs:
        p.join()
    return found


def summary(gaps: list, seconds: float, window_ms: float) -> dict:
    lost = sum(g for _, g in gaps)
    width = window_ms * 1e6
    windows = [0.0] * max(1, int(seconds * 1e9 // width))
    for start, g in gaps:
        i = min(int(start // width), len(windows) - 1)
        windows[i] += g
    return {
        "gaps": len(gaps),
        "lost_ms": lost / 1e6,
        "lost_share": lost / (seconds * 1e9),
        "longest_ms": max((g for _, g in gaps), default=0) / 1e6,
        "window_shares": [w / width for w in windows],
    }


def lost_share(seconds: float = 2.0, gap_us: float = 500.0) -> float:
    """The largest share of time any core lost with every core busy (the probe's headline)."""
    found = probe(sorted(os.sched_getaffinity(0)), seconds, int(gap_us * 1e3))
    return max(summary(g, seconds, 1000.0)["lost_share"] for g in found.values())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--gap-us", type=float, default=500.0, help="a clock gap longer than this is lost time")
    ap.add_argument("--window-ms", type=float, default=250.0)
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    rows = []
    for label, busy in (("one core busy", cpus[:1]), ("every core busy", cpus)):
        for cpu, gaps in probe(busy, a.seconds, int(a.gap_us * 1e3)).items():
            s = summary(gaps, a.seconds, a.window_ms)
            rows.append({"config": label, "cpu": cpu, **s})
            shares = " ".join(f"{100 * w:.0f}" for w in s["window_shares"])
            print(
                f"{label:>15}, cpu {cpu}: {s['gaps']} gaps, lost {s['lost_ms']:.1f} ms of "
                f"{a.seconds * 1e3:.0f} ({100 * s['lost_share']:.1f} %), longest {s['longest_ms']:.1f} ms; "
                f"% lost per {a.window_ms:.0f} ms: {shares}"
            )
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
