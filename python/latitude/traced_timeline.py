"""Chrome trace-event / Perfetto timeline of the *traced* run (`latitude schedule TRACE
--timeline traced.json`): what the application did, with its measured times, to open next
to a simulated one (`latitude simulate --timeline`, same layout and units).

* one process per rank ("rank r", thread "MPI"): a complete event (`ph: "X"`) per MPI call
  from its measured start to its end, and one per computation between calls;
* flow events (`ph: "s"`/`"f"`) for the messages the schedule pairs: from the call that sent
  to the call that received (point-to-point as traced; inside a collective, the messages of
  the algorithm the schedule chose, category `collective`).

Each rank's times are ns after its own return from MPI_Init, the origin the graph gives
every rank (clocks of different nodes are not aligned), scaled by `--timemult` as the
schedule scales computation. The call times come from the core (`_core.trace_times`); the
pairing from the scheduled graph with each vertex's trace line.
"""

from __future__ import annotations

import json
import os
import tempfile

import numpy as np

from latitude import _core
from latitude.errors import InputError
from latitude.units import fmt_size

NONE = 2**32 - 1


def _us(ns: float) -> float:
    return round(ns / 1000.0, 6)


def write(out: str, trace_dir: str, core_graph, timemult: float, source: str, max_events: int = 2_000_000) -> dict:
    """Write the timeline of the trace files in `trace_dir` (scheduled as `core_graph`, with
    lines); returns {"path", "events", "calls", "messages"}."""
    ranks = _core.trace_times(trace_dir, timemult)
    arrays = core_graph.arrays(edges=False)
    calls = sum(len(r["name"]) for r in ranks)
    sends = np.nonzero((arrays["kind"] == 1) & (arrays["partner"] != NONE))[0].tolist()
    if 2 * calls + 2 * len(sends) > max_events:
        raise InputError(
            "--timeline",
            f"the traced run has {calls:,} calls and {len(sends):,} messages, more than {max_events:,} trace events",
        )
    events = _metadata(len(ranks))
    for r, rank in enumerate(ranks):
        events += _calls(r, rank)
    events += _messages(ranks, arrays, sends)
    doc = {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {"generator": "latitude schedule --timeline", "trace": source, "times": "measured"},
    }
    _write_atomically(out, doc)
    return {"path": out, "events": len(events), "calls": calls, "messages": len(sends)}


def _metadata(n: int) -> list[dict]:
    out = []
    for r in range(n):
        out.append({"ph": "M", "name": "process_name", "pid": r, "tid": 0, "args": {"name": f"rank {r}"}})
        out.append({"ph": "M", "name": "process_sort_index", "pid": r, "tid": 0, "args": {"sort_index": r}})
        out.append({"ph": "M", "name": "thread_name", "pid": r, "tid": 0, "args": {"name": "MPI"}})
    return out


def _calls(r: int, rank: dict) -> list[dict]:
    names = rank["names"]
    out, prev_end = [], None
    for name, a, b, line in zip(
        rank["name"].tolist(), rank["start_ns"].tolist(), rank["end_ns"].tolist(), rank["line"].tolist()
    ):
        if prev_end is not None and a > prev_end:
            out.append(
                {
                    "name": "compute",
                    "cat": "calc",
                    "ph": "X",
                    "ts": _us(prev_end),
                    "dur": _us(a - prev_end),
                    "pid": r,
                    "tid": 0,
                }
            )
        out.append(
            {
                "name": names[name],
                "cat": "mpi",
                "ph": "X",
                "ts": _us(a),
                "dur": _us(b - a),
                "pid": r,
                "tid": 0,
                "args": {"line": line},
            }
        )
        prev_end = b
    return out


def _messages(ranks: list[dict], arrays: dict, sends: list[int]) -> list[dict]:
    """A flow per message, from the sending call to the receiving one."""
    at = [{line: i for i, line in enumerate(rank["line"].tolist())} for rank in ranks]
    kind_rank, line, val, partner = arrays["rank"], arrays["line"], arrays["val"], arrays["partner"]
    out = []
    for n, v in enumerate(sends):
        w = int(partner[v])
        sr, dr = int(kind_rank[v]), int(kind_rank[w])
        i, j = at[sr].get(int(line[v])), at[dr].get(int(line[w]))
        if i is None or j is None:
            continue
        s_name = ranks[sr]["names"][ranks[sr]["name"][i]]
        p2p = "send" in s_name.lower() or s_name.startswith("MPI_Start")  # Send, Isend, Sendrecv, persistent
        cat = "msg" if p2p else "collective"
        name = f"message {fmt_size(int(val[v]))}"
        ts_s, ts_f = ranks[sr]["start_ns"][i], ranks[dr]["end_ns"][j]
        out.append({"name": name, "cat": cat, "ph": "s", "id": n, "ts": _us(ts_s), "pid": sr, "tid": 0})
        out.append({"name": name, "cat": cat, "ph": "f", "bp": "e", "id": n, "ts": _us(ts_f), "pid": dr, "tid": 0})
    return out


def _write_atomically(path: str, doc: dict) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".latitude-timeline-", suffix=".json")
    except OSError as err:
        raise InputError(path, f"cannot write the timeline: {err.strerror}") from None
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, separators=(",", ":"), allow_nan=False)
        os.replace(tmp, path)
    except OSError as err:
        os.unlink(tmp)
        raise InputError(path, f"cannot write the timeline: {err.strerror}") from None
