"""Chrome trace-event / Perfetto timelines of a simulation (`latitude simulate --timeline`).

Layout (open in https://ui.perfetto.dev or chrome://tracing):
* one process per rank ("rank r"), one thread per CPU ("CPU c"; overlapping phases, possible
  without CPU serialization, get extra "CPU c · overlap k" threads);
* complete events (`ph: "X"`) for CPU phases: calc, send overhead, receive overhead, the
  handshake's read request;
* async events (`ph: "b"`/`"e"`, category `wait`) for the time a receive waits for its data
  or a rendezvous send for its completion;
* flow events (`ph: "s"`/`"f"`, `bp: "e"`) for messages, from the send's phase to the phase
  that processed the message;
* the critical path: its phases and messages carry the category `critical`, `args.critical`
  and a red colour (`cname`), and are repeated on a process "critical path" at the top.

Times are µs (`ts`, `dur`), as the format requires. The data come from the Rust core as
arrays; this module only selects a time window and formats, so the number of events it
writes is capped (`--timeline-max-events`).
"""

from __future__ import annotations

import json

import numpy as np

from latitude.errors import InputError
from latitude.outputs import open_atomic
from latitude.units import fmt_size, parse_range

SLICE_CAT = ("calc", "send", "recv", "rdma")
CRITICAL_COLOUR = "terrible"  # a reserved colour name of the trace viewer (red)
NONE = 2**32 - 1


def parse_window(text: str | None) -> tuple[float, float] | None:
    return parse_range(text, "--timeline-window") if text else None


def check_output(path: str) -> None:
    if not path.endswith(".json"):
        raise InputError("--timeline", f"expected a .json output path (Chrome trace format), got {path!r}")


def check_size(info: dict, window, max_events: int) -> None:
    """Refuse early when even a lower bound of the event count is over the cap."""
    if window is None and info["vertices"] > max_events:
        raise InputError(
            "--timeline",
            f"the graph has {info['vertices']:,} operations, more than --timeline-max-events "
            f"{max_events:,}; select a time range with --timeline-window START:END or raise the cap",
        )


def _slice_name(kind: int, other: int, nbytes: int) -> str:
    if kind == 0:
        return "calc"
    peer = "?" if other == NONE else str(other)
    if kind == 1:
        return f"send {fmt_size(nbytes)} → {peer}"
    if kind == 2:
        return f"recv {fmt_size(nbytes)} ← {peer}"
    return f"read request → {peer}"


def _us(ns: float) -> float:
    return round(ns / 1000.0, 6)


def write_chrome_trace(path: str, tl: dict, graph, sim, window=None, max_events: int = 2_000_000) -> dict:
    """Write the timeline; returns {"path", "events", "critical_slices", "critical_messages"}."""
    ranks = int(tl["ranks"])
    t0, t1 = tl["s_t0_ns"], tl["s_t1_ns"]
    keep = np.ones(len(t0), dtype=bool)
    wkeep = np.ones(len(tl["w_t0_ns"]), dtype=bool)
    if window is not None:
        lo, hi = window
        keep = (t1 >= lo) & (t0 <= hi)
        wkeep = (tl["w_t1_ns"] >= lo) & (tl["w_t0_ns"] <= hi)
    fkeep = keep[tl["f_src"]] & keep[tl["f_dst"]] if len(tl["f_src"]) else np.zeros(0, dtype=bool)
    total = int(keep.sum() + tl["s_critical"][keep].sum() + 2 * wkeep.sum() + 2 * fkeep.sum())
    if total > max_events:
        raise InputError(
            "--timeline",
            f"{total:,} trace events exceed --timeline-max-events {max_events:,}; "
            "narrow the time range with --timeline-window START:END",
        )
    tid = tl["s_cpu"].astype(np.int64) * 1000 + tl["s_lane"].astype(np.int64)
    events = _metadata(ranks, np.unique(np.stack([tl["s_rank"][keep], tid[keep]]), axis=1) if keep.any() else None)
    events += _slices(tl, keep, tid, ranks)
    events += _waits(tl, wkeep)
    events += _flows(tl, fkeep, tid)
    doc = {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "generator": "latitude simulate",
            "graph": graph.path or "",
            "semantics": sim.options.semantics,
            "params": sim.describe_params(),
            "runtime_ns": sim.runtime_ns,
            "window_ns": list(window) if window else None,
        },
    }
    with open_atomic(path, "timeline") as f:
        json.dump(doc, f, separators=(",", ":"), allow_nan=False)
    return {
        "path": path,
        "events": len(events),
        "critical_slices": int(tl["critical_slices"]),
        "critical_messages": int(tl["critical_messages"]),
    }


def _metadata(ranks: int, threads) -> list[dict]:
    out = [
        {"ph": "M", "name": "process_name", "pid": ranks, "tid": 0, "args": {"name": "critical path"}},
        {"ph": "M", "name": "process_sort_index", "pid": ranks, "tid": 0, "args": {"sort_index": -1}},
    ]
    for r in range(ranks):
        out.append({"ph": "M", "name": "process_name", "pid": r, "tid": 0, "args": {"name": f"rank {r}"}})
        out.append({"ph": "M", "name": "process_sort_index", "pid": r, "tid": 0, "args": {"sort_index": r}})
    if threads is not None:
        for r, t in threads.T.tolist():
            cpu, lane = divmod(t, 1000)
            name = f"CPU {cpu}" if lane == 0 else f"CPU {cpu} · overlap {lane}"
            out.append({"ph": "M", "name": "thread_name", "pid": r, "tid": t, "args": {"name": name}})
            out.append({"ph": "M", "name": "thread_sort_index", "pid": r, "tid": t, "args": {"sort_index": t}})
    return out


def _slices(tl: dict, keep, tid, ranks: int) -> list[dict]:
    idx = np.nonzero(keep)[0]
    idx = idx[np.argsort(tl["s_t0_ns"][idx], kind="stable")]
    cols = [
        tl[k][idx].tolist()
        for k in (
            "s_rank",
            "s_kind",
            "s_t0_ns",
            "s_t1_ns",
            "s_other",
            "s_bytes",
            "s_local",
            "s_tag",
            "s_critical",
            "s_val",
        )
    ]
    out, crit = [], []
    for t, (rank, kind, a, b, other, nbytes, local, tag, critical, val) in zip(tid[idx].tolist(), zip(*cols)):
        name = _slice_name(kind, other, nbytes)
        args = {"op": None if local == NONE else local, "rank": rank}
        if kind == 0:
            args["ns"] = val
        else:
            args.update(bytes=nbytes, peer=None if other == NONE else other, tag=None if tag == NONE else tag)
        ev = {
            "name": name,
            "cat": SLICE_CAT[kind],
            "ph": "X",
            "ts": _us(a),
            "dur": _us(b - a),
            "pid": rank,
            "tid": t,
            "args": args,
        }
        if critical:
            ev["cat"] += ",critical"
            ev["cname"] = CRITICAL_COLOUR
            args["critical"] = True
            crit.append({**ev, "name": f"rank {rank}: {name}", "pid": ranks, "tid": 0, "args": dict(args)})
        out.append(ev)
    return out + crit


def _waits(tl: dict, keep) -> list[dict]:
    out = []
    cols = [tl[k][keep].tolist() for k in ("w_rank", "w_kind", "w_local", "w_t0_ns", "w_t1_ns")]
    for n, (rank, kind, local, a, b) in enumerate(zip(*cols)):
        name = "wait: recv" if kind == 2 else "wait: rendezvous send"
        common = {"name": name, "cat": "wait", "id": f"0x{n:x}", "pid": rank, "tid": 0}
        out.append({**common, "ph": "b", "ts": _us(a), "args": {"op": local}})
        out.append({**common, "ph": "e", "ts": _us(b)})
    return out


def _flows(tl: dict, keep, tid) -> list[dict]:
    out = []
    src, dst = tl["f_src"][keep], tl["f_dst"][keep]
    cols = [
        tl["s_rank"][src].tolist(),
        tid[src].tolist(),
        tl["s_t0_ns"][src].tolist(),
        tl["s_rank"][dst].tolist(),
        tid[dst].tolist(),
        tl["s_t0_ns"][dst].tolist(),
        tl["f_critical"][keep].tolist(),
        tl["s_bytes"][dst].tolist(),
    ]
    for n, (sr, st, sa, dr, dt, da, critical, nbytes) in enumerate(zip(*cols)):
        cat = "msg,critical" if critical else "msg"
        name = f"message {fmt_size(nbytes)}"
        out.append({"name": name, "cat": cat, "ph": "s", "id": n, "ts": _us(sa), "pid": sr, "tid": st})
        out.append({"name": name, "cat": cat, "ph": "f", "bp": "e", "id": n, "ts": _us(da), "pid": dr, "tid": dt})
    return out
