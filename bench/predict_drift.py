#!/usr/bin/env python3
"""Where a prediction parts from its own traced run: the traced run cut into windows of one
rank's time, each with the predicted time of the same calls (ΔL = 0, the engine's schedule of
the trace), the drift (predicted − traced start of the window's last call) and what it grew by
in the window, the rank's time inside MPI there (and inside calls of 1 ms or more: a point-to-point call on
shared memory that long is a rank preempted, not a message) and the calls it made most.

A phase the model prices right keeps the drift flat; a phase it prices too cheap (or whose
traced run was disturbed) makes it fall. Used to explain HPCC's gap phase by phase
(docs/tracing.md, "Real applications: where the prediction misses").

With --delta-L US each window also gets its predicted duration at L and at L + ΔL (the same
calls, first to last): what the model says the window grows by, to set beside a run injected
at ΔL (HPCC's own section times, bench/inject_gap.py --hpcc; docs/injector.md).

With --by-call the drift is split by step instead of by window: between each two consecutive
calls that have ops in the graph (calls issuing nothing, such as MPI_PROC_NULL peers, lie
inside a step; their time is computation), the predicted minus the traced time from one's
start to the next's, summed and as a median per (first call → next call) pair. A loop the
model prices too cheap shows the step that loses the time every iteration; the median keeps
a few disturbed iterations out of it. A receive's predicted start is when its message is
matched, so the steps before and after a receive move time between them: read them as a pair.

    python3 bench/predict_drift.py TRACE_DIR --machine machine.toml [--window-ms 50] [--rank 0]
                                   [--delta-L US] [--by-call] [--json out.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
from latitude import _core  # noqa: E402
from latitude.params import Params  # noqa: E402

LONG_NS = 1e6  # a call this long (or longer) in a small run on shared memory: preemption


def predicted_starts(trace: Path, params: Params, rank: int) -> dict[int, float]:
    """Predicted start (ns) of every call of `rank`, by its trace line (design simulation at
    the parameter point: the engine's semantics, with each op's times recorded)."""
    g, _ = _core.Graph.from_trace(str(trace), lines=True)
    tl = g.simulate(params.to_core(), record=True)["timeline"]
    a = g.arrays(edges=False)
    v = tl["s_vertex"]
    mine = (a["rank"][v] == rank) & (a["kind"][v] != 0)  # a call's computation before it carries its line too
    lines, t0 = a["line"][v][mine], tl["s_t0_ns"][mine]
    order = np.lexsort((t0, lines))
    lines, t0 = lines[order], t0[order]
    first = np.concatenate(([True], lines[1:] != lines[:-1]))  # earliest op of each call
    return dict(zip(lines[first].tolist(), t0[first].tolist()))


def span(pred: dict[int, float], lines: list[int]) -> float | None:
    """Predicted time (ns) from the first to the last of `lines` that has a predicted start."""
    t = [pred[x] for x in lines if x in pred]
    return t[-1] - t[0] if t else None


def windows(trace: Path, params: Params, rank: int, width_ns: float, delta_ns: float = 0.0) -> list[dict]:
    calls = _core.trace_times(str(trace))[rank]  # every rank, by rank; compressed or plain files
    pred = predicted_starts(trace, params, rank)
    pred_dl = predicted_starts(trace, params.replace(L=params.L + delta_ns), rank) if delta_ns else {}
    in_window: list[int] = []
    names, name, t0, t1, line = calls["names"], calls["name"], calls["start_ns"], calls["end_ns"], calls["line"]
    rows, cnt, start, drift, last = [], collections.Counter(), float(t0[0]), 0.0, 0.0
    mpi = long = 0.0
    for i in range(len(name)):
        if int(line[i]) in pred:
            drift = pred[int(line[i])] - float(t0[i])
        in_window.append(int(line[i]))
        if t0[i] - start > width_ns or i == len(name) - 1:
            row = {
                "traced_from_ms": start / 1e6,
                "traced_to_ms": float(t0[i]) / 1e6,
                "drift_ms": drift / 1e6,
                "drift_growth_ms": (drift - last) / 1e6,
                "in_mpi_ms": mpi / 1e6,
                "in_long_calls_ms": long / 1e6,
                "calls": dict(cnt.most_common(4)),
            }
            if delta_ns:
                a, b = span(pred, in_window), span(pred_dl, in_window)
                row["pred_ms"] = a / 1e6 if a is not None else None
                row["pred_dl_ms"] = b / 1e6 if b is not None else None
            rows.append(row)
            last, cnt, mpi, long, start = drift, collections.Counter(), 0.0, 0.0, float(t0[i])
            in_window = [int(line[i])]
        cnt[names[name[i]]] += 1
        d = float(t1[i] - t0[i])
        mpi += d
        long += d if d >= LONG_NS else 0.0
    return rows


def by_call(trace: Path, params: Params, rank: int) -> list[dict]:
    """Predicted − traced time per step between consecutive calls with ops, by call pair."""
    calls = _core.trace_times(str(trace))[rank]
    pred = predicted_starts(trace, params, rank)
    names, name, t0, line = calls["names"], calls["name"], calls["start_ns"], calls["line"]
    steps = [i for i in range(len(name)) if int(line[i]) in pred]
    drift: dict[str, list[float]] = collections.defaultdict(list)
    for i, j in zip(steps, steps[1:]):
        key = f"{names[name[i]]} → {names[name[j]]}"
        drift[key].append((pred[int(line[j])] - pred[int(line[i])]) - float(t0[j] - t0[i]))
    rows = [
        {"step": k, "count": len(v), "drift_ms": sum(v) / 1e6, "median_ns": float(np.median(v))}
        for k, v in drift.items()
    ]
    return sorted(rows, key=lambda r: r["drift_ms"])


def print_by_call(rows: list[dict], rank: int) -> None:
    print(f"{'drift (ms)':>10} {'median (ns)':>11} {'steps':>7}  step (rank {rank}; predicted − traced)")
    for r in rows:
        print(f"{r['drift_ms']:+10.3f} {r['median_ns']:+11.0f} {r['count']:7d}  {r['step']}")
    print(f"{sum(r['drift_ms'] for r in rows):+10.3f} {'':>11} {sum(r['count'] for r in rows):7d}  all")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", type=Path, help="trace directory (pmpi-trace-rank-N.txt[.gz])")
    ap.add_argument("--machine", required=True, help="machine file (latitude calibrate)")
    ap.add_argument("--window-ms", type=float, default=50.0)
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument(
        "--delta-L", type=float, default=0.0, metavar="US", help="also each window's predicted duration at L + ΔL"
    )
    ap.add_argument("--by-call", action="store_true", help="the drift per step between calls instead of per window")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    a = ap.parse_args()
    if a.by_call:
        rows = by_call(a.trace, Params.from_machine(a.machine), a.rank)
        print_by_call(rows, a.rank)
        if a.json:
            Path(a.json).write_text(json.dumps(rows, indent=1))
        return 0
    rows = windows(a.trace, Params.from_machine(a.machine), a.rank, a.window_ms * 1e6, a.delta_L * 1e3)
    extra = f" {'pred':>8} {'at ΔL':>8}" if a.delta_L else ""
    print(f"{'traced (ms)':>19} {'drift':>9} {'growth':>8} {'in MPI':>8} {'>=1ms':>7}{extra}  calls (rank {a.rank})")
    for r in rows:
        calls = ", ".join(f"{k.removeprefix('MPI_')} {v}" for k, v in r["calls"].items())
        cells = ""
        if a.delta_L:
            cells = "".join(f" {r[k]:8.2f}" if r[k] is not None else f" {'-':>8}" for k in ("pred_ms", "pred_dl_ms"))
        print(
            f"{r['traced_from_ms']:8.1f}..{r['traced_to_ms']:8.1f} {r['drift_ms']:9.1f} "
            f"{r['drift_growth_ms']:+8.1f} {r['in_mpi_ms']:8.1f} {r['in_long_calls_ms']:7.1f}{cells}  {calls}"
        )
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
